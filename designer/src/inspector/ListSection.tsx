// The document's lists: state fields, tools, MCP servers and agents. One
// schema form per entry; ids that others refer to are renamed as a whole.

import { useEffect, useMemo, useState } from "react";
import { useEditor } from "../state/editor.ts";
import { useAppData } from "../state/appdata.ts";
import { docBody, renameListItem, setDocBody, setDocValue } from "../model/ops.ts";
import { formDiagnostics, locate, type Section } from "../model/pointer.ts";
import { type Json, type JsonObject, type Platform, listOf } from "../model/types.ts";
import { def, emptyValue, switchVariant, variantValues } from "./schema.ts";
import { SchemaForm, type OnChange } from "./SchemaForm.tsx";
import { IdField } from "./IdField.tsx";
import { BodyEditor } from "../bodies/BodyEditor.tsx";

type ListKey = "state" | "tools" | "mcpServers" | "agents";

const CONFIG: Record<ListKey, { def: string; idKey: string; noun: string; prefix: string; help: string }> = {
  state: { def: "StateField", idKey: "name", noun: "state field", prefix: "field", help: "The fields of the state that flows through the graph." },
  tools: { def: "Tool", idKey: "id", noun: "tool", prefix: "tool", help: "Tools that tool nodes (and agents) call. Native tools have a body per platform." },
  mcpServers: { def: "McpServer", idKey: "id", noun: "MCP server", prefix: "mcp", help: "MCP servers whose tools mcp tools name." },
  agents: { def: "AgentDef", idKey: "id", noun: "agent", prefix: "agent", help: "Agents that agent nodes run. A custom supervisor routes with a body per platform." },
};

/** A native tool's body: a node's, run on the tool input. */
const TOOL_SIGNATURE: Record<Platform, string> = {
  "python-svc": "Body of def node(state: dict): state is the tool input; what it returns is the tool's result.",
  "java-svc": "Statements that assign result, the tool's result; state, the tool input, is a read-only Map<String, Object>.",
  go: "Body of func(ctx context.Context, state State) (State, error): state is the tool input; the State returned is the tool's result.",
};

/** A custom supervisor's router (docs/ir-reference.md, "A custom router's body"). */
const ROUTE_SIGNATURE: Record<Platform, string> = {
  "python-svc":
    'Body of def route(state: dict) -> str: return a member\'s id or "finish". state holds input, round, last_member and last_output (None before the first member ran).',
  "java-svc":
    'Statements that assign String result, a member\'s id or "finish", from the read-only Map<String, Object> state: input, round (Integer), last_member and last_output (null before the first member ran).',
  go: 'Body of func(ctx context.Context, state State) (string, error): return a member\'s id or "finish"; read state.String("input"), state.Int("round"), state.String("last_member") and state.String("last_output") ("" before the first member ran).',
};

