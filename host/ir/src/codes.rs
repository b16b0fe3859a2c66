//! The registry of diagnostic codes: every stable kebab-case `code` that
//! `svc` (the IR reader, negotiation, the backends, the connector packs, the
//! plugin runtime and the CLI) reports, each with a one-line summary, an
//! explanation and an example, the way linters document their rules.
//!
//! The pages under `docs/diagnostics/` are generated from [`CODES`]; the
//! test `host/ir/tests/codes.rs` checks that every code the sources emit is
//! registered here, that every entry is still emitted, and that the pages are
//! current (`SVC_UPDATE_DOCS=1 cargo test -p svc-ir --test codes` rewrites
//! them).

/// One diagnostic code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    /// The code itself, kebab-case, as in `error[<name>]`.
    pub name: &'static str,
    /// One of the [`GROUPS`]: where in the pipeline it is reported.
    pub group: &'static str,
    /// One line: what is wrong.
    pub summary: &'static str,
    /// Why it is an error, what reports it, and how to fix it (Markdown).
    pub explanation: &'static str,
    /// Markdown: a minimal document fragment or command that triggers it,
    /// then a line `Fix:` (see [`FIX_MARKER`]) and the fixed version.
    pub example: &'static str,
}

/// Separates, in [`Code::example`], what triggers a code from its fix.
pub const FIX_MARKER: &str = "\nFix:\n";

impl Code {
    /// The example split into what triggers the code and its fix.
    pub fn example_and_fix(&self) -> (&'static str, &'static str) {
        match self.example.split_once(FIX_MARKER) {
            Some((example, fix)) => (example.trim(), fix.trim()),
            None => (self.example.trim(), ""),
        }
    }
}

/// The groups codes belong to, in pipeline order, each with a one-line
/// description (the headings of `docs/diagnostics/README.md`).
pub const GROUPS: &[(&str, &str)] = &[
    (
        "document",
        "Reading the graph document: JSON syntax, shapes, names and references.",
    ),
    (
        "state",
        "The state schema in `logical.state` and references to its fields.",
    ),
    ("nodes", "The fields of individual nodes."),
    (
        "topology",
        "The shape of the graph: start, ends, edges, reachability.",
    ),
    ("tools", "Tools and MCP servers in `logical.tools` and `logical.mcpServers`."),
    (
        "templates",
        "Native bodies (`bodiesByPlatform`) and connector templates (`codegen.templates`) a platform needs.",
    ),
    (
        "negotiation",
        "Matching the document with the backend that compiles it.",
    ),
    (
        "plugin",
        "Loading and running backend and connector components in the sandbox.",
    ),
    (
        "connector",
        "Connector nodes: finding the connector, checking its config, placing what it renders.",
    ),
    (
        "pack",
        "Connector packs (`.svc-pack.zip`): building, opening and finding them.",
    ),
    ("archive", "The ZIP layer that reads packs as hostile input."),
    ("project", "Pack projects: `svc.project.json`."),
    ("cli", "The command line: files, output folders, scaffolding."),
];

