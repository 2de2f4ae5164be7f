// `npm run bench:chat -- [--messages N] [--dir DIR] [--rounds R] [--incremental-runs K] [--force]`
// A benchmark, not a test. On the PostgreSQL named by DATABASE_URL (an empty database; --force
// empties its chat archive first): writes a generated Rocket.Chat export (default 1,000,000
// messages over two years in ~30 rooms; kept in --dir for the next run), imports it as a chat run
// of the data pipeline (time, peak RSS of this process), re-imports it with 1 % of the messages
// changed (incremental; its own peak RSS measured apart), then times a page of 50 messages
// (newest, older pages, around a message) and 20 fixed searches, for an admin and for a user who
// may read 20 rooms. Prints p50/p99 and the targets; the last line is one JSON object with the
// figures.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { EJSON } from "bson";
import { loadConfig } from "../../server/config.ts";
import { openDatabase } from "../../server/db/database.ts";
import { migrate } from "../../server/db/migrate.ts";
import { getMessages, searchMessages } from "../../server/modules/chat/chat.service.ts";
import { readDocuments } from "../../server/modules/chat/import/chat-source.ts";
import { closeServices, createServices } from "../../server/services.ts";
import { SearchInputSchema } from "../../shared/chat.ts";
import { generateChatDemo } from "../lib/chat-demo.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    dir: { type: "string" },
    rounds: { type: "string", default: "10" },
    force: { type: "boolean", default: false },
    "incremental-runs": { type: "string", default: "1" },
    "write-only": { type: "boolean", default: false },
    /** Internal: write `--dir`'s messages with 1 % changed to this file (a child process). */
    "write-changed": { type: "string" },
  },
});
const url = process.env.DATABASE_URL;
if (!url && !values["write-only"]) {
  console.error("Set DATABASE_URL to the PostgreSQL database to benchmark on");
  process.exit(1);
}
const total = Number(values.messages);
const rounds = Number(values.rounds);
const dir = path.resolve(values.dir ?? path.join(os.tmpdir(), `bench-chat-${total}`));
const rss = () => Math.round(process.resourceUsage().maxRSS / 1024);
/** The process's peak RSS (VmHWM) in MB. */
const peakRss = () => {
  let m: RegExpExecArray | null = null;
  try {
    m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  } catch {}
  return m ? Math.round(Number(m[1]) / 1024) : rss();
};
/**
 * Sets the process's peak RSS back to its RSS now (Linux: /proc/self/clear_refs), so that the
 * next peakRss() is the peak of what runs in between. False where that is not possible.
 */
const resetPeakRss = () => {
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
};

// --- the 1 % changed export (a new text and _updatedAt), written by a child process
if (values["write-changed"]) {
  const out = fs.createWriteStream(values["write-changed"]);
  let i = 0;
  const bumped = new Date("2026-03-02T00:00:00Z");
  for await (const batch of readDocuments({
    collection: "rocketchat_message",
    file: "m",
    full: path.join(dir, "rocketchat_message.json"),
    size: 0,
  })) {
    let text = "";
    for (const { raw } of batch) {
      if (i++ % 100 === 0 && !raw._hidden) {
        raw.msg = `${raw.msg as string} (revised)`;
        raw._updatedAt = EJSON.serialize({ d: bumped }, { relaxed: true }).d;
      }
      text += `${JSON.stringify(raw)}\n`;
    }
    if (!out.write(text)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  process.exit(0);
}

// --- the export, written by a child process (its memory is not the import's peak RSS)
if (values["write-only"] || !fs.existsSync(path.join(dir, "rocketchat_message.json"))) {
  if (!values["write-only"]) {
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        "--write-only",
        "--messages",
        String(total),
        "--dir",
        dir,
      ],
      { stdio: "inherit" },
    );
    if (child.status !== 0) process.exit(child.status ?? 1);
  } else {
    console.log(`Writing an export of ${total.toLocaleString("en-US")} messages into ${dir}…`);
    const g = await generateChatDemo({
      out: dir,
      messages: total,
      years: 2,
      extraChannels: 14,
      today: new Date("2026-03-01T00:00:00Z"),
      seed: 11,
    });
    console.log(`  written in ${(g.ms / 1000).toFixed(1)} s (${g.rooms} rooms)`);
    process.exit(0);
  }
}
const fileMb = fs.statSync(path.join(dir, "rocketchat_message.json")).size / 1e6;

