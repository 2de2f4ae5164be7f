import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function ReusableImages() {
  return (
    <TabPlaceholder title="Reusable Images" description="Manage images that can be reused across products." />
  );
}
