//! `internal/graph/graph.go`: the state schema and a run loop specialised to
//! the graph's topology, so a request pays for a `switch`, not a general
//! executor.

use std::collections::HashMap;

use svc_backend_sdk::ir::{
    Branch, BranchRef, CheckpointerKind, Condition, Document, FieldType, ItemType, NodeKind, Op,
    Reducer,
};
use svc_backend_sdk::writer::CodeWriter;

use crate::golang::{literal, quote, rt, RUNTIME_POSTGRES, RUNTIME_SQLITE};
use crate::nodes::{func_name, place, Place};
use svc_backend_sdk::ir::RouterNode;
use svc_backend_sdk::subgraphs::GraphScope;

fn type_const(t: FieldType) -> &'static str {
    match t {
        FieldType::String => "TypeString",
        FieldType::Integer => "TypeInteger",
        FieldType::Number => "TypeNumber",
        FieldType::Boolean => "TypeBoolean",
        FieldType::Object => "TypeObject",
        FieldType::Array => "TypeArray",
        FieldType::Messages => "TypeMessages",
    }
}

fn item(w: &mut CodeWriter, it: &ItemType) -> String {
    let (item_type, ty) = (rt(w, "Item"), rt(w, type_const(it.ty)));
    match &it.items {
        Some(inner) => format!("&{item_type}{{Type: {ty}, Items: {}}}", item(w, inner)),
        None => format!("&{item_type}{{Type: {ty}}}"),
    }
}

