// Makes docs/designer.png, the README's picture of the designer: support_triage
// opened for go in Debian's chromium (playwright-core), its classify node selected.
//
//   SVC_BIN=target/debug/svc node designer/scripts/screenshot.mjs

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startDesigner } from "../tests/designer.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const dir = mkdtempSync(join(tmpdir(), "svc-shot-"));
const doc = join(dir, "support_triage.graph.json");
copyFileSync(join(root, "fixtures", "valid", "support_triage.graph.json"), doc);
const { child, url } = await startDesigner(doc);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url);
  await page.locator('.react-flow__node[data-id="classify"]').click();
  await page.getByText("no problems").waitFor();
  await page.waitForTimeout(500); // the view's fit animation
  await page.screenshot({ path: join(root, "docs", "designer.png") });
} finally {
  await browser.close();
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}
