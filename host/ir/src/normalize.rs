//! Normalization beyond what reading already applied (field defaults and
//! the `response_transformer` alias): every LLM node gets a complete model,
//! so backends never look in two places.

use crate::model::*;

pub(crate) fn normalize(doc: &mut Document) {
    let settings_model = doc.logical.settings.model.clone();
    let mut first_model: Option<ModelRef> = None;
    for node in &mut doc.logical.nodes {
        let NodeKind::Llm(llm) = &mut node.kind else {
            continue;
        };
        let merged = match (llm.model.take(), &settings_model) {
            (Some(m), Some(s)) => Some(ModelRef {
                temperature: m.temperature.or(s.temperature),
                max_tokens: m.max_tokens.or(s.max_tokens),
                ..m
            }),
            (Some(m), None) => Some(m),
            (None, Some(s)) => Some(ModelRef {
                provider: s.provider.clone(),
                name: s.name.clone(),
                temperature: s.temperature,
                max_tokens: s.max_tokens,
            }),
            (None, None) => None,
        };
        if first_model.is_none() {
            first_model.clone_from(&merged);
        }
        llm.model = merged;
    }
    // A graph with LLM nodes always names where the provider is reached.
    if doc.logical.settings.model.is_none() {
        if let Some(m) = first_model {
            doc.logical.settings.model = Some(ModelSettings {
                provider: m.provider,
                name: m.name,
                temperature: None,
                max_tokens: None,
                base_url_env: default_base_url_env(),
                api_key_env: default_api_key_env(),
            });
        }
    }
}
