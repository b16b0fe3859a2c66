// A small layered layout, left to right: a node's layer is its BFS depth
// from `start` (following edges, router branches and parallel branches); a
// join comes after every node of its parallel's branches; nodes that start
// cannot reach go to the layers after. Rows go top down, each branch of a
// parallel in rows of its own. Enough for workflow graphs, and no layout
// library in the bundle.

import { graphEdges, moveNodes } from "./ops.ts";
import { type ParallelRegion, parallelRegions, successors } from "./parallel.ts";
import type { Model, Position } from "./types.ts";

export const LAYER_GAP = 240;
export const ROW_GAP = 110;

export function computeLayout(model: Model): Record<string, Position> {
  const ids = model.nodes.map((n) => n.node.id);
  const next = new Map<string, string[]>(ids.map((id) => [id, []]));
  // A parallel's link to its join is not a step: the join is reached through the branches.
  for (const e of graphEdges(model)) if (e.kind !== "join") next.get(e.from)?.push(e.to);

  const layer = new Map<string, number>();
  const order: string[] = [];
  const bfs = (roots: string[], depth0: number) => {
    const queue = roots.filter((r) => !layer.has(r));
    for (const r of queue) layer.set(r, depth0);
    while (queue.length) {
      const id = queue.shift()!;
      order.push(id);
      for (const to of next.get(id) ?? []) {
        if (!layer.has(to) && next.has(to)) {
          layer.set(to, layer.get(id)! + 1);
          queue.push(to);
        }
      }
    }
  };
  const starts = model.nodes.filter((n) => n.node.kind === "start").map((n) => n.node.id);
  bfs(starts.length ? starts : ids.slice(0, 1), 0);
  const regions = parallelRegions(model);
  joinsAfterBranches(model, regions, layer);
  // Reachable `end` nodes last, so the graph reads from start to end.
  const maxLayer = Math.max(0, ...layer.values());
  for (const n of model.nodes) {
    if (n.node.kind === "end" && layer.has(n.node.id)) layer.set(n.node.id, maxLayer);
  }
  // Unreachable nodes: each a new BFS root after the deepest layer so far.
  for (const id of ids) {
    if (layer.has(id)) continue;
    const deepest = Math.max(-1, ...layer.values());
    bfs([id], deepest + 1);
  }

  // Rows: each branch of a parallel is a block of rows of its own, below
  // its parallel and under the branches before it, so each branch's frame
  // holds its own nodes only.
  const rank = new Map(order.map((id, i) => [id, i]));
  const rows = placeRows(ids, regions, layer, rank);
  const out: Record<string, Position> = {};
  for (const id of ids) out[id] = { x: layer.get(id)! * LAYER_GAP, y: Math.round(rows.get(id)! * ROW_GAP) };
  return out;
}

/** Room between two branches' blocks, in rows. */
const BRANCH_GAP_ROWS = 0.6;

/**
 * A row per node. A container (the graph, or a branch) takes its nodes
 * and its parallels' branches (as blocks) in BFS order: a node goes to the
 * first free row of its layer, a block to the first row free in every layer
 * it spans, and takes as many rows as it needs there.
 */
