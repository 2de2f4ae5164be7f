// The Discount Simulator (/discount-simulator): choose a scope, set up to three scenarios, compare
// them with the baseline (totals, per product, weekly chart), search a clearance discount, and save a
// scenario as a planned promotion. The model: docs/metrics.md §15–16.
import { Button } from "@client/components/ui/button.tsx";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@client/components/ui/card.tsx";
import { Checkbox } from "@client/components/ui/checkbox.tsx";
import { Input } from "@client/components/ui/input.tsx";
import { Label } from "@client/components/ui/label.tsx";
import { LoadingIndicator } from "@client/components/ui/loading-indicator.tsx";
import { DASH, formatMoney, formatPercent, formatUnits } from "@client/features/products/format.ts";
import { filterFromParam, listInputOf, type ProductsSearch } from "@client/features/products/search.ts";
import { useAuth } from "@client/lib/session.ts";
import { useTRPC } from "@client/lib/trpc.ts";
import { cn } from "@client/lib/utils.ts";
import {
  addDays,
  type ClearanceResult,
  type DiscountScope,
  dipLine,
  type FilterScope,
  MAX_COMPARED_SCENARIOS,
  type PromotionInput,
  type ScopeOptions,
  type SimulatedProduct,
  type SimulationTotals,
} from "@shared/discounts.ts";
import { hasPermission } from "@shared/permissions.ts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import { toast } from "sonner";
import { type ChartScenario, SCENARIO_COLORS, ScenarioCharts } from "./chart.tsx";
import { discountErrorText } from "./error-text.ts";
import { invalidatePlanning, PromotionsList } from "./promotions-list.tsx";

export interface DiscountSimulatorSearch {
  pids?: string;
  category_id?: number;
  brand_id?: number;
  vendor_id?: number;
  /** The Products page's filter (filterToParam): its products are the scope */
  filter?: string;
  /** The last run's dates, scenarios ("25,40"; "p8.99" a target price) and products left out */
  from?: string;
  to?: string;
  scenarios?: string;
  exclude?: string;
}

const draftsOf = (param: string): ScenarioDraft[] =>
  param
    .split(",")
    .map((s) =>
      s.startsWith("p") ? { mode: "price" as const, value: s.slice(1) } : { mode: "pct" as const, value: s },
    );
const paramOf = (drafts: readonly ScenarioDraft[]) =>
  drafts.map((d) => (d.mode === "price" ? `p${amount(d.value)}` : String(amount(d.value)))).join(",");

type ScopeKind = "category" | "brand" | "vendor" | "products";

/** Rows of the per-product table shown at once (the totals cover every product). */
const TABLE_ROWS = 100;

const today = () => new Date().toISOString().slice(0, 10);

/** The entries of a product ID list ("1, 2; 3"), and whether one is a product ID. */
const pidTokens = (text: string) => text.split(/[\s,;]+/).filter((t) => t !== "");
const isPid = (t: string) => /^\d+$/.test(t) && Number(t) > 0 && Number(t) <= 2_147_483_647;

/** What in a product ID list is not a product ID ("abc", "12.5"): named, not silently dropped. */
const badPids = (text: string) => pidTokens(text).filter((t) => !isPid(t));

/** A typed amount: "25", "25%", "1,5" (a decimal comma) or "$8.99". */
function amount(text: string): number {
  const t = text.trim().replace(/^\$/, "").replace(/%$/, "").trim();
  return Number(/^\d+,\d+$/.test(t) ? t.replace(",", ".") : t);
}

function parsePids(text: string): number[] {
  return [...new Set(pidTokens(text).filter(isPid).map(Number))];
}

type BuildPromotion = (name: string, stopReordering: boolean) => PromotionInput | undefined;

type ScenarioInput = Omit<PromotionInput, "name" | "stop_reordering">;
type RanScenario = ChartScenario & { input: ScenarioInput };

interface ScenarioDraft {
  mode: "pct" | "price";
  value: string;
}

