// Edits of the flat model. Every function is pure: it returns a new model
// (sharing what did not change) so history snapshots stay cheap and safe.

import {
  type Edge,
  type FlatNode,
  type IrNode,
  type Json,
  type JsonObject,
  type Model,
  type Platform,
  type Position,
  type TemplateRef,
  isObject,
  listOf,
  logicalOf,
  stateFieldNames,
} from "./types.ts";
import { parallelRefs } from "./parallel.ts";

/** Palette order: the basic kinds first, then agents, retrieval, subgraphs and hitl. */
export const NODE_ID_RE = /^[A-Za-z][A-Za-z0-9_]*$/;
const MAX_ID_LEN = 128;

/** The spec's key order, used when a key has to be created. */
const TOP_LEVEL_ORDER = [
  "irVersion",
  "id",
  "name",
  "description",
  "version",
  "target",
  "security",
  "logical",
  "bodiesByPlatform",
  "codegen",
  "presentation",
  "extensions",
];
const LOGICAL_ORDER = ["state", "nodes", "edges", "tools", "mcpServers", "agents", "settings"];

// ---------------------------------------------------------------- helpers

/** Sets `key` on a copy of `obj`: in place when present, else at the end
 * (or before the first key that follows it in `order`). `undefined` removes. */
export function withKey(obj: JsonObject, key: string, value: Json | undefined, order?: string[]): JsonObject {
  if (value === undefined) {
    if (!(key in obj)) return obj;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(obj)) if (k !== key) out[k] = v;
    return out;
  }
  if (key in obj || !order || !order.includes(key)) return { ...obj, [key]: value };
  const rank = order.indexOf(key);
  const out: JsonObject = {};
  let placed = false;
  for (const [k, v] of Object.entries(obj)) {
    const r = order.indexOf(k);
    if (!placed && r > rank) {
      out[key] = value;
      placed = true;
    }
    out[k] = v;
  }
  if (!placed) out[key] = value;
  return out;
}

/** Renames a key keeping its place in the object. */
function renameKey(obj: JsonObject, from: string, to: string): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) out[k === from ? to : k] = v;
  return out;
}

function orderFor(path: (string | number)[]): string[] | undefined {
  if (path.length === 0) return TOP_LEVEL_ORDER;
  if (path.length === 1 && path[0] === "logical") return LOGICAL_ORDER;
  return undefined;
}

type OrderOf = (parentPath: (string | number)[]) => string[] | undefined;

function setIn(value: Json | undefined, path: (string | number)[], leaf: Json | undefined, full: (string | number)[], order: OrderOf = orderFor): Json | undefined {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  const parentPath = full.slice(0, full.length - path.length);
  if (typeof head === "number") {
    const arr = Array.isArray(value) ? [...value] : [];
    const child = setIn(arr[head], rest, leaf, full, order);
    if (child === undefined) arr.splice(head, 1);
    else arr[head] = child;
    return arr;
  }
  const obj = isObject(value) ? value : {};
  const child = setIn(obj[head], rest, leaf, full, order);
  return withKey(obj, head, child, order(parentPath));
}

/** Sets (or removes) a value at a path inside any JSON value; new keys go last. */
export function setPath(value: Json | undefined, path: (string | number)[], leaf: Json | undefined): Json | undefined {
  return setIn(value, path, leaf, path, () => undefined);
}

/** Sets a value at a path inside a node (`["prompt", "user"]`). */
export function setNodePath(model: Model, id: string, path: (string | number)[], value: Json | undefined): Model {
  if (path.length === 0) {
    return isObject(value) ? mapNode(model, id, (n) => ({ ...n, node: value as IrNode })) : model;
  }
  return mapNode(model, id, (n) => ({ ...n, node: setPath(n.node, path, value) as IrNode }));
}

/** Sets (or with `undefined` removes) a value at a path of the document. */
export function setDocValue(model: Model, path: (string | number)[], value: Json | undefined): Model {
  const document = setIn(model.document, path, value, path) as JsonObject;
  return { ...model, document };
}

