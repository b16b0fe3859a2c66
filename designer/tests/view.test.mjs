// What a user sees, in Debian's chromium driven by playwright-core: the
// graph stays whole on the canvas when the run panel opens and closes (and
// on load), an empty diagnostics pane takes one line, the two platform
// pickers of the toolbar carry visible labels, and a custom supervisor's
// route body is edited for every target.
//
// Run by the test command: SVC_BIN=target/debug/svc node --test designer/tests/
// Without chromium (or SVC_BIN) it skips, unless CI=true.

import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  throw new Error(`the designer's view test cannot run: ${missing}`);
}

/** The height of an empty diagnostics pane, at most: its one line. */
const EMPTY_DIAGNOSTICS_PX = 48;

async function open(t, doc, viewport = { width: 1400, height: 900 }) {
  const { chromium: browserType } = await import("playwright-core");
  const { child, url } = await startDesigner(doc);
  t.after(() => child.kill());
  const browser = await browserType.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.locator(".react-flow__node").first().waitFor();
  return { page, errors };
}

/** The nodes whose box is not inside the canvas's (a pixel of rounding allowed). */
async function nodesOutside(page) {
  return page.evaluate(() => {
    const c = document.querySelector('[data-testid="canvas"]').getBoundingClientRect();
    return [...document.querySelectorAll(".react-flow__node")]
      .map((n) => ({ id: n.getAttribute("data-id"), r: n.getBoundingClientRect() }))
      .filter(({ r }) => r.left < c.left - 1 || r.top < c.top - 1 || r.right > c.right + 1 || r.bottom > c.bottom + 1)
      .map(({ id, r }) => `${id} at ${Math.round(r.left)},${Math.round(r.top)}-${Math.round(r.right)},${Math.round(r.bottom)} (canvas ${Math.round(c.left)},${Math.round(c.top)}-${Math.round(c.right)},${Math.round(c.bottom)})`);
  });
}

/** How wide the graph is on screen, in px. */
function graphWidth(page) {
  return page.evaluate(() => {
    const boxes = [...document.querySelectorAll(".react-flow__node")].map((n) => n.getBoundingClientRect());
    return Math.round(Math.max(...boxes.map((b) => b.right)) - Math.min(...boxes.map((b) => b.left)));
  });
}

/** Waits until every node lies within the canvas (the view's fit may be animated), else fails naming those outside. */
async function assertWhole(page, when) {
  const deadline = Date.now() + 3000;
  let outside = await nodesOutside(page);
  while (outside.length && Date.now() < deadline) {
    await page.waitForTimeout(100);
    outside = await nodesOutside(page);
  }
  assert.deepEqual(outside, [], `${when}: nodes cut off at the canvas's edge`);
}

test("the graph stays whole on the canvas, the diagnostics pane is small when empty, the pickers are labelled", { skip: missing ?? false, timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "svc-design-view-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = join(dir, "triage.graph.json");
  copyFileSync(join(root, "fixtures", "valid", "support_triage.graph.json"), doc);
  const { page, errors } = await open(t, doc);
  await page.waitForFunction(() => document.querySelector('[data-testid="diagnostics-count"]')?.textContent === "no problems");

  // On load, the whole graph is in view.
  await assertWhole(page, "on load");

  // An empty diagnostics pane is one line; the canvas has the rest.
  const pane = await page.getByTestId("diagnostics").boundingBox();
  assert.ok(pane.height <= EMPTY_DIAGNOSTICS_PX, `the empty diagnostics pane is ${pane.height} px high`);

  // The run panel narrows the canvas: the view is fitted again, and again
  // when it closes, to use the room it gets back (also after the user
  // fitted it to the narrow canvas with the controls' button).
  await page.getByTestId("run-toggle").click();
  await page.getByTestId("run-submit").waitFor();
  await assertWhole(page, "with the run panel open");
  const narrow = await page.getByTestId("canvas").boundingBox();
  await page.locator(".react-flow__controls-fitview").click();
  await page.waitForTimeout(300);
  const spanOpen = await graphWidth(page);
  await page.getByTestId("run-toggle").click();
  await page.getByTestId("run-submit").waitFor({ state: "hidden" });
  await assertWhole(page, "with the run panel closed again");
  const wide = await page.getByTestId("canvas").boundingBox();
  assert.ok(wide.width > narrow.width + 200, `the canvas is ${narrow.width} px wide with the panel, ${wide.width} px without`);
  let spanClosed = await graphWidth(page);
  for (let i = 0; i < 30 && spanClosed <= spanOpen * 1.2; i++) {
    await page.waitForTimeout(100);
    spanClosed = await graphWidth(page);
  }
  assert.ok(spanClosed > spanOpen * 1.2, `the graph spans ${spanOpen} px with the panel open and ${spanClosed} px of ${wide.width} once it closed: not fitted again`);

  // Both platform pickers are found by their visible labels.
  for (const [label, testId] of [
    ["Target platform", "target"],
    ["Export platform", "export-platform"],
  ]) {
    const picker = page.getByLabel(label, { exact: true });
    assert.equal(await picker.count(), 1, `one control labelled "${label}"`);
    assert.equal(await picker.getAttribute("data-testid"), testId, `"${label}" names the ${testId} picker`);
    const visible = await picker.evaluate((el) => [...(el.labels ?? [])].filter((l) => l.offsetWidth > 0 && l.offsetHeight > 0).map((l) => l.textContent.trim()));
    assert.ok(
      visible.some((text) => text === label),
      `"${label}" is a visible label of the ${testId} picker (its labels: ${JSON.stringify(visible)})`,
    );
  }
  assert.deepEqual(errors, [], "the page threw no errors");
});

