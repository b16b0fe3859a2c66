//! The regions of `parallel` nodes (docs/ir-reference.md, "Parallel
//! branches and map"): each branch's nodes are those reachable from its
//! first node before its `join`; a branch reaches its join, never `end`,
//! shares no node with another branch and is entered only from its
//! `parallel`; a `join` belongs to exactly one `parallel`; two branches
//! never write the same non-append field; a `hitl` inside a branch is
//! refused until the rules say how a branch pauses.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::Diagnostic;
use crate::model::*;

use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn parallel_regions(&mut self) {
        let doc = self.doc;
        let succ = self.successors();
        let mut pred: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (from, tos) in &succ {
            for to in tos {
                pred.entry(*to).or_default().insert(*from);
            }
        }
        let index: BTreeMap<&str, usize> = doc
            .logical
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let kind = |id: &str| index.get(id).map(|&i| &doc.logical.nodes[i].kind);
        // Which parallels name each join.
        let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for n in &doc.logical.nodes {
            if let NodeKind::Parallel(p) = &n.kind {
                owners
                    .entry(p.join.as_str())
                    .or_default()
                    .push(n.id.as_str());
            }
        }
        for n in &doc.logical.nodes {
            if !matches!(n.kind, NodeKind::Join) {
                continue;
            }
            let at = Self::node_ptr(index[n.id.as_str()]);
            match owners.get(n.id.as_str()).map(Vec::as_slice) {
                None | Some([]) => self.err(
                    Diagnostic::error(
                        &PARALLEL_REGION,
                        format!("join `{}` is named by no `parallel` node", n.id),
                    )
                    .at(at)
                    .node(&n.id)
                    .hint("name it as a parallel node's `join`, or remove it"),
                ),
                Some([_]) => {}
                Some(many) => self.err(
                    Diagnostic::error(
                        &PARALLEL_REGION,
                        format!(
                            "join `{}` is named by parallels {}; a join belongs to one",
                            n.id,
                            quoted(many)
                        ),
                    )
                    .at(at)
                    .node(&n.id)
                    .hint("give each parallel a join of its own"),
                ),
            }
        }
        for (i, n) in doc.logical.nodes.iter().enumerate() {
            let NodeKind::Parallel(p) = &n.kind else {
                continue;
            };
            if !matches!(kind(&p.join), Some(NodeKind::Join)) {
                continue; // reported with the node's fields
            }
            let at = Self::node_ptr(i);
            let id = n.id.as_str();
            let join = p.join.as_str();
            let mut regions: Vec<(&str, BTreeSet<&str>)> = Vec::new();
            for (j, b) in p.branches.iter().enumerate() {
                if !index.contains_key(b.as_str()) || b == join || b == id {
                    continue; // reported with the node's fields
                }
                let (mut region, reaches_join) = region(&succ, b, join);
                // A nested parallel's unknown branch is reported with its fields.
                region.retain(|r| index.contains_key(r));
                let branch_at = format!("{at}/branches/{j}");
                let leaves = region
                    .iter()
                    .any(|r| matches!(kind(r), Some(NodeKind::End)));
                if !reaches_join && !leaves {
                    self.err(
                        Diagnostic::error(
                            &PARALLEL_REGION,
                            format!(
                                "branch `{b}` of parallel `{id}` never reaches its join `{join}`"
                            ),
                        )
                        .at(branch_at.clone())
                        .node(id)
                        .hint(format!("lead every path of the branch to `{join}`")),
                    );
                }
                for r in &region {
                    if matches!(kind(r), Some(NodeKind::End)) {
                        let from = pred[r]
                            .iter()
                            .find(|q| region.contains(*q))
                            .copied()
                            .unwrap_or(b);
                        self.err(
                            Diagnostic::error(
                                &PARALLEL_REGION,
                                format!("branch `{b}` of parallel `{id}` leaves it for `{r}` (the edge {from} → {r}); a branch ends at its join `{join}`"),
                            )
                            .at(branch_at.clone())
                            .node(id)
                            .hint(format!("lead the edge to `{join}` instead")),
                        );
                    }
                    if matches!(kind(r), Some(NodeKind::Hitl(_))) {
                        self.err(
                            Diagnostic::error(
                                &crate::codes::UNSUPPORTED,
                                format!("hitl node `{r}` is inside branch `{b}` of parallel `{id}`: a branch cannot pause the run yet"),
                            )
                            .at(Self::node_ptr(index[r]))
                            .node(*r)
                            .hint(format!("move it before `{id}` or after `{join}`")),
                        );
                    }
                    // Entered only from the branch (or, for its first node, the
                    // parallel); an `end` it reached is reported above.
                    if matches!(kind(r), Some(NodeKind::End)) {
                        continue;
                    }
                    for q in pred.get(r).into_iter().flatten() {
                        let inside = region.contains(q) || (*r == b.as_str() && *q == id);
                        if !inside {
                            self.err(
                                Diagnostic::error(
                                    &PARALLEL_REGION,
                                    format!("the edge {q} → {r} enters branch `{b}` of parallel `{id}` from outside it"),
                                )
                                .at(Self::node_ptr(index[*q]))
                                .node(*q)
                                .hint(format!("a branch is entered only through `{id}`; lead the edge elsewhere")),
                            );
                        }
                    }
                }
                regions.push((b.as_str(), region));
            }
            // No node in two branches.
            for (x, (bx, rx)) in regions.iter().enumerate() {
                for (by, ry) in &regions[x + 1..] {
                    if let Some(shared) = rx.intersection(ry).next() {
                        self.err(
                            Diagnostic::error(
                                &PARALLEL_REGION,
                                format!("node `{shared}` is in branches `{bx}` and `{by}` of parallel `{id}`; branches share no node"),
                            )
                            .at(Self::node_ptr(index[shared]))
                            .node(*shared)
                            .hint("give each branch its own nodes; they meet at the join"),
                        );
                    }
                }
            }
            // The join is entered from the branches only.
            let all: BTreeSet<&str> = regions
                .iter()
                .flat_map(|(_, r)| r.iter().copied())
                .collect();
            for q in pred.get(join).into_iter().flatten() {
                if !all.contains(q) && *q != id {
                    self.err(
                        Diagnostic::error(
                            &PARALLEL_REGION,
                            format!("the edge {q} → {join} reaches the join of parallel `{id}` from outside its branches"),
                        )
                        .at(Self::node_ptr(index[*q]))
                        .node(*q)
                        .hint("only the branches of its parallel lead to a join"),
                    );
                }
            }
            self.parallel_writes(id, &regions);
        }
    }

    /// Two branches writing the same field that is not `append`.
    fn parallel_writes(&mut self, parallel: &str, regions: &[(&str, BTreeSet<&'a str>)]) {
        let doc = self.doc;
        let writer = |region: &BTreeSet<&str>| -> BTreeMap<&'a str, &'a str> {
            doc.logical
                .nodes
                .iter()
                .filter(|n| region.contains(n.id.as_str()))
                .filter_map(|n| n.kind.output_key().map(|k| (k, n.id.as_str())))
                .filter(|(k, _)| {
                    doc.state_field(k)
                        .is_some_and(|f| f.reducer != Reducer::Append)
                })
                .collect()
        };
        let writes: Vec<(&str, BTreeMap<&str, &str>)> =
            regions.iter().map(|(b, r)| (*b, writer(r))).collect();
        for (x, (bx, wx)) in writes.iter().enumerate() {
            for (by, wy) in &writes[x + 1..] {
                for (field, nx) in wx {
                    if let Some(ny) = wy.get(field) {
                        let i = doc
                            .logical
                            .nodes
                            .iter()
                            .position(|n| n.id == *ny)
                            .unwrap_or(0);
                        self.err(
                            Diagnostic::error(
                                &PARALLEL_WRITE,
                                format!("`{nx}` (branch `{bx}`) and `{ny}` (branch `{by}`) of parallel `{parallel}` both write `{field}`, whose reducer is not `append`"),
                            )
                            .at(format!("{}/outputKey", Self::node_ptr(i)))
                            .node(*ny)
                            .hint(format!("write different fields and combine them after the join, or make `{field}` an `append` array")),
                        );
                    }
                }
            }
        }
    }
}

fn quoted(ids: &[&str]) -> String {
    ids.iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

crate::diagnostic_codes! {
    /// A branch of a `parallel` node leaves its region, or a `join` does not belong to exactly one `parallel`.
    ///
    /// A `parallel` node's branches run at once and meet at its `join`. A branch is every node reachable from its first node before the join: every path of it must reach the join, none may reach `end`, no node may be in two branches, and no edge may enter a branch from outside it (only its `parallel` starts it). Routers and bounded cycles inside a branch are fine, and a `parallel` inside a branch nests, with its own join inside the branch. A `join` is named by exactly one `parallel`, and only its branches lead to it.
    ///
    /// Lead the edge named in the message back inside the branch, or to the join.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/parallel_region.graph.json`:
    ///
    /// ```json
    /// { "from": "lookup", "to": "end" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "from": "lookup", "to": "merge" }
    /// ```
    pub PARALLEL_REGION = "parallel-region", group "topology";

    /// Two branches of a `parallel` node write the same field, which is not an `append` field.
    ///
    /// At the `join`, each branch's writes are applied in the order of `branches`. An `append` field receives every branch's items in that order; any other field may be written by one branch only, since which write should win would otherwise depend on the order the compiler cannot see as intended. Where two branches hold nodes with the same such `outputKey` the compile fails, naming both nodes; where only a native body's patch shows it, the run fails with `conflicting_update`.
    ///
    /// Write different fields and combine them after the join, or make the field an `append` array.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/parallel_write.graph.json`:
    ///
    /// ```json
    /// { "id": "a", "kind": "response_template", "template": "A", "outputKey": "answer" },
    /// { "id": "b", "kind": "response_template", "template": "B", "outputKey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "a", "kind": "response_template", "template": "A", "outputKey": "answer_a" },
    /// { "id": "b", "kind": "response_template", "template": "B", "outputKey": "answer_b" }
    /// ```
    pub PARALLEL_WRITE = "parallel-write", group "topology";
}
