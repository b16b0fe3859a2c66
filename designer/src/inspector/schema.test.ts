import { test } from "node:test";
import assert from "node:assert/strict";
import { def, nodeKinds, emptyValue, enumOf, fieldKind, isEnvNameField, objectShape, switchVariant, unwrapNullable, variantValues } from "./schema.ts";

test("node kinds come from the schema's variants", () => {
  const kinds = variantValues(def("Node"));
  for (const k of ["start", "end", "function", "llm", "router", "connector", "hitl", "response_transformer"]) assert.ok(kinds.includes(k), k);
});

test("the palette's kinds are the schema's, each once, without aliases", () => {
  const kinds = nodeKinds();
  for (const k of ["start", "end", "function", "llm", "tool", "router", "response_template", "connector", "agent", "rag", "intent_classifier", "subgraph", "hitl"]) {
    assert.ok(kinds.includes(k), k);
  }
  assert.ok(!kinds.includes("response_transformer"), "an alias is not a kind of its own");
  assert.equal(new Set(kinds).size, kinds.length);
  assert.equal(kinds.length, def("Node").oneOf && (def("Node").oneOf as unknown[]).length);
});

test("a node's form fields are its variant's", () => {
  const shape = objectShape(def("Node"), { id: "x", kind: "llm" });
  assert.deepEqual(Object.keys(shape.properties).slice(0, 3), ["id", "kind", "label"]);
  assert.ok(shape.properties.prompt && shape.properties.outputShape && !shape.properties.template);
  assert.ok(shape.required.includes("prompt"));
  assert.equal(shape.variantKey, "kind");
  const fn = objectShape(def("Node"), { id: "f", kind: "function" });
  assert.deepEqual(Object.keys(fn.properties), ["id", "kind", "label", "outputKey"]);
});

test("field kinds", () => {
  const llm = objectShape(def("Node"), { kind: "llm" }).properties;
  assert.equal(fieldKind(llm.outputKey), "string");
  assert.equal(fieldKind(llm.outputShape), "enum");
  assert.equal(fieldKind(llm.replaceMessages), "boolean");
  assert.equal(fieldKind(llm.boundToolIds), "stringList");
  assert.equal(fieldKind(llm.prompt), "object");
  assert.equal(fieldKind(llm.model), "object");
  const router = objectShape(def("Node"), { kind: "router" }).properties;
  assert.equal(fieldKind(router.branches), "json");
  const rag = objectShape(def("Node"), { kind: "rag" }).properties;
  assert.equal(fieldKind(rag.topK), "integer");
  assert.equal(fieldKind(rag.documents), "json");
  assert.equal(fieldKind(rag.retriever), "object");
  const http = objectShape(def("Tool"), { kind: "http" }).properties;
  assert.equal(fieldKind(http.headers), "stringMap");
  assert.equal(fieldKind(def("Settings").properties ? (def("Settings").properties as any).server : {}), "object");
  assert.deepEqual(enumOf(def("SupervisorRouter")), ["llm", "custom"]);
  assert.equal(unwrapNullable((def("Settings").properties as any).model).nullable, true);
});

test("environment names are recognised by their field name", () => {
  assert.ok(isEnvNameField("apiKeyEnv") && isEnvNameField("keyEnv") && isEnvNameField("baseUrlEnv"));
  assert.ok(!isEnvNameField("environment") && !isEnvNameField("env"));
});

test("switching a tool's kind keeps the shared fields and fills the required ones", () => {
  const t = switchVariant(def("Tool"), { id: "crm", kind: "native", description: "d" }, "http");
  assert.deepEqual(t, { id: "crm", kind: "http", description: "d", endpoint: "" });
  // A provider is one of a list: a new model starts with the first.
  assert.deepEqual(emptyValue((def("Settings").properties as any).model), { provider: "openai", name: "" });
  assert.deepEqual(emptyValue(def("McpServer")), { id: "", transport: "stdio", command: "" });
});

test("an optional object's form has its fields (persona, settings.model)", () => {
  const worker = objectShape(def("AgentDef"), { kind: "worker" }).properties;
  assert.deepEqual(Object.keys(objectShape(worker.persona, {}).properties), ["role", "tone"]);
  const settings = def("Settings").properties as any;
  const model = objectShape(settings.model, {});
  assert.deepEqual(model.required, ["provider", "name"]);
  assert.equal(fieldKind(model.properties.apiKeyEnv), "string");
  // How the model is called is edited in the same form.
  assert.equal(fieldKind(model.properties.timeoutMs), "integer");
  assert.deepEqual(Object.keys(objectShape(model.properties.retry, {}).properties), ["maxAttempts", "initialDelayMs", "maxDelayMs"]);
  assert.ok(model.properties.fallbacks);
  assert.ok(objectShape(settings.budget, {}).properties.maxModelCalls);
  const rag = objectShape(def("Node"), { kind: "rag" }).properties;
  assert.deepEqual(objectShape(rag.retriever, { kind: "embedding" }).variants, ["bm25", "embedding"]);
  assert.ok(objectShape(rag.retriever, { kind: "embedding" }).properties.apiKeyEnv);
});

test("a state field's properties are in its form, edited as JSON (structured output's shape)", () => {
  const field = objectShape(def("StateField"), { name: "invoice", type: "object" }).properties;
  assert.ok(field.properties, "the form has `properties`");
  assert.equal(fieldKind(field.properties), "json");
  // An array's items are a form of their own, with their `properties`.
  assert.equal(fieldKind(field.items), "object");
  assert.equal(fieldKind(objectShape(field.items, { type: "object" }).properties.properties), "json");
});
