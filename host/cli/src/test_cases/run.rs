//! One target's part of `svc test`: its project compiled and built in the
//! run cache (or the reason it is skipped), its service started with the
//! stand-in model and HTTP tools, and the cases run in file order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use svc_ir::{Diagnostic, SourceFile};
use svc_packs::registry::Registry;
use svc_runtime::Backend;

use super::expect::{self, Answer};
use super::file::{Case, TestFile};
use crate::backends::Loaded;
use crate::launch::service::{Auth, Running};
use crate::launch::{self, build, mcp, model, process::Groups, tools, NotBuilt};

/// The compiler, shared by the targets' threads (compiles are short).
pub struct Compiler {
    pub registry: Registry,
    pub backends: HashMap<String, Backend>,
    /// The document's name in diagnostics, and where it is on disk.
    pub name: String,
    pub origin: PathBuf,
    pub text: String,
}

/// What a target's run needs.
pub struct Shared<'a> {
    pub cache: &'a Path,
    pub groups: &'a Groups,
    pub document: &'a Value,
    pub tests: &'a TestFile,
    pub compiler: &'a Mutex<Compiler>,
    pub stand_ins: &'a super::StandIns,
}

pub enum Verdict {
    Pass,
    Fail(String),
    Skipped(String),
}

pub struct CaseReport {
    pub name: String,
    pub verdict: Verdict,
    pub ms: f64,
}

pub enum TargetState {
    Ran {
        build_ms: f64,
        reused: bool,
        /// From the start of the service to the last answer.
        run_ms: f64,
    },
    /// The target refuses the graph (its reason); no case ran.
    Skipped(String),
    /// Compile, build or start failed: every case fails with this.
    Broken(String),
}

pub struct TargetReport {
    pub platform: String,
    pub state: TargetState,
    pub cases: Vec<CaseReport>,
    pub project: Option<PathBuf>,
}

