//! A minimal HTTP/1.1 client and stub server on loopback, enough for the
//! contract suite (no TLS, no keep-alive), so the tests need no HTTP crate.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A request as sent or received.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A response as received.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn read_head(reader: &mut impl BufRead) -> std::io::Result<(String, BTreeMap<String, String>)> {
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Ok((first.trim_end().to_string(), headers))
}

fn read_body(
    reader: &mut impl BufRead,
    headers: &BTreeMap<String, String>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if n == 0 {
                let mut end = String::new();
                let _ = reader.read_line(&mut end);
                break;
            }
            let mut chunk = vec![0; n];
            reader.read_exact(&mut chunk)?;
            body.extend_from_slice(&chunk);
            let mut crlf = String::new();
            reader.read_line(&mut crlf)?;
        }
    } else if let Some(len) = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        body.resize(len, 0);
        reader.read_exact(&mut body)?;
    } else {
        reader.read_to_end(&mut body)?;
    }
    Ok(body)
}

/// How the body of a request is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// A server may answer (413) before reading a large body; a failed
    /// write is then tolerated and the response is still read.
    Lenient,
    /// As Python's urllib, Java's HttpClient or curl without `Expect`: the
    /// whole body is written before anything is read, and a failed write
    /// (a connection reset) is an error.
    Whole,
}

/// Sends one request to 127.0.0.1:`port` and reads the whole response.
pub fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> std::io::Result<Response> {
    send_with(port, method, path, headers, body, timeout, Writes::Lenient)
}

