// The Purchase Orders page: the replenishment workspace and the list of every purchase order, as
// two tabs whose state lives in the URL.
import { PageHeader } from "@client/components/page-header.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@client/components/ui/tabs.tsx";
import { PurchaseOrderList } from "./po-list.tsx";
import type { PurchaseOrdersSearch } from "./search.ts";
import { ReplenishmentWorkspace } from "./workspace.tsx";

export function PurchaseOrdersPage({
  search,
  onSearchChange,
}: {
  search: PurchaseOrdersSearch;
  onSearchChange: (next: PurchaseOrdersSearch) => void;
}) {
  const tab = search.tab ?? "orders";
  return (
    <div className="space-y-4">
      <PageHeader
        title="Purchase Orders"
        description="Turn the plan's reorder suggestions into orders, and follow every order until it is received."
      />
      <Tabs
        value={tab}
        onValueChange={(t) => onSearchChange({ ...search, tab: t as PurchaseOrdersSearch["tab"] })}
      >
        <TabsList>
          <TabsTrigger value="orders">Purchase orders</TabsTrigger>
          <TabsTrigger value="replenishment">Replenishment</TabsTrigger>
        </TabsList>
        <TabsContent value="orders">
          {tab === "orders" && <PurchaseOrderList search={search} onSearchChange={onSearchChange} />}
        </TabsContent>
        <TabsContent value="replenishment">
          {tab === "replenishment" && (
            <ReplenishmentWorkspace search={search} onSearchChange={onSearchChange} />
          )}
        </TabsContent>
      </Tabs>
    </div>
  );
}
