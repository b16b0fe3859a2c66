// A quick look at a running editor (not the acceptance test): opens the
// address `svc design` printed in headless Chromium, checks that the page
// came up with its test hooks, and writes a screenshot.
//   node scripts/smoke.mjs 'http://127.0.0.1:7311/?token=…' [screenshot.png]
import { chromium } from "playwright-core";

const url = process.argv[2];
const shot = process.argv[3] ?? "screenshot.png";
if (!url) {
  console.error("usage: node scripts/smoke.mjs URL [screenshot.png]");
  process.exit(2);
}
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
await page.goto(url);
await page.getByTestId("palette-function").waitFor();
await page.locator('[data-testid^="node-"]').first().waitFor();
const nodes = await page.locator('.react-flow__node[data-testid^="node-"]').count();
const disabled = await page.locator('[data-testid^="palette-"]:disabled').count();
await page.waitForTimeout(800);
const diags = await page.locator('[data-testid^="diagnostic-"]').count();
console.log(`nodes ${nodes}, disabled palette kinds ${disabled}, diagnostics ${diags}`);
const first = await page.locator('.react-flow__node[data-testid^="node-"]').nth(1);
await first.click();
await page.getByTestId("inspector-id").waitFor();
await page.screenshot({ path: shot });
console.log(`screenshot: ${shot}`);
if (errors.length) console.log(`page errors:\n${errors.join("\n")}`);
await browser.close();
process.exit(errors.length ? 1 : 0);
