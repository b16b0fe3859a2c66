import { test } from "node:test";
import assert from "node:assert/strict";
import {
  addNode,
  connect,
  connectError,
  defaultNode,
  graphEdges,
  moveNodes,
  removeGraphEdge,
  removeNode,
  renameListItem,
  renameNode,
  setDocBody,
  setDocValue,
  setNodeBody,
  setNodeField,
  setTarget,
  uniqueNodeId,
  withKey,
} from "./ops.ts";
import { fixtureText, flatFixture, flatOf, savedText } from "./fixtures.test-helper.ts";
import { normalizeModel, targetOf, type Model } from "./types.ts";

const ok = (r: { model: Model } | { error: string }): Model => {
  if ("error" in r) throw new Error(r.error);
  return r.model;
};

test("new node ids are unique per kind", () => {
  const m = flatFixture("support_triage");
  assert.equal(uniqueNodeId(m, "function"), "function_1");
  const a = addNode(m, "function", { x: 10.4, y: 20.6 });
  assert.equal(a.id, "function_1");
  assert.deepEqual(a.model.nodes.at(-1)!.position, { x: 10, y: 21 });
  assert.equal(addNode(a.model, "function", null).id, "function_2");
  // A second start is start_1; the first is plain `start` in an empty graph.
  assert.equal(uniqueNodeId(m, "start"), "start_1");
  assert.equal(uniqueNodeId({ ...m, nodes: [] }, "start"), "start");
});

test("default fields per kind", () => {
  const m = flatFixture("support_triage");
  assert.deepEqual(defaultNode(m, "function", "f"), { id: "f", kind: "function", outputKey: "question" });
  assert.deepEqual(defaultNode(m, "response_template", "r"), {
    id: "r",
    kind: "response_template",
    template: "{{question}}",
    outputKey: "question",
  });
  assert.deepEqual(defaultNode(m, "llm", "l").prompt, { user: "{{question}}" });
  assert.deepEqual(defaultNode(m, "router", "x").branches, [{ to: "end" }]);
  assert.deepEqual(defaultNode(m, "connector", "c"), { id: "c", kind: "connector", config: {} });
  assert.deepEqual(defaultNode(m, "start", "s"), { id: "s", kind: "start" });
  assert.deepEqual(Object.keys(defaultNode(m, "tool", "t")), ["id", "kind", "toolId", "input", "outputKey"]);
});

test("rename follows edges, router branches and the document's slots", () => {
  const m = flatFixture("support_triage");
  const r = ok(renameNode(m, "billing", "invoices"));
  assert.ok(r.nodes.some((n) => n.node.id === "invoices"));
  assert.deepEqual(r.edges[2], { from: "invoices", to: "end" });
  const route = r.nodes.find((n) => n.node.id === "route")!.node;
  assert.equal((route.branches as { to: string }[])[0].to, "invoices");
  // Body slots keep their place under the new name.
  const r2 = ok(renameNode(m, "classify", "triage"));
  assert.deepEqual(Object.keys((r2.document.bodiesByPlatform as Record<string, object>)["go"]), ["triage"]);
  assert.deepEqual(Object.keys((r2.document.presentation as { nodes: object }).nodes), ["triage"]);
  const triage = r2.nodes.find((n) => n.node.id === "triage")!;
  assert.equal(String(triage.bodies.go).startsWith("q :="), true);
  assert.deepEqual(triage.position, { x: 120, y: 40 });
  assert.deepEqual(r2.edges[0], { from: "start", to: "triage" });
});

test("rename refuses bad and taken ids", () => {
  const m = flatFixture("support_triage");
  assert.ok("error" in renameNode(m, "billing", "general"));
  assert.ok("error" in renameNode(m, "billing", "1abc"));
  assert.ok("error" in renameNode(m, "billing", "has-dash"));
  assert.equal(ok(renameNode(m, "billing", "billing")), m);
});

test("connect from a plain node replaces its one outgoing edge in place", () => {
  const m = flatFixture("support_triage");
  const r = ok(connect(m, "classify", "billing"));
  assert.deepEqual(r.edges[1], { from: "classify", to: "billing" });
  assert.equal(r.edges.filter((e) => e.from === "classify").length, 1);
  assert.equal(r.edges.length, m.edges.length);
  const added = addNode(m, "function", null);
  const r2 = ok(connect(added.model, added.id, "end"));
  assert.deepEqual(r2.edges.at(-1), { from: added.id, to: "end" });
});

test("connect from a router adds a branch before the default", () => {
  const m = flatFixture("support_triage");
  const r = ok(connect(m, "route", "end"));
  const branches = r.nodes.find((n) => n.node.id === "route")!.node.branches as any[];
  assert.equal(branches.length, 3);
  assert.equal(branches[1].to, "end");
  assert.deepEqual(branches[1].when, { field: "question", op: "eq", value: "" });
  assert.deepEqual(branches[2], { to: "general" });
  assert.equal(r.edges, m.edges);
  // A router without branches gets its default branch.
  const bare = setNodeField(m, "route", "branches", []);
  const r2 = ok(connect(bare, "route", "billing"));
  assert.deepEqual(r2.nodes.find((n) => n.node.id === "route")!.node.branches, [{ to: "billing" }]);
});

