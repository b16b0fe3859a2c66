// Runs the unit tests: src/**/*.test.ts are bundled by esbuild (Node 20
// cannot strip types) into .test-out/ and run by node's own test runner.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, ".test-out");

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return findTests(p);
    return e.name.endsWith(".test.ts") ? [p] : [];
  });
}

const entries = findTests(join(root, "src")).sort();
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: entries,
  outdir: out,
  outbase: join(root, "src"),
  outExtension: { ".js": ".mjs" },
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  logLevel: "warning",
  loader: { ".json": "json" },
  jsx: "automatic",
  alias: { "@ir-schema": join(root, "..", "fixtures", "schema", "ir-v2.schema.json") },
});
const files = entries.map((e) => join(out, relative(join(root, "src"), e)).replace(/\.ts$/, ".mjs"));
const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
