//! The test file, `NAME.tests.json` beside `NAME.graph.json`
//! (`docs/testing.md`): its shape (serde types, from which the published
//! JSON Schema is generated), read as strictly as a graph document (no
//! repeated keys), and checked against the document it tests. Every
//! problem is a diagnostic at file:line:col and JSON pointer.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use svc_ir::diag::{did_you_mean, pointer_token};
use svc_ir::Diagnostic;

/// Test cases of one graph, run by `svc test` on every target.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "svc test cases")]
pub struct TestFile {
    /// The schema's URL, for editors.
    #[serde(rename = "$schema", default)]
    #[allow(dead_code)] // for editors; svc checks with its own schema
    pub schema: Option<String>,
    /// Variables the services start with, besides those `svc test` sets
    /// (the stand-in model's, the HTTP tools' endpoints, the key). Not for
    /// secrets: a test needs none.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[schemars(length(min = 1))]
    pub cases: Vec<Case>,
}

/// One request to `POST /invoke`, what stands in for the model and the
/// tools meanwhile, and what the answer must hold.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique in the file: reports and `threadOf` name it.
    #[schemars(length(min = 1))]
    pub name: String,
    /// What the case is about, for its readers.
    #[serde(default)]
    #[allow(dead_code)] // for readers of the file
    pub description: Option<String>,
    pub request: Request,
    /// The model's replies to this case's requests (each attempt of a call
    /// is one): each takes the first unused reply whose `when` is part of
    /// its last user message, else the first unused one without `when`.
    /// Absent: the model echoes the last user message as `echo: <text>`.
    #[serde(default)]
    pub model: Option<Vec<ModelReply>>,
    /// Replies of HTTP tools, by tool id: one reply for every call, or a
    /// list used one per call.
    #[serde(default)]
    pub tools: BTreeMap<String, Replies<ToolReply>>,
    /// Replies of MCP tools, by server id and then tool name: one reply for
    /// every call, or a list used one per call. The server must be a
    /// `streamable_http` one with an `env:NAME` URL.
    #[serde(default)]
    pub mcp: BTreeMap<String, BTreeMap<String, Replies<McpReply>>>,
    #[serde(default)]
    pub expect: Expect,
}

/// A tool's replies in a case: one for every call, or a list used one
/// per call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Replies<T> {
    One(T),
    InOrder(Vec<T>),
}

impl<T> Replies<T> {
    /// What a stand-in is scripted with, each reply turned by `reply`.
    pub fn scripted<U>(&self, reply: impl Fn(&T) -> U) -> crate::launch::Replies<U> {
        match self {
            Replies::One(r) => crate::launch::Replies::Always(reply(r)),
            Replies::InOrder(list) => {
                crate::launch::Replies::InOrder(list.iter().map(reply).collect())
            }
        }
    }

    /// Every reply given.
    pub fn all(&self) -> &[T] {
        match self {
            Replies::One(r) => std::slice::from_ref(r),
            Replies::InOrder(list) => list,
        }
    }
}

/// What an MCP tool answers: its text, its structured content (the text
/// is then that JSON), or both; `isError` for a failure the tool reports.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpReply {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub json: Option<Map<String, Value>>,
    #[serde(default)]
    pub is_error: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Request {
    /// The run's input state (`{"state": ...}` of `POST /invoke`).
    #[serde(default)]
    pub state: Option<Map<String, Value>>,
    /// Continue the thread of an earlier case, by its name: its answer's
    /// `threadId` is sent.
    #[serde(default)]
    pub thread_of: Option<String>,
    /// The value that resumes the interrupt of `threadOf`'s case.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Value")]
    pub resume: Option<Value>,
    /// More request headers (the credential is added by `svc test`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// `Some` for a key that is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// What one request to the stand-in model gets: a reply (`content`,
/// `toolCalls`), or a failed attempt (`status`, `cut`), either after
/// `delayMs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelReply {
    /// Answers only a call whose last user message contains this text.
    #[serde(default)]
    pub when: Option<String>,
    /// The reply's text.
    #[serde(default)]
    pub content: Option<String>,
    /// Tool calls the model asks for.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedToolCall>,
    /// The tokens the reply reports (default: the words of the request's
    /// messages in, of the reply's text and one per tool call out).
    #[serde(default)]
    pub usage: Option<ReplyUsage>,
    /// A failed attempt answered with this status.
    #[serde(default)]
    #[schemars(range(min = 400, max = 599))]
    pub status: Option<u16>,
    /// The `Retry-After` header of a `status` reply (seconds, or an HTTP
    /// date).
    #[serde(default)]
    pub retry_after: Option<String>,
    /// A failed attempt: the reply is cut halfway and the connection
    /// closed.
    #[serde(default)]
    pub cut: bool,
    /// How long the answer takes, in milliseconds (at most 600000): past
    /// the model's `timeoutMs`, the attempt times out.
    #[serde(default)]
    #[schemars(range(max = 600_000))]
    pub delay_ms: u64,
}

