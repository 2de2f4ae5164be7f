// `npm run bench:ai -- [--rows 1000] [--concurrency 8] [--latency 200] [--rows-per-call 1] [--repeat 1]`
// A benchmark, not a test. Starts the loopback chat-completions server of the tests in a child
// process (so its work does not share this process's event loop) answering every call after
// `--latency` ms, then validates `--rows` distinct rows through the real service (prompt assembly,
// the openai client, parsing, the call log, the cache) on an embedded PGlite, or on the PostgreSQL
// named by TEST_DATABASE_URL (a new database, dropped afterwards). Prints the wall time against the
// floor (rows / rows-per-call / concurrency × latency) and the app's own time per call, p50/p99/max:
// from the moment the call has its slot to its rows' verdicts handed on (prompt assembly, the
// openai client, the loopback HTTP both ways, parsing, the results, the call record queued for the
// writer), minus the model's time: from the request's last byte handed to the socket to the
// model process handing its answer to its socket, both read on the machine's monotonic clock
// (undici's diagnostics channel here, the answer's `x-answer-sent-hr` there). Also printed: the
// same minus the model's own time as it reports it (`openai-processing-ms`: from the request read
// to the answer sent, which leaves the request's delivery and the model process's wait for a core
// to the app), the same minus only the nominal latency (which counts the model server's own work and
// scheduling as the app's), how long a call record waits until it is stored, the event loop's delay,
// and the app's CPU time per call. The last line is one JSON object with the figures. With `--bare`,
// also the floor of the measure at the same moment: as many bare node:http requests (no openai
// client, no prompt, no database), as many at once, to the same model process, timed the same way.
import { spawn } from "node:child_process";
import dc from "node:diagnostics_channel";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { loadConfig } from "../../server/config.ts";
import {
  AiValidation,
  CALL_START_GAP_MS,
  getCall,
  listCalls,
  type RowInput,
} from "../../server/modules/aiValidation/aiValidation.service.ts";
import { createTestDatabase } from "../../tests/helpers/db.ts";
import { startFakeModel } from "../../tests/helpers/fake-model.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "8" },
    latency: { type: "string", default: "200" },
    "rows-per-call": { type: "string", default: "1" },
    repeat: { type: "string", default: "1" },
    "serve-model": { type: "boolean", default: false },
    bare: { type: "boolean", default: false },
  },
});

if (values["serve-model"]) {
  const model = await startFakeModel();
  model.latencyMs = Number(values.latency);
  console.log(`MODEL ${model.url}`);
  process.on("SIGTERM", () => void model.close().then(() => process.exit(0)));
} else {
  await main();
}

