//! `settings.a2a.tokens`: the callers of the A2A agent. Each token comes
//! from a variable of its own (the document names it, never the token).
//! That the table is only written for a graph published as an A2A agent
//! is checked with the rest of `settings.a2a` (publishing.rs).

use std::collections::HashMap;

use crate::diag::Diagnostic;

use super::document::INVALID_ENV_NAME;
use super::ids::is_identifier;
use super::Validator;

const BASE: &str = "/logical/settings/a2a/tokens";

impl<'a> Validator<'a> {
    pub(super) fn a2a_tokens(&mut self) {
        let mut variables: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.doc.logical.settings.a2a.tokens.iter().enumerate() {
            let at = format!("{BASE}/{i}");
            self.empty(
                &t.subject,
                format!("{at}/subject"),
                "A2A caller's `subject`",
                Some("name who the caller is, e.g. \"crm-bot\"; the run sees it as the caller's subject"),
            );
            for (j, role) in t.roles.iter().enumerate() {
                self.empty(
                    role,
                    format!("{at}/roles/{j}"),
                    "role of an A2A caller",
                    Some("name the role, as the skills' `roles` name it"),
                );
            }
            if !is_identifier(&t.token_env) {
                self.err(
                    Diagnostic::error(
                        &INVALID_ENV_NAME,
                        format!(
                            "tokenEnv `{}` is not an environment variable name",
                            t.token_env
                        ),
                    )
                    .at(format!("{at}/tokenEnv"))
                    .hint("name the variable that holds the caller's token, e.g. \"CRM_BOT_TOKEN\"; never the token itself"),
                );
            } else if let Some(first) = variables.insert(t.token_env.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_VALUE,
                        format!(
                            "two A2A callers read their token from `{}` (first at {BASE}/{first}/tokenEnv)",
                            t.token_env
                        ),
                    )
                    .at(format!("{at}/tokenEnv"))
                    .hint("give each caller a variable, and a token, of its own: one token names one caller"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::SourceFile;

    /// (code, pointer) of each error of a published graph with `a2a`.
    fn errors(a2a: &str) -> Vec<(String, String)> {
        let text = format!(
            r#"{{"irVersion": "2", "id": "t", "logical": {{
                "state": [{{"name": "q", "type": "string", "required": true}}],
                "nodes": [{{"id": "start", "kind": "start"}}, {{"id": "end", "kind": "end"}}],
                "edges": [{{"from": "start", "to": "end"}}], "settings": {{"a2a": {a2a}}}}}}}"#
        );
        SourceFile::new("t.graph.json", text)
            .parse()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|d| (d.code.to_string(), d.pointer.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_table_of_callers_reads_with_its_defaults() {
        let text = r#"{"irVersion": "2", "id": "t", "logical": {
            "state": [{"name": "q", "type": "string", "required": true}],
            "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "end"}],
            "settings": {"a2a": {"enabled": true, "tokens": [
                {"subject": "crm-bot", "roles": ["support"], "tokenEnv": "CRM_TOKEN"},
                {"subject": "ops", "tokenEnv": "OPS_KEY", "scheme": "api_key"}]}}}}"#;
        let doc = SourceFile::new("t.graph.json", text).parse().unwrap();
        let tokens = &doc.logical.settings.a2a.tokens;
        assert_eq!(tokens.len(), 2);
        assert_eq!(
            (tokens[0].subject.as_str(), tokens[0].roles.as_slice()),
            ("crm-bot", ["support".to_string()].as_slice())
        );
        assert_eq!(tokens[0].scheme, crate::A2aScheme::Bearer);
        assert_eq!(
            (tokens[1].token_env.as_str(), tokens[1].scheme.as_str()),
            ("OPS_KEY", "api_key")
        );
    }

    #[test]
    fn each_rule_of_the_table_has_its_code_and_pointer() {
        let at = |i: usize, key: &str| format!("/logical/settings/a2a/tokens/{i}/{key}");
        let pair = |code: &str, ptr: String| (code.to_string(), ptr);
        assert_eq!(
            errors(
                r#"{"enabled": true, "tokens": [{"subject": " ", "roles": [""], "tokenEnv": "sk-live 1"},
                   {"subject": "a", "tokenEnv": "A_TOKEN"}, {"subject": "b", "tokenEnv": "A_TOKEN"}]}"#
            ),
            [
                pair("invalid-value", at(0, "subject")),
                pair("invalid-value", at(0, "roles/0")),
                pair("invalid-env-name", at(0, "tokenEnv")),
                pair("invalid-value", at(2, "tokenEnv")),
            ]
        );
        // Kept and unused: the graph is not published.
        assert_eq!(
            errors(r#"{"tokens": [{"subject": "a", "tokenEnv": "A_TOKEN"}]}"#),
            [pair("invalid-value", "/logical/settings/a2a/tokens".into())]
        );
        // Blank is blank (spaces only), in the table as in the rest of `a2a`.
        assert_eq!(
            errors(
                r#"{"enabled": true, "title": " ", "skills": [{"id": "s", "name": "  ", "roles": [" "]}],
                   "tokens": [{"subject": "\t", "roles": [" "], "tokenEnv": "A"}]}"#
            ),
            [
                pair("invalid-value", "/logical/settings/a2a/title".into()),
                pair(
                    "invalid-value",
                    "/logical/settings/a2a/skills/0/name".into()
                ),
                pair(
                    "invalid-value",
                    "/logical/settings/a2a/skills/0/roles/0".into()
                ),
                pair("invalid-value", at(0, "subject")),
                pair("invalid-value", at(0, "roles/0")),
            ]
        );
        // Shape: the scheme's names, the token never inline, the variable required.
        assert_eq!(
            errors(
                r#"{"enabled": true, "tokens": [{"subject": "a", "tokenEnv": "A", "scheme": "basic"},
                   {"subject": "b", "token": "s3cret"}]}"#
            ),
            [
                pair("invalid-value", at(0, "scheme")),
                pair("missing-field", "/logical/settings/a2a/tokens/1".into()),
                pair("unknown-field", at(1, "token")),
            ]
        );
    }
}
