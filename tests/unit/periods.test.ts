// The Overview's period picker (shared/analytics.ts resolvePeriod): each period and its comparison
// for a known as-of day, month and leap-year edges, and the custom range's rules.
import { describe, expect, it } from "vitest";
import { PeriodError, type PeriodQuery, resolvePeriod } from "../../shared/analytics.ts";

const q = (period: PeriodQuery["period"], compare: PeriodQuery["compare"] = "previous", extra = {}) =>
  ({ period, compare, ...extra }) as PeriodQuery;
const r = (d0: string, input: PeriodQuery) => {
  const p = resolvePeriod(d0, input);
  return [p.current.from, p.current.to, p.comparison.from, p.comparison.to, p.days];
};

describe("resolvePeriod", () => {
  it("rolling periods compare with the days before or with 52 weeks earlier", () => {
    expect(r("2026-06-30", q("7d"))).toEqual(["2026-06-24", "2026-06-30", "2026-06-17", "2026-06-23", 7]);
    expect(r("2026-06-30", q("30d"))).toEqual(["2026-06-01", "2026-06-30", "2026-05-02", "2026-05-31", 30]);
    expect(r("2026-06-30", q("30d", "last_year"))).toEqual([
      "2026-06-01",
      "2026-06-30",
      "2025-06-02",
      "2025-07-01",
      30,
    ]);
    expect(r("2026-06-30", q("90d"))).toEqual(["2026-04-02", "2026-06-30", "2026-01-02", "2026-04-01", 90]);
    expect(r("2026-06-30", q("365d"))).toEqual(["2025-07-01", "2026-06-30", "2024-07-01", "2025-06-30", 365]);
  });

  it("calendar periods: month to date, the last whole month, year to date", () => {
    expect(r("2026-06-30", q("this_month"))).toEqual([
      "2026-06-01",
      "2026-06-30",
      "2026-05-01",
      "2026-05-30",
      30,
    ]);
    // 31 March against February of a leap year: clipped to its last day.
    expect(r("2024-03-31", q("this_month"))).toEqual([
      "2024-03-01",
      "2024-03-31",
      "2024-02-01",
      "2024-02-29",
      31,
    ]);
    expect(r("2024-03-31", q("this_month", "last_year"))).toEqual([
      "2024-03-01",
      "2024-03-31",
      "2023-03-01",
      "2023-03-31",
      31,
    ]);
    expect(r("2026-01-15", q("last_month"))).toEqual([
      "2025-12-01",
      "2025-12-31",
      "2025-11-01",
      "2025-11-30",
      31,
    ]);
    expect(r("2026-01-15", q("last_month", "last_year"))).toEqual([
      "2025-12-01",
      "2025-12-31",
      "2024-12-01",
      "2024-12-31",
      31,
    ]);
    expect(r("2024-02-29", q("this_year"))).toEqual([
      "2024-01-01",
      "2024-02-29",
      "2023-01-01",
      "2023-02-28",
      60,
    ]);
  });

  it("custom ranges compare with as many days before; wrong ranges name the field", () => {
    expect(r("2026-06-30", q("custom", "previous", { from: "2026-06-01", to: "2026-06-10" }))).toEqual([
      "2026-06-01",
      "2026-06-10",
      "2026-05-22",
      "2026-05-31",
      10,
    ]);
    expect(r("2026-06-30", q("custom", "previous", { from: "2025-06-30", to: "2026-06-30" }))[4]).toBe(366);
    const bad = (extra: object, message: RegExp) =>
      expect(() => resolvePeriod("2026-06-30", q("custom", "previous", extra))).toThrow(message);
    bad({ to: "2026-06-10" }, /^from: /);
    bad({ from: "2026-06-10" }, /^to: /);
    bad({ from: "2026-06-10", to: "2026-06-01" }, /^from: must be on or before to/);
    bad({ from: "2026-06-10", to: "2026-07-01" }, /^to: must be on or before the data's day 2026-06-30/);
    bad({ from: "2025-06-29", to: "2026-06-01" }, /^from: must be on or after 2025-06-30/);
    expect(() => resolvePeriod("2026-06-30", q("custom"))).toThrow(PeriodError);
  });
});
