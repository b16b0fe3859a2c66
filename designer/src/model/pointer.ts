// Where a diagnostic points in the editor. Pointers are JSON pointers into
// the saved IR document; `logical.nodes` and `logical.edges` are in the
// same order as the model's `nodes` and `edges`, so indexes carry over.

import type { Diagnostic, Model, Platform } from "./types.ts";
import { PLATFORMS, listOf } from "./types.ts";

export type Section = "node" | "document" | "state" | "tools" | "mcpServers" | "agents" | "settings";

export interface Location {
  /** The inspector tab that shows the place. */
  section: Section;
  nodeId?: string;
  /** Index in `logical.<section>` for list sections. */
  index?: number;
  /** The top-level field of the form: `outputKey` in `/logical/nodes/3/outputKey`. */
  field?: string;
  /** The pointer's segments below `field` (`["user"]` for `prompt/user`). */
  rest?: string[];
  /** A body tab (`/bodiesByPlatform/<platform>/<id>`). */
  bodyPlatform?: Platform;
  /** A connector template (`/codegen/templates/<platform>/<id>`). */
  templatePlatform?: Platform;
}

export function parsePointer(pointer: string): string[] {
  if (!pointer || pointer === "/") return [];
  return pointer
    .replace(/^\//, "")
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function asPlatform(s: string | undefined): Platform | undefined {
  return (PLATFORMS as readonly string[]).includes(s ?? "") ? (s as Platform) : undefined;
}

export function locate(d: Pick<Diagnostic, "pointer" | "node">, model: Model): Location {
  const seg = parsePointer(d.pointer ?? "");
  const byId = (id: string | undefined) => (id && model.nodes.some((n) => n.node.id === id) ? id : undefined);
  const nodeFromDiag = byId(d.node);

  if (seg[0] === "logical" && seg[1] === "nodes" && seg[2] !== undefined) {
    const i = Number(seg[2]);
    const nodeId = model.nodes[i]?.node.id ?? nodeFromDiag;
    return { section: "node", nodeId, field: seg[3], rest: seg.slice(4) };
  }
  if (seg[0] === "logical" && seg[1] === "edges" && seg[2] !== undefined) {
    const e = model.edges[Number(seg[2])];
    return { section: "node", nodeId: byId(e?.from) ?? nodeFromDiag };
  }
  if (seg[0] === "bodiesByPlatform" && seg.length >= 3) {
    const bodyPlatform = asPlatform(seg[1]);
    const nodeId = byId(seg[2]);
    if (nodeId) return { section: "node", nodeId, bodyPlatform };
    const tools = listOf(model, "tools");
    const t = tools.findIndex((x) => x.id === seg[2]);
    if (t >= 0) return { section: "tools", index: t, bodyPlatform };
    const a = listOf(model, "agents").findIndex((x) => x.id === seg[2]);
    if (a >= 0) return { section: "agents", index: a, bodyPlatform };
    return { section: "document", field: "bodiesByPlatform", nodeId: nodeFromDiag };
  }
  if (seg[0] === "codegen" && seg[1] === "templates" && seg.length >= 4) {
    return { section: "node", nodeId: byId(seg[3]) ?? nodeFromDiag, templatePlatform: asPlatform(seg[2]), field: seg[4] };
  }
  if (seg[0] === "logical" && seg[1] === "settings") {
    return { section: "settings", field: seg[2], rest: seg.slice(3), nodeId: nodeFromDiag };
  }
  if (seg[0] === "security") {
    return { section: "settings", field: "security", rest: seg.slice(1), nodeId: nodeFromDiag };
  }
  if (seg[0] === "logical" && (seg[1] === "tools" || seg[1] === "mcpServers" || seg[1] === "agents" || seg[1] === "state")) {
    return {
      section: seg[1] as Section,
      index: seg[2] === undefined ? undefined : Number(seg[2]),
      field: seg[3],
      rest: seg.slice(4),
      nodeId: nodeFromDiag,
    };
  }
  if (nodeFromDiag) return { section: "node", nodeId: nodeFromDiag };
  return { section: "document", field: seg[0] === "logical" ? seg[1] : seg[0] };
}

/** Diagnostics per node id: those that name the node or point into it. */
export function diagnosticsByNode(diags: Diagnostic[], model: Model): Map<string, Diagnostic[]> {
  const out = new Map<string, Diagnostic[]>();
  for (const d of diags) {
    const loc = locate(d, model);
    const id = loc.nodeId ?? d.node;
    if (!id) continue;
    if (!out.has(id)) out.set(id, []);
    out.get(id)!.push(d);
  }
  return out;
}

/** A diagnostic with its path relative to the form that shows it. */
export interface FieldDiagnostic {
  path: string[];
  d: Diagnostic;
}

/**
 * The diagnostics of one inspector form, with paths relative to the form's
 * object: a node's fields, an entry of a list section, or the settings.
 */
export function formDiagnostics(
  diags: Diagnostic[],
  model: Model,
  where: { section: "node"; nodeId: string } | { section: Exclude<Section, "node">; index?: number },
): FieldDiagnostic[] {
  const out: FieldDiagnostic[] = [];
  for (const d of diags) {
    const loc = locate(d, model);
    if (loc.section !== where.section || loc.bodyPlatform || loc.templatePlatform) continue;
    if (where.section === "node" && loc.nodeId !== where.nodeId) continue;
    if (where.section !== "node" && "index" in where && where.index !== undefined && loc.index !== where.index) continue;
    out.push({ path: loc.field === undefined ? [] : [loc.field, ...(loc.rest ?? [])], d });
  }
  return out;
}

/** Those of `diags` at `path` or below it (`exact`: at `path` only). */
export function diagnosticsAt(diags: FieldDiagnostic[], path: string[], exact = false): Diagnostic[] {
  return diags
    .filter((f) => (exact ? f.path.length === path.length : f.path.length >= path.length) && path.every((s, i) => f.path[i] === s))
    .map((f) => f.d);
}
