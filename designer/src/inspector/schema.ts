// Reading the IR JSON Schema (generated from the Rust model) to build the
// inspector's forms, so a new field in the model shows up in the editor
// without code here.

import irSchema from "@ir-schema";

export type Schema = { [key: string]: unknown };

const root = irSchema as Schema;
const defs = (root.$defs ?? {}) as Record<string, Schema>;

export function rootSchema(): Schema {
  return root;
}

export function def(name: string): Schema {
  return defs[name] ?? {};
}

/** Follows `$ref` (`#/$defs/X`, or `#` for a whole document). */
export function resolve(s: Schema | boolean | undefined): Schema {
  let cur: Schema = typeof s === "object" && s ? s : {};
  for (let i = 0; i < 8 && typeof cur.$ref === "string"; i++) {
    const ref = cur.$ref as string;
    const { $ref: _ignored, ...rest } = cur;
    void _ignored;
    const target = ref === "#" ? root : ref.startsWith("#/$defs/") ? def(ref.slice(8)) : {};
    // Keep a description or default given next to the $ref.
    cur = ref === "#" ? { ...rest, type: "object", $isDocument: true } : { ...target, ...rest };
  }
  return cur;
}

/** `anyOf [X, null]` and `type: [t, "null"]` are an optional X. */
export function unwrapNullable(s0: Schema): Schema {
  const s = resolve(s0);
  if (Array.isArray(s.anyOf)) {
    const alts = (s.anyOf as Schema[]).filter((a) => !(a && a.type === "null"));
    if (alts.length === 1) {
      const { anyOf: _a, ...rest } = s;
      void _a;
      return { ...resolve(alts[0]), ...rest, nullable: true };
    }
  }
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== "null");
    if (types.length === 1) return { ...s, type: types[0], nullable: true };
  }
  return s;
}

/** The property holding a const in every `oneOf` variant (`kind`, `transport`). */
export function discriminator(s: Schema): string | null {
  const variants = s.oneOf as Schema[] | undefined;
  if (!Array.isArray(variants) || variants.length === 0) return null;
  const first = variants[0]?.properties as Record<string, Schema> | undefined;
  if (!first) return null;
  for (const key of Object.keys(first)) {
    if (variants.every((v) => constValues((v.properties as Record<string, Schema> | undefined)?.[key]).length > 0)) return key;
  }
  return null;
}

function constValues(p: Schema | undefined): string[] {
  if (!p) return [];
  if (typeof p.const === "string") return [p.const];
  if (Array.isArray(p.enum)) return p.enum.filter((x): x is string => typeof x === "string");
  return [];
}

/**
 * The node kinds, in the model's order (the palette): each Node variant's
 * `kind`, without the aliases a reader accepts too, so a kind added to the IR
 * is in the palette once the schema is regenerated.
 */
export function nodeKinds(): string[] {
  const node = def("Node");
  const key = discriminator(node);
  if (!key) return [];
  return (node.oneOf as Schema[]).map((v) => constValues((v.properties as Record<string, Schema>)[key])[0]).filter(Boolean);
}

/** Every discriminator value of a variant type (`kind`s of Node, Tool, ...). */
export function variantValues(s: Schema): string[] {
  const key = discriminator(s);
  if (!key) return [];
  return (s.oneOf as Schema[]).flatMap((v) => constValues((v.properties as Record<string, Schema>)[key]));
}

export interface ObjectShape {
  properties: Record<string, Schema>;
  required: string[];
  /** The discriminator key and its values, for variant types. */
  variantKey?: string;
  variants?: string[];
  description?: string;
}

