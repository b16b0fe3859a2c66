//! `end`: where a run stops; a graph has at least one.

use crate::diag::Diagnostic;
use crate::validate::Validator;

/// `no-end`: `ends` is how many end nodes the document has.
pub(crate) fn check_count(v: &mut Validator<'_>, ends: usize) {
    if ends == 0 {
        v.err(
            Diagnostic::error("no-end", "a graph needs at least one `end` node")
                .at("/logical/nodes")
                .hint("add { \"id\": \"end\", \"kind\": \"end\" } and an edge to it"),
        );
    }
}
