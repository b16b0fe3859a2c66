// The run panel end to end, in Debian's chromium driven by playwright-core:
// run support_triage on go and python-svc and see the same answer, edit the
// Go body so that go answers otherwise and see the difference, run a hitl
// graph on both and resume it from the form, then stop the designers and
// check that no service they started is left.
//
// Run by the test command: SVC_BIN=target/debug/svc node --test designer/tests/
// Without chromium, go or SVC_BIN it skips, unless CI=true.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDesigner } from "./designer.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const svc = process.env.SVC_BIN;
const hasGo = (() => {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const missing = !chromium
  ? "no chromium (apt-get install chromium)"
  : !svc || !existsSync(svc)
    ? "SVC_BIN names no svc binary"
    : !hasGo
      ? "no go"
      : null;
if (missing && process.env.CI === "true") {
  throw new Error(`the run panel's browser test cannot run: ${missing}`);
}

// The Rust tests' cache: compiled components, and the designer's projects
// and python-svc venv, kept between runs.
const cache = join(tmpdir(), "svc-tests-component-cache");
const BUILD = 600_000;

/** Stops a designer as Ctrl+C would and waits for it to exit. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGINT");
  });
}

/** Processes whose working folder is one of the designer's projects. */
function servicesLeft() {
  const projects = join(cache, "runs", "projects");
  const left = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(projects)) left.push(pid);
    } catch {
      /* gone, or not ours to read */
    }
  }
  return left;
}

async function openPanel(page, url, platforms) {
  await page.goto(url);
  await page.getByTestId("diagnostics-count").waitFor();
  await page.getByTestId("run-toggle").click();
  for (const p of ["go", "python-svc", "java-svc"]) {
    const box = page.getByTestId(`run-platform-${p}`);
    if (platforms.includes(p)) await box.check();
    else await box.uncheck();
  }
}

const text = (page, id) => page.getByTestId(id).textContent();

test("run a graph on go and python-svc, compare, resume, and leave nothing behind", { skip: missing ?? false, timeout: 1_200_000 }, async (t) => {
  const { chromium: browserType } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "svc-design-run-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A new name each time: the cache keys are new, so both builds are real.
  const triage = join(dir, "triage.graph.json");
  const doc = JSON.parse(readFileSync(join(root, "fixtures", "valid", "support_triage.graph.json"), "utf8"));
  doc.name = `run test ${process.pid} ${Date.now()}`;
  writeFileSync(triage, JSON.stringify(doc, null, 2) + "\n");
  const hitl = join(dir, "review.graph.json");
  copyFileSync(join(root, "fixtures", "valid", "hitl_node.graph.json"), hitl);
  const first = await startDesigner(triage, { SVC_CACHE_DIR: cache });
  t.after(() => stop(first.child));
  const browser = await browserType.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // The same request on go and python-svc: the same answer.
  await openPanel(page, first.url, ["go", "python-svc"]);
  await page.getByTestId("run-field-question").fill("Where is my invoice?");
  await page.getByTestId("run-submit").click();
  // The phases show while the targets build (the run's progress, live).
  await page.waitForFunction(() => /building|starting|running/.test(document.querySelector('[data-testid="run-phase-python-svc"]')?.textContent ?? ""), null, { timeout: BUILD });
  for (const p of ["go", "python-svc"]) {
    await page.waitForFunction((id) => document.querySelector(`[data-testid="${id}"]`)?.textContent?.includes("200"), `run-status-${p}`, { timeout: BUILD });
    assert.match(await text(page, `run-body-${p}`), /Billing team will answer: Where is my invoice\?/);
  }
  await page.getByTestId("run-same").waitFor();

  // The run saved as a test case beside the document, for svc test.
  await page.getByTestId("run-case-name").fill("an invoice goes to billing");
  await page.getByTestId("run-case-save").click();
  await page.getByTestId("run-case-saved").waitFor({ timeout: 30_000 });
  assert.match(await text(page, "run-case-saved"), /saved as case 1 of .*triage\.tests\.json/);
  const cases = JSON.parse(readFileSync(join(dir, "triage.tests.json"), "utf8"));
  assert.equal(cases.cases[0].request.state.question, "Where is my invoice?");
  assert.equal(cases.cases[0].expect.result.category, "billing");

  // The Go body now answers otherwise: go is rebuilt, the difference shown.
  await page.getByTestId("node-classify").click();
  await page.getByTestId("body-tab-go").click();
  const editor = page.getByTestId("body-editor").locator(".cm-content");
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type('return State{"category": "general"}, nil');
  const edited = Date.now();
  await page.getByTestId("run-submit").click();
  const row = page.locator('[data-testid="run-difference"][data-field="/result/category"]');
  await row.waitFor({ timeout: BUILD });
  console.log(`run panel: a Go body edit to the difference on screen in ${Date.now() - edited} ms`);
  const shown = await row.textContent();
  assert.match(shown, /general/);
  assert.match(shown, /billing/);
  assert.match(await text(page, "run-body-go"), /General answer to: Where is my invoice\?/);

  // A hitl graph: paused on both targets, resumed from the form.
  const second = await startDesigner(hitl, { SVC_CACHE_DIR: cache });
  t.after(() => stop(second.child));
  await openPanel(page, second.url, ["go", "python-svc"]);
  await page.getByTestId("run-field-question").fill("ship it?");
  await page.getByTestId("run-submit").click();
  for (const p of ["go", "python-svc"]) {
    await page.getByTestId(`run-interrupt-${p}`).waitFor({ timeout: BUILD });
    assert.match(await text(page, `run-interrupt-${p}`), /Approve the answer to ship it\?/);
  }
  await page.getByTestId("run-resume-value").fill("approved");
  await page.getByTestId("run-resume-submit").click();
  for (const p of ["go", "python-svc"]) {
    await page.waitForFunction((id) => /"answer":\s*"approved"/.test(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? ""), `run-body-${p}`, { timeout: 120_000 });
  }
  assert.deepEqual(errors, [], "the page threw no errors");

  // Stopped as Ctrl+C would: no service of either designer is left.
  await browser.close();
  await stop(first.child);
  await stop(second.child);
  assert.deepEqual(servicesLeft(), [], "service processes left after the designers stopped");
});
