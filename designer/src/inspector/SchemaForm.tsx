// A form generated from a JSON Schema object: one editor per field, chosen by
// the field's schema (schema.ts: fieldKind). Changes go up as (path, value)
// so the owner applies them to the newest model; `undefined` removes a key.

import { useEffect, useMemo, useState } from "react";
import { json as jsonLang } from "@codemirror/lang-json";
import { CodeMirror } from "../ui/CodeMirror.tsx";
import { type FieldDiagnostic, diagnosticsAt } from "../model/pointer.ts";
import type { Diagnostic } from "../model/types.ts";
import {
  type Schema,
  emptyValue,
  enumOf,
  fieldKind,
  isEnvNameField,
  objectShape,
  switchVariant,
  unwrapNullable,
} from "./schema.ts";
import type { FieldHint } from "./nodeHints.ts";

export type Path = (string | number)[];
export type OnChange = (path: Path, value: unknown, opts?: { coalesce?: boolean }) => void;

export interface FormProps {
  schema: Schema;
  value: Record<string, unknown>;
  onChange: OnChange;
  /** Where this object sits, relative to the form's owner (and its diagnostics). */
  path?: Path;
  diags?: FieldDiagnostic[];
  /** Keys not to show (rendered by the owner: a node's `id`). */
  hide?: string[];
  /** The discriminator cannot be changed (a node's kind). */
  lockVariant?: boolean;
  /** Prefix of the coalescing keys of this form's fields. */
  formKey: string;
  /** Choices and help for this object's own fields, by name (nodeHints.ts). */
  hints?: Record<string, FieldHint>;
}

/** Datalists of ids to offer in reference fields (rendered once by the app). */
const SUGGEST: Record<string, string> = {
  outputKey: "dl-state",
  field: "dl-state",
  name: "",
  toolId: "dl-tools",
  agent: "dl-agents",
  server: "dl-mcp",
  to: "dl-nodes",
};
const SUGGEST_LIST: Record<string, string> = {
  boundToolIds: "dl-tools",
  toolIds: "dl-tools",
  members: "dl-agents",
};
/** `{a: b}` maps whose sides are state fields (a subgraph's or map's): the placeholder of each side. */
const FIELD_MAPS: Record<string, [string, string]> = {
  input: ["child field", "parent field"],
  output: ["parent field", "child field"],
};
const MULTILINE = new Set(["template", "instructions", "input", "query", "user", "system", "description"]);
const URL_FIELDS = new Set(["url", "endpoint", "agentCardUrl"]);

export function labelFor(name: string): string {
  return name;
}

