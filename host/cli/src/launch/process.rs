//! The processes a run starts (builds and services), each in a
//! process group of its own, so that stopping one also stops what it
//! started (Maven's forks, a shell's children), and so that every group
//! still alive can be stopped when `svc design` or `svc test` exits.

use std::collections::HashMap;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a process has to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Every live process group, by leader pid, with the platform it is for.
#[derive(Default)]
pub struct Groups(Mutex<HashMap<u32, String>>);

impl Groups {
    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u32, String>> {
        // A panicking holder cannot leave the map half-changed.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `cmd` as the leader of a new process group, kept in the list.
    pub fn spawn(&self, cmd: &mut Command, platform: &str) -> std::io::Result<Child> {
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        let child = cmd.spawn()?;
        self.live().insert(child.id(), platform.to_string());
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
        self.live().remove(&pid);
    }

    /// Forgets a group whose leader has exited on its own (a build step).
    pub fn finished(&self, child: &Child) {
        self.live().remove(&child.id());
    }

    /// Stops every live group (their leaders are reaped by whoever holds
    /// their `Child`, or by [`Groups::reap`]); returns their platforms.
    pub fn stop_all(&self) -> Vec<String> {
        let groups: Vec<(u32, String)> = self.live().drain().collect();
        for (pid, _) in &groups {
            signal(*pid, Signal::Term);
        }
        let started = Instant::now();
        while started.elapsed() < GRACE && groups.iter().any(|(pid, _)| alive(*pid)) {
            std::thread::sleep(Duration::from_millis(25));
        }
        for (pid, _) in &groups {
            signal(*pid, Signal::Kill);
        }
        let mut platforms: Vec<String> = groups.into_iter().map(|(_, p)| p).collect();
        platforms.sort();
        platforms.dedup();
        platforms
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
