-- CreateTable
CREATE TABLE "forecast_override_groups" (
    "id" SERIAL NOT NULL,
    "scope_kind" TEXT NOT NULL,
    "scope_id" INTEGER NOT NULL,
    "scope_name" TEXT NOT NULL,
    "weeks" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "expires_on" DATE,
    "created_by" INTEGER,
    "created_by_name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "forecast_override_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "forecast_overrides" (
    "group_id" INTEGER NOT NULL,
    "pid" INTEGER NOT NULL,
    "week_start" DATE NOT NULL,
    "units" DOUBLE PRECISION,
    "pct" DOUBLE PRECISION,

    CONSTRAINT "forecast_overrides_pkey" PRIMARY KEY ("group_id","pid","week_start")
);

-- CreateTable
CREATE TABLE "forecast_snapshots" (
    "snapshot_week" DATE NOT NULL,
    "pid" INTEGER NOT NULL,
    "system" REAL[],
    "final" REAL[],
    "method" TEXT NOT NULL,

    CONSTRAINT "forecast_snapshots_pkey" PRIMARY KEY ("snapshot_week","pid")
);

-- CreateTable
CREATE TABLE "forecast_measured" (
    "pid" INTEGER NOT NULL,
    "week_start" DATE NOT NULL,
    "lag" INTEGER NOT NULL,
    "actual" DOUBLE PRECISION NOT NULL,
    "system" DOUBLE PRECISION NOT NULL,
    "final" DOUBLE PRECISION NOT NULL,
    "naive" DOUBLE PRECISION NOT NULL,
    "method" TEXT NOT NULL,

    CONSTRAINT "forecast_measured_pkey" PRIMARY KEY ("pid","week_start")
);

-- CreateIndex
CREATE INDEX "forecast_override_groups_created_at_idx" ON "forecast_override_groups"("created_at");

-- CreateIndex
CREATE INDEX "forecast_overrides_pid_week_start_idx" ON "forecast_overrides"("pid", "week_start");

-- CreateIndex
CREATE INDEX "forecast_snapshots_pid_idx" ON "forecast_snapshots"("pid");

-- CreateIndex
CREATE INDEX "forecast_measured_week_start_idx" ON "forecast_measured"("week_start");

-- AddForeignKey
ALTER TABLE "forecast_overrides" ADD CONSTRAINT "forecast_overrides_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "forecast_override_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;
