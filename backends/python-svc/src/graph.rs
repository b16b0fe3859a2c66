//! `app/graphs/<id>.py` (a subgraph's child: `<scope>/graph.py`): the graph
//! compiled to a run loop over its topology.

use std::collections::HashMap;

use svc_backend_sdk::ir::{Branch, BranchRef, CheckpointerKind, Document, Node, NodeKind, Op};
use svc_backend_sdk::writer::CodeWriter;

use crate::nodes::{place, Call, Place};
use crate::py::{literal, module, module_file, quote, suite, top_level_gap, write_expr, Expr};
use crate::scope::Scope;

/// The test of a branch, `cond_eq(state["f"], 1)`; `None` for the default.
fn condition(w: &mut CodeWriter, b: &Branch) -> Option<String> {
    let c = b.when.as_ref()?;
    let v = format!("state[{}]", quote(&c.field));
    let value = c
        .value
        .as_ref()
        .map(|v| literal(v).flat())
        .unwrap_or_else(|| "None".into());
    let (f, args) = match c.op {
        Op::Eq => ("cond_eq", format!("{v}, {value}")),
        Op::Ne => ("cond_ne", format!("{v}, {value}")),
        Op::Gt => ("cond_gt", format!("{v}, {value}")),
        Op::Ge => ("cond_ge", format!("{v}, {value}")),
        Op::Lt => ("cond_lt", format!("{v}, {value}")),
        Op::Le => ("cond_le", format!("{v}, {value}")),
        Op::In => ("cond_in", format!("{v}, {value}")),
        Op::Exists => ("cond_exists", v),
        Op::Truthy => ("cond_truthy", v),
    };
    Some(format!("{}({args})", w.name("svc.runtime", f)))
}

