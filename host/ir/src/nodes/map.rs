//! `map`: a child graph run once per item of an array field, at most
//! `maxConcurrency` at a time, each on a fresh state; the children's
//! `output` values become the parent's `outputKey`, in item order
//! (docs/ir-reference.md, "Parallel branches and map"). The child is a
//! subgraph's: embedded or by path, validated like a top-level document.

use std::collections::BTreeMap;

use super::subgraph::{child_settings, SubgraphRef};
use super::{Here, KindRules};
use crate::diag::{did_you_mean, Diagnostic};
use crate::model::{Document, FieldType, ItemType, NodeKind, StateField};
use crate::requirements::{requirements, Category, Requirement};
use crate::validate::{validate, Validator};

crate::kind_fields! {
    /// Runs a child graph once per item of an array field.
    pub struct MapNode {
        /// The parent's `array` field whose items are mapped.
        over: String = required("over"),
        /// An embedded IR document, or a path (relative to this document) of one.
        graph: SubgraphRef = required("graph"),
        /// The child's field that holds the item.
        item_field: String = required("itemField"),
        /// `{ child field: parent field }`: copied into every child.
        #[schemars(default)]
        input: BTreeMap<String, String> = or_empty("input"),
        /// The child's field whose value each item gives.
        output: String = required("output"),
        /// The parent's `array` field that receives the outputs, in item order.
        output_key: String = required("outputKey"),
        /// At most this many children at a time (1 to 10,000).
        #[schemars(default = "default_map_concurrency", range(min = 1))]
        max_concurrency: u32 = count("maxConcurrency", default_map_concurrency(), 10_000),
        /// More items than this fail the run (`too_many_items`; 1 to 1,000,000).
        #[schemars(default = "default_max_items", range(min = 1))]
        max_items: u32 = count("maxItems", default_max_items(), 1_000_000),
    }
}

pub fn default_map_concurrency() -> u32 {
    4
}

pub fn default_max_items() -> u32 {
    1000
}

impl KindRules for MapNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        for (field, ptr) in [
            (&self.over, format!("{at}/over")),
            (&self.output_key, format!("{at}/outputKey")),
        ] {
            if let Some(f) = v.field(field) {
                if f.ty != FieldType::Array {
                    v.err(
                        Diagnostic::error(
                            &MAP_TYPE,
                            format!(
                                "map `{id}` needs an `array` field here, and `{}` is {}",
                                f.name,
                                f.describe()
                            ),
                        )
                        .at(ptr)
                        .node(id),
                    );
                }
            }
        }
        for (child, parent) in &self.input {
            v.check_field_ref(
                parent,
                format!("{at}/input/{child}"),
                Some(id),
                "parent field",
            );
        }
        let SubgraphRef::Embedded(child) = &self.graph else {
            return;
        };
        let prefix = format!("{at}/graph");
        for mut d in validate(child) {
            d.pointer = Some(format!("{prefix}{}", d.pointer.as_deref().unwrap_or("")));
            d.node.get_or_insert_with(|| id.to_string());
            v.err(d);
        }
        for d in map_child_checks(v.doc(), here.index) {
            v.err(d);
        }
    }

    /// The child needs what it uses, found at its place in the parent.
    fn requirements(&self, _doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        let SubgraphRef::Embedded(child) = &self.graph else {
            return;
        };
        for mut r in requirements(child) {
            if r.category == Category::Auth {
                continue;
            }
            r.pointer = format!("{at}/graph{}", r.pointer);
            out.push(r);
        }
    }
}

/// The type of one item of an array field (`None`: any value).
fn item_of(f: &StateField) -> Option<ItemType> {
    f.items.clone()
}

/// Whether a value of `child` fits an item of `list` (an untyped list
/// takes any).
fn fits_item(child: &StateField, list: &StateField) -> bool {
    item_of(list).is_none_or(|it| {
        let shape = child.shape();
        it.ty == shape.ty && it.items == shape.items && it.properties == shape.properties
    })
}

