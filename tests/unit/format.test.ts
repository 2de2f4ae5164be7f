import { describe, expect, it } from "vitest";
import {
  formatCurrency,
  formatDuration,
  formatElapsed,
  formatKilobytes,
  formatRelativeAge,
} from "../../shared/format.ts";

describe("formatters of spec section 2 and 9", () => {
  it("formats currency as USD with 2 decimals and $0.00 for null", () => {
    expect(formatCurrency(1234.5)).toBe("$1,234.50");
    expect(formatCurrency("9.999")).toBe("$10.00");
    expect(formatCurrency(null)).toBe("$0.00");
    expect(formatCurrency(undefined)).toBe("$0.00");
  });

  it("formats a log's elapsed time as '5.6 s' under a minute, else like the screens", () => {
    expect(formatElapsed(5_600)).toBe("5.6 s");
    expect(formatElapsed(90)).toBe("0.1 s");
    expect(formatElapsed(3_903_000)).toBe("1h 5m 3s");
  });

  it("formats durations like '1h 5m 3s' and 'Less than a second'", () => {
    expect(formatDuration(999)).toBe("Less than a second");
    expect(formatDuration(0)).toBe("Less than a second");
    expect(formatDuration(3_903_000)).toBe("1h 5m 3s");
    expect(formatDuration(60_000)).toBe("1m");
    expect(formatDuration(3_600_000)).toBe("1h");
    expect(formatDuration(1_500)).toBe("1s");
  });

  it("formats relative age in minutes, hours, then days", () => {
    const now = new Date("2026-01-10T12:00:00Z");
    expect(formatRelativeAge(new Date("2026-01-10T11:01:00Z"), now)).toBe("59m ago");
    expect(formatRelativeAge(new Date("2026-01-10T11:00:00Z"), now)).toBe("1h ago");
    expect(formatRelativeAge(new Date("2026-01-09T12:01:00Z"), now)).toBe("23h ago");
    expect(formatRelativeAge(new Date("2026-01-09T12:00:00Z"), now)).toBe("1d ago");
    expect(formatRelativeAge("2026-01-01T12:00:00Z", now)).toBe("9d ago");
  });

  it("formats file sizes as KB with one decimal", () => {
    expect(formatKilobytes(1536)).toBe("1.5 KB");
    expect(formatKilobytes(100)).toBe("0.1 KB");
  });
});
