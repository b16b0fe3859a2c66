//! The designer's flat editing model and its conversion to and from IR v2
//! (`docs/designer.md`).
//!
//! The editor works on nodes that carry their own canvas position, native
//! bodies and connector templates, where the document keeps those in three
//! other places (`presentation.nodes`, `bodiesByPlatform`,
//! `codegen.templates`). [`flatten`] takes them out and leaves a `null`
//! *slot* where each was, so [`unflatten`] can put every part back exactly
//! where it came from: an unedited document gives back the same JSON, in
//! the same order, unknown fields included. What has no slot (a new node, a
//! first body or position) is added at the end of its object, and a missing
//! top-level or `logical` key is inserted where the spec orders it.
//!
//! Only what is unambiguous is taken out: a body or template whose id is a
//! node's, and a position that is exactly `{x, y}` with integer values.
//! Everything else stays in `document` as it was.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The document as the editor edits it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flat {
    /// The document, with `null` slots where flat parts were taken out.
    pub document: Map<String, Value>,
    pub nodes: Vec<FlatNode>,
    /// `logical.edges`, each edge as written.
    pub edges: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlatNode {
    /// The node object of `logical.nodes`, every field in its order.
    pub node: Map<String, Value>,
    #[serde(default)]
    pub position: Option<Position>,
    /// Native source by platform.
    #[serde(default)]
    pub bodies: Map<String, Value>,
    /// `codegen.templates` entry by platform.
    #[serde(default)]
    pub templates: Map<String, Value>,
}

/// A canvas position; saved as integers (a browser's fractions are rounded).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Position {
    #[serde(deserialize_with = "rounded")]
    pub x: i64,
    #[serde(deserialize_with = "rounded")]
    pub y: i64,
}

fn rounded<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let f = f64::deserialize(d)?;
    if !f.is_finite() || f.abs() > 1e12 {
        return Err(serde::de::Error::custom(
            "a position must be a finite number",
        ));
    }
    Ok(f.round() as i64)
}

/// Top-level keys in the spec's order (`docs/ir-reference.md`).
const TOP_ORDER: &[&str] = &[
    "irVersion",
    "id",
    "name",
    "description",
    "version",
    "target",
    "security",
    "logical",
    "bodiesByPlatform",
    "codegen",
    "presentation",
    "extensions",
];
const LOGICAL_ORDER: &[&str] = &[
    "state",
    "nodes",
    "edges",
    "tools",
    "mcpServers",
    "agents",
    "settings",
];

/// The flat model of a document (a JSON object).
pub fn flatten(doc: Value) -> Result<Flat, String> {
    let Value::Object(mut document) = doc else {
        return Err("the document is not a JSON object".into());
    };
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    if let Some(Value::Object(logical)) = document.get_mut("logical") {
        // A list with anything but node objects stays whole in the document.
        if let Some(Value::Array(list)) = logical.get_mut("nodes") {
            if list.iter().all(Value::is_object) {
                nodes = std::mem::take(list)
                    .into_iter()
                    .filter_map(|n| match n {
                        Value::Object(node) => Some(FlatNode {
                            node,
                            position: None,
                            bodies: Map::new(),
                            templates: Map::new(),
                        }),
                        _ => None,
                    })
                    .collect();
                logical.insert("nodes".into(), Value::Null);
            }
        }
        if let Some(Value::Array(list)) = logical.get_mut("edges") {
            edges = std::mem::take(list);
            logical.insert("edges".into(), Value::Null);
        }
    }
    let index = |nodes: &[FlatNode], id: &str| {
        nodes
            .iter()
            .position(|n| n.node.get("id").and_then(Value::as_str) == Some(id))
    };
    if let Some(Value::Object(by_platform)) = document.get_mut("bodiesByPlatform") {
        for (platform, bodies) in by_platform.iter_mut() {
            let Value::Object(bodies) = bodies else {
                continue;
            };
            for (id, body) in bodies.iter_mut() {
                if let (Some(i), Value::String(_)) = (index(&nodes, id), &*body) {
                    if !nodes[i].bodies.contains_key(platform) {
                        nodes[i].bodies.insert(platform.clone(), body.take());
                    }
                }
            }
        }
    }
    if let Some(Value::Object(codegen)) = document.get_mut("codegen") {
        if let Some(Value::Object(by_platform)) = codegen.get_mut("templates") {
            for (platform, templates) in by_platform.iter_mut() {
                let Value::Object(templates) = templates else {
                    continue;
                };
                for (id, t) in templates.iter_mut() {
                    if let (Some(i), Value::Object(_)) = (index(&nodes, id), &*t) {
                        if !nodes[i].templates.contains_key(platform) {
                            nodes[i].templates.insert(platform.clone(), t.take());
                        }
                    }
                }
            }
        }
    }
    if let Some(Value::Object(presentation)) = document.get_mut("presentation") {
        if let Some(Value::Object(positions)) = presentation.get_mut("nodes") {
            for (id, p) in positions.iter_mut() {
                let Some(i) = index(&nodes, id) else {
                    continue;
                };
                if let Some(pos) = as_position(p) {
                    if nodes[i].position.is_none() {
                        nodes[i].position = Some(pos);
                        *p = Value::Null;
                    }
                }
            }
        }
    }
    Ok(Flat {
        document,
        nodes,
        edges,
    })
}

