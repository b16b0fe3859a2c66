//! The designer's HTTP server: loopback only, a thread per request (a run
//! may build for minutes while the editor goes on validating).
//!
//! `tiny_http` is enough for one person's editor on 127.0.0.1 and brings no
//! async runtime into the compiler. Every request's `Host` and `Origin` are
//! checked (DNS rebinding, cross-site requests) and every `/api/` call needs
//! the session token; the app itself is served from the files embedded in
//! the binary.

use std::io::Read;
use std::sync::{Arc, Mutex};

use include_dir::{include_dir, Dir};
use serde_json::{json, Value};

use super::api::Api;
use super::run::Runner;

/// `designer/dist`, built by `npm run build` in `designer/` and committed.
static APP: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../designer/dist");

/// The most a request body may hold (a document with its bodies).
const MAX_BODY: usize = 32 << 20;

/// What a handler answers.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(&'static str, String)>,
}

impl Reply {
    pub fn json(status: u16, v: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: v.to_string().into_bytes(),
            headers: Vec::new(),
        }
    }

    pub fn error(status: u16, code: &str, message: impl Into<String>) -> Reply {
        Reply::json(
            status,
            &json!({"error": {"code": code, "message": message.into()}}),
        )
    }

    pub fn with_header(mut self, name: &'static str, value: String) -> Reply {
        self.headers.push((name, value));
        self
    }
}

/// A request as the API sees it.
pub struct Call<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub body: &'a [u8],
    pub header: &'a dyn Fn(&str) -> Option<String>,
}

/// Serves until the process is stopped.
pub fn serve(
    server: &tiny_http::Server,
    port: u16,
    token: &str,
    api: &Arc<Mutex<Api>>,
    runner: &Arc<Runner>,
) {
    for request in server.incoming_requests() {
        let token = token.to_string();
        let api = Arc::clone(api);
        let runner = Arc::clone(runner);
        std::thread::spawn(move || respond(request, port, &token, &api, &runner));
    }
}

fn respond(
    mut request: tiny_http::Request,
    port: u16,
    token: &str,
    api: &Arc<Mutex<Api>>,
    runner: &Arc<Runner>,
) {
    let reply = answer(&mut request, port, token, api, runner);
    let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
    let fixed = [
        ("Content-Type", reply.content_type),
        ("X-Content-Type-Options", "nosniff"),
        // The token is in the page's address: never send it elsewhere.
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        (
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
        ),
    ];
    let extra = reply.headers.iter().map(|(n, v)| (*n, v.as_str()));
    for (name, value) in fixed.into_iter().chain(extra) {
        // Names and values are ours (an ETag is hex): always valid.
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(h);
        }
    }
    // A client that went away is not the server's problem.
    let _ = request.respond(response);
}

fn answer(
    request: &mut tiny_http::Request,
    port: u16,
    token: &str,
    api: &Arc<Mutex<Api>>,
    runner: &Arc<Runner>,
) -> Reply {
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_ascii_lowercase(),
                h.value.as_str().to_string(),
            )
        })
        .collect();
    let get = |name: &str| -> Option<String> {
        let name = name.to_ascii_lowercase();
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    };
    let allowed_hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !get("Host").is_some_and(|h| allowed_hosts.contains(&h)) {
        return Reply::error(
            403,
            "bad_host",
            "this server answers only to http://127.0.0.1 and http://localhost on its own port",
        );
    }
    if let Some(origin) = get("Origin") {
        if !allowed_hosts
            .iter()
            .any(|h| origin == format!("http://{h}"))
        {
            return Reply::error(
                403,
                "bad_origin",
                format!(
                    "requests from {origin} are refused: only the designer's own page may call it"
                ),
            );
        }
    }
    let method = request.method().as_str().to_string();
    let url = request.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let (path, query) = (path.to_string(), query.to_string());
    if !path.starts_with("/api/") {
        if method != "GET" && method != "HEAD" {
            return Reply::error(405, "method_not_allowed", "the app's files are read-only");
        }
        return asset(&path);
    }
    let sent = get("X-Svc-Token").unwrap_or_default();
    if !same(sent.as_bytes(), token.as_bytes()) {
        return Reply::error(
            401,
            "unauthorized",
            "missing or wrong X-Svc-Token: open the address `svc design` printed",
        );
    }
    let mut body = Vec::new();
    let limited = request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body);
    if limited.is_err() {
        return Reply::error(400, "bad_request", "the request body could not be read");
    }
    if body.len() > MAX_BODY {
        return Reply::error(413, "too_large", "the request body is over 32 MiB");
    }
    match (method.as_str(), path.as_str()) {
        ("POST", "/api/run") => return runner.handle(api, &body),
        ("GET", "/api/run/progress") => return runner.progress(&query),
        ("POST", "/api/run/stop") => {
            return Reply::json(200, &json!({"stopped": runner.stop()}));
        }
        (_, "/api/run" | "/api/run/stop") => {
            return Reply::error(405, "method_not_allowed", format!("{path} takes POST"));
        }
        (_, "/api/run/progress") => {
            return Reply::error(405, "method_not_allowed", format!("{path} takes GET"));
        }
        _ => {}
    }
    let call = Call {
        method: &method,
        path: &path,
        body: &body,
        header: &get,
    };
    api.lock().unwrap_or_else(|p| p.into_inner()).handle(&call)
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn asset(path: &str) -> Reply {
    let name = match path.trim_start_matches('/') {
        "" => "index.html",
        other => other,
    };
    let Some(file) = APP.get_file(name) else {
        return Reply::error(404, "not_found", format!("no file {path}"));
    };
    let content_type = match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    };
    Reply {
        status: 200,
        content_type,
        body: file.contents().to_vec(),
        headers: Vec::new(),
    }
}
