// What a node's form offers beyond its schema: the choices of reference
// fields (a parallel's branches and join, a map's array fields) and help
// from docs/ir-reference.md ("Parallel branches and map").

import { type IrNode, type Model, listOf } from "../model/types.ts";
import { parallelRefs } from "../model/parallel.ts";

/** `options`: the field is picked from these (a string, or each item of a list); `help`: said under it. */
export interface FieldHint {
  options?: string[];
  help?: string;
}

export function nodeHints(model: Model, node: IrNode): Record<string, FieldHint> {
  if (node.kind === "parallel") {
    const { join } = parallelRefs(node);
    const ids = (keep: (kind: string, id: string) => boolean) =>
      model.nodes.filter((n) => keep(n.node.kind, n.node.id)).map((n) => n.node.id);
    return {
      branches: {
        // Neither the parallel nor its join, nor a node no branch may hold.
        options: ids((kind, id) => id !== node.id && id !== join && !["start", "end", "join"].includes(kind)),
        help:
          "Listed in merge order. A branch is every node reachable from its first node before the join: it never reaches end, and nothing but this parallel enters it. Or drag from this node to another one.",
      },
      join: {
        options: ids((kind) => kind === "join"),
        help: "Of kind join, named by this parallel only, with exactly one outgoing edge. Or drag from this node to a join node.",
      },
      maxConcurrency: { help: "Branches start in declared order." },
    };
  }
  if (node.kind === "map") {
    const arrays = listOf(model, "state")
      .filter((f) => f.type === "array" && typeof f.name === "string")
      .map((f) => f.name as string);
    return {
      over: { options: arrays },
      graph: { help: "Checked like a top-level document; of its settings only maxSteps and model apply." },
      itemField: { help: "Its type is the type of over's items (an array without items takes any)." },
      input: { help: "Every required child field is given by itemField or input, with the same type." },
      output: { help: "An item whose child never set it gives null." },
      outputKey: { options: arrays, help: "Its items have output's type; no items give an empty list." },
      maxItems: { help: "Checked before any child runs." },
    };
  }
  return {};
}

/** What a kind is, where the schema does not say. */
export const KIND_ABOUT: Record<string, string> = {
  join: "Where the branches of the parallel that names it meet: their writes are merged here in the order of its branches. It writes nothing and has exactly one outgoing edge.",
};