/// `{x, y}` with integer values and nothing else.
fn as_position(v: &Value) -> Option<Position> {
    let o = v.as_object()?;
    if o.len() != 2 {
        return None;
    }
    Some(Position {
        x: o.get("x")?.as_i64()?,
        y: o.get("y")?.as_i64()?,
    })
}

/// The IR document of a flat model.
pub fn unflatten(flat: &Flat) -> Value {
    let mut doc = flat.document.clone();
    let ids: Vec<Option<&str>> = flat
        .nodes
        .iter()
        .map(|n| n.node.get("id").and_then(Value::as_str))
        .collect();
    // The first node with an id owns its entries (ids are unique in a valid
    // document; validation names a duplicate).
    let owner = |id: &str| ids.iter().position(|i| *i == Some(id));
    let owned = |i: usize| ids[i].is_some_and(|id| owner(id) == Some(i));

    let node_list: Vec<Value> = flat
        .nodes
        .iter()
        .map(|n| Value::Object(n.node.clone()))
        .collect();
    let logical_has_slots = doc.get("logical").is_some_and(Value::is_object);
    if logical_has_slots || !node_list.is_empty() || !flat.edges.is_empty() {
        if let Some(logical) = object_at(&mut doc, "logical", TOP_ORDER) {
            fill(logical, "nodes", node_list, LOGICAL_ORDER);
            fill(logical, "edges", flat.edges.clone(), LOGICAL_ORDER);
        }
    }

    // Bodies, templates, positions: the slot of each, else a new entry.
    let entries = |of: fn(&FlatNode) -> &Map<String, Value>| {
        let mut wanted = Vec::new();
        for (i, n) in flat.nodes.iter().enumerate() {
            if let Some(id) = ids[i].filter(|_| owned(i)) {
                for (platform, v) in of(n) {
                    wanted.push((platform.clone(), id.to_string(), v.clone()));
                }
            }
        }
        wanted
    };
    put_entries(&mut doc, &["bodiesByPlatform"], entries(|n| &n.bodies));
    put_entries(
        &mut doc,
        &["codegen", "templates"],
        entries(|n| &n.templates),
    );
    put_positions(&mut doc, flat, &ids, &owned);
    Value::Object(doc)
}

/// Replaces a `null` slot with `value`; without a slot, adds the key in the
/// spec's order when there is something to add.
fn fill(map: &mut Map<String, Value>, key: &str, value: Vec<Value>, order: &[&str]) {
    match map.get(key) {
        Some(Value::Null) => {
            map.insert(key.into(), Value::Array(value));
        }
        Some(_) => {}
        None if !value.is_empty() => insert_ordered(map, key, Value::Array(value), order),
        None => {}
    }
}

