//! `svc test DOC` (`docs/testing.md`): the cases of `NAME.tests.json` run
//! against the compiled service on each target. `file` reads and checks
//! the test file, `run` runs one target (compile, build, start with the
//! stand-ins, cases in order), `expect` compares an answer with a case,
//! `report` prints the table and writes JUnit XML, `saved` turns a run of
//! the designer into a case.

mod expect;
pub mod file;
mod report;
mod run;
pub mod saved;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use serde_json::Value;
use svc_compile::BackendSource;

use crate::backends::{Backends, EngineArgs};
use crate::launch::{self, process::Groups, RunCache};
use crate::packs::PluginArgs;

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The graph document whose cases to run.
    document: PathBuf,
    /// The test file (default: NAME.tests.json beside NAME.graph.json).
    #[arg(long, value_name = "FILE")]
    cases: Option<PathBuf>,
    /// `all`, or targets separated by commas (go, python-svc, java-svc).
    #[arg(long, default_value = "all")]
    platform: String,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Keep the built projects (with --no-cache they are removed at exit)
    /// and print where they are.
    #[arg(long)]
    keep: bool,
    #[command(flatten)]
    plugins: PluginArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

/// The test file of a document: `NAME.tests.json` for `NAME.graph.json`
/// (or `NAME.json`).
pub fn cases_path(document: &Path) -> PathBuf {
    let name = document
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".graph.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name);
    document.with_file_name(format!("{stem}.tests.json"))
}

pub fn run(args: &TestArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("svc test: {message}");
        ExitCode::from(2)
    };
    let platforms: Vec<String> = if args.platform == "all" {
        svc_builtin::BACKENDS
            .iter()
            .map(|b| b.platform.to_string())
            .collect()
    } else {
        let mut list = Vec::new();
        for p in args
            .platform
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            if !svc_builtin::BACKENDS.iter().any(|b| b.platform == p) {
                return fail(format!("unknown platform `{p}`: use all, or some of go, python-svc, java-svc separated by commas"));
            }
            if !list.iter().any(|l| l == p) {
                list.push(p.to_string());
            }
        }
        if list.is_empty() {
            return fail("--platform names no target".into());
        }
        list
    };
    let doc_name = args.document.display().to_string();
    let text = match std::fs::read_to_string(&args.document) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read `{doc_name}`: {e}")),
    };
    // The document is checked by the compile of each target; its reading
    // here only finds what the cases refer to.
    let mut source = svc_ir::SourceFile::new(doc_name.clone(), text.clone());
    if let Err(diags) = source.parse() {
        return print_diagnostics(&diags);
    }
    let document: Value = serde_json::from_str(&text).unwrap_or_default();
    let cases_file = args
        .cases
        .clone()
        .unwrap_or_else(|| cases_path(&args.document));
    let cases_name = cases_file.display().to_string();
    let cases_text = match std::fs::read_to_string(&cases_file) {
        Ok(t) => t,
        Err(e) => {
            return fail(format!(
                "cannot read the test file `{cases_name}`: {e} (write the cases there, or name the file with --cases; docs/testing.md)"
            ))
        }
    };
    let stand_ins = StandIns::of(&document);
    let tests = match file::read(
        &cases_name,
        &cases_text,
        &file::Graph {
            document: &document,
        },
        &stand_ins.reserved(&document),
    ) {
        Ok(t) => t,
        Err(diags) => return print_diagnostics(&diags),
    };

    let runtime = Arc::new(args.engine.runtime());
    let registry = match args.plugins.registry(Arc::clone(&runtime)) {
        Ok(r) => r,
        Err(d) => return print_diagnostics(&[d]),
    };
    let mut backends = HashMap::new();
    for p in &platforms {
        let loaded = Backends {
            runtime: &runtime,
            override_path: args.engine.backend.clone(),
        }
        .backend(p);
        match loaded {
            Ok(b) => {
                backends.insert(p.clone(), b);
            }
            Err(d) => return print_diagnostics(&[d]),
        }
    }
    let mut cache = match RunCache::new(args.engine.cache_dir()) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    if args.keep {
        cache.keep();
    }
    let groups = Arc::new(Groups::guarded("svc test"));
    let stopping = Arc::clone(&groups);
    let temporary = cache.is_temporary().then(|| cache.dir.clone());
    // Ctrl+C and SIGTERM stop the builds and services (their groups) first.
    let _ = ctrlc::set_handler(move || {
        stopping.stop_all();
        if let Some(dir) = &temporary {
            let _ = std::fs::remove_dir_all(dir);
        }
        std::process::exit(130);
    });
    let compiler = Mutex::new(run::Compiler {
        registry,
        backends,
        name: doc_name.clone(),
        origin: args.document.clone(),
        text,
    });
    let shared = run::Shared {
        cache: &cache.dir,
        groups: &groups,
        document: &document,
        tests: &tests,
        compiler: &compiler,
        stand_ins: &stand_ins,
    };
    println!(
        "svc test {doc_name}: {} case{} on {}",
        tests.cases.len(),
        if tests.cases.len() == 1 { "" } else { "s" },
        platforms.join(", ")
    );
    // The targets at once: each builds and runs on its own toolchain.
    let reports: Vec<run::TargetReport> = std::thread::scope(|s| {
        let handles: Vec<_> = platforms
            .iter()
            .map(|p| {
                let shared = &shared;
                s.spawn(move || run::target(shared, p))
            })
            .collect();
        handles
            .into_iter()
            .zip(&platforms)
            .map(|(h, p)| {
                h.join().unwrap_or_else(|_| run::TargetReport {
                    platform: p.clone(),
                    state: run::TargetState::Broken(
                        "the run of this target stopped unexpectedly".into(),
                    ),
                    cases: Vec::new(),
                    project: None,
                })
            })
            .collect()
    });
    groups.stop_all();
    print!("{}", report::table(&tests, &reports, args.keep));
    if let Some(path) = &args.junit {
        if let Err(e) = report::junit(&doc_name, &reports, path) {
            return fail(format!(
                "cannot write the JUnit file `{}`: {e}",
                path.display()
            ));
        }
    }
    if report::passed(&reports) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The variables the stand-ins are put under: the model's base URLs and
