//! Streaming leaks nothing: 50 streamed runs, each abandoned by its client
//! at a point of its own (before the answer, after the head, after some
//! events, or read to the end), and then the service's connections, its
//! goroutines / virtual threads / asyncio tasks (`GET /debug/runtime`,
//! served with `SVC_DEBUG_RUNTIME=1`) and its calls to the model return to
//! what they were before, within a few seconds. Run on each target's
//! streaming service by `streaming.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use svc_tests::http::Stub;
use svc_tests::service::Service;

const STREAMS: usize = 50;

/// Where a client lets go of its stream.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// Right after sending the request.
    BeforeTheAnswer,
    /// After the status line and headers.
    AfterTheHead,
    /// After this many events.
    AfterEvents(usize),
    /// At the stream's end.
    AtTheEnd,
}

/// The cut of stream `i`: a small linear congruential generator seeded by
/// the stream's index, so a failure names a cut that reproduces.
fn cut_of(i: usize) -> Cut {
    let r = (i as u64)
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407)
        >> 33;
    match r % 8 {
        0 => Cut::BeforeTheAnswer,
        1 => Cut::AfterTheHead,
        7 => Cut::AtTheEnd,
        n => Cut::AfterEvents(1 + (r / 8 % 12) as usize + n as usize),
    }
}

/// Sends one streamed /invoke and reads it up to `cut`, then drops the
/// connection. Returns the events read.
fn abandon(port: u16, key: &str, state: &Value, cut: Cut) -> usize {
    let body = json!({ "state": state }).to_string();
    let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let request = format!(
        "POST /invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nConnection: close\r\nX-API-Key: {key}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    if conn.write_all(request.as_bytes()).is_err() {
        return 0;
    }
    if matches!(cut, Cut::BeforeTheAnswer) {
        return 0;
    }
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&seen);
        let events = text.split_once("\r\n\r\n").map_or(0, |(_, rest)| {
            rest.matches("\nevent: ").count() + usize::from(rest.starts_with("event: "))
        });
        match cut {
            Cut::AfterTheHead if text.contains("\r\n\r\n") => return 0,
            Cut::AfterEvents(n) if events >= n => return events,
            _ => {}
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return events,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// The service's side of its connections (local port `port`) that are
/// still open: established, or closed by the client and not yet by the
/// service (CLOSE_WAIT), from /proc/net/tcp and tcp6.
fn open_connections(port: u16) -> usize {
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state)) = (cols.get(1), cols.get(3)) else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) && matches!(*state, "01" | "08") {
                n += 1;
            }
        }
    }
    n
}

/// What `GET /debug/runtime` counts that a leaked run would hold: go's
/// goroutines, java-svc's virtual threads, python-svc's asyncio tasks.
fn held(platform: &str, service: &Service, key: &str) -> u64 {
    let r = service
        .send("GET", "/debug/runtime", &[("X-API-Key", key)], b"")
        .expect("GET /debug/runtime answers");
    assert_eq!(r.status, 200, "{platform}: {}", r.text());
    let field = match platform {
        "go" => "goroutines",
        "java-svc" => "virtualThreads",
        _ => "tasks",
    };
    r.json()[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{platform}: no `{field}` in {}", r.text()))
}

/// The counts now: the service's open connections, what it holds, and the
/// model calls the stub is still serving.
fn counts(platform: &str, service: &Service, stub: &Stub, key: &str) -> (usize, u64, usize) {
    (
        open_connections(service.port),
        held(platform, service, key),
        stub.open_connections(),
    )
}

/// 50 streams of `state` (whose model call streams for seconds), abandoned
/// at their cuts, all at once; then everything returns to its baseline.
pub fn abandoned_streams_leave_nothing(
    platform: &str,
    service: &Service,
    stub: &Stub,
    key: &str,
    state: &Value,
) {
    let refused = service
        .send("GET", "/debug/runtime", &[], b"")
        .expect("GET /debug/runtime answers");
    assert_eq!(refused.status, 401, "{platform}: {}", refused.text());
    // Quiet first: what earlier checks started has ended.
    let quiet = Instant::now() + Duration::from_secs(10);
    while stub.open_connections() > 0 && Instant::now() < quiet {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (connections, baseline, calls) = counts(platform, service, stub, key);
    assert_eq!(
        calls, 0,
        "{platform}: model calls still open before the test"
    );
    let started = Instant::now();
    let cuts: Vec<Cut> = (0..STREAMS).map(cut_of).collect();
    let read: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = cuts
            .iter()
            .map(|&cut| s.spawn(move || abandon(service.port, key, state, cut)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a client thread"))
            .collect()
    });
    let left = started.elapsed();
    // Within a few seconds of the last client leaving, nothing is left.
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut now = counts(platform, service, stub, key);
    while (now.0 > connections || now.1 > baseline + 2 || now.2 > 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        now = counts(platform, service, stub, key);
    }
    let report = || {
        format!(
            "{platform}: after {STREAMS} abandoned streams (cuts {cuts:?}, events read {read:?}): \
             connections {} (before {connections}), held {} (before {baseline}), \
             model calls open {}",
            now.0, now.1, now.2
        )
    };
    assert!(now.0 <= connections, "{}", report());
    assert!(now.1 <= baseline + 2, "{}", report());
    assert_eq!(now.2, 0, "{}", report());
    // And the service still streams a whole run.
    assert!(
        abandon(service.port, key, state, Cut::AtTheEnd) > 2,
        "{platform}: no whole stream after the abandoned ones"
    );
    eprintln!(
        "{platform}: {STREAMS} streams abandoned in {left:?}; connections {connections}, held {baseline} -> {}, model calls 0",
        now.1
    );
}
