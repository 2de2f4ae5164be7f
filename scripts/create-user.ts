// `npm run user:create -- --username NAME --password PW [--admin] [--permissions a,b] [--email E]`
// Creates (or with --update, changes) a user from the command line: ops' way in when no admin can sign in.
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../server/config.ts";
import { openDatabase } from "../server/db/database.ts";
import { migrate } from "../server/db/migrate.ts";
import {
  hashPassword,
  normalizeUsername,
  syncPermissionCatalogue,
} from "../server/modules/auth/auth.service.ts";
import { isPermissionCode } from "../shared/permissions.ts";

const { values } = parseArgs({
  options: {
    username: { type: "string" },
    password: { type: "string" },
    email: { type: "string" },
    admin: { type: "boolean", default: false },
    permissions: { type: "string", default: "" },
    update: { type: "boolean", default: false },
  },
});

try {
  if (!values.username || values.username.trim().length < 3)
    throw new Error("--username (at least 3 characters) is required");
  if (!values.password || values.password.length < 6)
    throw new Error("--password (at least 6 characters) is required");
  const codes = values.permissions
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = codes.filter((c) => !isPermissionCode(c));
  if (unknown.length) throw new Error(`Unknown permission code(s): ${unknown.join(", ")}`);

  const config = loadConfig();
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrate(db);
    await syncPermissionCatalogue(db);
    const perms = await db.prisma.permission.findMany({
      where: { code: { in: codes } },
      select: { id: true },
    });
    const data = {
      username: values.username.trim(),
      usernameKey: normalizeUsername(values.username),
      email: values.email ?? null,
      passwordHash: await hashPassword(values.password),
      isAdmin: values.admin,
      isActive: true,
    };
    const permissions = { create: perms.map((p) => ({ permissionId: p.id })) };
    const user = values.update
      ? await db.prisma.user.update({
          where: { usernameKey: data.usernameKey },
          data: { ...data, permissions: { deleteMany: {}, ...permissions } },
        })
      : await db.prisma.user.create({ data: { ...data, permissions } });
    console.log(
      `${values.update ? "Updated" : "Created"} user ${user.username} (id ${user.id}) with ${codes.length} permission(s)`,
    );
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : (err as Error).message);
  process.exit(1);
}
