import { describe, expect, it } from "vitest";
import { CALC_MODULES, checkModuleOrder } from "../../server/jobs/calculate.ts";

describe("calculation module order", () => {
  const named = (...names: string[]) => names.map((n) => CALC_MODULES.find((m) => m.name === n)!);

  it("accepts the pipeline's own list and lists without the planning engine", () => {
    expect(() => checkModuleOrder(CALC_MODULES)).not.toThrow();
    expect(() => checkModuleOrder(named("product_metrics", "product_search"))).not.toThrow();
  });

  it("refuses a list where stock_history's, lead_times' or xyz's figures would never reach product_metrics", () => {
    expect(() => checkModuleOrder(named("product_metrics", "stock_history"))).toThrow(
      "Calculation module stock_history leaves its figures for module planning to write: list planning after it",
    );
    expect(() => checkModuleOrder(named("product_metrics", "planning", "lead_times"))).toThrow(
      "Calculation module lead_times leaves its figures for module planning to write",
    );
    expect(() => checkModuleOrder(named("product_metrics", "stock_history", "planning", "xyz"))).toThrow(
      "Calculation module xyz leaves its figures for module planning to write: list planning after it",
    );
    expect(() =>
      checkModuleOrder(named("product_metrics", "stock_history", "xyz", "planning")),
    ).not.toThrow();
  });
});