impl ModelReply {
    /// A failed attempt rather than a reply.
    pub fn fails(&self) -> bool {
        self.status.is_some() || self.cut
    }
}

/// The usage a scripted reply reports (`usage.prompt_tokens` and
/// `completion_tokens` of the chat completion).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplyUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedToolCall {
    /// The call's id (default `call_<n>`).
    #[serde(default)]
    pub id: Option<String>,
    /// The tool's name as the model sees it.
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolReply {
    /// The HTTP status (default 200).
    #[serde(default = "ok")]
    #[schemars(range(min = 100, max = 599))]
    pub status: u16,
    /// The JSON body (default `{}`).
    #[serde(default = "empty_object")]
    pub json: Value,
    /// How long the reply takes, in milliseconds (at most 600000).
    #[serde(default)]
    #[schemars(range(max = 600_000))]
    pub delay_ms: u64,
}

fn ok() -> u16 {
    200
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// What the answer must hold; every field given is checked.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The HTTP status (default 200, unless `error` is expected).
    #[serde(default)]
    #[schemars(range(min = 100, max = 599))]
    pub status: Option<u16>,
    /// A subset of `result`: every key given must be there with this value
    /// (objects compared the same way, arrays element by element).
    #[serde(default)]
    pub result: Option<Map<String, Value>>,
    #[serde(default)]
    pub error: Option<ExpectError>,
    #[serde(default)]
    pub interrupt: Option<ExpectInterrupt>,
    /// The nodes the run started, in order (from its events: the graph
    /// must have `settings.streaming: true`).
    #[serde(default)]
    pub visited: Option<Vec<String>>,
    /// A subset of the answer's `usage`: every key given must be there
    /// with this value.
    #[serde(default)]
    pub usage: Option<ExpectUsage>,
}

/// What the run spent on model calls (`usage` of the answer, a result's
/// or an error's).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub model_calls: Option<u64>,
    #[serde(default)]
    pub attempts: Option<u64>,
}

