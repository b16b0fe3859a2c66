//! The module check a backend runs in an emit call of its own
//! (`svc_ir::emit_options`): started on a thread before the emit whose
//! files are written, and waited for after they are written to the
//! project's temporary directory, so a large python-svc project's parse
//! (every module it emits) overlaps its write instead of preceding it.
//! It costs a second emission on the other core; on one core the backend
//! checks everything in its one call instead.

use std::thread::JoinHandle;

use svc_ir::emit_options::{MODULE_CHECK, MODULE_CHECK_FEATURE, ONLY, SEPARATE};
use svc_ir::{Diagnostic, SourceFile};
use svc_runtime::{Backend, BackendInfo, EmitRequest, Emitted, PluginError};

use crate::codes::PLUGIN_FAILED;
use crate::plugin_diag;

/// The verdict of a module check still running, or of none.
#[must_use = "a project is complete only once its late check passed"]
pub struct LateCheck {
    running: Option<(String, JoinHandle<Result<Emitted, PluginError>>)>,
}

impl std::fmt::Debug for LateCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LateCheck")
            .field("running", &self.running.is_some())
            .finish()
    }
}

impl LateCheck {
    /// Nothing left to check: the emit that made the files checked them.
    pub fn none() -> Self {
        LateCheck { running: None }
    }

    /// Whether a check is still to be waited for.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Starts the checking call for `request` when the backend takes the
    /// option and a second core can run it, and returns the option for the
    /// call whose files are written; otherwise no check and no option.
    pub(crate) fn start(
        backend: &Backend,
        info: &BackendInfo,
        request: &EmitRequest,
    ) -> (Self, Option<(String, String)>) {
        let declared = info
            .capabilities
            .features
            .iter()
            .any(|f| f == MODULE_CHECK_FEATURE);
        // Asked only then: it reads the cgroup's CPU quota.
        if !declared || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return (LateCheck::none(), None);
        }
        let mut checking = request.clone();
        checking.options.push((MODULE_CHECK.into(), ONLY.into()));
        let beside = backend.clone();
        let started = std::thread::Builder::new()
            .name("svc module check".into())
            .spawn(move || beside.session()?.emit(&checking));
        match started {
            Ok(handle) => (
                LateCheck {
                    running: Some((backend.name().to_string(), handle)),
                },
                Some((MODULE_CHECK.into(), SEPARATE.into())),
            ),
            // No thread to be had: the one call checks everything.
            Err(_) => (LateCheck::none(), None),
        }
    }

    /// Waits for the check; its diagnostics, placed in the document, if it
    /// failed or could not run to its end.
    pub fn wait(self, source: &SourceFile) -> Result<(), Vec<Diagnostic>> {
        let Some((component, handle)) = self.running else {
            return Ok(());
        };
        let emitted = match handle.join() {
            Ok(Ok(emitted)) => emitted,
            Ok(Err(e)) => return Err(vec![plugin_diag(&e)]),
            Err(_) => {
                return Err(vec![Diagnostic::error(
                    &PLUGIN_FAILED,
                    format!(
                        "the module check of component `{component}` stopped without a verdict"
                    ),
                )])
            }
        };
        match emitted.result {
            Ok(_) => Ok(()),
            Err(diags) if diags.is_empty() => Err(vec![Diagnostic::error(
                &PLUGIN_FAILED,
                format!("component `{component}` refused its module check but gave no reason"),
            )]),
            Err(diags) => Err(diags.into_iter().map(|d| source.locate(d)).collect()),
        }
    }
}
