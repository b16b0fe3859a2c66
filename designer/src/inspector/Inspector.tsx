// The right-hand panel: the selected node, or the document's own parts
// (metadata, state, tools, MCP servers, agents, settings), one tab each.

import { useMemo } from "react";
import { useEditor } from "../state/editor.ts";
import { useAppData } from "../state/appdata.ts";
import { setDocValue } from "../model/ops.ts";
import { formDiagnostics, locate, type Section } from "../model/pointer.ts";
import { type Json, type JsonObject, isObject, logicalOf } from "../model/types.ts";
import { def, rootSchema } from "./schema.ts";
import { SchemaForm, type OnChange } from "./SchemaForm.tsx";
import { NodeInspector } from "./NodeInspector.tsx";
import { ListSection } from "./ListSection.tsx";

const TABS: { id: Section; label: string }[] = [
  { id: "node", label: "Node" },
  { id: "document", label: "Document" },
  { id: "state", label: "State" },
  { id: "tools", label: "Tools" },
  { id: "mcpServers", label: "MCP" },
  { id: "agents", label: "Agents" },
  { id: "settings", label: "Settings" },
];

export function Inspector() {
  const { state, dispatch, model } = useEditor();
  const { diagnostics } = useAppData();
  const counts = useMemo(() => {
    const c = new Map<Section, number>();
    for (const d of diagnostics) {
      const s = locate(d, model).section;
      c.set(s, (c.get(s) ?? 0) + 1);
    }
    return c;
  }, [diagnostics, model]);
  return (
    <aside className="inspector" aria-label="inspector">
      <nav className="tabs inspector-tabs" role="tablist">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={state.tab === t.id}
            className={`tab${state.tab === t.id ? " active" : ""}${t.id !== "node" && counts.get(t.id) ? " flagged" : ""}`}
            data-testid={`inspector-tab-${t.id}`}
            onClick={() => dispatch({ type: "tab", tab: t.id })}
          >
            {t.label}
          </button>
        ))}
      </nav>
      <div className="inspector-body">
        {state.tab === "node" ? <NodeInspector /> : null}
        {state.tab === "document" ? <DocumentSection /> : null}
        {state.tab === "state" || state.tab === "tools" || state.tab === "mcpServers" || state.tab === "agents" ? (
          <ListSection key={state.tab} list={state.tab} />
        ) : null}
        {state.tab === "settings" ? <SettingsSection /> : null}
      </div>
    </aside>
  );
}

const DOC_HIDE = ["target", "security", "logical", "bodiesByPlatform", "codegen", "presentation", "extensions"];

function DocumentSection() {
  const { model, apply } = useEditor();
  const { diagnostics } = useAppData();
  const diags = useMemo(() => formDiagnostics(diagnostics, model, { section: "document" }), [diagnostics, model]);
  const onChange: OnChange = (path, value, opts) =>
    apply((m) => setDocValue(m, path, value as Json | undefined), opts?.coalesce ? `doc:${path.join("/")}` : undefined);
  return (
    <div className="pad">
      <h2>Document</h2>
      <SchemaForm schema={rootSchema()} value={model.document} onChange={onChange} diags={diags} hide={DOC_HIDE} formKey="doc" />
      <p className="dim small">The target platform is chosen in the toolbar.</p>
    </div>
  );
}

/** settings.*, and the document's `security` (its key is an env var name only). */
function SettingsSection() {
  const { model, apply } = useEditor();
  const { diagnostics } = useAppData();
  const diags = useMemo(() => formDiagnostics(diagnostics, model, { section: "settings" }), [diagnostics, model]);
  const settings = logicalOf(model).settings;
  const security = model.document.security;
  const onSettings: OnChange = (path, value, opts) =>
    apply((m) => setDocValue(m, ["logical", "settings", ...path], value as Json | undefined), opts?.coalesce ? `settings:${path.join("/")}` : undefined);
  // The security form's paths start with "security", like its diagnostics.
  const onSecurity: OnChange = (path, value, opts) =>
    apply((m) => setDocValue(m, path, value as Json | undefined), opts?.coalesce ? `sec:${path.join("/")}` : undefined);
  return (
    <div className="pad settings">
      <h2>Security</h2>
      <SchemaForm schema={def("Security")} value={(isObject(security) ? security : {}) as JsonObject} path={["security"]} onChange={onSecurity} diags={diags} formKey="security" />
      <h2>Settings</h2>
      <SchemaForm schema={def("Settings")} value={(isObject(settings) ? settings : {}) as JsonObject} onChange={onSettings} diags={diags.filter((d) => d.path[0] !== "security")} formKey="settings" />
    </div>
  );
}
