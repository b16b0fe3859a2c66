//! The id and name patterns of the document.

fn matches_pattern(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|c| rest(*c))
}

pub fn is_doc_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_lowercase(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
        63,
    )
}

pub fn is_node_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic(),
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

pub fn is_identifier(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic() || c == b'_',
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

pub fn is_connector_id(s: &str) -> bool {
    let seg = |p: &str| {
        matches_pattern(
            p,
            |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
            64,
        )
    };
    matches!(s.split_once('/'), Some((a, b)) if seg(a) && seg(b))
}

crate::diagnostic_codes! {
    /// Two nodes, tools, MCP servers or state fields share one id or name.
    ///
    /// Node ids, tool ids, MCP server ids and state field names become identifiers in the generated code and are what edges, branches and references point at, so each must be unique within its list. The diagnostic points at the second occurrence (and, for nodes, names the first).
    ///
    /// Rename one of them, or remove the duplicate.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/duplicate_node_id.graph.json` (and `duplicate_state_field.graph.json` for state):
    ///
    /// ```json
    /// "nodes": [
    ///   { "id": "start", "kind": "start" },
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    ///   { "id": "end", "kind": "end" }
    /// ]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    ///   { "id": "reply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    ///   { "id": "reply_again", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" },
    /// ```
    pub DUPLICATE_ID = "duplicate-id", group "document";

    /// A document, node, tool, MCP server or connector id, or a state field name, does not match its pattern.
    ///
    /// Ids become package names, identifiers and file names in every target language, so each follows a pattern: the document `id` matches `^[a-z][a-z0-9_-]{0,62}$`; node, tool and MCP server ids match `^[A-Za-z][A-Za-z0-9_]*$` (no dashes); state field names match `^[A-Za-z_][A-Za-z0-9_]*$`; connector ids in `codegen.templates` look like `vendor/name`.
    ///
    /// Rename it to match the pattern (and update every reference).
    ///
    /// # Example
    ///
    /// `fixtures/invalid/invalid_node_id.graph.json`:
    ///
    /// ```json
    /// { "id": "re-ply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "re_ply", "kind": "response_template", "template": "Re: {{question}}", "outputKey": "answer" }
    /// ```
    pub INVALID_ID = "invalid-id", group "document";
}
