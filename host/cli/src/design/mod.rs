//! `svc design`: the visual editor (`docs/designer.md`). `server` answers
//! HTTP on loopback, `api` does what the editor asks through the compiler,
//! `run` builds, starts and calls the services a run panel asks for,
//! `model` converts between the editor's flat model and IR v2,
//! `format` writes documents deterministically, and `export_dir` keeps
//! exports inside the document's folder.

mod api;
mod export_dir;
mod format;
pub mod model;
mod run;
mod server;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;

use crate::backends::EngineArgs;
use crate::packs::PluginArgs;

#[derive(Debug, Args)]
pub struct DesignArgs {
    /// The graph document to edit (created on the first save if it does
    /// not exist).
    document: Option<PathBuf>,
    /// The loopback port to listen on (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Do not open a browser; only print the address.
    #[arg(long)]
    no_open: bool,
    #[command(flatten)]
    plugins: PluginArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(args: &DesignArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("svc design: {message}");
        ExitCode::from(1)
    };
    let runtime = Arc::new(args.engine.runtime());
    let registry = match args.plugins.registry(Arc::clone(&runtime)) {
        Ok(r) => r,
        Err(d) => return fail(d.render()),
    };
    let token = match crate::launch::random_secret() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let server = match tiny_http::Server::http(("127.0.0.1", args.port.unwrap_or(0))) {
        Ok(s) => s,
        Err(e) => {
            return fail(format!(
                "cannot listen on 127.0.0.1:{}: {e}",
                args.port.unwrap_or(0)
            ))
        }
    };
    let Some(port) = server.server_addr().to_ip().map(|a| a.port()) else {
        return fail("the server has no IP address".into());
    };
    let runner = match run::Runner::new(args.engine.cache_dir()) {
        Ok(r) => Arc::new(r),
        Err(e) => return fail(e),
    };
    // The services a run started stop with the designer, also on Ctrl+C
    // and SIGTERM (each in its own process group, so their children too).
    let stopping = Arc::clone(&runner);
    if let Err(e) = ctrlc::set_handler(move || {
        stopping.shutdown();
        std::process::exit(130);
    }) {
        return fail(format!("cannot handle Ctrl+C: {e}"));
    }
    let mut api = api::Api {
        path: args.document.clone(),
        runtime,
        backend_override: args.engine.backend.clone(),
        registry,
        capabilities: None,
        loaded: std::collections::HashMap::new(),
    };
    // Load the backends and connectors before the page asks for them, so
    // it is interactive as soon as it has loaded.
    api.warm();
    let url = format!("http://127.0.0.1:{port}/?token={token}");
    let what = args
        .document
        .as_ref()
        .map_or("a new document".to_string(), |d| d.display().to_string());
    // Whoever started us may stop reading (a closed pipe): keep serving.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "svc design: editing {what} at {url}");
    let _ = writeln!(
        out,
        "(Ctrl+C stops it; only this machine can reach it, and only with the token)"
    );
    let _ = out.flush();
    if !args.no_open {
        open_browser(&url);
    }
    server::serve(&server, port, &token, &Arc::new(Mutex::new(api)), &runner);
    runner.shutdown();
    ExitCode::SUCCESS
}

/// Best effort: the address is printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if started.is_err() {
        eprintln!("(could not start {opener}: open the address above yourself)");
    }
}