/// Every code, sorted by name.
pub const CODES: &[Code] = &[
    Code {
        name: "agent-cycle",
        group: "nodes",
        summary: "Supervisors in `logical.agents` are members of each other in a cycle.",
        explanation: r#"A supervisor routes a task between its `members`, and a member may itself be a supervisor. If following members leads back to a supervisor, a run could delegate forever, so the document is refused, naming the cycle.

Remove one of the memberships so the supervisors form a tree."#,
        example: r#"`fixtures/invalid/agent_cycle.graph.json`:

```json
"agents": [
  { "id": "a", "kind": "supervisor", "members": ["b"], "router": "custom" },
  { "id": "b", "kind": "supervisor", "members": ["a"], "router": "custom" }
]
```
Fix:
```json
"agents": [
  { "id": "a", "kind": "supervisor", "members": ["b"], "router": "custom" },
  { "id": "b", "kind": "supervisor", "members": ["writer"], "router": "custom" },
  { "id": "writer", "kind": "worker", "instructions": "You write." }
]
```"#,
    },
    Code {
        name: "backend-info",
        group: "negotiation",
        summary: "The backend component declares an IR version range that is not a semver range.",
        explanation: r#"Before emitting, the host reads the backend's `info()` and checks that its `irVersions` range admits the document's `irVersion`. When `irVersions` does not parse as a semver range (for example `"2.x or so"`), the backend cannot be matched with any document and the compile stops.

This is a fault of the backend component, not of the graph: report it to the backend's author, or use another backend with `--backend PATH.wasm`."#,
        example: r#"A backend whose `info()` returns

```rust
ir_versions: "two and up".into(),
```

fails every compile with `component `…` declares an invalid IR range`.
Fix:
```rust
ir_versions: ">=2.0.0, <3.0.0".into(),
```"#,
    },
    Code {
        name: "backend-not-built",
        group: "plugin",
        summary: "No backend for the platform is built into this svc, and none was given.",
        explanation: r#"`svc compile` uses the backend named by `--backend PATH.wasm`, else by the variable `SVC_BACKEND_<PLATFORM>` (for example `SVC_BACKEND_JAVA_SVC`), else the one built into the binary. A binary built without the platform's backend reports this code.

Pass `--backend` or set the variable to a backend component, or use an svc build that embeds the backend."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --platform java-svc
# error[backend-not-built]: no `java-svc` backend is built into this svc yet
```
Fix:
```sh
svc compile app.graph.json --out build/app --platform java-svc --backend ./svc-backend-java.wasm
```"#,
    },
    Code {
        name: "backend-not-found",
        group: "plugin",
        summary: "The backend component named by --backend or SVC_BACKEND_<PLATFORM> cannot be read.",
        explanation: r#"When `--backend PATH` or the variable `SVC_BACKEND_<PLATFORM>` names a backend component, the file must exist and be readable. A wrong path, or a variable left over from another setup, produces this code with the operating system's reason.

Correct the path, or unset the variable to use the built-in backend."#,
        example: r#"```sh
SVC_BACKEND_GO=/tmp/old/backend.wasm svc compile app.graph.json --out build/app
# error[backend-not-found]: cannot read backend component `/tmp/old/backend.wasm`: No such file or directory
```
Fix:
```sh
unset SVC_BACKEND_GO
svc compile app.graph.json --out build/app
```"#,
    },
    Code {
        name: "backend-platform",
        group: "negotiation",
        summary: "The backend component serves another platform than the one being compiled.",
        explanation: r#"The platform comes from `--platform` or the document's `target.platform`; the backend (built in, `--backend` or `SVC_BACKEND_<PLATFORM>`) reports its own platform in `info()`. A Go backend cannot compile for `python-svc`, so a mismatch stops the compile before anything is emitted.

Pass a backend built for the platform, or change `--platform` to the backend's."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --platform python-svc --backend ./svc-backend-go.wasm
# error[backend-platform]: component `./svc-backend-go.wasm` is a backend for `go`, not `python-svc`
```
Fix:
```sh
svc compile app.graph.json --out build/app --platform go --backend ./svc-backend-go.wasm
```"#,
    },
    Code {
        name: "backend-runtime",
        group: "plugin",
        summary: "A backend's own runtime file has a placeholder the backend does not fill, or lacks one it fills.",
        explanation: r#"Backends copy runtime files into every project and fill `__SVC_NAME__` placeholders in them (`svc_backend_sdk::runtime_files::fill`). A placeholder without a value, or a value without a placeholder, means the backend was built inconsistently; the generated project would not compile, so emission stops.

No graph change fixes this: report it to the backend's author."#,
        example: r#"A backend runtime file `A.java` containing

```java
import com.svc.__SVC_GRAPH_IMPORT__.X;
```

filled with only `PACKAGE` reports `runtime file `A.java` has the placeholder `__SVC_GRAPH_IMPORT__`, which the backend does not fill`.
Fix:
Fill every placeholder the file uses, and use every value given:

```rust
fill("A.java", text, &[("PACKAGE", pkg), ("GRAPH_IMPORT", import)])
```"#,
    },
    Code {
        name: "connector-config",
        group: "connector",
        summary: "A connector node's `config` does not match the config schema its connector publishes.",
        explanation: r#"A connector publishes a JSON Schema for its nodes' `config` in `info()`. Before emitting, the host renders every connector node; before the connector renders a node, the host checks the node's config against that schema and reports each violation (wrong type, missing required field, unknown field with a did-you-mean, bad format) with a pointer into the node's `config`. Connectors scaffolded by `svc plugin new` use the same code for their own config checks.

Make the node's `config` match the schema the connector publishes (its `configSchema`); the message quotes the violated rule."#,
        example: r#"```json
{ "id": "notify", "kind": "connector", "config": { "url": "env:HOOK", "timeoutMs": 0 } }
```

with `svc/webhook`, whose schema says `"timeoutMs": { "type": "integer", "minimum": 1 }`.
Fix:
```json
{ "id": "notify", "kind": "connector", "config": { "url": "env:HOOK", "timeoutMs": 5000 } }
```"#,
    },
    Code {
        name: "connector-dependency",
        group: "connector",
        summary: "A connector asks the Java backend for a Maven dependency that is not group:artifact[:version].",
        explanation: r#"A connector's rendered code can list runtime dependencies per platform. The `java-svc` backend writes them into `pom.xml` and accepts only `group:artifact` or `group:artifact:version`, each part made of letters, digits, `.`, `_` and `-`. Anything else could not be written as a `<dependency>`.

The spec comes from the connector component, so report it to the connector's author (or use another version of the connector)."#,
        example: r#"A connector rendering for `java-svc` with

```rust
Dependency { platform: "java-svc".into(), spec: "caffeine".into() }
```
Fix:
```rust
Dependency { platform: "java-svc".into(), spec: "com.github.ben-manes.caffeine:caffeine:3.1.8".into() }
```"#,
    },
    Code {
        name: "connector-duplicate",
        group: "pack",
        summary: "Two different packs provide the same connector at the same version.",
        explanation: r#"Packs are found on `--plugins PATH` and in the plugin directory (`$SVC_PLUGIN_DIR`, else `$XDG_DATA_HOME/svc/plugins`, else `~/.local/share/svc/plugins`). A connector id and version must identify one pack: when two packs with different bytes claim the same `connector` and `version`, the compile cannot tell which one the graph means. The same pack found twice is fine.

Remove one of the packs from the plugin paths, or bump the version of the rebuilt one."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --plugins ./dist ~/old-packs
# error[connector-duplicate]: connector `svc/webhook` 0.1.0 is provided by two different packs: …
```
Fix:
```sh
svc compile app.graph.json --out build/app --plugins ./dist
```"#,
    },
    Code {
        name: "connector-file-conflict",
        group: "connector",
        summary: "A connector writes a file the backend generates, or two connector nodes write one path with different contents.",
        explanation: r#"Connector components return files besides the snippet of each node. Every path must be written once: a connector file at a path the backend generates itself (say `go.mod`), or two connector nodes writing the same path with different contents, would silently overwrite code, so the compile stops. Identical files from several nodes are written once.

Connector files belong in the folders the connector contract names (`marketplace/README.md`); report the clash to the connector's author."#,
        example: r#"A connector that renders for `go`

```rust
files: vec![File::text("go.mod", "module x\n")],
```
Fix:
```rust
files: vec![File::text("internal/connectors/webhook/webhook.go", WEBHOOK_GO)],
```"#,
    },
    Code {
        name: "connector-info",
        group: "connector",
        summary: "A connector component's info() disagrees with its pack, or its config schema is unusable.",
        explanation: r#"When a connector is loaded (by `svc compile`, `svc pack` or `svc validate-pack`) the host compares its `info()` with the pack's manifest (or `svc.project.json`): the id, the version and the platforms must agree, the `svc:codegen` version the component was built against must be inside the pack's `hostApi` range, and the `configSchema` must be JSON and a usable JSON Schema (draft 2020-12, no remote `$ref`). A mismatch means the component is not the connector the pack describes.

Make the crate's `info()` and `svc.project.json` agree and rebuild the pack."#,
        example: r#"`svc.project.json` says `"version": "0.2.0"` but the crate's `Cargo.toml` still says `version = "0.1.0"`:

```sh
svc pack
# error[connector-info]: the built component does not match svc.project.json: its component says version 0.1.0, the manifest says 0.2.0
```
Fix:
Set the same version in `Cargo.toml` and `svc.project.json`, then run `svc pack` again.
"#,
    },
    Code {
        name: "connector-missing",
        group: "connector",
        summary: "The connector a node's codegen.templates entry names is in no available pack.",
        explanation: r#"A connector node's code is rendered by the connector that `codegen.templates[platform][node]` names. The host looks for it in the packs on `--plugins PATH` and in the plugin directory (`$SVC_PLUGIN_DIR`); when no pack provides that connector id, the node cannot be rendered. A compile run without any packs (the `NoConnectors` source) reports the same code for every connector node.

The code is also used for an internal mismatch: a backend that finds no rendered code for a connector node in its emit request (SDK `connectors::place`), or a 0.1 backend asking the host for a node it did not render. Those mean the host and the backend disagree about the document and should be reported to their authors.

Make the connector's pack available with `svc compile --plugins PATH`, or put it in the plugin directory. `fixtures/valid/connector_node.graph.json` reports it for `python-svc`, where no pack is loaded."#,
        example: r#"`fixtures/valid/connector_node.graph.json` compiled for `python-svc` without packs:

```json
"codegen": { "templates": { "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
```

```sh
svc compile connector_node.graph.json --out build/notify --platform python-svc
```
Fix:
```sh
svc compile connector_node.graph.json --out build/notify --platform python-svc --plugins ./dist/webhook-0.1.0.svc-pack.zip
```"#,
    },
    Code {
        name: "connector-version",
        group: "connector",
        summary: "A codegen.templates version is not a semver range, or no available version of the connector matches it.",
        explanation: r#"Each `codegen.templates` entry names a connector and a semver range (`"^1.2"`, `">=1.0, <2.0"`). The host picks the highest available version of that connector inside the range. When the range does not parse, or packs of the connector exist but none has a version in the range, the node cannot be rendered; the message lists the versions available.

Add a pack of a matching version, or widen the range."#,
        example: r#"With only `svc/webhook` 0.1.0 available:

```json
"notify": { "connector": "svc/webhook", "version": "^2" }
```
Fix:
```json
"notify": { "connector": "svc/webhook", "version": "^0.1" }
```"#,
    },
    Code {
        name: "default-type",
        group: "state",
        summary: "A state field's `default` does not match the field's type.",
        explanation: r#"A default is the value a field has before any node writes it, so it must be a value of the field's type (and of its `items` type for arrays). Generated services would otherwise start from a state their own validation refuses.

Change the default, or the field's type."#,
        example: r#"`fixtures/invalid/default_type_mismatch.graph.json`:

```json
{ "name": "count", "type": "integer", "default": "zero" }
```
Fix:
```json
{ "name": "count", "type": "integer", "default": 0 }
```"#,
    },
    Code {
        name: "duplicate-edge",
        group: "topology",
        summary: "The same edge (from → to) is declared twice.",
        explanation: r#"`logical.edges` is a set: a second edge with the same `from` and `to` adds nothing and usually hides a typo (an edge that was meant to go elsewhere). It also counts as a second outgoing edge of `from`, so `edge-count` is reported too.

Remove the repeated edge, or point it where it was meant to go."#,
        example: r#"```json
"edges": [
  { "from": "start", "to": "reply" },
  { "from": "start", "to": "reply" },
  { "from": "reply", "to": "end" }
]
```
Fix:
```json
"edges": [
  { "from": "start", "to": "reply" },
  { "from": "reply", "to": "end" }
]
```"#,
    },
    Code {
        name: "duplicate-field",
        group: "connector",
        summary: "A connector config lists the same state field twice (svc/webhook `fields`).",
        explanation: r#"The `svc/webhook` connector sends the state fields listed in `fields`; each may appear once, since a repeated name would be sent twice or hide a typo.

List each state field once."#,
        example: r#"```json
"config": { "url": "env:HOOK", "fields": ["question", "question"] }
```
Fix:
```json
"config": { "url": "env:HOOK", "fields": ["question", "answer"] }
```"#,
    },
    Code {
        name: "duplicate-id",
        group: "document",
        summary: "Two nodes, tools, MCP servers or state fields share one id or name.",
        explanation: r#"Node ids, tool ids, MCP server ids and state field names become identifiers in the generated code and are what edges, branches and references point at, so each must be unique within its list. The diagnostic points at the second occurrence (and, for nodes, names the first).

Rename one of them, or remove the duplicate."#,
        example: r#"`fixtures/invalid/duplicate_node_id.graph.json` (and `duplicate_state_field.graph.json` for state):

```json
"nodes": [
  { "id": "start", "kind": "start" },
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "end", "kind": "end" }
]
```
Fix:
```json
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "reply_again", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
```"#,
    },
    Code {
        name: "duplicate-intent",
        group: "nodes",
        summary: "An intent_classifier lists the same intent name twice.",
        explanation: r#"The model's reply is matched to an intent name trimmed and case-insensitively, so two intents whose names differ only in case or surrounding spaces could never be told apart. Each name must be unique.

Rename or merge the duplicate intent."#,
        example: r#"`fixtures/invalid/intent_duplicate.graph.json`:

```json
"intents": [ { "name": "billing" }, { "name": "Billing" } ]
```
Fix:
```json
"intents": [ { "name": "billing" }, { "name": "shipping" } ]
```"#,
    },
    Code {
        name: "edge-count",
        group: "topology",
        summary: "A node has other than one outgoing edge, a router has an edge, an end has one, or an edge enters start.",
        explanation: r#"The graph runs one node at a time, so every node except routers and `end` nodes has exactly one outgoing edge; routers choose their successor with `branches` and have no edges; `end` nodes have none; and nothing may lead back into `start`. Reported at the node for a wrong count, and at the edge for a router's edge, an end's edge or an edge into `start`.

Give the node exactly one edge; to choose between targets, use a `router` with branches."#,
        example: r#"`fixtures/invalid/two_outgoing_edges.graph.json`:

```json
"edges": [
  { "from": "start", "to": "reply" },
  { "from": "reply", "to": "end" },
  { "from": "reply", "to": "start" }
]
```
Fix:
```json
"edges": [
  { "from": "start", "to": "reply" },
  { "from": "reply", "to": "end" }
]
```"#,
    },
    Code {
        name: "empty-prompt",
        group: "nodes",
        summary: "An llm node's user prompt is empty.",
        explanation: r#"An `llm` node sends `prompt.user` (after filling its `{{placeholders}}`) as the user message; an empty or whitespace-only prompt would make every call ask nothing.

Write the prompt, usually with placeholders for the state fields it needs."#,
        example: r#"```json
{ "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "  " } }
```
Fix:
```json
{ "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "Answer briefly: {{question}}" } }
```"#,
    },
    Code {
        name: "hitl-checkpointer",
        group: "nodes",
        summary: "A `hitl` node is used without a checkpointer to resume the run.",
        explanation: r#"A `hitl` node pauses the run until a reviewer answers; the paused run is kept by the checkpointer so that a resume can continue it. With `settings.checkpointer.type` `none` (the default) there is nothing to resume from, so the document is refused, naming the node.

Set a checkpointer, or remove the node."#,
        example: r#"`fixtures/invalid/hitl_without_checkpointer.graph.json`:

```json
{ "id": "review", "kind": "hitl", "payload": { "q": "{{question}}" }, "outputKey": "answer" }
```
Fix:
```json
"settings": { "checkpointer": { "type": "memory" } }
```"#,
    },
    Code {
        name: "host-api",
        group: "pack",
        summary: "A pack (or pack project) needs a host API this svc does not provide.",
        explanation: r#"Connector components are built against a version of the `svc:codegen` WIT interface, the host API. A pack's manifest states the range it needs: opening the pack fails when none of the host API versions this svc loads (the message lists them, newest first) is inside it; a `hostApi` that is not a semver range is reported with this code there too. A pack project's `hostApi` in `svc.project.json` must admit the version new packs are built against (the newest).

Use a release of the pack built for this svc, or rebuild the connector against the current SDK and set `"hostApi"` accordingly."#,
        example: r#"`svc.project.json`, with an svc whose newest host API is 0.2.0:

```json
"hostApi": "^0.3"
```
Fix:
```json
"hostApi": "^0.2"
```"#,
    },
    Code {
        name: "invalid-condition",
        group: "nodes",
        summary: "A router branch's condition does not fit its operator or its field's type.",
        explanation: r#"A condition `{ "field", "op", "value" }` compares a state field. `exists` and `truthy` take no `value`; the others need one. Comparisons work on scalar fields (`string`, `integer`, `number`, `boolean`); ordering (`gt`, `ge`, `lt`, `le`) does not apply to booleans; `in` takes a list; and the value (or each list item) must have the field's type.

Change the operator, the value, or compare another field."#,
        example: r#"`fixtures/invalid/condition_value_type.graph.json` (`count` is an `integer`):

```json
"when": { "field": "count", "op": "gt", "value": "ten" }
```
Fix:
```json
"when": { "field": "count", "op": "gt", "value": 10 }
```"#,
    },
    Code {
        name: "invalid-config",
        group: "connector",
        summary: "The node config the host passed to a connector component is not JSON (reported by the SDK inside the connector).",
        explanation: r#"Connectors built with the svc SDK parse the node config they receive before calling their own `render`. The host always passes the node's `config` from the document, serialized as JSON, so this code only appears when a connector is driven by another host or a test harness that passes bad text.

Pass the node's `config` as a JSON object."#,
        example: r#"A test that calls a connector's export directly:

```rust
__connector_render::<Webhook>("go".into(), "url=env:HOOK".into())
```
Fix:
```rust
__connector_render::<Webhook>("go".into(), "{\"url\":\"env:HOOK\"}".into())
```"#,
    },
    Code {
        name: "invalid-endpoint",
        group: "tools",
        summary: "An HTTP tool endpoint, MCP server URL or connector URL is neither an http(s) URL nor env:NAME.",
        explanation: r#"Services call HTTP tools, remote MCP servers (`sse`, `streamable_http`) and webhook connectors at run time, so the address must be an absolute `http://` or `https://` URL with a host, or `env:NAME` to read it from the environment variable `NAME` when the service starts. A bare host name or a path is refused.

Write the full URL, or `env:NAME` (preferable when the address differs between environments or holds a secret)."#,
        example: r#"`fixtures/invalid/invalid_endpoint.graph.json`:

```json
{ "id": "crm", "kind": "http", "endpoint": "crm.internal/lookup" }
```
Fix:
```json
{ "id": "crm", "kind": "http", "endpoint": "env:CRM_URL" }
```"#,
    },
    Code {
        name: "invalid-env-name",
        group: "document",
        summary: "A value that must name an environment variable is not a variable name.",
        explanation: r#"Secrets and addresses are never written into the graph: `security.keyEnv`, `settings.model.baseUrlEnv`, `settings.model.apiKeyEnv` and `env:NAME` values in connector configs name environment variables, which must match `^[A-Za-z_][A-Za-z0-9_]*$`. A value such as a pasted key is refused so that it does not end up in generated code.

Write the name of the variable that holds the value, and set the variable where the service runs."#,
        example: r#"`fixtures/invalid/invalid_key_env.graph.json`:

```json
"security": { "auth": "api_key", "keyEnv": "sk-12345 secret" }
```
Fix:
```json
"security": { "auth": "api_key", "keyEnv": "SVC_API_KEY" }
```"#,
    },
    Code {
        name: "invalid-field-name",
        group: "connector",
        summary: "A connector config names a state field, or uses a {{placeholder}}, that is not a valid field name.",
        explanation: r#"Connector configs refer to state fields (`outputKey`, `fields`, `field`, `hitField`) and insert them into text with `{{field}}`. These must be identifiers (`^[A-Za-z_][A-Za-z0-9_]*$`), because they become names in the generated code.

Use the name of a state field."#,
        example: r#"`svc/webhook`:

```json
"config": { "url": "env:HOOK", "fields": ["ok", "no-dash"] }
```
Fix:
```json
"config": { "url": "env:HOOK", "fields": ["ok", "no_dash"] }
```"#,
    },
    Code {
        name: "invalid-header",
        group: "connector",
        summary: "A webhook header name is not an HTTP token, is set by the HTTP client, or its value spans lines.",
        explanation: r#"The `svc/webhook` connector sends the configured `headers` with every call. A name must be an HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``); `Connection`, `Content-Length`, `Expect`, `Host`, `TE`, `Transfer-Encoding` and `Upgrade` are set by the HTTP client and cannot be configured; and a value may not hold a line break or NUL, which would inject headers.

Fix the header name, remove a client-managed header, or write the value on one line."#,
        example: r#"```json
"config": { "url": "env:HOOK", "headers": { "Content-Length": "12" } }
```
Fix:
```json
"config": { "url": "env:HOOK", "headers": { "X-Source": "svc" } }
```"#,
    },
    Code {
        name: "invalid-id",
        group: "document",
        summary: "A document, node, tool, MCP server or connector id, or a state field name, does not match its pattern.",
        explanation: r#"Ids become package names, identifiers and file names in every target language, so each follows a pattern: the document `id` matches `^[a-z][a-z0-9_-]{0,62}$`; node, tool and MCP server ids match `^[A-Za-z][A-Za-z0-9_]*$` (no dashes); state field names match `^[A-Za-z_][A-Za-z0-9_]*$`; connector ids in `codegen.templates` look like `vendor/name`.

Rename it to match the pattern (and update every reference)."#,
        example: r#"`fixtures/invalid/invalid_node_id.graph.json`:

```json
{ "id": "re-ply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
```
Fix:
```json
{ "id": "re_ply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
```"#,
    },
    Code {
        name: "invalid-name",
        group: "cli",
        summary: "The name given to `svc new` or `svc plugin new` is not a valid project or pack name.",
        explanation: r#"`svc new NAME` scaffolds a Python project: the name must start with a lowercase letter followed by lowercase letters, digits, `_` or `-`. `svc plugin new [OWNER/]NAME` scaffolds a pack project: owner and name are lowercase letters, digits and single dashes, starting with a letter, at most 64 characters. The names become folder, package and crate names.

Choose a name that matches."#,
        example: r#"```sh
svc plugin new Acme/Slack
```
Fix:
```sh
svc plugin new acme/slack
```"#,
    },
    Code {
        name: "invalid-platform",
        group: "document",
        summary: "A platform name is not one of python-svc, java-svc or go.",
        explanation: r#"`target.platform` and the platform keys of `bodiesByPlatform` and `codegen.templates` name the backends svc has: `python-svc`, `java-svc` and `go`. Anything else, including near misses like `golang` or `python`, is refused with a did-you-mean hint.

Use one of the three names."#,
        example: r#"`fixtures/invalid/invalid_platform.graph.json`:

```json
"target": { "platform": "golang" }
```
Fix:
```json
"target": { "platform": "go" }
```"#,
    },
    Code {
        name: "invalid-value",
        group: "document",
        summary: "A value is not one of the values its field accepts.",
        explanation: r#"Enumerated fields accept a fixed list: node `kind`, tool `kind`, MCP `transport`, state field `type` and `reducer`, condition `op`, `security.auth`, `outputShape`, log levels and formats, checkpointer `type`. The diagnostic lists the valid values and suggests the nearest one. It is also reported for an MCP `stdio` server with an empty `command`, and by connectors for config values outside their list (for example `svc/kv-cache` `op`, an empty `key` or `namespace`).

Use one of the listed values."#,
        example: r#"`fixtures/invalid/invalid_auth.graph.json` (and `invalid_node_kind.graph.json`):

```json
"security": { "auth": "apikey" }
```
Fix:
```json
"security": { "auth": "api_key" }
```"#,
    },
    Code {
        name: "invalid-version",
        group: "document",
        summary: "The document `version` is not semver, or a codegen.templates `version` is not a semver range.",
        explanation: r#"The document's `version` (default `0.1.0`) is written into generated packages and the build manifest, so it must be a semver version `MAJOR.MINOR.PATCH`. The `version` of a `codegen.templates` entry selects a connector and must be a semver range such as `"^1.2"`.

Write a full semver version, or a valid range."#,
        example: r#"`fixtures/invalid/invalid_version.graph.json`:

```json
"version": "1.0"
```
Fix:
```json
"version": "1.0.0"
```"#,
    },
    Code {
        name: "io",
        group: "cli",
        summary: "A file or folder could not be read or written.",
        explanation: r#"The operating system refused an operation svc needed: reading the graph document, inspecting, creating or renaming the `--out` folder and its temporary siblings, or writing a pack (which is also refused when the output folder is a symbolic link). The message names the path and the system's reason.

Check the path, its permissions and free space."#,
        example: r#"```sh
svc compile missing.graph.json --out build/app
# error[io]: cannot read `missing.graph.json`: No such file or directory
```
Fix:
```sh
svc compile app.graph.json --out build/app
```"#,
    },
    Code {
        name: "ir-version",
        group: "document",
        summary: "The document's irVersion is not 2.x.",
        explanation: r#"This compiler reads IR 2.x (>= 2.0.0, < 3.0.0). `irVersion` may be written `2`, `"2"`, `"2.N"` or `"2.N.M"`; it is normalized to `"2.N.M"`. Any other version, or a form such as `2.1` as a JSON number, is refused. (Whether the chosen backend reads the version is checked later: `ir-version-unsupported`.)

Write an IR 2 version, for example `"irVersion": "2.2"`, after converting the document if it was written for another major version."#,
        example: r#"`fixtures/invalid/ir_version_unsupported.graph.json`:

```json
"irVersion": "3.0"
```
Fix:
```json
"irVersion": "2.2"
```"#,
    },
    Code {
        name: "ir-version-unsupported",
        group: "negotiation",
        summary: "The backend does not read the document's IR version.",
        explanation: r#"Each backend declares in `info()` the IR versions it reads (a semver range such as `>=2.0.0, <2.3.0`). A document that is valid IR 2 but newer than the backend knows (for example `2.4` with a backend for `<2.3`) cannot be compiled by it, since it may use features the backend does not know.

Use a backend release that reads this IR version, or write the document for an older minor version."#,
        example: r#"A document with `"irVersion": "2.9"` and a backend that reads `>=2.0.0, <2.3.0`:

```sh
svc compile app.graph.json --out build/app --backend ./old-backend.wasm
```
Fix:
Use the built-in backend (drop `--backend`) or a newer backend component.
"#,
    },
    Code {
        name: "items-type",
        group: "state",
        summary: "`items` is given for a state field that is not an array.",
        explanation: r#"`items` declares the type of an `array` field's elements. On any other type it means nothing and usually shows that the field was meant to be an array.

Remove `items`, or make the field an `array`."#,
        example: r#"```json
{ "name": "tags", "type": "string", "items": { "type": "string" } }
```
Fix:
```json
{ "name": "tags", "type": "array", "items": { "type": "string" } }
```"#,
    },
    Code {
        name: "json-syntax",
        group: "document",
        summary: "The file is not valid JSON, or an object repeats a key.",
        explanation: r#"Graph documents, `svc.project.json` and the normalized IR a backend receives are strict JSON: no comments, no trailing commas, and no key twice in one object (a repeated key would make the document mean different things to different readers). The position is that of the first error.

Fix the syntax at the reported line and column."#,
        example: r#"`fixtures/invalid/json_syntax.graph.json` (and `duplicate_json_key.graph.json`):

```json
"logical": {
  "nodes": [],
}
```
Fix:
```json
"logical": {
  "nodes": []
}
```"#,
    },
    Code {
        name: "manifest-connector",
        group: "project",
        summary: "`connector` in svc.project.json is not an owner/name connector id.",
        explanation: r#"A pack project's `connector` is the id graphs use in `codegen.templates`: `owner/name`, each part lowercase letters, digits and single dashes, starting with a letter.

Write the id as `owner/name`."#,
        example: r#"```json
"connector": "slack"
```
Fix:
```json
"connector": "acme/slack"
```"#,
    },
    Code {
        name: "manifest-host-api",
        group: "project",
        summary: "`hostApi` in svc.project.json is not a semver range.",
        explanation: r#"`hostApi` states which `svc:codegen` host API versions the connector was built for, as a semver range. A value that does not parse cannot be checked against any host. (A valid range that excludes this svc's host API is `host-api`.)

Write a range such as `"^0.2"`."#,
        example: r#"```json
"hostApi": "0.2 or later"
```
Fix:
```json
"hostApi": "^0.2"
```"#,
    },
    Code {
        name: "manifest-kind",
        group: "project",
        summary: "`kind` in svc.project.json is not plugin-creator.",
        explanation: r#"`svc pack` and `svc validate-pack` read only pack projects, whose manifest says `"kind": "plugin-creator"`. Another kind means the folder holds some other project.

Run the command in a pack project (made by `svc plugin new NAME`), or pass `--root PATH` to one."#,
        example: r#"```json
"kind": "backend"
```
Fix:
```json
"kind": "plugin-creator"
```"#,
    },
    Code {
        name: "manifest-language",
        group: "project",
        summary: "`language` in svc.project.json is not a language svc builds connectors in.",
        explanation: r#"`language` says how `svc pack` builds the connector: `rust` (the default: a cargo crate), `python` (componentize-py) or `typescript` (esbuild and ComponentizeJS, through npm).

Write one of them, or leave the field out for Rust."#,
        example: r#"```json
"language": "javascript"
```
Fix:
```json
"language": "typescript"
```"#,
    },
    Code {
        name: "manifest-limits",
        group: "project",
        summary: "`limits` in svc.project.json asks for something that is not a positive integer or is over the host maximum.",
        explanation: r#"A connector whose component starts an interpreter (Python, JavaScript) may need more memory or time per call than svc's defaults (256 MiB, 10 s). It asks for them in `limits`: `memoryMiB` and `timeoutMs`, each a positive integer up to the host maximum (1024 MiB, 60000 ms). Only that pack's calls get them; nothing is raised for other plugins.

Ask for no more than the maximum, or make the connector's work lighter."#,
        example: r#"```json
"limits": { "memoryMiB": 4096 }
```
Fix:
```json
"limits": { "memoryMiB": 512 }
```"#,
    },
    Code {
        name: "manifest-name",
        group: "project",
        summary: "`name` in svc.project.json is not a valid pack name.",
        explanation: r#"The pack name becomes the file name `NAME-VERSION.svc-pack.zip` and a crate name: lowercase letters, digits and single dashes, starting with a letter, not ending with a dash, at most 64 characters.

Rename the pack."#,
        example: r#"```json
"name": "Slack_Notify"
```
Fix:
```json
"name": "slack-notify"
```"#,
    },
    Code {
        name: "manifest-path",
        group: "project",
        summary: "`source` (or `crate`), `templates` or `document` in svc.project.json is not a safe relative path.",
        explanation: r#"These paths name folders and files inside the project, and the same rules as for pack entries apply: relative, `/`-separated, no `..` or `.` components, no empty components, backslashes, control characters or drive prefixes. The message names the rule that is broken.

Write a relative path inside the project."#,
        example: r#"```json
"templates": "../shared/templates"
```
Fix:
```json
"templates": "templates"
```"#,
    },
    Code {
        name: "manifest-platform",
        group: "project",
        summary: "`platforms` in svc.project.json is empty, names an unknown platform, or lists one twice.",
        explanation: r#"A pack project lists the platforms its connector renders for: a non-empty list of distinct names among `go`, `java-svc` and `python-svc`.

Fix the list."#,
        example: r#"```json
"platforms": ["go", "python"]
```
Fix:
```json
"platforms": ["go", "python-svc"]
```"#,
    },
    Code {
        name: "manifest-source",
        group: "project",
        summary: "svc.project.json names the connector's folder twice, or with `crate` for a connector that is not Rust.",
        explanation: r#"`source` names the folder of the connector's code, relative to the project root. `crate` is its older name, still read for Rust connectors; a project gives one of the two, and a Python or TypeScript project gives `source`.

Keep `source`."#,
        example: r#"```json
"language": "python",
"crate": "connector"
```
Fix:
```json
"language": "python",
"source": "connector"
```"#,
    },
    Code {
        name: "manifest-type",
        group: "project",
        summary: "A value in svc.project.json has the wrong JSON type.",
        explanation: r#"The manifest is an object whose fields are strings, except `platforms`, a list of strings.

Write each field with its type."#,
        example: r#"```json
"platforms": "go"
```
Fix:
```json
"platforms": ["go"]
```"#,
    },
    Code {
        name: "manifest-version",
        group: "project",
        summary: "`version` in svc.project.json is not semver, or carries build metadata.",
        explanation: r#"The pack version must be a semver version. Build metadata (`+build.5`) is refused because semver ranges cannot tell builds apart, so two builds would claim one version.

Write a plain version and bump it for each release."#,
        example: r#"```json
"version": "0.1.0+build.5"
```
Fix:
```json
"version": "0.1.1"
```"#,
    },
    Code {
        name: "missing-body",
        group: "templates",
        summary: "A function node or native tool has no body for the platform being compiled.",
        explanation: r#"`function` nodes and `native` tools run code written by hand for each platform, in `bodiesByPlatform[platform][id]`; bodies are never translated between languages. Compiling for a platform without the body is refused (by negotiation before emitting, and by the backend itself).

Add the body for the platform, or compile for a platform that has one."#,
        example: r#"`fixtures/valid/missing_go_body.graph.json` compiled for `go`:

```json
"bodiesByPlatform": { "python-svc": { "clean": "..." }, "java-svc": { "clean": "..." } }
```
Fix:
```json
"bodiesByPlatform": { "python-svc": { "clean": "..." }, "java-svc": { "clean": "..." }, "go": { "clean": "..." } }
```"#,
    },
    Code {
        name: "missing-field",
        group: "document",
        summary: "A required field is absent.",
        explanation: r#"Every object of the document has required fields: `irVersion`, `id` and `logical` at the top; `nodes` in `logical`; `id` and `kind` for nodes, plus the fields of the kind (`outputKey`, `prompt`, `template`, `toolId`, `branches`, `graph`...); `name` and `type` for state fields; and so on. `svc.project.json` and connector configs report their required fields with this code too. The diagnostic points at the object that lacks the field.

Add the field. When a field was misspelt, `unknown-field` is reported at the misspelling too."#,
        example: r#"`fixtures/invalid/ir_version_missing.graph.json`:

```json
{
  "id": "broken",
  "target": { "platform": "go" }
```
Fix:
```json
{
  "irVersion": "2.2",
  "id": "broken",
  "target": { "platform": "go" }
```"#,
    },
    Code {
        name: "missing-model",
        group: "nodes",
        summary: "An llm node names no model and settings.model is absent.",
        explanation: r#"An `llm` node calls a model: either its own `model` or the default in `logical.settings.model`. With neither, the generated service would not know what to call.

Add `model` to the node or a default to `logical.settings`."#,
        example: r#"`fixtures/invalid/missing_model.graph.json`:

```json
{ "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "{{question}}" } }
```
Fix:
```json
{ "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "{{question}}" },
  "model": { "provider": "openai", "name": "gpt-4o-mini" } }
```"#,
    },
    Code {
        name: "name-collision",
        group: "negotiation",
        summary: "Two ids become one file, module, class, field or registered name on the target.",
        explanation: r#"Each backend derives names from ids: a Go file `internal/graph/node_<id>.go` (lowercased), a Python module `app/nodes/<id>.py` (lowercased, a keyword gets a trailing `_`) and the name a node, tool, agent or MCP server is registered under (a subgraph's child names carry the subgraph node's id and `__` as a prefix), a Java class `<Id>Node` (PascalCase) and a field `<id>Node` (camelCase). Ids that differ only in letter case, in `_`, or by a keyword's trailing `_` can map to one name. Before it writes anything, the backend claims every name it derives; the second id to reach a name is refused, with both ids, both JSON pointers and the name. No target renames one of them behind your back. Ids that are keywords of the target language are fine on their own.

Rename one of the two ids."#,
        example: r#"`fixtures/valid/name_collision.graph.json`, on every platform:

```json
{ "id": "foo", "kind": "response_template", "template": "a", "outputKey": "answer" },
{ "id": "Foo", "kind": "response_template", "template": "b", "outputKey": "answer" }
```
Fix:
```json
{ "id": "foo", "kind": "response_template", "template": "a", "outputKey": "answer" },
{ "id": "foo_again", "kind": "response_template", "template": "b", "outputKey": "answer" }
```"#,
    },
    Code {
        name: "no-end",
        group: "topology",
        summary: "The graph has no end node.",
        explanation: r#"A run finishes when it reaches an `end` node; a graph without one could never return a result.

Add `{ "id": "end", "kind": "end" }` and an edge to it."#,
        example: r#"`fixtures/invalid/no_end.graph.json`:

```json
"nodes": [
  { "id": "start", "kind": "start" },
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
]
```
Fix:
```json
"nodes": [
  { "id": "start", "kind": "start" },
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "end", "kind": "end" }
]
```
and the edge `{ "from": "reply", "to": "end" }`."#,
    },
    Code {
        name: "no-path-to-end",
        group: "topology",
        summary: "A cycle of reachable nodes never reaches an end node.",
        explanation: r#"Once a run enters such a cycle it can only loop until `maxSteps` stops it with an error. The diagnostic names the cycle (`ping → pong → ping`) at its first node.

Give one node of the cycle a way out: a router branch to a node that reaches `end`."#,
        example: r#"`fixtures/invalid/cycle_without_end.graph.json`:

```json
"edges": [
  { "from": "start", "to": "ping" },
  { "from": "ping", "to": "pong" },
  { "from": "pong", "to": "ping" }
]
```
Fix:
Replace `pong`'s edge with a router that can leave the loop:

```json
{ "id": "again", "kind": "router", "branches": [
  { "when": { "field": "done", "op": "truthy" }, "to": "end" },
  { "to": "ping" }
] }
```"#,
    },
    Code {
        name: "no-platform",
        group: "negotiation",
        summary: "The document names no target platform and none was passed.",
        explanation: r#"A compile needs a platform: `--platform` on the command line, or `target.platform` in the document.

Add `"target": { "platform": "go" }` (or `python-svc`, `java-svc`), or pass `--platform`."#,
        example: r#"```sh
svc compile app.graph.json --out build/app   # the document has no "target"
```
Fix:
```sh
svc compile app.graph.json --out build/app --platform go
```"#,
    },
    Code {
        name: "out-not-directory",
        group: "cli",
        summary: "--out names an existing file, not a directory.",
        explanation: r#"The project is written to the folder `--out`; an existing file there is never replaced, with or without `--force`.

Choose another `--out` path."#,
        example: r#"```sh
svc compile app.graph.json --out README.md
```
Fix:
```sh
svc compile app.graph.json --out build/app
```"#,
    },
    Code {
        name: "out-not-empty",
        group: "cli",
        summary: "--out is a directory that is not empty.",
        explanation: r#"A compile writes a complete project and does not merge it into existing files. An empty or new folder is written directly; a non-empty one is replaced only with `--force` (atomically, and only that folder).

Pass `--force`, or choose an empty or new folder."#,
        example: r#"```sh
svc compile app.graph.json --out build/app   # build/app holds an earlier project
```
Fix:
```sh
svc compile app.graph.json --out build/app --force
```"#,
    },
    Code {
        name: "out-of-range",
        group: "document",
        summary: "A number is outside the range its field allows.",
        explanation: r#"Integer settings have bounds: `maxSteps` 1 to 1,000,000, `requestTimeoutMs` 1 to 86,400,000, `server.port` 1 to 65535, tool and MCP `timeoutMs` up to 3,600,000, `maxTokens` up to 4,294,967,295, and negative or fractional values are refused where an integer is expected. Connectors report their own bounds (for example `timeoutMs`, `ttlSeconds`, `maxEntries`) with this code.

Use a value inside the range given in the message."#,
        example: r#"```json
"settings": { "maxSteps": 0 }
```
Fix:
```json
"settings": { "maxSteps": 25 }
```"#,
    },
    Code {
        name: "out-unsafe",
        group: "cli",
        summary: "--force would replace the current directory, one of its parents, or the root.",
        explanation: r#"`--force` replaces exactly the `--out` folder. When that folder holds the current directory (`--out .`, `--out ..`) or is the file system root, a typo would wipe far more than a generated project, so it is refused.

Point `--out` at the project folder itself, for example `--out build/my-service`."#,
        example: r#"```sh
svc compile app.graph.json --out . --force
```
Fix:
```sh
svc compile app.graph.json --out build/app --force
```"#,
    },
    Code {
        name: "output-type",
        group: "state",
        summary: "A node writes its output to a state field that cannot hold it.",
        explanation: r#"Nodes that produce one text (`response_template`, `llm` with the default `outputShape` `scalar`) write it to a `string` field, a `messages` field (as one assistant message) or an `append` array of strings (as one more item). An `llm` node with `outputShape` `list` writes an `array` of strings. Any other target, such as an `integer` field or an `append` array of integers, is refused, naming the field's type.

Point `outputKey` at a field of a fitting type, or change the field."#,
        example: r#"`fixtures/invalid/text_into_integer_append.graph.json`:

```json
{ "name": "scores", "type": "array", "items": { "type": "integer" }, "reducer": "append" }
...
{ "id": "note", "kind": "response_template", "template": "seen {{question}}", "outputKey": "scores" }
```
Fix:
```json
{ "name": "notes", "type": "array", "items": { "type": "string" }, "reducer": "append" }
...
{ "id": "note", "kind": "response_template", "template": "seen {{question}}", "outputKey": "notes" }
```"#,
    },
    Code {
        name: "pack-build",
        group: "pack",
        summary: "The connector could not be built into a .wasm component.",
        explanation: r#"`svc pack` and `svc validate-pack` build the project's connector with its language's toolchain: a Rust crate with `cargo build --release --target wasm32-wasip2`, a Python module with `componentize-py`, a TypeScript package with `npm ci` (when `node_modules` is missing) and `npm run componentize`. This code covers the tool not being runnable, the build failing (the tool's errors are printed above), a Rust build producing no `.wasm` (the crate lacks `crate-type = ["cdylib"]`), and the artifact not being readable.

Install the toolchain (`rustup target add wasm32-wasip2`; `pip install componentize-py` or `SVC_COMPONENTIZE_PY`; Node.js 20+ with npm), fix the connector's errors, or set `CARGO`."#,
        example: r#"```sh
svc pack
# error[pack-build]: the connector crate `connector/Cargo.toml` did not build (exit status: 101); cargo's errors are above
```
Fix:
```sh
rustup target add wasm32-wasip2
svc pack
```"#,
    },
    Code {
        name: "pack-crate",
        group: "pack",
        summary: "There is no connector crate (Cargo.toml) where svc.project.json's `crate` points.",
        explanation: r#"`crate` in `svc.project.json` names the folder of the connector's `Cargo.toml`, relative to the project root.

Set `crate` to that folder."#,
        example: r#"```json
"crate": "connecter"
```
Fix:
```json
"crate": "connector"
```"#,
    },
    Code {
        name: "pack-document",
        group: "pack",
        summary: "The pack's example document cannot be read, or does not use the connector for a platform.",
        explanation: r#"Every pack carries an example graph that `svc pack` compiles for each platform to prove the templates render. It must be readable (`document` in `svc.project.json`, or `--document PATH`) and, for every platform of the pack, contain a connector node whose `codegen.templates[platform]` entry names this connector.

Fix the path, or add the connector node and its `codegen.templates` entry for every platform."#,
        example: r#"A `webhook` project whose example has only a `go` template entry, packed for `go` and `python-svc`:

```json
"codegen": { "templates": { "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
```
Fix:
```json
"codegen": { "templates": {
  "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } },
  "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } }
} }
```"#,
    },
    Code {
        name: "pack-empty",
        group: "pack",
        summary: "With --allow-partial, no platform rendered the example, so there is nothing to pack.",
        explanation: r#"`--allow-partial` lets `svc pack` leave out platforms whose templates do not render, recording them as missing. When every platform fails, the pack would be useless and is not written; the failures of each platform explain why.

Fix the errors of at least one platform."#,
        example: r#"```sh
svc pack --allow-partial
# error[pack-empty]: no platform renders the example, so there is nothing to pack (tried go, python-svc)
```
Fix:
Fix the template or example errors reported for one platform, then run `svc pack --allow-partial` again.
"#,
    },
    Code {
        name: "pack-format",
        group: "pack",
        summary: "The pack's manifest has a format version this svc does not read.",
        explanation: r#"`svc-pack.json` states the pack format (`formatVersion`, currently 1). A pack in another format was made by a different svc release and could be misread.

Use an svc release that reads the pack's format, or get a pack made for this one."#,
        example: r#"`svc-pack.json` inside the pack:

```json
"formatVersion": 2
```
Fix:
Rebuild the pack with this svc (`svc pack`), which writes `"formatVersion": 1`.
"#,
    },
    Code {
        name: "pack-hash-mismatch",
        group: "pack",
        summary: "A pack entry's sha256 or size differs from its manifest.",
        explanation: r#"The manifest lists every entry with its sha256 and size; a difference means the pack was altered or damaged after `svc pack` wrote it, so it is refused as a whole.

Get the pack again from its publisher, or rebuild it."#,
        example: r#"A pack whose `connector.wasm` was replaced after packing:

```sh
svc compile app.graph.json --out build/app --plugins ./webhook-0.1.0.svc-pack.zip
```
Fix:
```sh
svc pack --root marketplace/webhook
```"#,
    },
    Code {
        name: "pack-manifest",
        group: "pack",
        summary: "A pack's svc-pack.json is absent, invalid, or inconsistent with the archive.",
        explanation: r#"Opening a pack checks its manifest `svc-pack.json`: it must be present and valid JSON of the pack manifest shape; the pack name and connector id must be well formed; the version must be semver without build metadata; no entry may be listed twice; and the component and example document it names must be in the archive.

The pack is damaged or was not made by `svc pack`: get it again from its publisher."#,
        example: r#"A ZIP with the right files but no `svc-pack.json`:

```sh
zip my.svc-pack.zip connector.wasm templates/go/x.go
svc compile app.graph.json --out build/app --plugins my.svc-pack.zip
```
Fix:
```sh
svc pack --root my-connector
```"#,
    },
    Code {
        name: "pack-missing-entry",
        group: "pack",
        summary: "The pack's manifest lists an entry the archive lacks.",
        explanation: r#"Every file the manifest lists must be in the archive, so that what was checked when packing is what is used. A missing entry means the pack was altered or truncated.

Get the pack again, or rebuild it with `svc pack`."#,
        example: r#"A pack from which `templates/go/webhook.go` was deleted after packing.
Fix:
```sh
svc pack --root marketplace/webhook
```"#,
    },
    Code {
        name: "pack-outside",
        group: "pack",
        summary: "The connector crate, a template folder or the example document leads outside the pack project.",
        explanation: r#"Packs hold only files of their project. A path in `svc.project.json` that resolves (through a symbolic link, for example) outside the project root is refused, so that a `templates/go` linking to `~/.ssh` is never packed.

Replace the link with the files themselves."#,
        example: r#"```sh
ln -s ~/shared/templates templates
svc pack
```
Fix:
```sh
rm templates && cp -r ~/shared/templates templates
svc pack
```"#,
    },
    Code {
        name: "pack-platform",
        group: "pack",
        summary: "--platforms names a platform the pack project does not list.",
        explanation: r#"`svc pack --platforms LIST` packs a subset of the project's `platforms`; it cannot add platforms the project does not declare.

Use platforms from `platforms` in `svc.project.json`, or add the platform there (with its templates)."#,
        example: r#"```sh
svc pack --platforms go,java-svc   # the project lists go and python-svc
```
Fix:
```sh
svc pack --platforms go
```"#,
    },
    Code {
        name: "pack-project",
        group: "project",
        summary: "svc.project.json cannot be read from the project root.",
        explanation: r#"`svc pack` and `svc validate-pack` work on a pack project: a folder with `svc.project.json`, by default the current directory.

Run them in a pack project (made by `svc plugin new NAME`), or pass `--root PATH`."#,
        example: r#"```sh
cd ~ && svc pack
```
Fix:
```sh
svc pack --root ~/src/acme-slack
```"#,
    },
    Code {
        name: "pack-source",
        group: "pack",
        summary: "A Python or TypeScript connector's folder lacks what its build needs.",
        explanation: r#"A Python connector's `source` folder holds `app.py` (its class `Connector` implements the connector interface) and `wit/`, the svc:codegen interface it is built against. A TypeScript connector's folder holds `package.json` with a `componentize` script that writes `dist/connector.wasm`, and `package-lock.json`: packs are built from locked versions. `svc plugin new NAME --lang python|typescript` makes both.

Add the missing file, or point `source` at the right folder."#,
        example: r#"```sh
svc pack
# error[pack-source]: no package-lock.json at `connector/package-lock.json`
```
Fix:
```sh
(cd connector && npm install)
svc pack
```"#,
    },
    Code {
        name: "pack-templates",
        group: "pack",
        summary: "A template folder holds a link or special file, a non-UTF-8 name, or an unreadable file.",
        explanation: r#"`svc pack` copies `<templates>/<platform>/` into the pack. Every entry must be a regular file with a UTF-8 name that can be read; links are not packed, since they could point anywhere.

Replace links with files, rename non-UTF-8 files, and fix permissions."#,
        example: r#"```sh
ln -s ../common/util.go templates/go/util.go
svc pack
```
Fix:
```sh
rm templates/go/util.go && cp ../common/util.go templates/go/util.go
```"#,
    },
    Code {
        name: "pack-unlisted-entry",
        group: "pack",
        summary: "The pack archive holds an entry its manifest does not list.",
        explanation: r#"A pack must hold exactly the files its manifest lists with their hashes. An extra file was added after packing and is refused, so that nothing unchecked reaches a compile.

Get the pack again, or rebuild it with `svc pack`."#,
        example: r#"```sh
zip webhook-0.1.0.svc-pack.zip extra.txt
```
Fix:
```sh
svc pack --root marketplace/webhook
```"#,
    },
    Code {
        name: "pack-write",
        group: "pack",
        summary: "The pack archive could not be encoded.",
        explanation: r#"`svc pack` encodes the manifest as JSON and the files as a deterministic ZIP. This fails only when a file name breaks the archive path rules (see `zip-unsafe-path`; a path longer than 1024 bytes included), two entries share a path, the archive would need ZIP64 (over 65535 entries or 4 GiB), or compression fails; the message keeps the ZIP writer's reason.

Fix the offending file name, or keep the pack under 65535 entries and 4 GiB."#,
        example: r#"A template file named so that it is not a safe archive path:

```sh
touch 'templates/go/a\b.go'
svc pack
```
Fix:
```sh
mv 'templates/go/a\b.go' templates/go/a_b.go
```"#,
    },
    Code {
        name: "platform-unsupported",
        group: "connector",
        summary: "A connector component was asked to render for a platform it has no code for.",
        explanation: r#"Connectors render per platform and refuse platforms outside their own list. The host normally catches this earlier (a pack that lacks the platform reports `template-required`), so this code appears when a connector's `info()` and `render` disagree, or when it is called directly.

Use a connector version that supports the platform, or compile for one it supports."#,
        example: r#"```rust
svc_webhook::Webhook::render("rust", &config)
// error[platform-unsupported]: svc/webhook has no code for the platform `rust`
```
Fix:
```rust
svc_webhook::Webhook::render("go", &config)
```"#,
    },
    Code {
        name: "plugin-cache",
        group: "plugin",
        summary: "The compiled-component cache directory cannot be used.",
        explanation: r#"Compiled components are cached on disk (`--cache-dir`, else `$SVC_CACHE_DIR`, `$XDG_CACHE_HOME/svc` or `~/.cache/svc`) so a warm run skips compilation. When an entry cannot be stored there (permissions, a full disk), the compile stops with this code rather than running without notice.

Pass `--no-cache`, or point `--cache-dir` at a writable directory."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --cache-dir /read-only
```
Fix:
```sh
svc compile app.graph.json --out build/app --no-cache
```"#,
    },
    Code {
        name: "plugin-failed",
        group: "plugin",
        summary: "A backend refused to emit but gave no diagnostic.",
        explanation: r#"A backend that fails must say why, with diagnostics. An empty failure leaves nothing to fix in the graph, so the host reports the component as faulty.

Report it to the backend's author, with the document."#,
        example: r#"A backend whose `emit` returns `Err(vec![])`.
Fix:
Return a diagnostic saying what is wrong:

```rust
Err(vec![Diagnostic::error("unsupported", "…").at(pointer)])
```"#,
    },
    Code {
        name: "plugin-load",
        group: "plugin",
        summary: "A component could not be loaded (or the runtime engine could not start).",
        explanation: r#"Backends and connectors are WebAssembly components, compiled by wasmtime when loaded. A file that is not a valid component (a plain `.wasm` module, a truncated download, a component for another wasmtime), or an engine that cannot be configured, is reported with this code and the engine's message.

Use a component built for the `svc:codegen` interface with `wasm32-wasip2`; if the engine itself fails, report it."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --backend ./README.md
# error[plugin-load]: component `./README.md` could not be loaded: …
```
Fix:
```sh
svc compile app.graph.json --out build/app --backend ./svc-backend-go.wasm
```"#,
    },
    Code {
        name: "plugin-memory",
        group: "plugin",
        summary: "A component tried to use more memory than its cap.",
        explanation: r#"Every call into a component runs in a fresh sandbox with a memory cap (256 MiB by default). A component that grows past it is stopped. Very large graphs can legitimately need more; otherwise the component is faulty.

Raise the limit with `--memory-mb`, or report it to the component's author."#,
        example: r#"```sh
svc compile huge.graph.json --out build/huge
```
Fix:
```sh
svc compile huge.graph.json --out build/huge --memory-mb 1024
```"#,
    },
    Code {
        name: "plugin-output-too-large",
        group: "plugin",
        summary: "A component returned more bytes of files than the output cap.",
        explanation: r#"The files a backend emits, or a connector renders, are capped in total size (256 MiB by default), paths included, so a faulty component cannot fill the disk.

Raise the limit with `--max-output-mb` if the output is expected."#,
        example: r#"```sh
svc compile huge.graph.json --out build/huge
```
Fix:
```sh
svc compile huge.graph.json --out build/huge --max-output-mb 1024
```"#,
    },
    Code {
        name: "plugin-path",
        group: "pack",
        summary: "A --plugins path, or a pack file in it, cannot be read.",
        explanation: r#"`--plugins PATH` takes `.svc-pack.zip` files or directories of them (every `*.svc-pack.zip` directly inside). A path that does not exist, a directory that cannot be listed, or a pack that cannot be read is reported with the system's reason.

Pass an existing pack file or a directory of packs (made by `svc pack`)."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --plugins ./dits
```
Fix:
```sh
svc compile app.graph.json --out build/app --plugins ./dist
```"#,
    },
    Code {
        name: "plugin-timeout",
        group: "plugin",
        summary: "A component ran past its time limit and was stopped.",
        explanation: r#"Every call into a component has a deadline (10 seconds by default). A component stuck in a loop is stopped; a very large graph may legitimately need longer.

Raise the limit with `--timeout-ms`, or report it to the component's author."#,
        example: r#"```sh
svc compile huge.graph.json --out build/huge
```
Fix:
```sh
svc compile huge.graph.json --out build/huge --timeout-ms 60000
```"#,
    },
    Code {
        name: "plugin-too-many-files",
        group: "plugin",
        summary: "A component returned more files than the cap.",
        explanation: r#"The number of files a backend emits, or a connector renders, is capped (10,000 by default).

Raise the limit with `--max-files` if the output is expected."#,
        example: r#"```sh
svc compile huge.graph.json --out build/huge
```
Fix:
```sh
svc compile huge.graph.json --out build/huge --max-files 50000
```"#,
    },
    Code {
        name: "plugin-trap",
        group: "plugin",
        summary: "A component trapped (panicked, or failed to instantiate) while being called.",
        explanation: r#"A WebAssembly trap (a panic in a Rust component, an out-of-bounds access, `unreachable`), or a failure to instantiate the component, stops the call. Nothing a component does can crash the host; the message carries the component's trap text, cut to 4000 characters.

The component is faulty: report it to its author with the document."#,
        example: r#"A connector whose `render` calls `unwrap()` on a missing config field:

```sh
svc compile app.graph.json --out build/app --plugins ./dist
# error[plugin-trap]: component `acme/slack 0.1.0 (…)` trapped: …
```
Fix:
Return a diagnostic instead of panicking:

```rust
let Some(url) = config.get("url") else { return Err(vec![Diagnostic::error("missing-field", "…")]) };
```"#,
    },
    Code {
        name: "plugin-world",
        group: "plugin",
        summary: "A component does not implement the svc world it is loaded as (backend or connector-plugin).",
        explanation: r#"Backends implement the `backend` world and connectors the `connector-plugin` world of `svc:codegen`. The host loads components built against any `svc:codegen` version it supports (0.1.0 and 0.2.0, through an adapter for the older one). A component that exports none of those versions of its world's interface (the message lists its exports), or that lacks the imports or exports the host links for its version, cannot be called.

Use a component built for a supported `svc:codegen` version (rebuild it against the current SDK)."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --backend ./connector.wasm
# error[plugin-world]: component `./connector.wasm` does not implement the svc `backend` world: …
```
Fix:
```sh
svc compile app.graph.json --out build/app --backend ./svc-backend-go.wasm
```"#,
    },
    Code {
        name: "python-syntax",
        group: "templates",
        summary: "A python-svc body, or a module python-svc would emit, is not valid Python.",
        explanation: r#"python-svc parses every body in `bodiesByPlatform["python-svc"]` and every module it emits with Ruff's parser, inside the backend component, before anything is written. A body is parsed as it is emitted: the body of a function that receives `state` (a `function` node's body may also be a whole `def`). The diagnostic points inside the body's JSON string, at the line and column of the body's text where the parser stopped, with the parser's message; the hint repeats that line and column of the body.

A module that does not parse although every body did is a fault of the backend or of the connector that rendered the node's code; the diagnostic names the module and points at its node.

Fix the body (the message says what the parser expected)."#,
        example: r#"`fixtures/valid/python_syntax_error.graph.json` compiled for `python-svc`:

```json
"python-svc": { "bump": "n = state[\"a\"]\nreturn {\"a\": (n +}" }
```
Fix:
```json
"python-svc": { "bump": "n = state[\"a\"]\nreturn {\"a\": (n + 1)}" }
```"#,
    },
    Code {
        name: "reducer-type",
        group: "state",
        summary: "The append reducer is used on a field that is not an array or messages.",
        explanation: r#"`append` adds each written value to a list, so it only applies to `array` and `messages` fields. On a scalar there is nothing to append to.

Use `replace` (the default), or make the field an `array`."#,
        example: r#"`fixtures/invalid/reducer_on_scalar.graph.json`:

```json
{ "name": "answer", "type": "string", "reducer": "append" }
```
Fix:
```json
{ "name": "answer", "type": "array", "items": { "type": "string" }, "reducer": "append" }
```"#,
    },
    Code {
        name: "router-default",
        group: "nodes",
        summary: "A router has no branches, lacks a final unconditional branch, or has one before the end.",
        explanation: r#"A router evaluates its `branches` in order and takes the first whose `when` holds. The last branch must be the unconditional default (no `when`), so that a run always has somewhere to go; a branch without `when` anywhere else would shadow every branch after it.

End the list with `{ "to": "<node id>" }` and give every other branch a condition."#,
        example: r#"`fixtures/invalid/router_without_default.graph.json` (and `router_default_not_last.graph.json`):

```json
"branches": [
  { "when": { "field": "question", "op": "exists" }, "to": "end" }
]
```
Fix:
```json
"branches": [
  { "when": { "field": "question", "op": "exists" }, "to": "end" },
  { "to": "end" }
]
```"#,
    },
    Code {
        name: "sdk-not-found",
        group: "cli",
        summary: "`svc plugin new` cannot find the svc backend SDK the new crate depends on.",
        explanation: r#"A scaffolded connector crate depends on `backends/sdk` of an svc checkout by path. It is looked for at `--sdk DIR`, then `$SVC_SDK_DIR`, then the checkout svc was built from; the folder must contain `Cargo.toml`, and its path must be writable into `Cargo.toml` (no quotes, line breaks or non-UTF-8 names).

Pass `--sdk DIR` (or set `SVC_SDK_DIR`) to the `backends/sdk` folder of an svc checkout."#,
        example: r#"```sh
svc plugin new acme/slack   # svc installed from a release, no checkout
```
Fix:
```sh
svc plugin new acme/slack --sdk ~/src/svc/backends/sdk
```"#,
    },
    Code {
        name: "start-count",
        group: "topology",
        summary: "The graph has no start node, or more than one.",
        explanation: r#"Every run begins at the single `start` node. Without one the graph has no entry; with two, it is ambiguous. Reported at `logical.nodes` when there is none, and at the second start otherwise.

Keep exactly one `{ "kind": "start" }` node."#,
        example: r#"`fixtures/invalid/no_start.graph.json` (and `two_starts.graph.json`):

```json
"nodes": [
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "end", "kind": "end" }
]
```
Fix:
```json
"nodes": [
  { "id": "start", "kind": "start" },
  { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
  { "id": "end", "kind": "end" }
]
```
and the edge `{ "from": "start", "to": "reply" }`."#,
    },
    Code {
        name: "subgraph-cycle",
        group: "nodes",
        summary: "Subgraph documents include each other in a cycle.",
        explanation: r#"A `subgraph` node's `graph` may be a path to another document, read by `svc compile` relative to the document naming it, and that document may have subgraphs of its own. A file that includes itself, directly or through others, could never be expanded, so it is refused; the message lists the files of the cycle.

Break the cycle: one of the documents must not name the other."#,
        example: r#"```json
// a.graph.json
{ "id": "inner", "kind": "subgraph", "graph": "b.graph.json", "input": { "q": "q" } }
// b.graph.json
{ "id": "inner", "kind": "subgraph", "graph": "a.graph.json", "input": { "q": "q" } }
```
Fix:
```json
// b.graph.json: a graph of its own nodes, no subgraph back to a.graph.json
{ "id": "say", "kind": "response_template", "template": "{{q}}", "outputKey": "a" }
```"#,
    },
    Code {
        name: "subgraph-type",
        group: "nodes",
        summary: "A subgraph's `input` or `output` copies between fields of different types, or leaves a required child field out.",
        explanation: r#"A `subgraph` node runs its child graph on a fresh state built from `input` (`{ child field: parent field }`) and copies fields back with `output` (`{ parent field: child field }`). Values are copied as they are, so both sides of each pair must have the same type (and the same item type for arrays), and every field the child declares `required` must be given by `input`. The check runs at compile time, for embedded children and for children read from a path.

Map fields of the same type, or change a declaration."#,
        example: r#"`fixtures/invalid/subgraph_type_mismatch.graph.json`:

```json
{ "id": "inner", "kind": "subgraph", "graph": { ... "state": [ { "name": "count", "type": "integer", "required": true } ] ... },
  "input": { "count": "question" } }
```
Fix:
```json
{ "id": "inner", "kind": "subgraph", "graph": { ... "state": [ { "name": "count", "type": "integer", "required": true } ] ... },
  "input": { "count": "attempts" } }
```"#,
    },
    Code {
        name: "template-required",
        group: "templates",
        summary: "A connector node has no template for the platform being compiled.",
        explanation: r#"A connector node's code comes from the connector named in `codegen.templates[platform][node]`. Without an entry for the platform the node cannot be rendered (reported by negotiation, before anything is rendered). It is also reported when the chosen version of the connector has no template for the platform (its pack was built without it, with the reason), and by `svc pack` when a platform's template folder is missing or empty.

Add the `codegen.templates` entry, use a connector version that supports the platform, or add the platform's templates to the pack project."#,
        example: r#"`fixtures/valid/connector_node.graph.json` compiled for `go`:

```json
"codegen": { "templates": { "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
```
Fix:
```json
"codegen": { "templates": {
  "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } },
  "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } }
} }
```"#,
    },
    Code {
        name: "unknown-field",
        group: "document",
        summary: "An object has a field its schema does not define.",
        explanation: r#"Every object of the document has a fixed set of fields (only `presentation`, `extensions` and the fields of `agent`, `rag`, `intent_classifier` and `hitl` nodes are free-form). An unknown field is usually a misspelling, so it is refused with a did-you-mean hint; free-form data belongs under `extensions`. `svc.project.json` and connector configs report unknown fields with this code too.

Fix the spelling, or move the data under `extensions`."#,
        example: r#"`fixtures/invalid/unknown_field_typo.graph.json` (and `unknown_top_level_field.graph.json`):

```json
{ "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputkey": "answer" }
```
Fix:
```json
{ "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
```"#,
    },
    Code {
        name: "unknown-state-field",
        group: "state",
        summary: "An outputKey, {{placeholder}} or condition field names no declared state field.",
        explanation: r#"Nodes read and write the state declared in `logical.state`: `outputKey`, every `{{name}}` in templates, prompts and tool inputs, and a condition's `field` must name one of its fields. The hint suggests the nearest name.

Fix the name, or declare the field in `logical.state`."#,
        example: r#"`fixtures/invalid/template_field_unknown.graph.json` (and `output_key_unknown.graph.json`):

```json
{ "id": "reply", "kind": "response_template", "template": "Re: {{questoin}}", "outputKey": "answer" }
```
Fix:
```json
{ "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
```"#,
    },
    Code {
        name: "unreachable",
        group: "topology",
        summary: "A node cannot be reached from start.",
        explanation: r#"No edge or router branch leads to the node from `start`, so it would never run; usually an edge is missing or points elsewhere. (Checked only when every edge resolves and there is one start.)

Add an edge or branch leading to it, or remove it."#,
        example: r#"`fixtures/invalid/unreachable_node.graph.json`:

```json
{ "id": "orphan", "kind": "response_template", "template": "x", "outputKey": "answer" }
```
with no edge into `orphan`.
Fix:
Remove `orphan`, or lead to it: `{ "from": "reply", "to": "orphan" }` and `{ "from": "orphan", "to": "end" }` in place of `reply`'s edge to `end`.
"#,
    },
    Code {
        name: "unresolved-ref",
        group: "document",
        summary: "A reference names a node, tool or MCP server that does not exist (or is of the wrong kind).",
        explanation: r#"References must resolve: an edge's `from` and `to` and a branch's `to` name nodes; a tool node's `toolId` and an llm's `boundToolIds` name tools in `logical.tools`; an `mcp` tool's `server` names an MCP server; a `bodiesByPlatform` entry names a node or tool; and a `codegen.templates` entry names a node of kind `connector`. The hint suggests the nearest name.

Fix the name, declare what it refers to, or remove the reference."#,
        example: r#"`fixtures/invalid/unresolved_edge.graph.json` (and `unresolved_tool.graph.json`, `body_for_unknown_id.graph.json`):

```json
{ "from": "reply", "to": "ned" }
```
Fix:
```json
{ "from": "reply", "to": "end" }
```"#,
    },
    Code {
        name: "unsafe-path",
        group: "plugin",
        summary: "A backend emitted a path that is unsafe, repeated, clashes by case, or is both file and folder.",
        explanation: r#"Before anything is written, every emitted path is checked: it must be relative and safe (no `..`, absolute paths, backslashes, drive prefixes or control characters), emitted once, distinct from every other path ignoring case (they would collide on macOS and Windows), not also a folder of another path, and not the host's own `.svc-build-manifest.json`. A violation means the backend is faulty; nothing is written.

Report it to the backend's author."#,
        example: r#"A backend that emits

```rust
vec![File::text("../outside.txt", "x")]
```
Fix:
```rust
vec![File::text("outside.txt", "x")]
```"#,
    },
    Code {
        name: "unsupported",
        group: "negotiation",
        summary: "The target platform's backend does not support something the graph uses.",
        explanation: r#"Before emitting, the host matches what the document needs (node kinds, tool kinds, MCP transports, the auth scheme, and features such as `streaming`, `checkpointer.memory`, `llm.bound-tools` or router operators on field types) with the capabilities the backend declares. Every gap is reported at once, at the place that needs it, with the backend's reason when it gives one. `svc capabilities` prints each backend's matrix.

Change the graph, or compile for a platform that supports it."#,
        example: r#"`fixtures/valid/bearer_auth.graph.json` compiled for `java-svc`:

```json
"security": { "auth": "bearer", "keyEnv": "SVC_TOKEN" }
```
Fix:
```json
"security": { "auth": "api_key", "keyEnv": "SVC_TOKEN" }
```
or compile for `go` or `python-svc`."#,
    },
    Code {
        name: "unused-field",
        group: "connector",
        summary: "A connector config field does not apply to the chosen operation (svc/kv-cache).",
        explanation: r#"`svc/kv-cache` nodes perform one `op`: `field` applies to `get` and `set`, `hitField` to `get`, `ttlSeconds` to `set`. A field the operation ignores is refused, since it usually shows a misunderstanding of what the node does.

Remove the field, or change `op`."#,
        example: r#"```json
"config": { "op": "get", "key": "answer:{{question}}", "field": "answer", "ttlSeconds": 60 }
```
Fix:
```json
"config": { "op": "get", "key": "answer:{{question}}", "field": "answer" }
```"#,
    },
    Code {
        name: "wrong-type",
        group: "document",
        summary: "A value has the wrong JSON type.",
        explanation: r#"Each field of the document has a JSON type: objects, arrays, strings, booleans, integers or numbers (`irVersion` takes a string or an integer). A value of another type, such as a number written as a string, is refused with the expected and the found type. Connector configs report their own type errors with this code.

Write the value with the expected type."#,
        example: r#"`fixtures/invalid/wrong_type.graph.json`:

```json
"settings": { "maxSteps": "25" }
```
Fix:
```json
"settings": { "maxSteps": 25 }
```"#,
    },
    Code {
        name: "zip-compress",
        group: "archive",
        summary: "An entry could not be compressed while writing a pack.",
        explanation: r#"`svc pack` deflates every entry with the ZIP writer, whose compression error carries this code. The compressor failing is not expected in practice. `svc pack` reports every failure of the ZIP writer as `pack-write` (the message keeps the writer's text), so this code is not shown on its own today.

Retry; report it if it persists."#,
        example: r#"```sh
svc pack
# error[pack-write]: cannot write the archive: entry "connector.wasm": compression failed: …
```
Fix:
Retry `svc pack`; report the error if it repeats.
"#,
    },
    Code {
        name: "zip-crc",
        group: "archive",
        summary: "A pack entry's contents do not match its CRC-32.",
        explanation: r#"Every entry's inflated contents are checked against the CRC-32 in the archive. A mismatch means the pack is damaged.

Get the pack again from its publisher."#,
        example: r#"A pack with a flipped byte in `connector.wasm`:

```sh
svc compile app.graph.json --out build/app --plugins ./damaged.svc-pack.zip
```
Fix:
Download the pack again, or rebuild it with `svc pack`.
"#,
    },
    Code {
        name: "zip-duplicate",
        group: "archive",
        summary: "The same path appears twice in a pack.",
        explanation: r#"Two entries at one path would let a pack show one file when checked and another when used, so duplicates are refused.

Get the pack again, or rebuild it with `svc pack` (which never writes duplicates)."#,
        example: r#"A hand-made ZIP with `templates/go/x.go` added twice.
Fix:
```sh
svc pack --root my-connector
```"#,
    },
    Code {
        name: "zip-malformed",
        group: "archive",
        summary: "A pack's ZIP structure is broken.",
        explanation: r#"Packs are read as hostile input. No end-of-central-directory record, offsets or lengths out of range, bad signatures, local and central headers that disagree, overlapping entries, or data that does not inflate to its declared size all mean the file is not a well-formed ZIP.

Get the pack again from its publisher."#,
        example: r#"A truncated download:

```sh
head -c 1000 webhook-0.1.0.svc-pack.zip > cut.svc-pack.zip
svc compile app.graph.json --out build/app --plugins ./cut.svc-pack.zip
```
Fix:
Download the pack again.
"#,
    },
    Code {
        name: "zip-ratio",
        group: "archive",
        summary: "A pack entry's compression ratio exceeds the limit (a likely ZIP bomb).",
        explanation: r#"For entries declared larger than 1 MiB, the ratio of uncompressed to compressed size may be at most 200. Higher ratios are the mark of decompression bombs and are refused before anything is inflated.

Packs made by `svc pack` stay far below the limit; do not use this pack."#,
        example: r#"A pack holding 100 MiB of zeros compressed to a few kilobytes.
Fix:
Do not use the pack; rebuild it from its project with `svc pack`.
"#,
    },
    Code {
        name: "zip-symlink",
        group: "archive",
        summary: "A pack entry is a symbolic link or another non-regular file.",
        explanation: r#"Packs may hold only regular files and directories. A link (or device, FIFO, socket) could point outside the pack when used.

Get the pack again; `svc pack` never writes links."#,
        example: r#"```sh
ln -s /etc/passwd templates/go/passwd && zip --symlinks bad.svc-pack.zip templates/go/passwd
```
Fix:
```sh
svc pack --root my-connector
```"#,
    },
    Code {
        name: "zip-too-large",
        group: "archive",
        summary: "A pack file, one of its entries, or all entries together exceed the size limits.",
        explanation: r#"A pack file may be at most 300 MiB; inside, an entry may inflate to at most 64 MiB and all entries together to 256 MiB. The limits are checked before inflating, so a hostile pack cannot exhaust memory.

A pack holds one connector component and its templates; one this large is not a pack."#,
        example: r#"```sh
svc compile app.graph.json --out build/app --plugins ./big.svc-pack.zip
# error[zip-too-large]: pack `./big.svc-pack.zip` is 400000000 bytes, over the limit of 314572800
```
Fix:
Keep large assets out of the pack; ship only the component and templates.
"#,
    },
    Code {
        name: "zip-too-many-entries",
        group: "archive",
        summary: "A pack declares more entries than the limit (4096).",
        explanation: r#"The entry count is checked before anything is read, so a hostile pack cannot make svc allocate for millions of entries.

Keep packs to the component, templates and example; do not use this pack."#,
        example: r#"A ZIP declaring 100,000 entries.
Fix:
Rebuild the pack from its project with `svc pack`.
"#,
    },
    Code {
        name: "zip-unsafe-path",
        group: "archive",
        summary: "A pack entry's path breaks the path rules (absolute, `..`, backslashes...).",
        explanation: r#"Entry paths must be relative, UTF-8 and `/`-separated, with no `..` or `.` components (`..` would climb out of the folder it is extracted to, a zip-slip), no empty components, backslashes, NUL or other control characters, and no drive prefixes. The message names the rule.

Get the pack again; `svc pack` writes only safe paths."#,
        example: r#"A ZIP with an entry named `../evil.txt`.
Fix:
```sh
svc pack --root my-connector
```"#,
    },
    Code {
        name: "zip-unsupported",
        group: "archive",
        summary: "A pack uses a ZIP feature this reader does not accept.",
        explanation: r#"The pack reader is deliberately small: stored and deflate entries only, no ZIP64, encryption, data descriptors or multi-disk archives. Archives made by other tools with those features are refused.

Build packs with `svc pack`."#,
        example: r#"```sh
zip -e secret.svc-pack.zip connector.wasm svc-pack.json   # encrypted
```
Fix:
```sh
svc pack --root my-connector
```"#,
    },
];

/// The registered code called `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static Code> {
    CODES
        .binary_search_by(|c| c.name.cmp(name))
        .ok()
        .and_then(|i| CODES.get(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_registered_codes_only() {
        assert_eq!(lookup("edge-count").map(|c| c.group), Some("topology"));
        assert_eq!(
            lookup("zip-unsupported").map(|c| c.name),
            Some("zip-unsupported")
        );
        assert!(lookup("no-such-code").is_none());
    }
}
