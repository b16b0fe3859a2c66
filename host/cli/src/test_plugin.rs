//! `svc test-plugin COMPONENT.wasm`: the test kit for backend authors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use svc_compile::testkit;

use crate::backends::{Backends, EngineArgs};

#[derive(Debug, Args)]
pub struct TestPluginArgs {
    /// The backend component to test.
    component: PathBuf,
    /// The fixtures directory (default: ./fixtures).
    #[arg(long, default_value = "fixtures")]
    fixtures: PathBuf,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(args: &TestPluginArgs) -> ExitCode {
    let runtime = match args.engine.runtime() {
        Ok(r) => r,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(1);
        }
    };
    let bytes = match std::fs::read(&args.component) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", args.component.display());
            return ExitCode::from(1);
        }
    };
    let name = args.component.display().to_string();
    let platform = match runtime.load_backend(&name, &bytes).and_then(|b| b.info()) {
        Ok(info) => info.platform,
        Err(e) => {
            eprintln!("{}", svc_compile::plugin_diag(&e).render());
            return ExitCode::from(1);
        }
    };
    let backends = Backends {
        runtime: &runtime,
        override_path: Some(args.component.clone()),
    };
    let results = testkit::run(&args.fixtures, &platform, &backends);
    let failed = results.iter().filter(|r| !r.passed).count();
    for r in &results {
        let mark = if r.passed { "pass" } else { "FAIL" };
        println!("{mark} {} — {}", r.fixture.display(), r.detail.trim_end());
    }
    println!(
        "\n{platform}: {} fixtures, {} passed, {failed} failed",
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