export function DiscountSimulatorPage({ search }: { search: DiscountSimulatorSearch }) {
  const trpc = useTRPC();
  const { user } = useAuth();
  const canSave = hasPermission(user, "create:promotions");
  const options = useQuery(trpc.discounts.scopeOptions.queryOptions());

  const initialKind: ScopeKind =
    search.pids || search.filter !== undefined
      ? "products"
      : search.brand_id
        ? "brand"
        : search.vendor_id
          ? "vendor"
          : "category";
  const [kind, setKind] = useState<ScopeKind>(initialKind);
  const [scopeId, setScopeId] = useState<string>(
    String(search.category_id ?? search.brand_id ?? search.vendor_id ?? ""),
  );
  const [pidsText, setPidsText] = useState(search.pids?.replace(/,/g, ", ") ?? "");
  const [excludeText, setExcludeText] = useState(search.exclude?.replace(/,/g, ", ") ?? "");
  const [startsOn, setStartsOn] = useState(search.from ?? addDays(today(), 7));
  const [endsOn, setEndsOn] = useState(search.to ?? addDays(today(), 20));
  const [drafts, setDrafts] = useState<ScenarioDraft[]>(
    search.scenarios ? draftsOf(search.scenarios) : [{ mode: "pct", value: "25" }],
  );
  const navigate = useNavigate();
  // Each result with the inputs that gave it: a promotion saves those, not the form as edited since.
  const [results, setResults] = useState<RanScenario[]>([]);
  const [selected, setSelected] = useState(0);
  const [formError, setFormError] = useState<string | null>(null);

  // A selection from the Products page: its filter in the URL, its products looked up here.
  const fromFilter = useMemo(
    () => (search.filter !== undefined ? filterFromParam(search.filter) : null),
    [search.filter],
  );
  const filterScope = useQuery({
    ...trpc.discounts.filterScope.queryOptions(listInputOf(fromFilter ?? {}, 10)),
    enabled: fromFilter !== null,
  });
  const filterPids = filterScope.data?.pids.join(", ");
  useEffect(() => {
    if (filterPids !== undefined && !search.pids) setPidsText(filterPids);
  }, [filterPids, search.pids]);

  const scope = useMemo((): DiscountScope | null => {
    if (kind === "products") {
      const pids = parsePids(pidsText);
      return pids.length ? { pids } : null;
    }
    const id = Number(scopeId);
    if (!id) return null;
    return kind === "category"
      ? { category_id: id }
      : kind === "brand"
        ? { brand_id: id }
        : { vendor_id: id };
  }, [kind, scopeId, pidsText]);
  const onePid = kind === "products" && scope?.pids?.length === 1;
  const exclude = parsePids(excludeText);

  const scenarioInput = (d: ScenarioDraft): ScenarioInput => ({
    scope: scope!,
    starts_on: startsOn,
    ends_on: endsOn,
    ...(exclude.length ? { exclude_pids: exclude } : {}),
    ...(d.mode === "price" ? { target_price: amount(d.value) } : { discount_pct: amount(d.value) }),
  });
  const labelOf = (d: ScenarioDraft) =>
    d.mode === "price" ? `Price ${amount(d.value)}` : `${amount(d.value)}% off`;

  const simulate = useMutation(trpc.discounts.simulate.mutationOptions());
  const [running, setRunning] = useState(false);

  async function run(e?: FormEvent) {
    e?.preventDefault();
    setFormError(null);
    // A form the server would refuse clears the results too: they answered other inputs.
    const refuse = (message: string) => {
      setResults([]);
      setFormError(message);
    };
    const bad = kind === "products" ? badPids(pidsText) : [];
    if (bad.length)
      return refuse(
        `Not a product ID: ${bad.slice(0, 5).join(", ")}. Enter product IDs (numbers), one or many.`,
      );
    const badExclude = badPids(excludeText);
    if (badExclude.length)
      return refuse(`Not a product ID to leave out: ${badExclude.slice(0, 5).join(", ")}.`);
    if (!scope) return refuse(kind === "products" ? "Enter at least one product ID." : `Choose a ${kind}.`);
    if (!startsOn || !endsOn) return refuse("Choose a start date and an end date.");
    if (endsOn < startsOn) return refuse("The end date is before the start date.");
    if (drafts.some((d) => d.mode === "price") && !onePid) {
      // Never run a target price as a discount %: say what it needs.
      setResults([]);
      setFormError("A target price needs exactly one product: enter one product ID, or use a discount %.");
      return;
    }
    setRunning(true);
    try {
      const out: RanScenario[] = [];
      for (const d of drafts) {
        const input = scenarioInput(d);
        const result = await simulate.mutateAsync(input);
        out.push({ label: labelOf(d), result, input });
      }
      setResults(out);
      setSelected(0);
      // The run in the URL: a link to it (or a reload) runs it again.
      void navigate({
        to: "/discount-simulator",
        replace: true,
        search: {
          ...(kind === "products"
            ? search.filter !== undefined && !pidsText.trim()
              ? { filter: search.filter }
              : { pids: (scope?.pids ?? []).join(",") }
            : kind === "category"
              ? { category_id: Number(scopeId) }
              : kind === "brand"
                ? { brand_id: Number(scopeId) }
                : { vendor_id: Number(scopeId) }),
          from: startsOn,
          to: endsOn,
          scenarios: paramOf(drafts),
          ...(exclude.length ? { exclude: exclude.join(",") } : {}),
        },
      });
    } catch (err) {
      // The earlier results answered other inputs: they go with the error.
      setResults([]);
      setFormError(discountErrorText(err));
    } finally {
      setRunning(false);
    }
  }

  // A link holding a run (scenarios in the URL) runs it once its scope is known.
  const autoRan = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when the scope is ready
  useEffect(() => {
    if (autoRan.current || !search.scenarios || !scope) return;
    autoRan.current = true;
    void run();
  }, [scope, search.scenarios]);

  const current = results[selected]?.result;

  return (
    <div className="flex flex-col gap-6" data-testid="discount-simulator">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Discount Simulator</h1>
        <p className="text-sm text-muted-foreground">
          What a price cut does to units, revenue, gross margin and stock, learned from the shop's own sales.
        </p>
      </div>

      <Card>
        <CardHeader>
          <CardTitle>Scenario</CardTitle>
          <CardDescription>
            Choose the products, the discount (or a target price for one product) and the dates. Compare up to{" "}
            {MAX_COMPARED_SCENARIOS} scenarios.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <form className="grid gap-4" onSubmit={run} aria-label="Scenario">
            <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
              <div className="grid gap-1.5">
                <Label htmlFor="scope-kind">Scope</Label>
                <select
                  id="scope-kind"
                  className="h-9 rounded-md border bg-background px-2 text-sm"
                  value={kind}
                  onChange={(e) => {
                    setKind(e.target.value as ScopeKind);
                    setScopeId("");
                  }}
                >
                  <option value="category">Product category</option>
                  <option value="brand">Brand</option>
                  <option value="vendor">Vendor</option>
                  <option value="products">Products (IDs)</option>
                </select>
              </div>
              {kind === "products" ? (
                <div className="grid gap-1.5 lg:col-span-3">
                  <Label htmlFor="scope-pids">Product IDs</Label>
                  <Input
                    id="scope-pids"
                    placeholder="e.g. 1001, 1002 (or open from a Products filter)"
                    value={pidsText}
                    onChange={(e) => setPidsText(e.target.value)}
                  />
                </div>
              ) : (
                <div className="grid gap-1.5 lg:col-span-3">
                  <Label htmlFor="scope-id">
                    {kind === "category"
                      ? "Category (with its sub-categories)"
                      : kind === "brand"
                        ? "Brand"
                        : "Vendor"}
                  </Label>
                  <select
                    id="scope-id"
                    className="h-9 rounded-md border bg-background px-2 text-sm"
                    value={scopeId}
                    onChange={(e) => setScopeId(e.target.value)}
                    disabled={options.isPending}
                  >
                    <option value="">{options.isPending ? "Loading..." : "Choose…"}</option>
                    {kind === "category" &&
                      options.data?.categories.map((c) => (
                        <option key={c.id} value={c.id}>
                          {`${"· ".repeat(Math.max(0, c.level - 1))}${c.name}`}
                        </option>
                      ))}
                    {kind === "brand" &&
                      options.data?.brands.map((b) => (
                        <option key={b.id} value={b.id}>
                          {b.name}
                        </option>
                      ))}
                    {kind === "vendor" &&
                      options.data?.vendors.map((v) => (
                        <option key={v.id} value={v.id}>
                          {v.name}
                        </option>
                      ))}
                  </select>
                </div>
              )}
            </div>
            {fromFilter && kind === "products" && (
              <FilterScopeNote
                filter={fromFilter}
                result={filterScope}
                options={options.data}
                edited={filterPids !== undefined && pidsText !== filterPids}
              />
            )}

            <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
              <div className="grid gap-1.5">
                <Label htmlFor="starts-on">Start</Label>
                <Input
                  id="starts-on"
                  type="date"
                  value={startsOn}
                  onChange={(e) => setStartsOn(e.target.value)}
                />
              </div>
              <div className="grid gap-1.5">
                <Label htmlFor="ends-on">End</Label>
                <Input id="ends-on" type="date" value={endsOn} onChange={(e) => setEndsOn(e.target.value)} />
              </div>
              <div className="grid gap-1.5 sm:col-span-2">
                <Label htmlFor="exclude">Exclude products (IDs, optional)</Label>
                <Input id="exclude" value={excludeText} onChange={(e) => setExcludeText(e.target.value)} />
              </div>
            </div>

            <fieldset className="grid gap-2">
              <legend className="mb-1 text-sm font-medium">Scenarios</legend>
              {drafts.map((d, i) => (
                <div
                  // biome-ignore lint/suspicious/noArrayIndexKey: scenarios are positions A, B, C
                  key={i}
                  className="flex flex-wrap items-center gap-2"
                  data-testid={`scenario-${i}`}
                >
                  <span
                    className="inline-block size-3 rounded-full"
                    style={{ background: SCENARIO_COLORS[i] }}
                    aria-hidden
                  />
                  <select
                    aria-label={`Scenario ${i + 1} kind`}
                    className="h-9 rounded-md border bg-background px-2 text-sm"
                    value={d.mode}
                    onChange={(e) =>
                      setDrafts(
                        drafts.map((x, j) =>
                          j === i ? { ...x, mode: e.target.value as "pct" | "price" } : x,
                        ),
                      )
                    }
                  >
                    <option value="pct">Discount %</option>
                    <option value="price" disabled={!onePid}>
                      Target price (one product)
                    </option>
                  </select>
                  <Input
                    aria-label={
                      d.mode === "pct" ? `Scenario ${i + 1} discount %` : `Scenario ${i + 1} target price`
                    }
                    className="w-28"
                    inputMode="decimal"
                    value={d.value}
                    onChange={(e) =>
                      setDrafts(drafts.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))
                    }
                  />
                  {drafts.length > 1 && (
                    <Button
                      type="button"
                      variant="ghost"
                      size="sm"
                      onClick={() => setDrafts(drafts.filter((_, j) => j !== i))}
                    >
                      Remove
                    </Button>
                  )}
                </div>
              ))}
              {drafts.length < MAX_COMPARED_SCENARIOS && (
                <div>
                  <Button
                    type="button"
                    variant="outline"
                    size="sm"
                    onClick={() => setDrafts([...drafts, { mode: "pct", value: "" }])}
                  >
                    Add scenario
                  </Button>
                </div>
              )}
            </fieldset>

            {formError && (
              <p role="alert" className="text-sm text-destructive">
                {formError}
              </p>
            )}
            <div className="flex items-center gap-3">
              <Button type="submit" disabled={running}>
                {running ? "Simulating..." : "Simulate"}
              </Button>
              {running && (
                <LoadingIndicator size="sm" message={`Simulating ${drafts.length} scenario(s)...`} />
              )}
            </div>
          </form>
        </CardContent>
      </Card>

      {results.length > 0 && current && (
        <Results
          results={results}
          selected={selected}
          onSelect={setSelected}
          canSave={canSave}
          build={(name, stopReordering) => {
            const ran = results[selected];
            return ran ? { ...ran.input, name, stop_reordering: stopReordering } : undefined;
          }}
        />
      )}

      <ClearanceCard
        scope={scope}
        startsOn={startsOn}
        endsOn={endsOn}
        exclude={exclude}
        onUse={(pct) => {
          setDrafts([{ mode: "pct", value: String(pct) }, ...drafts.slice(1)]);
          toast.success(`Scenario 1 set to ${pct}% off`);
        }}
      />

      <PromotionsList canSave={canSave} />
    </div>
  );
}

