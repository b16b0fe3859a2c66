//! What python-svc adds to agents, end to end: the graph of the e2e test
//! `agents` (which holds every target to python-svc's answers) compiled for
//! python-svc, with the documents of its rag node copied into the project,
//! and guardrails and policies added to the project the way a user would,
//! answering with their contract codes; `GET /info` lists the agents.

use std::time::Duration;

use super::agents::{graph, model_reply, path_child, write_documents, write_json};
use serde_json::{json, Value};
use svc_tests::http::{Reply, Stub};
use svc_tests::service::{check_project, compile, require_python_sdk, Project, Service};

const KEY: &str = "agents-key-7c1d";

/// The user's own guardrails and policies, added the way `svc new` projects
/// grow them: a module per component, imported by its package.
fn add_guardrails_and_policies(project: &Project) {
    let app = project.path().join("app");
    std::fs::write(
        app.join("guardrails/checks.py"),
        "\"\"\"Checks added by the team.\"\"\"\n\nfrom svc import input_guardrail, output_guardrail\n\n\n\
         @input_guardrail(\"no_forbidden_words\")\ndef no_forbidden_words(state: dict) -> bool:\n    \
         return \"forbidden\" not in state.get(\"question\", \"\")\n\n\n\
         @output_guardrail(\"no_shipping_talk\")\ndef no_shipping_talk(state: dict) -> bool:\n    \
         return state.get(\"intent\") != \"shipping\"\n",
    )
    .unwrap();
    std::fs::write(
        app.join("guardrails/__init__.py"),
        "\"\"\"Guardrails.\"\"\"\n\nfrom . import checks  # noqa: F401\n",
    )
    .unwrap();
    std::fs::write(
        app.join("policies/rules.py"),
        "\"\"\"Policies added by the team.\"\"\"\n\nfrom svc import business_policy\n\n\n\
         @business_policy(\"no_run\", priority=10)\ndef no_run(context: dict) -> str:\n    \
         state = context.get(\"state\") or {}\n    \
         return \"deny\" if \"deny-run\" in state.get(\"question\", \"\") else \"allow\"\n\n\n\
         @business_policy(\"no_writer_delegation\", priority=1)\ndef no_writer(context: dict) -> str:\n    \
         if context[\"action\"] == \"delegate\" and context[\"agent\"] == \"writer\":\n        \
         return \"deny\" if \"no-writer\" in context[\"task\"] else \"allow\"\n    \
         return \"allow\"\n",
    )
    .unwrap();
    std::fs::write(
        app.join("policies/__init__.py"),
        "\"\"\"Policies.\"\"\"\n\nfrom . import rules  # noqa: F401\n",
    )
    .unwrap();
}

#[test]
fn python_guardrails_policies_and_info_over_http() {
    if !require_python_sdk() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write_documents(dir.path());
    std::fs::create_dir_all(dir.path().join("parts")).unwrap();
    write_json(&dir.path().join("parts/summary.graph.json"), &path_child());
    let main_doc = dir.path().join("agents.graph.json");
    write_json(&main_doc, &graph());

    let llm = Stub::start(model_reply).unwrap();
    let crm = Stub::start(|req| {
        Reply::Json(
            200,
            json!({"source": "crm", "asked": req.json()}).to_string(),
        )
    })
    .unwrap();

    let project = compile("python-svc", &main_doc).expect("agents graph compiles");
    // The documents were copied into the project at compile time.
    let copied = std::fs::read_to_string(project.path().join("app/documents/search.json")).unwrap();
    let copied: Value = serde_json::from_str(&copied).unwrap();
    let ids: Vec<&str> = copied
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["more/returns.txt", "refunds.md", "shipping.md"]);

    let llm_url = format!("{}/v1", llm.url());
    let crm_url = format!("{}/crm", crm.url());
    // No peer runs here: no request reaches the remote agent.
    let env = [
        ("SVC_API_KEY", KEY),
        ("OPENAI_BASE_URL", llm_url.as_str()),
        ("OPENAI_API_KEY", "stub-key"),
        ("CRM_URL", crm_url.as_str()),
        ("PEER_URL", "http://127.0.0.1:9"),
        ("PEER_API_KEY", "unused-peer-key"),
    ];
    // The project's own checks first, then the service with the team's
    // guardrails and policies added.
    check_project(&project, "python-svc").unwrap();
    add_guardrails_and_policies(&project);
    let s = Service::launch(&project, &env, Duration::from_secs(120)).unwrap();
    let invoke = |question: &str, mode: &str| {
        let body = json!({"state": {"question": question, "mode": mode}}).to_string();
        let r = s
            .send(
                "POST",
                "/invoke",
                &[("Content-Type", "application/json"), ("X-API-Key", KEY)],
                body.as_bytes(),
            )
            .unwrap();
        (r.status, r.json())
    };
    let error_of = |(status, body): (u16, Value), want_status: u16, code: &str| -> Value {
        assert_eq!(status, want_status, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        body["error"]["details"].clone()
    };

    // Guardrails and policies, with their codes and details.
    let d = error_of(invoke("a forbidden word", "worker"), 422, "input_blocked");
    assert_eq!(d["guardrail"], "no_forbidden_words", "{d}");
    let d = error_of(
        invoke("when will you ship", "intent"),
        500,
        "output_blocked",
    );
    assert_eq!(d["guardrail"], "no_shipping_talk", "{d}");
    let d = error_of(invoke("please deny-run", "worker"), 403, "policy_denied");
    assert_eq!(d["policy"], "no_run", "{d}");
    let d = error_of(invoke("no-writer please", "team"), 403, "policy_denied");
    assert_eq!(d["policy"], "no_writer_delegation", "{d}");
    // What the policies allow runs as without them.
    let (status, body) = invoke("What is a refund?", "team");
    assert_eq!(status, 200, "{body}");

    // GET /info shows every agent with its limits.
    let r = s.send("GET", "/info", &[("X-API-Key", KEY)], b"").unwrap();
    let info = r.json();
    assert_eq!(info["agents"]["looper"]["maxTurns"], 2, "{info}");
    assert_eq!(info["agents"]["team"]["maxRounds"], 10, "{info}");
    assert_eq!(info["agents"]["peer"]["kind"], "remote", "{info}");
}
