// The connector's own tests, run by Node's test runner on an esbuild
// bundle (npm test).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { connector, PLATFORMS } from "../src/connector";
import type { Diagnostic } from "../src/wit";

// npm test runs in the connector folder; the project is its parent.
const project = JSON.parse(readFileSync("../svc.project.json", "utf8"));

function exampleConfig(): string {
  const doc = JSON.parse(readFileSync(`../${project.document}`, "utf8"));
  const node = doc.logical.nodes.find((n: { kind: string }) => n.kind === "connector");
  return JSON.stringify(node.config);
}

function diagnostics(run: () => unknown): Diagnostic[] {
  try {
    run();
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
  // svc checks a state field's name and a text's {{field}} by these formats.
  const properties = JSON.parse(info.configSchema).properties;
  assert.equal(properties.outputKey.format, "svc-field-name");
  assert.equal(properties.text.format, "svc-template");
});

for (const platform of PLATFORMS) {
  test(`${platform} renders the example`, () => {
    const rendered = connector.render("node", platform, exampleConfig());
    assert.match(rendered.snippet, /"greeting"/);
    assert.equal(rendered.files.length, 1);
    assert.ok(rendered.files[0].contents.length > 0);
  });
}

test("an unknown platform is refused", () => {
  const good = JSON.stringify({ outputKey: "a", text: "" });
  const unknown = diagnostics(() => connector.render("node", "rust", good));
  assert.equal(unknown[0].code, "platform-unsupported");
});
