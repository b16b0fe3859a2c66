// A connector node's config is declared once, by the JSON Schema its
// connector publishes (the host checks configs against the same schema):
// the inspector edits the config with a form made from it.

import maxSatisfying from "semver/ranges/max-satisfying.js";
import type { Connector } from "../api/client.ts";
import type { Platform, TemplateRef } from "../model/types.ts";
import type { Schema } from "./schema.ts";

/**
 * The schema of the connector that the node's template for `platform` names
 * (else that of any of its templates): of the installed version the host
 * would render with, the highest its range takes.
 */
export function connectorConfigSchema(
  templates: Record<string, TemplateRef>,
  connectors: Connector[],
  platform: Platform,
): { connector: string; version: string; schema: Schema } | null {
  const refs = [templates[platform], ...Object.values(templates)].filter(Boolean);
  for (const ref of refs) {
    const installed = connectors.filter((c) => c.name === ref.connector);
    const best = maxSatisfying(
      installed.map((c) => c.version),
      cargoRange(ref.version),
    );
    const c = installed.find((x) => x.version === best);
    if (c && isRecord(c.configSchema)) {
      return { connector: c.name, version: c.version, schema: inlineRefs(c.configSchema) as Schema };
    }
  }
  return null;
}

/**
 * A template's range as the host reads it (Rust's semver: a bare `0.1` means
 * `^0.1`, and `,` joins comparators), written for npm's semver.
 */
export function cargoRange(range: string): string {
  return range
    .split(",")
    .map((part) => part.trim())
    .map((part) => (/^\d/.test(part) ? `^${part}` : part))
    .join(" ");
}

/**
 * `schema` with its local references (`#/$defs/X`, `#`) replaced by what
 * they point at, so a form reads each value's schema where the value is
 * (the inspector's own `resolve` reads the IR's schema). A reference that
 * leads back into itself stays an open schema.
 */
export function inlineRefs(schema: unknown, root: unknown = schema, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(s, root, seen));
  if (!isRecord(schema)) return schema;
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith("#")) {
    if (seen.includes(ref)) return {};
    const { $ref: _, ...beside } = schema;
    const target = pointer(root, ref.slice(1));
    const resolved = inlineRefs(target, root, [...seen, ref]);
    return isRecord(resolved) ? { ...resolved, ...inlineRefs(beside, root, seen) as Schema } : resolved;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key !== "$defs") out[key] = inlineRefs(value, root, seen);
  }
  return out;
}

function pointer(doc: unknown, path: string): unknown {
  let at = doc;
  for (const raw of path.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    at = isRecord(at) ? at[key] : Array.isArray(at) ? at[Number(key)] : undefined;
  }
  return at ?? {};
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
