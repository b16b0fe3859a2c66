// Parallel regions (docs/ir-reference.md, "Parallel branches and map"): a
// branch is every node reachable from its first node before its parallel's
// join. The canvas frames each branch and the layout puts a join after its
// branches; both read the regions from here.

import { type Model, isObject } from "./types.ts";

export interface BranchRegion {
  /** The branch's first node (`branches[index]`). */
  first: string;
  index: number;
  /** The branch's node ids, first node first, in the order they are reached. */
  nodes: string[];
}

export interface ParallelRegion {
  parallel: string;
  /** `""` when the parallel names none. */
  join: string;
  branches: BranchRegion[];
}

/** A parallel's `branches` (the strings of it) and `join`. */
export function parallelRefs(node: { [key: string]: unknown }): { branches: string[]; join: string } {
  const branches = Array.isArray(node.branches) ? node.branches.filter((b): b is string => typeof b === "string") : [];
  return { branches, join: typeof node.join === "string" ? node.join : "" };
}

/**
 * Where each node leads: its edges, a router's branches, and a parallel's
 * branches and join (a nested parallel is crossed through both).
 */
export function successors(model: Model): Map<string, string[]> {
  const next = new Map<string, string[]>(model.nodes.map((n) => [n.node.id, []]));
  const add = (from: string, to: string) => {
    const list = next.get(from);
    if (list && next.has(to) && !list.includes(to)) list.push(to);
  };
  for (const e of model.edges) add(e.from, e.to);
  for (const { node } of model.nodes) {
    if (node.kind === "router" && Array.isArray(node.branches)) {
      for (const b of node.branches) if (isObject(b) && typeof b.to === "string") add(node.id, b.to);
    } else if (node.kind === "parallel") {
      const { branches, join } = parallelRefs(node);
      for (const b of branches) add(node.id, b);
      add(node.id, join);
    }
  }
  return next;
}

/** Every parallel node's branches, each with the nodes of its region. */
export function parallelRegions(model: Model): ParallelRegion[] {
  const next = successors(model);
  const out: ParallelRegion[] = [];
  for (const { node } of model.nodes) {
    if (node.kind !== "parallel") continue;
    const { branches, join } = parallelRefs(node);
    out.push({
      parallel: node.id,
      join,
      branches: branches.map((first, index) => {
        // A branch ends at the join; a path back into the parallel is not
        // part of it (the validator reports it), so it never swallows the rest.
        const seen = new Set<string>();
        if (next.has(first) && first !== join && first !== node.id) seen.add(first);
        const queue = [...seen];
        while (queue.length) {
          for (const to of next.get(queue.shift()!) ?? []) {
            if (to === join || to === node.id || seen.has(to)) continue;
            seen.add(to);
            queue.push(to);
          }
        }
        return { first, index, nodes: [...seen] };
      }),
    });
  }
  return out;
}

/**
 * How many levels of parallels a branch holds (0: none), so that frames of
 * nested branches can sit inside their outer branch's frame.
 */
export function nestingDepths(regions: ParallelRegion[]): Map<string, number> {
  const byParallel = new Map(regions.map((r) => [r.parallel, r]));
  const depth = new Map<string, number>();
  const key = (p: string, i: number) => `${p}:${i}`;
  const visit = (r: ParallelRegion, stack: Set<string>): number => {
    let deepest = 0;
    for (const b of r.branches) {
      const k = key(r.parallel, b.index);
      let d = depth.get(k);
      if (d === undefined) {
        d = 0;
        for (const id of b.nodes) {
          const inner = byParallel.get(id);
          // A parallel inside its own branch (an invalid cycle) does not nest.
          if (inner && !stack.has(id)) d = Math.max(d, 1 + visit(inner, new Set([...stack, id])));
        }
        depth.set(k, d);
      }
      deepest = Math.max(deepest, d);
    }
    return deepest;
  };
  for (const r of regions) visit(r, new Set([r.parallel]));
  return depth;
}
