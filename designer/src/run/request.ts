// The run panel's pure parts: the request form from the state schema, the
// request it sends, and what the answers and events mean for the screen.

import type { Json, JsonObject, Model } from "../model/types.ts";

/** A field of `logical.state`, as the form shows it. */
export interface FormField {
  name: string;
  type: string;
  required: boolean;
  /** The default, as the form's text. */
  initial: string;
  description: string | null;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The form's fields, in the schema's order. */
export function formFields(model: Model): FormField[] {
  const logical = model.document.logical;
  const state = isObject(logical) && Array.isArray(logical.state) ? logical.state : [];
  return state.filter(isObject).map((f) => {
    const type = typeof f.type === "string" ? f.type : "string";
    const d = f.default;
    const initial = d === undefined || d === null ? "" : type === "string" && typeof d === "string" ? d : JSON.stringify(d);
    return {
      name: String(f.name ?? ""),
      type,
      required: f.required === true,
      initial,
      description: typeof f.description === "string" ? f.description : null,
    };
  });
}

export type FormValues = Record<string, string>;

export function initialValues(fields: FormField[]): FormValues {
  return Object.fromEntries(fields.map((f) => [f.name, f.initial]));
}

/** A field's text as its typed value, or what is wrong with it. `undefined`:
 * empty and optional (left out; the service fills its default). */
export function parseField(f: FormField, raw: string | undefined): { value: Json | undefined } | { error: string } {
  const text = (raw ?? "").trim();
  if (text === "") return f.required ? { error: `${f.name} is required` } : { value: undefined };
  switch (f.type) {
    case "string":
      return { value: raw ?? "" };
    case "integer":
    case "number": {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.type === "integer" && !Number.isInteger(n))) return { error: `${f.name} must be ${f.type === "integer" ? "an integer" : "a number"}` };
      return { value: n };
    }
    case "boolean":
      return text === "true" || text === "false" ? { value: text === "true" } : { error: `${f.name} must be true or false` };
    default:
      try {
        const v = JSON.parse(text) as Json;
        if (f.type === "array" && !Array.isArray(v)) return { error: `${f.name} must be a JSON array` };
        if (f.type === "object" && !isObject(v)) return { error: `${f.name} must be a JSON object` };
        return { value: v };
      } catch {
        return { error: `${f.name} is not valid JSON` };
      }
  }
}

/** Each field's problem, by name (the form shows them next to the inputs). */
export function formProblems(fields: FormField[], values: FormValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const r = parseField(f, values[f.name]);
    if ("error" in r) out[f.name] = r.error;
  }
  return out;
}

/** The state the form stands for, or the first problem with it. Empty
 * optional fields are left out (the service fills their defaults). */
export function stateFromForm(fields: FormField[], values: FormValues): { state: JsonObject } | { error: string } {
  const state: JsonObject = {};
  for (const f of fields) {
    const r = parseField(f, values[f.name]);
    if ("error" in r) return r;
    if (r.value !== undefined) state[f.name] = r.value;
  }
  return { state };
}

/** The form as a state even when it has problems (for the raw JSON view):
 * what parses is typed, the rest kept as typed text, empty fields left out. */
export function draftState(fields: FormField[], values: FormValues): JsonObject {
  const state: JsonObject = {};
  for (const f of fields) {
    const raw = values[f.name] ?? "";
    if (raw.trim() === "") continue;
    const r = parseField(f, raw);
    state[f.name] = "error" in r || r.value === undefined ? raw : r.value;
  }
  return state;
}

/** The form's values for a state (raw JSON back to the form). */
export function valuesFromState(fields: FormField[], state: JsonObject): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    const v = state[f.name];
    out[f.name] = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

/** Whether runs of this graph keep threads (and may pause). */
export function hasCheckpointer(model: Model): boolean {
  const logical = model.document.logical;
  const settings = isObject(logical) ? logical.settings : undefined;
  const cp = isObject(settings) ? settings.checkpointer : undefined;
  return isObject(cp) && typeof cp.type === "string" && cp.type !== "none";
}

/** 32 random hex digits: a thread id shared by every target, a run's progress id. */
export function randomId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A resume value as typed: JSON when it parses, else the text itself. */
export function resumeValue(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
}

/** A run event of docs/http-contract.md (Streaming). */
export interface RunEvent {
  seq?: number;
  type: string;
  node?: string;
  data?: JsonObject;
}

/** One row of a timeline: a node's run (its tokens joined) or a run event. */
export interface TimelineRow {
  key: string;
  node: string | null;
  label: string;
  tokens: string;
  patch: Json | undefined;
  state: "running" | "done" | "failed" | "info";
}

