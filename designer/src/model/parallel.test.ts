import { test } from "node:test";
import assert from "node:assert/strict";
import { nestingDepths, parallelRegions, successors } from "./parallel.ts";
import { flatFixture } from "./fixtures.test-helper.ts";
import type { Model } from "./types.ts";

/** A flat model of `nodes` (`id:kind`, or a node object) and `edges` (`a>b`). */
function graph(nodes: (string | Record<string, unknown>)[], edges: string[]): Model {
  return {
    document: {},
    nodes: nodes.map((n) => {
      const node = typeof n === "string" ? { id: n.split(":")[0], kind: n.split(":")[1] ?? "function" } : n;
      return { node: node as Model["nodes"][number]["node"], position: null, bodies: {}, templates: {} };
    }),
    edges: edges.map((e) => ({ from: e.split(">")[0], to: e.split(">")[1] })),
  };
}

test("each branch is what its first node reaches before the join, through routers and nested parallels", () => {
  const regions = parallelRegions(flatFixture("parallel_branches"));
  assert.deepEqual(
    regions.map((r) => [r.parallel, r.join, r.branches.map((b) => [b.first, b.nodes])]),
    [
      [
        "fan",
        "merge",
        [
          ["weather_lookup", ["weather_lookup", "weather_note"]],
          ["news_lookup", ["news_lookup", "news_quiet", "news_fan", "news_local", "news_world", "news_merge", "news_summary"]],
        ],
      ],
      ["news_fan", "news_merge", [["news_local", ["news_local"]], ["news_world", ["news_world"]]]],
    ],
  );
  // The news branch holds a parallel: its frame goes around the inner ones.
  assert.deepEqual([...nestingDepths(regions)].sort(), [["fan:0", 0], ["fan:1", 1], ["news_fan:0", 0], ["news_fan:1", 0]]);
});

test("a region never takes in its parallel, its join or what follows the join", () => {
  const m = graph(
    ["s:start", { id: "p", kind: "parallel", branches: ["a", "b", "nope"], join: "j" }, "a", "a2", "b", "j:join", "after", "e:end"],
    ["s>p", "a>a2", "a2>a", "a2>j", "b>p", "j>after", "after>e"],
  );
  const [r] = parallelRegions(m);
  // A loop inside a branch is fine; a path back into the parallel stops there;
  // a first node that does not exist has no region.
  assert.deepEqual(r.branches.map((b) => b.nodes), [["a", "a2"], ["b"], []]);
  assert.deepEqual(successors(m).get("p"), ["a", "b", "j"]);
});

test("a parallel without a join or branches has empty regions", () => {
  const m = graph([{ id: "p", kind: "parallel", branches: [], join: "" }, "x"], []);
  assert.deepEqual(parallelRegions(m), [{ parallel: "p", join: "", branches: [] }]);
  const n = graph([{ id: "p", kind: "parallel", branches: ["x"] }, "x", "y"], ["x>y"]);
  assert.deepEqual(parallelRegions(n)[0].branches[0].nodes, ["x", "y"]);
});
