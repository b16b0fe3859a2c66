// The types of svc:codegen 0.2 (wit/codegen.wit) a connector uses, as
// ComponentizeJS passes them: records are objects with camelCase fields,
// `list<u8>` is a Uint8Array, `option<T>` is T or undefined, an enum is its
// case name. A `result` export returns the ok value and throws the error.

export type Severity = "error" | "warning";

export interface Diagnostic {
  severity: Severity;
  code: string;
  message: string;
  /** A JSON pointer into the node's `config` (`/url`). */
  pointer?: string;
  hint?: string;
}

export interface Dependency {
  platform: string;
  spec: string;
}

export interface File {
  path: string;
  contents: Uint8Array;
  executable: boolean;
}

export interface ConnectorInfo {
  id: string;
  version: string;
  platforms: string[];
  /** The JSON Schema of the node's `config`, as JSON text. */
  configSchema: string;
  dependencies: Dependency[];
}

export interface Rendered {
  files: File[];
  snippet: string;
  dependencies: Dependency[];
}

/** The `connector` interface of the `connector-plugin` world. */
export interface Connector {
  info(): ConnectorInfo;
  /** Throws a `Diagnostic[]` for a config it cannot render. */
  render(nodeId: string, platform: string, nodeConfig: string): Rendered;
}