export function timeline(events: RunEvent[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const open = new Map<string, TimelineRow>();
  for (const [i, e] of events.entries()) {
    const node = e.node ?? null;
    const row = node ? open.get(node) : undefined;
    switch (e.type) {
      case "node_started": {
        const r: TimelineRow = { key: `${i}`, node, label: `${node} (${String(e.data?.kind ?? "")})`, tokens: "", patch: undefined, state: "running" };
        rows.push(r);
        if (node) open.set(node, r);
        break;
      }
      case "token":
        if (row) row.tokens += String(e.data?.delta ?? "");
        break;
      case "tokens_discarded":
        if (row) row.tokens = "";
        break;
      case "node_finished":
        if (row) {
          row.state = "done";
          row.patch = e.data?.patch;
          if (node) open.delete(node);
        }
        break;
      case "run_failed":
        for (const r of open.values()) r.state = "failed";
        rows.push({ key: `${i}`, node, label: `run failed: ${String(e.data?.code ?? "")} ${String(e.data?.message ?? "")}`, tokens: "", patch: undefined, state: "failed" });
        break;
      default:
        rows.push({ key: `${i}`, node, label: e.type.replace(/_/g, " "), tokens: "", patch: undefined, state: "info" });
    }
  }
  return rows;
}

/** What the canvas highlights: the node running now, and those done. */
export function highlights(events: RunEvent[]): Map<string, "running" | "visited"> {
  const out = new Map<string, "running" | "visited">();
  for (const e of events) {
    if (!e.node) continue;
    if (e.type === "node_started") out.set(e.node, "running");
    else if (e.type === "node_finished" || e.type === "interrupted") out.set(e.node, "visited");
  }
  return out;
}

/** A short line for the history: the status of each target. */
export function summary(runs: Record<string, { status?: number; phase?: string; error?: { code?: string } }>): string {
  return Object.entries(runs)
    .map(([p, r]) => `${p} ${r.status ?? r.error?.code ?? r.phase ?? "?"}`)
    .join(", ");
}

/** A duration as the panel shows it: "12.5 ms", "1.8 s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** What a run spent on model calls, from its answer's `usage` (an error
 * answer's too): "10 in, 16 out tokens · 2 calls · 3 attempts"; null when
 * the run asked no model. */
export function usageText(body: unknown): string | null {
  const usage = typeof body === "object" && body !== null ? (body as Record<string, unknown>).usage : undefined;
  if (typeof usage !== "object" || usage === null) return null;
  const u = usage as Record<string, unknown>;
  const n = (k: string) => (typeof u[k] === "number" ? (u[k] as number) : 0);
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return `${n("inputTokens")} in, ${n("outputTokens")} out tokens · ${plural(n("modelCalls"), "call")} · ${plural(n("attempts"), "attempt")}`;
}

/** A target's build: "cached build" when the cache had it, else its time. */
export function buildText(build: { reused: boolean; ms: number }): string {
  return build.reused ? "cached build" : `built in ${formatMs(build.ms)}`;
}

interface Ran {
  phase?: string;
  error?: unknown;
  body?: unknown;
}

/** How the targets' answers compare: "same" only when every target ran and
 * nothing differs; "incomplete" when one stopped before answering. */
export function comparison(runs: Record<string, Ran>, differences: unknown[], platforms: string[]): "same" | "differ" | "incomplete" {
  if (differences.length) return "differ";
  return platforms.every((p) => runs[p] && runs[p].phase === "run" && !runs[p].error) ? "same" : "incomplete";
}

/** The targets whose answer is a pause (`{"interrupt", "threadId"}`). */
export function interrupted(runs: Record<string, Ran>): string[] {
  return Object.keys(runs).filter((p) => isObject(runs[p]?.body) && (runs[p].body as JsonObject).interrupt !== undefined);
}

/** The thread a resume goes to: the one the run was sent with, else the one
 * a paused target answered with. */
export function resumeThread(sent: string | null, runs: Record<string, Ran>): string | null {
  if (sent) return sent;
  for (const p of interrupted(runs)) {
    const id = (runs[p].body as JsonObject).threadId;
    if (typeof id === "string" && id) return id;
  }
  return null;
}


/** The answer a run is saved from as a test case: the first target (in the
 * order shown) that answered over HTTP (a status and a body, no failure of
 * its own). */
export function caseSource(
  runs: Record<string, Ran & { status?: number; error?: unknown; events?: unknown[] }>,
  platforms: string[],
): { platform: string; status: number; body: unknown; events?: unknown[] } | null {
  for (const p of platforms) {
    const r = runs[p];
    if (r && r.error === undefined && typeof r.status === "number" && r.body !== undefined) {
      return { platform: p, status: r.status, body: r.body, ...(r.events ? { events: r.events } : {}) };
    }
  }
  return null;
}