/// [`send`], choosing how the body is written.
pub fn send_with(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
    writes: Writes,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    match writes {
        Writes::Lenient => {
            let _ = stream.write_all(body);
        }
        Writes::Whole => stream
            .write_all(body)
            .map_err(|e| std::io::Error::new(e.kind(), format!("writing the body: {e}")))?,
    }
    let mut reader = BufReader::new(stream);
    let (status_line, headers) = read_head(&mut reader)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {status_line:?}")))?;
    let body = read_body(&mut reader, &headers)?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// What a stub answers.
pub enum Reply {
    Json(u16, String),
    /// A `text/plain` body (Slack's incoming webhooks answer `ok`).
    Text(u16, String),
    /// Waits, then answers.
    Slow(Duration, String),
    /// Closes the connection without answering.
    Hangup,
    /// A JSON body with these status and headers (a `Retry-After`, say).
    WithHeaders(u16, Vec<(String, String)>, String),
    /// A reply's head that promises more body than follows: the body's
    /// first half, then the connection closes (a reply cut on its way).
    Cut(String),
    /// An OpenAI-compatible chat-completions stream (server-sent events):
    /// each piece after its delay as `data: {"choices":[{"delta":{"content":
    /// ...}}]}`, then `data: [DONE]`, or nothing more when `done` is false (a
    /// stream that breaks). When the client goes away first, `cut` records
    /// when the stub's write failed.
    Stream {
        pieces: Vec<(Duration, String)>,
        done: bool,
        cut: Option<Arc<Mutex<Option<Instant>>>>,
    },
    /// A stream of named server-sent events (Anthropic's Messages API
    /// streams): each after its delay as `event: <name>` and
    /// `data: <json>`; the connection closes after the last.
    Events(Vec<(Duration, String, serde_json::Value)>),
    /// A chat-completions stream of whole chunks (tool-call pieces, say),
    /// each after its delay as `data: <chunk>`; `done` and `cut` as for
    /// [`Reply::Stream`].
    Chunks {
        chunks: Vec<(Duration, serde_json::Value)>,
        done: bool,
        cut: Option<Arc<Mutex<Option<Instant>>>>,
    },
    /// Holds the call for the delay, watching the connection, then answers
    /// this status and JSON body; a client that hangs up first gets no
    /// answer, and `holds` counts it.
    Held {
        delay: Duration,
        status: u16,
        body: String,
        holds: Arc<Holds>,
    },
}

/// What [`Reply::Held`] replies share: how many calls are held now, the
/// most held at once, and how many clients hung up while held.
#[derive(Debug, Default)]
pub struct Holds {
    pub now: AtomicUsize,
    pub most: AtomicUsize,
    pub hung_up: AtomicUsize,
}

impl Holds {
    /// Holds a call until `delay` passes (true) or its client hangs up
    /// (false).
    fn hold(&self, stream: &TcpStream, delay: Duration) -> bool {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let until = Instant::now() + delay;
        let mut open = true;
        let _ = stream.set_nonblocking(true);
        while open && Instant::now() < until {
            // A read of zero bytes: the client closed its end.
            match stream.peek(&mut [0u8; 1]) {
                Ok(0) => open = false,
                Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => open = false,
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        let _ = stream.set_nonblocking(false);
        self.now.fetch_sub(1, Ordering::SeqCst);
        if !open {
            self.hung_up.fetch_add(1, Ordering::SeqCst);
        }
        open
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// How a stub ends the connection of each reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// An `HTTP/1.1` reply that says `Connection: close`, then the close.
    Announced,
    /// An `HTTP/1.0` reply without a `Connection` header, as Python's
    /// `http.server` answers: the version alone tells the client that the
    /// connection ends with the reply. The close follows the reply after
    /// the given delay (zero: at once, as Python's does).
    Http10(Duration),
}

/// A stub HTTP server on a free loopback port; records what it received and
/// stops when dropped.
pub struct Stub {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Request>>>,
    /// Connections being served now (a call the client has not let go of).
    open: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    pub fn start(
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> std::io::Result<Stub> {
        Self::start_closing(Closing::Announced, handler)
    }

    /// [`Stub::start`], choosing how each reply ends its connection.
    pub fn start_closing(
        closing: Closing,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> std::io::Result<Stub> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let open = Arc::new(AtomicUsize::new(0));
        let (reqs, stopped, serving) = (requests.clone(), stop.clone(), open.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (h, r, n) = (handler.clone(), reqs.clone(), serving.clone());
                        n.fetch_add(1, Ordering::SeqCst);
                        std::thread::spawn(move || {
                            serve(stream, closing, &*h, &r);
                            n.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(Stub {
            port,
            requests,
            open,
            stop,
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many connections the stub is serving now: a reply being written,
    /// or a request being read. A stream the client cut ends at the stub's
    /// next write.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    pub fn received(&self) -> Vec<Request> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn serve(stream: TcpStream, closing: Closing, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let Ok((line, headers)) = read_head(&mut reader) else {
        return;
    };
    let Ok(body) = read_body(&mut reader, &headers) else {
        return;
    };
    let mut parts = line.split_whitespace();
    let req = Request {
        method: parts.next().unwrap_or_default().to_string(),
        path: parts.next().unwrap_or_default().to_string(),
        headers,
        body,
    };
    if let Ok(mut l) = log.lock() {
        l.push(req.clone());
    }
    let (status, kind, body) = match handler(&req) {
        Reply::Stream { pieces, done, cut } => {
            chat_stream(&mut writer, &content_chunks(&pieces), done, cut.as_deref());
            return;
        }
        Reply::Chunks { chunks, done, cut } => {
            chat_stream(&mut writer, &chunks, done, cut.as_deref());
            return;
        }
        Reply::Events(events) => {
            let events = events
                .into_iter()
                .map(|(delay, name, data)| (delay, format!("event: {name}\ndata: {data}\n\n")))
                .collect();
            event_stream(&mut writer, events, None);
            return;
        }
        Reply::Json(s, b) => (s, "application/json", b),
        Reply::Text(s, b) => (s, "text/plain", b),
        Reply::Slow(d, b) => {
            std::thread::sleep(d);
            (200, "application/json", b)
        }
        Reply::Held {
            delay,
            status,
            body,
            holds,
        } => {
            if !holds.hold(&writer, delay) {
                return;
            }
            (status, "application/json", body)
        }
        Reply::Hangup => return,
        Reply::WithHeaders(status, headers, body) => {
            let extra: String = headers
                .iter()
                .map(|(k, v)| format!("{k}: {v}\r\n"))
                .collect();
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
                body.len()
            );
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(body.as_bytes());
            return;
        }
        Reply::Cut(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(&body.as_bytes()[..body.len() / 2]);
            let _ = writer.flush();
            return;
        }
    };
    let head = match closing {
        Closing::Announced => format!(
            "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ),
        Closing::Http10(_) => format!(
            "HTTP/1.0 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ),
    };
    let _ = writer.write_all(head.as_bytes());
    let _ = writer.write_all(body.as_bytes());
    if let Closing::Http10(delay) = closing {
        // Nothing more is read: a request a client sends on this connection
        // reaches no one.
        std::thread::sleep(delay);
    }
}

/// The chunks of a [`Reply::Stream`]: one content delta each.
fn content_chunks(pieces: &[(Duration, String)]) -> Vec<(Duration, serde_json::Value)> {
    pieces
        .iter()
        .map(|(delay, piece)| {
            let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
            (*delay, chunk)
        })
        .collect()
}

/// Writes a chat-completions stream (see [`Reply::Chunks`]) and closes.
fn chat_stream(
    writer: &mut TcpStream,
    chunks: &[(Duration, serde_json::Value)],
    done: bool,
    cut: Option<&Mutex<Option<Instant>>>,
) {
    let mut events: Vec<(Duration, String)> = chunks
        .iter()
        .map(|(delay, chunk)| (*delay, format!("data: {chunk}\n\n")))
        .collect();
    if done {
        events.push((Duration::ZERO, "data: [DONE]\n\n".to_string()));
    }
    event_stream(writer, events, cut);
}

/// Writes server-sent events, each after its delay, and closes; `cut`
/// records when a write failed (the client went away).
fn event_stream(
    writer: &mut TcpStream,
    events: Vec<(Duration, String)>,
    cut: Option<&Mutex<Option<Instant>>>,
) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let mut ok = writer.write_all(head.as_bytes()).is_ok();
    for (delay, event) in events {
        if !ok {
            break;
        }
        std::thread::sleep(delay);
        ok = writer
            .write_all(event.as_bytes())
            .and_then(|()| writer.flush())
            .is_ok();
    }
    if !ok {
        if let Some(cut) = cut {
            if let Ok(mut at) = cut.lock() {
                at.get_or_insert_with(Instant::now);
            }
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A loopback port free now and not handed out before by this process: a
/// service takes seconds to bind the port it is given, and meanwhile the
/// kernel may offer the same free port to a test running beside it.
pub fn free_port() -> std::io::Result<u16> {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    for _ in 0..64 {
        let l = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let port = l.local_addr()?.port();
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if given.insert(port) {
            return Ok(port);
        }
    }
    Err(std::io::Error::other(
        "no free loopback port this process has not handed out already",
    ))
}