/// The Go expression of one condition on the state `st`.
pub fn condition(w: &mut CodeWriter, c: &Condition) -> String {
    let v = format!("st[{}]", quote(&c.field));
    let value = c
        .value
        .as_ref()
        .map(literal)
        .unwrap_or_else(|| "nil".into());
    let name = match c.op {
        Op::Eq => "CondEq",
        Op::Ne => "CondNe",
        Op::Gt => "CondGt",
        Op::Ge => "CondGe",
        Op::Lt => "CondLt",
        Op::Le => "CondLe",
        Op::In => "CondIn",
        Op::Exists => "CondExists",
        Op::Truthy => "CondTruthy",
    };
    let cond = rt(w, name);
    match c.op {
        Op::Eq | Op::Ne | Op::Gt | Op::Ge | Op::Lt | Op::Le => format!("{cond}({v}, {value})"),
        Op::In => match &c.value {
            Some(serde_json::Value::Array(items)) => format!(
                "{cond}({v}, []any{{{}}})",
                items.iter().map(literal).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("{cond}({v}, nil)"),
        },
        Op::Exists | Op::Truthy => format!("{cond}({v})"),
    }
}

fn router(w: &mut CodeWriter, branches: &[Branch]) {
    w.line("switch {");
    for b in branches {
        match &b.when {
            Some(c) => {
                let c = condition(w, c);
                w.line(format!("case {c}:"))
            }
            None => w.line("default:"),
        };
        w.indent()
            .line(format!("current = {}", quote(&b.to)))
            .dedent();
    }
    w.line("}");
}

/// `var <name> = []Field{...}`: a graph's state schema.
fn fields_literal(w: &mut CodeWriter, name: &str, doc: &Document) {
    let field = rt(w, "Field");
    w.block(format!("var {name} = []{field}{{"), "}", |w| {
        for f in &doc.logical.state {
            let mut parts = vec![
                format!("Name: {}", quote(&f.name)),
                format!("Type: {}", rt(w, type_const(f.ty))),
            ];
            if let Some(it) = &f.items {
                parts.push(format!("Items: {}", item(w, it)));
            }
            if let Some(schema) = f.value_schema() {
                parts.push(format!("Schema: {}", literal(&schema)));
            }
            if f.reducer == Reducer::Append {
                parts.push("Append: true".into());
            }
            if f.required {
                parts.push("Required: true".into());
            }
            if let Some(d) = f.default.as_ref().filter(|d| !d.is_null()) {
                parts.push(format!("Default: func() any {{ return {} }}", literal(d)));
            }
            w.line(format!("{{{}}},", parts.join(", ")));
        }
    });
}

pub fn graph_go(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::go();
    let state = rt(&mut w, "State");
    w.line("// State is the runtime's state: what every node gets and returns (a")
        .line("// native body's `State`).")
        .line(format!("type State = {state}"))
        .blank();
    let bodies = svc_backend_sdk::subgraphs::all_graphs(doc)
        .iter()
        .any(|(d, _)| {
            d.bodies_by_platform
                .get("go")
                .is_some_and(|b| !b.is_empty())
        });
    if bodies {
        // What a native body may call besides State (docs/ir-reference.md).
        let (caller_type, caller, context) = (
            rt(&mut w, "A2ACaller"),
            rt(&mut w, "Caller"),
            w.name("context", "Context"),
        );
        w.line("// A2ACaller is who called the run over A2A (a native body's `Caller(ctx)`).")
            .line(format!("type A2ACaller = {caller_type}"))
            .blank()
            .line("// Caller is the A2A caller of the run in ctx; nil outside an A2A call.");
        w.block(
            format!("func Caller(ctx {context}) *A2ACaller {{"),
            "}",
            |w| {
                w.line(format!("return {caller}(ctx)"));
            },
        );
        w.blank();
    }
    w.line("// MaxSteps bounds the node executions of one run (settings.maxSteps).")
        .line(format!("const MaxSteps = {}", s.max_steps))
        .blank();
    let millisecond = w.name("time", "Millisecond");
    w.line("// RequestTimeout bounds one run (settings.requestTimeoutMs).")
        .line(format!(
            "const RequestTimeout = {} * {millisecond}",
            s.request_timeout_ms
        ))
        .blank();

    w.line("// fields is the state schema of the graph.");
    fields_literal(&mut w, "fields", doc);
    w.blank();
    if s.tracing.enabled {
        node_kinds(&mut w, doc);
    }
    // One line: gofmt aligns nothing in it.
    let mut compiled = vec![
        format!("ID: {}", quote(&doc.id)),
        "Fields: fields".to_string(),
        format!("Entry: {}", quote(start_node(doc))),
        "Run: run".to_string(),
        "MaxSteps: MaxSteps".to_string(),
        "RequestTimeout: RequestTimeout".to_string(),
    ];
    if s.tracing.enabled {
        compiled.push(format!("TraceNodes: {}", s.tracing.trace_nodes));
        compiled.push("NodeKind: nodeKind".to_string());
    }
    if !s.budget.is_default() {
        let mut limits = Vec::new();
        if let Some(n) = s.budget.max_tokens {
            limits.push(format!("MaxTokens: {n}"));
        }
        if let Some(n) = s.budget.max_model_calls {
            limits.push(format!("MaxModelCalls: {n}"));
        }
        let budget = rt(&mut w, "Budget");
        compiled.push(format!("Budget: {budget}{{{}}}", limits.join(", ")));
    }
    w.line("// The graph this program runs (the runtime's compiled.go).");
    w.block("func init() {", "}", |w| {
        let (register, compiled_type) = (rt(w, "Register"), rt(w, "Compiled"));
        w.line(format!(
            "{register}({compiled_type}{{{}}})",
            compiled.join(", ")
        ));
        if s.checkpointer.kind != CheckpointerKind::None {
            let register = rt(w, "RegisterThreads");
            w.line(format!("{register}(openThreads)"));
        }
    });
    w.blank();
    open_threads(&mut w, doc);
    // A resumed run goes on from its paused node.
    w.line("// run walks the graph from the node current; each node is one step.");
    let root = Loop {
        func: "run".into(),
        step: rt(&mut w, "Step"),
        limit: "steps == MaxSteps".into(),
        max: "MaxSteps".into(),
        schema: None,
        over_limit: format!("{}()", rt(&mut w, "StepLimitError")),
        // A published A2A agent answers with the field the run wrote last,
        // which the node events tell.
        streaming: s.streaming || s.a2a.enabled,
        from_argument: true,
        traced: s.tracing.enabled,
    };
    run_loop(&mut w, doc, &GraphScope::root(), &root);
    w.finish_file("package graph\n\n")
}

/// `internal/graph/subgraph_<owner>.go`: the child graph of a subgraph
/// node, with its own schema and step limit. Its nodes send no events and
/// its model calls do not stream, as on python-svc.
pub fn child_go(doc: &Document, scope: &GraphScope, traced: bool) -> String {
    let owner = scope.owner.as_deref().unwrap_or_default();
    let max = doc.logical.settings.max_steps;
    let mut w = CodeWriter::go();
    w.line(format!(
        "// The graph {}, the child of the subgraph node {} (its own settings.maxSteps, {max}).",
        quote(&doc.id),
        quote(owner)
    ))
    .blank();
    w.line(format!(
        "// fields_{owner} is the state schema of the graph {}.",
        quote(&doc.id)
    ));
    fields_literal(&mut w, &format!("fields_{owner}"), doc);
    w.blank();
    let new_schema = rt(&mut w, "NewSchema");
    w.line(format!("var schema_{owner} = {new_schema}(fields_{owner})"));
    w.blank();
    w.line(format!(
        "// run_{owner} walks the graph {} from start; each node is one step, at most {max}.",
        quote(&doc.id)
    ));
    let child = Loop {
        func: format!("run_{owner}"),
        step: format!("schema_{owner}.Step"),
        limit: format!("steps == {max}"),
        max: max.to_string(),
        schema: Some(format!("schema_{owner}")),
        over_limit: format!("{}({max})", rt(&mut w, "StepLimit")),
        streaming: false,
        from_argument: false,
        traced,
    };
    run_loop(&mut w, doc, scope, &child);
    w.finish_file("package graph\n\n")
}

/// `nodeKind`, the kind of every graph's node by registered name: the name
/// of the nodes' spans (the runtime's otel package). A switch rather than a map literal:
/// gofmt aligns nothing in it.
fn node_kinds(w: &mut CodeWriter, doc: &Document) {
    let mut by_kind: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for (d, scope) in svc_backend_sdk::subgraphs::all_graphs(doc) {
        for n in &d.logical.nodes {
            if !matches!(n.kind, NodeKind::Start | NodeKind::End) {
                by_kind
                    .entry(n.kind.name())
                    .or_default()
                    .push(quote(&scope.name(&n.id)));
            }
        }
    }
    w.line("// nodeKind is the kind of a node, by registered name: the name of its spans.");
    w.block("func nodeKind(node string) string {", "}", |w| {
        w.line("switch node {");
        for (kind, nodes) in &by_kind {
            w.line(format!("case {}:", nodes.join(", ")));
            w.indent().line(format!("return {}", quote(kind))).dedent();
        }
        w.line("}");
        w.line("return \"node\"");
    });
    w.blank();
}

/// What differs between the run loop of the document's graph and a child's.
struct Loop {
    func: String,
    step: String,
    limit: String,
    /// The step limit as an expression (a `Steps` counter's).
    max: String,
    /// The schema whose methods a child graph's steps call (None: the
    /// runtime's functions, for the document's own graph).
    schema: Option<String>,
    over_limit: String,
    /// Whether each step reports its events (the document's own graph, with
    /// settings.streaming).
    streaming: bool,
    /// Whether the caller names the node to start from (the document's own
    /// graph, which a resume enters at its paused node); else `start`'s.
    from_argument: bool,
    /// Whether routers record their span (settings.tracing.enabled of the
    /// document; nodes record theirs in step).
    traced: bool,
}

impl Loop {
    /// A runtime function of steps, or the child schema's method.
    fn call(&self, w: &mut CodeWriter, name: &str) -> String {
        match &self.schema {
            Some(schema) => format!("{schema}.{name}"),
            None => rt(w, name),
        }
    }
}

/// The node after `start`.
fn start_node(doc: &Document) -> &str {
    let next = doc.successors();
    doc.start_id()
        .and_then(|s| next.get(s).copied())
        .unwrap_or_default()
}

/// `openThreads`, the store of the graph's threads (registered with
/// `RegisterThreads`), for a graph with a checkpointer (runtime
/// graph/threads*.go, and a database's own package, sqlite/ or
/// postgres/); nothing otherwise.
fn open_threads(w: &mut CodeWriter, doc: &Document) {
    let c = &doc.logical.settings.checkpointer;
    let (what, call) = match (c.kind, c.env()) {
        (CheckpointerKind::None, _) => return,
        (CheckpointerKind::Memory, _) | (_, None) => (
            "memory, in this process".to_string(),
            format!(
                "return {}({}{{Log: log}}), nil",
                rt(w, "NewMemoryThreads"),
                rt(w, "ThreadOptions")
            ),
        ),
        (CheckpointerKind::Sqlite, Some(var)) => (
            format!("sqlite, the file {var} names"),
            format!(
                "return {}(ctx, {}, {}, {}{{Log: log}})",
                w.name(RUNTIME_SQLITE, "Open"),
                quote(&doc.id),
                quote(var),
                rt(w, "ThreadOptions")
            ),
        ),
        (CheckpointerKind::Postgres, Some(var)) => (
            format!("postgres, the database {var} names"),
            format!(
                "return {}(ctx, {}, {}, {}{{Log: log}})",
                w.name(RUNTIME_POSTGRES, "Open"),
                quote(&doc.id),
                quote(var),
                rt(w, "ThreadOptions")
            ),
        ),
    };
    let context = w.name("context", "Context");
    let logger = w.name("log/slog", "Logger");
    let threads = rt(w, "Threads");
    w.line("// openThreads opens the store of the graph's threads");
    w.line(format!("// (settings.checkpointer: {what})."));
    w.block(
        format!("func openThreads(ctx {context}, log *{logger}) ({threads}, error) {{"),
        "}",
        |w| {
            w.line(call);
        },
    );
    w.blank();
}

/// The run loop over `doc`'s topology: `current` holds plain node ids, the
/// steps name each node by its registered name. The nodes inside a
/// parallel node's branches run in loops of their own (`branch_loop`),
/// written after this one.
fn run_loop(w: &mut CodeWriter, doc: &Document, scope: &GraphScope, l: &Loop) {
    let ends: Vec<String> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::End))
        .map(|n| format!("current == {}", quote(&n.id)))
        .collect();
    let owners = doc.branch_owners();
    let context = w.name("context", "Context");
    let from = if l.from_argument {
        ", current string"
    } else {
        ""
    };
    let fail = Exit {
        done: "return st, nil",
        fail: "return nil, err",
    };
    w.block(
        format!(
            "func {}(ctx {context}, st State{from}) (State, error) {{",
            l.func
        ),
        "}",
        |w| {
            if !l.from_argument {
                w.line(format!("current := {}", quote(start_node(doc))));
            }
            if owners.is_empty() {
                w.block("for steps := 0; ; steps++ {", "}", |w| {
                    w.block(format!("if {} {{", ends.join(" || ")), "}", |w| {
                        w.line(fail.done);
                    });
                    w.block(format!("if {} {{", l.limit), "}", |w| {
                        w.line(format!("return nil, {}", l.over_limit));
                    });
                    w.block("if err := ctx.Err(); err != nil {", "}", |w| {
                        w.line(fail.fail);
                    });
                    node_cases(w, doc, scope, l, &owners, None, &fail);
                });
            } else {
                // Branches run at once and count their steps together.
                let new_steps = rt(w, "NewSteps");
                w.line(format!("steps := {new_steps}({})", l.max));
                w.block("for {", "}", |w| {
                    w.block(format!("if {} {{", ends.join(" || ")), "}", |w| {
                        w.line(fail.done);
                    });
                    counted_step(w, &fail);
                    node_cases(w, doc, scope, l, &owners, None, &fail);
                });
            }
        },
    );
    for (b, join) in doc.branch_loops() {
        w.blank();
        branch_loop(w, doc, scope, l, &owners, b, join);
    }
}

