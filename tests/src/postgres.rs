//! A real PostgreSQL server for the end-to-end tests: Debian's `postgresql`
//! package, initialised in a temporary data directory, serving a free
//! loopback port with trust authentication and no fsync, stopped on drop.
//! As root (CI) the server runs as the package's `postgres` user, since
//! PostgreSQL refuses to run as root. (The SDK's tests have the same helper
//! in Python: sdk/python/tests/postgres.py.)

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::http;

pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
    child: Option<Child>,
}

/// The newest installed server's bin directory.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// Whether a PostgreSQL server is installed (in CI its absence fails).
pub fn require_postgres() -> bool {
    if binaries().is_some() {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "no PostgreSQL server under /usr/lib/postgresql, and CI=true: apt-get install postgresql (tests/run-all.sh does)"
    );
    eprintln!("skipping: no PostgreSQL server (apt-get install postgresql)");
    false
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Postgres {
    /// Initialises a cluster (user `svc`) and starts the server.
    pub fn start() -> Result<Postgres, String> {
        let bin = binaries().ok_or("no PostgreSQL server: apt-get install postgresql")?;
        let dir = tempfile::Builder::new()
            .prefix("svc-pg-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let as_postgres = is_root();
        if as_postgres {
            run(Command::new("chown").arg("postgres:").arg(dir.path()))?;
        }
        let port = http::free_port().map_err(|e| e.to_string())?;
        let mut pg = Postgres {
            dir,
            bin,
            port,
            as_postgres,
            child: None,
        };
        let data = pg.data();
        run(pg.command("initdb").arg("-D").arg(&data).args([
            "-U",
            "svc",
            "--auth=trust",
            "--no-sync",
        ]))?;
        pg.resume()?;
        Ok(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// `postgresql://svc@127.0.0.1:<port>/<database>`.
    pub fn url(&self, database: &str) -> String {
        format!("postgresql://svc@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates an empty database; returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        run(Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "svc", "-d", "postgres", "-p"])
            .arg(self.port.to_string())
            .args(["-v", "ON_ERROR_STOP=1", "-q", "-c"])
            .arg(format!("CREATE DATABASE {name}")))?;
        Ok(self.url(name))
    }

    /// Starts the server again (after [`Postgres::stop`]) and waits until it
    /// takes connections.
    pub fn resume(&mut self) -> Result<(), String> {
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-h", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("-k")
            .arg(self.dir.path())
            .args(["-c", "fsync=off"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            let ready = self
                .command("pg_isready")
                .args(["-q", "-h", "127.0.0.1", "-p"])
                .arg(self.port.to_string())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                return Err(format!("postgres exited with {status} at start"));
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err("postgres did not take connections within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A fast shutdown: every client is disconnected at once.
    pub fn stop(&mut self) -> Result<(), String> {
        if let Some(mut child) = self.child.take() {
            let data = self.data();
            let stopped = run(self
                .command("pg_ctl")
                .arg("-D")
                .arg(&data)
                .args(["-m", "fast", "-w", "stop"]));
            if stopped.is_err() {
                let _ = child.kill();
            }
            let _ = child.wait();
            stopped?;
        }
        Ok(())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
