//! `svc compile --timings`: where a compile's time goes, phase by phase
//! (reading the document, the engine, loading the backend, its emission,
//! the writing). Off unless turned on for the thread that compiles, so the
//! library's other users (the designer, the tests) record nothing.

use std::cell::RefCell;
use std::time::{Duration, Instant};

thread_local! {
    static CLOCK: RefCell<Option<Clock>> = const { RefCell::new(None) };
}

struct Clock {
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

/// Starts timing this thread's compile.
pub fn start() {
    CLOCK.with(|c| {
        *c.borrow_mut() = Some(Clock {
            last: Instant::now(),
            laps: Vec::new(),
        });
    });
}

/// Ends the phase `name`: the time since the previous phase ended (or
/// since [`start`]). Nothing when timing is off.
pub fn lap(name: &'static str) {
    CLOCK.with(|c| {
        if let Some(clock) = c.borrow_mut().as_mut() {
            let now = Instant::now();
            clock.laps.push((name, now - clock.last));
            clock.last = now;
        }
    });
}

/// The phases timed since [`start`], in order, each name once (repeated
/// phases summed); timing stops.
pub fn finish() -> Vec<(&'static str, Duration)> {
    let laps = CLOCK.with(|c| c.borrow_mut().take().map(|c| c.laps).unwrap_or_default());
    let mut out: Vec<(&'static str, Duration)> = Vec::new();
    for (name, d) in laps {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += d,
            None => out.push((name, d)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_timed_in_order_only_when_started() {
        lap("ignored");
        assert!(finish().is_empty());
        start();
        lap("a");
        std::thread::sleep(Duration::from_millis(5));
        lap("b");
        lap("a");
        let phases = finish();
        let names: Vec<&str> = phases.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(phases[1].1 >= Duration::from_millis(5), "{phases:?}");
        assert!(finish().is_empty(), "timing stops at finish");
    }
}
