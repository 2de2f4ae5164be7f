import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The README and docs/ travel with a clone: they may point only at files inside the repository.
const root = path.resolve(import.meta.dirname, "../..");
const files = [
  "README.md",
  ...fs
    .readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("README and docs stand alone", () => {
  it.each(files)("%s points at nothing outside the repository", (file) => {
    const text = fs.readFileSync(path.join(root, file), "utf8");
    expect(text).not.toMatch(/\.\.\/shared|back-office-spec/);
    // Every relative Markdown link resolves to a file of the repository.
    for (const [, target = ""] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const resolved = path.resolve(path.dirname(path.join(root, file)), target);
      expect(resolved.startsWith(root + path.sep), `${file} → ${target}`).toBe(true);
      expect(fs.existsSync(resolved), `${file} → ${target}`).toBe(true);
    }
  });

  it("the README stays short enough to read in five minutes", () => {
    const lines = fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n").length;
    expect(lines).toBeLessThan(200);
  });
});

/** Files under `dir` (recursively) whose name ends in one of `exts`. */
function filesUnder(dir: string, exts: string[]): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "generated" && entry.name !== "node_modules") out.push(...filesUnder(rel, exts));
    } else if (exts.some((ext) => entry.name.endsWith(ext))) out.push(rel);
  }
  return out;
}

describe("README, docs and comments speak of the product", () => {
  // Words about how or when something was built, not what it is.
  const HISTORY =
    /\b(?:later|this|that|earlier|previous) issues?\b|\bissues? ?#?\d+\b|\(#\d+\)|\bthe issue (?:left|asks|asked|says|said)\b/i;
  const sources = [
    "README.md",
    ...filesUnder("docs", [".md"]),
    ...["client", "server", "shared", "scripts"].flatMap((d) => filesUnder(d, [".ts", ".tsx", ".mjs"])),
  ];
  it("never tells of issues (README, docs/, and the code's comments)", () => {
    const hits = sources.flatMap((file) =>
      fs
        .readFileSync(path.join(root, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (HISTORY.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});

describe("Node 20 is all it needs", () => {
  const require = createRequire(import.meta.url);
  const semver = require("semver") as { satisfies(version: string, range: string): boolean };
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    engines: { node: string };
  };
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }>;
  };

  it("package.json's engines are true for the Node 20 the machines, CI and the image run", () => {
    expect(semver.satisfies("20.19.0", pkg.engines.node)).toBe(true);
    expect(semver.satisfies(process.version.slice(1), pkg.engines.node)).toBe(true);
  });

  it("every installed package declares engines that include Node 20.19 (no EBADENGINE on install)", () => {
    const refused = Object.entries(lock.packages).flatMap(([where, p]) => {
      const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
      return where && range && !semver.satisfies("20.19.0", range)
        ? [`${where}@${p.version}: node ${range}`]
        : [];
    });
    expect(refused).toEqual([]);
  });
});
