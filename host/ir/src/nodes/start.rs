//! `start`: where every run begins; a graph has exactly one.

use crate::diag::Diagnostic;
use crate::validate::Validator;

/// `start-count`: `starts` are the indexes of the document's start nodes.
pub(crate) fn check_count(v: &mut Validator<'_>, starts: &[usize]) {
    if starts.len() == 1 {
        return;
    }
    let mut d = Diagnostic::error(
        &START_COUNT,
        format!(
            "a graph has exactly one `start` node; found {}",
            starts.len()
        ),
    );
    d = match starts.get(1) {
        Some(second) => d.at(format!("/logical/nodes/{second}")),
        None => d
            .at("/logical/nodes")
            .hint("add { \"id\": \"start\", \"kind\": \"start\" }"),
    };
    v.err(d);
}

crate::diagnostic_codes! {
    /// The graph has no start node, or more than one.
    ///
    /// Every run begins at the single `start` node. Without one the graph has no entry; with two, it is ambiguous. Reported at `logical.nodes` when there is none, and at the second start otherwise.
    ///
    /// Keep exactly one `{ "kind": "start" }` node.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/no_start.graph.json` (and `two_starts.graph.json`):
    ///
    /// ```json
    /// "nodes": [
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    ///   { "id": "end", "kind": "end" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "nodes": [
    ///   { "id": "start", "kind": "start" },
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    ///   { "id": "end", "kind": "end" }
    /// ]
    /// ```
    /// and the edge `{ "from": "start", "to": "reply" }`.
    pub START_COUNT = "start-count", group "topology";
}
