//! Configuration files: `application.yaml` (the service's settings),
//! Spring's `application.yml` and `config/AiConfig.java`.

use svc_backend_sdk::ir::{Document, LogFormat, LogLevel};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{quote, runtime};

pub(super) fn ai_config(doc: &Document, pkg: &str) -> String {
    let timeout = doc.logical.settings.request_timeout_ms;
    let mut w = CodeWriter::java();
    let llm_client = runtime(&mut w, pkg, "LlmClient");
    let duration = w.name("java.time", "Duration");
    let value = w.name("org.springframework.beans.factory.annotation", "Value");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let configuration = w.name("org.springframework.context.annotation", "Configuration");
    w.lines(&format!(
        r#"/** The model provider: an OpenAI-compatible chat-completions API (only graphs with LLM nodes have this). */
@{configuration}
public class AiConfig {{
    @{bean}
    public {llm_client} llmClient(@{value}("${{svc.llm.base-url}}") String baseUrl,
            @{value}("${{svc.llm.api-key:}}") String apiKey) {{
        return new {llm_client}(baseUrl, apiKey, {duration}.ofMillis({timeout}));
    }}
}}
"#
    ));
    w.finish_file(&format!("package com.svc.{pkg}.config;\n\n"))
}

fn log_level(doc: &Document) -> &'static str {
    match doc.logical.settings.logging.level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Info => "INFO",
        LogLevel::Warning => "WARN",
        LogLevel::Error => "ERROR",
    }
}

/// `src/main/resources/application.yml`: Spring's configuration.
pub(super) fn spring_yml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut out = format!(
        "# Spring configuration compiled from the graph document.\n\
         # SVC_HOST and SVC_PORT override the address (Application.main); SERVER_PORT works as in any Spring Boot app.\n\
         server:\n  address: \"{host}\"\n  port: {port}\n  error:\n    whitelabel:\n      enabled: false\n\
         \x20 # A refused body (over 1 MiB, or a 401) is read and discarded up to 8 MiB before the\n\
         \x20 # connection closes, so a client that sends it whole before reading gets the answer.\n\
         \x20 tomcat:\n    max-swallow-size: 8MB\n\
         spring:\n  application:\n    name: {id}\n  main:\n    banner-mode: \"off\"\n  threads:\n    virtual:\n      enabled: true\n  web:\n    resources:\n      add-mappings: false\n\
         \x20 # The service reads JSON only: a multipart Content-Type is a 415, never parsed.\n\
         \x20 servlet:\n    multipart:\n      enabled: false\n\
         svc:\n  security:\n    key: ${{{key}:}}\n",
        host = s.server.host,
        port = s.server.port,
        id = doc.id,
        key = doc.security.key_env,
    );
    if doc.has_llm_nodes() {
        let (base_env, key_env) = s
            .model
            .as_ref()
            .map(|m| (m.base_url_env.as_str(), m.api_key_env.as_str()))
            .unwrap_or(("OPENAI_BASE_URL", "OPENAI_API_KEY"));
        out.push_str(&format!(
            "  llm:\n    base-url: ${{{base_env}:https://api.openai.com/v1}}\n    api-key: ${{{key_env}:}}\n"
        ));
    }
    let http: Vec<_> = doc.http_tools().collect();
    if !http.is_empty() {
        out.push_str("  tools:\n");
        for (id, endpoint) in http {
            let value = match endpoint.strip_prefix("env:") {
                Some(var) => format!("${{{var}:}}"),
                None => endpoint.to_string(),
            };
            out.push_str(&format!("    {id}:\n      endpoint: \"{value}\"\n"));
        }
    }
    out.push_str(&format!(
        "logging:\n  level:\n    root: {}\n",
        log_level(doc)
    ));
    if doc.logical.settings.logging.format == LogFormat::Json {
        out.push_str("  structured:\n    format:\n      console: ecs\n");
    }
    out
}

/// `application.yaml`: the svc settings of the service, for people and tools.
pub(super) fn application_yaml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut out = format!(
        "# Settings compiled from the graph document. Spring reads src/main/resources/application.yml,\n\
         # which is derived from the same settings; change the graph and recompile instead of editing either.\n\
         app:\n  name: {id}\n  version: \"{version}\"\n\
         graph:\n  entrypoint: {id}\n  max_steps: {steps}\n  request_timeout_ms: {timeout}\n\
         server:\n  host: \"{host}\"\n  port: {port}\n  auth:\n    type: {auth}\n    key_env: {key}\n",
        id = doc.id,
        version = doc.version,
        steps = s.max_steps,
        timeout = s.request_timeout_ms,
        host = s.server.host,
        port = s.server.port,
        auth = doc.security.auth.as_str(),
        key = doc.security.key_env,
    );
    if let Some(m) = &s.model {
        out.push_str(&format!(
            "model:\n  provider: {}\n  name: {}\n  base_url_env: {}\n  api_key_env: {}\n",
            quote(&m.provider),
            quote(&m.name),
            m.base_url_env,
            m.api_key_env
        ));
    }
    out
}