/// The object under `key`, created (in the spec's order) when missing;
/// `None` when the key holds something else (an invalid document keeps it).
fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    order: &[&str],
) -> Option<&'a mut Map<String, Value>> {
    if !map.contains_key(key) {
        insert_ordered(map, key, Value::Object(Map::new()), order);
    }
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// Inserts `key` before the first existing key that the spec orders after
/// it (at the end when none does, or the key is not in `order`).
fn insert_ordered(map: &mut Map<String, Value>, key: &str, value: Value, order: &[&str]) {
    let rank = |k: &str| order.iter().position(|o| *o == k);
    let Some(mine) = rank(key) else {
        map.insert(key.into(), value);
        return;
    };
    let old = std::mem::take(map);
    let mut value = Some(value);
    for (k, v) in old {
        if value.is_some() && rank(&k).is_some_and(|r| r > mine) {
            if let Some(v) = value.take() {
                map.insert(key.into(), v);
            }
        }
        map.insert(k, v);
    }
    if let Some(v) = value {
        map.insert(key.into(), v);
    }
}

/// `path` is `bodiesByPlatform` or `codegen.templates`: platform → id →
/// entry. Slots are filled from their node, slots whose node is gone are
/// dropped (and a platform they leave empty), new entries are appended.
fn put_entries(
    doc: &mut Map<String, Value>,
    path: &[&str],
    mut wanted: Vec<(String, String, Value)>,
) {
    let present = match path {
        [one] => doc.get(*one).is_some(),
        [a, b] => doc
            .get(*a)
            .and_then(Value::as_object)
            .is_some_and(|o| o.get(*b).is_some()),
        _ => false,
    };
    if !present && wanted.is_empty() {
        return;
    }
    let by_platform = match path {
        [one] => object_at(doc, one, TOP_ORDER),
        [a, b] => object_at(doc, a, TOP_ORDER).and_then(|o| object_at(o, b, &["templates"])),
        _ => None,
    };
    let Some(by_platform) = by_platform else {
        return;
    };
    let mut emptied = Vec::new();
    for (platform, entries) in by_platform.iter_mut() {
        let Value::Object(entries) = entries else {
            continue;
        };
        let had_slots = entries.values().any(Value::is_null);
        let before = entries.len();
        entries.retain(|id, v| {
            if !v.is_null() {
                return true;
            }
            match wanted.iter().position(|(p, i, _)| p == platform && i == id) {
                Some(k) => {
                    *v = wanted.remove(k).2;
                    true
                }
                None => false,
            }
        });
        if had_slots && before > 0 && entries.is_empty() {
            emptied.push(platform.clone());
        }
    }
    for p in emptied {
        by_platform.remove(&p);
    }
    for (platform, id, v) in wanted {
        if !by_platform.get(&platform).is_some_and(Value::is_object) {
            by_platform.insert(platform.clone(), Value::Object(Map::new()));
        }
        if let Some(Value::Object(entries)) = by_platform.get_mut(&platform) {
            entries.insert(id, v);
        }
    }
}