function TotalsTable({ baseline, scenario }: { baseline: SimulationTotals; scenario: SimulationTotals }) {
  const rows: [string, (t: SimulationTotals) => string][] = [
    ["Units", (t) => formatUnits(t.units)],
    ["Revenue", (t) => formatMoney(t.revenue)],
    ["Gross margin", (t) => formatMoney(t.margin)],
    ["Margin %", (t) => formatPercent(t.margin_pct)],
    ["Stock at end", (t) => formatUnits(t.stock_end)],
    ["Lost sales (units)", (t) => formatUnits(t.lost_units)],
  ];
  return (
    <table className="w-full text-sm" data-testid="totals">
      <thead>
        <tr className="text-left text-muted-foreground">
          <th className="py-1 font-medium" />
          <th className="py-1 text-right font-medium">Baseline</th>
          <th className="py-1 text-right font-medium">Scenario</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, f]) => (
          <tr key={label} className="border-t">
            <th scope="row" className="py-1 text-left font-normal">
              {label}
            </th>
            <td className="py-1 text-right tabular-nums">{f(baseline)}</td>
            <td className="py-1 text-right tabular-nums">{f(scenario)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const SOURCE_LABEL = { product: "own history", category: "category", global: "default setting" } as const;

function ProductRow({ p }: { p: SimulatedProduct }) {
  return (
    <tr className="border-t align-top" data-testid="product-row">
      <td className="py-1.5 pr-2">
        <div className="font-medium">{p.title}</div>
        <div className="text-xs text-muted-foreground">
          #{p.pid}
          {p.sku ? ` · ${p.sku}` : ""}
        </div>
        {p.notes.length > 0 && <div className="text-xs text-muted-foreground">{p.notes.join(" · ")}</div>}
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {formatMoney(p.price)} →{" "}
        <span className={cn(p.below_cost && "font-semibold text-red-600")} data-below-cost={p.below_cost}>
          {formatMoney(p.scenario_price)}
        </span>
        {p.below_cost && <div className="text-xs text-red-600">below cost {formatMoney(p.cost)}</div>}
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {p.elasticity.toFixed(2)}
        <div className="text-xs text-muted-foreground">
          {SOURCE_LABEL[p.elasticity_source]}
          {p.elasticity_category ? ` (${p.elasticity_category})` : ""}
          {p.elasticity_range
            ? ` · ${p.elasticity_range[0].toFixed(2)}–${p.elasticity_range[1].toFixed(2)}`
            : ""}
          {p.elasticity_source === "product" ? ` · ${p.price_changes} price changes` : ""}
        </div>
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">×{p.uplift.toFixed(2)}</td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {p.scenario_price === p.price ? (
          <span
            className="text-muted-foreground"
            title="The scenario keeps today's price: nothing to break even"
          >
            price unchanged
          </span>
        ) : p.margin_share === null ? (
          <span title="No cost price">{DASH}</span>
        ) : p.break_even_uplift === null ? (
          "no break-even"
        ) : p.break_even_uplift < 0 ? (
          // A price above the regular one: units may fall this much before the margin does.
          <span title="A price rise: units may fall this much before the gross margin falls">
            −{formatPercent(-p.break_even_uplift, 0)}
          </span>
        ) : (
          `+${formatPercent(p.break_even_uplift, 0)}`
        )}
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {formatUnits(p.baseline.units)} → {formatUnits(p.scenario.units)}
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {formatMoney(p.baseline.margin)} → {formatMoney(p.scenario.margin)}
      </td>
      <td className="py-1.5 pr-2 text-right tabular-nums">
        {formatUnits(p.scenario.stock_end)}
        <div className="text-xs text-muted-foreground">
          {p.scenario.weeks_of_cover === null ? "no cover figure" : `${p.scenario.weeks_of_cover} wk cover`}
        </div>
      </td>
      <td className="py-1.5 text-right">
        {p.stockout_risk ? (
          <span
            className="text-red-600"
            title={p.next_po_date ? `Next PO ${p.next_po_date}` : "No PO coming"}
          >
            Out {p.scenario_stockout}
          </span>
        ) : (
          <span className="text-muted-foreground">OK</span>
        )}
      </td>
    </tr>
  );
}