pub fn graph_py(doc: &Document, scope: &Scope) -> String {
    let s = &doc.logical.settings;
    let next = doc.successors();
    let mut w = CodeWriter::python();
    let ends: Vec<String> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::End))
        .map(|n| quote(&n.id))
        .collect();
    let start = doc
        .start_id()
        .and_then(|s| next.get(s).copied())
        .unwrap_or_default();
    let steps: Vec<_> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| !matches!(n.kind, NodeKind::Start | NodeKind::End))
        .collect();

    let owners = doc.branch_owners();
    let base = w.name("svc.runtime", "CompiledGraph");
    suite(&mut w, format!("class Graph({base}):"), |w| {
        w.line(format!(
            "\"\"\"One step per node (routers included), at most {} per run.\"\"\"",
            s.max_steps
        ));
        w.blank();
        w.line(format!("name = {}", quote(&doc.id)));
        let schema = w.name(&format!("{}.state", scope.package), "SCHEMA");
        w.line(format!("schema = {schema}"));
        w.line(format!("max_steps = {}", s.max_steps));
        if s.checkpointer.kind != CheckpointerKind::None {
            // Paused threads are kept in the process (svc.threads) or in the
            // database the variable names (svc.threads.checkpoints).
            w.line(format!(
                "checkpointer = {}",
                quote(s.checkpointer.kind.as_str())
            ));
            if let Some(env) = s.checkpointer.env() {
                w.line(format!("checkpointer_env = {}", quote(env)));
            }
        }
        w.line(format!("request_timeout_ms = {}", s.request_timeout_ms));
        if !s.budget.is_default() {
            // settings.budget (a child graph has none: its calls count
            // against its parent's run).
            let limit = |n: Option<u64>| n.map_or("None".to_string(), |n| n.to_string());
            let budget = w.name("svc.runtime", "Budget");
            w.line(format!(
                "budget = {budget}(max_tokens={}, max_model_calls={})",
                limit(s.budget.max_tokens),
                limit(s.budget.max_model_calls)
            ));
        }
        let upstream = doc.logical.nodes.iter().any(|n| {
            matches!(
                place(doc, &n.kind),
                Place::Module(Call { upstream: true, .. })
            )
        });
        if !upstream {
            // No node waits on the network: runs stay on the event loop.
            w.line("calls_upstream = False");
        }
        // What run events say each node is (svc.server.events); its keys
        // are the graph's node_names, in order (svc.runtime).
        let kinds = Expr::Dict(
            steps
                .iter()
                .map(|n| (quote(&scope.name(&n.id)), Expr::atom(quote(n.kind.name()))))
                .collect(),
        );
        let class_var = w.name("typing", "ClassVar");
        write_expr(
            w,
            1,
            &format!("node_kinds: {class_var}[dict[str, str]] = "),
            &kinds,
            "",
        );
        // Nodes that run their module and go on to one fixed node are rows
        // of a table, which the loop reads in one lookup; the rest (routers,
        // nodes that call upstream within the run's time) are its branches.
        let (table, cases): (Vec<&Node>, Vec<&Node>) = steps.iter().partition(|n| {
            matches!(
                place(doc, &n.kind),
                Place::Module(Call {
                    deadline: false,
                    ..
                })
            )
        });
        if !table.is_empty() {
            let callable = w.name("collections.abc", "Callable");
            let any = w.name("typing", "Any");
            let nodes = w.name(&scope.package, "nodes");
            let rows = Expr::Dict(
                table
                    .iter()
                    .map(|n| {
                        let native = match place(doc, &n.kind) {
                            Place::Module(call) => call.native,
                            _ => true,
                        };
                        let after = next.get(n.id.as_str()).copied().unwrap_or_default();
                        let row = Expr::Tuple(vec![
                            Expr::atom(format!("{nodes}.{}.node", module(&n.id))),
                            Expr::atom(if native { "True" } else { "False" }),
                            Expr::atom(quote(after)),
                        ]);
                        (quote(&n.id), row)
                    })
                    .collect(),
            );
            w.line("# Each node that runs its module and goes on to one node: the module's");
            w.line("# function, whether it gets its own copy of the state, and the next node.");
            write_expr(
                w,
                1,
                &format!(
                    "moves: {class_var}[dict[str, tuple[{callable}[[dict], {any}], bool, str]]] = "
                ),
                &rows,
                "",
            );
        }
        w.blank();
        // A graph that pauses (hitl) is resumed at the paused node.
        let pauses = doc
            .logical
            .nodes
            .iter()
            .any(|n| matches!(n.kind, NodeKind::Hitl(_)));
        let header = if pauses {
            format!(
                "def run(self, state: dict, current: str = {}) -> dict:",
                quote(start)
            )
        } else {
            "def run(self, state: dict) -> dict:".to_string()
        };
        suite(w, header, |w| {
            if !pauses {
                w.line(format!("current = {}", quote(start)));
            }
            let cond = if ends.len() == 1 {
                format!("current != {}", ends[0])
            } else {
                format!("current not in ({})", ends.join(", "))
            };
            let own: Vec<&Node> = cases
                .iter()
                .copied()
                .filter(|n| !owners.contains_key(n.id.as_str()))
                .collect();
            let counter = if owners.is_empty() {
                w.line("steps = 0");
                None
            } else {
                // Branches run at once and count their steps together.
                w.line("steps = self.steps()");
                Some("steps.take()")
            };
            loop_body(
                doc,
                scope,
                &next,
                w,
                &cond,
                counter,
                !table.is_empty(),
                &own,
            );
            w.line("return state");
        });
        for (b, join) in doc.branch_loops() {
            w.blank();
            let steps = w.name("svc.runtime", "Steps");
            suite(
                w,
                format!(
                    "def {}(self, state: dict, steps: {steps}) -> None:",
                    branch_method(scope, &b)
                ),
                |w| {
                    w.line(format!(
                        "\"\"\"Branch `{}` of the parallel node `{}`, until its join.\"\"\"",
                        scope.name(b.first),
                        scope.name(b.parallel)
                    ));
                    w.line(format!("current = {}", quote(b.first)));
                    let own: Vec<&Node> = cases
                        .iter()
                        .copied()
                        .filter(|n| owners.get(n.id.as_str()) == Some(&b))
                        .collect();
                    let cond = format!("current != {}", quote(join));
                    loop_body(
                        doc,
                        scope,
                        &next,
                        w,
                        &cond,
                        Some("steps.take()"),
                        !table.is_empty(),
                        &own,
                    );
                },
            );
        }
    });
    if !scope.is_root() {
        // A child graph runs inside its subgraph node, never on its own.
        return module_file(
            &format!(
                "The graph `{}`, a subgraph compiled by svc: a run loop over its topology.",
                doc.id
            ),
            w,
        );
    }
    top_level_gap(&mut w);
    let decorator = w.name("svc", "graph");
    w.line(format!("@{decorator}({}, entrypoint=True)", quote(&doc.id)));
    suite(&mut w, "def entrypoint() -> Graph:", |w| {
        w.line("return Graph()");
    });
    module_file(
        &format!(
            "The graph `{}`, compiled by svc: a run loop over its topology.",
            doc.id
        ),
        w,
    )
}

/// The method that runs a branch: registered name of its parallel node
/// and its index.
fn branch_method(scope: &Scope, b: &BranchRef) -> String {
    format!("_branch_{}_{}", scope.name(b.parallel), b.index)
}

