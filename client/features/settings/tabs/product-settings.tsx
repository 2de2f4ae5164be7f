import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function ProductSettings() {
  return (
    <TabPlaceholder
      title="Product Settings"
      description="Configure settings for individual products that override global defaults"
    />
  );
}
