// The selected node: its id, a form for its kind (from the schema), its
// native bodies (function nodes) or connector templates (connector nodes).

import { useCallback, useMemo } from "react";
import { useEditor } from "../state/editor.ts";
import { useAppData } from "../state/appdata.ts";
import { type GraphEdge, findNode, graphEdges, removeGraphEdge, removeNode, renameNode, setNodeBody, setNodePath, setNodeTemplate } from "../model/ops.ts";
import { formDiagnostics, locate } from "../model/pointer.ts";
import type { Diagnostic, Json, Platform } from "../model/types.ts";
import { def, objectShape } from "./schema.ts";
import { KIND_ABOUT, nodeHints } from "./nodeHints.ts";
import { connectorConfigSchema, isRecord } from "./connectorConfig.ts";
import { SchemaForm, type OnChange } from "./SchemaForm.tsx";
import { IdField } from "./IdField.tsx";
import { BodyEditor } from "../bodies/BodyEditor.tsx";
import { TemplateEditor } from "../bodies/TemplateEditor.tsx";

export function NodeInspector() {
  const { model, state, apply, dispatch } = useEditor();
  const { diagnostics, connectors, platform } = useAppData();
  const sel = state.selection;

  if (sel?.kind === "edge") return <EdgeInspector id={sel.id} />;
  const flat = sel?.kind === "node" ? findNode(model, sel.id) : undefined;
  if (!flat) return <p className="dim pad">Select a node on the canvas, or add one from the palette.</p>;
  return <NodeForm key={flat.node.id} id={flat.node.id} model={model} apply={apply} dispatch={dispatch} diagnostics={diagnostics} connectors={connectors} platform={state.bodyTab ?? platform} validated={platform} />;
}