function Results({
  results,
  selected,
  onSelect,
  canSave,
  build,
}: {
  results: ChartScenario[];
  selected: number;
  onSelect: (i: number) => void;
  canSave: boolean;
  build: BuildPromotion;
}) {
  const r = results[selected]!.result;
  const rows = [...r.products].sort((a, b) => b.baseline.revenue - a.baseline.revenue).slice(0, TABLE_ROWS);
  const sources = r.products.reduce(
    (acc, p) => {
      acc[p.elasticity_source]++;
      return acc;
    },
    { product: 0, category: 0, global: 0 },
  );
  return (
    <Card data-testid="results">
      <CardHeader>
        <CardTitle>Result</CardTitle>
        <CardDescription>
          {r.products.length.toLocaleString("en-US")} {r.products.length === 1 ? "product" : "products"},{" "}
          {r.starts_on} to {r.ends_on}
          {r.as_of ? `; forecast as of ${r.as_of}` : ""}. Elasticity from own history: {sources.product},
          category: {sources.category}, default setting ({r.settings.default_price_elasticity}):{" "}
          {sources.global}.
          {r.skipped > 0 ? ` ${r.skipped} left out (excluded, unknown or without a price).` : ""}
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-6">
        <div className="flex flex-wrap gap-2" role="tablist" aria-label="Scenario shown in the table">
          {results.map((s, i) => (
            <Button
              key={s.label + String(i)}
              type="button"
              role="tab"
              aria-selected={i === selected}
              variant={i === selected ? "default" : "outline"}
              size="sm"
              onClick={() => onSelect(i)}
            >
              {s.label}
            </Button>
          ))}
        </div>
        <div className="grid gap-6 lg:grid-cols-[minmax(0,22rem)_1fr]">
          <div className="grid gap-2">
            <TotalsTable baseline={r.totals.baseline} scenario={r.totals.scenario} />
            <p className="text-xs text-muted-foreground" data-testid="dip-after">
              {dipLine(r.dip)}
              {r.dip ? ": the chart's weeks after the end date show it." : "."}
            </p>
            {r.cannibalisation && (
              <p className="text-xs text-muted-foreground" data-testid="cannibalisation">
                Cannibalisation ({formatPercent(r.cannibalisation.share, 0)} of the extra units):{" "}
                {formatUnits(r.cannibalisation.units)} units, {formatMoney(r.cannibalisation.revenue)} revenue
                and {formatMoney(r.cannibalisation.margin)} margin would otherwise have been sold as other
                products of the category.
              </p>
            )}
          </div>
          <ScenarioCharts scenarios={results} />
        </div>
        <div className="overflow-x-auto">
          <table className="w-full min-w-[56rem] text-sm" data-testid="products-table">
            <thead>
              <tr className="text-left text-muted-foreground">
                <th className="py-1 pr-2 font-medium">Product</th>
                <th className="py-1 pr-2 text-right font-medium">Price</th>
                <th className="py-1 pr-2 text-right font-medium">Elasticity</th>
                <th className="py-1 pr-2 text-right font-medium">Uplift</th>
                <th className="py-1 pr-2 text-right font-medium">Break-even uplift</th>
                <th className="py-1 pr-2 text-right font-medium">Units</th>
                <th className="py-1 pr-2 text-right font-medium">Gross margin</th>
                <th className="py-1 pr-2 text-right font-medium">Stock at end</th>
                <th className="py-1 text-right font-medium">Before next PO</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <ProductRow key={p.pid} p={p} />
              ))}
            </tbody>
          </table>
          {r.products.length > TABLE_ROWS && (
            <p className="mt-2 text-xs text-muted-foreground">
              Showing the {TABLE_ROWS} products with the largest baseline revenue of {r.products.length}; the
              totals cover all.
            </p>
          )}
        </div>
        {canSave ? (
          <SavePromotion label={results[selected]!.label} build={build} />
        ) : (
          <p className="text-sm text-muted-foreground">
            Saving a scenario as a promotion needs the Create Promotions permission.
          </p>
        )}
      </CardContent>
    </Card>
  );
}

