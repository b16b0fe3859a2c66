//! `Model(...)`: where a model call goes, for LLM and intent_classifier
//! nodes and for worker and supervisor agents.

use svc_backend_sdk::ir::{Document, ModelRef};
use svc_backend_sdk::writer::CodeWriter;

use crate::py::{literal, quote, Expr, RUNTIME};

/// `Model(name, ..., base_url_env=..., api_key_env=...)`; the provider's
/// variables come from `settings.model`.
pub fn model_expr(w: &mut CodeWriter, doc: &Document, model: &ModelRef) -> Expr {
    let settings = doc.logical.settings.model.as_ref();
    let mut args = vec![Expr::atom(quote(&model.name))];
    if let Some(t) = model.temperature {
        args.push(Expr::kw("temperature", literal(&serde_json::json!(t))));
    }
    if let Some(mt) = model.max_tokens {
        args.push(Expr::kw("max_tokens", Expr::atom(mt.to_string())));
    }
    args.push(Expr::kw(
        "base_url_env",
        Expr::atom(quote(
            settings
                .map(|s| s.base_url_env.as_str())
                .unwrap_or("OPENAI_BASE_URL"),
        )),
    ));
    args.push(Expr::kw(
        "api_key_env",
        Expr::atom(quote(
            settings
                .map(|s| s.api_key_env.as_str())
                .unwrap_or("OPENAI_API_KEY"),
        )),
    ));
    Expr::call(w.name(RUNTIME, "Model"), args)
}