function NodeForm(props: {
  id: string;
  model: ReturnType<typeof useEditor>["model"];
  apply: ReturnType<typeof useEditor>["apply"];
  dispatch: ReturnType<typeof useEditor>["dispatch"];
  diagnostics: Diagnostic[];
  connectors: ReturnType<typeof useAppData>["connectors"];
  platform: Platform;
  /** The platform the diagnostics are for. */
  validated: Platform;
}) {
  const { id, model, apply, dispatch, diagnostics } = props;
  const flat = findNode(model, id)!;
  const diags = useMemo(() => formDiagnostics(diagnostics, model, { section: "node", nodeId: id }), [diagnostics, model, id]);
  // Body and template diagnostics flag their platform's tab.
  const perPlatform = useMemo(() => {
    const bodies = new Set<string>();
    const templates = new Map<string, Diagnostic[]>();
    for (const d of diagnostics) {
      const loc = locate(d, model);
      if (loc.nodeId !== id) continue;
      if (loc.bodyPlatform) bodies.add(loc.bodyPlatform);
      if (loc.templatePlatform) templates.set(loc.templatePlatform, [...(templates.get(loc.templatePlatform) ?? []), d]);
      if (d.code === "missing-body" && !loc.bodyPlatform) bodies.add(props.validated);
      if (d.code === "template-required" && !loc.templatePlatform) {
        const p = props.validated;
        templates.set(p, [...(templates.get(p) ?? []), d]);
      }
    }
    return { bodies, templates };
  }, [diagnostics, model, id, props.validated]);

  const onChange: OnChange = useCallback(
    (path, value, opts) => apply((m) => setNodePath(m, id, path, value as Json | undefined), opts?.coalesce ? `node:${id}:${path.join("/")}` : undefined),
    [apply, id],
  );
  const kind = flat.node.kind;
  const hints = useMemo(() => nodeHints(model, flat.node), [model, flat.node]);
  const about = objectShape(def("Node"), flat.node).description?.split("\n\n")[0] ?? KIND_ABOUT[kind];
  const configSchema = kind === "connector" ? connectorConfigSchema(flat.templates, props.connectors, props.platform) : null;

  return (
    <div className="node-inspector">
      <div className="inspector-head">
        <h2>
          {kind} <span className="dim">node</span>
        </h2>
        <button
          type="button"
          className="danger small"
          data-testid="delete-node"
          onClick={() => {
            apply((m) => removeNode(m, id));
            dispatch({ type: "select", selection: null, tab: "node" });
          }}
        >
          Delete
        </button>
      </div>
      {about ? <p className="dim small kind-about">{about.replace(/\n/g, " ")}</p> : null}
      <IdField
        value={id}
        testId="inspector-id"
        onRename={(next) => {
          const r = renameNode(model, id, next);
          if ("error" in r) return r.error;
          apply((m) => {
            const again = renameNode(m, id, next);
            return "model" in again ? again.model : m;
          });
          dispatch({ type: "select", selection: { kind: "node", id: next }, tab: "node" });
          return null;
        }}
      />
      <SchemaForm schema={def("Node")} value={flat.node} onChange={onChange} diags={diags} hide={configSchema ? ["id", "config"] : ["id"]} lockVariant formKey={`node:${id}`} hints={hints} />
      {configSchema ? (
        <section className="connector-config" data-testid="connector-config">
          <h3>
            Config <span className="dim">({configSchema.connector} {configSchema.version}'s schema)</span>
          </h3>
          <SchemaForm
            schema={configSchema.schema}
            value={isRecord(flat.node.config) ? flat.node.config : {}}
            path={["config"]}
            onChange={onChange}
            diags={diags}
            formKey={`node:${id}`}
          />
        </section>
      ) : null}
      {kind === "function" ? (
        <section className="bodies">
          <h3>Body</h3>
          <BodyEditor
            active={props.platform}
            onTab={(p) => dispatch({ type: "bodyTab", platform: p })}
            get={(p) => flat.bodies[p] ?? ""}
            set={(p, text) => apply((m) => setNodeBody(m, id, p, text), `body:${id}:${p}`)}
            flagged={perPlatform.bodies}
            onBlur={() => dispatch({ type: "seal" })}
          />
        </section>
      ) : null}
      {kind === "connector" ? (
        <section className="bodies">
          <h3>Templates (codegen.templates)</h3>
          <TemplateEditor
            templates={flat.templates}
            connectors={props.connectors}
            active={props.platform}
            onTab={(p) => dispatch({ type: "bodyTab", platform: p })}
            set={(p, ref, key) => apply((m) => setNodeTemplate(m, id, p, ref), key)}
            diags={perPlatform.templates}
          />
        </section>
      ) : null}
    </div>
  );
}

/** What each kind of graph edge is called. */
const EDGE_TITLE: Record<GraphEdge["kind"], string> = {
  edge: "Edge",
  branch: "Router branch",
  parallel: "Parallel branch",
  join: "Parallel's join",
};

function EdgeInspector({ id }: { id: string }) {
  const { model, apply, dispatch } = useEditor();
  const e = graphEdges(model).find((g) => g.id === id);
  if (!e) return <p className="dim pad">The edge is gone.</p>;
  const owner = e.kind === "branch" ? "router" : e.kind === "edge" ? null : "parallel";
  return (
    <div className="edge-inspector pad">
      <h2>{EDGE_TITLE[e.kind]}</h2>
      <p>
        <b>{e.from}</b> → <b>{e.to}</b>
        {e.kind === "branch" ? <span className="dim"> when {e.label}</span> : null}
      </p>
      {e.kind === "branch" ? <p className="dim small">Edit the condition in the router's branches.</p> : null}
      {e.kind === "parallel" ? (
        <p className="dim small">
          Branch {e.index + 1} starts at {e.to}. Branches run at once, each from a copy of the state; their writes are merged at the join in the order of the
          parallel's branches.
        </p>
      ) : null}
      {e.kind === "join" ? <p className="dim small">Every branch of {e.from} ends at {e.to}, where their writes are merged.</p> : null}
      <div className="row">
        {owner ? (
          <button type="button" onClick={() => dispatch({ type: "select", selection: { kind: "node", id: e.from } })}>
            Open the {owner}
          </button>
        ) : null}
        <button
          type="button"
          className="danger"
          onClick={() => {
            apply((m) => removeGraphEdge(m, id));
            dispatch({ type: "select", selection: null });
          }}
        >
          Delete
        </button>
      </div>
    </div>
  );
}
