//! A one-request-per-connection HTTP/1.1 server on loopback, for the
//! stand-in model: a scripted failure may cut a reply halfway and close the
//! connection, as a failing provider does, which tiny_http cannot (it keeps
//! the connection for the next request, and the client would wait for the
//! rest of the reply). Every reply says `Connection: close`.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A request as received.
pub struct Request {
    pub method: String,
    /// The path without its query.
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What a request is answered with.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    /// More headers (a `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// Only the first this many bytes of `body` are sent, then the
    /// connection closes, though the head promised the whole body.
    pub cut_at: Option<usize>,
    /// How long to wait before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn new(status: u16, content_type: &'static str, body: String) -> Reply {
        Reply {
            status,
            content_type,
            headers: Vec::new(),
            body,
            cut_at: None,
            delay: Duration::ZERO,
        }
    }
}

/// A running server; stops accepting when dropped.
pub struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Serves `handle` on a free loopback port, each connection on a thread of
/// its own (a delayed reply holds up no other).
pub fn serve(
    what: &str,
    handle: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> Result<Server, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("cannot start {what} on loopback: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("{what} has no address: {e}"))?
        .port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopped.load(Ordering::SeqCst) {
                return;
            }
            let Ok(stream) = stream else { continue };
            let handle = Arc::clone(&handle);
            std::thread::spawn(move || connection(stream, &*handle));
        }
    });
    Ok(Server { port, stop })
}

fn connection(stream: TcpStream, handle: &dyn Fn(&Request) -> Reply) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let Ok(request) = read_request(&mut reader, &mut writer) else {
        return;
    };
    let reply = handle(&request);
    std::thread::sleep(reply.delay);
    let extra: String = reply
        .headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len()
    );
    let body = reply.body.as_bytes();
    let sent = &body[..reply.cut_at.unwrap_or(body.len()).min(body.len())];
    let _ = writer
        .write_all(head.as_bytes())
        .and_then(|()| writer.write_all(sent))
        .and_then(|()| writer.flush());
    let _ = writer.shutdown(Shutdown::Write);
}

/// The request's head and body (by `Content-Length`, or chunked); a
/// client that asks for `100 Continue` gets it first.
fn read_request(reader: &mut impl BufRead, writer: &mut impl Write) -> std::io::Result<Request> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default();
    let path = target.split('?').next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let limit = 16 << 20;
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(std::io::Error::other)?;
            if n == 0 || request.body.len() + n > limit {
                break;
            }
            let start = request.body.len();
            request.body.resize(start + n, 0);
            reader.read_exact(&mut request.body[start..])?;
            reader.read_line(&mut String::new())?;
        }
    } else if let Some(n) = request
        .header("content-length")
        .and_then(|v| v.parse().ok())
    {
        let n: usize = n;
        request.body.resize(n.min(limit), 0);
        reader.read_exact(&mut request.body)?;
    }
    Ok(request)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use std::io::Read;

    /// Sends `raw` and reads until the server closes the connection.
    fn exchange(port: u16, raw: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(raw.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn a_reply_is_whole_or_cut_and_the_connection_closes_after_it() {
        let server = serve("a test server", |r| {
            let text = String::from_utf8_lossy(&r.body).into_owned();
            let mut reply =
                Reply::new(200, "text/plain", format!("{} {} {text}", r.method, r.path));
            if text == "cut" {
                reply.cut_at = Some(4);
            }
            if text == "late" {
                reply.status = 503;
                reply.headers.push(("Retry-After", "1".into()));
                reply.delay = Duration::from_millis(50);
            }
            reply
        })
        .unwrap();
        let whole = exchange(
            server.port,
            "POST /v1/x?q=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
        );
        assert!(whole.starts_with("HTTP/1.1 200 OK\r\n"), "{whole}");
        assert!(whole.contains("Connection: close\r\n"), "{whole}");
        assert!(whole.ends_with("\r\n\r\nPOST /v1/x hi"), "{whole}");
        let chunked = exchange(
            server.port,
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ncut\r\n0\r\n\r\n",
        );
        assert!(chunked.contains("Content-Length: 10\r\n"), "{chunked}");
        assert!(chunked.ends_with("\r\n\r\nPOST"), "{chunked}");
        let started = std::time::Instant::now();
        let late = exchange(
            server.port,
            "POST / HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\nlate",
        );
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(
            late.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\n"),
            "{late}"
        );
        assert!(late.contains("Retry-After: 1\r\n"), "{late}");
    }
}
