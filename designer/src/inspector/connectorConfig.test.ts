import { test } from "node:test";
import assert from "node:assert/strict";
import type { Connector } from "../api/client.ts";
import { cargoRange, connectorConfigSchema, inlineRefs } from "./connectorConfig.ts";
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
const OTHER: Connector = { ...WEBHOOK, name: "acme/other", version: "1.2.0", configSchema: { type: "object", properties: { x: { type: "string" } } } };

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

test("of the installed versions, the one the host renders with: the highest the range takes", () => {
  const v = (version: string, x: string): Connector => ({ ...WEBHOOK, version, configSchema: { type: "object", properties: { [x]: {} } } });
  const installed = [v("0.1.0", "a"), v("0.1.4", "b"), v("0.2.0", "c")];
  const pick = (range: string) => connectorConfigSchema({ go: { connector: "svc/webhook", version: range } }, installed, "go");
  assert.equal(pick("^0.1")?.version, "0.1.4");
  assert.equal(pick("0.1")?.version, "0.1.4", "a bare version is a caret range, as in Rust");
  assert.equal(pick(">=0.1.0, <0.1.4")?.version, "0.1.0");
  assert.equal(pick("^0.3"), null);
  assert.deepEqual(Object.keys(pick("^0.2")!.schema.properties as object), ["c"]);
  assert.equal(cargoRange("1.2"), "^1.2");
  assert.equal(cargoRange(">=1.0, <2"), ">=1.0 <2");
});

test("a schema's local references are read where the value is", () => {
  const schema = inlineRefs({
    type: "object",
    properties: { op: { $ref: "#/$defs/Op", description: "what to do" }, self: { $ref: "#" } },
    $defs: { Op: { type: "string", enum: ["get", "set"] } },
  }) as Record<string, Record<string, Record<string, unknown>>>;
  assert.deepEqual(schema.properties.op, { type: "string", enum: ["get", "set"], description: "what to do" });
  assert.equal(schema.$defs, undefined);
  // A reference into itself stays open instead of looping.
  assert.equal(typeof schema.properties.self, "object");
});
