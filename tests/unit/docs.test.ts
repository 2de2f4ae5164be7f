import fs from "node:fs";
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