fn put_positions(
    doc: &mut Map<String, Value>,
    flat: &Flat,
    ids: &[Option<&str>],
    owned: &dyn Fn(usize) -> bool,
) {
    let mut wanted: Vec<(String, Position)> = Vec::new();
    for (i, n) in flat.nodes.iter().enumerate() {
        if let (Some(id), Some(p)) = (ids[i], n.position) {
            if owned(i) {
                wanted.push((id.to_string(), p));
            }
        }
    }
    let present = doc
        .get("presentation")
        .and_then(Value::as_object)
        .is_some_and(|o| o.contains_key("nodes"));
    if !present && wanted.is_empty() {
        return;
    }
    let Some(positions) =
        object_at(doc, "presentation", TOP_ORDER).and_then(|o| object_at(o, "nodes", &["nodes"]))
    else {
        return;
    };
    let to_value = |p: Position| serde_json::json!({"x": p.x, "y": p.y});
    positions.retain(|id, v| {
        if !v.is_null() {
            // A value the editor did not take stays, unless the node now
            // has a position of its own.
            if let Some(k) = wanted.iter().position(|(i, _)| i == id) {
                *v = to_value(wanted.remove(k).1);
            }
            return true;
        }
        match wanted.iter().position(|(i, _)| i == id) {
            Some(k) => {
                *v = to_value(wanted.remove(k).1);
                true
            }
            None => false,
        }
    });
    for (id, p) in wanted {
        positions.insert(id, to_value(p));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
    use super::*;
    use crate::design::format;
    use serde_json::json;

    fn fixtures() -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut out: Vec<_> = walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.path().to_path_buf())
            .filter(|p| p.to_string_lossy().ends_with(".graph.json"))
            .collect();
        out.sort();
        out
    }

    /// What the browser does with a model: JSON out, JSON back.
    fn through_the_browser(flat: &Flat) -> Flat {
        serde_json::from_str(&serde_json::to_string(flat).unwrap()).unwrap()
    }

    fn open(text: &str) -> Flat {
        flatten(serde_json::from_str(text).unwrap()).unwrap()
    }

    fn save(flat: &Flat) -> String {
        format::document(&unflatten(flat))
    }

    #[test]
    fn every_fixture_round_trips_byte_identically() {
        let mut checked = 0;
        for path in fixtures() {
            let text = std::fs::read_to_string(&path).unwrap();
            // The compiler's reader refuses what the designer cannot open
            // (a syntax error, a duplicate key): that is reported, not saved.
            if svc_ir::json::parse(&text).is_err() {
                continue;
            }
            let flat = through_the_browser(&open(&text));
            assert_eq!(save(&flat), text, "{}", path.display());
            checked += 1;
        }
        assert!(checked >= 60, "only {checked} fixtures were checked");
    }

    #[test]
    fn flat_parts_leave_slots_and_come_back_to_them() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/valid/support_triage.graph.json"),
        )
        .unwrap();
        let flat = open(&text);
        assert_eq!(flat.document["logical"]["nodes"], Value::Null);
        assert_eq!(
            flat.document["bodiesByPlatform"]["go"]["classify"],
            Value::Null
        );
        assert_eq!(
            flat.document["presentation"]["nodes"]["classify"],
            Value::Null
        );
        let classify = flat
            .nodes
            .iter()
            .find(|n| n.node["id"] == "classify")
            .unwrap();
        assert_eq!(classify.position, Some(Position { x: 120, y: 40 }));
        assert_eq!(classify.bodies.len(), 3);
        assert!(classify.bodies["go"].as_str().unwrap().contains("strings"));
    }

    #[test]
    fn moving_a_node_is_a_one_line_diff() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/valid/support_triage.graph.json"),
        )
        .unwrap();
        let mut flat = open(&text);
        let i = flat
            .nodes
            .iter()
            .position(|n| n.node["id"] == "classify")
            .unwrap();
        // A browser sends fractions; they are saved as integers.
        flat.nodes[i].position = serde_json::from_value(json!({"x": 300.4, "y": -12.6})).unwrap();
        let saved = save(&flat);
        let changed: Vec<(&str, &str)> = text
            .lines()
            .zip(saved.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(text.lines().count(), saved.lines().count());
        assert_eq!(
            changed,
            vec![(
                "      \"classify\": { \"x\": 120, \"y\": 40 }",
                "      \"classify\": { \"x\": 300, \"y\": -13 }"
            )]
        );
    }

    #[test]
    fn new_parts_go_where_the_spec_orders_them() {
        let text = "{\n  \"irVersion\": \"2.2\",\n  \"id\": \"g\",\n  \"logical\": {\n    \"state\": [],\n    \"settings\": {}\n  },\n  \"extensions\": {\n    \"mine\": true\n  }\n}\n";
        let mut flat = open(text);
        assert!(flat.nodes.is_empty());
        flat.nodes.push(FlatNode {
            node: json!({"id": "f", "kind": "function", "outputKey": "out"})
                .as_object()
                .unwrap()
                .clone(),
            position: Some(Position { x: 1, y: 2 }),
            bodies: json!({"go": "return nil, nil"})
                .as_object()
                .unwrap()
                .clone(),
            templates: Map::new(),
        });
        flat.edges.push(json!({"from": "start", "to": "f"}));
        let doc = unflatten(&flat);
        let top: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            top,
            [
                "irVersion",
                "id",
                "logical",
                "bodiesByPlatform",
                "presentation",
                "extensions"
            ]
        );
        let logical: Vec<&str> = doc["logical"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(logical, ["state", "nodes", "edges", "settings"]);
        assert_eq!(doc["bodiesByPlatform"]["go"]["f"], "return nil, nil");
        assert_eq!(doc["presentation"]["nodes"]["f"], json!({"x": 1, "y": 2}));
        assert_eq!(doc["extensions"], json!({"mine": true}));
    }

    #[test]
    fn deleting_and_renaming_nodes_moves_what_they_own() {
        let doc = json!({
            "irVersion": "2.2", "id": "g",
            "logical": {"nodes": [
                {"id": "a", "kind": "function", "outputKey": "x", "label": "A", "custom": 1},
                {"id": "b", "kind": "function", "outputKey": "x"}
            ], "edges": []},
            "bodiesByPlatform": {"go": {"a": "A", "tool": "T"}, "java-svc": {"b": "B"}},
            "codegen": {"templates": {"go": {"a": {"connector": "c", "version": "^1", "entry": "e"}}}},
            "presentation": {"nodes": {"a": {"x": 1, "y": 1}, "b": {"x": 2, "y": 2}, "gone": {"x": 0, "y": 0}}, "zoom": 2}
        });
        let mut flat = flatten(doc).unwrap();
        // Delete b; rename a to c.
        flat.nodes.remove(1);
        flat.nodes[0].node.insert("id".into(), json!("c"));
        let out = unflatten(&flat);
        assert_eq!(
            out["bodiesByPlatform"],
            json!({"go": {"tool": "T", "c": "A"}}),
            "b's only java body went, and with it the java-svc map; a's body follows the rename"
        );
        assert_eq!(
            out["codegen"],
            json!({"templates": {"go": {"c": {"connector": "c", "version": "^1", "entry": "e"}}}})
        );
        assert_eq!(
            out["presentation"],
            json!({"nodes": {"gone": {"x": 0, "y": 0}, "c": {"x": 1, "y": 1}}, "zoom": 2}),
            "a position the editor did not own stays"
        );
        assert_eq!(
            out["logical"]["nodes"],
            json!([{"id": "c", "kind": "function", "outputKey": "x", "label": "A", "custom": 1}])
        );
    }

    #[test]
    fn what_is_not_a_plain_part_stays_in_the_document() {
        let doc = json!({
            "irVersion": "2.2", "id": "g",
            "logical": {"nodes": [{"id": "a", "kind": "start"}, "junk"], "edges": "junk"},
            "presentation": {"nodes": {"a": {"x": 1.5, "y": 2}}}
        });
        let flat = flatten(doc.clone()).unwrap();
        assert!(flat.nodes.is_empty());
        assert_eq!(unflatten(&flat), doc);
        assert!(flatten(json!([1])).is_err());
    }
}

/// The designer's unit tests (`designer/src/model/`) edit this flat model:
/// the conversion's own output for `support_triage`, so they never need a
/// second copy of it. `SVC_UPDATE_DOCS=1` rewrites it.
#[cfg(test)]
#[test]
#[allow(clippy::unwrap_used, clippy::panic)] // test code
fn the_designer_tests_use_this_flat_model() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text =
        std::fs::read_to_string(root.join("fixtures/valid/support_triage.graph.json")).unwrap();
    let flat = flatten(serde_json::from_str(&text).unwrap()).unwrap();
    let want = serde_json::to_string_pretty(&flat).unwrap() + "\n";
    let path = root.join("designer/src/model/testdata/support_triage.flat.json");
    if std::env::var_os("SVC_UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        panic!("{} is stale: rerun with SVC_UPDATE_DOCS=1", path.display());
    }
}
