//! A service started from a project in the run cache: its `run`
//! command on a free loopback port with a fresh key, `/health` until it
//! answers, and `POST /invoke` (JSON, or the run's events when the graph
//! streams).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::process::Groups;

/// What the service prints.
const SERVICE_LOG: &str = ".svc-run-service.log";
/// The most an answer may hold.
const MAX_ANSWER: u64 = 16 << 20;

pub struct Running {
    pub child: Child,
    pub port: u16,
    /// Which project and variables it was started with.
    pub fingerprint: String,
    /// The header that carries its key (none with `security.auth: none`).
    pub credential: Option<(String, String)>,
    log: PathBuf,
}

/// How a service checks callers, from the document's `security`.
pub struct Auth {
    pub scheme: String,
    pub key_env: String,
}

impl Auth {
    pub fn of(document: &Value) -> Auth {
        let security = &document["security"];
        Auth {
            scheme: security["auth"].as_str().unwrap_or("api_key").to_string(),
            key_env: security["keyEnv"]
                .as_str()
                .unwrap_or("SVC_API_KEY")
                .to_string(),
        }
    }
}

/// A loopback port free now and not handed out before by this process: a
/// service takes seconds to bind the port it is given, and meanwhile the
/// kernel may offer the same free port to the next service started, whose
/// health check would then be answered by the other one.
pub fn free_port() -> Result<u16, String> {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    for _ in 0..64 {
        let port = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("no free loopback port: {e}"))?;
        if GIVEN.lock().map_err(|e| e.to_string())?.insert(port) {
            return Ok(port);
        }
    }
    Err("no free loopback port this process has not handed out already".into())
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

