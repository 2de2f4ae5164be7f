import fs from "node:fs";
import path from "node:path";
import { copyFixture } from "./pipeline.ts";

/**
 * A copy of the small fixture with the given files replaced: each file is its header line and its
 * rows (docs/data-format.md). Files not given keep the fixture's content.
 */
export function writeSource(files: Record<string, string[]>): string {
  const dir = copyFixture();
  for (const [file, lines] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, file), `${lines.join("\n")}\n`);
  }
  return dir;
}