function DiagList({ diags }: { diags: Diagnostic[] }) {
  if (!diags.length) return null;
  return (
    <ul className="field-diags">
      {diags.map((d, i) => (
        <li key={i} className={`sev-${d.severity}`}>
          <b>{d.code}</b> {d.message}
          {d.hint ? <span className="hint"> — {d.hint}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function SchemaForm(props: FormProps) {
  const { schema, value, onChange, diags = [], hide = [], formKey, hints = {} } = props;
  const path = props.path ?? [];
  const shape = objectShape(schema, value);
  const known = Object.keys(shape.properties);
  const unknown = Object.keys(value).filter((k) => !known.includes(k) && !hide.includes(k));
  const strPath = path.map(String);

  return (
    <div className="schema-form">
      <DiagList diags={diagnosticsAt(diags, strPath, true)} />
      {known
        .filter((k) => !hide.includes(k))
        .map((name) => {
          const fieldPath = [...path, name];
          const fieldSchema = shape.properties[name] ?? {};
          const isVariantKey = shape.variantKey === name;
          const fd = diagnosticsAt(diags, fieldPath.map(String));
          const common = {
            name,
            path: fieldPath,
            schema: fieldSchema,
            value: value[name],
            required: shape.required.includes(name),
            diags: fd,
            formDiags: diags,
            onChange,
            formKey,
            hint: hints[name],
          };
          if (isVariantKey) {
            return (
              <Field key={name} {...common} kind="enum">
                <select
                  value={String(value[name] ?? "")}
                  disabled={props.lockVariant}
                  onChange={(e) => onChange(path, switchVariant(schema, value, e.target.value))}
                >
                  {(shape.variants ?? []).map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
                </select>
              </Field>
            );
          }
          return <FieldEditor key={name} {...common} />;
        })}
      {unknown.map((name) => (
        <FieldEditor
          key={name}
          name={name}
          path={[...path, name]}
          schema={{}}
          value={value[name]}
          required={false}
          diags={diagnosticsAt(diags, [...strPath, name])}
          formDiags={diags}
          onChange={onChange}
          formKey={formKey}
          unknownField
        />
      ))}
    </div>
  );
}

interface FieldProps {
  name: string;
  path: Path;
  schema: Schema;
  value: unknown;
  required: boolean;
  diags: Diagnostic[];
  formDiags: FieldDiagnostic[];
  onChange: OnChange;
  formKey: string;
  unknownField?: boolean;
  hint?: FieldHint;
}

/** The frame of one field: label, help, diagnostics, a button to unset it. */
function Field(props: FieldProps & { kind: string; children: React.ReactNode; wide?: boolean }) {
  const { name, schema, value, required, diags, onChange, path } = props;
  const s = unwrapNullable(schema);
  const env = isEnvNameField(name);
  const help: string[] = [];
  if (typeof s.description === "string") help.push(s.description.split("\n")[0]);
  if (env) help.push("The NAME of an environment variable (the value is read at run time, never stored here).");
  if (URL_FIELDS.has(name)) help.push("An http(s) URL, or env:NAME to read it from the environment.");
  if (props.hint?.help) help.push(props.hint.help);
  if (props.unknownField) help.push("Not a field of the IR model.");
  const present = value !== undefined;
  return (
    <div
      className={`field field-${props.kind}${diags.length ? " invalid" : ""}${props.wide ? " wide" : ""}`}
      data-testid={`field-${path.join(".")}`}
      data-field={name}
      data-invalid={diags.length ? "true" : undefined}
    >
      <div className="field-head">
        <label>
          {name}
          {required ? <span className="req">*</span> : null}
          {env ? <span className="env-tag">env var name</span> : null}
        </label>
        {!required && present ? (
          <button type="button" className="unset" title={`remove ${name}`} onClick={() => onChange(path, undefined)}>
            ×
          </button>
        ) : null}
      </div>
      {props.children}
      {help.length ? <div className="help">{help.join(" ")}</div> : null}
      <DiagList diags={diags} />
    </div>
  );
}

function FieldEditor(props: FieldProps) {
  const { name, path, schema, value, required, onChange, formKey } = props;
  const s = unwrapNullable(schema);
  const kind = props.unknownField ? "json" : fieldKind(schema);
  const key = `${formKey}:${path.join("/")}`;
  const set = (v: unknown) => onChange(path, v, { coalesce: true });
  const placeholder = s.default !== undefined ? `default: ${JSON.stringify(s.default)}` : undefined;

  const options = props.hint?.options;
  if (options && kind === "string") {
    return (
      <Field {...props} kind="enum">
        <Pick value={typeof value === "string" ? value : ""} options={options} onChange={(v) => onChange(path, v === "" && !required ? undefined : v)} />
      </Field>
    );
  }
  if (options && kind === "stringList") {
    return (
      <Field {...props} kind="list">
        <PickList value={Array.isArray(value) ? (value as unknown[]).map(String) : []} options={options} onChange={(v) => onChange(path, v)} />
      </Field>
    );
  }

  switch (kind) {
    case "string": {
      const env = isEnvNameField(name);
      const list = SUGGEST[name];
      const text = typeof value === "string" ? value : "";
      const multiline = MULTILINE.has(name);
      const onText = (t: string) => set(t === "" && !required ? undefined : t);
      return (
        <Field {...props} kind="string">
          {multiline ? (
            <textarea value={text} rows={name === "template" || name === "instructions" ? 4 : 2} placeholder={placeholder} onChange={(e) => onText(e.target.value)} data-key={key} />
          ) : (
            <input
              type="text"
              value={text}
              list={list || undefined}
              placeholder={env ? (placeholder ?? "ENV_VAR_NAME") : placeholder}
              pattern={env ? "[A-Za-z_][A-Za-z0-9_]*" : undefined}
              autoComplete="off"
              spellCheck={!env}
              onChange={(e) => onText(env ? e.target.value.trim() : e.target.value)}
              data-key={key}
            />
          )}
        </Field>
      );
    }
    case "integer":
    case "number":
      return (
        <Field {...props} kind="number">
          <NumberInput value={value} integer={kind === "integer"} min={s.minimum as number | undefined} max={s.maximum as number | undefined} placeholder={placeholder} required={required} onCommit={set} />
        </Field>
      );
    case "boolean": {
      const effective = typeof value === "boolean" ? value : s.default === true;
      return (
        <Field {...props} kind="boolean">
          <label className="check">
            <input type="checkbox" checked={effective} onChange={(e) => onChange(path, e.target.checked)} />
            {value === undefined ? <span className="dim">default</span> : null}
          </label>
        </Field>
      );
    }
    case "enum": {
      const options = enumOf(s) ?? [];
      return (
        <Field {...props} kind="enum">
          <select value={typeof value === "string" ? value : ""} onChange={(e) => onChange(path, e.target.value === "" ? undefined : e.target.value)}>
            {!required || value === undefined ? <option value="">{s.default !== undefined ? `(default: ${String(s.default)})` : "—"}</option> : null}
            {options.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
      );
    }
    case "stringList":
      return (
        <Field {...props} kind="list">
          <StringList value={Array.isArray(value) ? (value as unknown[]).map(String) : []} list={SUGGEST_LIST[name]} onChange={(v) => set(v)} />
        </Field>
      );
    case "stringMap":
      return (
        <Field {...props} kind="map">
          <StringMap value={value && typeof value === "object" ? (value as Record<string, string>) : {}} sides={FIELD_MAPS[name]} onChange={(v) => set(v)} />
        </Field>
      );
    case "object": {
      const present = value !== undefined && value !== null && typeof value === "object";
      return (
        <Field {...props} kind="object" wide>
          {present ? (
            <fieldset className="sub">
              <SchemaForm schema={schema} value={value as Record<string, unknown>} onChange={onChange} path={path} diags={props.formDiags} formKey={formKey} />
            </fieldset>
          ) : (
            <button type="button" className="add" onClick={() => onChange(path, emptyValue(schema))}>
              + add {name}
            </button>
          )}
        </Field>
      );
    }
    default:
      return (
        <Field {...props} kind="json" wide>
          <JsonField value={value} onChange={(v) => set(v)} required={required} />
        </Field>
      );
  }
}

function NumberInput(props: { value: unknown; integer: boolean; min?: number; max?: number; placeholder?: string; required: boolean; onCommit: (v: unknown) => void }) {
  const outside = typeof props.value === "number" ? String(props.value) : "";
  const [text, setText] = useState(outside);
  useEffect(() => {
    // Follow outside changes (undo) unless the text already means that value.
    if (Number(text) !== props.value || text.trim() === "") setText(outside);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [outside]);
  const onText = (t: string) => {
    setText(t);
    if (t.trim() === "") {
      if (!props.required) props.onCommit(undefined);
      return;
    }
    const n = Number(t);
    if (!Number.isFinite(n) || (props.integer && !Number.isInteger(n))) return;
    props.onCommit(n);
  };
  return <input type="number" value={text} step={props.integer ? 1 : "any"} min={props.min} max={props.max} placeholder={props.placeholder} onChange={(e) => onText(e.target.value)} />;
}

function StringList(props: { value: string[]; list?: string; onChange: (v: string[]) => void }) {
  const { value, onChange } = props;
  return (
    <div className="string-list">
      {value.map((item, i) => (
        <div className="row" key={i}>
          <input type="text" value={item} list={props.list} onChange={(e) => onChange(value.map((x, j) => (j === i ? e.target.value : x)))} />
          <button type="button" title="remove" onClick={() => onChange(value.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" className="add" onClick={() => onChange([...value, ""])}>
        + add
      </button>
    </div>
  );
}

/** One of `options`; a value that is not among them stays, marked. */
function Pick(props: { value: string; options: string[]; onChange: (v: string) => void; exclude?: string[] }) {
  const { value, options } = props;
  const shown = options.filter((o) => o === value || !props.exclude?.includes(o));
  return (
    <select value={value} onChange={(e) => props.onChange(e.target.value)}>
      <option value="">—</option>
      {value !== "" && !options.includes(value) ? <option value={value}>{value} (not found)</option> : null}
      {shown.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

/** An ordered list of distinct picks from `options`: change, move, remove, add. */
function PickList(props: { value: string[]; options: string[]; onChange: (v: string[]) => void }) {
  const { value, options, onChange } = props;
  const move = (i: number, by: number) => {
    const next = [...value];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    onChange(next);
  };
  const left = options.filter((o) => !value.includes(o));
  return (
    <div className="pick-list">
      {value.map((item, i) => (
        <div className="row" key={i}>
          <span className="pick-index">{i + 1}</span>
          <Pick value={item} options={options} exclude={value} onChange={(v) => onChange(value.map((x, j) => (j === i ? v : x)))} />
          <button type="button" title="move up" disabled={i === 0} onClick={() => move(i, -1)}>
            ↑
          </button>
          <button type="button" title="move down" disabled={i === value.length - 1} onClick={() => move(i, 1)}>
            ↓
          </button>
          <button type="button" title="remove" onClick={() => onChange(value.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <select className="add" value="" disabled={!left.length} onChange={(e) => e.target.value && onChange([...value, e.target.value])}>
        <option value="">{left.length ? "+ add…" : "no other node to add"}</option>
        {left.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * A `{name: value}` map. `sides` names what keys and values are (state
 * fields of a subgraph's or map's `input`/`output`); otherwise it is a
 * header or env map, whose values may name secrets only as `${NAME}`.
 */
function StringMap(props: { value: Record<string, string>; sides?: [string, string]; onChange: (v: Record<string, string>) => void }) {
  const { sides } = props;
  const entries = Object.entries(props.value);
  const rebuild = (f: (e: [string, string][]) => [string, string][]) => props.onChange(Object.fromEntries(f(entries)));
  return (
    <div className="string-map">
      {entries.map(([k, v], i) => (
        <div className="row" key={i}>
          <input
            type="text"
            value={k}
            placeholder={sides?.[0] ?? "name"}
            list={sides?.[0] === "parent field" ? "dl-state" : undefined}
            onChange={(e) => rebuild((es) => es.map((x, j) => (j === i ? [e.target.value, x[1]] : x)))}
          />
          <input
            type="text"
            value={v}
            placeholder={sides?.[1] ?? "value, or ${ENV_NAME}"}
            list={sides?.[1] === "parent field" ? "dl-state" : undefined}
            onChange={(e) => rebuild((es) => es.map((x, j) => (j === i ? [x[0], e.target.value] : x)))}
          />
          <button type="button" title="remove" onClick={() => rebuild((es) => es.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button
        type="button"
        className="add"
        onClick={() => {
          const base = sides ? "field_" : "NAME_";
          let n = 1;
          while (`${base}${n}` in props.value) n++;
          props.onChange({ ...props.value, [`${base}${n}`]: "" });
        }}
      >
        + add
      </button>
      {sides ? null : <div className="help">Secrets: write {"${NAME}"} to read them from the environment.</div>}
    </div>
  );
}

const pretty = (v: unknown) => (v === undefined ? "" : JSON.stringify(v, null, 2));

/** A small JSON editor that commits only text that parses. */
export function JsonField(props: { value: unknown; onChange: (v: unknown) => void; required?: boolean }) {
  const [text, setText] = useState(() => pretty(props.value));
  const [error, setError] = useState<string | null>(null);
  const outside = useMemo(() => JSON.stringify(props.value), [props.value]);
  useEffect(() => {
    let same = false;
    try {
      same = text.trim() === "" ? props.value === undefined : JSON.stringify(JSON.parse(text)) === outside;
    } catch {
      same = false;
    }
    if (!same) {
      setText(pretty(props.value));
      setError(null);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [outside]);
  const lang = useMemo(() => jsonLang(), []);
  return (
    <div className="json-field">
      <CodeMirror
        value={text}
        language={lang}
        lineNumbers={false}
        ariaLabel="JSON value"
        onChange={(t) => {
          setText(t);
          if (t.trim() === "" && !props.required) {
            setError(null);
            props.onChange(undefined);
            return;
          }
          try {
            const v = JSON.parse(t);
            setError(null);
            props.onChange(v);
          } catch (e) {
            setError(`invalid JSON, not applied: ${(e as Error).message}`);
          }
        }}
      />
      {error ? <div className="json-error">{error}</div> : null}
    </div>
  );
}
