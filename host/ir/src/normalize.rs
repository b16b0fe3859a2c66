//! Normalization beyond what reading already applied (field defaults and
//! the `response_transformer` alias): everything that asks a model (LLM and
//! intent_classifier nodes, worker agents, supervisors with the `llm`
//! router) gets a complete model, so backends never look in two places.

use crate::model::*;

pub(crate) fn normalize(doc: &mut Document) {
    if let Some(s) = &mut doc.logical.settings.model {
        let (base, key) = (s.base_url_env.clone(), s.api_key_env.clone());
        resolve_variables(&mut s.fallbacks, &s.provider, &base, &key);
    }
    let settings_model = doc.logical.settings.model.clone();
    let mut first_model: Option<ModelRef> = None;
    let mut fill = |slot: &mut Option<ModelRef>| {
        let merged = match (slot.take(), &settings_model) {
            (Some(m), Some(s)) => Some(ModelRef {
                temperature: m.temperature.or(s.temperature),
                max_tokens: m.max_tokens.or(s.max_tokens),
                call: m.call.or(&s.call),
                fallbacks: m.fallbacks.or_else(|| Some(s.fallbacks.clone())),
                ..m
            }),
            (Some(m), None) => Some(m),
            (None, Some(s)) => Some(ModelRef {
                provider: s.provider.clone(),
                name: s.name.clone(),
                temperature: s.temperature,
                max_tokens: s.max_tokens,
                call: s.call.clone(),
                fallbacks: Some(s.fallbacks.clone()),
            }),
            (None, None) => None,
        };
        // A normalized model lists its fallbacks, each with its variables.
        let merged = merged.map(|mut m| {
            let mut fallbacks = m.fallbacks.take().unwrap_or_default();
            let (base, key) = match &settings_model {
                Some(s) => (s.base_url_env.clone(), s.api_key_env.clone()),
                None => provider_variables(&m.provider),
            };
            resolve_variables(&mut fallbacks, &m.provider, &base, &key);
            m.fallbacks = (!fallbacks.is_empty()).then_some(fallbacks);
            m
        });
        if first_model.is_none() {
            first_model.clone_from(&merged);
        }
        *slot = merged;
    };
    for node in &mut doc.logical.nodes {
        match &mut node.kind {
            NodeKind::Llm(llm) => fill(&mut llm.model),
            NodeKind::IntentClassifier(c) => fill(&mut c.model),
            // A child graph is normalized as a document of its own.
            NodeKind::Subgraph(SubgraphNode {
                graph: SubgraphRef::Embedded(child),
                ..
            })
            | NodeKind::Map(MapNode {
                graph: SubgraphRef::Embedded(child),
                ..
            }) => normalize(child),
            _ => {}
        }
    }
    for agent in &mut doc.logical.agents {
        match &mut agent.kind {
            AgentKind::Worker { model, .. }
            | AgentKind::Supervisor {
                model,
                router: SupervisorRouter::Llm,
                ..
            } => fill(model),
            _ => {}
        }
    }
    // A graph that asks a model always names where the provider is reached.
    if doc.logical.settings.model.is_none() {
        if let Some(m) = first_model {
            let (base_url_env, api_key_env) = provider_variables(&m.provider);
            doc.logical.settings.model = Some(ModelSettings {
                provider: m.provider,
                name: m.name,
                temperature: None,
                max_tokens: None,
                base_url_env,
                api_key_env,
                call: CallPolicy::default(),
                fallbacks: Vec::new(),
            });
        }
    }
}

/// Names the variables of each fallback that names none: those of the model
/// it backs up (`provider` with `base` and `key`) when the provider is the
/// same, else the provider's own.
fn resolve_variables(fallbacks: &mut [Fallback], provider: &str, base: &str, key: &str) {
    for f in fallbacks {
        let (own_base, own_key) = if f.provider == provider {
            (base.to_string(), key.to_string())
        } else {
            provider_variables(&f.provider)
        };
        f.base_url_env.get_or_insert(own_base);
        f.api_key_env.get_or_insert(own_key);
    }
}
