//! A real OpenTelemetry collector for the telemetry tests: Jaeger v2,
//! built by tests/telemetry/jaeger.sh (which tests/run-all.sh runs and
//! whose path it exports as SVC_JAEGER), started on loopback ports of its
//! own with in-memory storage. Traces are read back through its query API;
//! metrics through the Prometheus exporter of its metrics pipeline (Jaeger
//! stores no metrics).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http;

pub struct Jaeger {
    child: Option<Child>,
    pub otlp_http: u16,
    pub otlp_grpc: u16,
    query: u16,
    prometheus: u16,
    _dir: tempfile::TempDir,
}

/// The Jaeger binary SVC_JAEGER names. In CI its absence fails the test;
/// elsewhere the test says it is skipping.
pub fn binary() -> Option<PathBuf> {
    let found = std::env::var_os("SVC_JAEGER")
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    if found.is_none() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !in_ci,
            "SVC_JAEGER does not name a Jaeger binary, and CI=true: tests/run-all.sh builds one with tests/telemetry/jaeger.sh"
        );
        eprintln!(
            "skipping: set SVC_JAEGER=$(tests/telemetry/jaeger.sh) to run the telemetry tests"
        );
    }
    found
}

impl Jaeger {
    /// Starts Jaeger and waits until its query API and OTLP receiver answer.
    pub fn start(binary: &std::path::Path) -> Result<Jaeger, String> {
        let port = || http::free_port().map_err(|e| e.to_string());
        let (otlp_http, otlp_grpc, query, query_grpc, prometheus) =
            (port()?, port()?, port()?, port()?, port()?);
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let config = dir.path().join("jaeger.yaml");
        std::fs::write(
            &config,
            format!(
                "service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {{receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}}
    metrics: {{receivers: [otlp], exporters: [prometheus]}}
  telemetry: {{metrics: {{level: none}}, logs: {{level: warn}}}}
extensions:
  jaeger_storage: {{backends: {{mem: {{memory: {{max_traces: 10000}}}}}}}}
  jaeger_query:
    storage: {{traces: mem}}
    http: {{endpoint: \"127.0.0.1:{query}\"}}
    grpc: {{endpoint: \"127.0.0.1:{query_grpc}\"}}
receivers:
  otlp:
    protocols:
      grpc: {{endpoint: \"127.0.0.1:{otlp_grpc}\"}}
      http: {{endpoint: \"127.0.0.1:{otlp_http}\"}}
processors: {{batch: {{timeout: 100ms}}}}
exporters:
  jaeger_storage_exporter: {{trace_storage: mem}}
  prometheus: {{endpoint: \"127.0.0.1:{prometheus}\"}}
"
            ),
        )
        .map_err(|e| e.to_string())?;
        let log =
            std::fs::File::create(dir.path().join("jaeger.log")).map_err(|e| e.to_string())?;
        let child = Command::new(binary)
            .arg(format!("--config=file:{}", config.display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut jaeger = Jaeger {
            child: Some(child),
            otlp_http,
            otlp_grpc,
            query,
            prometheus,
            _dir: dir,
        };
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = jaeger.get(jaeger.query, "/api/services").is_ok()
                && std::net::TcpStream::connect(("127.0.0.1", otlp_http)).is_ok();
            if ready {
                return Ok(jaeger);
            }
            if let Some(status) = jaeger
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!("jaeger exited ({status}): {}", jaeger.log()));
            }
            if Instant::now() > until {
                return Err(format!("jaeger not ready in 30 s: {}", jaeger.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("jaeger.log")).unwrap_or_default()
    }

    fn get(&self, port: u16, path: &str) -> Result<http::Response, String> {
        let r = http::send(port, "GET", path, &[], b"", Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        if r.status == 200 {
            Ok(r)
        } else {
            Err(format!("GET {path}: {} {}", r.status, r.text()))
        }
    }

    /// The OTLP/HTTP endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT wants it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.otlp_http)
    }

    /// The traces of `service` (Jaeger's `/api/traces`), waiting until
    /// `done` says they are complete or `limit` passes; the last answer.
    pub fn traces(
        &self,
        service: &str,
        limit: Duration,
        done: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let until = Instant::now() + limit;
        loop {
            let found = self
                .get(
                    self.query,
                    &format!("/api/traces?service={service}&limit=100"),
                )
                .ok()
                .and_then(|r| r.json()["data"].as_array().cloned())
                .unwrap_or_default();
            if done(&found) || Instant::now() > until {
                return found;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// What the Prometheus exporter shows now (text exposition format).
    pub fn metrics(&self) -> String {
        self.get(self.prometheus, "/metrics")
            .map(|r| r.text())
            .unwrap_or_default()
    }

    /// Stops the collector (a test of what services do without one).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Jaeger {
    fn drop(&mut self) {
        self.stop();
    }
}
