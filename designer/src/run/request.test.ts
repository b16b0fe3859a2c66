import { test } from "node:test";
import assert from "node:assert/strict";
import type { Model } from "../model/types.ts";
import {
  type RunEvent,
  buildText,
  caseSource,
  comparison,
  draftState,
  formFields,
  formProblems,
  formatMs,
  usageText,
  hasCheckpointer,
  highlights,
  initialValues,
  interrupted,
  randomId,
  resumeThread,
  resumeValue,
  stateFromForm,
  summary,
  timeline,
  valuesFromState,
} from "./request.ts";

const model = (logical: unknown): Model => ({ document: { logical } as Model["document"], nodes: [], edges: [] });

const doc = model({
  state: [
    { name: "question", type: "string", required: true },
    { name: "limit", type: "integer", default: 3 },
    { name: "ratio", type: "number" },
    { name: "urgent", type: "boolean", default: false },
    { name: "tags", type: "array" },
    { name: "meta", type: "object" },
  ],
});

test("the form comes from the state schema, with defaults and required fields", () => {
  const fields = formFields(doc);
  assert.deepEqual(
    fields.map((f) => [f.name, f.type, f.required, f.initial]),
    [
      ["question", "string", true, ""],
      ["limit", "integer", false, "3"],
      ["ratio", "number", false, ""],
      ["urgent", "boolean", false, "false"],
      ["tags", "array", false, ""],
      ["meta", "object", false, ""],
    ],
  );
});

test("form values become a typed state, and problems are named", () => {
  const fields = formFields(doc);
  const values = { ...initialValues(fields), question: "hi", tags: '["a"]', meta: '{"k": 1}' };
  assert.deepEqual(stateFromForm(fields, values), { state: { question: "hi", limit: 3, urgent: false, tags: ["a"], meta: { k: 1 } } });
  assert.deepEqual(stateFromForm(fields, { ...values, question: " " }), { error: "question is required" });
  assert.deepEqual(stateFromForm(fields, { ...values, limit: "1.5" }), { error: "limit must be an integer" });
  assert.deepEqual(stateFromForm(fields, { ...values, ratio: "x" }), { error: "ratio must be a number" });
  assert.deepEqual(stateFromForm(fields, { ...values, tags: "{}" }), { error: "tags must be a JSON array" });
  assert.deepEqual(stateFromForm(fields, { ...values, meta: "{" }), { error: "meta is not valid JSON" });
  assert.deepEqual(valuesFromState(fields, { question: "q", limit: 5, tags: ["x"] }), { question: "q", limit: "5", ratio: "", urgent: "", tags: '["x"]', meta: "" });
});

test("checkpointed graphs get one thread id per run; resume values parse as JSON when they can", () => {
  assert.equal(hasCheckpointer(doc), false);
  assert.equal(hasCheckpointer(model({ settings: { checkpointer: { type: "memory" } } })), true);
  assert.equal(hasCheckpointer(model({ settings: { checkpointer: { type: "none" } } })), false);
  assert.match(randomId(), /^[0-9a-f]{32}$/);
  assert.deepEqual(resumeValue('{"ok": true}'), { ok: true });
  assert.equal(resumeValue("approved"), "approved");
});

test("events become a timeline with each node's tokens and patch, and canvas highlights", () => {
  const events: RunEvent[] = [
    { type: "run_started", data: {} },
    { type: "node_started", node: "a", data: { kind: "llm" } },
    { type: "token", node: "a", data: { delta: "Hel" } },
    { type: "token", node: "a", data: { delta: "lo" } },
    { type: "node_finished", node: "a", data: { kind: "llm", patch: { reply: "Hello" } } },
    { type: "node_started", node: "b", data: { kind: "function" } },
  ];
  const rows = timeline(events);
  assert.deepEqual(
    rows.map((r) => [r.node, r.tokens, r.state]),
    [
      [null, "", "info"],
      ["a", "Hello", "done"],
      ["b", "", "running"],
    ],
  );
  assert.deepEqual(rows[1].patch, { reply: "Hello" });
  assert.deepEqual([...highlights(events)], [["a", "visited"], ["b", "running"]]);
  const failed = timeline([...events, { type: "run_failed", data: { code: "internal", message: "boom" } }]);
  assert.equal(failed[2].state, "failed");
  assert.match(failed[3].label, /internal boom/);
});

