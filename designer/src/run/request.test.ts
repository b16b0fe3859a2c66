import { test } from "node:test";
import assert from "node:assert/strict";
import type { Model } from "../model/types.ts";
import { type RunEvent, formFields, hasCheckpointer, highlights, initialValues, newThreadId, resumeValue, stateFromForm, timeline, valuesFromState } from "./request.ts";

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
  assert.match(newThreadId(), /^[0-9a-f]{32}$/);
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
