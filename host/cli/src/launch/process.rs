//! The processes a run starts (builds and services), each in a
//! process group of its own, so that stopping one also stops what it
//! started (Maven's forks, a shell's children), and so that every group
//! still alive can be stopped when `svc design` or `svc test` exits, and
//! by the guardian when it dies without doing so.

use std::collections::HashMap;
use std::process::{Child, Command};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::guardian::Guardian;

/// How long a process has to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Every live process group, by leader pid, with the platform it is for;
/// and the guardian that stops them if this process dies without doing so,
/// started with the first group (a designer session that runs nothing
/// starts none).
pub struct Groups {
    live: Mutex<HashMap<u32, String>>,
    guardian: OnceLock<Option<Guardian>>,
    /// Who starts the groups (`svc design`), for the guardian's warning.
    what: &'static str,
}

impl Groups {
    /// Groups watched by a guardian ([`super::guardian`]): they are stopped
    /// also when this process is killed (SIGKILL included). Without one (it
    /// could not start), they are stopped on a normal exit, Ctrl+C and
    /// SIGTERM only, and `what` says so on stderr.
    pub fn guarded(what: &'static str) -> Groups {
        Groups {
            live: Mutex::default(),
            guardian: OnceLock::new(),
            what,
        }
    }

    /// The guardian, started on first use; `None` if it could not start.
    fn guardian(&self) -> Option<&Guardian> {
        self.guardian
            .get_or_init(|| match Guardian::start() {
                Ok(g) => Some(g),
                Err(e) => {
                    eprintln!(
                        "{}: {e}; the services it starts will outlive it if it is killed (SIGKILL)",
                        self.what
                    );
                    None
                }
            })
            .as_ref()
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u32, String>> {
        // A panicking holder cannot leave the map half-changed.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets group `pid`, here and in the guardian.
    fn forget(&self, pid: u32) {
        self.live().remove(&pid);
        if let Some(g) = self.guardian.get().and_then(Option::as_ref) {
            g.release(pid);
        }
    }

    /// Starts `cmd` as the leader of a new process group, kept in the list
    /// and told to the guardian.
    pub fn spawn(&self, cmd: &mut Command, platform: &str) -> std::io::Result<Child> {
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        let guardian = self.guardian();
        let child = cmd.spawn()?;
        self.live().insert(child.id(), platform.to_string());
        if let Some(g) = guardian {
            g.watch(child.id());
        }
        Ok(child)
    }

    /// Stops a group started by [`Groups::spawn`]: SIGTERM, up to
    /// [`GRACE`] for the leader to exit, then SIGKILL to what is left.
    pub fn stop(&self, child: &mut Child) {
        let pid = child.id();
        signal(pid, Signal::Term);
        let started = Instant::now();
        while started.elapsed() < GRACE {
            // Err: reaped already (by `stop_all`).
            if !matches!(child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        signal(pid, Signal::Kill);
        let _ = child.kill();
        let _ = child.wait();
        self.forget(pid);
    }

    /// Forgets a group whose leader has exited on its own (a build step).
    pub fn finished(&self, child: &Child) {
        self.forget(child.id());
    }

    /// Stops every live group (their leaders are reaped by whoever holds
    /// their `Child`, or on the way by [`alive`]); returns their platforms.
    pub fn stop_all(&self) -> Vec<String> {
        let groups: Vec<(u32, String)> = self.live().drain().collect();
        let pids: Vec<u32> = groups.iter().map(|(pid, _)| *pid).collect();
        stop_groups(&pids);
        if let Some(g) = self.guardian.get().and_then(Option::as_ref) {
            for pid in &pids {
                g.release(*pid);
            }
        }
        let mut platforms: Vec<String> = groups.into_iter().map(|(_, p)| p).collect();
        platforms.sort();
        platforms.dedup();
        platforms
    }
}

/// SIGTERM to each group, up to [`GRACE`] for them to exit, then SIGKILL
/// to what is left: `stop_all`, and the guardian when its watch ends.
pub(super) fn stop_groups(pids: &[u32]) {
    for pid in pids {
        signal(*pid, Signal::Term);
    }
    let started = Instant::now();
    while started.elapsed() < GRACE && pids.iter().any(|pid| alive(*pid)) {
        std::thread::sleep(Duration::from_millis(25));
    }
    for pid in pids {
        signal(*pid, Signal::Kill);
    }
}

enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal(pid: u32, which: Signal) {
    use nix::sys::signal::{killpg, Signal as Sig};
    let sig = match which {
        Signal::Term => Sig::SIGTERM,
        Signal::Kill => Sig::SIGKILL,
    };
    if let Ok(pid) = i32::try_from(pid) {
        // A group that is gone already is what we want.
        let _ = killpg(nix::unistd::Pid::from_raw(pid), sig);
    }
}

#[cfg(not(unix))]
fn signal(_pid: u32, _which: Signal) {}

/// Whether any process of the group is still running. Exited members of
/// the group that are our children are reaped on the way (at exit nobody
/// else will), so that a zombie does not count as alive.
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    use nix::unistd::Pid;
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    while let Ok(status) = waitpid(Pid::from_raw(-pid), Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
    nix::sys::signal::killpg(Pid::from_raw(pid), None).is_ok()
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    false
}
