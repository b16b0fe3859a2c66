// How one IR node looks on the canvas: its id, its kind, a summary line and
// a badge counting the diagnostics that point at it.

import { memo } from "react";
import { Handle, type NodeProps, type Node, Position } from "@xyflow/react";
import type { Diagnostic, FlatNode } from "../model/types.ts";
import { useRunMark } from "../run/highlight.ts";

/** `joinOf`: for a join node, the parallels whose join it is. */
export type SvcNodeData = { flat: FlatNode; diags: Diagnostic[]; joinOf?: string[] };
export type SvcFlowNode = Node<SvcNodeData, "svc">;

function summary(flat: FlatNode, joinOf: string[]): string {
  const n = flat.node;
  switch (n.kind) {
    case "join":
      return joinOf.length ? `meets ${joinOf.join(", ")}` : "no parallel";
    case "function":
      return `→ ${String(n.outputKey ?? "")}`;
    case "tool":
      return `${String(n.toolId ?? "")} → ${String(n.outputKey ?? "")}`;
    case "router":
      return `${Array.isArray(n.branches) ? n.branches.length : 0} branches`;
    case "connector": {
      const t = Object.values(flat.templates)[0];
      return t ? String(t.connector) : "no template";
    }
    case "parallel": {
      const n0 = Array.isArray(n.branches) ? n.branches.length : 0;
      return `${n0} branches → ${String(n.join ?? "")}`;
    }
    case "map":
      return `each of ${String(n.over ?? "")} → ${String(n.outputKey ?? "")}`;
    case "agent":
      return `${String(n.agent ?? "")} → ${String(n.outputKey ?? "")}`;
    default:
      return typeof n.outputKey === "string" ? `→ ${n.outputKey}` : "";
  }
}

export const SvcNode = memo(function SvcNode({ data, selected }: NodeProps<SvcFlowNode>) {
  const { flat, diags } = data;
  const { id, kind } = flat.node;
  const errors = diags.filter((d) => d.severity === "error").length;
  const label = typeof flat.node.label === "string" ? flat.node.label : null;
  const mark = useRunMark(id);
  return (
    <div
      className={`svc-node kind-${kind}${errors ? " has-errors" : diags.length ? " has-warnings" : ""}${selected ? " selected" : ""}${mark ? ` svc-node--${mark}` : ""}`}
      data-run={mark}
    >
      {kind !== "start" ? <Handle type="target" position={Position.Left} /> : null}
      <div className="svc-node-title">
        <span className="svc-node-id">{id}</span>
        {diags.length ? (
          <span
            className={`svc-node-badge${errors ? "" : " warn"}`}
            data-testid={`node-${id}-diagnostics`}
            title={diags.map((d) => `${d.code}: ${d.message}`).join("\n")}
          >
            {diags.length}
          </span>
        ) : null}
      </div>
      <div className="svc-node-kind">
        {kind}
        {label ? <span className="svc-node-label"> · {label}</span> : null}
      </div>
      <div className="svc-node-summary">{summary(flat, data.joinOf ?? [])}</div>
      {kind !== "end" ? <Handle type="source" position={Position.Right} /> : null}
    </div>
  );
});
