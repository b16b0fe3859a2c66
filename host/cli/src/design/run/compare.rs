//! The differences between the targets' answers to one request: what the
//! panel shows side by side, and what scripts read from `/api/run`.

use serde_json::{json, Map, Value};

/// The differing fields of the answers in `runs` (platform -> run result),
/// in a fixed order: how far each got (`phase`), `status`, `error.code`,
/// then each field of `result` and the `interrupt` payload, as JSON
/// pointers into the body. Thread ids are left out: each service makes
/// its own unless the request names one.
pub fn differences(runs: &Map<String, Value>) -> Vec<Value> {
    if runs.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut field = |name: String, get: &dyn Fn(&Value) -> Value| {
        let values: Map<String, Value> = runs.iter().map(|(p, r)| (p.clone(), get(r))).collect();
        let mut distinct = values.values();
        let first = distinct.next();
        if distinct.any(|v| Some(v) != first) {
            out.push(json!({"field": name, "values": values}));
        }
    };
    field("phase".into(), &|r| r["phase"].clone());
    field("status".into(), &|r| r["status"].clone());
    field("error.code".into(), &|r| {
        let code = &r["body"]["error"]["code"];
        if code.is_null() {
            r["error"]["code"].clone()
        } else {
            code.clone()
        }
    });
    for part in ["result", "interrupt"] {
        let mut keys: Vec<String> = Vec::new();
        for r in runs.values() {
            match &r["body"][part] {
                Value::Object(o) => {
                    for k in o.keys() {
                        if !keys.contains(k) {
                            keys.push(k.clone());
                        }
                    }
                }
                Value::Null => {}
                // A payload that is not an object compares whole.
                _ => {
                    if !keys.contains(&String::new()) {
                        keys.push(String::new());
                    }
                }
            }
        }
        for key in keys {
            let pointer = if key.is_empty() {
                format!("/{part}")
            } else {
                format!("/{part}/{}", key.replace('~', "~0").replace('/', "~1"))
            };
            field(pointer.clone(), &|r| {
                r["body"].pointer(&pointer).cloned().unwrap_or(Value::Null)
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn equal_answers_have_no_differences_and_thread_ids_do_not_count() {
        let r = runs(json!({
            "go": {"phase": "run", "status": 200, "body": {"result": {"a": 1}, "threadId": "x"}},
            "python-svc": {"phase": "run", "status": 200, "body": {"result": {"a": 1}, "threadId": "y"}},
        }));
        assert_eq!(differences(&r), Vec::<Value>::new());
    }

    #[test]
    fn each_differing_field_is_named_with_every_targets_value() {
        let r = runs(json!({
            "go": {"phase": "run", "status": 200, "body": {"result": {"a": 1, "b/c": "x"}}},
            "java-svc": {"phase": "run", "status": 200, "body": {"result": {"a": 2, "b/c": "x"}}},
            "python-svc": {"phase": "run", "status": 422, "body": {"error": {"code": "validation_error"}}},
        }));
        let d = differences(&r);
        let fields: Vec<&str> = d.iter().filter_map(|x| x["field"].as_str()).collect();
        assert_eq!(
            fields,
            ["status", "error.code", "/result/a", "/result/b~1c"]
        );
        assert_eq!(
            d[2]["values"],
            json!({"go": 1, "java-svc": 2, "python-svc": null})
        );
    }

    #[test]
    fn a_target_that_did_not_build_differs_in_phase() {
        let r = runs(json!({
            "go": {"phase": "build", "error": {"code": "build_failed"}},
            "python-svc": {"phase": "run", "status": 200, "body": {"result": {}}},
        }));
        let fields: Vec<Value> = differences(&r).iter().map(|x| x["field"].clone()).collect();
        assert_eq!(
            fields,
            [json!("phase"), json!("status"), json!("error.code")]
        );
    }
}
