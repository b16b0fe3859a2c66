//! Reading the positioned JSON tree into the typed model.
//!
//! Every problem is collected (not just the first), each with the JSON
//! pointer of the offending value. An object reader records which keys the
//! model asked for; whatever is left over is an unknown field and gets a
//! "did you mean" hint from that same list, so the hint can never drift from
//! the model. Defaults and aliases are applied here: the result is normalized.

pub(crate) mod calls;
mod settings;
mod state;
mod tools;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diag::{did_you_mean, pointer_token, Diagnostic};
use crate::json::{Json, Member, Node as JNode};
use crate::model::*;

pub(crate) struct Reader {
    pub diags: Vec<Diagnostic>,
}

/// A view of one JSON object being read.
pub(crate) struct Obj<'a> {
    ptr: String,
    pub(crate) members: &'a [Member],
    known: Vec<&'static str>,
    /// Objects such as `presentation` accept anything.
    open: bool,
}

impl<'a> Obj<'a> {
    pub(crate) fn child_ptr(&self, key: &str) -> String {
        format!("{}/{}", self.ptr, pointer_token(key))
    }

    pub(crate) fn field(&mut self, key: &'static str) -> Option<(&'a JNode, String)> {
        self.known.push(key);
        self.members
            .iter()
            .find(|m| m.key == key)
            .map(|m| (&m.value, self.child_ptr(key)))
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.members.iter().any(|m| m.key == key)
    }
}

impl Reader {
    pub fn new() -> Self {
        Reader { diags: Vec::new() }
    }

    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    pub(crate) fn type_error(&mut self, ptr: &str, expected: &str, node: &JNode) {
        self.push(
            Diagnostic::error(
                &WRONG_TYPE,
                format!("expected {expected}, found {}", node.value.type_name()),
            )
            .at(ptr),
        );
    }

