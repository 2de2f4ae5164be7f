// Example script: `API_URL=http://localhost:3000 API_USER=admin API_PASSWORD=… npm run api:example`
// Signs in, prints who it is and the permission catalogue, then signs out.
import { signIn } from "./lib/api-client.ts";

const url = process.env.API_URL ?? "http://localhost:3000";
const username = process.env.API_USER ?? "admin";
const password = process.env.API_PASSWORD;
if (!password) {
  console.error("Set API_PASSWORD (and API_USER, API_URL if not admin at http://localhost:3000)");
  process.exit(1);
}

const { api, user } = await signIn(url, username, password);
console.log(`Signed in as ${user.username}${user.is_admin ? " (admin)" : ""}`);
const me = await api.auth.me.query();
console.log(`Permissions: ${me.is_admin ? "all (admin)" : me.permissions.join(", ") || "none"}`);
if (me.is_admin || me.permissions.includes("settings:user_management")) {
  for (const c of await api.users.permissionCategories.query()) {
    console.log(`${c.category}: ${c.permissions.map((p) => p.code).join(", ")}`);
  }
}
await api.auth.logout.mutate();