async function startModelProcess(latency: number): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    path.resolve("node_modules/.bin/tsx"),
    [path.resolve("scripts/bench/ai-validation.ts"), "--serve-model", "--latency", String(latency)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /MODEL (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`model server exited (${code})`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

/** Bare node:http calls to the model, `concurrency` at once: time minus the server's own, CPU. */
async function bareCalls(url: string, calls: number, concurrency: number) {
  const agent = new http.Agent({ keepAlive: true });
  const one = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const row = { row_id: i, title: `gel pen bare-${i}`, sku: `GP-bare-${i}`, price: "2.49", cost: "1.10" };
      const body = Buffer.from(
        JSON.stringify({
          model: "bench-model",
          temperature: 0,
          messages: [
            { role: "system", content: "You are a careful merchandiser for a stationery retailer." },
            { role: "user", content: `## Rows to check\n${JSON.stringify(row)}` },
          ],
        }),
      );
      const t0 = performance.now();
      const req = http.request(
        `${url}/chat/completions`,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            JSON.parse(Buffer.concat(chunks).toString());
            resolve(performance.now() - t0 - Number(res.headers["openai-processing-ms"]));
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  for (let i = 0; i < 2 * concurrency; i++) await one(i);
  const times: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  // Started CALL_START_GAP_MS apart, as the app starts its calls.
  await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      await new Promise((r) => setTimeout(r, k * CALL_START_GAP_MS));
      while (next < calls) times.push(await one(next++));
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    p50: p(times, 0.5),
    p99: p(times, 0.99),
    max: p(times, 1),
    cpu_ms_per_call: Math.round(((cpu.user + cpu.system) / 1000 / calls) * 100) / 100,
  };
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function p(list: number[], q: number): number {
  return (
    Math.round(
      quantile(
        [...list].sort((a, b) => a - b),
        q,
      ) * 100,
    ) / 100
  );
}

async function main() {
  const rows = Number(values.rows);
  const concurrency = Number(values.concurrency);
  const latency = Number(values.latency);
  const perCall = Number(values["rows-per-call"]);
  const model = await startModelProcess(latency);
  const tdb = await createTestDatabase();
  try {
    const config = loadConfig({
      NODE_ENV: "production",
      LOG_LEVEL: "silent",
      AI_BASE_URL: model.url,
      AI_MODEL: "bench-model",
      AI_CONCURRENCY: String(concurrency),
      AI_ROWS_PER_CALL: String(perCall),
      AI_PRICE_INPUT_PER_MTOK: "0.15",
      AI_PRICE_OUTPUT_PER_MTOK: "0.6",
    });
    await tdb.db.prisma.aiPrompt.createMany({
      data: [
        { promptType: "system", promptText: "You are a careful merchandiser for a stationery retailer." },
        {
          promptType: "general",
          promptText: "Titles use title case. Descriptions are full sentences. Prices have two decimals.",
        },
      ],
    });
    const ai = new AiValidation(tdb.db, config);
    const makeRows = (n: number, tag: string): RowInput[] =>
      Array.from({ length: n }, (_, i) => ({
        row_id: i + 1,
        values: {
          title: `gel pen ${tag}-${i}`,
          sku: `GP-${tag}-${i}`,
          price: "2.49",
          cost: "1.10",
          description: "A smooth gel pen with a comfortable grip.",
        },
      }));
    // Warm up the client, the JIT and the connection pool.
    await ai.validateRows(makeRows(2 * concurrency, "warm"));

    // The model's time for each request, on the machine's one monotonic clock (process.hrtime reads
    // CLOCK_MONOTONIC in both processes): from the moment the client handed the request's last
    // byte to the socket (undici's bodySent) to the moment the model process handed its answer to
    // its socket (the answer's x-answer-sent-hr). The kernel's delivery of the request, the model
    // process's wait for a core, its work and its 200 ms are the model's; delivering the answer,
    // this process noticing it and everything after are the app's.
    const sentAt = new WeakMap<object, bigint>();
    const modelSpanMs = new Map<string, number>();
    dc.subscribe("undici:request:bodySent", (m) => {
      sentAt.set((m as { request: object }).request, process.hrtime.bigint());
    });
    dc.subscribe("undici:request:headers", (m) => {
      const { request, response } = m as { request: object; response: { headers: Buffer[] } };
      let id: string | null = null;
      let answeredHr: string | null = null;
      for (let i = 0; i + 1 < response.headers.length; i += 2) {
        const name = response.headers[i]!.toString().toLowerCase();
        if (name === "x-request-id") id = response.headers[i + 1]!.toString();
        else if (name === "x-answer-sent-hr") answeredHr = response.headers[i + 1]!.toString();
      }
      const sent = sentAt.get(request);
      if (id && answeredHr && sent !== undefined)
        modelSpanMs.set(id, Number(BigInt(answeredHr) - sent) / 1e6);
    });

    const floorMs = (Math.ceil(rows / perCall) / concurrency) * latency;
    const rounds: {
      wallMs: number;
      cpuMs: number;
      appMs: number[];
      appReportedMs: number[];
      appNominalMs: number[];
      wireMs: number[];
      storeMs: number[];
      slotMs: number[];
      loopP99: number;
      loopMax: number;
      failed: number;
    }[] = [];
    for (let r = 0; r < Number(values.repeat); r++) {
      const appMs: number[] = [];
      const appReportedMs: number[] = [];
      const appNominalMs: number[] = [];
      const wireMs: number[] = [];
      const storeMs: number[] = [];
      const slotMs: number[] = [];
      ai.observe = (t) => {
        // The model's time is its span on the clock (above; the time it reports when a span is
        // missing); everything else in the call is ours. Retry pauses (none here) are neither.
        const server = t.server_ms ?? latency;
        const spans = t.request_ids.map((id) => modelSpanMs.get(id));
        const span =
          spans.length && spans.every((x) => x !== undefined) ? spans.reduce((a, b) => a! + b!, 0)! : null;
        appMs.push(t.total_ms - t.wait_ms - (span ?? server));
        appReportedMs.push(t.total_ms - t.wait_ms - server);
        appNominalMs.push(t.total_ms - t.wait_ms - latency);
        wireMs.push(t.model_ms - server);
        // The wait for a slot beyond the call before it: the spacing of call starts.
        slotMs.push(t.slot_ms);
      };
      ai.writer.observe = (ms) => storeMs.push(ms);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const results = await ai.validateRows(makeRows(rows, `r${r}`));
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      // This process is the app alone (the model runs in its own): its CPU time per call is what
      // the app costs, whatever else the machine is doing.
      const cpuMs = (cpu.user + cpu.system) / 1000;
      ai.observe = null;
      ai.writer.observe = null;
      loop.disable();
      rounds.push({
        wallMs,
        cpuMs,
        appMs,
        appReportedMs,
        appNominalMs,
        wireMs,
        storeMs,
        slotMs,
        loopP99: loop.percentile(99) / 1e6,
        loopMax: loop.max / 1e6,
        failed: results.filter((x) => x.status === "failed").length,
      });
    }
    await ai.close();
    // The debug page's reads over the calls just stored: the runs list (first page, a filter, a
    // search) and one run's detail.
    const reads: Record<string, () => Promise<unknown>> = {
      runs_page: () => listCalls(tdb.db, { page: 1, pageSize: 50 }),
      runs_failed: () => listCalls(tdb.db, { page: 1, pageSize: 50, status: "failed" }),
      runs_search: () => listCalls(tdb.db, { page: 1, pageSize: 50, search: "bench-model" }),
      run_detail: () => getCall(tdb.db, 1 + Math.floor(Math.random() * rows)),
    };
    const readFigures: Record<string, { p50: number; p99: number }> = {};
    for (const [name, fn] of Object.entries(reads)) {
      const times: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t = performance.now();
        await fn();
        times.push(performance.now() - t);
      }
      readFigures[name] = { p50: p(times, 0.5), p99: p(times, 0.99) };
    }
    const bare = values.bare ? await bareCalls(model.url, Math.ceil(rows / perCall), concurrency) : null;
    const best = rounds.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
    const sorted = [...best.appMs].sort((a, b) => a - b);
    const figures = {
      backend: process.env.TEST_DATABASE_URL ? "postgres" : "pglite",
      rows,
      concurrency,
      rows_per_call: perCall,
      model_latency_ms: latency,
      calls: best.appMs.length,
      failed_rows: best.failed,
      wall_s: Math.round(best.wallMs) / 1000,
      floor_s: Math.round(floorMs) / 1000,
      app_cpu_ms_per_call: Math.round((best.cpuMs / Math.max(1, best.appMs.length)) * 100) / 100,
      app_ms_p50: Math.round(quantile(sorted, 0.5) * 100) / 100,
      app_ms_p99: Math.round(quantile(sorted, 0.99) * 100) / 100,
      app_ms_max: Math.round((sorted.at(-1) ?? 0) * 100) / 100,
      app_ms_server_reported_p50: p(best.appReportedMs, 0.5),
      app_ms_server_reported_p99: p(best.appReportedMs, 0.99),
      app_ms_nominal_p50: p(best.appNominalMs, 0.5),
      app_ms_nominal_p99: p(best.appNominalMs, 0.99),
      client_and_http_ms_p50: p(best.wireMs, 0.5),
      client_and_http_ms_p99: p(best.wireMs, 0.99),
      slot_wait_ms_p50: p(best.slotMs, 0.5),
      slot_wait_ms_p99: p(best.slotMs, 0.99),
      stored_after_ms_p50: p(best.storeMs, 0.5),
      stored_after_ms_p99: p(best.storeMs, 0.99),
      event_loop_delay_ms_p99: Math.round(best.loopP99 * 100) / 100,
      event_loop_delay_ms_max: Math.round(best.loopMax * 100) / 100,
      reads_ms: readFigures,
      ...(bare ? { bare_http_ms: bare } : {}),
      load_avg: os.loadavg().map((l) => Math.round(l * 10) / 10),
    };
    console.log(
      `${rows} rows, ${figures.calls} calls at concurrency ${concurrency}, model ${latency} ms: ` +
        `${figures.wall_s} s (floor ${figures.floor_s} s); app's own time per call ` +
        `p50 ${figures.app_ms_p50} ms, p99 ${figures.app_ms_p99} ms, max ${figures.app_ms_max} ms; ` +
        `CPU ${figures.app_cpu_ms_per_call} ms per call; ${best.failed} failed rows; load ${figures.load_avg.join(" ")}`,
    );
    console.log(
      `minus the model's reported time (openai-processing-ms) instead of its time on the clock: p50 ${figures.app_ms_server_reported_p50} ms, ` +
        `p99 ${figures.app_ms_server_reported_p99} ms`,
    );
    console.log(
      `minus the nominal ${latency} ms instead of the server's own time: p50 ${figures.app_ms_nominal_p50} ms, ` +
        `p99 ${figures.app_ms_nominal_p99} ms; client and HTTP p50 ${figures.client_and_http_ms_p50} / p99 ${figures.client_and_http_ms_p99} ms; ` +
        `waiting for a slot after the call before (start spacing ${CALL_START_GAP_MS} ms) p50 ${figures.slot_wait_ms_p50} / p99 ${figures.slot_wait_ms_p99} ms; ` +
        `a call stored after p50 ${figures.stored_after_ms_p50} / p99 ${figures.stored_after_ms_p99} ms; ` +
        `event loop delay p99 ${figures.event_loop_delay_ms_p99} ms, max ${figures.event_loop_delay_ms_max} ms`,
    );
    if (bare)
      console.log(
        `bare node:http at the same concurrency and start spacing (the measure's floor, no app): p50 ${bare.p50} ms, ` +
          `p99 ${bare.p99} ms, max ${bare.max} ms; CPU ${bare.cpu_ms_per_call} ms per call`,
      );
    for (const [name, f] of Object.entries(readFigures))
      console.log(`${name}: p50 ${f.p50} ms, p99 ${f.p99} ms`);
    console.log(JSON.stringify(figures));
  } finally {
    model.stop();
    await tdb.drop();
  }
}