    pub(crate) fn object<'a>(&mut self, node: &'a JNode, ptr: &str) -> Option<Obj<'a>> {
        match &node.value {
            Json::Object(members) => Some(Obj {
                ptr: ptr.to_string(),
                members,
                known: Vec::new(),
                open: false,
            }),
            _ => {
                self.type_error(ptr, "an object", node);
                None
            }
        }
    }

    /// Reports members of `obj` that the model did not ask for.
    pub(crate) fn finish(&mut self, obj: Obj<'_>, what: &str) {
        if obj.open {
            return;
        }
        for m in obj.members {
            if obj.known.contains(&m.key.as_str()) {
                continue;
            }
            let mut d = Diagnostic::error(
                &UNKNOWN_FIELD,
                format!("unknown field `{}` in {what}", m.key),
            )
            .at(obj.child_ptr(&m.key));
            d = match did_you_mean(&m.key, obj.known.iter().copied()) {
                Some(s) => d.hint(format!("did you mean `{s}`?")),
                None => d.hint(format!(
                    "{what} accepts: {}; free-form data belongs under `extensions`",
                    obj.known.join(", ")
                )),
            };
            self.push(d);
        }
    }

    pub(crate) fn missing(&mut self, obj: &Obj<'_>, key: &str, what: &str) {
        self.push(
            Diagnostic::error(
                &MISSING_FIELD,
                format!("{what} is missing the required field `{key}`"),
            )
            .at(obj.ptr.clone()),
        );
    }

    pub(crate) fn req_str(&mut self, obj: &mut Obj<'_>, key: &'static str, what: &str) -> String {
        match obj.field(key) {
            Some((n, p)) => self.string(n, &p).unwrap_or_default(),
            None => {
                self.missing(obj, key, what);
                String::new()
            }
        }
    }

    /// An optional member; `null` counts as absent, as the schema says.
    pub(crate) fn opt<'a>(obj: &mut Obj<'a>, key: &'static str) -> Option<(&'a JNode, String)> {
        obj.field(key)
            .filter(|(n, _)| !matches!(n.value, Json::Null))
    }

    pub(crate) fn opt_str(&mut self, obj: &mut Obj<'_>, key: &'static str) -> Option<String> {
        let (n, p) = Self::opt(obj, key)?;
        self.string(n, &p)
    }

    pub(crate) fn string(&mut self, n: &JNode, p: &str) -> Option<String> {
        match &n.value {
            Json::String(s) => Some(s.clone()),
            _ => {
                self.type_error(p, "a string", n);
                None
            }
        }
    }

    pub(crate) fn opt_bool(&mut self, obj: &mut Obj<'_>, key: &'static str) -> Option<bool> {
        let (n, p) = Self::opt(obj, key)?;
        match &n.value {
            Json::Bool(b) => Some(*b),
            _ => {
                self.type_error(&p, "a boolean", n);
                None
            }
        }
    }

    pub(crate) fn opt_uint(
        &mut self,
        obj: &mut Obj<'_>,
        key: &'static str,
        max: u64,
    ) -> Option<u64> {
        let (n, p) = Self::opt(obj, key)?;
        match &n.value {
            Json::Number(num) => match num.as_u64() {
                Some(v) if v <= max => Some(v),
                _ => {
                    self.push(
                        Diagnostic::error(
                            &crate::codes::OUT_OF_RANGE,
                            format!("`{key}` must be an integer from 0 to {max}, found {num}"),
                        )
                        .at(p),
                    );
                    None
                }
            },
            _ => {
                self.type_error(&p, "an integer", n);
                None
            }
        }
    }

    pub(crate) fn opt_f64(&mut self, obj: &mut Obj<'_>, key: &'static str) -> Option<f64> {
        let (n, p) = Self::opt(obj, key)?;
        match &n.value {
            Json::Number(num) => num.as_f64(),
            _ => {
                self.type_error(&p, "a number", n);
                None
            }
        }
    }

    /// Reads a string naming one of `names`; an unknown name gets a hint.
    pub(crate) fn enumerated<T: Copy>(
        &mut self,
        n: &JNode,
        p: &str,
        what: &str,
        names: &[(&'static str, T)],
    ) -> Option<T> {
        let s = self.string(n, p)?;
        if let Some((_, v)) = names.iter().find(|(name, _)| *name == s) {
            return Some(*v);
        }
        let listed: Vec<&str> = names.iter().map(|(name, _)| *name).collect();
        let mut d = Diagnostic::error(&INVALID_VALUE, format!("`{s}` is not a valid {what}")).at(p);
        d = match did_you_mean(&s, listed.iter().copied()) {
            Some(close) => d.hint(format!(
                "did you mean `{close}`? valid: {}",
                listed.join(", ")
            )),
            None => d.hint(format!("valid: {}", listed.join(", "))),
        };
        self.push(d);
        None
    }

    pub(crate) fn opt_enum<T: Copy>(
        &mut self,
        obj: &mut Obj<'_>,
        key: &'static str,
        what: &str,
        names: &[(&'static str, T)],
    ) -> Option<T> {
        let (n, p) = Self::opt(obj, key)?;
        self.enumerated(n, &p, what, names)
    }

    pub(crate) fn array<'a>(&mut self, n: &'a JNode, p: &str) -> &'a [JNode] {
        match &n.value {
            Json::Array(items) => items,
            _ => {
                self.type_error(p, "an array", n);
                &[]
            }
        }
    }

    pub(crate) fn opt_array<'a>(
        &mut self,
        obj: &mut Obj<'a>,
        key: &'static str,
    ) -> Vec<(&'a JNode, String)> {
        match obj.field(key) {
            Some((n, p)) => self
                .array(n, &p)
                .iter()
                .enumerate()
                .map(|(i, item)| (item, format!("{p}/{i}")))
                .collect(),
            None => Vec::new(),
        }
    }

    pub(crate) fn string_map(
        &mut self,
        obj: &mut Obj<'_>,
        key: &'static str,
    ) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        if let Some((n, p)) = obj.field(key) {
            if let Some(o) = self.object(n, &p) {
                for m in o.members {
                    if let Some(s) = self.string(&m.value, &o.child_ptr(&m.key)) {
                        out.insert(m.key.clone(), s);
                    }
                }
            }
        }
        out
    }

    // ---- the document --------------------------------------------------

    pub fn document(&mut self, root: &JNode) -> Option<Document> {
        self.document_at(root, "")
    }

    /// A document at `ptr`: the root, or a subgraph's embedded child.
    pub(crate) fn document_at(&mut self, root: &JNode, ptr: &str) -> Option<Document> {
        let mut o = self.object(root, ptr)?;
        let ir_version = match o.field("irVersion") {
            Some((n, p)) => self.ir_version(n, &p),
            None => {
                self.push(
                    Diagnostic::error(&MISSING_FIELD, "the document has no `irVersion`")
                        .at(ptr)
                        .hint("add \"irVersion\": \"2.2\" at the top level"),
                );
                String::new()
            }
        };
        let id = self.req_str(&mut o, "id", "the document");
        let name = self.opt_str(&mut o, "name");
        let description = self.opt_str(&mut o, "description");
        let version = self
            .opt_str(&mut o, "version")
            .unwrap_or_else(|| "0.1.0".into());
        let target = o.field("target").and_then(|(n, p)| {
            let mut t = self.object(n, &p)?;
            let platform = self.req_str(&mut t, "platform", "`target`");
            self.finish(t, "`target`");
            Some(Target { platform })
        });
        let security = match o.field("security") {
            Some((n, p)) => self.security(n, &p),
            None => Security::default(),
        };
        let logical = match o.field("logical") {
            Some((n, p)) => self.logical(n, &p),
            None => {
                self.missing(&o, "logical", "the document");
                None
            }
        };
        let bodies_by_platform = self.bodies(&mut o);
        let codegen = self.codegen(&mut o);
        let presentation = self.free_object(&mut o, "presentation");
        let extensions = self.free_object(&mut o, "extensions");
        self.finish(o, "the document");
        Some(Document {
            ir_version,
            id,
            name,
            description,
            version,
            target,
            security,
            logical: logical?,
            bodies_by_platform,
            codegen,
            presentation,
            extensions,
        })
    }

    fn free_object(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
    ) -> Option<BTreeMap<String, Value>> {
        let (n, p) = o.field(key)?;
        let mut obj = self.object(n, &p)?;
        obj.open = true;
        Some(
            obj.members
                .iter()
                .map(|m| (m.key.clone(), m.value.to_value()))
                .collect(),
        )
    }

    /// `2`, `"2"`, `"2.N"`, `"2.N.M"` become `"2.N.M"`.
    fn ir_version(&mut self, n: &JNode, p: &str) -> String {
        let text = match &n.value {
            Json::Number(num) => num.to_string(),
            Json::String(s) => s.clone(),
            _ => {
                self.type_error(p, "a string or an integer", n);
                return String::new();
            }
        };
        let parts: Vec<&str> = text.split('.').collect();
        let numeric = |s: &str| {
            !s.is_empty()
                && s.bytes().all(|b| b.is_ascii_digit())
                && (s == "0" || !s.starts_with('0'))
        };
        let ok = parts.first() == Some(&"2")
            && parts.len() <= 3
            && parts.iter().all(|s| numeric(s))
            && !(matches!(n.value, Json::Number(_)) && parts.len() > 1);
        if !ok {
            self.push(
                Diagnostic::error(
                    &IR_VERSION,
                    format!("irVersion `{text}` is not supported; this compiler reads IR 2.x (>=2.0.0, <3.0.0)"),
                )
                .at(p)
                .hint("write \"irVersion\": \"2.2\" (accepted forms: 2, \"2\", \"2.N\", \"2.N.M\")"),
            );
            return String::new();
        }
        let mut full: Vec<&str> = parts;
        while full.len() < 3 {
            full.push("0");
        }
        full.join(".")
    }

    fn security(&mut self, n: &JNode, p: &str) -> Security {
        let Some(mut o) = self.object(n, p) else {
            return Security::default();
        };
        let names = [
            ("none", Auth::None),
            ("api_key", Auth::ApiKey),
            ("bearer", Auth::Bearer),
        ];
        let auth = self
            .opt_enum(&mut o, "auth", "auth scheme", &names)
            .unwrap_or(Auth::ApiKey);
        let key_env = self
            .opt_str(&mut o, "keyEnv")
            .unwrap_or_else(|| "SVC_API_KEY".into());
        self.finish(o, "`security`");
        Security { auth, key_env }
    }

    fn bodies(&mut self, o: &mut Obj<'_>) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut out = BTreeMap::new();
        let Some((n, p)) = o.field("bodiesByPlatform") else {
            return out;
        };
        let Some(platforms) = self.object(n, &p) else {
            return out;
        };
        for m in platforms.members {
            let pp = platforms.child_ptr(&m.key);
            let Some(bodies) = self.object(&m.value, &pp) else {
                continue;
            };
            let mut map = BTreeMap::new();
            for b in bodies.members {
                if let Some(s) = self.string(&b.value, &bodies.child_ptr(&b.key)) {
                    map.insert(b.key.clone(), s);
                }
            }
            out.insert(m.key.clone(), map);
        }
        out
    }

    fn codegen(&mut self, o: &mut Obj<'_>) -> Codegen {
        let mut codegen = Codegen::default();
        let Some((n, p)) = o.field("codegen") else {
            return codegen;
        };
        let Some(mut c) = self.object(n, &p) else {
            return codegen;
        };
        if let Some((tn, tp)) = c.field("templates") {
            if let Some(platforms) = self.object(tn, &tp) {
                for m in platforms.members {
                    let pp = platforms.child_ptr(&m.key);
                    let Some(nodes) = self.object(&m.value, &pp) else {
                        continue;
                    };
                    let mut map = BTreeMap::new();
                    for nm in nodes.members {
                        let np = nodes.child_ptr(&nm.key);
                        let Some(mut r) = self.object(&nm.value, &np) else {
                            continue;
                        };
                        let what = "a template reference";
                        let connector = self.req_str(&mut r, "connector", what);
                        let version = self.req_str(&mut r, "version", what);
                        let entry = self.opt_str(&mut r, "entry");
                        self.finish(r, what);
                        map.insert(
                            nm.key.clone(),
                            TemplateRef {
                                connector,
                                version,
                                entry,
                            },
                        );
                    }
                    codegen.templates.insert(m.key.clone(), map);
                }
            }
        }
        self.finish(c, "`codegen`");
        codegen
    }

    // ---- logical -------------------------------------------------------

    fn logical(&mut self, n: &JNode, p: &str) -> Option<Logical> {
        let mut o = self.object(n, p)?;
        let state = self
            .opt_array(&mut o, "state")
            .into_iter()
            .filter_map(|(n, p)| self.state_field(n, &p))
            .collect();
        if !o.has("nodes") {
            self.missing(&o, "nodes", "`logical`");
        }
        let nodes = self
            .opt_array(&mut o, "nodes")
            .into_iter()
            .filter_map(|(n, p)| self.node(n, &p))
            .collect();
        let edges = self
            .opt_array(&mut o, "edges")
            .into_iter()
            .filter_map(|(n, p)| {
                let mut e = self.object(n, &p)?;
                let from = self.req_str(&mut e, "from", "an edge");
                let to = self.req_str(&mut e, "to", "an edge");
                self.finish(e, "an edge");
                Some(Edge { from, to })
            })
            .collect();
        let tools = self
            .opt_array(&mut o, "tools")
            .into_iter()
            .filter_map(|(n, p)| self.tool(n, &p))
            .collect();
        let mcp_servers = self
            .opt_array(&mut o, "mcpServers")
            .into_iter()
            .filter_map(|(n, p)| self.mcp_server(n, &p))
            .collect();
        let agents = self
            .opt_array(&mut o, "agents")
            .into_iter()
            .filter_map(|(n, p)| self.agent(n, &p))
            .collect();
        let settings = match o.field("settings") {
            Some((n, p)) => self.settings(n, &p),
            None => Settings::default(),
        };
        self.finish(o, "`logical`");
        Some(Logical {
            state,
            nodes,
            edges,
            tools,
            mcp_servers,
            agents,
            settings,
        })
    }

    fn node(&mut self, n: &JNode, p: &str) -> Option<Node> {
        let mut o = self.object(n, p)?;
        let id = self.req_str(&mut o, "id", "a node");
        let label = self.opt_str(&mut o, "label");
        let kind_name = match o.field("kind") {
            Some((kn, kp)) => {
                let mut names: Vec<(&'static str, &'static str)> =
                    NodeKind::NAMES.iter().map(|k| (*k, *k)).collect();
                names.push(("response_transformer", "response_template"));
                self.enumerated(kn, &kp, "node kind", &names)
            }
            None => {
                self.missing(&o, "kind", "a node");
                None
            }
        };
        let Some(kind_name) = kind_name else {
            // Without a kind the other fields cannot be checked.
            return None;
        };
        let what = format!("a `{kind_name}` node");
        let kind = NodeKind::read(self, kind_name, &mut o, &what)?;
        self.finish(o, &what);
        Some(Node { id, label, kind })
    }

    pub(crate) fn strings(&mut self, o: &mut Obj<'_>, key: &'static str) -> Vec<String> {
        self.opt_array(o, key)
            .into_iter()
            .filter_map(|(n, p)| self.string(n, &p))
            .collect()
    }

    /// An optional integer member from 1 to `max` (0 is refused: a zero
    /// limit or timeout means nothing any target could honour).
    pub(crate) fn opt_positive(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        max: u64,
    ) -> Option<u64> {
        let ptr = o.child_ptr(key);
        match self.opt_uint(o, key, max) {
            Some(0) => {
                self.push(
                    Diagnostic::error(
                        &crate::codes::OUT_OF_RANGE,
                        format!("`{key}` must be from 1 to {max}"),
                    )
                    .at(ptr),
                );
                None
            }
            v => v,
        }
    }

    /// A positive integer member with a default.
    pub(crate) fn positive(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        default: u64,
        max: u64,
    ) -> u64 {
        self.opt_positive(o, key, max).unwrap_or(default)
    }
}

