//! What the runs in progress have done so far, for `GET
//! /api/run/progress`. tiny_http writes an answer only once it is whole (its
//! chunked writer holds 8 KiB back), so the panel asks again and again, and
//! each call waits until there is something new.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The most runs whose progress is kept (the newest).
const KEEP: usize = 16;

#[derive(Default)]
pub struct Board {
    runs: Mutex<VecDeque<(String, Progress)>>,
    changed: Condvar,
}

#[derive(Default)]
struct Progress {
    lines: Vec<Value>,
    done: bool,
}

impl Board {
    fn with<T>(&self, id: &str, f: impl FnOnce(&mut Progress) -> T) -> Option<T> {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        let found = runs.iter_mut().find(|(i, _)| i == id).map(|(_, p)| f(p));
        drop(runs);
        self.changed.notify_all();
        found
    }

    /// A run starts under `id` (a caller's choice; a second run with the
    /// same id starts it afresh).
    pub fn open(&self, id: &str) {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        runs.retain(|(i, _)| i != id);
        runs.push_back((id.to_string(), Progress::default()));
        while runs.len() > KEEP {
            runs.pop_front();
        }
        drop(runs);
        self.changed.notify_all();
    }

    pub fn push(&self, id: &str, line: Value) {
        self.with(id, |p| p.lines.push(line));
    }

    pub fn finish(&self, id: &str) {
        self.with(id, |p| p.done = true);
    }

    /// The lines of run `id` after the first `after`, waiting up to `limit`
    /// for one when there is none yet (or for the run to appear, when its
    /// `POST /api/run` has not arrived yet):
    /// `{"lines", "next", "done"}`.
    pub fn wait(&self, id: &str, after: usize, limit: Duration) -> Value {
        let started = Instant::now();
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some((_, p)) = runs.iter().find(|(i, _)| i == id) {
                if p.lines.len() > after || p.done {
                    let lines = p.lines.get(after..).unwrap_or_default();
                    return json!({"lines": lines, "next": p.lines.len(), "done": p.done});
                }
            }
            let Some(left) = limit.checked_sub(started.elapsed()) else {
                return json!({"lines": [], "next": after, "done": false});
            };
            runs = match self.changed.wait_timeout(runs, left) {
                Ok((r, _)) => r,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_caller_gets_each_new_line_and_the_end() {
        let board = std::sync::Arc::new(Board::default());
        let writer = std::sync::Arc::clone(&board);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            writer.open("r1");
            writer.push("r1", json!(1));
            std::thread::sleep(Duration::from_millis(50));
            writer.push("r1", json!(2));
            writer.finish("r1");
        });
        // Waits for the run to appear and its first line.
        let first = board.wait("r1", 0, Duration::from_secs(5));
        assert_eq!(first["lines"][0], 1);
        let next = first["next"].as_u64().unwrap_or(0) as usize;
        let _ = t.join();
        let rest = board.wait("r1", next, Duration::from_secs(5));
        assert_eq!(rest, json!({"lines": [2], "next": 2, "done": true}));
        // Nothing new: an empty answer after the limit.
        let none = board.wait("nope", 0, Duration::from_millis(20));
        assert_eq!(none, json!({"lines": [], "next": 0, "done": false}));
    }
}
