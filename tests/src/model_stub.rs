//! A model provider that fails on purpose: each model name has a script of
//! what its attempts get (a status with or without `Retry-After`, a reply
//! slower than the attempt's timeout, a cut connection, a body that is not
//! JSON, a reply with usage), and every request is recorded with the time
//! it arrived, so a test can hold a service to the retry rules of
//! docs/ir-reference.md ("Model calls") over HTTP.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http::{Reply, Request, Stub};

/// What one attempt gets.
#[derive(Debug, Clone)]
pub enum Attempt {
    /// `200` with a chat completion whose text is this, and the usage
    /// `(input, output)` when given.
    Answer(String, Option<(u64, u64)>),
    /// This status, with a `Retry-After` of this value when given.
    Status(u16, Option<String>),
    /// `200` with the text, after this delay (past an attempt's timeout).
    Slow(Duration, String),
    /// The reply is cut halfway.
    Cut,
    /// `200` whose body is not JSON.
    Malformed,
}

/// One request the stub received: the model it named and when.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub model: String,
    pub at: Instant,
    pub request: Request,
}

type Scripts = BTreeMap<String, VecDeque<Attempt>>;

/// A chat-completions stub scripted per model name; a model whose script is
/// spent answers `ok (<model>)`.
pub struct ModelStub {
    stub: Stub,
    scripts: Arc<Mutex<Scripts>>,
    arrivals: Arc<Mutex<Vec<Arrival>>>,
}

impl ModelStub {
    pub fn start() -> std::io::Result<ModelStub> {
        let scripts: Arc<Mutex<Scripts>> = Arc::default();
        let arrivals: Arc<Mutex<Vec<Arrival>>> = Arc::default();
        let (s, a) = (scripts.clone(), arrivals.clone());
        let stub = Stub::start(move |req: &Request| {
            let model = req.json()["model"].as_str().unwrap_or_default().to_string();
            let next = s
                .lock()
                .ok()
                .and_then(|mut s| s.get_mut(&model).and_then(VecDeque::pop_front));
            if let Ok(mut a) = a.lock() {
                a.push(Arrival {
                    model: model.clone(),
                    at: Instant::now(),
                    request: req.clone(),
                });
            }
            let attempt = next.unwrap_or_else(|| Attempt::Answer(format!("ok ({model})"), None));
            reply(&attempt)
        })?;
        Ok(ModelStub {
            stub,
            scripts,
            arrivals,
        })
    }

    /// The base URL a service's `baseUrlEnv` names.
    pub fn url(&self) -> String {
        format!("{}/v1", self.stub.url())
    }

    /// What the next attempts of `model` get, in order (replacing what was
    /// left), and forgets what arrived so far.
    pub fn script(&self, model: &str, attempts: Vec<Attempt>) {
        if let Ok(mut s) = self.scripts.lock() {
            s.insert(model.to_string(), attempts.into());
        }
        if let Ok(mut a) = self.arrivals.lock() {
            a.clear();
        }
    }

    /// Every request since the last [`ModelStub::script`], in order.
    pub fn arrivals(&self) -> Vec<Arrival> {
        self.arrivals.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// The models the arrivals named, in order.
    pub fn models(&self) -> Vec<String> {
        self.arrivals().into_iter().map(|a| a.model).collect()
    }

    /// The waits between consecutive arrivals.
    pub fn gaps(&self) -> Vec<Duration> {
        self.arrivals()
            .windows(2)
            .map(|w| w[1].at.duration_since(w[0].at))
            .collect()
    }
}

/// The chat completion of `text`, with `usage` when given.
pub fn completion(text: &str, usage: Option<(u64, u64)>) -> String {
    let mut body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]});
    if let Some((input, output)) = usage {
        body["usage"] = json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output});
    }
    body.to_string()
}

fn reply(attempt: &Attempt) -> Reply {
    match attempt {
        Attempt::Answer(text, usage) => Reply::Json(200, completion(text, *usage)),
        Attempt::Status(status, retry_after) => {
            let headers = retry_after
                .iter()
                .map(|v| ("Retry-After".to_string(), v.clone()))
                .collect();
            let body = json!({"error": {"message": format!("scripted {status}")}}).to_string();
            Reply::WithHeaders(*status, headers, body)
        }
        Attempt::Slow(delay, text) => Reply::Slow(*delay, completion(text, None)),
        Attempt::Cut => Reply::Cut(completion("never whole", None)),
        Attempt::Malformed => Reply::Text(200, "this is not JSON".into()),
    }
}
