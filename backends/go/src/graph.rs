//! `internal/graph/graph.go`: the state schema and a run loop specialised to
//! the graph's topology, so a request pays for a `switch`, not a general
//! executor.

use svc_backend_sdk::ir::{
    Branch, Condition, Document, FieldType, ItemType, NodeKind, Op, Reducer,
};
use svc_backend_sdk::writer::CodeWriter;

use crate::golang::{literal, quote};
use crate::nodes::{func_name, place, Place};
use svc_backend_sdk::ir::RouterNode;

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

fn item(it: &ItemType) -> String {
    match &it.items {
        Some(inner) => format!(
            "&Item{{Type: {}, Items: {}}}",
            type_const(it.ty),
            item(inner)
        ),
        None => format!("&Item{{Type: {}}}", type_const(it.ty)),
    }
}

/// The Go expression of one condition on the state `st`.
pub fn condition(c: &Condition) -> String {
    let v = format!("st[{}]", quote(&c.field));
    let value = c
        .value
        .as_ref()
        .map(literal)
        .unwrap_or_else(|| "nil".into());
    match c.op {
        Op::Eq => format!("condEq({v}, {value})"),
        Op::Ne => format!("condNe({v}, {value})"),
        Op::Gt => format!("condGt({v}, {value})"),
        Op::Ge => format!("condGe({v}, {value})"),
        Op::Lt => format!("condLt({v}, {value})"),
        Op::Le => format!("condLe({v}, {value})"),
        Op::In => match &c.value {
            Some(serde_json::Value::Array(items)) => format!(
                "condIn({v}, []any{{{}}})",
                items.iter().map(literal).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("condIn({v}, nil)"),
        },
        Op::Exists => format!("condExists({v})"),
        Op::Truthy => format!("condTruthy({v})"),
    }
}

fn router(w: &mut CodeWriter, branches: &[Branch]) {
    w.line("switch {");
    for b in branches {
        match &b.when {
            Some(c) => w.line(format!("case {}:", condition(c))),
            None => w.line("default:"),
        };
        w.indent()
            .line(format!("current = {}", quote(&b.to)))
            .dedent();
    }
    w.line("}");
}

pub fn graph_go(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::go();
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
    w.block("var fields = []Field{", "}", |w| {
        for f in &doc.logical.state {
            let mut parts = vec![
                format!("Name: {}", quote(&f.name)),
                format!("Type: {}", type_const(f.ty)),
            ];
            if let Some(it) = &f.items {
                parts.push(format!("Items: {}", item(it)));
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
    w.blank();

    let next = doc.successors();
    let start_next = doc
        .start_id()
        .and_then(|s| next.get(s).copied())
        .unwrap_or_default();
    let ends: Vec<String> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::End))
        .map(|n| format!("current == {}", quote(&n.id)))
        .collect();

    let context = w.name("context", "Context");
    let errorf = w.name("fmt", "Errorf");
    let streaming = s.streaming;
    w.line("// run walks the graph from start; each node is one step.");
    w.block(
        format!("func run(ctx {context}, st State) (State, error) {{"),
        "}",
        |w| {
            w.line(format!("current := {}", quote(start_next)));
            w.block("for steps := 0; ; steps++ {", "}", |w| {
                w.block(format!("if {} {{", ends.join(" || ")), "}", |w| {
                    w.line("return st, nil");
                });
                w.block("if steps == MaxSteps {", "}", |w| {
                    w.line("return nil, stepLimitError()");
                });
                w.block("if err := ctx.Err(); err != nil {", "}", |w| {
                    w.line("return nil, err");
                });
                w.line("switch current {");
                for n in &doc.logical.nodes {
                    let native = match place(&n.kind) {
                        Place::Start | Place::End | Place::Refused => continue,
                        Place::Router => {
                            if let NodeKind::Router(RouterNode { branches }) = &n.kind {
                                w.line(format!("case {}:", quote(&n.id)));
                                w.indent();
                                if streaming {
                                    w.line(format!("routed(ctx, {})", quote(&n.id)));
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
                            "stepObserved(ctx, st, {}, {}, {}, {native})",
                            quote(&n.id),
                            quote(n.kind.name()),
                            func_name(&n.id),
                        )
                    } else {
                        format!(
                            "step(ctx, st, {}, {}, {native})",
                            quote(&n.id),
                            func_name(&n.id),
                        )
                    };
                    w.block(format!("if err := {call}; err != nil {{"), "}", |w| {
                        w.line("return nil, err");
                    });
                    w.line(format!(
                        "current = {}",
                        quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                    ));
                    w.dedent();
                }
                w.line("default:");
                w.indent()
                    .line(format!(
                        "return nil, {errorf}(\"unknown node %q\", current)"
                    ))
                    .dedent();
                w.line("}");
            });
        },
    );
    w.finish_file("package graph\n\n")
}
