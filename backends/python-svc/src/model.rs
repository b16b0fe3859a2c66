//! `Model(...)`: where a model call goes, for LLM and intent_classifier
//! nodes and for worker and supervisor agents.

use svc_backend_sdk::ir::{model_variables, CallPolicy, Document, ModelRef};
use svc_backend_sdk::writer::CodeWriter;

use crate::py::{literal, quote, Expr, RUNTIME};

/// `Model(name, ..., base_url_env=..., api_key_env=...)`; the provider's
/// variables come from `settings.model`; how it is called (`timeout_ms`,
/// `retry`, `fallbacks`) only where it differs from the SDK's defaults.
pub fn model_expr(w: &mut CodeWriter, doc: &Document, model: &ModelRef) -> Expr {
    let (base_url_env, api_key_env) = model_variables(doc, &model.provider);
    let variables = (base_url_env.as_str(), api_key_env.as_str());
    let mut args = model_args(
        w,
        (&model.provider, &model.name),
        model.temperature,
        model.max_tokens,
        variables,
        &model.call,
    );
    let fallbacks: Vec<Expr> = model
        .fallback_models()
        .iter()
        .map(|f| {
            let (base_url_env, api_key_env) = f.variables(doc);
            let args = model_args(
                w,
                (&f.provider, &f.name),
                f.temperature,
                f.max_tokens,
                (&base_url_env, &api_key_env),
                &f.call,
            );
            Expr::call(w.name(RUNTIME, "Model"), args)
        })
        .collect();
    if !fallbacks.is_empty() {
        args.push(Expr::kw("fallbacks", Expr::Tuple(fallbacks)));
    }
    Expr::call(w.name(RUNTIME, "Model"), args)
}

/// The arguments of a `Model(...)` but its fallbacks; `provider` only when
/// it is not the default, `openai`.
fn model_args(
    w: &mut CodeWriter,
    (provider, name): (&str, &str),
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    (base_url_env, api_key_env): (&str, &str),
    call: &CallPolicy,
) -> Vec<Expr> {
    let mut args = vec![Expr::atom(quote(name))];
    if let Some(t) = temperature {
        args.push(Expr::kw("temperature", literal(&serde_json::json!(t))));
    }
    if let Some(mt) = max_tokens {
        args.push(Expr::kw("max_tokens", Expr::atom(mt.to_string())));
    }
    args.push(Expr::kw("base_url_env", Expr::atom(quote(base_url_env))));
    args.push(Expr::kw("api_key_env", Expr::atom(quote(api_key_env))));
    if let Some(ms) = call.timeout_ms {
        args.push(Expr::kw("timeout_ms", Expr::atom(ms.to_string())));
    }
    if let Some(r) = &call.retry {
        let retry = Expr::call(
            w.name(RUNTIME, "Retry"),
            vec![
                Expr::kw("max_attempts", Expr::atom(r.max_attempts.to_string())),
                Expr::kw(
                    "initial_delay_ms",
                    Expr::atom(r.initial_delay_ms.to_string()),
                ),
                Expr::kw("max_delay_ms", Expr::atom(r.max_delay_ms.to_string())),
            ],
        );
        args.push(Expr::kw("retry", retry));
    }
    if provider != "openai" {
        args.push(Expr::kw("provider", Expr::atom(quote(provider))));
    }
    args
}