/// `while <cond>:` over the moves table (when the graph has one) and the
/// loop's own `cases`; `counter` counts a step with a shared `Steps` (a
/// graph with parallel nodes), else the loop counts in `steps`.
#[allow(clippy::too_many_arguments)]
fn loop_body(
    doc: &Document,
    scope: &Scope,
    next: &HashMap<&str, &str>,
    w: &mut CodeWriter,
    cond: &str,
    counter: Option<&str>,
    table: bool,
    cases: &[&Node],
) {
    suite(w, format!("while {cond}:"), |w| {
        match counter {
            Some(take) => {
                w.line(take);
            }
            None => {
                w.line("self.check(steps)");
                w.line("steps += 1");
            }
        }
        if table {
            w.line("move = self.moves.get(current)");
            suite(w, "if move is not None:", |w| {
                w.line("node, native, after = move");
                // A child's nodes are registered under its prefix.
                let name = if scope.prefix.is_empty() {
                    "current".to_string()
                } else {
                    format!("{} + current", quote(&scope.prefix))
                };
                w.line(format!("self.step(state, {name}, node, native)"));
                w.line("current = after");
            });
        }
        for (i, n) in cases.iter().enumerate() {
            let kw = if i == 0 && !table { "if" } else { "elif" };
            suite(w, format!("{kw} current == {}:", quote(&n.id)), |w| {
                step(doc, scope, next, w, n);
            });
        }
        let unknown = "raise RuntimeError(f\"unknown node {current!r}\")";
        if cases.is_empty() && !table {
            w.line(unknown);
        } else {
            suite(w, "else:", |w| {
                w.line(unknown);
            });
        }
    });
}

/// The body of the run loop's branch for node `n` (at level 4): a router
/// reports itself and picks the next node; any other node runs one step,
/// then moves on.
fn step(doc: &Document, scope: &Scope, next: &HashMap<&str, &str>, w: &mut CodeWriter, n: &Node) {
    match place(doc, &n.kind) {
        Place::Router(branches) => {
            // Reported as a step of its own to an observed run.
            w.line(format!("self.routed({})", quote(&scope.name(&n.id))));
            for (i, b) in branches.iter().enumerate() {
                let target = format!("current = {}", quote(&b.to));
                match condition(w, b) {
                    Some(c) => {
                        let kw = if i == 0 { "if" } else { "elif" };
                        suite(w, format!("{kw} {c}:"), |w| {
                            w.line(&target);
                        });
                    }
                    // Only the default branch: no condition to test.
                    None if i == 0 => {
                        w.line(&target);
                    }
                    None => suite(w, "else:", |w| {
                        w.line(&target);
                    }),
                }
            }
        }
        Place::Module(call) => {
            let func = format!("{}.{}.node", w.name(&scope.package, "nodes"), module(&n.id));
            let func = if call.deadline {
                format!("lambda s: {func}(s, self.remaining())")
            } else {
                func
            };
            let mut args = vec![
                Expr::atom("state"),
                Expr::atom(quote(&scope.name(&n.id))),
                Expr::atom(func),
            ];
            if !call.native {
                args.push(Expr::kw("native", Expr::atom("False")));
            }
            write_expr(w, 4, "", &Expr::call("self.step", args), "");
            w.line(format!(
                "current = {}",
                quote(next.get(n.id.as_str()).copied().unwrap_or_default())
            ));
        }
        Place::Parallel(p) => {
            let branches: Vec<Expr> = p
                .branch_refs(&n.id)
                .map(|b| {
                    Expr::Tuple(vec![
                        Expr::atom(quote(&scope.name(b.first))),
                        Expr::atom(format!("self.{}", branch_method(scope, &b))),
                    ])
                })
                .collect();
            let args = vec![
                Expr::atom("state"),
                Expr::atom(quote(&scope.name(&n.id))),
                Expr::atom("steps"),
                Expr::List(branches),
                Expr::kw("max_concurrency", Expr::atom(p.max_concurrency.to_string())),
            ];
            write_expr(w, 4, "", &Expr::call("self.parallel", args), "");
            w.line(format!("current = {}", quote(&p.join)));
        }
        Place::Join => {
            w.line(format!("self.joined({})", quote(&scope.name(&n.id))));
            w.line(format!(
                "current = {}",
                quote(next.get(n.id.as_str()).copied().unwrap_or_default())
            ));
        }
        // Not steps: the loop starts after the one and stops at the other.
        Place::Start | Place::End => {}
    }
}