impl ExpectUsage {
    /// The keys given, as the answer writes them, in the order the
    /// projects' runners compare them.
    pub fn as_json(&self) -> Map<String, Value> {
        [
            ("attempts", self.attempts),
            ("inputTokens", self.input_tokens),
            ("modelCalls", self.model_calls),
            ("outputTokens", self.output_tokens),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), Value::from(v?))))
        .collect()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectError {
    #[serde(default)]
    pub code: Option<String>,
    /// Text the message must contain.
    #[serde(default)]
    pub message: Option<String>,
    /// A subset of `error.details`.
    #[serde(default)]
    pub details: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectInterrupt {
    /// The node that paused.
    #[serde(default)]
    pub node: Option<String>,
    /// A subset of the interrupt's value (any JSON: objects as a subset,
    /// others equal).
    #[serde(default)]
    pub value: Option<Value>,
}

svc_ir::diagnostic_codes! {
    /// The test file does not have the shape of a test file.
    ///
    /// `svc test` reads `NAME.tests.json` beside the graph document (or the file given with `--cases`). It must match the published schema (`svc-tests.schema.json`, see `docs/testing.md`): a `cases` list, each case with a `name`, a `request` and what to `expect`, and no field the schema does not name. The message says which rule the value at the position breaks.
    ///
    /// Correct the value at the position; the schema lists every field.
    ///
    /// # Example
    ///
    /// ```json
    /// { "cases": [ { "name": "billing", "request": { "state": {} }, "expect": { "stauts": 200 } } ] }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "cases": [ { "name": "billing", "request": { "state": {} }, "expect": { "status": 200 } } ] }
    /// ```
    pub TEST_FILE = "test-file", group "tests";

    /// A test case names something the graph or the file does not have, or asks for what the graph cannot show.
    ///
    /// A case's `expect.visited` and `expect.interrupt.node` name nodes of the graph; its `tools` name HTTP tools whose endpoint is `env:NAME` (a fixed URL cannot be pointed at the stand-in), and its `mcp` replies `streamable_http` MCP servers whose `url` is `env:NAME`, each reply with a `text` or a `json`; a `model` reply is a reply (`content`, `toolCalls`, `usage`) or a failed attempt (a `status`, with its `retryAfter`, or a `cut`); `request.threadOf` names an earlier case; `expect.visited` needs the run's events (`settings.streaming: true`); a request has either a `state` or a `resume`; case names are unique; `env` does not set what `svc test` sets itself.
    ///
    /// Name what exists, or change the graph so that it can be tested that way.
    ///
    /// # Example
    ///
    /// ```json
    /// { "name": "billing", "request": { "state": { "question": "invoice" } }, "expect": { "visited": ["clasify"] } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "billing", "request": { "state": { "question": "invoice" } }, "expect": { "visited": ["classify"] } }
    /// ```
    pub TEST_REFERENCE = "test-reference", group "tests";
}

/// The published JSON Schema of test files, pretty, with a final newline
/// (`fixtures/schema/svc-tests.schema.json`, kept equal by a test).
pub fn json_schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut text =
        serde_json::to_string_pretty(&generator.into_root_schema_for::<TestFile>().to_value())
            .unwrap_or_default();
    text.push('\n');
    text
}

/// What the checks need of the graph document.
pub struct Graph<'a> {
    pub document: &'a Value,
}

impl Graph<'_> {
    fn node_ids(&self) -> Vec<&str> {
        self.document["logical"]["nodes"]
            .as_array()
            .map(|n| n.iter().filter_map(|n| n["id"].as_str()).collect())
            .unwrap_or_default()
    }

    /// The `logical` part of the document and of every subgraph embedded
    /// in it, at any depth (a child's tools and servers are stood in for
    /// as its parent's are).
    fn graphs(&self) -> Vec<&Value> {
        let mut out = vec![&self.document["logical"]];
        let mut i = 0;
        while i < out.len() {
            let children: Vec<&Value> = out[i]["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|n| n["kind"] == "subgraph" && n["graph"].is_object())
                .map(|n| &n["graph"]["logical"])
                .collect();
            out.extend(children);
            i += 1;
        }
        out
    }

    /// The entries of one list (`tools`, `mcpServers`) of every graph.
    fn each(&self, list: &'static str) -> impl Iterator<Item = &Value> {
        self.graphs()
            .into_iter()
            .flat_map(move |g| g[list].as_array().into_iter().flatten())
    }

    /// The HTTP tools' ids and endpoints (a child's tool once, when it
    /// repeats its parent's id and endpoint).
    pub fn http_tools(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for t in self.each("tools").filter(|t| t["kind"] == "http") {
            if let Some(id) = t["id"].as_str() {
                let tool = (id, t["endpoint"].as_str().unwrap_or(""));
                if !out.contains(&tool) {
                    out.push(tool);
                }
            }
        }
        out
    }

    /// The MCP servers: id, transport and URL (empty for stdio).
    pub fn mcp_servers(&self) -> Vec<(&str, &str, &str)> {
        let mut out: Vec<(&str, &str, &str)> = Vec::new();
        for s in self.each("mcpServers") {
            if let Some(id) = s["id"].as_str() {
                let server = (
                    id,
                    s["transport"].as_str().unwrap_or(""),
                    s["url"].as_str().unwrap_or(""),
                );
                if !out.contains(&server) {
                    out.push(server);
                }
            }
        }
        out
    }

    /// The `(server, tool)` of every tool of kind `mcp`.
    pub fn mcp_tools(&self) -> Vec<(&str, &str)> {
        self.each("tools")
            .filter(|t| t["kind"] == "mcp")
            .filter_map(|t| Some((t["server"].as_str()?, t["tool"].as_str()?)))
            .collect()
    }

    fn streams(&self) -> bool {
        self.document["logical"]["settings"]["streaming"] == true
    }
}

