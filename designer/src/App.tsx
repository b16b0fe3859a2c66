// The editor: loads the session, capabilities, connectors and document,
// validates after every change, saves with the file's etag, exports, and
// owns the keyboard shortcuts.

import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { useReactFlow } from "@xyflow/react";
import {
  ApiError,
  type BackendCapabilities,
  type Connector,
  type Session,
  exportToDir,
  exportZip,
  getCapabilities,
  getConnectors,
  getDocument,
  getSession,
  putDocument,
  stopRuns,
  stopRunsOnExit,
  validate,
} from "./api/client.ts";
import { EditorContext, makeEditor, initialState, reducer } from "./state/editor.ts";
import { AppDataContext } from "./state/appdata.ts";
import { type Diagnostic, type Model, type Platform, PLATFORMS, listOf, normalizeModel, stateFieldNames, targetOf } from "./model/types.ts";
import { addNode, removeGraphEdge, removeNode, setTarget, uniqueNodeId } from "./model/ops.ts";
import { autoLayout } from "./model/layout.ts";
import { diagnosticsByNode } from "./model/pointer.ts";
import { Canvas } from "./canvas/Canvas.tsx";
import { Palette, kindStatus } from "./canvas/Palette.tsx";
import { Inspector } from "./inspector/Inspector.tsx";
import { DiagnosticsPanel, type ValidationStatus } from "./ui/DiagnosticsPanel.tsx";
import { type ExportState, type SaveState, Toolbar } from "./ui/Toolbar.tsx";
import { RunPanel } from "./run/RunPanel.tsx";
import { RunHighlightContext, type RunMark } from "./run/highlight.ts";

const EMPTY: Model = { document: {}, nodes: [], edges: [] };
const VALIDATE_DEBOUNCE_MS = 150;
/** How long after an edit the services of the last run are stopped. */
const STOP_AFTER_EDIT_MS = 1000;
const NO_MARKS = new Map<string, RunMark>();

type Boot =
  | { status: "loading" }
  | { status: "failed"; message: string; diagnostics: Diagnostic[] }
  | { status: "ready" };

function isEditable(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable || !!el.closest?.(".cm-editor");
}

