//! A case's expectations against a service's answer: the first field that
//! differs, as `<JSON pointer>: expected <value>, got <value>`.

use serde_json::{Map, Value};

use super::file::Expect;

/// What `POST /invoke` answered (rebuilt from the terminal event when the
/// graph streams).
pub struct Answer<'a> {
    pub status: u16,
    pub body: &'a Value,
    pub events: Option<&'a [Value]>,
}

/// The first difference between `expect` and `answer`, or `None`.
pub fn first_difference(expect: &Expect, answer: &Answer<'_>) -> Option<String> {
    let status = expect.status.or(if expect.error.is_none() {
        Some(200)
    } else {
        None
    });
    let body = answer.body;
    if let Some(want) = status {
        if answer.status != want {
            return Some(format!(
                "status: expected {want}, got {}{}",
                answer.status,
                error_summary(body)
            ));
        }
    }
    if let Some(e) = &expect.error {
        let Some(got) = body.get("error") else {
            return Some(format!("/error: expected an error, got {}", shorten(body)));
        };
        if let Some(code) = &e.code {
            if got["code"] != code.as_str() {
                return Some(format!(
                    "/error/code: expected {}, got {}",
                    Value::from(code.as_str()),
                    got["code"]
                ));
            }
        }
        if let Some(text) = &e.message {
            let message = got["message"].as_str().unwrap_or_default();
            if !message.contains(text.as_str()) {
                return Some(format!(
                    "/error/message: expected it to contain {}, got {}",
                    Value::from(text.as_str()),
                    got["message"]
                ));
            }
        }
        if let Some(details) = &e.details {
            if let Some(d) = subset_of_map(details, &got["details"], "/error/details") {
                return Some(d);
            }
        }
    }
    if let Some(result) = &expect.result {
        if body.get("result").is_none() {
            return Some(format!("/result: expected a result, got {}", shorten(body)));
        }
        if let Some(d) = subset_of_map(result, &body["result"], "/result") {
            return Some(d);
        }
    }
    if let Some(i) = &expect.interrupt {
        let Some(got) = body.get("interrupt") else {
            return Some(format!(
                "/interrupt: expected the run to pause, got {}",
                shorten(body)
            ));
        };
        if let Some(node) = &i.node {
            if got["node"] != node.as_str() {
                return Some(format!(
                    "/interrupt/node: expected {}, got {}",
                    Value::from(node.as_str()),
                    got["node"]
                ));
            }
        }
        if let Some(value) = &i.value {
            if let Some(d) = subset(value, &got["value"], "/interrupt/value") {
                return Some(d);
            }
        }
    }
    if let Some(usage) = &expect.usage {
        if let Some(d) = subset_of_map(&usage.as_json(), &body["usage"], "/usage") {
            return Some(d);
        }
    }
    if let Some(want) = &expect.visited {
        let got = visited(answer.events.unwrap_or_default());
        if &got != want {
            return Some(format!("visited: expected {want:?}, got {got:?}"));
        }
    }
    None
}

/// The nodes a run started, in order, from its events.
pub fn visited(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "node_started")
        .filter_map(|e| e["node"].as_str().map(str::to_string))
        .collect()
}

fn subset_of_map(want: &Map<String, Value>, got: &Value, at: &str) -> Option<String> {
    subset(&Value::Object(want.clone()), got, at)
}

/// Whether `got` holds `want`: objects by the keys `want` has, arrays
/// element by element (same length), numbers by value (`1` is `1.0`),
/// anything else equal.
pub fn subset(want: &Value, got: &Value, at: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().find_map(|(k, v)| {
            let here = format!("{at}/{}", svc_ir::diag::pointer_token(k));
            match g.get(k) {
                Some(gv) => subset(v, gv, &here),
                None => Some(format!("{here}: expected {}, missing", shorten(v))),
            }
        }),
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => w
            .iter()
            .zip(g)
            .enumerate()
            .find_map(|(i, (wv, gv))| subset(wv, gv, &format!("{at}/{i}"))),
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => None,
        _ if want == got => None,
        _ => Some(format!(
            "{at}: expected {}, got {}",
            shorten(want),
            shorten(got)
        )),
    }
}

fn error_summary(body: &Value) -> String {
    match body.get("error") {
        Some(e) => format!(
            " ({}: {})",
            e["code"].as_str().unwrap_or("?"),
            e["message"].as_str().unwrap_or("")
        ),
        None => String::new(),
    }
}