/** The fields of an object schema; for a variant type, those of `value`'s variant. */
export function objectShape(s0: Schema, value: unknown): ObjectShape {
  const s = unwrapNullable(s0);
  const properties: Record<string, Schema> = { ...((s.properties ?? {}) as Record<string, Schema>) };
  const required = [...((s.required ?? []) as string[])];
  const key = discriminator(s);
  if (!key) return { properties, required, description: s.description as string | undefined };
  const current = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  const variants = s.oneOf as Schema[];
  const v =
    variants.find((x) => constValues((x.properties as Record<string, Schema>)[key]).includes(current as string)) ?? variants[0];
  // The discriminator first, then the shared fields, then the variant's.
  const vp = (v.properties ?? {}) as Record<string, Schema>;
  const ordered: Record<string, Schema> = {};
  if (properties.id) ordered.id = properties.id;
  ordered[key] = vp[key];
  for (const [k, p] of Object.entries(properties)) if (k !== "id") ordered[k] = p;
  for (const [k, p] of Object.entries(vp)) if (k !== key) ordered[k] = p;
  return {
    properties: ordered,
    required: [...required, ...((v.required ?? []) as string[])],
    variantKey: key,
    variants: variantValues(s),
    description: (v.description ?? s.description) as string | undefined,
  };
}

export type FieldKind =
  | "string"
  | "integer"
  | "number"
  | "boolean"
  | "enum"
  | "stringList"
  | "stringMap"
  | "object"
  | "json";

/** How a field is edited. */
export function fieldKind(s0: Schema): FieldKind {
  const s = unwrapNullable(s0);
  const enumValues = enumOf(s);
  if (enumValues) return "enum";
  if (s.type === "string") return "string";
  if (s.type === "integer") return "integer";
  if (s.type === "number") return "number";
  if (s.type === "boolean") return "boolean";
  if (s.type === "array") {
    const items = unwrapNullable((s.items ?? {}) as Schema);
    return items.type === "string" && !enumOf(items) ? "stringList" : "json";
  }
  if (s.type === "object" && !s.$isDocument) {
    const ap = s.additionalProperties;
    if (typeof ap === "object" && ap && (ap as Schema).type === "string" && !s.properties) return "stringMap";
    if (s.properties && ap !== true) return "object";
  }
  if (!s.type && discriminator(s) && !s.properties) return "object";
  return "json";
}

/** String choices: `enum`, or a `oneOf` of string consts (SupervisorRouter). */
export function enumOf(s0: Schema): string[] | null {
  const s = resolve(s0);
  if (Array.isArray(s.enum) && s.enum.every((x) => typeof x === "string")) return s.enum as string[];
  if (Array.isArray(s.oneOf) && (s.oneOf as Schema[]).every((v) => typeof v.const === "string")) {
    return (s.oneOf as Schema[]).map((v) => v.const as string);
  }
  return null;
}

/** Names of fields that hold an environment variable's *name* (never a secret). */
export function isEnvNameField(name: string): boolean {
  return /Env$/.test(name);
}

/** A starting value for a field that must be there. */
export function emptyValue(s0: Schema): unknown {
  const s = unwrapNullable(s0);
  if (s.default !== undefined) return s.default;
  switch (fieldKind(s)) {
    case "string":
      return "";
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 0;
    case "boolean":
      return false;
    case "enum":
      return enumOf(s)![0];
    case "stringList":
      return [];
    case "stringMap":
      return {};
    case "object": {
      const shape = objectShape(s, undefined);
      const out: Record<string, unknown> = {};
      for (const k of shape.required) out[k] = emptyValue(shape.properties[k] ?? {});
      if (shape.variantKey && shape.variants?.length) out[shape.variantKey] = shape.variants[0];
      return out;
    }
    default:
      return s.type === "array" ? [] : {};
  }
}

/** A value shaped for variant `kind`, keeping the fields both variants share. */
export function switchVariant(s0: Schema, value: Record<string, unknown>, variant: string): Record<string, unknown> {
  const s = unwrapNullable(s0);
  const key = discriminator(s)!;
  const shared = Object.keys((s.properties ?? {}) as object);
  const next = objectShape(s, { [key]: variant });
  const out: Record<string, unknown> = {};
  if (value.id !== undefined && shared.includes("id")) out.id = value.id;
  for (const k of Object.keys(next.properties)) {
    if (k === "id") continue;
    if (k === key) out[k] = variant;
    else if (shared.includes(k) && value[k] !== undefined) out[k] = value[k];
    else if (next.required.includes(k)) out[k] = emptyValue(next.properties[k]);
  }
  return out;
}
