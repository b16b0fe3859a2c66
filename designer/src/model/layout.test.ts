import { test } from "node:test";
import assert from "node:assert/strict";
import { autoLayout, computeLayout, displayPositions, LAYER_GAP } from "./layout.ts";
import { flatFixture } from "./fixtures.test-helper.ts";
import { addNode } from "./ops.ts";

test("layers follow BFS depth from start, branches included, end last", () => {
  const m = flatFixture("support_triage");
  const p = computeLayout(m);
  assert.equal(p.start.x, 0);
  assert.equal(p.classify.x, LAYER_GAP);
  assert.equal(p.route.x, 2 * LAYER_GAP);
  assert.equal(p.billing.x, 3 * LAYER_GAP);
  assert.equal(p.general.x, 3 * LAYER_GAP);
  assert.equal(p.end.x, 4 * LAYER_GAP);
  assert.notEqual(p.billing.y, p.general.y);
});

test("unreachable nodes are laid out after the reachable ones", () => {
  const m = flatFixture("support_triage");
  const { model, id } = addNode(m, "function", null);
  const p = computeLayout(model);
  assert.ok(p[id].x > p.end.x);
});

test("display keeps document positions and lays out the rest", () => {
  const m = flatFixture("support_triage");
  const d = displayPositions(m);
  assert.deepEqual(d.classify, { x: 120, y: 40 });
  // The others follow classify's offset from its computed place (240, 0).
  assert.deepEqual(d.start, { x: -120, y: 40 });
  assert.equal(d.route.x, 2 * LAYER_GAP - 120);
});

test("auto-layout writes an integer position for every node", () => {
  const m = flatFixture("support_triage");
  const r = autoLayout(m);
  for (const n of r.nodes) {
    assert.ok(n.position && Number.isInteger(n.position.x) && Number.isInteger(n.position.y), n.node.id);
  }
  assert.deepEqual(r.nodes[1].position, { x: LAYER_GAP, y: 0 });
  // Twice is the same layout.
  assert.deepEqual(autoLayout(r).nodes.map((n) => n.position), r.nodes.map((n) => n.position));
});

test("a join is laid out after every node of its parallel's branches", () => {
  const p = computeLayout(flatFixture("parallel_branches"));
  for (const id of ["weather_note", "news_quiet", "news_summary"]) assert.ok(p.merge.x > p[id].x, id);
  assert.ok(p.news_merge.x > p.news_local.x && p.news_merge.x > p.news_world.x);
  assert.ok(p.answer.x > p.merge.x && p.end.x > p.answer.x);
  // The branches' first nodes sit one layer after the parallel, one above the other.
  assert.equal(p.weather_lookup.x, p.fan.x + LAYER_GAP);
  assert.equal(p.news_lookup.x, p.weather_lookup.x);
  assert.notEqual(p.news_lookup.y, p.weather_lookup.y);
});
