import { test } from "node:test";
import assert from "node:assert/strict";
import { diagnosticsAt, diagnosticsByNode, formDiagnostics, locate, parsePointer } from "./pointer.ts";
import { flatFixture } from "./fixtures.test-helper.ts";
import type { Diagnostic } from "./types.ts";

const diag = (pointer: string, node?: string): Diagnostic => ({ severity: "error", code: "x", message: "m", pointer, node });

test("pointer segments are unescaped", () => {
  assert.deepEqual(parsePointer("/a~1b/c~0d"), ["a/b", "c~d"]);
  assert.deepEqual(parsePointer(""), []);
});

test("a node field pointer names the node by index and the field", () => {
  const m = flatFixture("support_triage");
  assert.deepEqual(locate(diag("/logical/nodes/3/outputKey"), m), { section: "node", nodeId: "billing", field: "outputKey", rest: [] });
  const l = locate(diag("/logical/nodes/2/branches/0/when/op"), m);
  assert.equal(l.nodeId, "route");
  assert.equal(l.field, "branches");
  assert.deepEqual(l.rest, ["0", "when", "op"]);
  assert.equal(locate(diag("/logical/nodes/1"), m).field, undefined);
});

test("body and template pointers open the platform's tab", () => {
  const m = flatFixture("support_triage");
  assert.deepEqual(locate(diag("/bodiesByPlatform/go/classify"), m), { section: "node", nodeId: "classify", bodyPlatform: "go" });
  const t = locate(diag("/codegen/templates/java-svc/classify/version"), m);
  assert.equal(t.templatePlatform, "java-svc");
  assert.equal(t.field, "version");
});

test("settings, security, edges and list pointers", () => {
  const m = flatFixture("support_triage");
  assert.equal(locate(diag("/logical/settings/checkpointer/type"), m).field, "checkpointer");
  assert.deepEqual(locate(diag("/security/auth"), m), { section: "settings", field: "security", rest: ["auth"], nodeId: undefined });
  assert.equal(locate(diag("/logical/edges/1"), m).nodeId, "classify");
  const t = locate(diag("/logical/tools/0/endpoint"), m);
  assert.equal(t.section, "tools");
  assert.equal(t.index, 0);
  assert.equal(t.field, "endpoint");
  // No pointer: the diagnostic's node.
  assert.equal(locate({ node: "general" }, m).nodeId, "general");
});

test("diagnostics group by node and mark the form field they point at", () => {
  const m = flatFixture("support_triage");
  const ds = [diag("/logical/nodes/3/outputKey", "billing"), diag("/logical/nodes/2/branches/0/when"), diag("/bodiesByPlatform/go/classify")];
  const by = diagnosticsByNode(ds, m);
  assert.equal(by.get("billing")!.length, 1);
  assert.equal(by.get("route")!.length, 1);
  assert.equal(by.get("classify")!.length, 1);
  const f = formDiagnostics(ds, m, { section: "node", nodeId: "billing" });
  assert.equal(diagnosticsAt(f, ["outputKey"]).length, 1);
  assert.equal(diagnosticsAt(f, ["template"]).length, 0);
  const r = formDiagnostics(ds, m, { section: "node", nodeId: "route" });
  assert.equal(diagnosticsAt(r, ["branches"]).length, 1);
  assert.equal(diagnosticsAt(r, ["branches"], true).length, 0);
  // A body diagnostic marks the body tab, not a form field.
  assert.equal(formDiagnostics(ds, m, { section: "node", nodeId: "classify" }).length, 0);
});
