//! Configuration files: `application.yaml` (the service's settings),
//! Spring's `application.yml` and `config/AiConfig.java` (the model client).

use svc_backend_sdk::ir::{CheckpointerKind, Document, LogFormat, LogLevel};
use svc_backend_sdk::subgraphs::all_graphs;
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{quote, runtime};

pub(super) fn ai_config(doc: &Document, pkg: &str) -> String {
    let timeout = doc.logical.settings.request_timeout_ms;
    let mut w = CodeWriter::java();
    let llm_client = runtime(&mut w, "LlmClient");
    // With settings.streaming the client streams the model's reply to a streamed run.
    let implementation = if doc.logical.settings.streaming {
        runtime(&mut w, "StreamingLlmClient")
    } else {
        llm_client.clone()
    };
    let duration = w.name("java.time", "Duration");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let configuration = w.name("org.springframework.context.annotation", "Configuration");
    let environment = w.name("org.springframework.core.env", "Environment");
    w.line("/** The model client: OpenAI-compatible chat-completions APIs (only graphs with LLM nodes have this). */")
        .line(format!("@{configuration}"));
    w.block("public class AiConfig {", "}", |w| {
        w.line("/**")
            .line(" * Each call goes to its model's provider, whose base URL and key the client reads from")
            .line(" * the variables its graph's settings.model names (a subgraph's child may name others):")
            .line(" * the environment, as Spring sees it (env.yaml's values included).")
            .line(" */")
            .line(format!("@{bean}"));
        w.block(
            format!("public {llm_client} llmClient({environment} environment) {{"),
            "}",
            |w| {
                w.line(format!(
                    "return new {implementation}(environment::getProperty, {duration}.ofMillis({timeout}));"
                ));
            },
        );
    });
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

/// The YAML files' indentation.
const INDENT: &str = "  ";

/// A YAML mapping under `key`: `key:`, then `body` one level deeper.
fn section(w: &mut CodeWriter, key: &str, body: impl FnOnce(&mut CodeWriter)) {
    w.line(format!("{key}:")).indent();
    body(w);
    w.dedent();
}

/// `src/main/resources/application.yml`: Spring's configuration.
pub(super) fn spring_yml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::text(INDENT);
    w.line("# Spring configuration compiled from the graph document.")
        .line("# SVC_HOST and SVC_PORT override the address (Application.main); SERVER_PORT works as in any Spring Boot app.");
    section(&mut w, "server", |w| {
        w.line(format!("address: \"{}\"", s.server.host))
            .line(format!("port: {}", s.server.port));
        section(w, "error", |w| {
            section(w, "whitelabel", |w| {
                w.line("enabled: false");
            });
        });
        w.line(
            "# A refused body (over 1 MiB, or a 401) is read and discarded up to 8 MiB before the",
        )
        .line(
            "# connection closes, so a client that sends it whole before reading gets the answer.",
        );
        section(w, "tomcat", |w| {
            w.line("max-swallow-size: 8MB");
        });
    });
    section(&mut w, "spring", |w| {
        section(w, "application", |w| {
            w.line(format!("name: {}", doc.id));
        });
        section(w, "main", |w| {
            w.line("banner-mode: \"off\"");
        });
        section(w, "threads", |w| {
            section(w, "virtual", |w| {
                w.line("enabled: true");
            });
        });
        section(w, "web", |w| {
            section(w, "resources", |w| {
                w.line("add-mappings: false");
            });
        });
        w.line("# The service reads JSON only: a multipart Content-Type is a 415, never parsed.");
        section(w, "servlet", |w| {
            section(w, "multipart", |w| {
                w.line("enabled: false");
            });
        });
    });
    section(&mut w, "svc", |w| {
        section(w, "security", |w| {
            w.line(format!("key: ${{{}:}}", doc.security.key_env));
        });
        // Every graph's HTTP tools, by registered name (as each graph's
        // class reads them).
        let http: Vec<(String, &str)> = all_graphs(doc)
            .into_iter()
            .flat_map(|(d, scope)| {
                d.http_tools()
                    .map(|(id, endpoint)| (scope.name(id), endpoint))
                    .collect::<Vec<_>>()
            })
            .collect();
        if !http.is_empty() {
            section(w, "tools", |w| {
                for (name, endpoint) in http {
                    let value = match endpoint.strip_prefix("env:") {
                        Some(var) => format!("${{{var}:}}"),
                        None => endpoint.to_string(),
                    };
                    section(w, &name, |w| {
                        // A YAML double-quoted scalar: `\` and `"` escaped.
                        let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
                        w.line(format!("endpoint: \"{quoted}\""));
                    });
                }
            });
        }
    });
    section(&mut w, "logging", |w| {
        section(w, "level", |w| {
            w.line(format!("root: {}", log_level(doc)));
            if s.checkpointer.env().is_some() {
                w.line("# The threads' connection pool: its warnings only.");
                w.line("com.zaxxer.hikari: WARN");
            }
        });
        if s.logging.format == LogFormat::Json {
            section(w, "structured", |w| {
                section(w, "format", |w| {
                    w.line("console: ecs");
                });
            });
        }
    });
    w.finish()
}

/// `application.yaml`: the svc settings of the service, for people and tools.
pub(super) fn application_yaml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut w = CodeWriter::text(INDENT);
    w.line("# Settings compiled from the graph document. Spring reads src/main/resources/application.yml,")
        .line("# which is derived from the same settings; change the graph and recompile instead of editing either.");
    section(&mut w, "app", |w| {
        w.line(format!("name: {}", doc.id))
            .line(format!("version: \"{}\"", doc.version));
    });
    section(&mut w, "graph", |w| {
        w.line(format!("entrypoint: {}", doc.id))
            .line(format!("max_steps: {}", s.max_steps))
            .line(format!("request_timeout_ms: {}", s.request_timeout_ms));
        let c = &s.checkpointer;
        if c.kind != CheckpointerKind::None {
            section(w, "checkpointer", |w| {
                w.line(format!("type: {}", c.kind.as_str()));
                match (c.kind, c.env()) {
                    (CheckpointerKind::Sqlite, Some(var)) => w.line(format!("path_env: {var}")),
                    (CheckpointerKind::Postgres, Some(var)) => w.line(format!("url_env: {var}")),
                    _ => w,
                };
            });
        }
    });
    section(&mut w, "server", |w| {
        w.line(format!("host: \"{}\"", s.server.host))
            .line(format!("port: {}", s.server.port));
        section(w, "auth", |w| {
            w.line(format!("type: {}", doc.security.auth.as_str()))
                .line(format!("key_env: {}", doc.security.key_env));
        });
    });
    if let Some(m) = &s.model {
        section(&mut w, "model", |w| {
            w.line(format!("provider: {}", quote(&m.provider)))
                .line(format!("name: {}", quote(&m.name)))
                .line(format!("base_url_env: {}", m.base_url_env))
                .line(format!("api_key_env: {}", m.api_key_env));
        });
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::spring_yml;

    #[test]
    fn a_literal_endpoint_is_one_yaml_scalar() {
        let text = include_str!("../../../../fixtures/valid/tools_http_native.graph.json")
            .replace("env:CRM_URL", r#"https://crm.example/a\"b\\c"#);
        let doc = svc_backend_sdk::ir::SourceFile::new("t.graph.json", text)
            .parse()
            .unwrap();
        let yml = spring_yml(&doc);
        // The URL `https://crm.example/a"b\c`, escaped as YAML reads it back.
        assert!(
            yml.contains(r#"endpoint: "https://crm.example/a\"b\\c""#),
            "{yml}"
        );
    }
}