/// Reads a test file: its diagnostics point into `text`, named `name`.
pub fn read(
    name: &str,
    text: &str,
    graph: &Graph<'_>,
    reserved: &[String],
) -> Result<TestFile, Vec<Diagnostic>> {
    let place = |d: Diagnostic, offset: Option<usize>| -> Diagnostic {
        let mut d = d;
        d.file = Some(name.to_string());
        if let Some(o) = offset {
            let (line, column) = svc_ir::json::LineIndex::new(text).line_col(o);
            d.position = Some(svc_ir::Position { line, column });
        }
        d
    };
    let tree = svc_ir::json::parse(text).map_err(|e| {
        let d = Diagnostic::error(&svc_ir::json::JSON_SYNTAX, e.message)
            .hint("a test file is one JSON object (no comments or trailing commas)");
        vec![place(d, Some(e.offset))]
    })?;
    let at = |d: Diagnostic| {
        let offset = d.pointer.as_deref().map(|p| tree.offset_of(p));
        place(d, offset)
    };
    let value = tree.to_value();
    if !PublishedSchema::is_valid(&value) {
        let refused = violations(&value);
        if !refused.is_empty() {
            return Err(refused.into_iter().map(at).collect());
        }
    }
    let file: TestFile = serde_json::from_value(value)
        .map_err(|e| vec![at(Diagnostic::error(&TEST_FILE, e.to_string()))])?;
    let diags: Vec<Diagnostic> = check(&file, graph, reserved).into_iter().map(at).collect();
    if diags.is_empty() {
        Ok(file)
    } else {
        Err(diags)
    }
}

/// The published schema (the committed copy, kept equal to [`json_schema`]
/// by a test) made into code when svc is built: `svc compile` and `svc
/// test` check a valid file without compiling a schema on every run, which
/// took most of a warm compile's time.
#[jsonschema::validator(
    path = "../../fixtures/schema/svc-tests.schema.json",
    draft = Draft202012,
    validate_formats = true,
    methods = { is_valid = true, validate = false, iter_errors = false }
)]
struct PublishedSchema;

/// Why a file the published schema refuses is refused: the same schema,
/// compiled at run time for its messages (one per unknown key, with a
/// guess at the known one meant).
fn violations(value: &Value) -> Vec<Diagnostic> {
    let hint = "see fixtures/schema/svc-tests.schema.json (docs/testing.md) for every field";
    let schema: Value = serde_json::from_str(&json_schema()).unwrap_or_default();
    let found = match svc_packs::schema::ConfigSchema::compile(schema) {
        Ok(checker) => checker.check(value),
        Err(e) => {
            return vec![Diagnostic::error(
                &TEST_FILE,
                format!("the test file schema does not compile: {e}"),
            )]
        }
    };
    found
        .into_iter()
        .map(|v| {
            Diagnostic::error(&TEST_FILE, v.message)
                .at(v.pointer)
                .hint(hint)
        })
        .collect()
}

