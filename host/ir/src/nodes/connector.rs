//! `connector`: a marketplace connector's code, rendered by its component
//! from `config` (checked against the connector's schema by the host).

use std::collections::BTreeMap;

use serde_json::Value;

use super::KindRules;

crate::kind_fields! {
    /// A node whose code comes from `codegen.templates[platform][id]`.
    pub struct ConnectorNode {
        #[schemars(default)]
        config: BTreeMap<String, Value> = or_empty("config"),
    }
}

impl KindRules for ConnectorNode {}