function placeRows(ids: string[], regions: ParallelRegion[], layer: Map<string, number>, rank: Map<string, number>): Map<string, number> {
  // The innermost branch of each node: inner regions hold fewer nodes.
  const size = (r: ParallelRegion) => r.branches.reduce((n, b) => n + b.nodes.length, 0);
  const inner = new Map<string, string>();
  const blocks = new Map<string, { parallel: string; nodes: string[] }>();
  for (const r of [...regions].sort((a, b) => size(b) - size(a))) {
    for (const b of r.branches) {
      if (!b.nodes.length) continue;
      const key = `${r.parallel}:${b.index}`;
      blocks.set(key, { parallel: r.parallel, nodes: b.nodes });
      for (const id of b.nodes) inner.set(id, key);
    }
  }
  const rowOf = new Map<string, number>();
  const byRank = (a: string, b: string) => rank.get(a)! - rank.get(b)!;
  const place = (members: string[], top: number, done: Set<string>): number => {
    const free = new Map<number, number>();
    const freeAt = (l: number) => free.get(l) ?? top;
    let bottom = top;
    // A block comes right after its parallel, branches in their order.
    const items: ({ node: string } | { block: string })[] = [];
    for (const id of [...members].sort(byRank)) {
      items.push({ node: id });
      for (const [key, b] of blocks) if (b.parallel === id && !done.has(key)) items.push({ block: key });
    }
    for (const item of items) {
      if ("node" in item) {
        const l = layer.get(item.node)!;
        rowOf.set(item.node, freeAt(l));
        free.set(l, freeAt(l) + 1);
        bottom = Math.max(bottom, freeAt(l));
        continue;
      }
      done.add(item.block);
      const nodes = blocks.get(item.block)!.nodes;
      const span = nodes.map((id) => layer.get(id)!);
      const start = Math.max(...span.map(freeAt));
      const end = place(nodes.filter((id) => inner.get(id) === item.block), start, done) + BRANCH_GAP_ROWS;
      for (let l = Math.min(...span); l <= Math.max(...span); l++) free.set(l, end);
      bottom = Math.max(bottom, end);
    }
    return bottom;
  };
  const done = new Set<string>();
  const bottom = place(ids.filter((id) => !inner.has(id)), 0, done);
  // A branch whose parallel is in no container (it sits in its own branch: invalid) goes below.
  place(ids.filter((id) => !rowOf.has(id)), bottom, done);
  return rowOf;
}

/**
 * Moves each join (and what follows it) right of its parallel's branches,
 * where BFS put it after the shortest branch. Inner parallels first, so an
 * outer branch's extent includes its inner join.
 */
function joinsAfterBranches(model: Model, regions: ParallelRegion[], layer: Map<string, number>) {
  const next = successors(model);
  const size = (r: ParallelRegion) => r.branches.reduce((n, b) => n + b.nodes.length, 0);
  for (const r of [...regions].sort((a, b) => size(a) - size(b))) {
    const at = layer.get(r.join);
    if (at === undefined) continue;
    const inside = new Set([r.parallel, ...r.branches.flatMap((b) => b.nodes)]);
    const need = 1 + Math.max(-1, ...[...inside].map((id) => layer.get(id) ?? -1));
    if (need <= at) continue;
    // The join and the nodes after it, but not those left of it (a loop back).
    const after = new Set([r.join]);
    const queue = [r.join];
    while (queue.length) {
      for (const to of next.get(queue.shift()!) ?? []) {
        if (after.has(to) || inside.has(to) || (layer.get(to) ?? -1) < at) continue;
        after.add(to);
        queue.push(to);
      }
    }
    for (const id of after) layer.set(id, layer.get(id)! + need - at);
  }
}

/** Positions to draw: the document's where it has them, computed ones elsewhere. */
export function displayPositions(model: Model): Record<string, Position> {
  const missing = model.nodes.some((n) => !n.position);
  const computed = missing ? computeLayout(model) : {};
  // Shift the computed layout by how far the placed nodes sit from their
  // computed places (on average), so the two kinds of node do not pile up.
  let dx = 0;
  let dy = 0;
  const placed = model.nodes.filter((n) => n.position && computed[n.node.id]);
  if (placed.length) {
    for (const n of placed) {
      dx += n.position!.x - computed[n.node.id].x;
      dy += n.position!.y - computed[n.node.id].y;
    }
    dx = Math.round(dx / placed.length);
    dy = Math.round(dy / placed.length);
  }
  const out: Record<string, Position> = {};
  for (const n of model.nodes) {
    const c = computed[n.node.id];
    out[n.node.id] = n.position ?? (c ? { x: c.x + dx, y: c.y + dy } : { x: 0, y: 0 });
  }
  return out;
}

/** Auto-layout: writes a position for every node (one undoable step). */
export function autoLayout(model: Model): Model {
  const pos = computeLayout(model);
  // Every node gets a position, even one that already sits there.
  const withAll = { ...model, nodes: model.nodes.map((n) => (n.position ? n : { ...n, position: { x: NaN, y: NaN } })) };
  return moveNodes(withAll, pos);
}