/// The checks against the graph and between cases.
fn check(file: &TestFile, graph: &Graph<'_>, reserved: &[String]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let problem = |pointer: String, message: String, hint: &str| {
        Diagnostic::error(&TEST_REFERENCE, message)
            .at(pointer)
            .hint(hint.to_string())
    };
    for name in file.env.keys() {
        let pointer = format!("/env/{}", pointer_token(name));
        if !is_env_name(name) {
            out.push(problem(
                pointer,
                format!("`{name}` is not a variable name"),
                "letters, digits and _, not starting with a digit",
            ));
        } else if reserved.iter().any(|r| r == name) {
            out.push(problem(
                pointer,
                format!("`{name}` is set by `svc test` itself (the stand-in model, an HTTP tool's endpoint or the service's key)"),
                "leave it out of `env`",
            ));
        }
    }
    let nodes = graph.node_ids();
    let tools = graph.http_tools();
    let mut names: Vec<&str> = Vec::new();
    for (i, case) in file.cases.iter().enumerate() {
        let base = format!("/cases/{i}");
        if names.contains(&case.name.as_str()) {
            out.push(problem(
                format!("{base}/name"),
                format!("a case named `{}` comes earlier", case.name),
                "give each case its own name",
            ));
        }
        let r = &case.request;
        match (&r.state, &r.resume) {
            (Some(_), Some(_)) => out.push(problem(
                format!("{base}/request/resume"),
                "a request has a `state` (a new run) or a `resume` (of a paused thread), not both".into(),
                "drop one",
            )),
            (None, None) => out.push(problem(
                format!("{base}/request"),
                "the request has neither `state` nor `resume`".into(),
                "give the run's input as `state`, or `threadOf` and `resume` to resume a paused case",
            )),
            (None, Some(_)) if r.thread_of.is_none() => out.push(problem(
                format!("{base}/request/resume"),
                "`resume` needs `threadOf`: the earlier case whose thread paused".into(),
                "add \"threadOf\": \"<name of the case that paused>\"",
            )),
            _ => {}
        }
        if let Some(of) = &r.thread_of {
            if !names.contains(&of.as_str()) {
                let hint = match did_you_mean(of, names.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? (cases run in file order)"),
                    None => {
                        "name a case that comes before this one (cases run in file order)".into()
                    }
                };
                out.push(problem(
                    format!("{base}/request/threadOf"),
                    format!("no earlier case is named `{of}`"),
                    &hint,
                ));
            }
        }
        for (j, reply) in case.model.iter().flatten().enumerate() {
            out.extend(
                model_reply_problems(reply)
                    .into_iter()
                    .map(|(key, message, hint)| {
                        let at = key.map(|k| format!("/{k}")).unwrap_or_default();
                        problem(format!("{base}/model/{j}{at}"), message.into(), hint)
                    }),
            );
        }
        for id in case.tools.keys() {
            let pointer = format!("{base}/tools/{}", pointer_token(id));
            // A child graph may give its own tool its parent's id: a fixed
            // endpoint of either cannot be stood in for.
            let named = || tools.iter().filter(|(t, _)| t == id);
            match named().find(|(_, e)| !e.starts_with("env:")).or(named().next()) {
                None => {
                    let hint = match did_you_mean(id, tools.iter().map(|(t, _)| *t)) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "name an HTTP tool of logical.tools".into(),
                    };
                    out.push(problem(pointer, format!("the graph has no HTTP tool `{id}`"), &hint));
                }
                Some((_, endpoint)) if !endpoint.starts_with("env:") => out.push(problem(
                    pointer,
                    format!("tool `{id}` calls the fixed endpoint `{endpoint}`, which a test cannot point at its stand-in"),
                    "give the tool an `env:NAME` endpoint (the URL then comes from the environment)",
                )),
                _ => {}
            }
        }
        let servers = graph.mcp_servers();
        for (server, tools) in &case.mcp {
            let pointer = format!("{base}/mcp/{}", pointer_token(server));
            match servers.iter().find(|(id, _, _)| id == server) {
                None => {
                    let hint = match did_you_mean(server, servers.iter().map(|(id, _, _)| *id)) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "name an MCP server of logical.mcpServers".into(),
                    };
                    out.push(problem(
                        pointer.clone(),
                        format!("the graph has no MCP server `{server}`"),
                        &hint,
                    ));
                }
                Some((_, transport, url))
                    if *transport != "streamable_http" || !url.starts_with("env:") =>
                {
                    out.push(problem(
                        pointer.clone(),
                        format!(
                            "MCP server `{server}` ({transport}) cannot be pointed at a stand-in"
                        ),
                        "svc test stands in for streamable_http servers whose url is env:NAME",
                    ))
                }
                _ => {}
            }
            for (tool, replies) in tools {
                let empty = |r: &McpReply| r.text.is_none() && r.json.is_none();
                if replies.all().iter().any(empty) {
                    out.push(problem(
                        format!("{pointer}/{}", pointer_token(tool)),
                        format!(
                            "a reply of MCP tool `{server}/{tool}` has no `text` and no `json`"
                        ),
                        "give the tool's text, or its structured content as `json`",
                    ));
                }
            }
        }
        let node_problem = |pointer: String, id: &str| {
            let hint = match did_you_mean(id, nodes.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name a node of logical.nodes".into(),
            };
            problem(pointer, format!("the graph has no node `{id}`"), &hint)
        };
        if let Some(visited) = &case.expect.visited {
            if !graph.streams() {
                out.push(problem(
                    format!("{base}/expect/visited"),
                    "`visited` is read from the run's events, and this graph does not stream them"
                        .into(),
                    "set logical.settings.streaming to true, or leave `visited` out",
                ));
            }
            for (j, id) in visited.iter().enumerate() {
                if !nodes.contains(&id.as_str()) {
                    out.push(node_problem(format!("{base}/expect/visited/{j}"), id));
                }
            }
        }
        if let Some(node) = case
            .expect
            .interrupt
            .as_ref()
            .and_then(|i| i.node.as_deref())
        {
            if !nodes.contains(&node) {
                out.push(node_problem(format!("{base}/expect/interrupt/node"), node));
            }
        }
        let e = &case.expect;
        if e.error.is_some() && (e.result.is_some() || e.interrupt.is_some()) {
            out.push(problem(
                format!("{base}/expect/error"),
                "an answer is an error, a result or an interrupt: this case expects more than one"
                    .into(),
                "keep the one the case is about",
            ));
        }
        names.push(&case.name);
    }
    out
}

