import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function DataManagement() {
  return (
    <TabPlaceholder
      title="Data Management"
      description="Run full updates and resets, and review import and calculation history."
    />
  );
}