test("connect refuses edges out of end, into start and to the node itself", () => {
  const m = flatFixture("support_triage");
  assert.ok(connectError(m, "end", "billing"));
  assert.ok(connectError(m, "classify", "start"));
  assert.ok(connectError(m, "classify", "classify"));
  assert.ok(connectError(m, "classify", "nope"));
  assert.equal(connectError(m, "classify", "end"), null);
});

test("graph edges include router branches, dashed, labelled", () => {
  const m = flatFixture("support_triage");
  const g = graphEdges(m);
  assert.equal(g.filter((e) => e.kind === "edge").length, 4);
  const b = g.filter((e) => e.kind === "branch");
  assert.deepEqual(b.map((e) => [e.to, e.label]), [
    ["billing", 'category eq "billing"'],
    ["general", "default"],
  ]);
  const r = removeGraphEdge(m, b[0].id);
  assert.deepEqual(r.nodes.find((n) => n.node.id === "route")!.node.branches, [{ to: "general" }]);
  const r2 = removeGraphEdge(m, g[0].id);
  assert.equal(r2.edges.length, 3);
});

test("delete removes the node, its edges and the branches that lead to it", () => {
  const m = flatFixture("support_triage");
  const r = removeNode(m, "billing");
  assert.ok(!r.nodes.some((n) => n.node.id === "billing"));
  assert.ok(!r.edges.some((e) => e.from === "billing" || e.to === "billing"));
  assert.deepEqual(r.nodes.find((n) => n.node.id === "route")!.node.branches, [{ to: "general" }]);
});

test("moves write integer positions; an unchanged move is no change", () => {
  const m = flatFixture("support_triage");
  const r = moveNodes(m, { billing: { x: 10.7, y: -3.2 } });
  assert.deepEqual(r.nodes.find((n) => n.node.id === "billing")!.position, { x: 11, y: -3 });
  assert.equal(moveNodes(r, { billing: { x: 11, y: -3 } }), r);
});

test("node fields keep their order; bodies per platform are independent", () => {
  const m = flatFixture("support_triage");
  const r = setNodeField(m, "billing", "template", "x");
  assert.deepEqual(Object.keys(r.nodes[3].node), ["id", "kind", "template", "outputKey"]);
  assert.deepEqual(Object.keys(setNodeField(m, "billing", "label", "L").nodes[3].node).at(-1), "label");
  assert.equal(setNodeField(m, "billing", "template", undefined).nodes[3].node.template, undefined);
  const b = setNodeBody(m, "classify", "go", "return nil, nil");
  const c = b.nodes.find((n) => n.node.id === "classify")!;
  assert.equal(c.bodies.go, "return nil, nil");
  assert.equal(c.bodies["python-svc"], m.nodes[1].bodies["python-svc"]);
  const d = setNodeBody(b, "classify", "java-svc", "");
  assert.equal(d.nodes[1].bodies["java-svc"], undefined);
  assert.equal(d.nodes[1].bodies.go, "return nil, nil");
});

test("target and new document keys are inserted in the spec's order", () => {
  const m: Model = {
    document: { irVersion: 2, id: "x", security: { auth: "none" }, logical: { state: [], nodes: null } },
    nodes: [],
    edges: [],
  };
  assert.equal(targetOf(m), "go");
  const r = setTarget(m, "java-svc");
  assert.deepEqual(Object.keys(r.document), ["irVersion", "id", "target", "security", "logical"]);
  assert.equal(targetOf(r), "java-svc");
  const s = setDocValue(m, ["logical", "tools"], [{ id: "t", kind: "native" }]);
  assert.deepEqual(Object.keys(s.document.logical as object), ["state", "nodes", "tools"]);
  const t = setDocValue(s, ["logical", "settings", "server", "port"], 9000);
  assert.deepEqual((t.document.logical as any).settings, { server: { port: 9000 } });
  assert.deepEqual(withKey({ a: 1, c: 3 }, "b", 2, ["a", "b", "c"]), { a: 1, b: 2, c: 3 });
});

test("renaming a tool follows tool nodes and its bodies", () => {
  // The flat model of a document whose only node uses a native tool.
  let m: Model = {
    document: {
      irVersion: 2,
      id: "x",
      logical: { state: [{ name: "a", type: "string" }], nodes: null, tools: [{ id: "crm", kind: "native" }] },
      bodiesByPlatform: { go: { crm: "return state, nil" } },
    },
    nodes: [{ node: { id: "t", kind: "tool", toolId: "crm", outputKey: "a" }, position: null, bodies: {}, templates: {} }],
    edges: [],
  };
  m = setDocBody(m, "python-svc", "crm", "return state");
  const r = ok(renameListItem(m, "tools", "crm", "lookup"));
  assert.equal(r.nodes[0].node.toolId, "lookup");
  assert.deepEqual(r.document.bodiesByPlatform, { go: { lookup: "return state, nil" }, "python-svc": { lookup: "return state" } });
  assert.ok("error" in renameListItem(m, "tools", "crm", "bad-id"));
});

