import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function GlobalSettings() {
  return (
    <TabPlaceholder
      title="Global Settings"
      description="Configure the ABC classification and system-wide default values."
    />
  );
}