export function ListSection({ list }: { list: ListKey }) {
  const { model, state, apply, dispatch } = useEditor();
  const { diagnostics } = useAppData();
  const cfg = CONFIG[list];
  const schema = def(cfg.def);
  const items = listOf(model, list);
  const variants = variantValues(schema);
  const [newKind, setNewKind] = useState(variants[0] ?? "");
  const [open, setOpen] = useState<Set<number>>(new Set());

  // A diagnostic clicked in the panel opens its entry.
  useEffect(() => {
    if (state.openItem?.section === list) {
      setOpen((o) => new Set(o).add(state.openItem!.index));
      dispatch({ type: "openItem", item: null });
    }
  }, [state.openItem, list, dispatch]);

  const counts = useMemo(() => {
    const c = new Map<number, number>();
    for (const d of diagnostics) {
      const loc = locate(d, model);
      if (loc.section === list && loc.index !== undefined) c.set(loc.index, (c.get(loc.index) ?? 0) + 1);
    }
    return c;
  }, [diagnostics, model, list]);

  const add = () => {
    const taken = new Set(items.map((i) => String(i[cfg.idKey])));
    let n = 1;
    while (taken.has(`${cfg.prefix}_${n}`)) n++;
    let item = emptyValue(schema) as JsonObject;
    if (variants.length) item = switchVariant(schema, { [cfg.idKey]: "" }, newKind) as JsonObject;
    item = list === "state" ? { name: `${cfg.prefix}_${n}`, type: "string" } : { ...item, [cfg.idKey]: `${cfg.prefix}_${n}` };
    // Keep the id first.
    item = { [cfg.idKey]: item[cfg.idKey], ...item };
    apply((m) => setDocValue(m, ["logical", list], [...listOf(m, list), item]));
    setOpen((o) => new Set(o).add(items.length));
  };

  return (
    <div className="list-section">
      <p className="dim small">{cfg.help}</p>
      {items.map((item, index) => {
        const id = String(item[cfg.idKey] ?? "");
        const isOpen = open.has(index);
        const count = counts.get(index) ?? 0;
        return (
          <div key={index} className={`list-item${count ? " invalid" : ""}`} data-testid={`${list}-${index}`}>
            <div className="list-item-head" onClick={() => setOpen((o) => toggle(o, index))}>
              <span className="caret">{isOpen ? "▾" : "▸"}</span>
              <b>{id || "(no id)"}</b>
              <span className="dim"> {String(item.kind ?? item.transport ?? item.type ?? "")}</span>
              {count ? <span className="svc-node-badge">{count}</span> : null}
              <span className="spacer" />
              <button
                type="button"
                className="danger small"
                onClick={(e) => {
                  e.stopPropagation();
                  apply((m) => setDocValue(m, ["logical", list, index], undefined));
                  setOpen(new Set());
                }}
              >
                Remove
              </button>
            </div>
            {isOpen ? <ItemForm list={list} index={index} item={item} /> : null}
          </div>
        );
      })}
      <div className="row add-row">
        {variants.length ? (
          <select value={newKind} onChange={(e) => setNewKind(e.target.value)} aria-label={`kind of the new ${cfg.noun}`}>
            {variants.map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        ) : null}
        <button type="button" onClick={add} data-testid={`add-${list}`}>
          + Add {cfg.noun}
        </button>
      </div>
    </div>
  );
}

function toggle(s: Set<number>, i: number): Set<number> {
  const n = new Set(s);
  if (n.has(i)) n.delete(i);
  else n.add(i);
  return n;
}

function ItemForm({ list, index, item }: { list: ListKey; index: number; item: JsonObject }) {
  const { model, state, apply, dispatch } = useEditor();
  const { diagnostics, platform } = useAppData();
  const cfg = CONFIG[list];
  const section = list as Section;
  const diags = useMemo(() => formDiagnostics(diagnostics, model, { section: section as Exclude<Section, "node">, index }), [diagnostics, model, section, index]);
  const onChange: OnChange = (path, value, opts) =>
    apply((m) => setDocValue(m, ["logical", list, index, ...path], value as Json | undefined), opts?.coalesce ? `${list}:${index}:${path.join("/")}` : undefined);
  const id = String(item[cfg.idKey] ?? "");
  const renamable = list === "tools" || list === "agents";
  const flagged = useMemo(() => {
    const s = new Set<string>();
    for (const d of diagnostics) {
      const loc = locate(d, model);
      if (loc.section === section && loc.index === index && loc.bodyPlatform) s.add(loc.bodyPlatform);
      if (d.code === "missing-body" && d.pointer?.startsWith(`/logical/${list}/${index}`)) s.add(platform);
    }
    return s;
  }, [diagnostics, model, section, index, list, platform]);

  // Bodies live in document.bodiesByPlatform: native tools, custom supervisors.
  const signature: Record<Platform, string> | null =
    list === "tools" && item.kind === "native"
      ? TOOL_SIGNATURE
      : list === "agents" && item.kind === "supervisor" && item.router === "custom"
        ? ROUTE_SIGNATURE
        : null;

  return (
    <div className="list-item-body">
      {renamable ? (
        <IdField
          value={id}
          label="id"
          onRename={(next) => {
            const r = renameListItem(model, list, id, next);
            if ("error" in r) return r.error;
            apply((m) => {
              const again = renameListItem(m, list, id, next);
              return "model" in again ? again.model : m;
            });
            return null;
          }}
        />
      ) : null}
      <SchemaForm schema={def(cfg.def)} value={item} onChange={onChange} diags={diags} hide={renamable ? ["id"] : []} formKey={`${list}:${index}`} />
      {signature ? (
        <section className="bodies">
          <h3>{list === "tools" ? "Tool body" : "Route body"}</h3>
          <BodyEditor
            signature={signature}
            active={state.bodyTab ?? platform}
            onTab={(p) => dispatch({ type: "bodyTab", platform: p })}
            get={(p) => docBody(model, p, id)}
            set={(p, text) => apply((m) => setDocBody(m, p, id, text), `docbody:${id}:${p}`)}
            flagged={flagged}
            onBlur={() => dispatch({ type: "seal" })}
          />
        </section>
      ) : null}
    </div>
  );
}
