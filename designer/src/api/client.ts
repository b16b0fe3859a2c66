// The JSON API of `svc design` (docs/designer.md). Every call carries the
// session token the address was opened with.

import type { Diagnostic, Model, Platform } from "../model/types.ts";
import { randomId } from "../run/request.ts";

const TOKEN_KEY = "svc-design-token";

let token: string | null = null;

/** Reads `?token=` once, keeps it in memory and sessionStorage (a reload keeps
 * working), and takes it out of the address bar. */
export function initToken(): string | null {
  const params = new URLSearchParams(location.search);
  const fromUrl = params.get("token");
  if (fromUrl) {
    token = fromUrl;
    try {
      sessionStorage.setItem(TOKEN_KEY, fromUrl);
    } catch {
      /* storage may be off; memory is enough */
    }
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  } else {
    try {
      token = sessionStorage.getItem(TOKEN_KEY);
    } catch {
      token = null;
    }
  }
  return token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
  get diagnostics(): Diagnostic[] {
    const b = this.body as { diagnostics?: unknown; error?: { diagnostics?: unknown } } | null;
    const d = b?.diagnostics ?? b?.error?.diagnostics;
    return Array.isArray(d) ? (d as Diagnostic[]) : [];
  }
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  const h: Record<string, string> = { ...headers };
  if (token) h["X-Svc-Token"] = token;
  if (body !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: "no-store",
  });
  if (!res.ok) {
    let parsed: unknown = null;
    const text = await res.text();
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    const err = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? (typeof parsed === "string" && parsed ? parsed : res.statusText), parsed);
  }
  return res;
}

async function json<T>(method: string, path: string, body?: unknown, headers?: Record<string, string>, signal?: AbortSignal): Promise<T> {
  return (await (await call(method, path, body, headers, signal)).json()) as T;
}

export interface Session {
  path: string | null;
  platforms: Platform[];
  version: string;
}

export interface Requirement {
  requirement: string;
  reason: string;
}

/** What one backend builds (`info().capabilities`). */
export interface BackendCapabilities {
  nodeKinds: string[];
  toolKinds?: string[];
  transports?: string[];
  auth?: string[];
  features?: string[];
  reasons: Requirement[];
}

export interface Connector {
  name: string;
  version: string;
  entries: string[];
  platforms: string[];
  configSchema?: unknown;
}

export interface DocumentAnswer {
  model: unknown;
  etag: string | null;
  diagnostics: Diagnostic[];
}

export const getSession = () => json<Session>("GET", "/api/session");

/** Per platform; accepts `info()` (capabilities nested) or the bare capabilities. */
export async function getCapabilities(): Promise<Record<string, BackendCapabilities>> {
  const raw = await json<Record<string, unknown>>("GET", "/api/capabilities");
  const out: Record<string, BackendCapabilities> = {};
  for (const [platform, info] of Object.entries(raw ?? {})) {
    const i = (info ?? {}) as { capabilities?: unknown };
    const c = (i.capabilities ?? i) as Partial<BackendCapabilities> & { reasons?: unknown };
    let reasons: Requirement[] = [];
    if (Array.isArray(c.reasons)) reasons = c.reasons as Requirement[];
    else if (c.reasons && typeof c.reasons === "object") {
      reasons = Object.entries(c.reasons as Record<string, string>).map(([requirement, reason]) => ({ requirement, reason }));
    }
    out[platform] = { ...c, nodeKinds: Array.isArray(c.nodeKinds) ? c.nodeKinds : [], reasons };
  }
  return out;
}

export async function getConnectors(): Promise<Connector[]> {
  const r = await json<{ connectors?: unknown[] }>("GET", "/api/connectors");
  return (r.connectors ?? []).map((c) => {
    const o = (c ?? {}) as Record<string, unknown>;
    const entries = Array.isArray(o.entries)
      ? o.entries.map((e) => (typeof e === "string" ? e : String((e as { name?: unknown })?.name ?? ""))).filter(Boolean)
      : [];
    return {
      name: String(o.name ?? ""),
      version: String(o.version ?? ""),
      entries,
      platforms: Array.isArray(o.platforms) ? o.platforms.map(String) : [],
      configSchema: o.configSchema,
    };
  });
}

