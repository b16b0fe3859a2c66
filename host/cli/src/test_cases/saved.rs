//! A run of the designer saved as a test case (`POST /api/cases`): the
//! request that was sent and what the service answered become a case of
//! `NAME.tests.json`, appended to the file, which is then checked like any
//! test file.

use serde_json::{json, Map, Value};

/// The case for a run: `request` as the run panel sent it, `status` and
/// `body` the answer of the target it is saved from, `events` its run
/// events when the graph streams. `cases` are the file's cases so far: a
/// resume continues the thread of the last one that paused.
pub fn case_of_run(
    name: &str,
    request: &Map<String, Value>,
    status: u16,
    body: &Value,
    events: Option<&[Value]>,
    cases: &[Value],
) -> Result<Value, String> {
    if name.trim().is_empty() {
        return Err("give the case a name".into());
    }
    if cases.iter().any(|c| c["name"] == name) {
        return Err(format!(
            "the test file has a case named `{name}` already: choose another name"
        ));
    }
    let mut req = Map::new();
    if let Some(resume) = request.get("resume") {
        let paused = cases
            .iter()
            .rev()
            .find(|c| c["expect"].get("interrupt").is_some())
            .and_then(|c| c["name"].as_str())
            .ok_or("this run resumes a thread: save the run that paused it as a case first")?;
        req.insert("threadOf".into(), json!(paused));
        req.insert("resume".into(), resume.clone());
    } else {
        let state = request
            .get("state")
            .filter(|s| s.is_object())
            .ok_or("the request has no \"state\" object")?;
        req.insert("state".into(), state.clone());
    }
    let mut expect = Map::new();
    if let Some(error) = body.get("error") {
        expect.insert("status".into(), json!(status));
        expect.insert("error".into(), json!({"code": error["code"]}));
    } else if let Some(interrupt) = body.get("interrupt") {
        expect.insert(
            "interrupt".into(),
            json!({"node": interrupt["node"], "value": interrupt["value"]}),
        );
    } else if let Some(result) = body.get("result").filter(|r| r.is_object()) {
        if status != 200 {
            expect.insert("status".into(), json!(status));
        }
        expect.insert("result".into(), result.clone());
    } else {
        return Err(format!(
            "the answer ({status}) has no result, error or interrupt to expect"
        ));
    }
    if let Some(events) = events {
        expect.insert("visited".into(), json!(super::expect::visited(events)));
    }
    Ok(json!({"name": name, "request": req, "expect": expect}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_result_an_error_and_an_interrupt_become_expectations() {
        let case = case_of_run(
            "billing",
            &obj(json!({"state": {"question": "invoice"}, "threadId": "t1"})),
            200,
            &json!({"result": {"category": "billing"}}),
            None,
            &[],
        );
        assert_eq!(
            case,
            Ok(
                json!({"name": "billing", "request": {"state": {"question": "invoice"}},
                "expect": {"result": {"category": "billing"}}})
            )
        );
        let case = case_of_run(
            "required",
            &obj(json!({"state": {}})),
            422,
            &json!({"error": {"code": "invalid_state", "message": "m"}}),
            None,
            &[],
        );
        assert_eq!(
            case.map(|c| c["expect"].clone()),
            Ok(json!({"status": 422, "error": {"code": "invalid_state"}}))
        );
        let events = [json!({"type": "node_started", "node": "review"})];
        let paused = case_of_run(
            "pauses",
            &obj(json!({"state": {"q": 1}})),
            200,
            &json!({"interrupt": {"node": "review", "value": {"q": 1}}, "threadId": "t"}),
            Some(&events),
            &[],
        )
        .unwrap_or_default();
        assert_eq!(
            paused["expect"],
            json!({"interrupt": {"node": "review", "value": {"q": 1}}, "visited": ["review"]})
        );
        let resumed = case_of_run(
            "resumes",
            &obj(json!({"threadId": "t", "resume": "ok"})),
            200,
            &json!({"result": {"answer": "ok"}}),
            None,
            std::slice::from_ref(&paused),
        );
        assert_eq!(
            resumed.map(|c| c["request"].clone()),
            Ok(json!({"threadOf": "pauses", "resume": "ok"}))
        );
    }

    #[test]
    fn what_cannot_be_a_case_is_said() {
        let ok = json!({"result": {}});
        let state = obj(json!({"state": {}}));
        assert!(case_of_run(" ", &state, 200, &ok, None, &[]).is_err());
        let taken = [json!({"name": "a"})];
        assert!(
            case_of_run("a", &state, 200, &ok, None, &taken).is_err_and(|e| e.contains("already"))
        );
        let resume = obj(json!({"threadId": "t", "resume": 1}));
        assert!(case_of_run("b", &resume, 200, &ok, None, &taken)
            .is_err_and(|e| e.contains("save the run that paused it")));
        assert!(case_of_run("b", &state, 502, &json!("text"), None, &[]).is_err());
    }
}