test("a custom supervisor's route body is edited for every target", { skip: missing ?? false, timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "svc-design-route-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const doc = join(dir, "team.graph.json");
  writeFileSync(
    doc,
    JSON.stringify(
      {
        irVersion: "2.2",
        id: "team",
        target: { platform: "go" },
        logical: {
          state: [
            { name: "question", type: "string", required: true },
            { name: "answer", type: "string" },
          ],
          nodes: [
            { id: "start", kind: "start" },
            { id: "run_team", kind: "agent", agent: "team", input: "question", outputKey: "answer" },
            { id: "end", kind: "end" },
          ],
          edges: [
            { from: "start", to: "run_team" },
            { from: "run_team", to: "end" },
          ],
          agents: [
            { id: "writer", kind: "worker", description: "writes", instructions: "You write." },
            { id: "team", kind: "supervisor", members: ["writer"], router: "custom", maxRounds: 3 },
          ],
          settings: { model: { provider: "openai", name: "gpt-4o-mini" } },
        },
        bodiesByPlatform: {
          "python-svc": { team: 'return "finish" if state.get("last_member") == "writer" else "writer"' },
        },
      },
      null,
      2,
    ) + "\n",
  );
  const { page, errors } = await open(t, doc);
  await page.getByTestId("inspector-tab-agents").click();
  // No help text claims a feature for one target only.
  for (const tab of ["agents", "mcpServers", "tools", "settings"]) {
    await page.getByTestId(`inspector-tab-${tab}`).click();
    assert.equal(await page.locator(".inspector").getByText(/python-svc only|for now/).count(), 0, `the ${tab} tab claims a feature for one target`);
  }
  await page.getByTestId("inspector-tab-agents").click();
  await page.getByTestId("agents-1").locator(".list-item-head").click();
  for (const p of ["go", "java-svc", "python-svc"]) {
    await page.getByTestId(`body-tab-${p}`).waitFor({ timeout: 5000 });
  }
  // The go target wants its body: a diagnostic says so until it is written.
  await page.getByTestId("diagnostic-missing-body").waitFor();
  await page.getByTestId("body-tab-go").click();
  await page.getByTestId("body-editor").locator(".cm-content").click();
  await page.keyboard.type('if state.String("last_member") == "writer" { return "finish", nil }; return "writer", nil');
  await page.getByTestId("body-tab-java-svc").click();
  await page.getByTestId("body-editor").locator(".cm-content").click();
  await page.keyboard.type('result = "writer".equals(state.get("last_member")) ? "finish" : "writer";');
  await page.waitForFunction(() => document.querySelector('[data-testid="diagnostics-count"]')?.textContent === "no problems");
  await page.getByTestId("save").click();
  await page.waitForFunction(() => document.querySelector('[data-testid="save-status"]')?.getAttribute("data-state") === "saved");
  const saved = JSON.parse(readFileSync(doc, "utf8"));
  assert.match(saved.bodiesByPlatform.go.team, /return "finish", nil/);
  assert.match(saved.bodiesByPlatform["java-svc"].team, /result = "writer"\.equals/);
  assert.deepEqual(errors, [], "the page threw no errors");
});