/// How a loop's function returns: at its end, and with an error.
struct Exit {
    done: &'static str,
    fail: &'static str,
}

/// The step count and the deadline, checked before each node of a loop
/// that counts with a shared `Steps`.
fn counted_step(w: &mut CodeWriter, exit: &Exit) {
    w.block("if err := steps.Take(); err != nil {", "}", |w| {
        w.line(exit.fail);
    });
    w.block("if err := ctx.Err(); err != nil {", "}", |w| {
        w.line(exit.fail);
    });
}

/// The Go function of a branch: registered name of its parallel node and
/// its index.
fn branch_func(scope: &GraphScope, b: &BranchRef) -> String {
    format!("branch_{}_{}", scope.name(b.parallel), b.index)
}

/// A branch's loop: from its first node to its parallel's join, on the
/// branch's own copy of the state (runtime parallel.go).
fn branch_loop(
    w: &mut CodeWriter,
    doc: &Document,
    scope: &GraphScope,
    l: &Loop,
    owners: &HashMap<&str, BranchRef>,
    b: BranchRef,
    join: &str,
) {
    let (context, steps) = (w.name("context", "Context"), rt(w, "Steps"));
    let exit = Exit {
        done: "return nil",
        fail: "return err",
    };
    w.line(format!(
        "// {} runs branch {} of the parallel node {} until its join.",
        branch_func(scope, &b),
        quote(&scope.name(b.first)),
        quote(&scope.name(b.parallel))
    ));
    w.block(
        format!(
            "func {}(ctx {context}, st State, steps *{steps}) error {{",
            branch_func(scope, &b)
        ),
        "}",
        |w| {
            w.line(format!("current := {}", quote(b.first)));
            w.block("for {", "}", |w| {
                w.block(format!("if current == {} {{", quote(join)), "}", |w| {
                    w.line(exit.done);
                });
                counted_step(w, &exit);
                node_cases(w, doc, scope, l, owners, Some(b), &exit);
            });
        },
    );
}

