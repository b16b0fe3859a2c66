//! `tests/test_service.py`: pytest tests that drive the generated service
//! through the HTTP contract with FastAPI's TestClient. Model and HTTP tool
//! calls go to a stub server the tests start on loopback.

use serde_json::{json, Value};
use svc_backend_sdk::ir::{Auth, Document, FieldType};
use svc_backend_sdk::samples::{bad_requests, sample_state, tool_reply};

use crate::nodes::{import_block, Modules};
use crate::py::{quote, Expr};

/// A JSON text as a Python string literal.
fn js(v: &Value) -> String {
    quote(&v.to_string())
}

pub fn service_tests(doc: &Document) -> String {
    let auth = doc.security.auth;
    let modules = Modules::of(doc);
    let llm = doc.has_llm_nodes();
    let http: Vec<(&str, &str)> = doc.http_tools().collect();
    let connector_env = svc_backend_sdk::connectors::env_refs(doc);
    let stub = llm || !http.is_empty() || !connector_env.is_empty();
    let sample = Value::Object(sample_state(doc));
    let envelope = json!({ "state": sample });

    let mut out = String::from("\"\"\"Drive the service through the svc HTTP contract.\"\"\"\n\n");
    let literal_tools = http.iter().any(|(_, e)| !e.starts_with("env:"));
    let mut imports = vec![
        "import json".to_string(),
        "from pathlib import Path".to_string(),
        "import pytest".to_string(),
        "from fastapi.testclient import TestClient".to_string(),
        "from svc.server import create_app".to_string(),
    ];
    if stub {
        imports.push("import threading".into());
        imports.push("from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer".into());
    }
    if literal_tools {
        imports.push("from dataclasses import replace".into());
        imports.push("from app import tools".into());
    }
    out.push_str(&import_block(&imports));
    out.push_str("\n\n");
    out.push_str("ROOT = Path(__file__).resolve().parent.parent\nKEY = \"test-credential-0123\"\n");
    let header = match auth {
        Auth::None => "{}".to_string(),
        Auth::ApiKey => "{\"X-API-Key\": KEY}".to_string(),
        Auth::Bearer => "{\"Authorization\": f\"Bearer {KEY}\"}".to_string(),
    };
    out.push_str(&format!("AUTH = {header}\n"));
    out.push_str(&format!("SAMPLE = {}\n", js(&envelope)));

    if stub {
        out.push_str("\n\nclass Upstream(BaseHTTPRequestHandler):\n");
        out.push_str("    \"\"\"Answers model and HTTP tool calls, so tests never reach the network.\"\"\"\n\n");
        out.push_str("    def do_POST(self):\n");
        out.push_str("        self.rfile.read(int(self.headers.get(\"Content-Length\") or 0))\n");
        let mut replies = vec![(
            "\"/v1/chat/completions\"".to_string(),
            js(
                &json!({"choices": [{"message": {"role": "assistant", "content": "first idea\nsecond idea"}}]}),
            ),
        )];
        for (id, _) in &http {
            replies.push((quote(&format!("/tools/{id}")), js(&tool_reply(doc, id))));
        }
        for (node, _) in &connector_env {
            replies.push((quote(&format!("/connectors/{node}")), quote("{}")));
        }
        let dict = Expr::Dict(
            replies
                .into_iter()
                .map(|(k, v)| (k, Expr::atom(v)))
                .collect(),
        );
        for line in dict.render(8, "replies = ", "") {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("        body = replies.get(self.path)\n");
        out.push_str("        self.send_response(200 if body else 404)\n");
        out.push_str("        self.send_header(\"Content-Type\", \"application/json\")\n");
        out.push_str("        self.end_headers()\n");
        out.push_str("        self.wfile.write((body or \"{}\").encode())\n\n");
        out.push_str("    def log_message(self, *args):\n        pass\n");
    }

    out.push_str("\n\n@pytest.fixture\ndef client(monkeypatch):\n");
    if auth != Auth::None {
        out.push_str(&format!(
            "    monkeypatch.setenv({}, KEY)\n",
            quote(&doc.security.key_env)
        ));
    }
    if stub {
        out.push_str("    server = ThreadingHTTPServer((\"127.0.0.1\", 0), Upstream)\n");
        out.push_str("    serve = {\"target\": server.serve_forever, \"kwargs\": {\"poll_interval\": 0.05}}\n");
        out.push_str("    threading.Thread(**serve, daemon=True).start()\n");
        out.push_str("    base = f\"http://127.0.0.1:{server.server_port}\"\n");
        if llm {
            if let Some(m) = &doc.logical.settings.model {
                out.push_str(&format!(
                    "    monkeypatch.setenv({}, base + \"/v1\")\n",
                    quote(&m.base_url_env)
                ));
                out.push_str(&format!(
                    "    monkeypatch.setenv({}, \"stub-key\")\n",
                    quote(&m.api_key_env)
                ));
            }
        }
        for (id, endpoint) in &http {
            let path = quote(&format!("/tools/{id}"));
            match endpoint.strip_prefix("env:") {
                Some(var) => out.push_str(&format!(
                    "    monkeypatch.setenv({}, base + {path})\n",
                    quote(var)
                )),
                None => {
                    let m = modules.tool(id);
                    out.push_str(&format!(
                        "    stub_tool = replace(tools.{m}.TOOL, endpoint=base + {path})\n    monkeypatch.setattr(tools.{m}, \"TOOL\", stub_tool)\n"
                    ));
                }
            }
        }
    }
    // `env:NAME` values of connector configs point at the stub.
    for (node, var) in &connector_env {
        out.push_str(&format!(
            "    monkeypatch.setenv({}, base + {})\n",
            quote(var),
            quote(&format!("/connectors/{node}"))
        ));
    }
    out.push_str(
        "    with TestClient(create_app(root=ROOT)) as test_client:\n        yield test_client\n",
    );
    if stub {
        out.push_str("    server.shutdown()\n");
    }

    out.push_str(
        "\n\ndef post(client, body, headers=None, content_type=\"application/json\"):\n\
         \x20   headers = {\"Content-Type\": content_type, **AUTH, **(headers or {})}\n\
         \x20   return client.post(\"/invoke\", content=body, headers=headers)\n",
    );
    out.push_str(
        "\n\ndef test_health_needs_no_credential(client):\n\
         \x20   r = client.get(\"/health\")\n\
         \x20   assert r.status_code == 200\n\
         \x20   assert r.json() == {\"status\": \"ok\"}\n",
    );
    out.push_str(
        "\n\ndef test_unknown_path_and_wrong_method(client):\n\
         \x20   r = client.get(\"/nowhere\", headers=AUTH)\n\
         \x20   assert r.status_code == 404\n\
         \x20   assert r.json()[\"error\"][\"code\"] == \"not_found\"\n\
         \x20   r = client.get(\"/invoke\", headers=AUTH)\n\
         \x20   assert r.status_code == 405\n\
         \x20   assert r.json()[\"error\"][\"code\"] == \"method_not_allowed\"\n",
    );
    if auth != Auth::None {
        let wrong_header = match auth {
            Auth::Bearer => "\"Authorization\": \"Bearer wrong-credential\"",
            _ => "\"X-API-Key\": \"wrong-credential\"",
        };
        out.push_str(&format!(
            "\n\ndef test_credential_is_required(client):\n\
             \x20   headers = {{\"Content-Type\": \"application/json\"}}\n\
             \x20   r = client.post(\"/invoke\", content=SAMPLE, headers=headers)\n\
             \x20   assert r.status_code == 401\n\
             \x20   assert r.json()[\"error\"][\"code\"] == \"unauthorized\"\n{}\
             \x20   wrong = {{**headers, {wrong_header}}}\n\
             \x20   r = client.post(\"/invoke\", content=SAMPLE, headers=wrong)\n\
             \x20   assert r.status_code == 401\n\
             \x20   assert \"wrong-credential\" not in r.text\n",
            if auth == Auth::Bearer {
                "    assert r.headers[\"WWW-Authenticate\"] == \"Bearer\"\n"
            } else {
                ""
            }
        ));
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
    out.push_str("\n\n");
    for line in Expr::List(cases).render(0, "BAD_REQUESTS = ", "") {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(
        "\n\n@pytest.mark.parametrize(\"name,content_type,body,status,code,field\", BAD_REQUESTS)\n\
         def test_bad_requests(client, name, content_type, body, status, code, field):\n\
         \x20   r = post(client, body, content_type=content_type)\n\
         \x20   assert r.status_code == status, name\n\
         \x20   error = r.json()[\"error\"]\n\
         \x20   assert error[\"code\"] == code, name\n\
         \x20   if field:\n\
         \x20       assert error[\"details\"][\"field\"] == field, name\n",
    );
    out.push_str(
        "\n\ndef test_body_over_one_mib_is_refused(client):\n\
         \x20   body = json.dumps({\"state\": {\"x\": \"a\" * (1 << 20)}})\n\
         \x20   r = post(client, body)\n\
         \x20   assert r.status_code == 413\n\
         \x20   assert r.json()[\"error\"][\"code\"] == \"payload_too_large\"\n",
    );
    let fields = Expr::List(
        doc.logical
            .state
            .iter()
            .map(|f| Expr::atom(quote(&f.name)))
            .collect(),
    );
    out.push_str("\n\ndef test_invoke_runs_the_graph(client):\n    r = post(client, SAMPLE)\n    assert r.status_code == 200, r.text\n    result = r.json()[\"result\"]\n");
    for line in fields.render(4, "for field in ", ":") {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("        assert field in result, field\n");
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
            out.push_str(
                "\n\ndef test_messages_form(client):\n\
                 \x20   body = json.dumps({\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]})\n\
                 \x20   r = post(client, body)\n\
                 \x20   assert r.status_code == 200, r.text\n\
                 \x20   assert r.json()[\"result\"][\"messages\"][0][\"content\"] == \"Hello\"\n",
            );
        }
    }
    out
}