/// What is wrong with a model reply, each with the key it is at (none:
/// the reply), a message and a hint.
fn model_reply_problems(r: &ModelReply) -> Vec<(Option<&'static str>, &'static str, &'static str)> {
    let mut out = Vec::new();
    if !r.fails() && r.content.is_none() && r.tool_calls.is_empty() {
        out.push((
            None,
            "a model reply has no `content`, `toolCalls`, `status` or `cut`",
            "give the reply's text as `content`, the calls it makes as `toolCalls`, or a failed attempt as `status` or `cut`",
        ));
    }
    if r.status.is_some() && r.cut {
        out.push((
            Some("cut"),
            "a failed attempt is answered with a `status` or a `cut`, not both",
            "keep one: each entry is one attempt",
        ));
    }
    if r.fails() {
        let given = [
            ("content", r.content.is_some()),
            ("toolCalls", !r.tool_calls.is_empty()),
            ("usage", r.usage.is_some()),
        ];
        for (key, _) in given.into_iter().filter(|(_, g)| *g) {
            out.push((
                Some(key),
                "a failed attempt (`status` or `cut`) has no reply: it has no `content`, `toolCalls` or `usage`",
                "script the reply the retry gets as the next entry",
            ));
        }
    }
    match &r.retry_after {
        Some(_) if r.status.is_none() => out.push((
            Some("retryAfter"),
            "`retryAfter` is a header of a `status` reply",
            "add the `status` it comes with, or leave it out",
        )),
        Some(v) if v.is_empty() || !v.chars().all(|c| c == ' ' || c.is_ascii_graphic()) => out
            .push((
                Some("retryAfter"),
                "`retryAfter` is not a header value (visible ASCII and spaces)",
                "give seconds (\"2\") or an HTTP date (\"Wed, 21 Oct 2026 07:28:00 GMT\")",
            )),
        _ => {}
    }
    out
}

pub fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