/// Runs every case on `platform`.
pub fn target(shared: &Shared<'_>, platform: &str) -> TargetReport {
    let mut report = TargetReport {
        platform: platform.to_string(),
        state: TargetState::Broken(String::new()),
        cases: Vec::new(),
        project: None,
    };
    let broken = |mut report: TargetReport, why: String| {
        report.cases = shared
            .tests
            .cases
            .iter()
            .map(|c| CaseReport {
                name: c.name.clone(),
                verdict: Verdict::Fail(why.clone()),
                ms: 0.0,
            })
            .collect();
        report.state = TargetState::Broken(why);
        report
    };
    let built = match compiled_and_built(shared, platform) {
        Ok(b) => b,
        Err(NotBuilt::Compile(diags)) => {
            let errors: Vec<&Diagnostic> = diags.iter().filter(|d| d.is_error()).collect();
            let first = errors.first().map(|d| place(d)).unwrap_or_default();
            if !errors.is_empty() && errors.iter().all(|d| d.code == "unsupported") {
                report.state =
                    TargetState::Skipped(format!("{platform} refuses the graph: {first}"));
                report.cases = shared
                    .tests
                    .cases
                    .iter()
                    .map(|c| CaseReport {
                        name: c.name.clone(),
                        verdict: Verdict::Skipped(format!("{platform} refuses the graph")),
                        ms: 0.0,
                    })
                    .collect();
                return report;
            }
            let all: Vec<String> = errors.iter().map(|d| d.render()).collect();
            return broken(
                report,
                format!(
                    "the graph does not compile for {platform}: {first}\n{}",
                    all.join("\n")
                ),
            );
        }
        Err(NotBuilt::Build { log, locations }) => {
            let places: Vec<String> = locations
                .iter()
                .filter_map(|l| {
                    Some(format!(
                        "node `{}` line {}: {}",
                        l["node"].as_str()?,
                        l["line"],
                        l["message"].as_str().unwrap_or("")
                    ))
                })
                .collect();
            return broken(
                report,
                format!(
                    "the {platform} project does not build{}\n{}",
                    places.first().map(|p| format!(": {p}")).unwrap_or_default(),
                    build::tail(&log, 4 << 10)
                ),
            );
        }
        Err(NotBuilt::Other(why)) => return broken(report, why),
        Err(NotBuilt::Stopped) => return broken(report, "stopped".into()),
    };
    report.project = Some(built.project.clone());
    let started = Instant::now();
    let stand_ins = launch::random_secret().and_then(|key| {
        Ok((
            model::Model::start(key)?,
            tools::Tools::start()?,
            mcp::McpServers::start(shared.stand_ins.mcp_tools(shared.document, shared.tests))?,
        ))
    });
    let (model, tools, mcp) = match stand_ins {
        Ok(s) => s,
        Err(why) => return broken(report, why),
    };
    let mut env = built.env.clone();
    env.extend(
        shared
            .stand_ins
            .model_bases
            .iter()
            .map(|b| (b.clone(), model.base_url.clone())),
    );
    env.extend(
        shared
            .stand_ins
            .model_keys
            .iter()
            .map(|k| (k.clone(), model.key.clone())),
    );
    env.extend(
        shared
            .stand_ins
            .tool_vars
            .iter()
            .map(|(var, id)| (var.clone(), tools.url(id))),
    );
    env.extend(
        shared
            .stand_ins
            .mcp_vars
            .iter()
            .map(|(var, id)| (var.clone(), mcp.url(id))),
    );
    env.extend(shared.tests.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let auth = Auth::of(shared.document);
    let service = Running::start(
        &built.project,
        platform,
        &env,
        &auth,
        built.key.clone(),
        shared.groups,
    );
    let mut service = match service {
        Ok(s) => s,
        Err(log) => {
            return broken(
                report,
                format!(
                    "the {platform} service did not start\n{}",
                    build::tail(&log, 4 << 10)
                ),
            )
        }
    };
    let streaming = shared.document["logical"]["settings"]["streaming"] == true;
    let mut threads: HashMap<&str, String> = HashMap::new();
    for case in &shared.tests.cases {
        let asked = Instant::now();
        let stand_ins = StandIns {
            model: &model,
            tools: &tools,
            mcp: &mcp,
        };
        let verdict = one_case(case, &service, &stand_ins, streaming, &mut threads);
        report.cases.push(CaseReport {
            name: case.name.clone(),
            verdict,
            ms: launch::ms(asked),
        });
    }
    shared.groups.stop(&mut service.child);
    report.state = TargetState::Ran {
        build_ms: built.ms,
        reused: built.reused,
        run_ms: launch::ms(started),
    };
    report
}

/// The target's project in the run cache, compiled and built unless an
/// earlier run did.
fn compiled_and_built(shared: &Shared<'_>, platform: &str) -> Result<launch::Built, NotBuilt> {
    let sha = {
        let held = shared.compiler.lock().unwrap_or_else(|p| p.into_inner());
        held.backends.get(platform).map(|b| b.sha256().to_string())
    };
    let sha = sha.ok_or_else(|| NotBuilt::Other(format!("no backend for {platform}")))?;
    let bodies: Vec<(String, String)> = shared.document["bodiesByPlatform"][platform]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let source = launch::Source {
        document: shared.document,
        platform,
        backend_sha256: &sha,
        bodies: &bodies,
    };
    let mut compile = |dir: &Path| compile(shared.compiler, platform, dir);
    launch::built(
        shared.cache,
        shared.groups,
        &source,
        &mut compile,
        &mut |_| {},
        &|| false,
    )
}

fn compile(compiler: &Mutex<Compiler>, platform: &str, dir: &Path) -> Result<(), Vec<Diagnostic>> {
    let mut held = compiler.lock().unwrap_or_else(|p| p.into_inner());
    let c = &mut *held;
    let Some(backend) = c.backends.get(platform).cloned() else {
        return Err(Vec::new());
    };
    let mut source = SourceFile::new(c.name.clone(), c.text.clone()).with_origin(c.origin.clone());
    let previous = dir.join(".svc-build-manifest.json").is_file();
    svc_compile::Compile {
        platform: Some(platform),
        out: svc_compile::Output::Dir {
            path: dir,
            force: previous,
        },
        ..svc_compile::Compile::default()
    }
    .run(&mut source, &Loaded(backend), &mut c.registry)
    .map(drop)
}

/// `file:line:col: message` of a diagnostic.
fn place(d: &Diagnostic) -> String {
    let at = match (&d.file, d.position) {
        (Some(f), Some(p)) => format!("{f}:{}:{}: ", p.line, p.column),
        _ => String::new(),
    };
    format!("{at}{} [{}]", d.message, d.code)
}

/// The stand-ins of one target's service.
struct StandIns<'a> {
    model: &'a model::Model,
    tools: &'a tools::Tools,
    mcp: &'a mcp::McpServers,
}

