// The __SVC_ID__ connector: writes a text, with {{field}} references filled from
// the state at run time, into a state field.
//
// svc runs this module as a WebAssembly component (bundled by esbuild,
// built by ComponentizeJS against wit/, world connector-plugin): `render`
// returns, per platform, the body of the node's function (it returns a
// state patch) and a helper file from templates/, which esbuild embeds.
// The component sees no files, environment, network or clock.

import GO_FILE from "../../templates/go/connector___SVC_SNAKE__.go";
import JAVA_FILE from "../../templates/java-svc/__SVC_CAMEL__.java";
import PYTHON_FILE from "../../templates/python-svc/__SVC_SNAKE__.py";
import type { Connector, Diagnostic, Rendered } from "./wit";

export const ID = "__SVC_ID__";
export const VERSION = "0.1.0";
export const PLATFORMS = ["go", "java-svc", "python-svc"];

/** The JSON Schema of the node's `config`; the host checks it before render. */
const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["outputKey", "text"],
  properties: {
    outputKey: { type: "string", minLength: 1 },
    text: { type: "string" },
  },
};

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function error(code: string, message: string, pointer: string, hint?: string): Diagnostic {
  return { severity: "error", code, message, pointer, hint };
}

/** A string as a literal of Go, Java and Python alike. */
function literal(value: string): string {
  return JSON.stringify(value);
}

/** `outputKey` and `text`, or every problem with a pointer into the config. */
function readConfig(config: Record<string, unknown>): [string, string] {
  const errors: Diagnostic[] = [];
  for (const key of ["outputKey", "text"]) {
    if (typeof config[key] !== "string") {
      errors.push(error("connector-config", `\`${key}\` must be a string`, `/${key}`));
    }
  }
  const outputKey = config.outputKey;
  if (typeof outputKey === "string" && !FIELD_NAME.test(outputKey)) {
    errors.push(
      error(
        "connector-config",
        `\`${outputKey}\` is not a state field name`,
        "/outputKey",
        "name a field of logical.state",
      ),
    );
  }
  if (errors.length > 0) {
    throw errors;
  }
  return [outputKey as string, config.text as string];
}

const encoder = new TextEncoder();

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

  render(_nodeId, platform, nodeConfig): Rendered {
    const [outputKey, text] = readConfig(JSON.parse(nodeConfig));
    const key = literal(outputKey);
    const value = literal(text);
    let path: string;
    let contents: string;
    let snippet: string;
    switch (platform) {
      case "go":
        path = "internal/graph/connector___SVC_SNAKE__.go";
        contents = GO_FILE;
        snippet = `return State{${key}: connector__SVC_CAMEL__Render(${value}, state)}, nil`;
        break;
      case "python-svc":
        path = "app/connectors/__SVC_SNAKE__.py";
        contents = PYTHON_FILE;
        snippet = `from app.connectors.__SVC_SNAKE__ import render\n\ntext = ${value}\nreturn {${key}: render(text, state)}`;
        break;
      case "java-svc":
        path = "src/main/java/com/svc/connectors/__SVC_SNAKE__/__SVC_CAMEL__.java";
        contents = JAVA_FILE;
        snippet = `return Map.of(${key}, com.svc.connectors.__SVC_SNAKE__.__SVC_CAMEL__.render(${value}, state));`;
        break;
      default:
        throw [
          error(
            "platform-unsupported",
            `${ID} has no template for \`${platform}\``,
            "",
            `it supports ${PLATFORMS.join(", ")}`,
          ),
        ];
    }
    return {
      files: [{ path, contents: encoder.encode(contents), executable: false }],
      snippet,
      dependencies: [],
    };
  },
};