export const getDocument = () => json<DocumentAnswer>("GET", "/api/document");

/** `path`: where to save a document that has no file yet (svc design without DOC). */
export function putDocument(model: Model, etag: string | null, path?: string) {
  const headers: Record<string, string> = etag === null ? { "If-None-Match": "*" } : { "If-Match": etag };
  return json<{ etag: string; bytes: number }>("PUT", "/api/document", path ? { model, path } : { model }, headers);
}

export function validate(model: Model, platform: Platform, signal?: AbortSignal) {
  return json<{ diagnostics: Diagnostic[]; ms: number }>("POST", "/api/validate", { model, platform }, undefined, signal);
}

export function exportToDir(model: Model, platform: Platform, dir: string) {
  return json<{ dir: string; files: unknown }>("POST", "/api/export", { model, platform, zip: false, dir });
}

export async function exportZip(model: Model, platform: Platform): Promise<Blob> {
  const res = await call("POST", "/api/export", { model, platform, zip: true });
  return res.blob();
}

// ------------------------------------------------------------ runs

/** One target's answer of `POST /api/run` (docs/designer.md, Running a graph). */
export interface RunResult {
  phase: "compile" | "build" | "start" | "run";
  status?: number;
  body?: unknown;
  events?: unknown[];
  ms?: number;
  build?: { reused: boolean; ms: number; dir?: string };
  error?: { code: string; message: string };
  diagnostics?: Diagnostic[];
  locations?: { node?: string; line?: number; column?: number; message: string; file: string; fileLine: number }[];
  log?: string;
  port?: number;
  pid?: number;
}

export interface RunAnswer {
  runs: Record<string, RunResult>;
  differences: { field: string; values: Record<string, unknown> }[];
}

export interface RunBody {
  model: Model;
  platforms: Platform[];
  request: unknown;
  llm: { mode: "echo" } | { mode: "provider"; env: Record<string, string> };
}

/** A line of a run's progress. */
export type RunLine = { type: "phase"; platform: Platform; phase: string } | { type: "event"; platform: Platform; event: unknown };

/** Runs on each platform and resolves with the answer; meanwhile every
 * line of the run's progress (phases, run events with the model's tokens)
 * goes to `onLine` as it comes, through `GET /api/run/progress`. */
export async function run(body: RunBody, onLine: (line: RunLine) => void): Promise<RunAnswer> {
  const progress = randomId();
  const answer = json<RunAnswer>("POST", "/api/run", { ...body, progress });
  const ended = answer.then(
    () => "ok" as const,
    () => "failed" as const,
  );
  type Progress = { lines: RunLine[]; next: number; done: boolean };
  const poll = (after: number) => json<Progress>("GET", `/api/run/progress?id=${progress}&after=${after}`).catch(() => null);
  let after = 0;
  // Each call waits for something new, until the run says it is over or
  // its POST is answered.
  for (;;) {
    const p = await Promise.race([poll(after), ended]);
    if (p === "failed") break;
    if (p === "ok") {
      // Over: what came before the answer, at once (the run is done).
      (await poll(after))?.lines.forEach(onLine);
      break;
    }
    if (!p) {
      // The progress call failed (the server is busy or gone): wait a little.
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    p.lines.forEach(onLine);
    after = p.next;
    if (p.done) break;
  }
  return answer;
}

export const stopRuns = () => json<{ stopped: string[] }>("POST", "/api/run/stop", {});

/** A run saved as a case of the document's test file (`NAME.tests.json`,
 * docs/testing.md): the request sent and one target's answer. */
export interface SaveCaseBody {
  model: Model;
  name: string;
  request: unknown;
  status: number;
  body: unknown;
  events?: unknown[];
}

export const saveCase = (body: SaveCaseBody) => json<{ path: string; cases: number }>("POST", "/api/cases", body);

/** Stops the services when the page goes away (the request outlives it). */
export function stopRunsOnExit(): void {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers["X-Svc-Token"] = token;
  void fetch("/api/run/stop", { method: "POST", headers, body: "{}", keepalive: true }).catch(() => undefined);
}
