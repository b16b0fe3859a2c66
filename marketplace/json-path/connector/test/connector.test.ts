// The connector's own tests, run by Node's test runner on an esbuild
// bundle (npm test).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { connector, PLATFORMS } from "../src/connector";
import { pyString } from "../src/literals";
import { describe, parsePath, PathError } from "../src/path";
import type { Diagnostic } from "../src/wit";

// npm test runs in the connector folder; the project is its parent.
const project = JSON.parse(readFileSync("../svc.project.json", "utf8"));
const example = JSON.parse(readFileSync(`../${project.document}`, "utf8"));
const config = example.logical.nodes.find((n: { kind: string }) => n.kind === "connector").config;

function render(platform: string, changes: Record<string, unknown> = {}) {
  return connector.render("extract", platform, JSON.stringify({ ...config, ...changes }));
}

function refused(changes: Record<string, unknown>): Diagnostic[] {
  try {
    render("go", changes);
  } catch (thrown) {
    return thrown as Diagnostic[];
  }
  assert.fail("expected the config to be refused");
}

test("info matches the project manifest", () => {
  const info = connector.info();
  assert.equal(info.id, project.connector);
  assert.equal(info.version, project.version);
  assert.deepEqual(info.platforms, project.platforms);
  assert.deepEqual(JSON.parse(info.configSchema).required, ["from", "path", "outputKey"]);
});

test("paths parse into keys and indexes", () => {
  assert.deepEqual(parsePath("$"), []);
  assert.deepEqual(parsePath("$.items[0]['name']"), ["items", 0, "name"]);
  assert.deepEqual(parsePath(`$["a b"][-1]['it\\'s'].x_1`), ["a b", -1, "it's", "x_1"]);
  assert.equal(describe(["items", 0, "a b"]), '$.items[0]["a b"]');
});

test("paths outside the subset are refused where they go wrong", () => {
  for (const [path, at, words] of [
    ["items", 0, "starts with $"],
    ["$..name", 1, "recursive descent"],
    ["$.items[*]", 8, "wildcard"],
    ["$.*", 2, "wildcard"],
    ["$.items[?(@.a)]", 8, "filter"],
    ["$.items[0:2]", 8, "slice"],
    ["$.items[01]", 8, "neither an index"],
    ["$['open", 2, "not closed"],
    ["$.a b", 3, "unexpected"],
  ] as const) {
    assert.throws(
      () => parsePath(path),
      (e: unknown) => e instanceof PathError && e.at === at && e.message.includes(words),
      path,
    );
  }
});

test("each platform walks the parsed steps", () => {
  assert.equal(
    render("go").snippet,
    'return jsonPathExtract("extract", state, "payload", []any{"items", 0, "name"}, "name", "\\"unknown\\"")',
  );
  const python = render("python-svc").snippet;
  assert.match(python, /steps=\["items", 0, "name"\],/);
  assert.match(python, /default='"unknown"',/);
  assert.match(render("python-svc", { default: undefined }).snippet, /default=None,/);
  assert.match(render("java-svc").snippet, /java\.util\.List\.<Object>of\("items", 0, "name"\)/);
  for (const platform of PLATFORMS) {
    const files = render(platform).files;
    assert.equal(files.length, 2, platform);
    assert.ok(files.every((f) => f.contents.length > 0), platform);
  }
});

test("Python strings are written as ruff formats them", () => {
  assert.equal(pyString("plain"), '"plain"');
  assert.equal(pyString('say "hi"'), `'say "hi"'`);
  assert.equal(pyString(`it's "x"`), `"it's \\"x\\""`);
  assert.equal(pyString("a\nb\\"), '"a\\nb\\\\"');
});

test("a bad path points at the path; field names are the schema's", () => {
  const path = refused({ path: "$.items[*]" });
  assert.deepEqual(path.map((d) => d.pointer), ["/path"]);
  assert.match(path[0].message, /at character 9/);
  // Field names are svc's to check, by the schema's format.
  const properties = JSON.parse(connector.info().configSchema).properties;
  assert.equal(properties.from.format, "svc-field-name");
  assert.equal(properties.outputKey.format, "svc-field-name");
  assert.throws(() => render("rust"), (e: Diagnostic[]) => e[0].code === "platform-unsupported");
});
