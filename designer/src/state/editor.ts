// The editor's state: the undo history of the model, what is selected and
// which inspector tab shows it. Components get it through EditorContext.

import { createContext, useContext } from "react";
import { type History, canRedo, canUndo, commit, createHistory, redo, seal, undo } from "../model/history.ts";
import type { Section } from "../model/pointer.ts";
import type { Model, Platform } from "../model/types.ts";

export type Selection = { kind: "node"; id: string } | { kind: "edge"; id: string } | null;

export interface EditorState {
  history: History<Model>;
  selection: Selection;
  tab: Section;
  /** Which body/template platform tab to show (set by diagnostics too). */
  bodyTab: Platform | null;
  /** An entry of a list tab to open (a diagnostic pointed at it). */
  openItem: { section: Section; index: number } | null;
}

export type Action =
  | { type: "load"; model: Model }
  | { type: "apply"; f: (m: Model) => Model; key?: string; now?: number }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "seal" }
  | { type: "select"; selection: Selection; tab?: Section }
  | { type: "tab"; tab: Section }
  | { type: "bodyTab"; platform: Platform | null }
  | { type: "openItem"; item: { section: Section; index: number } | null };

export function initialState(model: Model): EditorState {
  return { history: createHistory(model), selection: null, tab: "document", bodyTab: null, openItem: null };
}

/** Drops a selection whose node or edge is gone (after undo, delete, rename). */
function keepSelection(sel: Selection, model: Model): Selection {
  if (sel?.kind === "node" && !model.nodes.some((n) => n.node.id === sel.id)) return null;
  return sel;
}

export function reducer(state: EditorState, action: Action): EditorState {
  switch (action.type) {
    case "load":
      return initialState(action.model);
    case "apply": {
      const next = action.f(state.history.present);
      const history = commit(state.history, next, { key: action.key, now: action.now });
      if (history === state.history) return state;
      return { ...state, history, selection: keepSelection(state.selection, next) };
    }
    case "undo":
    case "redo": {
      const history = action.type === "undo" ? undo(state.history) : redo(state.history);
      if (history === state.history) return state;
      return { ...state, history, selection: keepSelection(state.selection, history.present) };
    }
    case "seal":
      return { ...state, history: seal(state.history) };
    case "select": {
      const tab = action.tab ?? (action.selection?.kind === "node" ? "node" : state.tab === "node" && !action.selection ? "document" : state.tab);
      return { ...state, selection: action.selection, tab, history: seal(state.history) };
    }
    case "tab":
      return { ...state, tab: action.tab };
    case "bodyTab":
      return { ...state, bodyTab: action.platform };
    case "openItem":
      return { ...state, openItem: action.item };
  }
}

// Typing coalesces per field *focus*: every focus change starts a new epoch,
// and the epoch is part of the coalescing key.
let focusEpoch = 0;
if (typeof document !== "undefined") {
  document.addEventListener("focusin", () => focusEpoch++, true);
}
export function fieldKey(key: string): string {
  return `${key}@${focusEpoch}`;
}

export interface Editor {
  state: EditorState;
  model: Model;
  dispatch: (a: Action) => void;
  /** One user action (a coalescing `key` for typing). */
  apply: (f: (m: Model) => Model, key?: string) => void;
  canUndo: boolean;
  canRedo: boolean;
}

export function makeEditor(state: EditorState, dispatch: (a: Action) => void): Editor {
  return {
    state,
    model: state.history.present,
    dispatch,
    apply: (f, key) => dispatch({ type: "apply", f, key: key === undefined ? undefined : fieldKey(key), now: Date.now() }),
    canUndo: canUndo(state.history),
    canRedo: canRedo(state.history),
  };
}

export const EditorContext = createContext<Editor | null>(null);

export function useEditor(): Editor {
  const e = useContext(EditorContext);
  if (!e) throw new Error("useEditor outside EditorContext");
  return e;
}
