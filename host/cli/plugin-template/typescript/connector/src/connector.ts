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

/**
 * The node's `config`, declared once: svc checks every node's config against
 * this JSON Schema before render, its own formats included (svc-field-name: a
 * state field's name; svc-template: text whose {{field}} name state fields),
 * and gives each description as the hint of a value that breaks it. render
 * reads the config as it is.
 */
const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["outputKey", "text"],
  properties: {
    outputKey: { type: "string", format: "svc-field-name", description: "The state field that receives the text" },
    text: { type: "string", format: "svc-template", description: "The text; {{field}} inserts a state field when the node runs" },
  },
};

/** The config, as the schema says it is. */
interface Config {
  outputKey: string;
  text: string;
}

function error(code: string, message: string, pointer: string, hint?: string): Diagnostic {
  return { severity: "error", code, message, pointer, hint };
}

/** A string as a literal of Go, Java and Python alike. */
function literal(value: string): string {
  return JSON.stringify(value);
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
    const config: Config = JSON.parse(nodeConfig);
    const key = literal(config.outputKey);
    const value = literal(config.text);
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
