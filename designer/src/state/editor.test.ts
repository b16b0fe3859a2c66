import { test } from "node:test";
import assert from "node:assert/strict";
import { initialState, reducer } from "./editor.ts";
import { flatFixture } from "../model/fixtures.test-helper.ts";
import { removeNode, setNodeField, setTarget } from "../model/ops.ts";
import { autoLayout } from "../model/layout.ts";
import { targetOf } from "../model/types.ts";
import { defaultVersionRange } from "../bodies/TemplateEditor.tsx";

test("each action is one undo step; typing coalesces by key", () => {
  let s = initialState(flatFixture("support_triage"));
  s = reducer(s, { type: "apply", f: (m) => setTarget(m, "java-svc") });
  for (const [i, t] of ["B", "Bi", "Bil"].entries()) {
    s = reducer(s, { type: "apply", f: (m) => setNodeField(m, "billing", "label", t), key: "node:billing:label@1", now: 1000 + i * 100 });
  }
  s = reducer(s, { type: "apply", f: autoLayout });
  assert.equal(s.history.past.length, 3);
  s = reducer(s, { type: "undo" });
  assert.ok(s.history.present.nodes.some((n) => n.position === null));
  s = reducer(s, { type: "undo" });
  assert.equal(s.history.present.nodes[3].node.label, undefined);
  s = reducer(s, { type: "undo" });
  assert.equal(targetOf(s.history.present), "go");
  s = reducer(s, { type: "redo" });
  assert.equal(targetOf(s.history.present), "java-svc");
});

test("a selection whose node is gone is dropped; selecting seals typing", () => {
  let s = initialState(flatFixture("support_triage"));
  s = reducer(s, { type: "select", selection: { kind: "node", id: "billing" } });
  assert.equal(s.tab, "node");
  s = reducer(s, { type: "apply", f: (m) => removeNode(m, "billing") });
  assert.equal(s.selection, null);
  s = reducer(s, { type: "apply", f: (m) => setNodeField(m, "general", "label", "a"), key: "k", now: 0 });
  s = reducer(s, { type: "select", selection: { kind: "node", id: "general" } });
  s = reducer(s, { type: "apply", f: (m) => setNodeField(m, "general", "label", "ab"), key: "k", now: 10 });
  assert.equal(s.history.past.length, 3);
});

test("a connector's version range defaults to ^major.minor", () => {
  assert.equal(defaultVersionRange("1.2.3"), "^1.2");
  assert.equal(defaultVersionRange("0.1.0"), "^0.1");
  assert.equal(defaultVersionRange(""), "^0.1");
});
