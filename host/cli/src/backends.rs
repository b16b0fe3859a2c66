//! Where backend components come from: `--backend PATH.wasm`, the
//! `SVC_BACKEND_<PLATFORM>` variable, or the ones built into this binary.

use std::borrow::Cow;
use std::path::PathBuf;

use clap::Args;
use svc_compile::BackendSource;
use svc_ir::Diagnostic;
use svc_runtime::{Backend, Limits, Runtime, RuntimeOptions, MIB};

/// Flags shared by every command that runs components.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Load this backend component instead of the built-in one for the platform
    /// (also: SVC_BACKEND_GO, SVC_BACKEND_PYTHON_SVC, SVC_BACKEND_JAVA_SVC).
    #[arg(long, value_name = "PATH.wasm")]
    pub backend: Option<PathBuf>,
    /// Do not read or write the cache (compiled components, and the
    /// projects `svc compile` keeps for a compile of the same inputs).
    #[arg(long)]
    pub no_cache: bool,
    /// Where compiled components and projects are cached (default: $SVC_CACHE_DIR, else
    /// $XDG_CACHE_HOME/svc, else ~/.cache/svc).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Time limit per component call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = Limits::DEFAULT.timeout.as_millis() as u64)]
    pub timeout_ms: u64,
    /// Memory cap per component call, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::DEFAULT.memory_bytes / MIB as usize)]
    pub memory_mb: usize,
    /// Most files a backend may emit.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT.max_files)]
    pub max_files: usize,
    /// Most bytes (in MiB) a backend may emit in total.
    #[arg(long, value_name = "MIB", default_value_t = Limits::DEFAULT.max_output_bytes / MIB)]
    pub max_output_mb: u64,
}

impl EngineArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            memory_bytes: self.memory_mb.saturating_mul(MIB as usize),
            timeout: std::time::Duration::from_millis(self.timeout_ms),
            max_files: self.max_files,
            max_output_bytes: self.max_output_mb.saturating_mul(MIB),
        }
    }

    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        if let Some(d) = &self.cache_dir {
            return Some(d.clone());
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env("SVC_CACHE_DIR")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("svc")))
            .or_else(|| env("HOME").map(|d| d.join(".cache").join("svc")))
    }

    /// Where `svc pack` keeps Python and TypeScript components by input
    /// digest (`--no-cache` builds every time).
    pub fn build_cache(&self) -> Option<PathBuf> {
        self.cache_dir().map(|d| d.join("connector-builds"))
    }

    /// The runtime these flags describe (its engine starts when the first
    /// component loads).
    pub fn runtime(&self) -> Runtime {
        Runtime::new(RuntimeOptions {
            cache_dir: self.cache_dir(),
            limits: self.limits(),
        })
    }
}

/// The variable that names a replacement backend for a platform.
pub fn backend_env_var(platform: &str) -> String {
    format!("SVC_BACKEND_{}", platform.to_uppercase().replace('-', "_"))
}

pub struct Backends<'a> {
    pub runtime: &'a Runtime,
    pub override_path: Option<PathBuf>,
}

impl Backends<'_> {
    /// The component to use for a platform: the flag, then the variable,
    /// then the built-in one.
    /// Returns the component's name, bytes and, for built-in ones, its
    /// precomputed sha256.
    #[allow(clippy::type_complexity)]
    fn locate(
        &self,
        platform: &str,
    ) -> Result<(String, Cow<'static, [u8]>, Option<&'static str>), Diagnostic> {
        let var = backend_env_var(platform);
        let path = self.override_path.clone().or_else(|| {
            std::env::var_os(&var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        if let Some(path) = path {
            let bytes = std::fs::read(&path).map_err(|e| {
                Diagnostic::error(
                    &BACKEND_NOT_FOUND,
                    format!("cannot read backend component `{}`: {e}", path.display()),
                )
                .hint(format!("check --backend or {var}"))
            })?;
            return Ok((path.display().to_string(), Cow::Owned(bytes), None));
        }
        match svc_builtin::backend(platform) {
            Some(b) => Ok((b.name.to_string(), Cow::Borrowed(b.wasm), Some(b.sha256))),
            None => Err(Diagnostic::error(
                &BACKEND_NOT_BUILT,
                format!("no `{platform}` backend is built into this svc yet"),
            )
            .hint(format!(
                "built in: {}; pass --backend PATH.wasm (or set {var}) to use another component",
                svc_builtin::BACKENDS
                    .iter()
                    .map(|b| b.platform)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// One backend already loaded, for `svc_compile` (loading a compiled
/// component costs more than a compile).
pub struct Loaded(pub Backend);

impl BackendSource for Loaded {
    fn backend(&self, _platform: &str) -> Result<Backend, Diagnostic> {
        Ok(self.0.clone())
    }
}

impl BackendSource for Backends<'_> {
    fn backend(&self, platform: &str) -> Result<Backend, Diagnostic> {
        let (name, bytes, sha256) = self.locate(platform)?;
        self.runtime
            .load_backend_with_digest(&name, &bytes, sha256)
            .map_err(|e| svc_compile::plugin_diag(&e))
    }
}

svc_ir::diagnostic_codes! {
    /// No backend for the platform is built into this svc, and none was given.
    ///
    /// `svc compile` uses the backend named by `--backend PATH.wasm`, else by the variable `SVC_BACKEND_<PLATFORM>` (for example `SVC_BACKEND_JAVA_SVC`), else the one built into the binary. A binary built without the platform's backend reports this code.
    ///
    /// Pass `--backend` or set the variable to a backend component, or use an svc build that embeds the backend.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --platform java-svc
    /// # error[backend-not-built]: no `java-svc` backend is built into this svc yet
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --platform java-svc --backend ./svc-backend-java.wasm
    /// ```
    pub BACKEND_NOT_BUILT = "backend-not-built", group "plugin";

    /// The backend component named by --backend or SVC_BACKEND_<PLATFORM> cannot be read.
    ///
    /// When `--backend PATH` or the variable `SVC_BACKEND_<PLATFORM>` names a backend component, the file must exist and be readable. A wrong path, or a variable left over from another setup, produces this code with the operating system's reason.
    ///
    /// Correct the path, or unset the variable to use the built-in backend.
    ///
    /// # Example
    ///
    /// ```sh
    /// SVC_BACKEND_GO=/tmp/old/backend.wasm svc compile app.graph.json --out build/app
    /// # error[backend-not-found]: cannot read backend component `/tmp/old/backend.wasm`: No such file or directory
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// unset SVC_BACKEND_GO
    /// svc compile app.graph.json --out build/app
    /// ```
    pub BACKEND_NOT_FOUND = "backend-not-found", group "plugin";
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        engine: EngineArgs,
    }

    /// Without flags the CLI applies the runtime's own defaults, and each
    /// flag converts its unit back into the same limit.
    #[test]
    fn flag_defaults_are_the_runtime_defaults() {
        let cli = Cli::try_parse_from(["svc"]).map_err(|e| e.to_string());
        assert_eq!(cli.map(|c| c.engine.limits()), Ok(Limits::DEFAULT));
        let raised = Cli::try_parse_from(["svc", "--timeout-ms", "2500", "--memory-mb", "1"])
            .map_err(|e| e.to_string())
            .map(|c| c.engine.limits());
        assert_eq!(
            raised,
            Ok(Limits {
                timeout: std::time::Duration::from_millis(2500),
                memory_bytes: 1024 * 1024,
                ..Limits::DEFAULT
            })
        );
    }
}