function SavePromotion({ label, build }: { label: string; build: BuildPromotion }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [stop, setStop] = useState(false);
  const create = useMutation(
    trpc.discounts.createPromotion.mutationOptions({
      onSuccess: (p) => {
        toast.success(
          `Promotion "${p.name}" saved: the forecast and reorder figures of its ${p.product_count} product${p.product_count === 1 ? "" : "s"} include it`,
        );
        setName("");
        void queryClient.invalidateQueries(trpc.discounts.promotions.pathFilter());
        invalidatePlanning(queryClient, trpc);
      },
      onError: (e) => toast.error(discountErrorText(e)),
    }),
  );
  return (
    <form
      className="flex flex-wrap items-end gap-3 border-t pt-4"
      aria-label="Save as promotion"
      onSubmit={(e) => {
        e.preventDefault();
        const input = build(name, stop);
        if (input) create.mutate(input);
      }}
    >
      <div className="grid gap-1.5">
        <Label htmlFor="promotion-name">Save "{label}" as a planned promotion</Label>
        <Input
          id="promotion-name"
          placeholder="Promotion name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          className="w-64"
        />
      </div>
      <div className="flex items-center gap-2 pb-2">
        <Checkbox id="stop-reordering" checked={stop} onCheckedChange={(v) => setStop(v === true)} />
        <Label htmlFor="stop-reordering">Clearance: no reordering while it runs</Label>
      </div>
      <Button type="submit" disabled={create.isPending || name.trim() === ""}>
        {create.isPending ? "Saving..." : "Save promotion"}
      </Button>
    </form>
  );
}