/// A value as JSON, cut to a readable length.
fn shorten(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn expect(v: Value) -> Expect {
        serde_json::from_value(v).unwrap_or_default()
    }

    fn diff(e: Value, status: u16, body: Value) -> Option<String> {
        first_difference(
            &expect(e),
            &Answer {
                status,
                body: &body,
                events: None,
            },
        )
    }

    #[test]
    fn results_are_compared_as_subsets_and_the_first_difference_is_named() {
        let body =
            json!({"result": {"category": "general", "n": 1.0, "tags": ["a", {"x": 1, "y": 2}]}});
        assert_eq!(
            diff(
                json!({"result": {"n": 1, "tags": ["a", {"x": 1}]}}),
                200,
                body.clone()
            ),
            None
        );
        assert_eq!(
            diff(
                json!({"result": {"category": "billing"}}),
                200,
                body.clone()
            ),
            Some("/result/category: expected \"billing\", got \"general\"".into())
        );
        assert_eq!(
            diff(json!({"result": {"tags": ["a"]}}), 200, body.clone()),
            Some("/result/tags: expected [\"a\"], got [\"a\",{\"x\":1,\"y\":2}]".into())
        );
        assert_eq!(
            diff(json!({"result": {"missing/key": 1}}), 200, body.clone()),
            Some("/result/missing~1key: expected 1, missing".into())
        );
        assert_eq!(
            diff(
                json!({}),
                502,
                json!({"error": {"code": "upstream_error", "message": "m"}})
            ),
            Some("status: expected 200, got 502 (upstream_error: m)".into())
        );
    }

    #[test]
    fn errors_interrupts_and_visits_are_checked() {
        let error = json!({"error": {"code": "validation_error", "message": "state.question is required", "details": {"field": "question"}}});
        assert_eq!(
            diff(
                json!({"error": {"code": "validation_error", "message": "required", "details": {"field": "question"}}}),
                400,
                error.clone()
            ),
            None
        );
        assert_eq!(
            diff(
                json!({"status": 400, "error": {"code": "bad_request"}}),
                400,
                error.clone()
            ),
            Some("/error/code: expected \"bad_request\", got \"validation_error\"".into())
        );
        let paused =
            json!({"interrupt": {"node": "review", "value": {"draft": "d"}}, "threadId": "t"});
        assert_eq!(
            diff(
                json!({"interrupt": {"node": "review", "value": {"draft": "d"}}}),
                200,
                paused.clone()
            ),
            None
        );
        assert_eq!(
            diff(json!({"result": {}}), 200, paused),
            Some("/result: expected a result, got {\"interrupt\":{\"node\":\"review\",\"value\":{\"draft\":\"d\"}},\"threadId\":\"t\"}".into())
        );
        let events = [
            json!({"type": "run_started"}),
            json!({"type": "node_started", "node": "a"}),
            json!({"type": "node_finished", "node": "a"}),
            json!({"type": "node_started", "node": "b"}),
        ];
        let body = json!({"result": {}});
        let answer = Answer {
            status: 200,
            body: &body,
            events: Some(&events),
        };
        assert_eq!(
            first_difference(&expect(json!({"visited": ["a", "b"]})), &answer),
            None
        );
        assert_eq!(
            first_difference(&expect(json!({"visited": ["a", "c"]})), &answer),
            Some("visited: expected [\"a\", \"c\"], got [\"a\", \"b\"]".into())
        );
    }

    #[test]
    fn usage_is_compared_by_the_keys_given_also_beside_an_error() {
        let usage = json!({"inputTokens": 10, "outputTokens": 16, "modelCalls": 2, "attempts": 3});
        let done = json!({"result": {}, "usage": usage});
        assert_eq!(
            diff(
                json!({"usage": {"attempts": 3, "modelCalls": 2}}),
                200,
                done.clone()
            ),
            None
        );
        assert_eq!(
            diff(json!({"usage": {"attempts": 2}}), 200, done),
            Some("/usage/attempts: expected 2, got 3".into())
        );
        let failed = json!({"error": {"code": "execution_error", "message": "m"}, "usage": usage});
        assert_eq!(
            diff(
                json!({"error": {"code": "execution_error"}, "usage": {"inputTokens": 10}}),
                500,
                failed
            ),
            None
        );
        assert_eq!(
            diff(
                json!({"usage": {"modelCalls": 1}}),
                200,
                json!({"result": {}})
            ),
            Some("/usage: expected {\"modelCalls\":1}, got null".into())
        );
    }
}
