// Used by the Prisma CLI only (generate; migrate deploy/status on machines that have Prisma's
// schema engine). The app itself never reads this file: it migrates with server/db/migrate.ts.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/back_office" },
});
