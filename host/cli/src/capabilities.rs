//! `svc capabilities`: the matrix, printed from each backend's own `info()`
//! so it can never drift from the code.

use std::process::ExitCode;

use serde_json::json;
use svc_compile::BackendSource;
use svc_runtime::BackendInfo;

use crate::backends::{Backends, EngineArgs};
use crate::output::{self, Format};

pub fn info_json(i: &BackendInfo) -> serde_json::Value {
    let c = &i.capabilities;
    json!({
        "platform": i.platform,
        "name": i.name,
        "version": i.version,
        "irVersions": i.ir_versions,
        "capabilities": {
            "nodeKinds": c.node_kinds,
            "toolKinds": c.tool_kinds,
            "transports": c.transports,
            "auth": c.auth,
            "features": c.features,
            "reasons": c.reasons.iter().map(|(k, r)| json!({"requirement": k, "reason": r})).collect::<Vec<_>>(),
        },
        "commands": {
            "setup": i.commands.setup,
            "test": i.commands.test,
            "build": i.commands.build,
            "run": i.commands.run,
        },
    })
}

fn print_human(i: &BackendInfo) {
    let c = &i.capabilities;
    let list = |v: &[String]| {
        if v.is_empty() {
            "(none)".to_string()
        } else {
            v.join(", ")
        }
    };
    println!(
        "{} — {} {} (IR {})",
        i.platform, i.name, i.version, i.ir_versions
    );
    println!("  node kinds:  {}", list(&c.node_kinds));
    println!("  tool kinds:  {}", list(&c.tool_kinds));
    println!("  transports:  {}", list(&c.transports));
    println!("  auth:        {}", list(&c.auth));
    println!("  features:    {}", list(&c.features));
    if !c.reasons.is_empty() {
        println!("  refused:");
        for (k, r) in &c.reasons {
            println!("    {k}: {r}");
        }
    }
}

pub fn run(engine: &EngineArgs, platform: Option<&str>, format: Format) -> ExitCode {
    let runtime = engine.runtime();
    let backends = Backends {
        runtime: &runtime,
        override_path: engine.backend.clone(),
    };
    let platforms: Vec<&str> = match platform {
        Some(p) => vec![p],
        None => svc_builtin::BACKENDS.iter().map(|b| b.platform).collect(),
    };
    let mut infos = Vec::new();
    let mut diags = Vec::new();
    for p in platforms {
        match backends
            .backend(p)
            .and_then(|b| b.info().map_err(|e| svc_compile::plugin_diag(&e)))
        {
            Ok(i) => infos.push(i),
            Err(d) => diags.push(d),
        }
    }
    if !diags.is_empty() {
        return output::fail(format, &diags);
    }
    match format {
        Format::Json => println!("{}", json!(infos.iter().map(info_json).collect::<Vec<_>>())),
        Format::Human => {
            for (n, i) in infos.iter().enumerate() {
                if n > 0 {
                    println!();
                }
                print_human(i);
            }
        }
    }
    ExitCode::SUCCESS
}
