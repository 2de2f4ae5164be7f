import type { Database } from "../../db/database.ts";

export interface PermissionCategory {
  category: string;
  permissions: { id: number; name: string; description: string | null; code: string }[];
}

/** Permissions grouped by category, in catalogue order (spec section 3 "Permission category"). */
export async function listPermissionCategories(db: Database): Promise<PermissionCategory[]> {
  const rows = await db.prisma.permission.findMany({
    orderBy: [{ sortOrder: "asc" }, { id: "asc" }],
    select: { id: true, name: true, description: true, code: true, category: true },
  });
  const byCategory = new Map<string, PermissionCategory>();
  for (const { category, ...permission } of rows) {
    let entry = byCategory.get(category);
    if (!entry) {
      entry = { category, permissions: [] };
      byCategory.set(category, entry);
    }
    entry.permissions.push(permission);
  }
  return [...byCategory.values()];
}