export function getDocValue(model: Model, path: (string | number)[]): Json | undefined {
  let cur: Json | undefined = model.document;
  for (const seg of path) {
    if (typeof seg === "number") cur = Array.isArray(cur) ? cur[seg] : undefined;
    else cur = isObject(cur) ? cur[seg] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

export function findNode(model: Model, id: string): FlatNode | undefined {
  return model.nodes.find((n) => n.node.id === id);
}

function mapNode(model: Model, id: string, f: (n: FlatNode) => FlatNode): Model {
  let changed = false;
  const nodes = model.nodes.map((n) => {
    if (n.node.id !== id) return n;
    const next = f(n);
    if (next !== n) changed = true;
    return next;
  });
  return changed ? { ...model, nodes } : model;
}

export function checkId(id: string, taken: string[], what = "node"): string | null {
  if (!NODE_ID_RE.test(id)) return `a ${what} id starts with a letter and has only letters, digits and _`;
  if (id.length > MAX_ID_LEN) return `at most ${MAX_ID_LEN} characters`;
  if (taken.includes(id)) return `\`${id}\` is already taken`;
  return null;
}

// ---------------------------------------------------------------- nodes

/** `<kind>_<n>` with the smallest n not in use (`function_1`, ...). */
export function uniqueNodeId(model: Model, kind: string): string {
  const base = kind === "start" || kind === "end" ? kind : kind.replace(/[^A-Za-z0-9_]/g, "_");
  const taken = new Set([...model.nodes.map((n) => n.node.id), ...listOf(model, "tools").map((t) => String(t.id)), ...listOf(model, "agents").map((a) => String(a.id))]);
  if ((kind === "start" || kind === "end") && !taken.has(base)) return base;
  for (let i = 1; ; i++) {
    const id = `${base}_${i}`;
    if (!taken.has(id)) return id;
  }
}

/** A node of `kind` with the fields it requires, filled with the likeliest values. */
export function defaultNode(model: Model, kind: string, id: string): IrNode {
  const state = stateFieldNames(model);
  const firstField = state[0] ?? "";
  const placeholder = firstField ? `{{${firstField}}}` : "";
  const stringField =
    listOf(model, "state").find((f) => f.type === "string" && typeof f.name === "string")?.name ?? firstField;
  const firstOf = (key: string) => {
    const v = listOf(model, key)[0]?.id;
    return typeof v === "string" ? v : "";
  };
  const endId = model.nodes.find((n) => n.node.kind === "end")?.node.id;
  const node: IrNode = { id, kind };
  switch (kind) {
    case "function":
      node.outputKey = firstField;
      break;
    case "llm":
      node.outputKey = stringField as string;
      node.prompt = { user: placeholder };
      break;
    case "tool":
      node.toolId = firstOf("tools");
      node.input = {};
      node.outputKey = firstField;
      break;
    case "router":
      // A router needs its default (last, without `when`) branch.
      node.branches = endId ? [{ to: endId }] : [];
      break;
    case "response_template":
      node.template = placeholder;
      node.outputKey = stringField as string;
      break;
    case "connector":
      node.config = {};
      break;
    case "agent":
      node.agent = firstOf("agents");
      node.input = placeholder;
      node.outputKey = stringField as string;
      break;
    case "rag":
      node.query = placeholder;
      node.documents = [];
      node.outputKey = firstField;
      break;
    case "intent_classifier":
      node.input = placeholder;
      node.intents = [{ name: "general" }];
      node.outputKey = stringField as string;
      break;
    case "subgraph":
      node.graph = "";
      node.input = {};
      node.output = {};
      break;
    case "hitl":
      node.payload = {};
      node.outputKey = firstField;
      break;
    case "parallel":
      // Branches are added by connecting the node to them; addNode gives it a join.
      node.branches = [];
      node.join = "";
      break;
    case "map": {
      // `over` and `outputKey` must be arrays: the first two array fields.
      const arrays = listOf(model, "state")
        .filter((f) => f.type === "array" && typeof f.name === "string")
        .map((f) => f.name as string);
      node.over = arrays[0] ?? "";
      node.graph = "";
      node.itemField = "item";
      node.input = {};
      node.output = "";
      node.outputKey = arrays[1] ?? arrays[0] ?? "";
      break;
    }
  }
  return node;
}

/** How far right of its parallel a new join goes: room for the branches between. */
const JOIN_OFFSET = 480;

/** Adds a node; a parallel comes with its own join, since it needs exactly one. */
export function addNode(model: Model, kind: string, position: Position | null, wantedId?: string): { model: Model; id: string } {
  const id = wantedId && !findNode(model, wantedId) ? wantedId : uniqueNodeId(model, kind);
  const flat: FlatNode = {
    node: defaultNode(model, kind, id),
    position: position ? roundPos(position) : null,
    bodies: {},
    templates: {},
  };
  let next: Model = { ...model, nodes: [...model.nodes, flat] };
  if (kind === "parallel") {
    const join = addNode(next, "join", position ? { x: position.x + JOIN_OFFSET, y: position.y } : null);
    next = setNodeField(join.model, id, "join", join.id);
  }
  return { model: next, id };
}

/**
 * Removes a node with its edges, the router branches that lead to it and
 * the parallel branches it starts; a parallel whose join it was keeps an
 * empty `join` for the user to fill.
 */
export function removeNode(model: Model, id: string): Model {
  if (!findNode(model, id)) return model;
  const nodes = model.nodes
    .filter((n) => n.node.id !== id)
    .map((n) => {
      const node = followRefs(n.node, id, undefined);
      return node === n.node ? n : { ...n, node };
    });
  const edges = model.edges.filter((e) => e.from !== id && e.to !== id);
  return { ...model, nodes, edges };
}

export function removeNodes(model: Model, ids: string[]): Model {
  return ids.reduce(removeNode, model);
}

/** Renames a node: edges, router branches and the document's slots follow. */
export function renameNode(model: Model, from: string, to: string): { model: Model } | { error: string } {
  if (from === to) return { model };
  if (!findNode(model, from)) return { error: `no node \`${from}\`` };
  const err = checkId(to, model.nodes.map((n) => n.node.id));
  if (err) return { error: err };
  const nodes = model.nodes.map((n) => {
    let node = followRefs(n.node, from, to);
    if (node.id === from) node = { ...node, id: to };
    return node === n.node ? n : { ...n, node };
  });
  const edges = model.edges.map((e) =>
    e.from === from || e.to === from ? { from: e.from === from ? to : e.from, to: e.to === from ? to : e.to } : e,
  );
  // The node's null slots keep their place under the new name, so the saved
  // document changes on the renamed lines only.
  let document = model.document;
  const slotParents: string[][] = [["presentation", "nodes"]];
  for (const key of ["bodiesByPlatform"]) {
    const v = document[key];
    if (isObject(v)) for (const p of Object.keys(v)) slotParents.push([key, p]);
  }
  const templates = isObject(document.codegen) ? document.codegen.templates : undefined;
  if (isObject(templates)) for (const p of Object.keys(templates)) slotParents.push(["codegen", "templates", p]);
  for (const path of slotParents) {
    const parent = getDocValue({ ...model, document }, path);
    if (isObject(parent) && parent[from] === null && !(to in parent)) {
      document = setIn(document, path, renameKey(parent, from, to), path) as JsonObject;
    }
  }
  return { model: { document, nodes, edges } };
}

/**
 * A node whose router branches or parallel branches and join name `from`,
 * renamed to `to`, or with `from` gone when `to` is undefined.
 */
function followRefs(node: IrNode, from: string, to: string | undefined): IrNode {
  if (node.kind === "router" && Array.isArray(node.branches) && node.branches.some((b) => isObject(b) && b.to === from)) {
    const branches = to === undefined
      ? node.branches.filter((b) => !(isObject(b) && b.to === from))
      : node.branches.map((b) => (isObject(b) && b.to === from ? { ...b, to } : b));
    return { ...node, branches };
  }
  if (node.kind !== "parallel") return node;
  let out = node;
  if (Array.isArray(node.branches) && node.branches.includes(from)) {
    const branches = to === undefined ? node.branches.filter((b) => b !== from) : node.branches.map((b) => (b === from ? to : b));
    out = { ...out, branches };
  }
  if (node.join === from) out = { ...out, join: to ?? "" };
  return out;
}

export function roundPos(p: Position): Position {
  return { x: Math.round(p.x), y: Math.round(p.y) };
}

export function moveNodes(model: Model, positions: Record<string, Position>): Model {
  let changed = false;
  const nodes = model.nodes.map((n) => {
    const p = positions[n.node.id];
    if (!p) return n;
    const q = roundPos(p);
    if (n.position && n.position.x === q.x && n.position.y === q.y) return n;
    changed = true;
    return { ...n, position: q };
  });
  return changed ? { ...model, nodes } : model;
}

/** Sets one key of a node (`undefined` removes it), keeping the key order. */
export function setNodeField(model: Model, id: string, key: string, value: Json | undefined): Model {
  return mapNode(model, id, (n) => {
    const node = withKey(n.node, key, value) as IrNode;
    return node === n.node ? n : { ...n, node };
  });
}

export function setNodeBody(model: Model, id: string, platform: Platform, text: string): Model {
  return mapNode(model, id, (n) => {
    if ((n.bodies[platform] ?? "") === text) return n;
    const bodies = { ...n.bodies };
    // An empty editor means "no body" rather than an empty one.
    if (text === "") delete bodies[platform];
    else bodies[platform] = text;
    return { ...n, bodies };
  });
}

export function setNodeTemplate(model: Model, id: string, platform: Platform, ref: TemplateRef | null): Model {
  return mapNode(model, id, (n) => {
    const templates = { ...n.templates };
    if (ref === null) delete templates[platform];
    else templates[platform] = ref;
    return { ...n, templates };
  });
}

export function setTarget(model: Model, platform: Platform): Model {
  const target = model.document.target;
  if (isObject(target) && target.platform === platform) return model;
  return setDocValue(model, ["target"], isObject(target) ? { ...target, platform } : { platform });
}

// ---------------------------------------------------------------- tools and agents

/** A tool's (or custom supervisor's) body lives in `document.bodiesByPlatform`. */
export function docBody(model: Model, platform: Platform, id: string): string {
  const v = getDocValue(model, ["bodiesByPlatform", platform, id]);
  return typeof v === "string" ? v : "";
}

export function setDocBody(model: Model, platform: Platform, id: string, text: string): Model {
  if (docBody(model, platform, id) === text) return model;
  return setDocValue(model, ["bodiesByPlatform", platform, id], text === "" ? undefined : text);
}

/** Renames an entry of `logical.tools` or `logical.agents` and what refers to it. */
export function renameListItem(model: Model, list: "tools" | "agents", from: string, to: string): { model: Model } | { error: string } {
  if (from === to) return { model };
  const items = listOf(model, list);
  const idx = items.findIndex((t) => t.id === from);
  if (idx < 0) return { error: `no entry \`${from}\`` };
  const taken = items.map((t) => String(t.id));
  if (list === "agents") taken.push(...model.nodes.map((n) => n.node.id));
  const err = checkId(to, taken, list === "tools" ? "tool" : "agent");
  if (err) return { error: err };
  let m = setDocValue(model, ["logical", list, idx, "id"], to);
  // Bodies keyed by the id (native tools, custom supervisors).
  const bodies = m.document.bodiesByPlatform;
  if (isObject(bodies)) {
    for (const p of Object.keys(bodies)) {
      const per = bodies[p];
      if (isObject(per) && typeof per[from] === "string" && !(to in per)) {
        m = setDocValue(m, ["bodiesByPlatform", p], renameKey(per, from, to));
      }
    }
  }
  const renameIn = (arr: Json | undefined) =>
    Array.isArray(arr) && arr.includes(from) ? arr.map((x) => (x === from ? to : x)) : undefined;
  m = {
    ...m,
    nodes: m.nodes.map((n) => {
      let node = n.node;
      if (list === "tools") {
        if (node.kind === "tool" && node.toolId === from) node = { ...node, toolId: to };
        const bound = renameIn(node.boundToolIds);
        if (bound) node = { ...node, boundToolIds: bound };
      } else if (node.kind === "agent" && node.agent === from) {
        node = { ...node, agent: to };
      }
      return node === n.node ? n : { ...n, node };
    }),
  };
  if (list === "tools") {
    listOf(m, "agents").forEach((a, i) => {
      const ids = renameIn(a.toolIds);
      if (ids) m = setDocValue(m, ["logical", "agents", i, "toolIds"], ids);
    });
  } else {
    listOf(m, "agents").forEach((a, i) => {
      const ids = renameIn(a.members);
      if (ids) m = setDocValue(m, ["logical", "agents", i, "members"], ids);
    });
  }
  return { model: m };
}

// ---------------------------------------------------------------- edges

/**
 * What the canvas draws: edges, router branches (`branch`, dashed), and a
 * parallel's links to the first node of each of its branches (`parallel`)
 * and to its join (`join`).
 */
export interface GraphEdge {
  id: string;
  from: string;
  to: string;
  kind: "edge" | "branch" | "parallel" | "join";
  /** Index in `model.edges`, or in the router's or parallel's `branches`. */
  index: number;
  label?: string;
}

export function conditionLabel(when: Json | undefined): string {
  if (!isObject(when)) return "default";
  const op = String(when.op ?? "?");
  const value = "value" in when ? ` ${JSON.stringify(when.value)}` : "";
  return `${String(when.field ?? "?")} ${op}${value}`;
}

export function graphEdges(model: Model): GraphEdge[] {
  const out: GraphEdge[] = model.edges.map((e, index) => ({
    id: `e:${index}:${e.from}->${e.to}`,
    from: e.from,
    to: e.to,
    kind: "edge",
    index,
  }));
  for (const { node } of model.nodes) {
    if (node.kind === "parallel") {
      const branches = Array.isArray(node.branches) ? node.branches : [];
      branches.forEach((to, index) => {
        if (typeof to === "string") out.push({ id: `p:${node.id}:${index}`, from: node.id, to, kind: "parallel", index, label: `branch ${index + 1}` });
      });
      const { join } = parallelRefs(node);
      if (join) out.push({ id: `j:${node.id}`, from: node.id, to: join, kind: "join", index: 0, label: "join" });
    }
    if (node.kind !== "router" || !Array.isArray(node.branches)) continue;
    node.branches.forEach((b, index) => {
      if (!isObject(b) || typeof b.to !== "string") return;
      out.push({ id: `b:${node.id}:${index}`, from: node.id, to: b.to, kind: "branch", index, label: conditionLabel(b.when) });
    });
  }
  return out;
}

/** Why `source → target` cannot be drawn, or null. */
export function connectError(model: Model, source: string, target: string): string | null {
  const s = findNode(model, source);
  const t = findNode(model, target);
  if (!s || !t) return "both ends must be nodes";
  if (source === target) return "a node cannot lead to itself";
  if (s.node.kind === "end") return "`end` has no outgoing edge";
  if (t.node.kind === "start") return "nothing enters `start`";
  if (s.node.kind === "parallel" && t.node.kind !== "join") {
    const { branches, join } = parallelRefs(s.node);
    if (branches.includes(target)) return `\`${target}\` is already a branch of \`${source}\``;
    if (t.node.kind === "end") return "a branch never reaches `end`: it ends at the join";
    if (target === join) return `\`${target}\` is the join of \`${source}\``;
  }
  return null;
}

/** A condition for a new branch that every platform builds (string `eq`). */
function newBranchCondition(model: Model): JsonObject {
  const fields = listOf(model, "state");
  const s = fields.find((f) => f.type === "string") ?? fields[0];
  const field = typeof s?.name === "string" ? s.name : "";
  return s && s.type !== "string" ? { field, op: "exists" } : { field, op: "eq", value: "" };
}

/**
 * Connects two nodes. From a router: a branch before the default branch.
 * From a parallel: to a join node, its join; to another node, a new last
 * branch. From any other node: the node's one outgoing edge (an old one is
 * replaced in its place).
 */
export function connect(model: Model, source: string, target: string): { model: Model } | { error: string } {
  const err = connectError(model, source, target);
  if (err) return { error: err };
  const s = findNode(model, source)!;
  if (s.node.kind === "router") {
    const branches = Array.isArray(s.node.branches) ? [...s.node.branches] : [];
    const last = branches[branches.length - 1];
    const hasDefault = isObject(last) && (last.when === undefined || last.when === null);
    if (!hasDefault) branches.push({ to: target });
    else branches.splice(branches.length - 1, 0, { when: newBranchCondition(model), to: target });
    return { model: setNodeField(model, source, "branches", branches) };
  }
  if (s.node.kind === "parallel") {
    if (findNode(model, target)!.node.kind === "join") {
      return { model: s.node.join === target ? model : setNodeField(model, source, "join", target) };
    }
    return { model: setNodeField(model, source, "branches", [...parallelRefs(s.node).branches, target]) };
  }
  const at = model.edges.findIndex((e) => e.from === source);
  if (at >= 0 && model.edges[at].to === target && !model.edges.some((e, i) => i !== at && e.from === source)) {
    return { model };
  }
  const edges: Edge[] = [];
  let placed = false;
  for (const e of model.edges) {
    if (e.from !== source) edges.push(e);
    else if (!placed) {
      edges.push({ from: source, to: target });
      placed = true;
    }
  }
  if (!placed) edges.push({ from: source, to: target });
  return { model: { ...model, edges } };
}

/** Removes an edge, a branch, or a parallel's link by its canvas id (a join link leaves `join` empty). */
export function removeGraphEdge(model: Model, edgeId: string): Model {
  const e = graphEdges(model).find((g) => g.id === edgeId);
  if (!e) return model;
  if (e.kind === "edge") return { ...model, edges: model.edges.filter((_, i) => i !== e.index) };
  if (e.kind === "join") return setNodeField(model, e.from, "join", "");
  const owner = findNode(model, e.from);
  const branches = owner && Array.isArray(owner.node.branches) ? owner.node.branches : [];
  return setNodeField(model, e.from, "branches", branches.filter((_, i) => i !== e.index));
}

export { logicalOf };
