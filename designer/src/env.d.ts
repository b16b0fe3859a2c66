// The IR JSON Schema, aliased in vite.config.ts (fixtures/schema/ir-v2.schema.json).
declare module "@ir-schema" {
  const schema: Record<string, unknown>;
  export default schema;
}
