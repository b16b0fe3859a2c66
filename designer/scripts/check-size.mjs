// Fails when dist/ is over the budget, counted as the sum of each file's
// gzip size (what the svc binary carries and a browser downloads).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const LIMIT = 600 * 1024;
const dist = fileURLToPath(new URL("../dist", import.meta.url));

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

let all;
try {
  all = files(dist).sort();
} catch {
  console.error("check-size: no dist/ (run npm run build first)");
  process.exit(1);
}
let total = 0;
for (const f of all) {
  const raw = readFileSync(f);
  const gz = gzipSync(raw, { level: 9 }).length;
  total += gz;
  console.log(`${relative(dist, f).padEnd(36)} ${String(raw.length).padStart(9)} B  ${String(gz).padStart(8)} B gzip`);
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(`total gzip ${kb(total)} of ${kb(LIMIT)}`);
if (total > LIMIT) {
  console.error(`check-size: dist/ is ${kb(total)} gzipped, over the ${kb(LIMIT)} budget`);
  process.exit(1);
}
