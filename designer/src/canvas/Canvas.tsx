// The graph canvas (React Flow). The model is the only source of truth:
// nodes and edges are derived from it on every render; a drag lives in
// local state until it ends, then writes positions as one undo step.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import {
  Background,
  Controls,
  type Edge as FlowEdge,
  MarkerType,
  MiniMap,
  type NodeChange,
  ReactFlow,
  type XYPosition,
  useReactFlow,
  ViewportPortal,
  type Connection,
  type ReactFlowInstance,
} from "@xyflow/react";
import { type SvcFlowNode, SvcNode } from "./SvcNode.tsx";
import { useEditor } from "../state/editor.ts";
import { type GraphEdge, addNode, connect, connectError, graphEdges, moveNodes, uniqueNodeId } from "../model/ops.ts";
import { displayPositions } from "../model/layout.ts";
import { nestingDepths, parallelRegions } from "../model/parallel.ts";
import type { Diagnostic } from "../model/types.ts";

const nodeTypes = { svc: SvcNode };
export const PALETTE_MIME = "application/x-svc-node-kind";
const FIT = { padding: 0.2, maxZoom: 1.2 };
/** A node's size before React Flow has measured it (about one svc-node). */
const UNMEASURED = { width: 170, height: 64 };
/** A frame's margin around its nodes, and the extra per level of frames inside it. */
const FRAME_PAD = 14;
const FRAME_STEP = 14;

/** How each kind of graph edge is drawn. */
const EDGE_LOOK: Record<GraphEdge["kind"], { className: string; dash?: string; labelled: boolean }> = {
  edge: { className: "plain-edge", labelled: false },
  branch: { className: "branch-edge", dash: "6 4", labelled: true },
  parallel: { className: "parallel-edge", labelled: true },
  join: { className: "join-edge", dash: "2 4", labelled: true },
};

interface Frame {
  key: string;
  parallel: string;
  first: string;
  index: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A parallel's branches, each framed around its nodes, behind the graph. */
function BranchFrames({ frames }: { frames: Frame[] }) {
  return (
    <ViewportPortal>
      {frames.map((f) => (
        <div
          key={f.key}
          className="branch-frame"
          data-testid={`branch-${f.parallel}-${f.index}`}
          // Hues apart per branch, so neighbouring branches read as two.
          style={{ left: f.x, top: f.y, width: f.width, height: f.height, "--hue": (262 + f.index * 67) % 360 } as React.CSSProperties}
        >
          <span className="branch-frame-label" title={`branch ${f.index + 1} of ${f.parallel}`}>
            {f.first}
          </span>
        </div>
      ))}
    </ViewportPortal>
  );
}

/** Whether a node lies (partly) outside the visible part of the canvas `el`. */
function cutOff(flow: ReactFlowInstance<SvcFlowNode, FlowEdge>, el: HTMLElement): boolean {
  const nodes = flow.getNodes();
  if (!nodes.length) return false;
  const b = flow.getNodesBounds(nodes);
  const { x, y, zoom } = flow.getViewport();
  const { width, height } = el.getBoundingClientRect();
  return b.x * zoom + x < 0 || b.y * zoom + y < 0 || (b.x + b.width) * zoom + x > width || (b.y + b.height) * zoom + y > height;
}

/**
 * Keeps the graph in view. The view is fitted on load (the canvas mounts
 * with the document), whenever `fitKey` changes (a panel beside the canvas
 * opened or closed), and when the canvas is resized otherwise (the window,
 * the diagnostics pane) so that the graph no longer fits, unless the user
 * has panned or zoomed since the last fit: their view is theirs.
 */
function useFitView(flow: ReactFlowInstance<SvcFlowNode, FlowEdge>, fitKey: number) {
  const host = useRef<HTMLDivElement>(null);
  const pending = useRef(false);
  const moved = useRef(false);
  const fit = useCallback(() => {
    pending.current = false;
    moved.current = false;
    void flow.fitView(FIT);
  }, [flow]);

  // Before the browser lays the new size out (and React Flow measures it):
  // a resize that follows fits; two frames on, the fit happens anyway.
  useLayoutEffect(() => {
    pending.current = true;
    let second = 0;
    const first = requestAnimationFrame(() => {
      second = requestAnimationFrame(() => pending.current && fit());
    });
    return () => {
      cancelAnimationFrame(first);
      cancelAnimationFrame(second);
    };
  }, [fitKey, fit]);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      // A frame later, React Flow has taken the new size too.
      frame = requestAnimationFrame(() => {
        if (pending.current || (!moved.current && cutOff(flow, el))) fit();
      });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
    };
  }, [flow, fit]);

  // A pan or zoom by the user (fits and other calls come without an event).
  const onMoveStart = useCallback((event: MouseEvent | TouchEvent | null) => {
    if (event) moved.current = true;
  }, []);
  return { host, onMoveStart };
}

