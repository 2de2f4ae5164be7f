// Stores model calls: the calls that finish while one insert is on its way go together in the
// next one (one statement, one JSON parameter), so the call log costs little per call however
// many are in flight.
import type { Database } from "../../db/database.ts";

export interface CallRecord {
  kind: string;
  batch_id: number | null;
  import_id: number | null;
  row_ids: number[];
  replay_of: number | null;
  company: string | null;
  product_type: string | null;
  template_id: number | null;
  prompt_versions: unknown;
  base_url: string;
  model: string;
  mode: string | null;
  status: string;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  cost: number;
  fields_checked: number;
  issues_found: number;
  layers: unknown;
  request: unknown;
  response_raw: string | null;
  verdicts: unknown;
  error: string | null;
  attempts: unknown;
  timings: unknown;
  created_by: number | null;
}

const TEXT = [
  "kind",
  "company",
  "product_type",
  "base_url",
  "model",
  "mode",
  "status",
  "response_raw",
  "error",
];
const INT = ["batch_id", "import_id", "replay_of", "template_id", "latency_ms", "tokens_in", "tokens_out"];
const MORE_INT = ["fields_checked", "issues_found", "created_by"];
const JSONB = ["prompt_versions", "layers", "request", "attempts", "timings"];

const INSERT_SQL = `
  INSERT INTO ai_validation_calls (${[...TEXT, ...INT, ...MORE_INT, ...JSONB, "cost", "verdicts", "row_ids", "finished_at"].join(", ")})
  SELECT ${[
    ...TEXT.map((c) => `e.j->>'${c}'`),
    ...[...INT, ...MORE_INT].map((c) => `(e.j->>'${c}')::int`),
    ...JSONB.map((c) => `e.j->'${c}'`),
    "(e.j->>'cost')::numeric",
    "NULLIF(e.j->'verdicts', 'null'::jsonb)",
    "ARRAY(SELECT jsonb_array_elements_text(e.j->'row_ids')::int)",
    "now()",
  ].join(", ")}
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(j, n)
   ORDER BY e.n
  RETURNING id`;

interface Pending {
  record: CallRecord;
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

export class CallWriter {
  private queue: Pending[] = [];
  private writing = false;

  constructor(private readonly db: Database) {}

  /** Stores the call; answers its id. */
  write(record: CallRecord): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (!this.writing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, 200);
        try {
          // Rows come back in the order given (INSERT … SELECT … ORDER BY keeps it for RETURNING).
          const rows = await this.db.prisma.$queryRawUnsafe<{ id: number }[]>(
            INSERT_SQL,
            JSON.stringify(batch.map((p) => p.record)),
          );
          batch.forEach((p, i) => {
            p.resolve(rows[i]!.id);
          });
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