/// The embedded child of the map node at `index` against its parent: the
/// item, `input`, `output` and the child's settings.
pub fn map_child_checks(parent: &Document, index: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(n) = parent.logical.nodes.get(index) else {
        return out;
    };
    let NodeKind::Map(m) = &n.kind else {
        return out;
    };
    let SubgraphRef::Embedded(child) = &m.graph else {
        return out;
    };
    let ptr = format!("/logical/nodes/{index}");
    let names: Vec<&str> = child
        .logical
        .state
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let mut field = |name: &str, at: String| -> Option<&StateField> {
        let found = child.state_field(name);
        if found.is_none() {
            let mut d = Diagnostic::error(
                &crate::codes::UNKNOWN_STATE_FIELD,
                format!(
                    "`{name}` is not a state field of the map's child `{}`",
                    child.id
                ),
            )
            .at(at)
            .node(&n.id);
            if let Some(s) = did_you_mean(name, names.iter().copied()) {
                d = d.hint(format!("did you mean `{s}`?"));
            }
            out.push(d);
        }
        found
    };
    let item = field(&m.item_field, format!("{ptr}/itemField"));
    let output = field(&m.output, format!("{ptr}/output"));
    let inputs: Vec<(&String, Option<&StateField>)> = m
        .input
        .keys()
        .map(|c| (c, field(c, format!("{ptr}/input/{c}"))))
        .collect();
    let mismatch = |what: String, at: String| {
        Diagnostic::error(&MAP_TYPE, what)
            .at(at)
            .node(&n.id)
            .hint("map fields of the same type, or change one of the declarations")
    };
    if let (Some(item), Some(over)) = (item, parent.state_field(&m.over)) {
        if over.ty == FieldType::Array && !fits_item(item, over) {
            out.push(mismatch(
                format!(
                    "map `{}` puts each item of `{}` ({}) into `{}` ({})",
                    n.id,
                    over.name,
                    over.describe(),
                    item.name,
                    item.describe()
                ),
                format!("{ptr}/itemField"),
            ));
        }
    }
    if let (Some(output), Some(list)) = (output, parent.state_field(&m.output_key)) {
        if list.ty == FieldType::Array && !fits_item(output, list) {
            out.push(mismatch(
                format!(
                    "map `{}` collects `{}` ({}) into `{}` ({})",
                    n.id,
                    output.name,
                    output.describe(),
                    list.name,
                    list.describe()
                ),
                format!("{ptr}/outputKey"),
            ));
        }
    }
    for (child_field, c) in inputs {
        let (Some(c), Some(p)) = (c, parent.state_field(&m.input[child_field])) else {
            continue;
        };
        if c.ty != p.ty || c.items != p.items {
            out.push(mismatch(
                format!(
                    "map `{}` copies `{}` ({}) into `{}` ({}); the types must match",
                    n.id,
                    p.name,
                    p.describe(),
                    c.name,
                    c.describe()
                ),
                format!("{ptr}/input/{child_field}"),
            ));
        }
    }
    for f in &child.logical.state {
        if f.required && f.name != m.item_field && !m.input.contains_key(&f.name) {
            out.push(
                Diagnostic::error(
                    &MAP_TYPE,
                    format!(
                        "the map's child `{}` requires `{}`, which neither `itemField` nor `input` gives it",
                        child.id, f.name
                    ),
                )
                .at(format!("{ptr}/input"))
                .node(&n.id)
                .hint(format!("add \"{}\": \"<parent field>\" to `input`", f.name)),
            );
        }
    }
    out.extend(child_settings(child, &ptr, &n.id));
    out
}

crate::diagnostic_codes! {
    /// A `map` node's fields do not fit its parent's or its child's types.
    ///
    /// A `map` node runs its child graph once per item of `over` (an `array` field): the item goes into the child's `itemField`, `input` copies parent fields into every child, and the child's `output` values are collected into `outputKey` (an `array` field) in item order. Values are copied as they are, so `over`'s items and `itemField`, each `input` pair, and `output` and `outputKey`'s items must have the same type (an array without `items` takes any), and every field the child declares `required` must be given by `itemField` or `input`.
    ///
    /// Map fields of the same type, or change a declaration.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/map_item_type.graph.json`:
    ///
    /// ```json
    /// { "id": "each", "kind": "map", "over": "numbers", "itemField": "text", ... }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "each", "kind": "map", "over": "questions", "itemField": "text", ... }
    /// ```
    pub MAP_TYPE = "map-type", group "nodes";
}