export function Canvas(props: {
  diagsByNode: Map<string, Diagnostic[]>;
  onNotice: (msg: string) => void;
  isKindEnabled: (kind: string) => boolean;
  /** Changes when the room the canvas has changes on purpose (a panel opened or closed): the view is fitted again. */
  fitKey: number;
}) {
  const editor = useEditor();
  const { model, state, apply, dispatch } = editor;
  const flow = useReactFlow<SvcFlowNode, FlowEdge>();
  const [drag, setDrag] = useState<Record<string, XYPosition>>({});
  const [measured, setMeasured] = useState<Record<string, { width: number; height: number }>>({});
  const view = useFitView(flow, props.fitKey);

  const positions = useMemo(() => displayPositions(model), [model]);
  const selection = state.selection;

  const regions = useMemo(() => parallelRegions(model), [model]);
  const nodes: SvcFlowNode[] = useMemo(
    () =>
      model.nodes.map((flat) => {
        const id = flat.node.id;
        const joinOf = flat.node.kind === "join" ? regions.filter((r) => r.join === id).map((r) => r.parallel) : undefined;
        return {
          id,
          type: "svc" as const,
          position: drag[id] ?? positions[id],
          data: { flat, diags: props.diagsByNode.get(id) ?? [], joinOf },
          selected: selection?.kind === "node" && selection.id === id,
          measured: measured[id],
          // The test hook sits on React Flow's own node wrapper.
          domAttributes: { "data-testid": `node-${id}` } as Record<string, string>,
        };
      }),
    [model, regions, positions, drag, measured, selection, props.diagsByNode],
  );

  const edges: FlowEdge[] = useMemo(() => {
    const ids = new Set(model.nodes.map((n) => n.node.id));
    return graphEdges(model)
      .filter((e) => ids.has(e.from) && ids.has(e.to))
      .map((e) => {
        const look = EDGE_LOOK[e.kind];
        return {
          id: e.id,
          source: e.from,
          target: e.to,
          label: look.labelled ? e.label : undefined,
          selected: selection?.kind === "edge" && selection.id === e.id,
          className: look.className,
          style: look.dash ? { strokeDasharray: look.dash } : undefined,
          markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
          labelBgPadding: [4, 2] as [number, number],
        };
      });
  }, [model, selection]);

  const frames: Frame[] = useMemo(() => {
    const depths = nestingDepths(regions);
    const out: Frame[] = [];
    for (const r of regions) {
      for (const b of r.branches) {
        if (!b.nodes.length) continue;
        let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
        for (const id of b.nodes) {
          const p = drag[id] ?? positions[id];
          if (!p) continue;
          const size = measured[id] ?? UNMEASURED;
          x0 = Math.min(x0, p.x);
          y0 = Math.min(y0, p.y);
          x1 = Math.max(x1, p.x + size.width);
          y1 = Math.max(y1, p.y + size.height);
        }
        // Frames of nested branches sit inside their outer branch's frame;
        // the top margin holds the label.
        const pad = FRAME_PAD + FRAME_STEP * (depths.get(`${r.parallel}:${b.index}`) ?? 0);
        out.push({ key: `${r.parallel}:${b.index}`, parallel: r.parallel, first: b.first, index: b.index, x: x0 - pad, y: y0 - pad - 12, width: x1 - x0 + 2 * pad, height: y1 - y0 + 2 * pad + 12 });
      }
    }
    return out;
  }, [regions, positions, drag, measured]);

  const onNodesChange = useCallback((changes: NodeChange<SvcFlowNode>[]) => {
    const dims: Record<string, { width: number; height: number }> = {};
    const moved: Record<string, XYPosition> = {};
    for (const c of changes) {
      if (c.type === "dimensions" && c.dimensions) dims[c.id] = c.dimensions;
      if (c.type === "position" && c.position && c.dragging) moved[c.id] = c.position;
    }
    if (Object.keys(dims).length) setMeasured((m) => ({ ...m, ...dims }));
    if (Object.keys(moved).length) setDrag((d) => ({ ...d, ...moved }));
  }, []);

  const onNodeDragStop = useCallback(
    (_e: unknown, _node: SvcFlowNode, dragged: SvcFlowNode[]) => {
      const pos: Record<string, XYPosition> = {};
      for (const n of dragged) pos[n.id] = n.position;
      apply((m) => moveNodes(m, pos));
      setDrag({});
    },
    [apply],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      const err = connectError(model, c.source, c.target);
      if (err) {
        props.onNotice(err);
        return;
      }
      apply((m) => {
        const r = connect(m, c.source, c.target);
        return "model" in r ? r.model : m;
      });
    },
    [apply, model, props],
  );

  const onDrop = useCallback(
    (e: React.DragEvent) => {
      const kind = e.dataTransfer.getData(PALETTE_MIME);
      if (!kind) return;
      e.preventDefault();
      if (!props.isKindEnabled(kind)) return;
      const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      const id = uniqueNodeId(model, kind);
      apply((m) => addNode(m, kind, p, id).model);
      dispatch({ type: "select", selection: { kind: "node", id } });
    },
    [apply, dispatch, flow, model, props],
  );

  return (
    <div className="canvas" data-testid="canvas" ref={view.host} onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
      <ReactFlow<SvcFlowNode, FlowEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onNodeDragStop={onNodeDragStop}
        onConnect={onConnect}
        isValidConnection={(c) => connectError(model, c.source, c.target) === null}
        onNodeClick={(_e, n) => dispatch({ type: "select", selection: { kind: "node", id: n.id } })}
        onEdgeClick={(_e, ed) => dispatch({ type: "select", selection: { kind: "edge", id: ed.id } })}
        onPaneClick={() => dispatch({ type: "select", selection: null })}
        deleteKeyCode={null}
        multiSelectionKeyCode={null}
        selectionKeyCode={null}
        onMoveStart={view.onMoveStart}
        fitView
        fitViewOptions={FIT}
        minZoom={0.2}
      >
        <Background gap={16} />
        <Controls showInteractive={false} />
        <MiniMap pannable zoomable />
        <BranchFrames frames={frames} />
      </ReactFlow>
    </div>
  );
}
