import { test } from "node:test";
import assert from "node:assert/strict";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { nodeHints } from "./nodeHints.ts";
import { SchemaForm } from "./SchemaForm.tsx";
import { def } from "./schema.ts";
import { flatFixture } from "../model/fixtures.test-helper.ts";
import type { IrNode, Model } from "../model/types.ts";

const node = (m: Model, id: string): IrNode => m.nodes.find((n) => n.node.id === id)!.node;

test("a parallel's branches are picked from the nodes a branch may start at, its join from the join nodes", () => {
  const m = flatFixture("parallel_branches");
  const h = nodeHints(m, node(m, "fan"));
  // Not itself, its join, start, end or a join node.
  assert.deepEqual(h.branches.options, [
    "weather_lookup",
    "weather_note",
    "news_lookup",
    "news_quiet",
    "news_fan",
    "news_local",
    "news_world",
    "news_summary",
    "answer",
  ]);
  assert.deepEqual(h.join.options, ["news_merge", "merge"]);
  assert.match(h.branches.help!, /reachable from its first node before the join/);
  assert.ok(!/not built|only\)/.test(JSON.stringify(h)));
});

test("a map's over and outputKey are picked from the array fields", () => {
  const m = flatFixture("map_items");
  const h = nodeHints(m, node(m, "each"));
  assert.deepEqual(h.over.options, ["questions", "answers"]);
  assert.deepEqual(h.outputKey.options, ["questions", "answers"]);
  assert.equal(h.itemField.options, undefined);
  assert.deepEqual(nodeHints(m, node(m, "start")), {});
});

test("the node form edits picks as selects, an ordered list of branches, and input as field pairs", () => {
  const m = flatFixture("parallel_branches");
  const fan = { ...node(m, "fan"), branches: ["weather_lookup", "gone"] };
  const html = renderToStaticMarkup(
    createElement(SchemaForm, { schema: def("Node"), value: fan, onChange: () => {}, hide: ["id"], lockVariant: true, formKey: "t", hints: nodeHints(m, fan) }),
  );
  const branches = html.slice(html.indexOf('data-testid="field-branches"'), html.indexOf('data-testid="field-join"'));
  assert.equal((branches.match(/<select/g) ?? []).length, 3, "one per branch and one to add");
  assert.match(branches, /gone \(not found\)/);
  assert.match(branches, /title="move up" disabled/);
  assert.match(html, /data-testid="field-join"[^]*?<select[^]*?<option value="merge" selected="">merge</);
  const map = flatFixture("map_items");
  const each = node(map, "each");
  const mapHtml = renderToStaticMarkup(
    createElement(SchemaForm, { schema: def("Node"), value: each, onChange: () => {}, hide: ["id"], lockVariant: true, formKey: "t", hints: nodeHints(map, each) }),
  );
  assert.match(mapHtml, /data-testid="field-over"[^]*?<option value="questions" selected="">/);
  assert.match(mapHtml, /data-testid="field-input"[^]*?placeholder="child field"[^]*?placeholder="parent field"/);
  assert.ok(!mapHtml.includes("Secrets"), "a field map holds no secrets");
});
