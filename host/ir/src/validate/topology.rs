//! The graph's shape: edges, entry and ends, cycles that cannot end,
//! nodes that cannot be reached.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::diag::{did_you_mean, Diagnostic};
use crate::model::*;

use super::Validator;

impl<'a> Validator<'a> {
    /// Successors of a node: a router's branch targets, a parallel's
    /// branches and its join, otherwise its edges.
    pub(super) fn successors(&self) -> BTreeMap<&'a str, Vec<&'a str>> {
        self.doc.all_successors()
    }

    pub(super) fn topology(&mut self) {
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
                        &DUPLICATE_EDGE,
                        format!("the edge {} → {} is declared twice", e.from, e.to),
                    )
                    .at(ptr.clone()),
                );
            }
            *out_count.entry(e.from.as_str()).or_default() += 1;
            if let Some(NodeKind::Start) = kinds.get(e.to.as_str()) {
                self.err(
                    Diagnostic::error(
                        &EDGE_COUNT,
                        format!("edge {} → {} enters `start`; nothing may", e.from, e.to),
                    )
                    .at(format!("{ptr}/to")),
                );
            }
            match kinds.get(e.from.as_str()) {
                Some(NodeKind::Router { .. }) => self.err(
                    Diagnostic::error(
                        &EDGE_COUNT,
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
                Some(NodeKind::Parallel(_)) => self.err(
                    Diagnostic::error(
                        &EDGE_COUNT,
                        format!(
                            "parallel `{}` has an edge; a parallel's targets are its branches, and its join's edge leads on",
                            e.from
                        ),
                    )
                    .at(ptr.clone())
                    .node(&e.from)
                    .hint("name the target in `branches`, or move the edge to the join"),
                ),
                Some(NodeKind::End) => self.err(
                    Diagnostic::error(
                        &EDGE_COUNT,
                        format!("end node `{}` has an outgoing edge", e.from),
                    )
                    .at(ptr.clone())
                    .node(&e.from),
                ),
                _ => {}
            }
        }
        for (i, n) in doc.logical.nodes.iter().enumerate() {
            if let NodeKind::Router(RouterNode { branches }) = &n.kind {
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
            if matches!(n.kind, NodeKind::End | NodeKind::Parallel(_)) {
                continue;
            }
            let count = out_count.get(n.id.as_str()).copied().unwrap_or(0);
            if count != 1 {
                broken = true;
                self.err(
                    Diagnostic::error(
                        &EDGE_COUNT,
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
        self.parallel_regions();
    }

    pub(super) fn unknown_node(&mut self, name: &str, ptr: String, ids: &BTreeSet<&str>) {
        let mut d = Diagnostic::error(
            &crate::codes::UNRESOLVED_REF,
            format!("node `{name}` does not exist"),
        )
        .at(ptr);
        if let Some(s) = did_you_mean(name, ids.iter().copied()) {
            d = d.hint(format!("did you mean `{s}`?"));
        }
        self.err(d);
    }

    pub(super) fn reachability(&mut self) {
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
                        &UNREACHABLE,
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
                    &NO_PATH_TO_END,
                    format!("the cycle {path} never reaches an `end` node"),
                )
                .at(Self::node_ptr(index[first]))
                .node(first)
                .hint("give one node of the cycle a way out: a router branch to a node that reaches `end`"),
            );
        }
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

crate::diagnostic_codes! {
    /// The same edge (from → to) is declared twice.
    ///
    /// `logical.edges` is a set: a second edge with the same `from` and `to` adds nothing and usually hides a typo (an edge that was meant to go elsewhere). It also counts as a second outgoing edge of `from`, so `edge-count` is reported too.
    ///
    /// Remove the repeated edge, or point it where it was meant to go.
    ///
    /// # Example
    ///
    /// ```json
    /// "edges": [
    ///   { "from": "start", "to": "reply" },
    ///   { "from": "start", "to": "reply" },
    ///   { "from": "reply", "to": "end" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "edges": [
    ///   { "from": "start", "to": "reply" },
    ///   { "from": "reply", "to": "end" }
    /// ]
    /// ```
    pub DUPLICATE_EDGE = "duplicate-edge", group "topology";

    /// A node has other than one outgoing edge, a router has an edge, an end has one, or an edge enters start.
    ///
    /// The graph runs one node at a time, so every node except routers and `end` nodes has exactly one outgoing edge; routers choose their successor with `branches` and have no edges; `end` nodes have none; and nothing may lead back into `start`. Reported at the node for a wrong count, and at the edge for a router's edge, an end's edge or an edge into `start`.
    ///
    /// Give the node exactly one edge; to choose between targets, use a `router` with branches.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/two_outgoing_edges.graph.json`:
    ///
    /// ```json
    /// "edges": [
    ///   { "from": "start", "to": "reply" },
    ///   { "from": "reply", "to": "end" },
    ///   { "from": "reply", "to": "start" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "edges": [
    ///   { "from": "start", "to": "reply" },
    ///   { "from": "reply", "to": "end" }
    /// ]
    /// ```
    pub EDGE_COUNT = "edge-count", group "topology";

    /// A cycle of reachable nodes never reaches an end node.
    ///
    /// Once a run enters such a cycle it can only loop until `maxSteps` stops it with an error. The diagnostic names the cycle (`ping → pong → ping`) at its first node.
    ///
    /// Give one node of the cycle a way out: a router branch to a node that reaches `end`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/cycle_without_end.graph.json`:
    ///
    /// ```json
    /// "edges": [
    ///   { "from": "start", "to": "ping" },
    ///   { "from": "ping", "to": "pong" },
    ///   { "from": "pong", "to": "ping" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// Replace `pong`'s edge with a router that can leave the loop:
    ///
    /// ```json
    /// { "id": "again", "kind": "router", "branches": [
    ///   { "when": { "field": "done", "op": "truthy" }, "to": "end" },
    ///   { "to": "ping" }
    /// ] }
    /// ```
    pub NO_PATH_TO_END = "no-path-to-end", group "topology";

    /// A node cannot be reached from start.
    ///
    /// No edge or router branch leads to the node from `start`, so it would never run; usually an edge is missing or points elsewhere. (Checked only when every edge resolves and there is one start.)
    ///
    /// Add an edge or branch leading to it, or remove it.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/unreachable_node.graph.json`:
    ///
    /// ```json
    /// { "id": "orphan", "kind": "response_template", "template": "x", "outputKey": "answer" }
    /// ```
    /// with no edge into `orphan`.
    ///
    /// # Fix
    ///
    /// Remove `orphan`, or lead to it: `{ "from": "reply", "to": "orphan" }` and `{ "from": "orphan", "to": "end" }` in place of `reply`'s edge to `end`.
    pub UNREACHABLE = "unreachable", group "topology";
}