function ClearanceCard({
  scope,
  startsOn,
  endsOn,
  exclude,
  onUse,
}: {
  scope: DiscountScope | null;
  startsOn: string;
  endsOn: string;
  exclude: number[];
  onUse: (pct: number) => void;
}) {
  const trpc = useTRPC();
  const [target, setTarget] = useState("0");
  const [cap, setCap] = useState("50");
  const [result, setResult] = useState<ClearanceResult | null>(null);
  const search = useMutation(
    trpc.discounts.clearance.mutationOptions({
      onSuccess: setResult,
      onError: (e) => toast.error(discountErrorText(e)),
    }),
  );
  return (
    <Card data-testid="clearance">
      <CardHeader>
        <CardTitle>Clearance</CardTitle>
        <CardDescription>
          Find the smallest discount that brings the scope's stock down to a number of units by the end date.
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-3">
        <form
          className="flex flex-wrap items-end gap-3"
          aria-label="Clearance search"
          onSubmit={(e) => {
            e.preventDefault();
            if (!scope) {
              toast.error("Choose the products first.");
              return;
            }
            search.mutate({
              scope,
              starts_on: startsOn,
              ends_on: endsOn,
              target_units: Number(target),
              max_discount_pct: Number(cap),
              ...(exclude.length ? { exclude_pids: exclude } : {}),
            });
          }}
        >
          <div className="grid gap-1.5">
            <Label htmlFor="clearance-target">Units left by {endsOn}</Label>
            <Input
              id="clearance-target"
              className="w-32"
              value={target}
              onChange={(e) => setTarget(e.target.value)}
            />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="clearance-cap">Largest discount %</Label>
            <Input id="clearance-cap" className="w-32" value={cap} onChange={(e) => setCap(e.target.value)} />
          </div>
          <Button type="submit" variant="outline" disabled={search.isPending}>
            {search.isPending ? "Searching..." : "Find discount"}
          </Button>
        </form>
        {result && (
          <div className="flex flex-wrap items-center gap-3 text-sm" data-testid="clearance-result">
            <span>{result.message}</span>
            {result.discount_pct !== null && result.discount_pct > 0 && (
              <Button type="button" size="sm" variant="secondary" onClick={() => onUse(result.discount_pct!)}>
                Use {result.discount_pct}% as scenario 1
              </Button>
            )}
          </div>
        )}
      </CardContent>
    </Card>
  );
}

