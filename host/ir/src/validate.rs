//! The semantic rules of IR v2: ids, references, topology, types.
//! Every rule is checked and every violation reported, each with a pointer.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

/// The fields a node that produces one text can write to (see
/// `StateField::text_write`).
const TEXT_TARGETS: &str =
    "a `string` field, a `messages` field (one assistant message) or an `append` array of strings (one more item)";

pub(crate) fn validate(doc: &Document) -> Vec<Diagnostic> {
    let mut v = Validator {
        doc,
        diags: Vec::new(),
        fields: doc
            .logical
            .state
            .iter()
            .map(|f| (f.name.as_str(), f))
            .collect(),
    };
    v.top_level();
    v.state();
    v.nodes();
    v.topology();
    v.tools();
    v.settings();
    v.bodies_and_templates();
    v.diags
}

struct Validator<'a> {
    doc: &'a Document,
    diags: Vec<Diagnostic>,
    fields: HashMap<&'a str, &'a StateField>,
}

fn matches_pattern(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|c| rest(*c))
}

pub fn is_doc_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_lowercase(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
        63,
    )
}

pub fn is_node_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic(),
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

pub fn is_identifier(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic() || c == b'_',
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

/// Whether a JSON value has the declared state type.
pub fn value_matches(ty: FieldType, items: Option<&ItemType>, v: &Value) -> bool {
    match ty {
        FieldType::String => v.is_string(),
        FieldType::Integer => v.is_i64() || v.is_u64(),
        FieldType::Number => v.is_number(),
        FieldType::Boolean => v.is_boolean(),
        FieldType::Object => v.is_object(),
        FieldType::Array => match (v.as_array(), items) {
            (Some(list), Some(it)) => list
                .iter()
                .all(|x| value_matches(it.ty, it.items.as_deref(), x)),
            (Some(_), None) => true,
            (None, _) => false,
        },
        FieldType::Messages => v.as_array().is_some_and(|list| list.iter().all(is_message)),
    }
}

/// `{ "role": string, "content": string }` and nothing else.
pub fn is_message(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.len() == 2
            && m.get("role").is_some_and(Value::is_string)
            && m.get("content").is_some_and(Value::is_string)
    })
}

