import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function TemplateManagement() {
  return (
    <TabPlaceholder title="Template Management" description="Manage the templates used to import products." />
  );
}
