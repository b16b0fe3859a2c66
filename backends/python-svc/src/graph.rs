//! `app/graphs/<id>.py`: the graph compiled to a run loop over its topology.

use svc_backend_sdk::ir::{Branch, Document, NodeKind, Op, ToolKind};

use crate::nodes::{import_block, Modules};
use crate::py::{literal, quote, Expr};

fn condition(b: &Branch) -> Option<(String, &'static str)> {
    let c = b.when.as_ref()?;
    let v = format!("state[{}]", quote(&c.field));
    let value = || {
        c.value
            .as_ref()
            .map(|v| literal(v).flat())
            .unwrap_or_else(|| "None".into())
    };
    let (expr, f) = match c.op {
        Op::Eq => (format!("cond_eq({v}, {})", value()), "cond_eq"),
        Op::Ne => (format!("cond_ne({v}, {})", value()), "cond_ne"),
        Op::Gt => (format!("cond_gt({v}, {})", value()), "cond_gt"),
        Op::Ge => (format!("cond_ge({v}, {})", value()), "cond_ge"),
        Op::Lt => (format!("cond_lt({v}, {})", value()), "cond_lt"),
        Op::Le => (format!("cond_le({v}, {})", value()), "cond_le"),
        Op::In => (format!("cond_in({v}, {})", value()), "cond_in"),
        Op::Exists => (format!("cond_exists({v})"), "cond_exists"),
        Op::Truthy => (format!("cond_truthy({v})"), "cond_truthy"),
    };
    Some((expr, f))
}

/// Whether a node's function takes the run's remaining time (upstream calls).
pub fn takes_deadline(doc: &Document, kind: &NodeKind) -> bool {
    match kind {
        NodeKind::Llm(_) => true,
        NodeKind::Tool { tool_id, .. } => matches!(
            doc.tool(tool_id).map(|t| &t.kind),
            Some(ToolKind::Http { .. })
        ),
        _ => false,
    }
}

pub fn graph_py(doc: &Document) -> String {
    let modules = Modules::of(doc);
    let s = &doc.logical.settings;
    let next = doc.successors();
    let mut body: Vec<String> = Vec::new();
    let mut conds: Vec<&'static str> = Vec::new();
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
    let mut names = Vec::new();
    let mut first = true;
    for n in &doc.logical.nodes {
        if matches!(n.kind, NodeKind::Start | NodeKind::End) {
            continue;
        }
        names.push(Expr::atom(quote(&n.id)));
        let kw = if first { "if" } else { "elif" };
        first = false;
        body.push(format!("            {kw} current == {}:", quote(&n.id)));
        match &n.kind {
            NodeKind::Router { branches } => {
                for (i, b) in branches.iter().enumerate() {
                    match condition(b) {
                        Some((c, f)) => {
                            conds.push(f);
                            let kw = if i == 0 { "if" } else { "elif" };
                            body.push(format!("                {kw} {c}:"));
                        }
                        None if i == 0 => {
                            // Only the default branch: no condition to test.
                            body.push(format!("                current = {}", quote(&b.to)));
                            continue;
                        }
                        None => body.push("                else:".into()),
                    }
                    body.push(format!("                    current = {}", quote(&b.to)));
                }
            }
            kind => {
                let func = format!("nodes.{}.node", modules.node(&n.id));
                let native = matches!(kind, NodeKind::Function { .. } | NodeKind::Connector { .. });
                let call = if takes_deadline(doc, kind) {
                    format!("lambda s: {func}(s, self.remaining())")
                } else {
                    func
                };
                let line = format!(
                    "                self.step(state, {}, {call}{})",
                    quote(&n.id),
                    if native { "" } else { ", native=False" }
                );
                if line.chars().count() <= crate::py::LINE {
                    body.push(line);
                } else {
                    body.push("                self.step(".into());
                    body.push("                    state,".into());
                    body.push(format!("                    {},", quote(&n.id)));
                    body.push(format!("                    {call},"));
                    if !native {
                        body.push("                    native=False,".into());
                    }
                    body.push("                )".into());
                }
                body.push(format!(
                    "                current = {}",
                    quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                ));
            }
        }
    }
    conds.sort_unstable();
    conds.dedup();
    let mut imports: Vec<&str> = vec!["CompiledGraph"];
    imports.extend(conds.iter().copied());

    let mut out = format!(
        "\"\"\"The graph `{id}`, compiled by svc: a run loop over its topology.\"\"\"\n\n",
        id = doc.id
    );
    let runtime_line = format!("from svc.runtime import {}", imports.join(", "));
    let runtime_line = if runtime_line.len() <= crate::py::LINE {
        runtime_line
    } else {
        format!(
            "from svc.runtime import (\n{})",
            imports
                .iter()
                .map(|i| format!("    {i},\n"))
                .collect::<String>()
        )
    };
    let mut lines = vec![
        "from app.state import SCHEMA".to_string(),
        "from svc import graph".to_string(),
        runtime_line,
    ];
    if !names.is_empty() {
        lines.push("from app import nodes".to_string());
    }
    out.push_str(&import_block(&lines));
    out.push('\n');
    out.push_str("\n\nclass Graph(CompiledGraph):\n");
    out.push_str(&format!(
        "    \"\"\"One step per node (routers included), at most {} per run.\"\"\"\n\n",
        s.max_steps
    ));
    out.push_str(&format!("    name = {}\n", quote(&doc.id)));
    out.push_str("    schema = SCHEMA\n");
    out.push_str(&format!("    max_steps = {}\n", s.max_steps));
    out.push_str(&format!(
        "    request_timeout_ms = {}\n",
        s.request_timeout_ms
    ));
    if !doc
        .logical
        .nodes
        .iter()
        .any(|n| takes_deadline(doc, &n.kind))
    {
        // No node waits on the network: runs stay on the event loop.
        out.push_str("    calls_upstream = False\n");
    }
    for line in Expr::Tuple(names).render(4, "node_names = ", "") {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("\n    def run(self, state: dict) -> dict:\n");
    out.push_str(&format!("        current = {}\n", quote(start)));
    out.push_str("        steps = 0\n");
    let cond = if ends.len() == 1 {
        format!("current != {}", ends[0])
    } else {
        format!("current not in ({})", ends.join(", "))
    };
    out.push_str(&format!("        while {cond}:\n"));
    out.push_str("            self.check(steps)\n");
    out.push_str("            steps += 1\n");
    for line in &body {
        out.push_str(line);
        out.push('\n');
    }
    if first {
        out.push_str("            raise RuntimeError(f\"unknown node {current!r}\")\n");
    } else {
        out.push_str("            else:\n                raise RuntimeError(f\"unknown node {current!r}\")\n");
    }
    out.push_str("        return state\n");
    out.push_str(&format!(
        "\n\n@graph({}, entrypoint=True)\ndef entrypoint() -> Graph:\n    return Graph()\n",
        quote(&doc.id)
    ));
    out
}