test("each field's problem is named for the form, and a draft keeps what does not parse", () => {
  const fields = formFields(doc);
  const values = { ...initialValues(fields), limit: "many", tags: '["a"', ratio: "0.5" };
  assert.deepEqual(formProblems(fields, values), { question: "question is required", limit: "limit must be an integer", tags: "tags is not valid JSON" });
  assert.deepEqual(formProblems(fields, { ...initialValues(fields), question: "q" }), {});
  // The raw JSON view of a form with problems: typed where it parses.
  assert.deepEqual(draftState(fields, values), { limit: "many", ratio: 0.5, urgent: false, tags: '["a"' });
  // The string field keeps its spaces; an empty optional field is left out.
  assert.deepEqual(stateFromForm(fields, { question: "  hi " }), { state: { question: "  hi " } });
});

test("answers compare as the same only when every target ran", () => {
  const ran = { phase: "run", status: 200, body: { result: { answer: "x" } } };
  assert.equal(comparison({ go: ran, "python-svc": ran }, [], ["go", "python-svc"]), "same");
  assert.equal(comparison({ go: ran, "python-svc": ran }, [{ field: "/result/answer" }], ["go", "python-svc"]), "differ");
  const failed = { phase: "build", error: { code: "build_failed", message: "no" } };
  assert.equal(comparison({ go: ran, "python-svc": failed }, [], ["go", "python-svc"]), "incomplete");
  assert.equal(comparison({ go: ran }, [], ["go", "java-svc"]), "incomplete");
});

test("a pause names its targets and the thread a resume goes to", () => {
  const paused = { phase: "run", body: { interrupt: { question: "ok?" }, threadId: "t1" } };
  const done = { phase: "run", body: { result: {} } };
  assert.deepEqual(interrupted({ go: paused, "python-svc": done }), ["go"]);
  assert.equal(resumeThread("sent", { go: paused }), "sent");
  assert.equal(resumeThread(null, { go: paused }), "t1");
  assert.equal(resumeThread(null, { go: done }), null);
});

test("times, builds and the history line read as the panel shows them", () => {
  assert.equal(formatMs(12.54), "12.5 ms");
  assert.equal(formatMs(1834), "1.8 s");
  assert.equal(buildText({ reused: true, ms: 0 }), "cached build");
  assert.equal(buildText({ reused: false, ms: 1834 }), "built in 1.8 s");
  assert.equal(summary({ go: { phase: "run", status: 200 }, "java-svc": { phase: "build", error: { code: "build_failed" } } }), "go 200, java-svc build_failed");
});

test("a case is saved from the first target that answered", () => {
  const runs = {
    go: { phase: "build", error: { code: "build_failed" } },
    "python-svc": { phase: "run", status: 200, body: { result: { a: 1 } }, events: [{ type: "node_started" }] },
    "java-svc": { phase: "run", status: 200, body: { result: { a: 2 } } },
  };
  assert.deepEqual(caseSource(runs, ["go", "python-svc", "java-svc"]), {
    platform: "python-svc",
    status: 200,
    body: { result: { a: 1 } },
    events: [{ type: "node_started" }],
  });
  assert.deepEqual(caseSource(runs, ["java-svc", "python-svc"])?.platform, "java-svc");
  assert.equal(caseSource(runs, ["go"]), null);
});

test("a run's usage reads as tokens, calls and attempts; a run without a model has none", () => {
  const usage = { inputTokens: 10, outputTokens: 16, modelCalls: 2, attempts: 3 };
  assert.equal(usageText({ result: {}, usage }), "10 in, 16 out tokens · 2 calls · 3 attempts");
  assert.equal(usageText({ error: { code: "upstream_error" }, usage: { ...usage, modelCalls: 1, attempts: 1 } }), "10 in, 16 out tokens · 1 call · 1 attempt");
  assert.equal(usageText({ result: {} }), null);
  assert.equal(usageText("not an answer"), null);
});
