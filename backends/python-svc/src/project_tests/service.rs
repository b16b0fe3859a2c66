//! `tests/test_service.py`: pytest tests that drive the generated service
//! through the HTTP contract with FastAPI's TestClient; model and HTTP tool
//! calls go to a stub server the tests start on loopback (`upstream.rs`).

use serde_json::{json, Value};
use svc_backend_sdk::ir::{Auth, Document, FieldType, NodeKind};
use svc_backend_sdk::samples::{bad_requests, sample_state};
use svc_backend_sdk::writer::CodeWriter;

use super::upstream::Upstreams;
use super::{fixture, js};
use crate::py::{literal, module_file, quote, suite, top_level_gap, write_expr, Expr};

/// A test function: two blank lines, its `def`, its body.
fn test_def(w: &mut CodeWriter, signature: &str, body: impl FnOnce(&mut CodeWriter)) {
    top_level_gap(w);
    suite(w, format!("def {signature}:"), body);
}

pub(super) fn module(doc: &Document) -> String {
    let auth = doc.security.auth;
    let upstreams = Upstreams::of(doc);
    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample });
    let mut w = CodeWriter::python();

    let path = w.name("pathlib", "Path");
    w.line(format!("ROOT = {path}(__file__).resolve().parent.parent"));
    w.line("KEY = \"test-credential-0123\"");
    let header = match auth {
        Auth::None => "{}",
        Auth::ApiKey => "{\"X-API-Key\": KEY}",
        Auth::Bearer => "{\"Authorization\": f\"Bearer {KEY}\"}",
    };
    w.line(format!("AUTH = {header}"));
    w.line(format!("SAMPLE = {}", js(&envelope)));
    if upstreams.served() {
        upstreams.handler(&mut w);
    }
    fixture::client(&mut w, doc, &upstreams);

    test_def(
        &mut w,
        "post(client, body, headers=None, content_type=\"application/json\")",
        |w| {
            w.line("headers = {\"Content-Type\": content_type, **AUTH, **(headers or {})}");
            w.line("return client.post(\"/invoke\", content=body, headers=headers)");
        },
    );
    test_def(&mut w, "test_health_needs_no_credential(client)", |w| {
        w.line("r = client.get(\"/health\")");
        w.line("assert r.status_code == 200");
        w.line("assert r.json() == {\"status\": \"ok\"}");
    });
    test_def(
        &mut w,
        "test_openapi_is_public_and_describes_invoke(client)",
        |w| {
            w.line("r = client.get(\"/openapi.json\")");
            w.line("assert r.status_code == 200");
            w.line("assert r.json()[\"openapi\"] == \"3.1.0\"");
            w.line("assert \"/invoke\" in r.json()[\"paths\"]");
        },
    );
    test_def(&mut w, "test_unknown_path_and_wrong_method(client)", |w| {
        w.line("r = client.get(\"/nowhere\", headers=AUTH)");
        w.line("assert r.status_code == 404");
        w.line("assert r.json()[\"error\"][\"code\"] == \"not_found\"");
        w.line("r = client.get(\"/invoke\", headers=AUTH)");
        w.line("assert r.status_code == 405");
        w.line("assert r.json()[\"error\"][\"code\"] == \"method_not_allowed\"");
    });
    if auth != Auth::None {
        let wrong_header = match auth {
            Auth::Bearer => "\"Authorization\": \"Bearer wrong-credential\"",
            _ => "\"X-API-Key\": \"wrong-credential\"",
        };
        test_def(&mut w, "test_credential_is_required(client)", |w| {
            w.line("headers = {\"Content-Type\": \"application/json\"}");
            w.line("r = client.post(\"/invoke\", content=SAMPLE, headers=headers)");
            w.line("assert r.status_code == 401");
            w.line("assert r.json()[\"error\"][\"code\"] == \"unauthorized\"");
            if auth == Auth::Bearer {
                w.line("assert r.headers[\"WWW-Authenticate\"] == \"Bearer\"");
            }
            w.line(format!("wrong = {{**headers, {wrong_header}}}"));
            w.line("r = client.post(\"/invoke\", content=SAMPLE, headers=wrong)");
            w.line("assert r.status_code == 401");
            w.line("assert \"wrong-credential\" not in r.text");
        });
    }

    let cases: Vec<Expr> = bad_requests(doc)
        .iter()
        .map(|c| {
            Expr::Tuple(vec![
                Expr::atom(quote(&c.name)),
                Expr::atom(quote(&c.content_type)),
                Expr::atom(quote(&c.body)),
                Expr::atom(c.status.to_string()),
                Expr::atom(quote(&c.code)),
                Expr::atom(
                    c.field
                        .as_deref()
                        .map(quote)
                        .unwrap_or_else(|| "None".into()),
                ),
            ])
        })
        .collect();
    top_level_gap(&mut w);
    write_expr(&mut w, 0, "BAD_REQUESTS = ", &Expr::List(cases), "");
    top_level_gap(&mut w);
    let pytest = "pytest";
    w.import(pytest);
    w.line(format!(
        "@{pytest}.mark.parametrize(\"name,content_type,body,status,code,field\", BAD_REQUESTS)"
    ));
    suite(
        &mut w,
        "def test_bad_requests(client, name, content_type, body, status, code, field):",
        |w| {
            w.line("r = post(client, body, content_type=content_type)");
            w.line("assert r.status_code == status, name");
            w.line("error = r.json()[\"error\"]");
            w.line("assert error[\"code\"] == code, name");
            suite(w, "if field:", |w| {
                w.line("assert error[\"details\"][\"field\"] == field, name");
            });
        },
    );
    let json = "json";
    w.import(json);
    test_def(&mut w, "test_body_over_one_mib_is_refused(client)", |w| {
        w.line(format!(
            "body = {json}.dumps({{\"state\": {{\"x\": \"a\" * (1 << 20)}}}})"
        ));
        w.line("r = post(client, body)");
        w.line("assert r.status_code == 413");
        w.line("assert r.json()[\"error\"][\"code\"] == \"payload_too_large\"");
    });
    let fields = Expr::List(
        doc.logical
            .state
            .iter()
            .map(|f| Expr::atom(quote(&f.name)))
            .collect(),
    );
    // Each hitl node's answer when the run pauses there, by its field's type.
    let resumes: Vec<(String, Expr)> = doc
        .logical
        .nodes
        .iter()
        .filter_map(|n| {
            // Only a hitl node pauses the run.
            let NodeKind::Hitl(h) = &n.kind else {
                return None;
            };
            let value = match doc.state_field(&h.output_key).map(|f| f.ty) {
                Some(FieldType::Integer) => json!(1),
                Some(FieldType::Number) => json!(1.5),
                Some(FieldType::Boolean) => json!(true),
                Some(FieldType::Object) => json!({"approved": true}),
                Some(FieldType::Array) => json!([]),
                Some(FieldType::Messages) => json!([{"role": "user", "content": "approved"}]),
                _ => json!("approved"),
            };
            Some((quote(&n.id), literal(&value)))
        })
        .collect();
    let pauses = !resumes.is_empty();
    if pauses {
        top_level_gap(&mut w);
        write_expr(&mut w, 0, "RESUME = ", &Expr::Dict(resumes), "");
    }
    test_def(&mut w, "test_invoke_runs_the_graph(client)", move |w| {
        w.line("r = post(client, SAMPLE)");
        w.line("assert r.status_code == 200, r.text");
        if pauses {
            // A paused run is resumed with each reviewer's answer in turn.
            suite(w, "while \"interrupt\" in r.json():", |w| {
                w.line("paused = r.json()");
                w.line("answer = RESUME[paused[\"interrupt\"][\"node\"]]");
                w.line("body = {\"threadId\": paused[\"threadId\"], \"resume\": answer}");
                w.line("r = post(client, json.dumps(body))");
                w.line("assert r.status_code == 200, r.text");
            });
        }
        w.line("result = r.json()[\"result\"]");
        write_expr(w, 1, "for field in ", &fields, ":");
        w.indent();
        w.line("assert field in result, field");
        w.dedent();
    });
    if let Some(m) = doc
        .state_field("messages")
        .filter(|f| f.ty == FieldType::Messages)
    {
        let required_others = doc
            .logical
            .state
            .iter()
            .any(|f| f.required && f.name != m.name);
        if !required_others {
            test_def(&mut w, "test_messages_form(client)", |w| {
                w.line(format!(
                    "body = {json}.dumps({{\"messages\": [{{\"role\": \"user\", \"content\": \"Hello\"}}]}})"
                ));
                w.line("r = post(client, body)");
                w.line("assert r.status_code == 200, r.text");
                w.line("assert r.json()[\"result\"][\"messages\"][0][\"content\"] == \"Hello\"");
            });
        }
    }
    module_file("Drive the service through the svc HTTP contract.", w)
}
