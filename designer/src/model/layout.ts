// A small layered layout, left to right: a node's layer is its BFS depth
// from `start` (following edges and router branches); nodes that start
// cannot reach go to the layers after. Enough for workflow graphs, and no
// layout library in the bundle.

import { graphEdges, moveNodes } from "./ops.ts";
import type { Model, Position } from "./types.ts";

export const LAYER_GAP = 240;
export const ROW_GAP = 110;

export function computeLayout(model: Model): Record<string, Position> {
  const ids = model.nodes.map((n) => n.node.id);
  const next = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of graphEdges(model)) next.get(e.from)?.push(e.to);

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

  const rows = new Map<number, string[]>();
  for (const id of order) {
    const l = layer.get(id)!;
    if (!rows.has(l)) rows.set(l, []);
    rows.get(l)!.push(id);
  }
  const out: Record<string, Position> = {};
  for (const [l, members] of rows) {
    members.forEach((id, i) => {
      // Centre each layer on y = 0.
      out[id] = { x: l * LAYER_GAP, y: Math.round((i - (members.length - 1) / 2) * ROW_GAP) };
    });
  }
  return out;
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