fn one_case<'a>(
    case: &'a Case,
    service: &Running,
    stand_ins: &StandIns<'_>,
    streaming: bool,
    threads: &mut HashMap<&'a str, String>,
) -> Verdict {
    let (model, tools) = (stand_ins.model, stand_ins.tools);
    let mut body = Map::new();
    if let Some(state) = &case.request.state {
        body.insert("state".into(), Value::Object(state.clone()));
    }
    if let Some(of) = &case.request.thread_of {
        match threads.get(of.as_str()) {
            Some(t) => {
                body.insert("threadId".into(), json!(t));
            }
            None => {
                return Verdict::Fail(format!(
                "case `{of}` left no thread to continue (it failed, or its answer had no threadId)"
            ))
            }
        }
    }
    if let Some(resume) = &case.request.resume {
        body.insert("resume".into(), resume.clone());
    }
    model.script(
        case.model
            .as_ref()
            .map(|replies| replies.iter().enumerate().map(scripted).collect()),
    );
    let tool_reply = |r: &super::file::ToolReply| tools::ToolReply {
        status: r.status,
        json: r.json.clone(),
        delay: Duration::from_millis(r.delay_ms),
    };
    tools.script(
        case.tools
            .iter()
            .map(|(id, replies)| (id.clone(), replies.scripted(tool_reply)))
            .collect(),
    );
    let mcp_reply = |r: &super::file::McpReply| mcp::McpReply {
        text: r.text.clone(),
        json: r.json.clone().map(Value::Object),
        is_error: r.is_error,
    };
    stand_ins.mcp.script(
        case.mcp
            .iter()
            .map(|(server, tools)| {
                let tools = tools
                    .iter()
                    .map(|(name, replies)| (name.clone(), replies.scripted(mcp_reply)))
                    .collect();
                (server.clone(), tools)
            })
            .collect(),
    );
    let headers: Vec<(String, String)> = case
        .request
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let answer = service.invoke(&Value::Object(body), &headers, streaming, &mut |_| {});
    let (status, body, events) = match answer {
        Ok(a) => a,
        Err(why) => {
            return Verdict::Fail(format!(
                "{why}\n{}",
                build::tail(&service.output(), 2 << 10)
            ));
        }
    };
    if let Some(t) = body["threadId"].as_str() {
        threads.insert(&case.name, t.to_string());
    }
    let seen = model.seen();
    if let Some(first) = seen.unanswered.first() {
        return Verdict::Fail(first.clone());
    }
    if let Some(first) = tools.seen().1.first() {
        return Verdict::Fail(first.clone());
    }
    if let Some(first) = stand_ins.mcp.unanswered().first() {
        return Verdict::Fail(first.clone());
    }
    let got = Answer {
        status,
        body: &body,
        events: events.as_deref(),
    };
    match expect::first_difference(&case.expect, &got) {
        Some(d) => Verdict::Fail(d),
        None if seen.unused > 0 => Verdict::Fail(format!(
            "{} scripted model repl{} went unused (the graph made {} model call{})",
            seen.unused,
            if seen.unused == 1 { "y" } else { "ies" },
            seen.calls,
            if seen.calls == 1 { "" } else { "s" }
        )),
        None => Verdict::Pass,
    }
}

/// What the stand-in model answers for the case's reply `i` (from 0).
fn scripted((i, r): (usize, &super::file::ModelReply)) -> model::Scripted {
    let answer = if r.cut {
        model::Answer::Cut
    } else if let Some(status) = r.status {
        model::Answer::Status {
            status,
            retry_after: r.retry_after.clone(),
        }
    } else {
        model::Answer::Reply {
            content: r.content.clone(),
            tool_calls: r
                .tool_calls
                .iter()
                .enumerate()
                .map(|(j, c)| model::ToolCall {
                    id: c
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("call_{}_{}", i + 1, j + 1)),
                    name: c.name.clone(),
                    arguments: Value::Object(c.arguments.clone()),
                })
                .collect(),
            usage: r.usage.map(|u| (u.input_tokens, u.output_tokens)),
        }
    };
    model::Scripted {
        when: r.when.clone(),
        answer,
        delay: Duration::from_millis(r.delay_ms),
    }
}
