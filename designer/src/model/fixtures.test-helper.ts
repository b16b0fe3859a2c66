// The flat models the unit tests edit. support_triage is the Rust
// conversion's own output (testdata/, checked against it by
// `cargo test -p svc-cli the_designer_tests_use_this_flat_model`), so the
// app has one conversion, the server's. The parallel and map fixtures have
// no positions, bodies or templates, so their flat model is the document
// with its nodes and edges taken out, as that conversion does (flatOf).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import supportTriage from "./testdata/support_triage.flat.json";
import { type JsonObject, type Model, isObject, normalizeModel } from "./types.ts";

const FLAT: Record<string, unknown> = { support_triage: supportTriage };

export function flatFixture(name: string): Model {
  if (!(name in FLAT)) return flatOf(fixtureText(name));
  return JSON.parse(JSON.stringify(FLAT[name])) as Model;
}

/** `fixtures/valid/<name>.graph.json` as written. */
export function fixtureText(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../../fixtures/valid/${name}.graph.json`, import.meta.url)), "utf8");
}

/** The flat model of a document whose only flat parts are its nodes and edges. */
export function flatOf(text: string): Model {
  const document = JSON.parse(text) as JsonObject;
  for (const key of ["presentation", "bodiesByPlatform", "codegen"]) {
    if (key in document) throw new Error(`flatOf: the document has ${key}; use the server's conversion`);
  }
  const logical = document.logical as JsonObject;
  const nodes = (logical.nodes as JsonObject[]).map((node) => ({ node }));
  // As the server sends it, read as the app reads it.
  return normalizeModel({ document: { ...document, logical: { ...logical, nodes: null, edges: null } }, nodes, edges: logical.edges });
}

/** What saving a flat model without positions, bodies or templates writes (the server's `unflatten`, then its writer). */
export function savedText(model: Model): string {
  const logical = model.document.logical;
  if (!isObject(logical)) throw new Error("no logical");
  if (model.nodes.some((n) => n.position || Object.keys(n.bodies).length || Object.keys(n.templates).length)) {
    throw new Error("savedText: a node has flat parts; use the server's conversion");
  }
  const document = { ...model.document, logical: { ...logical, nodes: model.nodes.map((n) => n.node), edges: model.edges as unknown as JsonObject[] } };
  return JSON.stringify(document, null, 2) + "\n";
}
