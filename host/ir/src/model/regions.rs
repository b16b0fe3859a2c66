//! The regions of `parallel` nodes (docs/ir-reference.md, "Parallel
//! branches and map"): a branch is every node reachable from its first
//! node before its join. The validator checks the regions' rules with
//! these; backends split a graph's run loop by them (a branch runs its
//! nodes in a loop of its own).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Document, NodeKind, ParallelNode, RouterNode};

/// A branch of a `parallel` node: the node, the branch's index in
/// `branches`, and its first node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BranchRef<'a> {
    pub parallel: &'a str,
    pub index: usize,
    pub first: &'a str,
}

impl Document {
    /// Every node's successors: a router's branch targets, a parallel's
    /// branches and its join, else its edges (ids the document names,
    /// existing or not).
    pub fn all_successors(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for n in &self.logical.nodes {
            let list = out.entry(n.id.as_str()).or_default();
            match &n.kind {
                NodeKind::Router(RouterNode { branches }) => {
                    list.extend(branches.iter().map(|b| b.to.as_str()));
                }
                NodeKind::Parallel(p) => {
                    list.extend(p.branches.iter().map(String::as_str));
                    list.push(p.join.as_str());
                }
                _ => {}
            }
        }
        for e in &self.logical.edges {
            if let Some(list) = out.get_mut(e.from.as_str()) {
                list.push(e.to.as_str());
            }
        }
        out
    }

    /// Every branch of the document's parallel nodes, by parallel id and
    /// index, with its parallel's join: the loops a backend writes besides
    /// the graph's own (a branch runs from its first node to the join).
    pub fn branch_loops(&self) -> Vec<(BranchRef<'_>, &str)> {
        let mut loops: Vec<(BranchRef<'_>, &str)> = self
            .logical
            .nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Parallel(p) => Some((n.id.as_str(), p)),
                _ => None,
            })
            .flat_map(|(id, p)| p.branch_refs(id).map(move |b| (b, p.join.as_str())))
            .collect();
        loops.sort_by_key(|(b, _)| (b.parallel, b.index));
        loops
    }

    /// The innermost branch each node inside a branch belongs to (a nested
    /// parallel's nodes belong to its own branches, the nested parallel and
    /// its join to the enclosing branch). Nodes outside every branch are
    /// absent. Meaningful for a document whose regions validate.
    pub fn branch_owners(&self) -> HashMap<&str, BranchRef<'_>> {
        let succ = self.all_successors();
        let mut owners: HashMap<&str, (BranchRef<'_>, usize)> = HashMap::new();
        for n in &self.logical.nodes {
            let NodeKind::Parallel(p) = &n.kind else {
                continue;
            };
            for (index, first) in p.branches.iter().enumerate() {
                let (nodes, _) = region(&succ, first, &p.join);
                let branch = BranchRef {
                    parallel: n.id.as_str(),
                    index,
                    first: first.as_str(),
                };
                for node in &nodes {
                    // Regions nest or are apart: the smaller is the inner.
                    match owners.get(node) {
                        Some((_, size)) if *size <= nodes.len() => {}
                        _ => {
                            owners.insert(node, (branch, nodes.len()));
                        }
                    }
                }
            }
        }
        owners.into_iter().map(|(n, (b, _))| (n, b)).collect()
    }
}

impl ParallelNode {
    /// The branches of this node (whose id is `id`), in declared order.
    pub fn branch_refs<'a>(&'a self, id: &'a str) -> impl Iterator<Item = BranchRef<'a>> {
        self.branches
            .iter()
            .enumerate()
            .map(move |(index, first)| BranchRef {
                parallel: id,
                index,
                first: first.as_str(),
            })
    }
}

/// The nodes reachable from `first` before `join`, and whether `join` is
/// reached.
pub(crate) fn region<'a>(
    succ: &BTreeMap<&'a str, Vec<&'a str>>,
    first: &'a str,
    join: &str,
) -> (BTreeSet<&'a str>, bool) {
    let mut seen = BTreeSet::new();
    let mut reaches = false;
    let mut stack = vec![first];
    while let Some(n) = stack.pop() {
        if n == join {
            reaches = true;
            continue;
        }
        if seen.insert(n) {
            stack.extend(succ.get(n).into_iter().flatten().copied());
        }
    }
    (seen, reaches)
}