/// keys, and each HTTP tool's endpoint variable with the tool's id.
pub struct StandIns {
    pub model_bases: Vec<String>,
    pub model_keys: Vec<String>,
    pub tool_vars: Vec<(String, String)>,
    /// Each stand-in MCP server's URL variable, with the server's id
    /// (`streamable_http` servers with an `env:NAME` URL).
    pub mcp_vars: Vec<(String, String)>,
}

impl StandIns {
    pub fn of(document: &Value) -> StandIns {
        let (model_bases, model_keys) = launch::model_variables(document);
        let tool_vars = file::Graph { document }
            .http_tools()
            .into_iter()
            .filter_map(|(id, endpoint)| {
                Some((endpoint.strip_prefix("env:")?.to_string(), id.to_string()))
            })
            .collect();
        let mcp_vars = file::Graph { document }
            .mcp_servers()
            .into_iter()
            .filter(|(_, transport, _)| *transport == "streamable_http")
            .filter_map(|(id, _, url)| {
                Some((url.strip_prefix("env:")?.to_string(), id.to_string()))
            })
            .collect();
        StandIns {
            model_bases,
            model_keys,
            tool_vars,
            mcp_vars,
        }
    }

    /// The tools each stand-in MCP server lists: the graph's `mcp` tools of
    /// that server, and those any case scripts for it.
    pub fn mcp_tools(
        &self,
        document: &Value,
        tests: &file::TestFile,
    ) -> BTreeMap<String, BTreeSet<String>> {
        let mut tools: BTreeMap<String, BTreeSet<String>> = self
            .mcp_vars
            .iter()
            .map(|(_, id)| (id.clone(), BTreeSet::new()))
            .collect();
        for (server, tool) in (file::Graph { document }).mcp_tools() {
            if let Some(t) = tools.get_mut(server) {
                t.insert(tool.to_string());
            }
        }
        for case in &tests.cases {
            for (server, scripted) in &case.mcp {
                if let Some(t) = tools.get_mut(server) {
                    t.extend(scripted.keys().cloned());
                }
            }
        }
        tools
    }

