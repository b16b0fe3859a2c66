// The svc/json-path connector, written in TypeScript: a node extracts one
// value from a JSON state field by a JSONPath into another field.
//
// The path is parsed here, when the graph compiles (a bad one is refused at
// its place in the document); the generated code walks the parsed steps with
// a small helper per platform (templates/, bundled by esbuild as text).

import GO_HELPER from "../../templates/go/internal/graph/connector_json_path.go";
import GO_TEST from "../../templates/go/internal/graph/connector_json_path_test.go";
import JAVA_HELPER from "../../templates/java-svc/src/main/java/com/svc/connectors/json_path/JsonPath.java";
import JAVA_TEST from "../../templates/java-svc/src/test/java/com/svc/connectors/json_path/JsonPathTest.java";
import PYTHON_HELPER from "../../templates/python-svc/app/connectors/json_path.py";
import PYTHON_TEST from "../../templates/python-svc/tests/test_connector_json_path.py";
import { cString, goSteps, javaSteps, pyString, pySteps } from "./literals";
import { PathError, parsePath, type Step } from "./path";
import type { Connector, Diagnostic, File, Rendered } from "./wit";

export const ID = "svc/json-path";
export const VERSION = "0.1.0";
export const PLATFORMS = ["go", "java-svc", "python-svc"];

// The config, declared once: svc checks every node's config against this
// schema before render (the format svc-field-name is svc's: a state field's
// name), so readConfig only parses what a schema cannot, the path.
const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["from", "path", "outputKey"],
  properties: {
    from: { type: "string", format: "svc-field-name", description: "The state field holding the JSON value" },
    path: { type: "string", minLength: 1, description: "$ then .name, ['name'] or [index] steps" },
    outputKey: { type: "string", format: "svc-field-name", description: "The state field that receives the value" },
    default: { description: "Written when the path does not resolve; without it the node fails" },
  },
};

interface Config {
  from: string;
  steps: Step[];
  outputKey: string;
  /** The default as JSON text, or undefined. */
  fallback?: string;
}

function error(pointer: string, message: string, hint?: string): Diagnostic {
  return { severity: "error", code: "connector-config", message, pointer, hint };
}

function readConfig(config: Record<string, unknown>): Config {
  let steps: Step[];
  try {
    steps = parsePath(String(config.path));
  } catch (e) {
    if (!(e instanceof PathError)) throw e;
    throw [
      error("/path", `${e.message}, at character ${e.at + 1} of ${JSON.stringify(config.path)}`, "for example $.items[0]['name']"),
    ];
  }
  return {
    from: config.from as string,
    steps,
    outputKey: config.outputKey as string,
    fallback: "default" in config ? JSON.stringify(config.default) : undefined,
  };
}

function text(path: string, contents: string): File {
  return { path, contents: new TextEncoder().encode(contents), executable: false };
}

function render(node: string, platform: string, c: Config): Rendered {
  switch (platform) {
    case "go":
      return {
        snippet:
          `return jsonPathExtract(${cString(node)}, state, ${cString(c.from)}, ` +
          `${goSteps(c.steps)}, ${cString(c.outputKey)}, ${cString(c.fallback ?? "")})`,
        files: [
          text("internal/graph/connector_json_path.go", GO_HELPER),
          text("internal/graph/connector_json_path_test.go", GO_TEST),
        ],
        dependencies: [],
      };
    case "python-svc":
      return {
        snippet: [
          "from app.connectors.json_path import extract",
          "",
          "return extract(",
          `    ${pyString(node)},`,
          "    state,",
          `    source=${pyString(c.from)},`,
          `    steps=${pySteps(c.steps)},`,
          `    output_key=${pyString(c.outputKey)},`,
          `    default=${c.fallback === undefined ? "None" : pyString(c.fallback)},`,
          ")",
        ].join("\n"),
        files: [
          text("app/connectors/json_path.py", PYTHON_HELPER),
          text("tests/test_connector_json_path.py", PYTHON_TEST),
        ],
        dependencies: [],
      };
    case "java-svc":
      return {
        snippet:
          `return com.svc.connectors.json_path.JsonPath.extract(state, ${cString(node)}, ` +
          `${cString(c.from)}, ${javaSteps(c.steps)}, ${cString(c.outputKey)}, ` +
          `${c.fallback === undefined ? "null" : cString(c.fallback)});`,
        files: [
          text("src/main/java/com/svc/connectors/json_path/JsonPath.java", JAVA_HELPER),
          text("src/test/java/com/svc/connectors/json_path/JsonPathTest.java", JAVA_TEST),
        ],
        dependencies: [],
      };
    default:
      throw [
        {
          severity: "error",
          code: "platform-unsupported",
          message: `${ID} has no code for the platform \`${platform}\``,
          hint: `${ID} supports ${PLATFORMS.join(", ")}`,
        } satisfies Diagnostic,
      ];
  }
}

export const connector: Connector = {
  info() {
    return {
      id: ID,
      version: VERSION,
      platforms: PLATFORMS,
      configSchema: JSON.stringify(SCHEMA),
      dependencies: [],
    };
  },

  render(nodeId, platform, nodeConfig) {
    return render(nodeId, platform, readConfig(JSON.parse(nodeConfig)));
  },
};