crate::diagnostic_codes! {
    /// A value is not one of the values its field accepts.
    ///
    /// Enumerated fields accept a fixed list: node `kind`, tool `kind`, MCP `transport`, state field `type` and `reducer`, condition `op`, `security.auth`, `outputShape`, log levels and formats, checkpointer `type`. The diagnostic lists the valid values and suggests the nearest one. It is also reported for an MCP `stdio` server with an empty `command`, and by connectors for config values outside their list (for example `svc/kv-cache` `op`, an empty `key` or `namespace`).
    ///
    /// Use one of the listed values.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_auth.graph.json` (and `invalid_node_kind.graph.json`):
    ///
    /// ```json
    /// "security": { "auth": "apikey" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "security": { "auth": "api_key" }
    /// ```
    pub INVALID_VALUE = "invalid-value", group "document";

    /// The document's irVersion is not 2.x.
    ///
    /// This compiler reads IR 2.x (>= 2.0.0, < 3.0.0). `irVersion` may be written `2`, `"2"`, `"2.N"` or `"2.N.M"`; it is normalized to `"2.N.M"`. Any other version, or a form such as `2.1` as a JSON number, is refused. (Whether the chosen backend reads the version is checked later: `ir-version-unsupported`.)
    ///
    /// Write an IR 2 version, for example `"irVersion": "2.2"`, after converting the document if it was written for another major version.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/ir_version_unsupported.graph.json`:
    ///
    /// ```json
    /// "irVersion": "3.0"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "irVersion": "2.2"
    /// ```
    pub IR_VERSION = "ir-version", group "document";

    /// A required field is absent.
    ///
    /// Every object of the document has required fields: `irVersion`, `id` and `logical` at the top; `nodes` in `logical`; `id` and `kind` for nodes, plus the fields of the kind (`outputKey`, `prompt`, `template`, `toolId`, `branches`, `graph`...); `name` and `type` for state fields; and so on. `svc.project.json` and connector configs report their required fields with this code too. The diagnostic points at the object that lacks the field.
    ///
    /// Add the field. When a field was misspelt, `unknown-field` is reported at the misspelling too.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/ir_version_missing.graph.json`:
    ///
    /// ```json
    /// {
    ///   "id": "broken",
    ///   "target": { "platform": "go" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// {
    ///   "irVersion": "2.2",
    ///   "id": "broken",
    ///   "target": { "platform": "go" }
    /// ```
    pub MISSING_FIELD = "missing-field", group "document";

    /// An object has a field its schema does not define.
    ///
    /// Every object of the document has a fixed set of fields (only `presentation`, `extensions` and the fields of `agent`, `rag`, `intent_classifier` and `hitl` nodes are free-form). An unknown field is usually a misspelling, so it is refused with a did-you-mean hint; free-form data belongs under `extensions`. `svc.project.json` and connector configs report unknown fields with this code too.
    ///
    /// Fix the spelling, or move the data under `extensions`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/unknown_field_typo.graph.json` (and `unknown_top_level_field.graph.json`):
    ///
    /// ```json
    /// { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputkey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
    /// ```
    pub UNKNOWN_FIELD = "unknown-field", group "document";

    /// A value has the wrong JSON type.
    ///
    /// Each field of the document has a JSON type: objects, arrays, strings, booleans, integers or numbers (`irVersion` takes a string or an integer). A value of another type, such as a number written as a string, is refused with the expected and the found type. Connector configs report their own type errors with this code.
    ///
    /// Write the value with the expected type.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/wrong_type.graph.json`:
    ///
    /// ```json
    /// "settings": { "maxSteps": "25" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "settings": { "maxSteps": 25 }
    /// ```
    pub WRONG_TYPE = "wrong-type", group "document";
}
