// vitest 5 reports failures with Map.groupBy (Node 21+). On Node 20 its error summary would crash
// instead of printing what failed, so the configs load this first.
type GroupBy = <K, V>(items: Iterable<V>, key: (item: V, index: number) => K) => Map<K, V[]>;
const MapWithGroupBy = Map as unknown as { groupBy?: GroupBy };
if (typeof MapWithGroupBy.groupBy !== "function") {
  MapWithGroupBy.groupBy = (items, key) => {
    const out = new Map();
    let i = 0;
    for (const item of items) {
      const k = key(item, i++);
      const list = out.get(k);
      if (list) list.push(item);
      else out.set(k, [item]);
    }
    return out;
  };
}
