//! The guardian: stops the process groups that `svc design` or `svc test`
//! started when that process dies, however it dies. A handler in the
//! process itself cannot run on SIGKILL, and a parent-death signal is no
//! substitute (it reaches only a group's leader, a shell or build tool
//! whose children outlive it, and fires when the spawning *thread* ends,
//! while the designer spawns from per-request threads).
//!
//! So the process starts this binary once more, as `svc guardian` (a
//! hidden command), in a process group of its own (a terminal's Ctrl+C
//! does not reach it), with the read end of a pipe as its stdin. Only the
//! process holds the write end (close-on-exec: no service inherits it).
//! Through it, the process tells the guardian each group it starts
//! (`+PGID`) and each it has stopped or seen exit (`-PGID`). When the pipe
//! reaches its end, the process is gone: the guardian sends SIGTERM to
//! every group still listed, SIGKILL after a grace period, and exits.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;

use super::process;

/// The hidden command that runs [`serve`].
pub const COMMAND: &str = "guardian";

/// The watching side's handle: the pipe's write end. (The guardian runs
/// until this process is gone, so there is nothing to wait for.)
pub struct Guardian {
    pipe: Mutex<std::io::PipeWriter>,
}

impl Guardian {
    /// Starts the guardian (this executable, `svc guardian`).
    pub fn start() -> Result<Guardian, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this program's executable: {e}"))?;
        // Both ends are close-on-exec; the guardian gets the read end as
        // its stdin, and this process keeps the only write end.
        let (reader, writer) = std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
        let mut cmd = Command::new(exe);
        cmd.arg(COMMAND)
            .stdin(reader)
            // It holds no pipe of whoever reads our output, which would
            // otherwise wait for it.
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.spawn().map_err(|e| {
            format!(
                "cannot start `{} {COMMAND}`: {e}",
                cmd.get_program().display()
            )
        })?;
        // `cmd` still holds our copy of the read end: it must go, or the
        // guardian would never see the pipe end.
        drop(cmd);
        Ok(Guardian {
            pipe: Mutex::new(writer),
        })
    }

    /// Group `pgid` is running: stop it if this process dies.
    pub fn watch(&self, pgid: u32) {
        self.tell(&format!("+{pgid}\n"));
    }

    /// Group `pgid` is stopped or has exited.
    pub fn release(&self, pgid: u32) {
        self.tell(&format!("-{pgid}\n"));
    }

    fn tell(&self, line: &str) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|p| p.into_inner());
        // One short line is written whole (under PIPE_BUF). A guardian that
        // is gone cannot be helped here; stopping on exit still works.
        let _ = pipe.write_all(line.as_bytes());
    }
}

/// `svc guardian`: reads `+PGID` and `-PGID` lines from stdin until it
/// ends, then stops every group still listed.
pub fn serve() -> ExitCode {
    let left = listed_at_end(std::io::stdin().lock());
    process::stop_groups(&left);
    ExitCode::SUCCESS
}

/// The groups listed when `input` ends (a read error ends it too).
fn listed_at_end(input: impl BufRead) -> Vec<u32> {
    let mut groups = BTreeSet::new();
    for line in input.lines().map_while(Result::ok) {
        let (sign, pgid) = line.split_at(line.len().min(1));
        // Never group 0 or 1: killpg would mean our own group, or init's.
        let Some(pgid) = pgid.parse::<u32>().ok().filter(|p| *p > 1) else {
            continue;
        };
        match sign {
            "+" => groups.insert(pgid),
            "-" => groups.remove(&pgid),
            _ => false,
        };
    }
    groups.into_iter().collect()
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    #[test]
    fn the_groups_still_listed_at_the_pipes_end_are_the_ones_stopped() {
        let input = "+500\n+700\n-500\n+900\nnoise\n+1\n+0\n*42\n-900\n+800";
        assert_eq!(listed_at_end(input.as_bytes()), vec![700, 800]);
    }

    #[test]
    fn a_group_is_stopped_whole_also_what_ignores_sigterm() {
        // A shell and its child that ignores SIGTERM (SIGKILL stops it): a
        // build tool and its forks.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "trap '' TERM; sleep 60 & wait"]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut leader = cmd.spawn().unwrap();
        let pgid = leader.id();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(members(pgid).len(), 2, "the shell and its sleep");
        process::stop_groups(&[pgid]);
        let _ = leader.wait();
        // SIGKILL is delivered, not awaited: the orphaned sleep may still be
        // on its way out (and to its reaper) for a moment.
        let sent = std::time::Instant::now();
        while !members(pgid).is_empty() && sent.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(members(pgid), Vec::<u32>::new(), "left in group {pgid}");
    }

    /// The processes of group `pgid` that still run (zombies do not).
    fn members(pgid: u32) -> Vec<u32> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().map_while(Result::ok) {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid pgrp ...; comm may hold spaces.
            let fields: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
                out.push(pid);
            }
        }
        out
    }
}
