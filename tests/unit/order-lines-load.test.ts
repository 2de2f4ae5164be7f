// The readers a Full Reset's load of order_lines.csv uses in the app (server/jobs/order-lines-load.ts):
// each must give exactly what PostgreSQL's CSV COPY would store, or NaN (the file then goes through
// the database's own COPY, which names a bad line).
import { describe, expect, it } from "vitest";
import { daysFromCivil, readCents, readInt4, readTimestampMs } from "../../server/jobs/order-lines-load.ts";

const b = (s: string) => Buffer.from(`,${s},`);
const int4 = (s: string) => readInt4(b(s), 1, s.length + 1);
const cents = (s: string) => readCents(b(s), 1, s.length + 1);
const ts = (s: string, utc = true) => readTimestampMs(b(s), 1, s.length + 1, utc);

describe("order lines read in the app", () => {
  it("reads whole numbers within int4 and nothing else", () => {
    expect(int4("0")).toBe(0);
    expect(int4("15689")).toBe(15689);
    expect(int4("-3")).toBe(-3);
    expect(int4("007")).toBe(7);
    expect(int4("2147483647")).toBe(2147483647);
    expect(int4("-2147483648")).toBe(-2147483648);
    for (const bad of ["", "-", "2147483648", "12345678901", "1.0", "1e3", " 1", "+1", "x"])
      expect(int4(bad), bad).toBeNaN();
  });

  it("reads amounts with up to two decimals as whole cents", () => {
    expect(cents("5.09")).toBe(509);
    expect(cents("5.1")).toBe(510);
    expect(cents("5")).toBe(500);
    expect(cents(".5")).toBe(50);
    expect(cents("-0.25")).toBe(-25);
    expect(cents("0.00")).toBe(0);
    expect(cents("9999999999.99")).toBe(999999999999);
    for (const bad of ["", ".", "5.", "5.123", "1e2", "10000000000", "1,5", "-", "5.x"])
      expect(cents(bad), bad).toBeNaN();
  });

  it("reads ISO timestamps as the database stores them, to the millisecond", () => {
    const cases = [
      "2024-03-01T00:00:06Z",
      "2024-02-29T23:59:59.5Z",
      "2024-02-29T23:59:59.25Z",
      "2024-02-29T23:59:59.125Z",
      "2026-12-31 10:20:30+02:00",
      "2026-12-31 10:20:30+0230",
      "2026-01-01T01:00:00-05",
      "1999-12-31T23:59:59Z",
      "2000-01-01T00:00Z",
    ];
    for (const c of cases)
      expect(ts(c), c).toBe(Date.parse(c.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00")));
    // No zone: UTC, when the source's zone is UTC; a date alone is its midnight.
    expect(ts("2026-06-30 12:00:00")).toBe(Date.parse("2026-06-30T12:00:00Z"));
    expect(ts("2026-06-30")).toBe(Date.parse("2026-06-30T00:00:00Z"));
    expect(ts("2026-06-30 12:00:00", false)).toBeNaN();
    for (const bad of [
      "2025-02-29T00:00:00Z",
      "2024-04-31",
      "2024-13-01",
      "2024-00-10",
      "2024-01-01T24:00:00Z",
      "2024-01-01T10:60:00Z",
      "2024-01-01T10:00:60Z",
      "2024-01-01T10:00:00.1234Z",
      "2024-01-01T10:00:00.Z",
      "2024-01-01T10:00:00+01:00:00",
      "2024-01-01T10:00:00 UTC",
      "01/03/2024",
      "2024-1-01",
      "",
    ])
      expect(ts(bad), bad).toBeNaN();
  });

  it("counts days from 1970 as Date.UTC does, across leap years and centuries", () => {
    for (let day = -800_000; day <= 800_000; day += 997) {
      const d = new Date(day * 86_400_000);
      expect(daysFromCivil(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())).toBe(day);
    }
  });
});
