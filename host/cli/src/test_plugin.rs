//! `svc test-plugin COMPONENT.wasm`: the test kit for backend and connector
//! authors. A backend is run against every fixture with its declared
//! outcome; a connector has its `info()` checked and every fixture graph
//! that uses it compiled for each platform it names there.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use svc_compile::testkit::{self, FixtureResult};
use svc_runtime::PluginError;

use crate::backends::{Backends, EngineArgs};

#[derive(Debug, Args)]
pub struct TestPluginArgs {
    /// The backend or connector component to test.
    component: PathBuf,
    /// The fixtures directory (default: ./fixtures).
    #[arg(long, default_value = "fixtures")]
    fixtures: PathBuf,
    #[command(flatten)]
    engine: EngineArgs,
}

fn fail(message: String) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(1)
}

pub fn run(args: &TestPluginArgs) -> ExitCode {
    let runtime = Arc::new(args.engine.runtime());
    let bytes = match std::fs::read(&args.component) {
        Ok(b) => b,
        Err(e) => {
            return fail(format!(
                "error: cannot read `{}`: {e}",
                args.component.display()
            ))
        }
    };
    let name = args.component.display().to_string();
    let backends = Backends {
        runtime: &runtime,
        override_path: None,
    };
    let (label, results) = match runtime.load_backend(&name, &bytes).and_then(|b| b.info()) {
        Ok(info) => {
            let backends = Backends {
                runtime: &runtime,
                override_path: Some(args.component.clone()),
            };
            let results = testkit::run(&args.fixtures, &info.platform, &backends);
            (info.platform, results)
        }
        // Not a backend: perhaps a connector.
        Err(PluginError::WrongWorld { .. }) => {
            let connector = match runtime.load_connector(&name, &bytes) {
                Ok(c) => c,
                Err(e) => {
                    return fail(format!(
                        "{}\n  = note: the component is neither a backend nor a connector",
                        svc_compile::plugin_diag(&e).render()
                    ))
                }
            };
            let info = match connector.info() {
                Ok(i) => i,
                Err(e) => return fail(svc_compile::plugin_diag(&e).render()),
            };
            let problems = svc_packs::testkit::check_info(&info);
            let mut results = vec![FixtureResult {
                fixture: args.component.clone(),
                passed: problems.is_empty(),
                detail: if problems.is_empty() {
                    format!(
                        "info(): {} {} for {}",
                        info.id,
                        info.version,
                        info.platforms.join(", ")
                    )
                } else {
                    format!("info(): {}", problems.join("; "))
                },
            }];
            let pack = svc_packs::testkit::pack_of_component(&name, bytes.clone(), &info);
            let used =
                svc_packs::testkit::run(&args.fixtures, pack, Arc::clone(&runtime), &backends);
            if used.is_empty() {
                results.push(FixtureResult {
                    fixture: args.fixtures.clone(),
                    passed: false,
                    detail: format!(
                        "no fixture graph uses `{}` in codegen.templates; add one (a pack project's example/ works)",
                        info.id
                    ),
                });
            }
            results.extend(used);
            (info.id, results)
        }
        Err(e) => return fail(svc_compile::plugin_diag(&e).render()),
    };
    let failed = results.iter().filter(|r| !r.passed).count();
    for r in &results {
        let mark = if r.passed { "pass" } else { "FAIL" };
        println!("{mark} {} — {}", r.fixture.display(), r.detail.trim_end());
    }
    println!(
        "\n{label}: {} checks, {} passed, {failed} failed",
        results.len(),
        results.len() - failed
    );
    if results.is_empty() {
        eprintln!("no fixtures found under `{}`", args.fixtures.display());
        return ExitCode::from(1);
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
