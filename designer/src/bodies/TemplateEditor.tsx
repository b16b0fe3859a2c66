// codegen.templates for a connector node: per platform, which connector
// (from the installed packs) writes the node's code.

import { useState } from "react";
import type { Connector } from "../api/client.ts";
import { PlatformTabs } from "../ui/PlatformTabs.tsx";
import { PLATFORMS, type Platform, type TemplateRef } from "../model/types.ts";
import type { Diagnostic } from "../model/types.ts";

export interface TemplateEditorProps {
  templates: Record<string, TemplateRef>;
  connectors: Connector[];
  active: Platform;
  onTab: (p: Platform) => void;
  /** `null` removes the platform's template. */
  set: (p: Platform, ref: TemplateRef | null, coalesce?: string) => void;
  diags: Map<string, Diagnostic[]>;
}

export function defaultVersionRange(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version);
  return m ? `^${m[1]}.${m[2]}` : version ? `^${version}` : "^0.1";
}

export function TemplateEditor(props: TemplateEditorProps) {
  const p = props.active;
  const ref = props.templates[p];
  const connector = ref ? props.connectors.find((c) => c.name === ref.connector) : undefined;
  const diags = props.diags.get(p) ?? [];
  const setField = (key: string, value: string) => {
    if (!ref) return;
    const next = { ...ref } as TemplateRef;
    if (value === "" && key === "entry") delete next.entry;
    else next[key] = value;
    props.set(p, next, `template:${p}:${key}`);
  };
  const pick = (name: string) => {
    const c = props.connectors.find((x) => x.name === name);
    if (!name) return;
    if (!ref) props.set(p, { connector: name, version: defaultVersionRange(c?.version ?? "") });
    else props.set(p, { ...ref, connector: name, version: c ? defaultVersionRange(c.version) : ref.version });
  };
  return (
    <div className="template-editor">
      <PlatformTabs
        platforms={PLATFORMS}
        active={p}
        onTab={props.onTab}
        has={(q) => Boolean(props.templates[q])}
        flagged={(q) => props.diags.has(q)}
        testIdPrefix="template-tab"
        entry="template"
      />
      {ref ? (
        <div className="template-form">
          <div className={`field${diags.some((d) => d.pointer?.endsWith("/connector")) ? " invalid" : ""}`}>
            <label>connector</label>
            <select data-testid="template-connector" value={ref.connector} onChange={(e) => pick(e.target.value)}>
              {!connector ? <option value={ref.connector}>{ref.connector} (not installed)</option> : null}
              {props.connectors.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name} {c.version}
                </option>
              ))}
            </select>
            {connector && connector.platforms.length && !connector.platforms.includes(p) ? (
              <div className="warn">{connector.name} has no template for {p}.</div>
            ) : null}
          </div>
          <div className="field">
            <label>version (semver range)</label>
            <input type="text" data-testid="template-version" value={ref.version} onChange={(e) => setField("version", e.target.value)} />
          </div>
          <div className="field">
            <label>entry (optional)</label>
            <input type="text" list="dl-entries" value={typeof ref.entry === "string" ? ref.entry : ""} onChange={(e) => setField("entry", e.target.value)} />
            <datalist id="dl-entries">
              {(connector?.entries ?? []).map((e) => (
                <option key={e} value={e} />
              ))}
            </datalist>
          </div>
          <button type="button" className="danger small" onClick={() => props.set(p, null)}>
            Remove the {p} template
          </button>
        </div>
      ) : (
        <div className="template-form">
          <p className="dim">No template for {p}: this platform cannot build the node ({"template-required"}).</p>
          {props.connectors.length ? (
            <select data-testid="template-connector" value="" onChange={(e) => pick(e.target.value)}>
              <option value="">choose a connector…</option>
              {props.connectors.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name} {c.version}
                  {c.platforms.length && !c.platforms.includes(p) ? ` (no ${p} template)` : ""}
                </option>
              ))}
            </select>
          ) : (
            <p className="dim">No connector packs are installed (svc compile --plugins, or the default plugin directory).</p>
          )}
          <ManualConnector onAdd={(name) => pick(name)} />
        </div>
      )}
      {diags.length ? (
        <ul className="field-diags">
          {diags.map((d, i) => (
            <li key={i}>
              <b>{d.code}</b> {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A connector that is not installed here can still be named by hand. */
function ManualConnector(props: { onAdd: (name: string) => void }) {
  const [name, setName] = useState("");
  const valid = /^[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9_-]*$/.test(name);
  return (
    <div className="row">
      <input type="text" placeholder="vendor/name" value={name} onChange={(e) => setName(e.target.value.trim())} aria-label="connector name" />
      <button type="button" disabled={!valid} onClick={() => props.onAdd(name)}>
        Add template
      </button>
    </div>
  );
}
