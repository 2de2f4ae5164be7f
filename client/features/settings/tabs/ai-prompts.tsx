import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function AiPrompts() {
  return <TabPlaceholder title="AI Prompts" description="Manage the prompts used for AI validation." />;
}
