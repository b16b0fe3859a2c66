//! The environment variables a generated service reads, with what each is
//! for: the credential, the model provider and the HTTP tools' endpoints.
//! READMEs and env.yaml files list them.

use svc_ir::{Auth, Document};

pub fn variables(doc: &Document) -> Vec<(String, String)> {
    let mut vars = Vec::new();
    match doc.security.auth {
        Auth::None => {}
        Auth::ApiKey => vars.push((
            doc.security.key_env.clone(),
            "the API key clients send in X-API-Key (required: the service does not start without it)".into(),
        )),
        Auth::Bearer => vars.push((
            doc.security.key_env.clone(),
            "the token clients send as Authorization: Bearer <token> (required: the service does not start without it)".into(),
        )),
    }
    if doc.has_llm_nodes() {
        if let Some(m) = &doc.logical.settings.model {
            vars.push((
                m.base_url_env.clone(),
                "base URL of the OpenAI-compatible chat-completions API (default https://api.openai.com/v1)".into(),
            ));
            vars.push((
                m.api_key_env.clone(),
                "API key of the model provider".into(),
            ));
        }
    }
    for (id, endpoint) in doc.http_tools() {
        if let Some(var) = endpoint.strip_prefix("env:") {
            vars.push((var.to_string(), format!("endpoint of the HTTP tool `{id}`")));
        }
    }
    for (node, var) in crate::connectors::env_refs(doc) {
        if !vars.iter().any(|(v, _)| *v == var) {
            vars.push((var, format!("used by the connector node `{node}`")));
        }
    }
    vars
}

/// An env.yaml listing the variables with empty values (which are skipped
/// when exported, so the file never blanks out a real variable).
pub fn env_yaml(doc: &Document) -> String {
    let mut out = String::from(
        "# Environment of the service: at start-up each non-empty value is exported unless the\n\
         # variable is already set. Keep this file out of version control once it holds secrets.\n",
    );
    let vars = variables(doc);
    if vars.is_empty() {
        out.push_str("{}\n");
    }
    for (name, what) in vars {
        out.push_str(&format!("# {what}\n{name}: \"\"\n"));
    }
    out
}