    /// What a test file's `env` may not set.
    pub fn reserved(&self, document: &Value) -> Vec<String> {
        let key_env = launch::service::Auth::of(document).key_env;
        self.model_bases
            .iter()
            .chain(&self.model_keys)
            .cloned()
            .chain(
                self.tool_vars
                    .iter()
                    .chain(&self.mcp_vars)
                    .map(|(v, _)| v.clone()),
            )
            .chain([key_env, "SVC_HOST".into(), "SVC_PORT".into()])
            .collect()
    }
}

/// The text of `NAME.tests.json` beside the document, if there is one.
pub fn read_beside(document_path: &Path) -> Option<String> {
    std::fs::read_to_string(cases_path(document_path)).ok()
}

/// For `svc compile`: the graph's test cases, when `NAME.tests.json` is
/// beside the document, checked and bundled for the backend (the option
/// `testCases`): the cases as written, the file's `env`, the variables the
/// stand-ins go under, the auth scheme and whether the graph streams. The
/// project's own tests run them (docs/testing.md).
///
/// `cases_text` is the file as [`read_beside`] read it.
pub fn bundle(
    document_path: &Path,
    text: &str,
    cases_text: &str,
) -> Result<Option<String>, Vec<svc_ir::Diagnostic>> {
    let path = cases_path(document_path);
    // A document that is not JSON is reported by the compile.
    let Ok(document) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    let stand_ins = StandIns::of(&document);
    let name = path.display().to_string();
    let tests = file::read(
        &name,
        cases_text,
        &file::Graph {
            document: &document,
        },
        &stand_ins.reserved(&document),
    )?;
    let raw: Value = serde_json::from_str(cases_text).unwrap_or_default();
    let auth = launch::service::Auth::of(&document);
    let bundle = serde_json::json!({
        "auth": auth.scheme,
        "keyEnv": auth.key_env,
        "streaming": document["logical"]["settings"]["streaming"] == true,
        "modelBaseVars": stand_ins.model_bases,
        "modelKeyVars": stand_ins.model_keys,
        "toolVars": stand_ins.tool_vars.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "env": raw.get("env").cloned().unwrap_or_else(|| serde_json::json!({})),
        "mcpVars": stand_ins.mcp_vars.iter().cloned().collect::<BTreeMap<_, _>>(),
        "mcpTools": stand_ins.mcp_tools(&document, &tests),
        "cases": raw["cases"],
    });
    let mut bundle = bundle;
    // An MCP server no stand-in can replace (stdio, a fixed URL) is opened
    // by the service before it serves: the runners skip, saying why.
    let graph = file::Graph {
        document: &document,
    };
    if let Some((id, transport, _)) = graph
        .mcp_servers()
        .into_iter()
        .find(|(id, _, _)| !stand_ins.mcp_vars.iter().any(|(_, s)| s == id))
    {
        bundle["skip"] = serde_json::json!(format!(
            "MCP server `{id}` ({transport}) has no stand-in: give it transport streamable_http and an env:NAME url to test this graph"
        ));
    }
    let mut text = serde_json::to_string_pretty(&bundle).unwrap_or_default();
    text.push('\n');
    Ok(Some(text))
}

fn print_diagnostics(diags: &[svc_ir::Diagnostic]) -> ExitCode {
    for d in diags {
        eprintln!("{}", d.render());
    }
    ExitCode::from(2)
}
