// The flat editing model of docs/designer.md, as the API sends and takes it.
// Documents are free-form JSON underneath (unknown keys are kept), so the
// IR parts are typed loosely and read through small helpers.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const PLATFORMS = ["go", "java-svc", "python-svc"] as const;
export type Platform = (typeof PLATFORMS)[number];

export interface Position {
  x: number;
  y: number;
}

/** A node of `logical.nodes`, every key kept in its order. */
export interface IrNode extends JsonObject {
  id: string;
  kind: string;
}

export interface TemplateRef extends JsonObject {
  connector: string;
  version: string;
}

export interface FlatNode {
  node: IrNode;
  position: Position | null;
  /** `bodiesByPlatform[platform][id]` */
  bodies: Record<string, string>;
  /** `codegen.templates[platform][id]` */
  templates: Record<string, TemplateRef>;
}

export interface Edge {
  from: string;
  to: string;
}

export interface Model {
  /** The rest of the IR document, with `null` slots where flat parts were taken out. */
  document: JsonObject;
  nodes: FlatNode[];
  edges: Edge[];
}

/** A diagnostic as `svc compile --format json` writes it. */
export interface Diagnostic {
  severity: string;
  code: string;
  message: string;
  node?: string;
  pointer?: string;
  position?: { line: number; column: number };
  hint?: string;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The platform the document targets (`target.platform`), else go. */
export function targetOf(model: Model): Platform {
  const target = model.document.target;
  const p = isObject(target) ? target.platform : undefined;
  return (PLATFORMS as readonly string[]).includes(p as string) ? (p as Platform) : "go";
}

export function logicalOf(model: Model): JsonObject {
  const logical = model.document.logical;
  return isObject(logical) ? logical : {};
}

/** `logical.<key>` as a list (tools, mcpServers, agents, state). */
export function listOf(model: Model, key: string): JsonObject[] {
  const v = logicalOf(model)[key];
  return Array.isArray(v) ? (v.filter(isObject) as JsonObject[]) : [];
}

export function stateFieldNames(model: Model): string[] {
  return listOf(model, "state")
    .map((f) => f.name)
    .filter((n): n is string => typeof n === "string");
}

/** Fills in what a server may leave out, so the editor can rely on it. */
export function normalizeModel(raw: unknown): Model {
  const m = isObject(raw) ? raw : {};
  const nodes = Array.isArray(m.nodes) ? m.nodes : [];
  return {
    document: isObject(m.document) ? m.document : {},
    nodes: nodes.filter(isObject).map((n) => {
      const node = (isObject(n.node) ? n.node : { id: "", kind: "" }) as IrNode;
      const pos = n.position;
      return {
        node,
        position:
          isObject(pos) && typeof pos.x === "number" && typeof pos.y === "number"
            ? { x: pos.x, y: pos.y }
            : null,
        bodies: (isObject(n.bodies) ? n.bodies : {}) as Record<string, string>,
        templates: (isObject(n.templates) ? n.templates : {}) as Record<string, TemplateRef>,
      };
    }),
    edges: (Array.isArray(m.edges) ? m.edges : [])
      .filter(isObject)
      .map((e) => ({ from: String(e.from ?? ""), to: String(e.to ?? "") })),
  };
}
