// The selected node: its id, a form for its kind (from the schema), its
// native bodies (function nodes) or connector templates (connector nodes).

import { useCallback, useMemo } from "react";
import { useEditor } from "../state/editor.ts";
import { useAppData } from "../state/appdata.ts";
import { findNode, graphEdges, removeGraphEdge, removeNode, renameNode, setNodeBody, setNodePath, setNodeTemplate } from "../model/ops.ts";
import { formDiagnostics, locate } from "../model/pointer.ts";
import type { Diagnostic, Json, Platform } from "../model/types.ts";
import { def } from "./schema.ts";
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
      <SchemaForm schema={def("Node")} value={flat.node} onChange={onChange} diags={diags} hide={configSchema ? ["id", "config"] : ["id"]} lockVariant formKey={`node:${id}`} />
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

function EdgeInspector({ id }: { id: string }) {
  const { model, apply, dispatch } = useEditor();
  const e = graphEdges(model).find((g) => g.id === id);
  if (!e) return <p className="dim pad">The edge is gone.</p>;
  return (
    <div className="edge-inspector pad">
      <h2>{e.branch ? "Router branch" : "Edge"}</h2>
      <p>
        <b>{e.from}</b> → <b>{e.to}</b>
        {e.branch ? <span className="dim"> when {e.label}</span> : null}
      </p>
      {e.branch ? (
        <p className="dim small">Edit the condition in the router's branches.</p>
      ) : null}
      <div className="row">
        {e.branch ? (
          <button type="button" onClick={() => dispatch({ type: "select", selection: { kind: "node", id: e.from } })}>
            Open the router
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