impl Running {
    /// Starts the manifest's `run` command in `project` and waits for
    /// `/health` as long as the platform may take
    /// ([`super::ready_limit`]).
    pub fn start(
        project: &Path,
        platform: &str,
        env: &[(String, String)],
        auth: &Auth,
        fingerprint: String,
        groups: &Groups,
    ) -> Result<Running, String> {
        let run = super::build::commands(project)?.run;
        let ready = super::ready_limit(platform);
        let port = free_port()?;
        let key = super::random_secret()?;
        let log = project.join(SERVICE_LOG);
        let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("exec {run}"))
            .current_dir(project)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("SVC_HOST", "127.0.0.1")
            .env("SVC_PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err);
        let credential = match auth.scheme.as_str() {
            "none" => None,
            "bearer" => Some(("Authorization".to_string(), format!("Bearer {key}"))),
            _ => Some(("X-API-Key".to_string(), key.clone())),
        };
        if credential.is_some() {
            cmd.env(&auth.key_env, &key);
        }
        let child = groups
            .spawn(&mut cmd, platform)
            .map_err(|e| format!("cannot start `{run}`: {e}"))?;
        let mut service = Running {
            child,
            port,
            fingerprint,
            credential,
            log,
        };
        let health = agent(Duration::from_secs(2));
        let url = format!("http://127.0.0.1:{port}/health");
        let started = Instant::now();
        loop {
            match service.child.try_wait() {
                Ok(Some(status)) => {
                    groups.finished(&service.child);
                    return Err(format!(
                        "`{run}` exited with {status} before answering /health\n{}",
                        service.output()
                    ));
                }
                Err(_) => return Err("the service was stopped".into()),
                Ok(None) => {}
            }
            if let Ok(r) = health.get(&url).call() {
                if r.status().as_u16() == 200 {
                    return Ok(service);
                }
            }
            if started.elapsed() > ready {
                let output = service.output();
                groups.stop(&mut service.child);
                return Err(format!(
                    "`{run}` did not answer /health within {} s\n{output}",
                    ready.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `request` to `POST /invoke`, with `headers` besides the
    /// credential. When `stream` is on the service
    /// is asked for its events, each handed to `on_event` as it arrives;
    /// the answer is then rebuilt from the terminal event, as the JSON
    /// answer would have been. Returns status, body and events.
    pub fn invoke(
        &self,
        request: &Value,
        headers: &[(String, String)],
        stream: bool,
        on_event: &mut dyn FnMut(&Value),
    ) -> Result<(u16, Value, Option<Vec<Value>>), String> {
        let url = format!("http://127.0.0.1:{}/invoke", self.port);
        let mut call = agent(Duration::from_secs(600))
            .post(&url)
            .header("Content-Type", "application/json");
        // A header the request gives itself replaces the credential's (a
        // test may send a wrong key).
        if let Some((name, value)) = &self.credential {
            if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(name)) {
                call = call.header(name.as_str(), value.as_str());
            }
        }
        for (name, value) in headers {
            call = call.header(name.as_str(), value.as_str());
        }
        if stream {
            call = call.header("Accept", "text/event-stream");
        }
        let body = request.to_string();
        let mut answer = call
            .send(body.as_bytes())
            .map_err(|e| format!("POST /invoke: {e}"))?;
        let status = answer.status().as_u16();
        let is_stream = answer
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let reader = answer.body_mut().as_reader().take(MAX_ANSWER);
        if !is_stream {
            let mut text = String::new();
            BufReader::new(reader)
                .read_to_string(&mut text)
                .map_err(|e| format!("reading the answer of /invoke: {e}"))?;
            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
            return Ok((status, body, None));
        }
        let events = read_events(BufReader::new(reader), on_event)?;
        let (status, body) = answer_of(&events)?;
        Ok((status, body, Some(events)))
    }
}

/// Server-sent events, one JSON `data` line each.
fn read_events(
    reader: impl BufRead,
    on_event: &mut dyn FnMut(&Value),
) -> Result<Vec<Value>, String> {
    let mut events = Vec::new();
    let mut data = String::new();
    for line in reader.lines() {
        let line = line.map_err(|e| format!("reading the events of /invoke: {e}"))?;
        if line.is_empty() {
            if !data.is_empty() {
                let event: Value = serde_json::from_str(&data)
                    .map_err(|e| format!("an event of /invoke is not JSON ({e}): {data}"))?;
                on_event(&event);
                events.push(event);
                data.clear();
            }
        } else if let Some(d) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    Ok(events)
}

/// The JSON answer a streamed run stands for (`docs/http-contract.md`,
/// Streaming): its terminal event's result, interrupt or error.
fn answer_of(events: &[Value]) -> Result<(u16, Value), String> {
    let Some(last) = events.last() else {
        return Err("the service's event stream ended with no event".into());
    };
    let data = &last["data"];
    // What the JSON answer has beside its result, interrupt or error.
    let with = |mut body: Value, keys: &[&str]| {
        for key in keys {
            if let Some(v) = data.get(*key) {
                body[*key] = v.clone();
            }
        }
        body
    };
    let with_thread = |body: Value| with(body, &["threadId", "usage"]);
    match last["type"].as_str() {
        Some("run_finished") => Ok((200, with_thread(json!({"result": data["result"]})))),
        Some("interrupted") => Ok((
            200,
            with_thread(json!({"interrupt": {"node": last["node"], "value": data["value"]}})),
        )),
        Some("run_failed") => {
            let mut error = json!({"code": data["code"], "message": data["message"]});
            if let Some(d) = data.get("details") {
                error["details"] = d.clone();
            }
            let status = data["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(500);
            Ok((status, with(json!({"error": error}), &["usage"])))
        }
        _ => Err(format!(
            "the service's event stream ended without its terminal event (last: {})",
            last["type"]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_becomes_the_answer_of_its_terminal_event() {
        let sse = "id: 1\nevent: run_started\ndata: {\"seq\":1,\"type\":\"run_started\",\"data\":{}}\n\n\
                   id: 2\nevent: interrupted\ndata: {\"seq\":2,\"type\":\"interrupted\",\"node\":\"review\",\"data\":{\"threadId\":\"t\",\"value\":{\"q\":1}}}\n\n";
        let mut seen = 0;
        let events = read_events(sse.as_bytes(), &mut |_| seen += 1).unwrap_or_default();
        assert_eq!(seen, 2);
        assert_eq!(
            answer_of(&events),
            Ok((
                200,
                json!({"interrupt": {"node": "review", "value": {"q": 1}}, "threadId": "t"})
            ))
        );
        let failed = vec![
            json!({"type": "run_failed", "data": {"status": 502, "code": "upstream_error", "message": "m", "details": {"node": "a"}, "usage": {"attempts": 3}}}),
        ];
        assert_eq!(
            answer_of(&failed),
            Ok((
                502,
                json!({"error": {"code": "upstream_error", "message": "m", "details": {"node": "a"}}, "usage": {"attempts": 3}})
            ))
        );
        assert!(answer_of(&[json!({"type": "token"})]).is_err());
    }
}