function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.message} (${e.code})`;
  return e instanceof Error ? e.message : String(e);
}

export function App() {
  const [boot, setBoot] = useState<Boot>({ status: "loading" });
  const [session, setSession] = useState<Session | null>(null);
  const [caps, setCaps] = useState<Record<string, BackendCapabilities>>({});
  const [connectors, setConnectors] = useState<Connector[]>([]);
  const [etag, setEtag] = useState<string | null>(null);
  const [saved, setSaved] = useState<Model | null>(null);
  const [saveOp, setSaveOp] = useState<"idle" | "saving" | "conflict" | { error: string }>("idle");
  const [exportState, setExportState] = useState<ExportState>({ busy: false, result: null, error: false });
  const [notice, setNotice] = useState<string | null>(null);
  const [state, dispatch] = useReducer(reducer, EMPTY, initialState);
  const editor = useMemo(() => makeEditor(state, dispatch), [state]);
  const model = state.history.present;
  const target = targetOf(model);
  const flow = useReactFlow();

  // ------------------------------------------------------------ run panel
  const [runOpen, setRunOpen] = useState(false);
  // Bumped when the run panel opens or closes: the canvas fits the graph again.
  const [panelChanges, setPanelChanges] = useState(0);
  const [marks, setMarks] = useState<Map<string, RunMark>>(NO_MARKS);
  // Services may run (a run ended); a run is in progress; a stop is pending.
  const servicesUp = useRef(false);
  const runBusy = useRef(false);
  const stopTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // `force`: also while a run is going (its builds and services stop too).
  const stopServices = useCallback((force = false) => {
    if (stopTimer.current) clearTimeout(stopTimer.current);
    stopTimer.current = null;
    if (force ? !servicesUp.current && !runBusy.current : !servicesUp.current || runBusy.current) return;
    servicesUp.current = false;
    void stopRuns().catch(() => undefined);
  }, []);
  const onRunBusy = useCallback((busy: boolean) => {
    runBusy.current = busy;
    if (busy && stopTimer.current) {
      clearTimeout(stopTimer.current);
      stopTimer.current = null;
    }
    if (!busy) servicesUp.current = true;
  }, []);
  const toggleRun = useCallback(() => {
    // Closing stops the services; the canvas marks hide with the panel.
    if (runOpen) stopServices(true);
    setRunOpen(!runOpen);
    setPanelChanges((n) => n + 1);
  }, [runOpen, stopServices]);
  useEffect(() => {
    window.addEventListener("pagehide", stopRunsOnExit);
    return () => window.removeEventListener("pagehide", stopRunsOnExit);
  }, []);

  const [validation, setValidation] = useState<ValidationStatus>({ diagnostics: [], ms: null, pending: false, error: null, platform: target });

  // ------------------------------------------------------------ load
  const load = useCallback(async () => {
    setBoot({ status: "loading" });
    try {
      const [s, c, k] = await Promise.all([getSession(), getCapabilities(), getConnectors().catch(() => [] as Connector[])]);
      setSession(s);
      setCaps(c);
      setConnectors(k);
      const doc = await getDocument();
      const m = normalizeModel(doc.model);
      dispatch({ type: "load", model: m });
      setSaved(m);
      setEtag(doc.etag ?? null);
      setSaveOp("idle");
      setValidation((v) => ({ ...v, diagnostics: doc.diagnostics ?? [] }));
      setBoot({ status: "ready" });
    } catch (e) {
      const diagnostics = e instanceof ApiError ? e.diagnostics : [];
      const message =
        e instanceof ApiError && e.status === 422
          ? "This file cannot be read as an IR v2 document, so the designer cannot open it. Fix the problems below in a text editor, then reload this page."
          : e instanceof ApiError && (e.status === 401 || e.status === 403)
            ? `The server refused this page (${e.status}): open the address that svc design printed, with its token.`
            : `Could not load the document: ${errorText(e)}`;
      setBoot({ status: "failed", message, diagnostics });
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  // ------------------------------------------------------------ validate
  useEffect(() => {
    if (boot.status !== "ready") return;
    const ctl = new AbortController();
    setValidation((v) => ({ ...v, pending: true, platform: target }));
    const timer = setTimeout(async () => {
      try {
        const r = await validate(model, target, ctl.signal);
        if (ctl.signal.aborted) return;
        setValidation({ diagnostics: r.diagnostics ?? [], ms: r.ms ?? null, pending: false, error: null, platform: target });
      } catch (e) {
        if (ctl.signal.aborted) return;
        setValidation((v) => ({ ...v, pending: false, error: `validation failed: ${errorText(e)}` }));
      }
    }, VALIDATE_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [model, target, boot.status]);

  // The document changed: the running services are stale.
  useEffect(() => {
    if (!servicesUp.current) return;
    if (stopTimer.current) clearTimeout(stopTimer.current);
    stopTimer.current = setTimeout(() => stopServices(), STOP_AFTER_EDIT_MS);
  }, [model, stopServices]);

  // ------------------------------------------------------------ save
  const dirty = saved !== null && model !== saved;
  const saveState: SaveState =
    saveOp === "saving"
      ? { kind: "saving" }
      : saveOp === "conflict"
        ? { kind: "conflict" }
        : typeof saveOp === "object"
          ? { kind: "error", message: saveOp.error }
          : dirty
            ? { kind: "dirty" }
            : { kind: "saved" };

  const save = useCallback(async () => {
    if (boot.status !== "ready" || saveOp === "saving") return;
    const m = model;
    // Without a file (svc design with no DOC), the first save names one.
    let path: string | undefined;
    if (session && session.path === null) {
      const id = typeof m.document.id === "string" ? m.document.id : "graph";
      path = window.prompt("Save as: the path of the new .graph.json file", `${id}.graph.json`)?.trim() || undefined;
      if (!path) return;
    }
    setSaveOp("saving");
    try {
      const r = await putDocument(m, etag, path);
      setEtag(r.etag);
      setSaved(m);
      setSaveOp("idle");
      if (path) setSession(await getSession());
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) setSaveOp("conflict");
      else setSaveOp({ error: errorText(e) });
    }
  }, [boot.status, saveOp, model, etag, session]);

  const reload = useCallback(() => {
    if (dirty && !window.confirm("Drop the unsaved changes here and load the file from disk?")) return;
    void load();
  }, [dirty, load]);

  useEffect(() => {
    const id = typeof model.document.id === "string" ? model.document.id : "untitled";
    document.title = `${dirty ? "● " : ""}${id} — svc design`;
  }, [dirty, model.document.id]);

  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  // ------------------------------------------------------------ export
  const doExport = useCallback(
    async (platform: Platform, dir: string) => {
      setExportState({ busy: true, result: null, error: false });
      try {
        if (dir) {
          const r = await exportToDir(model, platform, dir);
          const n = Array.isArray(r.files) ? r.files.length : typeof r.files === "number" ? r.files : null;
          setExportState({ busy: false, result: `exported ${n ?? "the"} files to ${r.dir ?? dir}`, error: false });
        } else {
          const blob = await exportZip(model, platform);
          const name = `${typeof model.document.id === "string" ? model.document.id : "service"}-${platform}.zip`;
          const url = URL.createObjectURL(blob);
          const a = document.createElement("a");
          a.href = url;
          a.download = name;
          document.body.appendChild(a);
          a.click();
          a.remove();
          setTimeout(() => URL.revokeObjectURL(url), 10_000);
          setExportState({ busy: false, result: `downloaded ${name} (${blob.size} bytes)`, error: false });
        }
      } catch (e) {
        const diags = e instanceof ApiError ? e.diagnostics : [];
        const codes = diags.length ? `: ${[...new Set(diags.map((d) => d.code))].join(", ")}` : "";
        setExportState({ busy: false, result: `export failed: ${errorText(e)}${codes}`, error: true });
      }
    },
    [model],
  );

  // ------------------------------------------------------------ actions
  const addFromPalette = useCallback(
    (kind: string) => {
      const el = document.querySelector(".canvas")?.getBoundingClientRect();
      const centre = el ? flow.screenToFlowPosition({ x: el.left + el.width / 2, y: el.top + el.height / 2 }) : { x: 0, y: 0 };
      // Nudge each new node so consecutive adds do not stack exactly.
      const nudge = (model.nodes.length % 5) * 24;
      const id = uniqueNodeId(model, kind);
      editor.apply((m) => addNode(m, kind, { x: centre.x - 80 + nudge, y: centre.y - 30 + nudge }, id).model);
      dispatch({ type: "select", selection: { kind: "node", id } });
    },
    [editor, flow, model],
  );

  const deleteSelection = useCallback(() => {
    const sel = state.selection;
    if (!sel) return;
    if (sel.kind === "node") editor.apply((m) => removeNode(m, sel.id));
    else editor.apply((m) => removeGraphEdge(m, sel.id));
    dispatch({ type: "select", selection: null });
  }, [editor, state.selection]);

  // The keyboard handler is registered once and reads the newest state here.
  const latest = useRef({ save, deleteSelection });
  latest.current = { save, deleteSelection };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const k = e.key.toLowerCase();
      if (mod && k === "z") {
        e.preventDefault();
        dispatch({ type: e.shiftKey ? "redo" : "undo" });
        return;
      }
      if (e.ctrlKey && !e.metaKey && k === "y") {
        e.preventDefault();
        dispatch({ type: "redo" });
        return;
      }
      if (mod && k === "s") {
        e.preventDefault();
        void latest.current.save();
        return;
      }
      if (e.defaultPrevented) return;
      if (k === "escape") {
        if (isEditable(e.target)) (e.target as HTMLElement).blur?.();
        dispatch({ type: "select", selection: null });
        return;
      }
      if ((k === "delete" || k === "backspace") && !isEditable(e.target)) {
        e.preventDefault();
        latest.current.deleteSelection();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const flash = useCallback((msg: string) => {
    setNotice(msg);
    setTimeout(() => setNotice((n) => (n === msg ? null : n)), 3000);
  }, []);

  const diagsByNode = useMemo(() => diagnosticsByNode(validation.diagnostics, model), [validation.diagnostics, model]);
  const appData = useMemo(
    () => ({ platform: target, capabilities: caps, connectors, diagnostics: validation.diagnostics }),
    [target, caps, connectors, validation.diagnostics],
  );
  const platforms = (session?.platforms?.length ? session.platforms : [...PLATFORMS]) as Platform[];

  if (boot.status === "loading") return <div className="boot">Loading…</div>;
  if (boot.status === "failed") {
    return (
      <div className="boot failed">
        <h1>svc design</h1>
        <p className="err" data-testid="load-error">
          {boot.message}
        </p>
        {boot.diagnostics.length ? (
          <section className="diagnostics" data-testid="diagnostics">
            <ul>
              {boot.diagnostics.map((d, i) => (
                <li key={i} className={`diag sev-${d.severity}`} data-testid={`diagnostic-${d.code}`}>
                  <span className="sev">{d.severity}</span>
                  <code className="code">{d.code}</code>
                  <span className="msg">{d.message}</span>
                  {d.position ? <span className="dim"> line {d.position.line}, column {d.position.column}</span> : null}
                  {d.hint ? <div className="hint">hint: {d.hint}</div> : null}
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        <button type="button" onClick={() => void load()}>
          Reload
        </button>
      </div>
    );
  }

  return (
    <EditorContext.Provider value={editor}>
      <AppDataContext.Provider value={appData}>
        <RunHighlightContext.Provider value={runOpen ? marks : NO_MARKS}>
        <div className={`app${runOpen ? " with-run" : ""}`}>
          <Toolbar
            title={typeof model.document.id === "string" ? model.document.id : "untitled"}
            path={session?.path ?? null}
            platforms={platforms}
            target={target}
            onTarget={(p) => editor.apply((m) => setTarget(m, p))}
            canUndo={editor.canUndo}
            canRedo={editor.canRedo}
            onUndo={() => dispatch({ type: "undo" })}
            onRedo={() => dispatch({ type: "redo" })}
            onLayout={() => editor.apply(autoLayout)}
            onSave={() => void save()}
            save={saveState}
            newFile={etag === null}
            onReload={reload}
            onExport={(p, dir) => void doExport(p, dir)}
            exportState={exportState}
            runOpen={runOpen}
            onRun={toggleRun}
          />
          <Palette caps={caps[target]} platform={target} onAdd={addFromPalette} />
          <main className="centre">
            <Canvas diagsByNode={diagsByNode} onNotice={flash} isKindEnabled={(k) => kindStatus(caps[target], target, k).enabled} fitKey={panelChanges} />
            {notice ? <div className="notice">{notice}</div> : null}
            <DiagnosticsPanel status={validation} />
          </main>
          <Inspector />
          {/* Kept mounted when closed: its history stays. */}
          <div className="run-column" hidden={!runOpen}>
            <RunPanel
              model={model}
              platforms={platforms}
              onHighlight={setMarks}
              onSelectNode={(id) => dispatch({ type: "select", selection: { kind: "node", id } })}
              onBusy={onRunBusy}
            />
          </div>
          <Datalists model={model} />
        </div>
        </RunHighlightContext.Provider>
      </AppDataContext.Provider>
    </EditorContext.Provider>
  );
}

/** Ids offered in reference fields (outputKey, toolId, agent, ...). */
function Datalists({ model }: { model: Model }) {
  const ids = (key: string) => listOf(model, key).map((x) => String(x.id ?? ""));
  const lists: [string, string[]][] = [
    ["dl-state", stateFieldNames(model)],
    ["dl-tools", ids("tools")],
    ["dl-agents", ids("agents")],
    ["dl-mcp", ids("mcpServers")],
    ["dl-nodes", model.nodes.map((n) => n.node.id)],
  ];
  return (
    <>
      {lists.map(([id, values]) => (
        <datalist id={id} key={id}>
          {values.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      ))}
    </>
  );
}
