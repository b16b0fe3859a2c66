//! `end`: where a run stops; a graph has at least one.

use crate::diag::Diagnostic;
use crate::validate::Validator;

/// `no-end`: `ends` is how many end nodes the document has.
pub(crate) fn check_count(v: &mut Validator<'_>, ends: usize) {
    if ends == 0 {
        v.err(
            Diagnostic::error(&NO_END, "a graph needs at least one `end` node")
                .at("/logical/nodes")
                .hint("add { \"id\": \"end\", \"kind\": \"end\" } and an edge to it"),
        );
    }
}

crate::diagnostic_codes! {
    /// The graph has no end node.
    ///
    /// A run finishes when it reaches an `end` node; a graph without one could never return a result.
    ///
    /// Add `{ "id": "end", "kind": "end" }` and an edge to it.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/no_end.graph.json`:
    ///
    /// ```json
    /// "nodes": [
    ///   { "id": "start", "kind": "start" },
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
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
    /// and the edge `{ "from": "reply", "to": "end" }`.
    pub NO_END = "no-end", group "topology";
}
