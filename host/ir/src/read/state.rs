//! State fields: a field's type, an array's items and an object's
//! `properties` (nestable), its reducer and default.

use crate::json::Node as JNode;
use crate::model::*;

use super::{Obj, Reader};

impl Reader {
    fn field_type(&mut self, n: &JNode, p: &str) -> Option<FieldType> {
        let names: Vec<(&'static str, FieldType)> =
            FieldType::ALL.iter().map(|t| (t.as_str(), *t)).collect();
        self.enumerated(n, p, "state field type", &names)
    }

    fn item_type(&mut self, n: &JNode, p: &str) -> Option<ItemType> {
        let mut o = self.object(n, p)?;
        let ty = match o.field("type") {
            Some((tn, tp)) => self.field_type(tn, &tp),
            None => {
                self.missing(&o, "type", "an `items` declaration");
                None
            }
        };
        let items = o
            .field("items")
            .and_then(|(n, p)| self.item_type(n, &p))
            .map(Box::new);
        let properties = self.properties(&mut o);
        let description = self.opt_str(&mut o, "description");
        self.finish(o, "an `items` declaration");
        Some(ItemType {
            ty: ty?,
            items,
            properties,
            description,
        })
    }

    /// `properties`: each member's value is the type of one property, read
    /// in the document's order.
    fn properties(&mut self, o: &mut Obj<'_>) -> Option<Properties> {
        let (n, p) = o.field("properties")?;
        let obj = self.object(n, &p)?;
        let mut out = Properties::new();
        for m in obj.members {
            if let Some(t) = self.item_type(&m.value, &obj.child_ptr(&m.key)) {
                out.insert(m.key.clone(), t);
            }
        }
        Some(out)
    }

    pub(super) fn state_field(&mut self, n: &JNode, p: &str) -> Option<StateField> {
        let mut o = self.object(n, p)?;
        let what = "a state field";
        let name = self.req_str(&mut o, "name", what);
        let ty = match o.field("type") {
            Some((tn, tp)) => self.field_type(tn, &tp),
            None => {
                self.missing(&o, "type", what);
                None
            }
        };
        let items = o.field("items").and_then(|(n, p)| self.item_type(n, &p));
        let properties = self.properties(&mut o);
        let reducer = self
            .opt_enum(
                &mut o,
                "reducer",
                "reducer",
                &[("replace", Reducer::Replace), ("append", Reducer::Append)],
            )
            .unwrap_or(Reducer::Replace);
        let default = o.field("default").map(|(n, _)| n.to_value());
        let required = self.opt_bool(&mut o, "required").unwrap_or(false);
        let description = self.opt_str(&mut o, "description");
        self.finish(o, what);
        Some(StateField {
            name,
            ty: ty?,
            items,
            properties,
            reducer,
            default,
            required,
            description,
        })
    }
}
