import { test } from "node:test";
import assert from "node:assert/strict";
import type { Connector } from "../api/client.ts";
import { connectorConfigSchema } from "./connectorConfig.ts";
import { fieldKind, objectShape } from "./schema.ts";

// The schema svc/webhook publishes (config::schema of its Config type).
const WEBHOOK: Connector = {
  name: "svc/webhook",
  version: "0.1.0",
  entries: [],
  platforms: ["go", "java-svc", "python-svc"],
  configSchema: {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: { type: "string", format: "svc-url", description: "Where to POST" },
      fields: { type: "array", uniqueItems: true, items: { type: "string", format: "svc-field-name" } },
      timeoutMs: { type: "integer", minimum: 1, default: 10000 },
    },
  },
};
const OTHER: Connector = { ...WEBHOOK, name: "acme/other", configSchema: { type: "object", properties: { x: { type: "string" } } } };

test("a connector node's config form is its connector's schema, for the platform shown first", () => {
  const templates = { go: { connector: "svc/webhook", version: "^0.1" }, "java-svc": { connector: "acme/other", version: "^1" } };
  assert.equal(connectorConfigSchema(templates, [WEBHOOK, OTHER], "go")?.connector, "svc/webhook");
  assert.equal(connectorConfigSchema(templates, [WEBHOOK, OTHER], "java-svc")?.connector, "acme/other");
  // No template for the platform: any of the node's.
  assert.equal(connectorConfigSchema(templates, [WEBHOOK, OTHER], "python-svc")?.connector, "svc/webhook");
  // Not installed, or no template at all: the config stays a JSON field.
  assert.equal(connectorConfigSchema(templates, [], "go"), null);
  assert.equal(connectorConfigSchema({}, [WEBHOOK], "go"), null);
});

test("the schema's fields become the form's", () => {
  const { schema } = connectorConfigSchema({ go: { connector: "svc/webhook", version: "^0.1" } }, [WEBHOOK], "go")!;
  const shape = objectShape(schema, { url: "env:HOOK" });
  assert.deepEqual(Object.keys(shape.properties), ["url", "fields", "timeoutMs"]);
  assert.deepEqual(shape.required, ["url"]);
  assert.equal(fieldKind(shape.properties.url), "string");
  assert.equal(fieldKind(shape.properties.timeoutMs), "integer");
});