/** Says which Products-page filter the scope came from, how many products it holds, and links back. */
function FilterScopeNote({
  filter,
  result,
  options,
  edited,
}: {
  filter: ProductsSearch;
  result: { data?: FilterScope; isPending: boolean; error: unknown };
  options: ScopeOptions | undefined;
  edited: boolean;
}) {
  const name = (list: { id: number; name: string }[] | undefined, id: number) =>
    list?.find((x) => x.id === id)?.name ?? `#${id}`;
  const parts: string[] = [];
  if (filter.q) parts.push(`matching "${filter.q}"`);
  if (filter.status) parts.push(`status ${filter.status.split(",").join(" or ")}`);
  if (filter.abc) parts.push(`class ${filter.abc}`);
  if (filter.category) parts.push(`category ${name(options?.categories, filter.category)}`);
  if (filter.brand) parts.push(`brand ${name(options?.brands, filter.brand)}`);
  if (filter.vendor) parts.push(`vendor ${name(options?.vendors, filter.vendor)}`);
  if (filter.no_sales_days) parts.push(`no sale in the last ${filter.no_sales_days} days`);
  if (filter.out_of_stock) parts.push("out of stock");
  if (filter.stockout_before_arrival) parts.push("runs out before an order placed today would arrive");
  if (filter.nonMerchandise) parts.push("non-merchandise included");
  const described = parts.length ? parts.join(" · ") : "all products";
  const d = result.data;
  return (
    <div className="rounded-md border bg-muted/40 px-3 py-2 text-sm" data-testid="filter-scope">
      <span className="font-medium">Scope from the Products filter:</span> {described}
      {" — "}
      {result.error ? (
        <span className="text-destructive">
          its products could not be loaded ({discountErrorText(result.error)}).
        </span>
      ) : !d ? (
        "reading its products…"
      ) : d.total === 0 ? (
        "it matches no product."
      ) : (
        <span data-testid="filter-scope-count">
          {d.capped
            ? `the first ${d.pids.length.toLocaleString("en-US")} of ${d.total.toLocaleString("en-US")} products (lowest IDs)`
            : `${d.total.toLocaleString("en-US")} product${d.total === 1 ? "" : "s"}`}
          {edited ? " (the IDs below were changed since)" : ""}.
        </span>
      )}{" "}
      <Link to="/products" search={filter} className="underline underline-offset-2">
        Open the filter on the Products page
      </Link>
    </div>
  );
}