/// The `switch current` of a loop over the nodes `owner` holds (None: the
/// graph's own, outside every branch).
fn node_cases(
    w: &mut CodeWriter,
    doc: &Document,
    scope: &GraphScope,
    l: &Loop,
    owners: &HashMap<&str, BranchRef>,
    owner: Option<BranchRef>,
    exit: &Exit,
) {
    let next = doc.successors();
    let errorf = w.name("fmt", "Errorf");
    let streaming = l.streaming;
    w.line("switch current {");
    for n in &doc.logical.nodes {
        if owners.get(n.id.as_str()).copied() != owner {
            continue;
        }
        let name = scope.name(&n.id);
        let after = quote(next.get(n.id.as_str()).copied().unwrap_or_default());
        match &n.kind {
            NodeKind::Parallel(p) => {
                w.line(format!("case {}:", quote(&n.id)));
                w.indent();
                let (parallel, branch) = (l.call(w, "Parallel"), rt(w, "Branch"));
                let branches: Vec<String> = p
                    .branch_refs(&n.id)
                    .map(|b| {
                        format!(
                            "{{Name: {}, Run: {}}}",
                            quote(&scope.name(b.first)),
                            branch_func(scope, &b)
                        )
                    })
                    .collect();
                let call = format!(
                    "{parallel}(ctx, st, {}, steps, {}, []{branch}{{{}}})",
                    quote(&name),
                    p.max_concurrency,
                    branches.join(", ")
                );
                w.block(format!("if err := {call}; err != nil {{"), "}", |w| {
                    w.line(exit.fail);
                });
                w.line(format!("current = {}", quote(&p.join)));
                w.dedent();
                continue;
            }
            NodeKind::Join => {
                w.line(format!("case {}:", quote(&n.id)));
                w.indent();
                let joined = rt(w, "Joined");
                w.line(format!("{joined}(ctx, {})", quote(&name)));
                w.line(format!("current = {after}"));
                w.dedent();
                continue;
            }
            _ => {}
        }
        let native = match place(&n.kind) {
            Place::Start | Place::End => continue,
            Place::Router => {
                if let NodeKind::Router(RouterNode { branches }) = &n.kind {
                    w.line(format!("case {}:", quote(&n.id)));
                    w.indent();
                    if streaming {
                        let routed = rt(w, "Routed");
                        w.line(format!("{routed}(ctx, {})", quote(&name)));
                    }
                    if l.traced {
                        let trace = rt(w, "TraceRouter");
                        w.line(format!("{trace}(ctx, {})", quote(&name)));
                    }
                    router(w, branches);
                    w.dedent();
                }
                continue;
            }
            Place::File { native } => native,
        };
        w.line(format!("case {}:", quote(&n.id)));
        w.indent();
        // Only native bodies may write to the map they get.
        // A streamed run sends each node's events.
        let call = if streaming {
            format!(
                "{}(ctx, st, {}, {}, {}, {native})",
                rt(w, "StepObserved"),
                quote(&name),
                quote(n.kind.name()),
                func_name(&name),
            )
        } else {
            format!(
                "{}(ctx, st, {}, {}, {native})",
                l.step,
                quote(&name),
                func_name(&name),
            )
        };
        w.block(format!("if err := {call}; err != nil {{"), "}", |w| {
            w.line(exit.fail);
        });
        w.line(format!("current = {after}"));
        w.dedent();
    }
    w.line("default:");
    let unknown = format!("{errorf}(\"unknown node %q\", current)");
    w.indent()
        .line(if exit.done == "return nil" {
            format!("return {unknown}")
        } else {
            format!("return nil, {unknown}")
        })
        .dedent();
    w.line("}");
}
