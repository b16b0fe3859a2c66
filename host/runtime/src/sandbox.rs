//! Per-call sandbox state: WASI with nothing granted, a memory cap, and
//! captured output.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use wasmtime::component::ResourceTable;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::clocks::{HostMonotonicClock, HostWallClock};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::Limits;

/// How much of a plugin's stdout/stderr is kept (shown with `--verbose`).
const CAPTURE_BYTES: usize = 64 * 1024;

/// The store data of one plugin call.
pub(crate) struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: Limits,
    /// Set when the guest tried to grow memory past the cap.
    pub(crate) memory_cap_hit: bool,
    pub(crate) stdout: MemoryOutputPipe,
    pub(crate) stderr: MemoryOutputPipe,
    /// The connector nodes of the current emit, rendered by the host: a
    /// 0.1 backend asks for them through its `templates.render` import.
    pub(crate) connectors: Vec<crate::RenderedNode>,
}

/// Time stands still inside the sandbox so output cannot depend on it.
struct FixedWallClock;
impl HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

struct FixedMonotonicClock;
impl HostMonotonicClock for FixedMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

impl Sandbox {
    pub(crate) fn new(limits: Limits) -> Self {
        let stdout = MemoryOutputPipe::new(CAPTURE_BYTES);
        let stderr = MemoryOutputPipe::new(CAPTURE_BYTES);
        // Deny by default: no preopened directories, no environment, no
        // arguments, closed stdin, no network, fixed clocks and seeded
        // randomness (so two runs produce the same bytes).
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .wall_clock(FixedWallClock)
            .monotonic_clock(FixedMonotonicClock)
            .secure_random(StdRng::seed_from_u64(0))
            .insecure_random(StdRng::seed_from_u64(1))
            .insecure_random_seed(2)
            .build();
        Sandbox {
            wasi,
            table: ResourceTable::new(),
            limits,
            memory_cap_hit: false,
            stdout,
            stderr,
            connectors: Vec::new(),
        }
    }

    /// What the guest printed, for `--verbose`.
    pub(crate) fn captured_output(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.stdout.contents()).into_owned();
        out.push_str(&String::from_utf8_lossy(&self.stderr.contents()));
        out
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl ResourceLimiter for Sandbox {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limits.memory_bytes {
            self.memory_cap_hit = true;
            // An error traps at once; the caller turns it into a diagnostic.
            return Err(wasmtime::Error::msg("memory cap reached"));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}
