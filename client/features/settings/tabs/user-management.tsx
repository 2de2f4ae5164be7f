import { TabPlaceholder } from "../tab-placeholder.tsx";

export default function UserManagement() {
  return <TabPlaceholder title="User Management" description="Manage users and their permissions." />;
}
