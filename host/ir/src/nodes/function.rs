//! `function`: a native body, per platform in `bodiesByPlatform`, whose
//! result goes to `outputKey`.

use super::KindRules;

crate::kind_fields! {
    /// A node that runs its platform's native body.
    pub struct FunctionNode {
        /// The state field the body's result is written to.
        output_key: String = required("outputKey"),
    }
}

impl KindRules for FunctionNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }
}
