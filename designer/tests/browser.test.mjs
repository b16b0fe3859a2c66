// The designer end to end, in Debian's chromium driven by playwright-core:
// open a fixture, add a function node, connect it, type its Go body, see a
// diagnostic appear on the node and go once fixed, save, export for go and
// run `go test ./...` on the export. Also records the time to interactive
// and takes the README's screenshot.
//
// Run by the test command: SVC_BIN=target/debug/svc node --test designer/tests/
// Without chromium (or SVC_BIN) it skips, unless CI=true.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDesigner } from "./designer.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const svc = process.env.SVC_BIN;
const missing = !chromium ? "no chromium (apt-get install chromium)" : !svc || !existsSync(svc) ? "SVC_BIN names no svc binary" : null;
if (missing && process.env.CI === "true") {
  throw new Error(`the designer's browser test cannot run: ${missing}`);
}

test("edit, validate, save and export a graph in the browser", { skip: missing ?? false, timeout: 240_000 }, async (t) => {
  const { chromium: browserType } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "svc-design-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = join(dir, "triage.graph.json");
  copyFileSync(join(root, "fixtures", "valid", "support_triage.graph.json"), doc);
  const { child, url } = await startDesigner(doc);
  t.after(() => child.kill());
  const browser = await browserType.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // Interactive: the fixture's nodes are on the canvas.
  const started = Date.now();
  await page.goto(url);
  await page.getByTestId("node-classify").waitFor();
  const interactiveMs = Date.now() - started;
  await page.getByTestId("diagnostics-count").waitFor();

  // Add a function node; it has no Go body yet and nothing leads to it.
  const before = await page.locator(".react-flow__node").count();
  await page.getByTestId("palette-function").click();
  await page.waitForFunction((n) => document.querySelectorAll(".react-flow__node").length === n + 1, before);
  const id = await page.evaluate((known) => {
    const ids = [...document.querySelectorAll(".react-flow__node")].map((n) => n.getAttribute("data-id"));
    return ids.find((i) => !known.includes(i));
  }, ["start", "classify", "route", "billing", "general", "end"]);
  assert.ok(id, "the new node has an id");
  const node = page.getByTestId(`node-${id}`);
  await page.getByTestId(`node-${id}-diagnostics`).waitFor();

  // Connect classify -> new -> route (a function node has one outgoing edge).
  const handle = (nodeId, kind) => page.locator(`.react-flow__node[data-id="${nodeId}"] .react-flow__handle.${kind}`).first();
  // The view re-fits when the canvas resizes (the diagnostics pane grows with
  // the new node's diagnostics): drag only once it has held still.
  const settled = async () => {
    let last = null;
    for (let still = 0; still < 3; ) {
      await page.waitForTimeout(100);
      const now = await page.locator(".react-flow__viewport").getAttribute("style");
      still = now === last ? still + 1 : 0;
      last = now;
    }
  };
  const drag = async (from, to) => {
    await settled();
    const a = await handle(from, "source").boundingBox();
    const b = await handle(to, "target").boundingBox();
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
    await page.mouse.up();
    // The edge is there (a function node's one edge out is replaced).
    await page.waitForFunction(
      (end) => [...document.querySelectorAll(".react-flow__edge")].some((e) => e.getAttribute("data-id")?.endsWith(end)),
      `:${from}->${to}`,
    );
  };
  await drag("classify", id);
  await drag(id, "route");

  // Type its Go body: the missing-body diagnostic goes, nothing is left on the node.
  await node.click();
  await page.getByTestId("body-tab-go").click();
  const editor = page.getByTestId("body-editor").locator(".cm-content");
  await editor.click();
  await page.keyboard.type('return State{"category": "billing"}, nil');
  await page.getByTestId(`node-${id}-diagnostics`).waitFor({ state: "detached" });

  // A wrong output field: a diagnostic on the node and on the field; fixed, it goes.
  const field = page.getByTestId("field-outputKey");
  const outputKey = field.locator("input, select").first();
  await outputKey.fill("no_such_field");
  await page.getByTestId(`node-${id}-diagnostics`).waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="field-outputKey"]')?.getAttribute("data-invalid") === "true");
  await outputKey.fill("category");
  await page.getByTestId(`node-${id}-diagnostics`).waitFor({ state: "detached" });
  await page.waitForFunction(() => document.querySelector('[data-testid="diagnostics-count"]')?.textContent?.match(/\b0\b|no /i));

  // Save: the file holds the node, its body and its edges.
  await page.getByTestId("save").click();
  await page.waitForFunction(() => document.querySelector('[data-testid="save-status"]')?.getAttribute("data-state") === "saved");
  const saved = JSON.parse(readFileSync(doc, "utf8"));
  assert.ok(saved.logical.nodes.some((n) => n.id === id && n.kind === "function" && n.outputKey === "category"));
  assert.equal(saved.bodiesByPlatform.go[id], 'return State{"category": "billing"}, nil');
  assert.ok(saved.logical.edges.some((e) => e.from === "classify" && e.to === id));
  assert.ok(saved.logical.edges.some((e) => e.from === id && e.to === "route"));
  assert.ok(readFileSync(doc, "utf8").endsWith("}\n"));

  // Export for go, then the project's own toolchain.
  const out = join(dir, "triage-go");
  await page.getByTestId("export-platform").selectOption("go");
  await page.getByTestId("export-dir").fill(out);
  await page.getByTestId("export").click();
  await page.waitForFunction(() => /files|exported/i.test(document.querySelector('[data-testid="export-result"]')?.textContent ?? ""));
  assert.ok(existsSync(join(out, "go.mod")), "the export is a Go module");
  execFileSync("go", ["test", "./..."], { cwd: out, stdio: "inherit", timeout: 180_000 });

  if (process.env.SVC_DESIGN_SCREENSHOT) {
    await page.getByTestId(`node-${id}`).click();
    await page.screenshot({ path: process.env.SVC_DESIGN_SCREENSHOT });
  }
  assert.deepEqual(errors, [], "the page threw no errors");
  console.log(`designer: interactive in ${interactiveMs} ms`);
});
