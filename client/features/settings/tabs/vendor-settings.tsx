import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function VendorSettings() {
  return (
    <TabPlaceholder
      title="Vendor Settings"
      description="Configure default settings for products from specific vendors"
    />
  );
}