const db = await openDatabase({ databaseUrl: url, poolSize: 4 });
await migrate(db);
const existing = Number(
  (await db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM chat_messages`)[0]!.n,
);
if (existing > 0) {
  if (!values.force) {
    console.error("This database already holds a chat archive; pass --force to empty it first.");
    process.exit(1);
  }
  for (const t of [
    "chat_messages",
    "chat_rooms",
    "chat_subscriptions",
    "chat_room_members",
    "chat_files",
    "chat_users",
    "chat_import_state",
  ])
    await db.prisma.$executeRawUnsafe(`TRUNCATE ${t}`);
}
const services = await createServices(
  db,
  loadConfig({ DATABASE_URL: url, CHAT_SOURCE_DIR: dir, LOG_LEVEL: "silent" }),
);

async function importRun(label: string) {
  const started = performance.now();
  const { run_id } = await services.dataOps.start("chat", null);
  await services.dataOps.idle();
  const seconds = (performance.now() - started) / 1000;
  const run = await db.prisma.dataRun.findUniqueOrThrow({ where: { id: run_id } });
  if (run.status !== "completed") throw new Error(`${label} ${run.status}: ${run.error}`);
  const record = await db.prisma.importHistory.findFirstOrThrow({ where: { runId: run_id } });
  const info = record.additionalInfo as {
    details: { tables: Record<string, Record<string, number>> };
    step_timings: Record<string, number>;
  };
  console.log(`${label}: ${seconds.toFixed(2)} s, messages ${JSON.stringify(info.details.tables.messages)}`);
  for (const [step, s] of Object.entries(info.step_timings))
    console.log(`  ${step.padEnd(44)} ${s.toFixed(2)} s`);
  return seconds;
}

const fullS = await importRun("Full import");
const fullRss = peakRss();
console.log(`  peak RSS of the process so far ${fullRss} MB`);

// --- 1 % of the messages changed, then re-imported. The changed file is written by a child
// process (its memory is not the import's). The re-import's own peak RSS is measured apart: the
// process's peak is set back to its RSS just before it (what the full import left allocated
// counts, the full import's peak does not). With --incremental-runs K > 1 the changed and the
// original file are imported in turn (each a 1 % change), K times.
const incrementalRuns = Math.max(1, Number(values["incremental-runs"]));
const msgFile = path.join(dir, "rocketchat_message.json");
const original = `${msgFile}.orig`;
const changed = `${msgFile}.changed`;
{
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--write-changed", changed, "--dir", dir],
    { stdio: "inherit" },
  );
  if (child.status !== 0) process.exit(child.status ?? 1);
}
fs.renameSync(msgFile, original);
const incTimes: number[] = [];
const incPeaks: number[] = [];
let peakMeasured = true;
try {
  for (let k = 0; k < incrementalRuns; k++) {
    fs.copyFileSync(k % 2 === 0 ? changed : original, msgFile);
    peakMeasured &&= resetPeakRss();
    const before = Math.round(process.memoryUsage().rss / 1048576);
    incTimes.push(await importRun(`Incremental re-import ${k + 1} (1 % changed)`));
    incPeaks.push(peakRss());
    console.log(
      peakMeasured
        ? `  peak RSS during this re-import ${incPeaks[k]} MB (RSS before it ${before} MB)`
        : "  (the re-import's own peak cannot be told apart here: the figure above is the process's)",
    );
  }
} finally {
  fs.renameSync(original, msgFile);
  fs.rmSync(changed, { force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const incS = median(incTimes);
const incRss = Math.max(...incPeaks);
if (incrementalRuns > 1)
  console.log(
    `Incremental re-imports: ${incTimes.map((t) => t.toFixed(1)).join(", ")} s (median ${incS.toFixed(1)} s), peaks ${incPeaks.join(", ")} MB`,
  );

// --- reading: pages of 50 and searches
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const time = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

const admin = { id: 1, is_admin: true, permissions: [], rocket_chat_user_id: null };
// The staff member who reads the number of rooms closest to 20.
const [member] = await db.prisma.$queryRaw<{ id: number; username: string; rooms: number }[]>`
  SELECT u.id, u.username, count(*)::int AS rooms FROM chat_users u JOIN chat_room_members m ON m.user_mongo_id = u.mongo_id
  GROUP BY u.id, u.username ORDER BY abs(count(*) - 20), u.id LIMIT 1`;
const user = { id: 2, is_admin: false, permissions: ["access:chat"], rocket_chat_user_id: member!.id };
console.log(`\nReader: an admin, and ${member!.username} who may read ${member!.rooms} rooms`);

const rooms = await db.prisma.$queryRaw<{ id: string; n: number }[]>`
  SELECT id, message_count AS n FROM chat_rooms WHERE message_count > 200 ORDER BY id`;
const pageTimes: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const room of rooms) {
    pageTimes.push(await time(() => getMessages(db, admin, { rid: room.id, limit: 50 })));
    const [mid] = await db.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM chat_messages WHERE rid = ${room.id} ORDER BY ts OFFSET ${Math.floor(((r + 1) / (rounds + 1)) * room.n)} LIMIT 1`;
    if (mid) {
      pageTimes.push(await time(() => getMessages(db, admin, { rid: room.id, limit: 50, before: mid.id })));
      pageTimes.push(await time(() => getMessages(db, admin, { rid: room.id, limit: 50, around: mid.id })));
    }
  }
}
const pageP50 = percentile(pageTimes, 50);
const pageP99 = percentile(pageTimes, 99);
console.log(
  `Page of 50 messages: ${pageTimes.length} reads, p50 ${pageP50.toFixed(1)} ms, p99 ${pageP99.toFixed(1)} ms (target p99 ≤ 20 ms)`,
);