impl<'a> Validator<'a> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn node_ptr(i: usize) -> String {
        format!("/logical/nodes/{i}")
    }

    fn field_names(&self) -> Vec<&'a str> {
        self.doc
            .logical
            .state
            .iter()
            .map(|f| f.name.as_str())
            .collect()
    }

    /// Reports `name` when it is not a declared state field.
    fn check_field_ref(&mut self, name: &str, ptr: String, node: Option<&str>, role: &str) -> bool {
        if self.fields.contains_key(name) {
            return true;
        }
        let names = self.field_names();
        let mut d = Diagnostic::error(
            "unknown-state-field",
            format!("{role} `{name}` is not a state field"),
        )
        .at(ptr);
        if let Some(n) = node {
            d = d.node(n);
        }
        d = match did_you_mean(name, names.iter().copied()) {
            Some(s) => d.hint(format!("did you mean `{s}`?")),
            None if names.is_empty() => d.hint("declare it in `logical.state`"),
            None => d.hint(format!(
                "declare it in `logical.state` or use one of: {}",
                names.join(", ")
            )),
        };
        self.err(d);
        false
    }

    fn top_level(&mut self) {
        let doc = self.doc;
        if !doc.id.is_empty() && !is_doc_id(&doc.id) {
            self.err(
                Diagnostic::error(
                    "invalid-id",
                    format!("document id `{}` must match {ID_PATTERN}", doc.id),
                )
                .at("/id")
                .hint("use lowercase letters, digits, `_` and `-`, starting with a letter; it names packages and artifacts"),
            );
        }
        if semver::Version::parse(&doc.version).is_err() {
            self.err(
                Diagnostic::error(
                    "invalid-version",
                    format!("version `{}` is not semver", doc.version),
                )
                .at("/version")
                .hint("write MAJOR.MINOR.PATCH, e.g. \"0.1.0\""),
            );
        }
        if let Some(t) = &doc.target {
            self.check_platform(&t.platform, "/target/platform".into());
        }
        if !is_identifier(&doc.security.key_env) {
            self.err(
                Diagnostic::error(
                    "invalid-env-name",
                    format!(
                        "keyEnv `{}` is not an environment variable name",
                        doc.security.key_env
                    ),
                )
                .at("/security/keyEnv")
                .hint("name the variable that holds the key, e.g. \"SVC_API_KEY\"; never the key itself"),
            );
        }
    }

    fn check_platform(&mut self, platform: &str, ptr: String) -> bool {
        if PLATFORMS.contains(&platform) {
            return true;
        }
        let mut d = Diagnostic::error(
            "invalid-platform",
            format!("`{platform}` is not a platform"),
        )
        .at(ptr);
        d = match did_you_mean(platform, PLATFORMS) {
            Some(s) => d.hint(format!(
                "did you mean `{s}`? platforms: {}",
                PLATFORMS.join(", ")
            )),
            None => d.hint(format!("platforms: {}", PLATFORMS.join(", "))),
        };
        self.err(d);
        false
    }

    fn state(&mut self) {
        let mut seen = HashSet::new();
        for (i, f) in self.doc.logical.state.iter().enumerate() {
            let ptr = format!("/logical/state/{i}");
            if !is_identifier(&f.name) {
                self.err(
                    Diagnostic::error(
                        "invalid-id",
                        format!(
                            "state field name `{}` must match {FIELD_NAME_PATTERN}",
                            f.name
                        ),
                    )
                    .at(format!("{ptr}/name"))
                    .hint("state fields become identifiers in every target language"),
                );
            }
            if !seen.insert(f.name.as_str()) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!("state field `{}` is declared twice", f.name),
                    )
                    .at(format!("{ptr}/name")),
                );
            }
            if f.reducer == Reducer::Append && !f.ty.is_list() {
                self.err(
                    Diagnostic::error(
                        "reducer-type",
                        format!(
                            "state field `{}` of type `{}` cannot use the `append` reducer",
                            f.name,
                            f.ty.as_str()
                        ),
                    )
                    .at(format!("{ptr}/reducer"))
                    .hint("`append` works on `array` and `messages` fields; use `replace` or change the type"),
                );
            }
            if f.items.is_some() && f.ty != FieldType::Array {
                self.err(
                    Diagnostic::error(
                        "items-type",
                        format!(
                            "`items` only applies to `array` fields; `{}` is `{}`",
                            f.name,
                            f.ty.as_str()
                        ),
                    )
                    .at(format!("{ptr}/items")),
                );
            }
            if let Some(def) = &f.default {
                if !value_matches(f.ty, f.items.as_ref(), def) {
                    self.err(
                        Diagnostic::error(
                            "default-type",
                            format!(
                                "the default of `{}` does not match its type `{}`",
                                f.name,
                                describe_type(f.ty, f.items.as_ref())
                            ),
                        )
                        .at(format!("{ptr}/default")),
                    );
                }
            }
        }
    }

    fn nodes(&mut self) {
        let doc = self.doc;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut starts = Vec::new();
        let mut ends = 0;
        for (i, n) in doc.logical.nodes.iter().enumerate() {
            let ptr = Self::node_ptr(i);
            if !is_node_id(&n.id) {
                self.err(
                    Diagnostic::error(
                        "invalid-id",
                        format!("node id `{}` must match {NODE_ID_PATTERN}", n.id),
                    )
                    .at(format!("{ptr}/id"))
                    .hint("node ids become identifiers: letters, digits and `_`, starting with a letter"),
                );
            } else if let Some(first) = seen.insert(n.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!(
                            "node id `{}` is used twice (first at /logical/nodes/{first})",
                            n.id
                        ),
                    )
                    .at(format!("{ptr}/id"))
                    .node(&n.id),
                );
            }
            match &n.kind {
                NodeKind::Start => starts.push(i),
                NodeKind::End => ends += 1,
                _ => {}
            }
            self.node_fields(i, n);
        }
        if starts.len() != 1 {
            let mut d = Diagnostic::error(
                "start-count",
                format!(
                    "a graph has exactly one `start` node; found {}",
                    starts.len()
                ),
            );
            d = match starts.get(1) {
                Some(second) => d.at(Self::node_ptr(*second)),
                None => d
                    .at("/logical/nodes")
                    .hint("add { \"id\": \"start\", \"kind\": \"start\" }"),
            };
            self.err(d);
        }
        if ends == 0 {
            self.err(
                Diagnostic::error("no-end", "a graph needs at least one `end` node")
                    .at("/logical/nodes")
                    .hint("add { \"id\": \"end\", \"kind\": \"end\" } and an edge to it"),
            );
        }
    }

    fn node_fields(&mut self, i: usize, n: &'a Node) {
        let ptr = Self::node_ptr(i);
        let id = Some(n.id.as_str());
        if let Some(key) = n.kind.output_key() {
            self.check_field_ref(key, format!("{ptr}/outputKey"), id, "outputKey");
        }
        match &n.kind {
            NodeKind::Llm(llm) => {
                if llm.model.is_none() && self.doc.logical.settings.model.is_none() {
                    self.err(
                        Diagnostic::error(
                            "missing-model",
                            format!("llm node `{}` names no model and `settings.model` is absent", n.id),
                        )
                        .at(&ptr)
                        .node(&n.id)
                        .hint("add \"model\": { \"provider\": \"openai\", \"name\": \"gpt-4o-mini\" } to the node or to `logical.settings`"),
                    );
                }
                if llm.prompt.user.trim().is_empty() {
                    self.err(
                        Diagnostic::error(
                            "empty-prompt",
                            format!("llm node `{}` has an empty user prompt", n.id),
                        )
                        .at(format!("{ptr}/prompt/user"))
                        .node(&n.id),
                    );
                }
                if let Some(system) = &llm.prompt.system {
                    self.check_template(system, format!("{ptr}/prompt/system"), &n.id);
                }
                self.check_template(&llm.prompt.user, format!("{ptr}/prompt/user"), &n.id);
                if let Some(f) = self.fields.get(llm.output_key.as_str()) {
                    let ok = match llm.output_shape {
                        OutputShape::Scalar => f.text_write().is_some(),
                        OutputShape::List => {
                            f.ty == FieldType::Array
                                && f.items.as_ref().is_none_or(|it| it.ty == FieldType::String)
                        }
                    };
                    if !ok {
                        let (shape, want) = match llm.output_shape {
                            OutputShape::Scalar => ("scalar", TEXT_TARGETS),
                            OutputShape::List => ("list", "an `array` field of strings"),
                        };
                        self.err(
                            Diagnostic::error(
                                "output-type",
                                format!(
                                    "llm node `{}` writes {shape} output to `{}`, {}; it needs {want}",
                                    n.id,
                                    f.name,
                                    f.describe()
                                ),
                            )
                            .at(format!("{ptr}/outputKey"))
                            .node(&n.id),
                        );
                    }
                }
                for (j, tool) in llm.bound_tool_ids.iter().enumerate() {
                    self.check_tool_ref(tool, format!("{ptr}/boundToolIds/{j}"), &n.id);
                }
            }
            NodeKind::Tool { tool_id, input, .. } => {
                self.check_tool_ref(tool_id, format!("{ptr}/toolId"), &n.id);
                for (k, v) in input {
                    if let Value::String(s) = v {
                        self.check_template(s, format!("{ptr}/input/{k}"), &n.id);
                    }
                }
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => {
                self.check_template(template, format!("{ptr}/template"), &n.id);
                if let Some(f) = self.fields.get(output_key.as_str()) {
                    if f.text_write().is_none() {
                        self.err(
                            Diagnostic::error(
                                "output-type",
                                format!(
                                    "response_template `{}` writes text to `{}`, {}; it needs {TEXT_TARGETS}",
                                    n.id,
                                    f.name,
                                    f.describe()
                                ),
                            )
                            .at(format!("{ptr}/outputKey"))
                            .node(&n.id),
                        );
                    }
                }
            }
            NodeKind::Router { branches } => self.router(i, n, branches),
            _ => {}
        }
    }

    fn check_template(&mut self, text: &str, ptr: String, node: &str) {
        for name in placeholders(text) {
            self.check_field_ref(name, ptr.clone(), Some(node), "placeholder");
        }
    }

    fn check_tool_ref(&mut self, tool: &str, ptr: String, node: &str) {
        if self.doc.tool(tool).is_some() {
            return;
        }
        let ids: Vec<&str> = self
            .doc
            .logical
            .tools
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        let mut d = Diagnostic::error(
            "unresolved-ref",
            format!("tool `{tool}` is not declared in `logical.tools`"),
        )
        .at(ptr)
        .node(node);
        if let Some(s) = did_you_mean(tool, ids.iter().copied()) {
            d = d.hint(format!("did you mean `{s}`?"));
        }
        self.err(d);
    }

    fn router(&mut self, i: usize, n: &Node, branches: &'a [Branch]) {
        let ptr = Self::node_ptr(i);
        if branches.is_empty() {
            self.err(
                Diagnostic::error(
                    "router-default",
                    format!("router `{}` has no branches", n.id),
                )
                .at(format!("{ptr}/branches"))
                .node(&n.id)
                .hint("end the list with a default branch: { \"to\": \"<node id>\" }"),
            );
            return;
        }
        let last = branches.len() - 1;
        for (j, b) in branches.iter().enumerate() {
            let bptr = format!("{ptr}/branches/{j}");
            match (&b.when, j == last) {
                (Some(_), true) => self.err(
                    Diagnostic::error(
                        "router-default",
                        format!("the last branch of router `{}` has a condition; it must be the unconditional default", n.id),
                    )
                    .at(format!("{bptr}/when"))
                    .node(&n.id)
                    .hint("add a final branch without `when`"),
                ),
                (None, false) => self.err(
                    Diagnostic::error(
                        "router-default",
                        format!("branch {j} of router `{}` has no condition but is not last; branches after it could never run", n.id),
                    )
                    .at(bptr.clone())
                    .node(&n.id)
                    .hint("move the default branch to the end"),
                ),
                _ => {}
            }
            if let Some(c) = &b.when {
                self.condition(c, format!("{bptr}/when"), &n.id);
            }
        }
    }

    fn condition(&mut self, c: &Condition, ptr: String, node: &str) {
        if !self.check_field_ref(
            &c.field,
            format!("{ptr}/field"),
            Some(node),
            "condition field",
        ) {
            return;
        }
        let Some(f) = self.fields.get(c.field.as_str()).copied() else {
            return;
        };
        let op = c.op.as_str();
        let scalar = matches!(
            f.ty,
            FieldType::String | FieldType::Integer | FieldType::Number | FieldType::Boolean
        );
        let fail = |msg: String, at: String| {
            Diagnostic::error("invalid-condition", msg)
                .at(at)
                .node(node)
        };
        if !c.op.takes_value() {
            if c.value.is_some() {
                self.err(fail(
                    format!("`{op}` takes no `value`"),
                    format!("{ptr}/value"),
                ));
            }
            return;
        }
        let Some(value) = &c.value else {
            self.err(fail(format!("`{op}` needs a `value` to compare with"), ptr));
            return;
        };
        if !scalar {
            self.err(fail(
                format!(
                    "`{op}` compares scalars; `{}` is `{}`",
                    f.name,
                    f.ty.as_str()
                ),
                format!("{ptr}/op"),
            ));
            return;
        }
        if c.op.is_ordering() && f.ty == FieldType::Boolean {
            self.err(fail(
                format!(
                    "`{op}` orders numbers or strings; `{}` is `boolean`",
                    f.name
                ),
                format!("{ptr}/op"),
            ));
            return;
        }
        let values: Vec<&Value> = match (c.op, value) {
            (Op::In, Value::Array(list)) => list.iter().collect(),
            (Op::In, _) => {
                self.err(fail(
                    "`in` needs a list `value`".into(),
                    format!("{ptr}/value"),
                ));
                return;
            }
            (_, v) => vec![v],
        };
        if values.iter().any(|v| !value_matches(f.ty, None, v)) {
            self.err(fail(
                format!(
                    "the `value` of this condition must be {} to compare with `{}`",
                    describe_type(f.ty, None),
                    f.name
                ),
                format!("{ptr}/value"),
            ));
        }
    }

    /// Successors of a node: a router's branch targets, otherwise its edges.
    fn successors(&self) -> BTreeMap<&'a str, Vec<&'a str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for n in &self.doc.logical.nodes {
            out.entry(n.id.as_str()).or_default();
            if let NodeKind::Router { branches } = &n.kind {
                for b in branches {
                    out.entry(n.id.as_str()).or_default().push(b.to.as_str());
                }
            }
        }
        for e in &self.doc.logical.edges {
            if let Some(list) = out.get_mut(e.from.as_str()) {
                list.push(e.to.as_str());
            }
        }
        out
    }

    fn topology(&mut self) {
        let doc = self.doc;
        let ids: BTreeSet<&str> = doc.logical.nodes.iter().map(|n| n.id.as_str()).collect();
        let kinds: HashMap<&str, &NodeKind> = doc
            .logical
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), &n.kind))
            .collect();
        let mut out_count: HashMap<&str, usize> = HashMap::new();
        let mut seen_edges = HashSet::new();
        let mut broken = false;
        for (i, e) in doc.logical.edges.iter().enumerate() {
            let ptr = format!("/logical/edges/{i}");
            for (end, name) in [("from", &e.from), ("to", &e.to)] {
                if !ids.contains(name.as_str()) {
                    broken = true;
                    self.unknown_node(name, format!("{ptr}/{end}"), &ids);
                }
            }
            if !seen_edges.insert((e.from.as_str(), e.to.as_str())) {
                self.err(
                    Diagnostic::error(
                        "duplicate-edge",
                        format!("the edge {} → {} is declared twice", e.from, e.to),
                    )
                    .at(ptr.clone()),
                );
            }
            *out_count.entry(e.from.as_str()).or_default() += 1;
            if let Some(NodeKind::Start) = kinds.get(e.to.as_str()) {
                self.err(
                    Diagnostic::error(
                        "edge-count",
                        format!("edge {} → {} enters `start`; nothing may", e.from, e.to),
                    )
                    .at(format!("{ptr}/to")),
                );
            }
            match kinds.get(e.from.as_str()) {
                Some(NodeKind::Router { .. }) => self.err(
                    Diagnostic::error(
                        "edge-count",
                        format!(
                            "router `{}` has an edge; a router's targets come from its branches",
                            e.from
                        ),
                    )
                    .at(ptr.clone())
                    .node(&e.from)
                    .hint(format!(
                        "add {{ \"to\": \"{}\" }} as a branch and remove this edge",
                        e.to
                    )),
                ),
                Some(NodeKind::End) => self.err(
                    Diagnostic::error(
                        "edge-count",
                        format!("end node `{}` has an outgoing edge", e.from),
                    )
                    .at(ptr.clone())
                    .node(&e.from),
                ),
                _ => {}
            }
        }
        for (i, n) in doc.logical.nodes.iter().enumerate() {
            if let NodeKind::Router { branches } = &n.kind {
                for (j, b) in branches.iter().enumerate() {
                    if !ids.contains(b.to.as_str()) {
                        broken = true;
                        self.unknown_node(
                            &b.to,
                            format!("/logical/nodes/{i}/branches/{j}/to"),
                            &ids,
                        );
                    }
                }
                continue;
            }
            if matches!(n.kind, NodeKind::End) {
                continue;
            }
            let count = out_count.get(n.id.as_str()).copied().unwrap_or(0);
            if count != 1 {
                broken = true;
                self.err(
                    Diagnostic::error(
                        "edge-count",
                        format!(
                            "`{}` has {count} outgoing edges; a `{}` node has exactly one",
                            n.id,
                            n.kind.name()
                        ),
                    )
                    .at(Self::node_ptr(i))
                    .node(&n.id)
                    .hint(if count == 0 {
                        "add an edge from it, e.g. to an `end` node".to_string()
                    } else {
                        "use a `router` node to choose between several targets".to_string()
                    }),
                );
            }
        }
        let starts = doc
            .logical
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Start))
            .count();
        if broken || starts != 1 {
            // Reachability over a graph with dangling edges or an ambiguous
            // start would only repeat the errors above in other words.
            return;
        }
        self.reachability();
    }

    fn unknown_node(&mut self, name: &str, ptr: String, ids: &BTreeSet<&str>) {
        let mut d =
            Diagnostic::error("unresolved-ref", format!("node `{name}` does not exist")).at(ptr);
        if let Some(s) = did_you_mean(name, ids.iter().copied()) {
            d = d.hint(format!("did you mean `{s}`?"));
        }
        self.err(d);
    }

    fn reachability(&mut self) {
        let doc = self.doc;
        let succ = self.successors();
        let index: HashMap<&str, usize> = doc
            .logical
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        // Forward from start.
        let mut reached = HashSet::new();
        let mut stack: Vec<&str> = doc.start_id().into_iter().collect();
        while let Some(id) = stack.pop() {
            if reached.insert(id) {
                stack.extend(succ.get(id).into_iter().flatten().copied());
            }
        }
        for n in &doc.logical.nodes {
            if !reached.contains(n.id.as_str()) {
                self.err(
                    Diagnostic::error(
                        "unreachable",
                        format!("node `{}` cannot be reached from `start`", n.id),
                    )
                    .at(Self::node_ptr(index[n.id.as_str()]))
                    .node(&n.id)
                    .hint("add an edge or router branch leading to it, or remove it"),
                );
            }
        }
        // Backward from every end.
        let mut pred: HashMap<&str, Vec<&str>> = HashMap::new();
        for (from, tos) in &succ {
            for to in tos {
                pred.entry(*to).or_default().push(*from);
            }
        }
        let mut reaches_end = HashSet::new();
        let mut stack: Vec<&str> = doc
            .logical
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::End))
            .map(|n| n.id.as_str())
            .collect();
        while let Some(id) = stack.pop() {
            if reaches_end.insert(id) {
                stack.extend(pred.get(id).into_iter().flatten().copied());
            }
        }
        let trapped: BTreeSet<&str> = doc
            .logical
            .nodes
            .iter()
            .map(|n| n.id.as_str())
            .filter(|id| !reaches_end.contains(id) && reached.contains(id))
            .collect();
        for cycle in trapped_cycles(&trapped, &succ) {
            let first = cycle[0];
            let mut path = cycle.join(" → ");
            path.push_str(&format!(" → {first}"));
            self.err(
                Diagnostic::error(
                    "no-path-to-end",
                    format!("the cycle {path} never reaches an `end` node"),
                )
                .at(Self::node_ptr(index[first]))
                .node(first)
                .hint("give one node of the cycle a way out: a router branch to a node that reaches `end`"),
            );
        }
    }

    fn tools(&mut self) {
        let doc = self.doc;
        let mut seen = HashSet::new();
        let servers: Vec<&str> = doc
            .logical
            .mcp_servers
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        for (i, t) in doc.logical.tools.iter().enumerate() {
            let ptr = format!("/logical/tools/{i}");
            if !is_node_id(&t.id) {
                self.err(
                    Diagnostic::error(
                        "invalid-id",
                        format!("tool id `{}` must match {NODE_ID_PATTERN}", t.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if !seen.insert(t.id.as_str()) {
                self.err(
                    Diagnostic::error("duplicate-id", format!("tool id `{}` is used twice", t.id))
                        .at(format!("{ptr}/id")),
                );
            }
            match &t.kind {
                ToolKind::Http { endpoint, .. } => {
                    if let Err(why) = check_endpoint(endpoint) {
                        self.err(
                            Diagnostic::error(
                                "invalid-endpoint",
                                format!("tool `{}`: {why}", t.id),
                            )
                            .at(format!("{ptr}/endpoint"))
                            .hint(
                                "write an http(s) URL, or env:NAME to read it from the environment",
                            ),
                        );
                    }
                }
                ToolKind::Mcp { server, .. } => {
                    if !servers.contains(&server.as_str()) {
                        let mut d = Diagnostic::error(
                            "unresolved-ref",
                            format!("tool `{}` names MCP server `{server}`, which is not in `logical.mcpServers`", t.id),
                        )
                        .at(format!("{ptr}/server"));
                        if let Some(s) = did_you_mean(server, servers.iter().copied()) {
                            d = d.hint(format!("did you mean `{s}`?"));
                        }
                        self.err(d);
                    }
                }
                ToolKind::Native => {}
            }
        }
        let mut seen = HashSet::new();
        for (i, s) in doc.logical.mcp_servers.iter().enumerate() {
            let ptr = format!("/logical/mcpServers/{i}");
            if !is_node_id(&s.id) {
                self.err(
                    Diagnostic::error(
                        "invalid-id",
                        format!("MCP server id `{}` must match {NODE_ID_PATTERN}", s.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            } else if !seen.insert(s.id.as_str()) {
                self.err(
                    Diagnostic::error(
                        "duplicate-id",
                        format!("MCP server id `{}` is used twice", s.id),
                    )
                    .at(format!("{ptr}/id")),
                );
            }
            match &s.transport {
                McpTransport::Stdio { command, .. } if command.trim().is_empty() => self.err(
                    Diagnostic::error(
                        "invalid-value",
                        format!("MCP server `{}` has an empty command", s.id),
                    )
                    .at(format!("{ptr}/command")),
                ),
                McpTransport::Sse { url, .. } | McpTransport::StreamableHttp { url, .. } => {
                    if let Err(why) = check_endpoint(url) {
                        self.err(
                            Diagnostic::error(
                                "invalid-endpoint",
                                format!("MCP server `{}`: {why}", s.id),
                            )
                            .at(format!("{ptr}/url")),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn settings(&mut self) {
        let s = &self.doc.logical.settings;
        let base = "/logical/settings";
        if s.max_steps == 0 {
            self.err(
                Diagnostic::error("out-of-range", "maxSteps must be at least 1")
                    .at(format!("{base}/maxSteps")),
            );
        }
        if s.request_timeout_ms == 0 {
            self.err(
                Diagnostic::error("out-of-range", "requestTimeoutMs must be at least 1")
                    .at(format!("{base}/requestTimeoutMs")),
            );
        }
        if s.server.port == 0 {
            self.err(
                Diagnostic::error("out-of-range", "server.port must be from 1 to 65535")
                    .at(format!("{base}/server/port")),
            );
        }
        if let Some(m) = &s.model {
            for (key, name) in [
                ("baseUrlEnv", &m.base_url_env),
                ("apiKeyEnv", &m.api_key_env),
            ] {
                if !is_identifier(name) {
                    self.err(
                        Diagnostic::error(
                            "invalid-env-name",
                            format!("{key} `{name}` is not an environment variable name"),
                        )
                        .at(format!("{base}/model/{key}"))
                        .hint("name the variable; secrets are never written into the graph"),
                    );
                }
            }
        }
    }

    fn bodies_and_templates(&mut self) {
        let doc = self.doc;
        let node_ids: HashSet<&str> = doc.logical.nodes.iter().map(|n| n.id.as_str()).collect();
        let tool_ids: HashSet<&str> = doc.logical.tools.iter().map(|t| t.id.as_str()).collect();
        for (platform, bodies) in &doc.bodies_by_platform {
            let pptr = format!("/bodiesByPlatform/{platform}");
            if !self.check_platform(platform, pptr.clone()) {
                continue;
            }
            for id in bodies.keys() {
                if !node_ids.contains(id.as_str()) && !tool_ids.contains(id.as_str()) {
                    self.err(
                        Diagnostic::error("unresolved-ref", format!("a {platform} body is given for `{id}`, which is neither a node nor a tool"))
                            .at(format!("{pptr}/{id}"))
                            .hint("remove the body or fix the id"),
                    );
                }
            }
        }
        for (platform, templates) in &doc.codegen.templates {
            let pptr = format!("/codegen/templates/{platform}");
            if !self.check_platform(platform, pptr.clone()) {
                continue;
            }
            for (id, r) in templates {
                let ptr = format!("{pptr}/{id}");
                match doc.node(id).map(|n| &n.kind) {
                    Some(NodeKind::Connector { .. }) => {}
                    Some(other) => self.err(
                        Diagnostic::error(
                            "unresolved-ref",
                            format!("codegen template for `{id}`, which is a `{}` node, not a `connector`", other.name()),
                        )
                        .at(ptr.clone()),
                    ),
                    None => self.err(
                        Diagnostic::error("unresolved-ref", format!("codegen template for `{id}`, which is not a node"))
                            .at(ptr.clone()),
                    ),
                }
                if !is_connector_id(&r.connector) {
                    self.err(
                        Diagnostic::error(
                            "invalid-id",
                            format!(
                                "connector id `{}` must look like `vendor/name`",
                                r.connector
                            ),
                        )
                        .at(format!("{ptr}/connector")),
                    );
                }
                if semver::VersionReq::parse(&r.version).is_err() {
                    self.err(
                        Diagnostic::error(
                            "invalid-version",
                            format!("`{}` is not a semver range", r.version),
                        )
                        .at(format!("{ptr}/version"))
                        .hint("e.g. \"^1.2\" or \">=1.0, <2.0\""),
                    );
                }
            }
        }
    }
}

pub fn is_connector_id(s: &str) -> bool {
    let seg = |p: &str| {
        matches_pattern(
            p,
            |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
            64,
        )
    };
    matches!(s.split_once('/'), Some((a, b)) if seg(a) && seg(b))
}

/// `env:NAME` or an absolute http(s) URL.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    if let Some(name) = endpoint.strip_prefix("env:") {
        return if is_identifier(name) {
            Ok(())
        } else {
            Err(format!(
                "`{endpoint}` does not name an environment variable"
            ))
        };
    }
    let rest = endpoint
        .strip_prefix("https://")
        .or_else(|| endpoint.strip_prefix("http://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace) => {
            Ok(())
        }
        _ => Err(format!("endpoint `{endpoint}` is not an http(s) URL")),
    }
}

fn describe_type(ty: FieldType, items: Option<&ItemType>) -> String {
    match (ty, items) {
        (FieldType::Array, Some(it)) => {
            format!("array of {}", describe_type(it.ty, it.items.as_deref()))
        }
        (FieldType::Messages, _) => "a list of {role, content} messages".into(),
        (FieldType::Integer, None) => "an integer".into(),
        (FieldType::Array, None) => "an array".into(),
        (FieldType::Object, None) => "an object".into(),
        (t, _) => format!("a {}", t.as_str()),
    }
}

/// The cycles (strongly connected sets) among nodes that cannot reach an end
/// and have no way out of the set; each in walk order from its first node.
fn trapped_cycles<'a>(
    trapped: &BTreeSet<&'a str>,
    succ: &BTreeMap<&'a str, Vec<&'a str>>,
) -> Vec<Vec<&'a str>> {
    let mut done: HashSet<&str> = HashSet::new();
    let mut cycles = Vec::new();
    for &start in trapped {
        if done.contains(start) {
            continue;
        }
        // Nodes reachable from `start` within the trapped set.
        let mut reach = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            if reach.insert(id) {
                for s in succ.get(id).into_iter().flatten() {
                    if trapped.contains(s) {
                        stack.push(s);
                    }
                }
            }
        }
        // `start` lies on a cycle when it can reach itself again.
        let on_cycle = succ
            .get(start)
            .into_iter()
            .flatten()
            .any(|s| reach.contains(s) && can_reach(s, start, trapped, succ));
        if !on_cycle {
            continue;
        }
        // Walk the cycle: follow successors that lead back to `start`.
        let mut walk = vec![start];
        let mut cur = start;
        loop {
            let next = succ.get(cur).into_iter().flatten().copied().find(|s| {
                trapped.contains(s) && !walk.contains(s) && can_reach(s, start, trapped, succ)
            });
            match next {
                Some(n) => {
                    walk.push(n);
                    cur = n;
                }
                None => break,
            }
        }
        done.extend(
            reach
                .iter()
                .copied()
                .filter(|id| can_reach(id, start, trapped, succ)),
        );
        cycles.push(walk);
    }
    cycles
}

fn can_reach(
    from: &str,
    to: &str,
    within: &BTreeSet<&str>,
    succ: &BTreeMap<&str, Vec<&str>>,
) -> bool {
    let mut seen = HashSet::new();
    let mut stack = vec![from];
    while let Some(id) = stack.pop() {
        if id == to {
            return true;
        }
        if seen.insert(id) {
            for s in succ.get(id).into_iter().flatten() {
                if within.contains(s) {
                    stack.push(s);
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::SourceFile;

    /// A document whose node `write` writes to `out`, declared as `field`.
    fn check(field: &str, node: &str) -> Result<(), Vec<String>> {
        let text = format!(
            r#"{{"irVersion": "2", "id": "t", "logical": {{
                "state": [{{"name": "q", "type": "string", "required": true}}, {field}],
                "nodes": [{{"id": "start", "kind": "start"}}, {node}, {{"id": "end", "kind": "end"}}],
                "edges": [{{"from": "start", "to": "write"}}, {{"from": "write", "to": "end"}}],
                "settings": {{"model": {{"provider": "openai", "name": "m"}}}}}}}}"#
        );
        SourceFile::new("t.graph.json", text)
            .parse()
            .map(|_| ())
            .map_err(|d| d.into_iter().map(|d| d.message).collect())
    }

    const TEMPLATE: &str =
        r#"{"id": "write", "kind": "response_template", "template": "{{q}}", "outputKey": "out"}"#;
    const LLM: &str =
        r#"{"id": "write", "kind": "llm", "prompt": {"user": "{{q}}"}, "outputKey": "out"}"#;

    #[test]
    fn text_goes_to_strings_messages_and_append_arrays_of_strings() {
        for field in [
            r#"{"name": "out", "type": "string"}"#,
            r#"{"name": "out", "type": "messages", "reducer": "append"}"#,
            r#"{"name": "out", "type": "messages"}"#,
            r#"{"name": "out", "type": "array", "items": {"type": "string"}, "reducer": "append"}"#,
            r#"{"name": "out", "type": "array", "reducer": "append"}"#,
        ] {
            for node in [TEMPLATE, LLM] {
                assert_eq!(check(field, node), Ok(()), "{field} {node}");
            }
        }
    }

    #[test]
    fn text_into_other_fields_is_refused_naming_the_type() {
        for (field, named) in [
            (
                r#"{"name": "out", "type": "array", "items": {"type": "integer"}, "reducer": "append"}"#,
                "an `append` array of `integer`",
            ),
            (
                r#"{"name": "out", "type": "array", "items": {"type": "string"}}"#,
                "an `array` of `string`",
            ),
            (
                r#"{"name": "out", "type": "integer"}"#,
                "an `integer` field",
            ),
        ] {
            for node in [TEMPLATE, LLM] {
                let errors = check(field, node).expect_err(field);
                assert!(
                    errors.iter().any(|e| e.contains(named)),
                    "{errors:?} should name {named}"
                );
            }
        }
    }
}
