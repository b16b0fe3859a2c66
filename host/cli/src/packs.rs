//! `svc pack`, `svc validate-pack`, and the connector packs a compile uses
//! (`--plugins PATH...` and the default plugin directory).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use svc_ir::Diagnostic;
use svc_packs::build::{pack, PackOptions, Packed};
use svc_packs::registry::{default_plugin_dir, Registry};
use svc_runtime::Runtime;

use crate::backends::{Backends, EngineArgs};
use crate::output::{self, Format};

/// Where a compile finds connector packs.
#[derive(Debug, Clone, Args)]
pub struct PluginArgs {
    /// Connector packs (.svc-pack.zip files or directories of them) to use,
    /// besides the default plugin directory ($SVC_PLUGIN_DIR, else
    /// $XDG_DATA_HOME/svc/plugins, else ~/.local/share/svc/plugins).
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub plugins: Vec<PathBuf>,
}

impl PluginArgs {
    /// The registry of every pack on the plugin paths. Packs are read and
    /// checked whole here; their components load when a node needs them.
    pub fn registry(&self, runtime: Arc<Runtime>) -> Result<Registry, Diagnostic> {
        let mut registry = Registry::new(runtime);
        for path in &self.plugins {
            registry.add_path(path)?;
        }
        if let Some(dir) = default_plugin_dir().filter(|d| d.is_dir()) {
            registry.add_path(&dir)?;
        }
        Ok(registry)
    }
}

#[derive(Debug, Args)]
pub struct PackArgs {
    /// The pack project (the folder of svc.project.json).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Where to write NAME-VERSION.svc-pack.zip (default: ROOT/dist).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Render this IR document instead of the project's example.
    #[arg(long, value_name = "PATH")]
    document: Option<PathBuf>,
    /// Only these platforms (comma-separated; default: the project's).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    platforms: Option<Vec<String>>,
    /// Write the pack even when some platforms do not render, recording them
    /// as missing.
    #[arg(long)]
    allow_partial: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct ValidatePackArgs {
    /// The pack project (the folder of svc.project.json).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Render this IR document instead of the project's example.
    #[arg(long, value_name = "PATH")]
    document: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    engine: EngineArgs,
}

fn checked(engine: &EngineArgs, options: &PackOptions) -> Result<Packed, Vec<Diagnostic>> {
    let runtime = Arc::new(engine.runtime());
    let backends = Backends {
        runtime: &runtime,
        override_path: engine.backend.clone(),
    };
    pack(options, Arc::clone(&runtime), &backends)
}

fn summary(p: &Packed) -> String {
    let mut s = format!(
        "{} {} (connector {}) for {}",
        p.manifest.name,
        p.manifest.version,
        p.manifest.connector,
        p.manifest.platforms.join(", ")
    );
    for m in &p.manifest.missing {
        s.push_str(&format!("\n  missing {}: {}", m.platform, m.reason));
    }
    s
}

pub fn run_pack(args: &PackArgs) -> ExitCode {
    let options = PackOptions {
        root: args.root.clone(),
        document: args.document.clone(),
        platforms: args.platforms.clone(),
        allow_partial: args.allow_partial,
        build_cache: args.engine.build_cache(),
    };
    let packed = match checked(&args.engine, &options) {
        Ok(p) => p,
        Err(diags) => return output::fail(args.format, &diags),
    };
    let dir = args.out.clone().unwrap_or_else(|| args.root.join("dist"));
    let path = dir.join(&packed.file_name);
    // The default `dist` is inside a project that may not be ours: never
    // follow a link there.
    if args.out.is_none()
        && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink())
    {
        let d = Diagnostic::error(
            &svc_ir::codes::IO,
            format!("`{}` is a link; not writing through it", dir.display()),
        )
        .hint("remove the link or pass --out DIR");
        return output::fail(args.format, &[d]);
    }
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        // A fresh temporary file beside the pack (never an existing path),
        // renamed into place so a reader never sees half a pack.
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        std::io::Write::write_all(&mut tmp, &packed.bytes)?;
        tmp.persist(&path).map(|_| ()).map_err(|e| e.error)
    });
    if let Err(e) = written {
        let d = Diagnostic::error(
            &svc_ir::codes::IO,
            format!("cannot write `{}`: {e}", path.display()),
        );
        return output::fail(args.format, &[d]);
    }
    let sha = svc_runtime::sha256_hex(&packed.bytes);
    match args.format {
        Format::Human => println!(
            "packed {}\n  -> {} ({} bytes, sha256 {sha})",
            summary(&packed),
            path.display(),
            packed.bytes.len()
        ),
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "ok": true,
                "pack": path.display().to_string(),
                "sha256": sha,
                "manifest": packed.manifest,
                "diagnostics": [],
            })
        ),
    }
    ExitCode::SUCCESS
}

pub fn run_validate(args: &ValidatePackArgs) -> ExitCode {
    let options = PackOptions {
        root: args.root.clone(),
        document: args.document.clone(),
        platforms: None,
        allow_partial: false,
        build_cache: args.engine.build_cache(),
    };
    match checked(&args.engine, &options) {
        Ok(p) => {
            match args.format {
                Format::Human => println!("valid: {}", summary(&p)),
                Format::Json => println!(
                    "{}",
                    serde_json::json!({ "ok": true, "manifest": p.manifest, "diagnostics": [] })
                ),
            }
            ExitCode::SUCCESS
        }
        Err(diags) => output::fail(args.format, &diags),
    }
}