const QUERIES = [
  "glue",
  "order",
  "embroidery",
  "quarantine",
  '"reorder point reached"',
  '"two weeks earlier"',
  "from:emma.schneider",
  "from:liam.walsh invoice",
  "in:purchasing",
  "in:warehouse stock",
  "has:file",
  "after:2025-06-01 before:2025-07-01",
  "after:2026-01-01 price",
  "washi tape",
  "PO-4711",
  "from:noah.fischer in:general",
  "has:file in:purchasing",
  "lead time before:2025-01-01",
  "credit difference after:2025-09-01",
  '"price list" from:olivia.brennan',
];
const results: Record<string, { admin: number[]; user: number[]; hits: number }> = {};
for (const q of QUERIES) results[q] = { admin: [], user: [], hits: 0 };
const all = { admin: [] as number[], user: [] as number[] };
for (let r = 0; r < rounds; r++) {
  for (const q of QUERIES) {
    for (const [who, viewer] of [
      ["admin", admin],
      ["user", user],
    ] as const) {
      const input = SearchInputSchema.parse({ q, sort: r % 2 ? "best" : "newest" });
      let hits = 0;
      const ms = await time(async () => {
        try {
          hits = (await searchMessages(db, viewer, input)).hits.length;
        } catch {
          // in:<room> the user cannot read: a 400, timed like any answer
        }
      });
      results[q]![who].push(ms);
      all[who].push(ms);
      if (who === "admin") results[q]!.hits = hits;
    }
  }
}
console.log(
  `\n${"query".padEnd(40)} ${"hits".padStart(5)} ${"admin p99".padStart(10)} ${"user p99".padStart(9)}`,
);
for (const q of QUERIES) {
  const x = results[q]!;
  console.log(
    `${q.padEnd(40)} ${String(x.hits).padStart(5)} ${percentile(x.admin, 99).toFixed(1).padStart(10)} ${percentile(x.user, 99).toFixed(1).padStart(9)}`,
  );
}
const search = {
  admin: { p50: percentile(all.admin, 50), p99: percentile(all.admin, 99) },
  user: { p50: percentile(all.user, 50), p99: percentile(all.user, 99) },
};
console.log(
  `Search (${QUERIES.length} queries × ${rounds} rounds, newest and best alternating): admin p50 ${search.admin.p50.toFixed(1)} / p99 ${search.admin.p99.toFixed(1)} ms, user p50 ${search.user.p50.toFixed(1)} / p99 ${search.user.p99.toFixed(1)} ms (target p99 ≤ 100 ms)`,
);
// The process's peak over the whole bench (the peak was set back before each re-import).
const processPeak = Math.max(fullRss, ...incPeaks, peakRss());
console.log(
  `\nFull import ${fullS.toFixed(1)} s (target ≤ 60 s), peak RSS ${fullRss} MB (≤ 512), incremental ${incS.toFixed(1)} s (≤ 5 s), its peak RSS ${peakMeasured ? incRss : "not measured apart"} MB (≤ 512), process peak ${processPeak} MB, export ${fileMb.toFixed(0)} MB of messages`,
);
const r1 = (n: number) => Math.round(n * 10) / 10;
console.log(
  JSON.stringify({
    messages: total,
    import_s: r1(fullS),
    peak_rss_mb: fullRss,
    incremental_s: r1(incS),
    incremental_peak_rss_mb: peakMeasured ? incRss : null,
    process_peak_rss_mb: processPeak,
    page_p50_ms: r1(pageP50),
    page_p99_ms: r1(pageP99),
    search_admin_p99_ms: r1(search.admin.p99),
    search_user_p99_ms: r1(search.user.p99),
    user_rooms: member!.rooms,
  }),
);
await closeServices(services);
await db.close();