test("nested node paths: set, create and remove keep the other keys", async () => {
  const { setNodePath } = await import("./ops.ts");
  let m = flatFixture("support_triage");
  m = setNodePath(m, "billing", ["label"], "Billing");
  m = setNodePath(m, "billing", ["extra", "a"], 1);
  assert.deepEqual(m.nodes[3].node, {
    id: "billing",
    kind: "response_template",
    template: "Billing team will answer: {{question}}",
    outputKey: "answer",
    label: "Billing",
    extra: { a: 1 },
  });
  m = setNodePath(m, "billing", ["extra"], undefined);
  assert.equal("extra" in m.nodes[3].node, false);
  m = setNodePath(m, "route", ["branches", 0, "when", "value"], "refunds");
  assert.equal((m.nodes[2].node.branches as any)[0].when.value, "refunds");
});

test("the parallel and map fixtures open and save unchanged, also after an edit undone by hand", () => {
  for (const name of ["parallel_branches", "map_items"]) {
    const text = fixtureText(name);
    // What the browser gets and sends back: JSON both ways.
    const opened = normalizeModel(JSON.parse(JSON.stringify(flatOf(text))));
    assert.equal(savedText(JSON.parse(JSON.stringify(opened))), text, name);
  }
  const m = flatFixture("parallel_branches");
  const added = ok(connect(m, "fan", "answer"));
  assert.deepEqual(added.nodes[1].node.branches, ["weather_lookup", "news_lookup", "answer"]);
  assert.equal(savedText(removeGraphEdge(added, "p:fan:2")), fixtureText("parallel_branches"));
});

test("a parallel's links: one per branch, in order, and one to its join", () => {
  const g = graphEdges(flatFixture("parallel_branches")).filter((e) => e.kind === "parallel" || e.kind === "join");
  assert.deepEqual(
    g.map((e) => [e.id, e.from, e.to, e.label]),
    [
      ["p:fan:0", "fan", "weather_lookup", "branch 1"],
      ["p:fan:1", "fan", "news_lookup", "branch 2"],
      ["j:fan", "fan", "merge", "join"],
      ["p:news_fan:0", "news_fan", "news_local", "branch 1"],
      ["p:news_fan:1", "news_fan", "news_world", "branch 2"],
      ["j:news_fan", "news_fan", "news_merge", "join"],
    ],
  );
  const m = flatFixture("parallel_branches");
  assert.deepEqual(removeGraphEdge(m, "p:fan:0").nodes[1].node.branches, ["news_lookup"]);
  // The join is required: deleting its link leaves it empty, in its place.
  assert.deepEqual(removeGraphEdge(m, "j:fan").nodes[1].node, { id: "fan", kind: "parallel", branches: ["weather_lookup", "news_lookup"], join: "", maxConcurrency: 2 });
});

test("connecting from a parallel adds a branch, or sets its join", () => {
  const m = flatFixture("parallel_branches");
  const fan = (x: Model) => x.nodes.find((n) => n.node.id === "fan")!.node;
  assert.equal(fan(ok(connect(m, "fan", "news_merge"))).join, "news_merge");
  assert.equal(ok(connect(m, "fan", "merge")), m);
  assert.equal(ok(connect(m, "fan", "answer")).edges, m.edges);
  assert.match(connectError(m, "fan", "news_lookup")!, /already a branch/);
  assert.match(connectError(m, "fan", "end")!, /never reaches `end`/);
});

test("rename and delete follow a parallel's branches and join", () => {
  const m = flatFixture("parallel_branches");
  const fan = (x: Model) => x.nodes.find((n) => n.node.id === "fan")!.node;
  assert.deepEqual(fan(ok(renameNode(m, "news_lookup", "news"))).branches, ["weather_lookup", "news"]);
  assert.equal(fan(ok(renameNode(m, "merge", "meet"))).join, "meet");
  assert.deepEqual(fan(removeNode(m, "weather_lookup")).branches, ["news_lookup"]);
  assert.equal(fan(removeNode(m, "merge")).join, "");
});

test("a new parallel comes with its join; a new map takes array fields", () => {
  const m = flatFixture("map_items");
  const r = addNode(m, "parallel", { x: 100, y: 50 });
  assert.equal(r.id, "parallel_1");
  assert.deepEqual(r.model.nodes.at(-2)!.node, { id: "parallel_1", kind: "parallel", branches: [], join: "join_1" });
  assert.deepEqual(r.model.nodes.at(-1)!.node, { id: "join_1", kind: "join" });
  assert.deepEqual(r.model.nodes.at(-1)!.position, { x: 580, y: 50 });
  assert.deepEqual(defaultNode(m, "map", "x"), {
    id: "x",
    kind: "map",
    over: "questions",
    graph: "",
    itemField: "item",
    input: {},
    output: "",
    outputKey: "answers",
  });
  assert.deepEqual(defaultNode(m, "join", "j"), { id: "j", kind: "join" });
});
