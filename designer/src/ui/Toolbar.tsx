// Top bar: target, undo/redo, layout, save, export and the shortcut help.

import { useState } from "react";
import { PLATFORMS, type Platform } from "../model/types.ts";

export type SaveState =
  | { kind: "saved" }
  | { kind: "dirty" }
  | { kind: "saving" }
  | { kind: "conflict" }
  | { kind: "error"; message: string };

export function saveText(s: SaveState, newFile: boolean): string {
  switch (s.kind) {
    case "saved":
      return newFile ? "new file, not saved yet" : "saved";
    case "dirty":
      return "unsaved changes";
    case "saving":
      return "saving…";
    case "conflict":
      return "the file changed on disk: not saved";
    case "error":
      return `save failed: ${s.message}`;
  }
}

export interface ExportState {
  busy: boolean;
  result: string | null;
  error: boolean;
}

export interface ToolbarProps {
  title: string;
  path: string | null;
  platforms: Platform[];
  target: Platform;
  onTarget: (p: Platform) => void;
  canUndo: boolean;
  canRedo: boolean;
  onUndo: () => void;
  onRedo: () => void;
  onLayout: () => void;
  onSave: () => void;
  save: SaveState;
  newFile: boolean;
  onReload: () => void;
  onExport: (platform: Platform, dir: string) => void;
  exportState: ExportState;
  runOpen: boolean;
  onRun: () => void;
}

const SHORTCUTS: [string, string][] = [
  ["Ctrl/⌘ Z", "undo"],
  ["Ctrl/⌘ Shift Z, Ctrl Y", "redo"],
  ["Delete / Backspace", "delete the selected node or edge"],
  ["Ctrl/⌘ S", "save"],
  ["Escape", "deselect"],
  ["drag from a handle", "connect (from a router: a new branch)"],
];

export function Toolbar(p: ToolbarProps) {
  const [help, setHelp] = useState(false);
  const [exportPlatform, setExportPlatform] = useState<Platform | "">("");
  const [dir, setDir] = useState("");
  const expPlatform = exportPlatform || p.target;
  return (
    <header className="toolbar">
      <div className="brand">
        <b>svc design</b>
        <span className="doc-title" title={p.path ?? "new document"}>
          {p.title}
          {p.path ? <span className="dim"> · {p.path}</span> : null}
        </span>
      </div>
      <div className="group">
        <label htmlFor="toolbar-target" className="picker-label">
          Target platform
        </label>
        <select id="toolbar-target" data-testid="target" value={p.target} onChange={(e) => p.onTarget(e.target.value as Platform)} title="The platform the document targets (target.platform): validation and the palette follow it">
          {(p.platforms.length ? p.platforms : PLATFORMS).map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </div>
      <div className="group">
        <button type="button" data-testid="undo" disabled={!p.canUndo} onClick={p.onUndo} title="Undo (Ctrl/⌘ Z)">
          ↶ Undo
        </button>
        <button type="button" data-testid="redo" disabled={!p.canRedo} onClick={p.onRedo} title="Redo (Ctrl/⌘ Shift Z)">
          ↷ Redo
        </button>
        <button type="button" data-testid="layout" onClick={p.onLayout} title="Lay out every node (one undo step)">
          Auto-layout
        </button>
        <button
          type="button"
          data-testid="run-toggle"
          className={p.runOpen ? "active" : undefined}
          aria-pressed={p.runOpen}
          onClick={p.onRun}
          title="Build and run the graph on one or more targets"
        >
          ▶ Run
        </button>
      </div>
      <div className="group">
        <button type="button" data-testid="save" className="primary" onClick={p.onSave} disabled={p.save.kind === "saving"} title="Save (Ctrl/⌘ S)">
          Save
        </button>
        <span data-testid="save-status" className={`save-status save-${p.save.kind}`} data-state={p.save.kind}>
          {saveText(p.save, p.newFile)}
        </span>
        {p.save.kind === "conflict" ? (
          <button type="button" className="small" onClick={p.onReload} title="Drop the edits here and load the file from disk">
            Reload from disk
          </button>
        ) : null}
      </div>
      <form
        className="group export"
        onSubmit={(e) => {
          e.preventDefault();
          p.onExport(expPlatform, dir.trim());
        }}
      >
        <label htmlFor="toolbar-export-platform" className="picker-label">
          Export platform
        </label>
        <select id="toolbar-export-platform" data-testid="export-platform" value={expPlatform} onChange={(e) => setExportPlatform(e.target.value as Platform)} title="The platform to export the project for">
          {(p.platforms.length ? p.platforms : PLATFORMS).map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
        <input
          type="text"
          data-testid="export-dir"
          value={dir}
          onChange={(e) => setDir(e.target.value)}
          placeholder="folder (empty: download a .zip)"
          aria-label="export folder"
          spellCheck={false}
        />
        <button type="submit" data-testid="export" disabled={p.exportState.busy} title="Compile and export the project">
          {dir.trim() ? "Export to folder" : "Export .zip"}
        </button>
        <span data-testid="export-result" className={`export-result${p.exportState.error ? " err" : ""}`} title={p.exportState.result ?? ""}>
          {p.exportState.busy ? "exporting…" : p.exportState.result}
        </span>
      </form>
      <div className="group help-wrap">
        <button type="button" data-testid="help" onClick={() => setHelp((h) => !h)} aria-expanded={help} title="Keyboard shortcuts">
          ?
        </button>
        {help ? (
          <div className="popover" role="dialog" aria-label="keyboard shortcuts" data-testid="help-popover">
            <b>Keyboard shortcuts</b>
            <table>
              <tbody>
                {SHORTCUTS.map(([k, v]) => (
                  <tr key={k}>
                    <td>
                      <kbd>{k}</kbd>
                    </td>
                    <td>{v}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <button type="button" className="small" onClick={() => setHelp(false)}>
              Close
            </button>
          </div>
        ) : null}
      </div>
    </header>
  );
}
