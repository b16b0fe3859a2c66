//! How results and diagnostics are printed: for people, or as JSON for
//! tools such as a designer.

use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use serde_json::json;
use svc_compile::reuse::Made;
use svc_ir::Diagnostic;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

/// Prints diagnostics and returns exit code 1.
pub fn fail(format: Format, diags: &[Diagnostic]) -> ExitCode {
    match format {
        Format::Human => {
            for d in diags {
                eprintln!("{}\n", d.render());
            }
            let n = diags.iter().filter(|d| d.is_error()).count();
            eprintln!(
                "{n} error{}; nothing was written",
                if n == 1 { "" } else { "s" }
            );
        }
        Format::Json => {
            println!("{}", json!({ "ok": false, "diagnostics": diags }));
        }
    }
    ExitCode::from(1)
}

/// Prints a successful compile, with its warnings.
pub fn compiled(format: Format, out: &Path, g: &Made) {
    match format {
        Format::Human => {
            for d in &g.warnings {
                eprintln!("{}\n", d.render());
            }
            println!(
                "compiled `{}` for {} into {} ({} files, backend {} {}{})",
                g.document_id,
                g.platform,
                out.display(),
                g.files.len(),
                g.backend,
                g.backend_version,
                match g.warnings.len() {
                    0 => String::new(),
                    1 => "; 1 warning".to_string(),
                    n => format!("; {n} warnings"),
                }
            )
        }
        Format::Json => println!(
            "{}",
            json!({
                "ok": true,
                "platform": g.platform,
                "out": out.display().to_string(),
                "files": g.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
                "diagnostics": g.warnings,
            })
        ),
    }
}

/// `svc compile --timings`: each phase's milliseconds, in order, and their
/// total, as one JSON object on stderr (stdout keeps the compile's own
/// output, in either format).
pub fn timings(phases: &[(&'static str, std::time::Duration)]) {
    let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    let total: std::time::Duration = phases.iter().map(|(_, d)| *d).sum();
    let mut by_phase = serde_json::Map::new();
    for (name, d) in phases {
        by_phase.insert((*name).to_string(), json!(ms(*d)));
    }
    eprintln!(
        "{}",
        json!({ "timings_ms": by_phase, "total_ms": ms(total) })
    );
}
