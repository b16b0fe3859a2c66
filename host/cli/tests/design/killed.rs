//! A designer killed with SIGKILL, which no handler of its own can see,
//! leaves no service behind: its guardian (`svc guardian`, a hidden
//! command) stops the groups it started, then exits.

use std::time::{Duration, Instant};

use serde_json::json;
use svc_tests::service::require_tool;

use super::{fixture, Designer};

/// `/proc/PID/stat`'s fields after the command's name: state, ppid, pgrp.
fn stat(pid: u32) -> Option<(String, u32, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name may hold spaces and parentheses: it ends at the last ')'.
    let fields: Vec<&str> = text.rsplit(')').next()?.split_whitespace().collect();
    Some((
        fields.first()?.to_string(),
        fields.get(1)?.parse().ok()?,
        fields.get(2)?.parse().ok()?,
    ))
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The processes of group `pgid` that run (a zombie runs nothing).
fn members(pgid: u32) -> Vec<u32> {
    pids()
        .into_iter()
        .filter(|p| matches!(stat(*p), Some((state, _, group)) if group == pgid && state != "Z"))
        .collect()
}

fn runs(pid: u32) -> bool {
    matches!(stat(pid), Some((state, _, _)) if state != "Z")
}

/// The `svc guardian` children of `parent`.
fn guardians_of(parent: u32) -> Vec<u32> {
    pids()
        .into_iter()
        .filter(|p| matches!(stat(*p), Some((_, pp, _)) if pp == parent))
        .filter(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            cmdline.split(|b| *b == 0).nth(1) == Some(b"guardian".as_slice())
        })
        .collect()
}

#[test]
fn a_designer_killed_with_sigkill_leaves_no_service_behind() {
    if !require_tool("go") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("triage.graph.json");
    std::fs::copy(fixture("support_triage.graph.json"), &doc).unwrap();
    let mut d = Designer::start(&doc);
    let designer = d.child.id();
    // The guardian starts with the first process a run starts.
    assert_eq!(
        guardians_of(designer),
        Vec::<u32>::new(),
        "a guardian before any run"
    );
    let r = d.run(&json!({"model": d.model(), "platforms": ["go"],
        "request": {"state": {"question": "Where is my invoice?"}}}));
    let go = &r["runs"]["go"];
    assert_eq!(go["status"], 200, "{r}");
    // The service leads its process group.
    let service = u32::try_from(go["pid"].as_u64().unwrap()).unwrap();
    assert!(!members(service).is_empty(), "the service's group runs");
    // Its guardian: the svc binary, a child of the designer, in a process
    // group of its own.
    let guardians = guardians_of(designer);
    assert_eq!(guardians.len(), 1, "the designer's guardian: {guardians:?}");
    let guardian = guardians[0];
    assert_eq!(stat(guardian).unwrap().2, guardian, "its own process group");

    d.child.kill().unwrap();
    d.child.wait().unwrap();
    let killed = Instant::now();
    while !members(service).is_empty() || runs(guardian) {
        assert!(
            killed.elapsed() < Duration::from_secs(8),
            "8 s after SIGKILL: left in the service's group {:?}, guardian running: {}",
            members(service),
            runs(guardian)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    println!(
        "the service's group and the guardian gone {} ms after SIGKILL",
        killed.elapsed().as_millis()
    );
}
