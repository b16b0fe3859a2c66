// A connector node's config is declared once, by the JSON Schema its
// connector publishes (the host checks configs against the same schema):
// the inspector edits the config with a form made from it.

import type { Connector } from "../api/client.ts";
import type { Platform, TemplateRef } from "../model/types.ts";
import type { Schema } from "./schema.ts";

/**
 * The schema of the connector that the node's template for `platform` names
 * (else that of any of its templates), when that connector is installed.
 */
export function connectorConfigSchema(
  templates: Record<string, TemplateRef>,
  connectors: Connector[],
  platform: Platform,
): { connector: string; schema: Schema } | null {
  const refs = [templates[platform], ...Object.values(templates)].filter(Boolean);
  for (const ref of refs) {
    const c = connectors.find((x) => x.name === ref.connector);
    if (c && isRecord(c.configSchema)) return { connector: c.name, schema: c.configSchema as Schema };
  }
  return null;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
