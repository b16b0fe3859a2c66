//! `start`: where every run begins; a graph has exactly one.

use crate::diag::Diagnostic;
use crate::validate::Validator;

/// `start-count`: `starts` are the indexes of the document's start nodes.
pub(crate) fn check_count(v: &mut Validator<'_>, starts: &[usize]) {
    if starts.len() == 1 {
        return;
    }
    let mut d = Diagnostic::error(
        "start-count",
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
