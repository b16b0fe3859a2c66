// Every diagnostic of the last validation; a click selects its node (or
// opens the tab that shows its place).

import { useEditor } from "../state/editor.ts";
import { locate } from "../model/pointer.ts";
import type { Diagnostic } from "../model/types.ts";

export interface ValidationStatus {
  diagnostics: Diagnostic[];
  ms: number | null;
  pending: boolean;
  error: string | null;
  platform: string;
}

export function DiagnosticsPanel({ status, title }: { status: ValidationStatus; title?: string }) {
  const { model, dispatch } = useEditor();
  const { diagnostics } = status;
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const goTo = (d: Diagnostic) => {
    const loc = locate(d, model);
    if (loc.nodeId) {
      dispatch({ type: "select", selection: { kind: "node", id: loc.nodeId }, tab: "node" });
      const p = loc.bodyPlatform ?? loc.templatePlatform;
      if (p) dispatch({ type: "bodyTab", platform: p });
      return;
    }
    dispatch({ type: "tab", tab: loc.section === "node" ? "document" : loc.section });
    if (loc.index !== undefined) dispatch({ type: "openItem", item: { section: loc.section, index: loc.index } });
    if (loc.bodyPlatform) dispatch({ type: "bodyTab", platform: loc.bodyPlatform });
  };
  return (
    <section className="diagnostics" data-testid="diagnostics" aria-label="diagnostics">
      <header>
        <b>{title ?? "Diagnostics"}</b>
        <span className={errors ? "count err" : "count ok"} data-testid="diagnostics-count">
          {diagnostics.length === 0 ? "no problems" : `${errors} error${errors === 1 ? "" : "s"}, ${diagnostics.length - errors} other`}
        </span>
        <span className="dim small">
          for {status.platform}
          {status.pending ? " · validating…" : status.ms !== null ? ` · validated in ${status.ms} ms` : ""}
        </span>
        {status.error ? <span className="err small"> · {status.error}</span> : null}
      </header>
      <ul>
        {diagnostics.map((d, i) => (
          <li key={i} className={`diag sev-${d.severity}`} data-testid={`diagnostic-${d.code}`} onClick={() => goTo(d)} tabIndex={0} onKeyDown={(e) => e.key === "Enter" && goTo(d)}>
            <span className="sev">{d.severity}</span>
            <code className="code">{d.code}</code>
            <span className="msg">{d.message}</span>
            {d.node ? <span className="node-ref">@{d.node}</span> : null}
            {d.pointer ? <code className="ptr dim">{d.pointer}</code> : null}
            {d.hint ? <div className="hint">hint: {d.hint}</div> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
