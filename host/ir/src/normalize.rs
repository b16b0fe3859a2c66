//! Normalization beyond what reading already applied (field defaults and
//! the `response_transformer` alias): everything that asks a model (LLM and
//! intent_classifier nodes, worker agents, supervisors with the `llm`
//! router) gets a complete model, so backends never look in two places.

use crate::model::*;

pub(crate) fn normalize(doc: &mut Document) {
    let settings_model = doc.logical.settings.model.clone();
    let mut first_model: Option<ModelRef> = None;
    let mut fill = |slot: &mut Option<ModelRef>| {
        let merged = match (slot.take(), &settings_model) {
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
