//! The probe's decisions, with no GPU in sight: how big each chunk is, and
//! when to stop (out of memory, ceiling reached, swapping, out of time,
//! cancelled). The device driver (`gpu.rs`) only allocates what
//! [`Tracker::next_chunk`] asks for and reports back how it went.

use serde::{Deserialize, Serialize};
use std::fmt;
use vramfit_core::units::GIB;
use vramfit_core::Bytes;

/// WebGPU copies, clears and maps in multiples of 4 bytes, so every planned
/// chunk is a multiple of this.
pub const ALIGN: u64 = 4;

/// The largest chunk the probe asks for, whatever the adapter allows.
pub const MAX_CHUNK: Bytes = Bytes(256 << 20);

/// Default wall-clock budget for one probe.
pub const DEFAULT_TIME_LIMIT_MS: u64 = 20_000;

/// Default slowdown (time per byte against the baseline) read as swapping.
pub const DEFAULT_SWAP_SLOWDOWN: f64 = 4.0;

/// Default number of first chunks whose median speed is the baseline.
pub const DEFAULT_BASELINE_CHUNKS: usize = 3;

/// Default noise floor: a chunk that takes less than this is never "slow".
pub const DEFAULT_SWAP_FLOOR_MS: f64 = 20.0;

fn align_down(n: u64) -> u64 {
    n - n % ALIGN
}

/// How far the probe may go and how it judges what it sees.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeConfig {
    /// Never allocate more than this in total (the safety cap).
    pub ceiling: Bytes,
    /// Size of one buffer; the last one shrinks to land on the ceiling.
    pub chunk: Bytes,
    /// Stop once the chunks together took longer than this.
    pub time_limit_ms: u64,
    /// A chunk this many times slower per byte than the baseline means the
    /// driver is swapping to system memory: stop there.
    pub swap_slowdown: f64,
    /// How many first chunks make the baseline (their median time per byte).
    /// 0 turns swap detection off.
    pub baseline_chunks: usize,
    /// Timer noise floor: chunks faster than this are never judged slow, so
    /// a 1 ms hiccup on a 0.2 ms chunk is not read as swapping.
    pub swap_floor_ms: f64,
}

impl ProbeConfig {
    /// A probe capped at `ceiling` (rounded down to a multiple of 4 bytes),
    /// in chunks of at most 256 MiB that the adapter's `max_buffer_size`
    /// allows, with the default time limit and swap rule.
    pub fn new(ceiling: Bytes, max_buffer_size: u64) -> Self {
        let ceiling = Bytes(align_down(ceiling.get()));
        let chunk = align_down(max_buffer_size)
            .min(MAX_CHUNK.get())
            .min(ceiling.get())
            .max(ALIGN);
        ProbeConfig {
            ceiling,
            chunk: Bytes(chunk),
            time_limit_ms: DEFAULT_TIME_LIMIT_MS,
            swap_slowdown: DEFAULT_SWAP_SLOWDOWN,
            baseline_chunks: DEFAULT_BASELINE_CHUNKS,
            swap_floor_ms: DEFAULT_SWAP_FLOOR_MS,
        }
    }

    /// The default probe for a workload whose estimated peak is `target`:
    /// the ceiling is the target plus a margin of 10% or 1 GiB, whichever
    /// is larger, so "it fits" can be confirmed without eating everything.
    pub fn for_target(target: Bytes, max_buffer_size: u64) -> Self {
        Self::new(default_ceiling(target), max_buffer_size)
    }

    /// The same probe with its chunk no larger than `max_buffer_size` (the
    /// device's own limit, which may be lower than the plan assumed).
    pub fn clamped_to(mut self, max_buffer_size: u64) -> Self {
        let limit = align_down(max_buffer_size).max(ALIGN);
        if self.chunk.get() > limit {
            self.chunk = Bytes(limit);
        }
        self
    }
}

/// `target` plus 10% or 1 GiB, whichever is larger (saturating).
pub fn default_ceiling(target: Bytes) -> Bytes {
    let margin = (target.get() / 10).max(GIB);
    target + Bytes(margin)
}

/// The size of the next buffer after `allocated` bytes, or `None` once the
/// ceiling is reached. Chunks are multiples of 4 bytes; the last one shrinks
/// so that the sizes add up exactly to the ceiling (when the ceiling is a
/// multiple of 4, which [`ProbeConfig::new`] ensures).
pub fn next_chunk(allocated: Bytes, cfg: &ProbeConfig) -> Option<Bytes> {
    let chunk = align_down(cfg.chunk.get()).max(ALIGN);
    let remaining = cfg.ceiling.get().saturating_sub(allocated.get());
    let size = align_down(chunk.min(remaining));
    (size > 0).then_some(Bytes(size))
}

/// How the probe ended. The [`Outcome::key`] strings are a public interface
/// (page attributes, CLI JSON).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The device refused a buffer: memory ran out.
    Oom,
    /// The safety ceiling was reached: at least that much is available.
    Ceiling,
    /// A chunk became much slower: the driver started using system memory.
    Swap,
    /// The time limit ran out.
    Time,
    /// The user stopped it.
    Cancelled,
    /// No WebGPU in this browser at all.
    Unsupported,
    /// WebGPU exists but offered no adapter.
    NoAdapter,
    /// The device was lost (driver reset, or the browser took it away).
    DeviceLost,
}

impl Outcome {
    /// Every outcome, in declaration order.
    pub const ALL: [Outcome; 8] = [
        Outcome::Oom,
        Outcome::Ceiling,
        Outcome::Swap,
        Outcome::Time,
        Outcome::Cancelled,
        Outcome::Unsupported,
        Outcome::NoAdapter,
        Outcome::DeviceLost,
    ];

    /// The stable machine-readable name.
    pub fn key(self) -> &'static str {
        match self {
            Outcome::Oom => "oom",
            Outcome::Ceiling => "ceiling",
            Outcome::Swap => "swap",
            Outcome::Time => "time",
            Outcome::Cancelled => "cancelled",
            Outcome::Unsupported => "unsupported",
            Outcome::NoAdapter => "no-adapter",
            Outcome::DeviceLost => "device-lost",
        }
    }

    /// The outcome named `key`, if any.
    pub fn from_key(key: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.key() == key)
    }

    /// What happened and what to do next, in plain words.
    pub fn message(self) -> &'static str {
        match self {
            Outcome::Oom => {
                "The GPU refused more memory. The figure is what could be allocated before that: \
                 a lower bound, since other programs and the browser hold some too."
            }
            Outcome::Ceiling => {
                "The probe reached its safety ceiling without running out. The GPU has at least \
                 this much free; raise the ceiling to measure further."
            }
            Outcome::Swap => {
                "Allocation became much slower, which means the driver started using system \
                 memory. The figure counts only the fast part. Close other GPU programs and \
                 retry, or type your GPU's memory."
            }
            Outcome::Time => {
                "The probe ran out of time before running out of memory. The figure is a lower \
                 bound; retry with a longer time limit, or type your GPU's memory."
            }
            Outcome::Cancelled => {
                "The probe was cancelled. The figure is what had been allocated by then."
            }
            Outcome::Unsupported => {
                "This browser has no WebGPU, so GPU memory cannot be measured here. Try a browser \
                 with WebGPU (recent Chrome or Edge), choose your GPU from the list, or type its \
                 memory."
            }
            Outcome::NoAdapter => {
                "This browser exposes no WebGPU adapter. Try a browser with WebGPU (recent Chrome \
                 or Edge), choose your GPU from the list, or type its memory."
            }
            Outcome::DeviceLost => {
                "The GPU device was lost during the probe (a driver reset, or the browser \
                 reclaimed it). The figure is what was allocated before that; reload the page \
                 and retry, or type your GPU's memory."
            }
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// What happened to one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkResult {
    /// Allocated, written and read back.
    Ok,
    /// Refused (out of memory), or it did not hold what was written.
    Oom,
    /// The device was lost meanwhile.
    Lost,
}

/// Whether the probe goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allocate [`Tracker::next_chunk`] next.
    Continue,
    /// Stop; free everything and report.
    Stop(Outcome),
}

/// Live progress, after each chunk.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Bytes held so far.
    pub allocated: Bytes,
    /// Chunks held so far.
    pub chunks: u32,
    /// Time spent so far (sum of the chunks' times).
    pub elapsed_ms: u64,
    /// Where the probe stops at the latest.
    pub ceiling: Bytes,
}

/// What a probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// Bytes that were allocated, written and read back, all at once: a
    /// lower bound on what this page can use.
    pub allocated: Bytes,
    /// Why it stopped.
    pub outcome: Outcome,
    /// How many buffers made up `allocated`.
    pub chunks: u32,
    /// Time spent allocating, in milliseconds.
    pub elapsed_ms: u64,
}

impl ProbeResult {
    /// A probe that could not start (no WebGPU, no adapter, device refused).
    pub fn failed(outcome: Outcome) -> Self {
        ProbeResult {
            allocated: Bytes::ZERO,
            outcome,
            chunks: 0,
            elapsed_ms: 0,
        }
    }

    /// Whether `allocated` is a measurement the page can use as capacity:
    /// something was allocated, on a real adapter. (No WebGPU or no adapter
    /// give 0 bytes, which says nothing about the GPU.)
    pub fn is_measurement(&self) -> bool {
        self.allocated > Bytes::ZERO
            && !matches!(self.outcome, Outcome::Unsupported | Outcome::NoAdapter)
    }

    /// The outcome's message, or for an out-of-memory at the very first
    /// chunk, a message that says nothing could be allocated.
    pub fn message(&self) -> String {
        if self.outcome == Outcome::Oom && self.allocated == Bytes::ZERO {
            "Nothing could be allocated: the GPU refused even the first buffer. Close other \
             programs using the GPU and retry, or type your GPU's memory."
                .to_string()
        } else {
            self.outcome.message().to_string()
        }
    }

    /// One line: "at least X GiB could be allocated (N buffers, T s)".
    pub fn summary(&self) -> String {
        format!(
            "at least {:.2} GiB could be allocated ({} buffer{}, {:.1} s)",
            self.allocated.gib(),
            self.chunks,
            if self.chunks == 1 { "" } else { "s" },
            self.elapsed_ms as f64 / 1000.0
        )
    }
}

/// The stop rules as a state machine: fed one chunk at a time, it says
/// whether to go on. The first stop wins; later input is ignored.
#[derive(Clone, Debug)]
pub struct Tracker {
    cfg: ProbeConfig,
    allocated: Bytes,
    chunks: u32,
    elapsed_ms: f64,
    /// Milliseconds per byte of the first `baseline_chunks` good chunks.
    baseline: Vec<f64>,
    stopped: Option<Outcome>,
}

impl Tracker {
    /// A fresh probe. A ceiling below one aligned chunk stops at once.
    pub fn new(cfg: ProbeConfig) -> Self {
        let stopped = next_chunk(Bytes::ZERO, &cfg)
            .is_none()
            .then_some(Outcome::Ceiling);
        Tracker {
            cfg,
            allocated: Bytes::ZERO,
            chunks: 0,
            elapsed_ms: 0.0,
            baseline: Vec::new(),
            stopped,
        }
    }

    /// The configuration it judges by.
    pub fn config(&self) -> &ProbeConfig {
        &self.cfg
    }

    /// The next buffer size to try, or `None` once stopped.
    pub fn next_chunk(&self) -> Option<Bytes> {
        match self.stopped {
            Some(_) => None,
            None => next_chunk(self.allocated, &self.cfg),
        }
    }

    /// Where the probe stands.
    pub fn decision(&self) -> Decision {
        match self.stopped {
            Some(o) => Decision::Stop(o),
            None => Decision::Continue,
        }
    }

    fn stop(&mut self, outcome: Outcome) -> Decision {
        if self.stopped.is_none() {
            self.stopped = Some(outcome);
        }
        self.decision()
    }

    /// Stops for a reason found outside the chunk loop (e.g. the device was
    /// lost between chunks). No effect once stopped.
    pub fn stop_with(&mut self, outcome: Outcome) -> Decision {
        self.stop(outcome)
    }

    /// The user asked to stop.
    pub fn cancel(&mut self) -> Decision {
        self.stop(Outcome::Cancelled)
    }

    fn median_ms_per_byte(&self) -> Option<f64> {
        if self.cfg.baseline_chunks == 0 || self.baseline.len() < self.cfg.baseline_chunks {
            return None;
        }
        let mut v = self.baseline.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        })
    }

    /// One chunk of `bytes` took `elapsed_ms` and ended with `result`.
    ///
    /// Rules, in order: out of memory or device lost stop at once (the chunk
    /// is not counted); a chunk more than `swap_slowdown` times slower per
    /// byte than the baseline median stops with [`Outcome::Swap`] (not
    /// counted: it is probably in system memory); otherwise it is counted,
    /// then the ceiling, then the time limit are checked.
    pub fn record_chunk(&mut self, bytes: Bytes, elapsed_ms: f64, result: ChunkResult) -> Decision {
        if self.stopped.is_some() {
            return self.decision();
        }
        let elapsed_ms = if elapsed_ms.is_finite() {
            elapsed_ms.max(0.0)
        } else {
            0.0
        };
        self.elapsed_ms += elapsed_ms;
        match result {
            ChunkResult::Oom => return self.stop(Outcome::Oom),
            ChunkResult::Lost => return self.stop(Outcome::DeviceLost),
            ChunkResult::Ok => {}
        }
        if bytes.get() > 0 {
            let per_byte = elapsed_ms / bytes.get() as f64;
            if let Some(median) = self.median_ms_per_byte() {
                let expected = median * bytes.get() as f64;
                if elapsed_ms > self.cfg.swap_slowdown * expected
                    && elapsed_ms > self.cfg.swap_floor_ms
                {
                    return self.stop(Outcome::Swap);
                }
            } else if self.baseline.len() < self.cfg.baseline_chunks {
                self.baseline.push(per_byte);
            }
        }
        self.allocated += bytes;
        self.chunks += 1;
        if next_chunk(self.allocated, &self.cfg).is_none() {
            return self.stop(Outcome::Ceiling);
        }
        if self.elapsed_ms > self.cfg.time_limit_ms as f64 {
            return self.stop(Outcome::Time);
        }
        Decision::Continue
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        Progress {
            allocated: self.allocated,
            chunks: self.chunks,
            elapsed_ms: self.elapsed_ms.round() as u64,
            ceiling: self.cfg.ceiling,
        }
    }

    /// The result. A probe abandoned before any stop reads as cancelled.
    pub fn result(&self) -> ProbeResult {
        ProbeResult {
            allocated: self.allocated,
            outcome: self.stopped.unwrap_or(Outcome::Cancelled),
            chunks: self.chunks,
            elapsed_ms: self.elapsed_ms.round() as u64,
        }
    }
}

// Native only: the wasm32 test run is the browser suite in tests/web.rs.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;

    /// A fake device: `respond(chunk_index, bytes)` says how long the chunk
    /// took and how it ended. Drives the tracker exactly as `gpu.rs` does.
    fn drive(
        cfg: ProbeConfig,
        mut respond: impl FnMut(u32, Bytes) -> (f64, ChunkResult),
    ) -> (ProbeResult, Vec<Bytes>) {
        let mut t = Tracker::new(cfg);
        let mut sizes = Vec::new();
        let mut i = 0;
        while let Some(size) = t.next_chunk() {
            let (ms, r) = respond(i, size);
            if r == ChunkResult::Ok {
                sizes.push(size);
            }
            i += 1;
            if let Decision::Stop(_) = t.record_chunk(size, ms, r) {
                break;
            }
        }
        (t.result(), sizes)
    }

    fn cfg(ceiling: u64, chunk: u64) -> ProbeConfig {
        ProbeConfig {
            ceiling: Bytes(ceiling),
            chunk: Bytes(chunk),
            ..ProbeConfig::new(Bytes(ceiling), u64::MAX)
        }
    }

    #[test]
    fn outcome_keys_are_the_public_names() {
        let keys: Vec<&str> = Outcome::ALL.iter().map(|o| o.key()).collect();
        assert_eq!(
            keys,
            [
                "oom",
                "ceiling",
                "swap",
                "time",
                "cancelled",
                "unsupported",
                "no-adapter",
                "device-lost"
            ]
        );
        for o in Outcome::ALL {
            assert_eq!(Outcome::from_key(o.key()), Some(o));
            // serde uses the same names.
            assert_eq!(
                serde_json::to_string(&o).expect("test value"),
                format!("\"{}\"", o.key())
            );
            assert!(!o.message().is_empty());
        }
        assert!(Outcome::NoAdapter.message().starts_with(
            "This browser exposes no WebGPU adapter. Try a browser with WebGPU (recent Chrome or Edge)"
        ));
    }

    #[test]
    fn config_for_target() {
        // (target, max_buffer_size) -> (ceiling, chunk)
        let table = [
            // small target: the 1 GiB margin wins
            (Bytes(2 * GIB), 1 << 30, Bytes(3 * GIB), Bytes(256 * MIB)),
            // large target: the 10% margin wins
            (Bytes(40 * GIB), 4 << 30, Bytes(44 * GIB), Bytes(256 * MIB)),
            // adapter allows less than 256 MiB: its limit, rounded to 4
            (Bytes(GIB), 100 * MIB + 3, Bytes(2 * GIB), Bytes(100 * MIB)),
            // no estimate yet: 1 GiB
            (Bytes::ZERO, u64::MAX, Bytes(GIB), Bytes(256 * MIB)),
            // absurd limit: never a zero chunk
            (Bytes::ZERO, 2, Bytes(GIB), Bytes(4)),
            // huge target saturates instead of wrapping, still aligned
            (
                Bytes(u64::MAX),
                u64::MAX,
                Bytes(u64::MAX - 3),
                Bytes(256 * MIB),
            ),
        ];
        for (target, max_buf, ceiling, chunk) in table {
            let c = ProbeConfig::for_target(target, max_buf);
            assert_eq!((c.ceiling, c.chunk), (ceiling, chunk), "target {target:?}");
            assert_eq!(c.time_limit_ms, 20_000);
            assert_eq!(c.swap_slowdown, 4.0);
            assert_eq!(c.baseline_chunks, 3);
        }
        // the chunk never exceeds the ceiling
        assert_eq!(ProbeConfig::new(Bytes(100), 1 << 30).chunk, Bytes(100));
        // clamping to a smaller device limit
        let c = ProbeConfig::new(Bytes(GIB), 1 << 30).clamped_to(64 * MIB + 1);
        assert_eq!(c.chunk, Bytes(64 * MIB));
        assert_eq!(c.clamped_to(u64::MAX).chunk, Bytes(64 * MIB));
    }

    #[test]
    fn chunk_plan_adds_up_to_the_ceiling() {
        // (ceiling, chunk) -> planned sizes
        let table: [(u64, u64, &[u64]); 6] = [
            (1024, 256, &[256, 256, 256, 256]),
            (1000, 256, &[256, 256, 256, 232]),
            (12, 100, &[12]),
            (8, 3, &[4, 4]),  // chunk rounded up to the 4-byte minimum
            (10, 4, &[4, 4]), // unaligned ceiling: stops 2 bytes short
            (0, 256, &[]),    // nothing to do
        ];
        for (ceiling, chunk, want) in table {
            let (res, sizes) = drive(cfg(ceiling, chunk), |_, _| (1.0, ChunkResult::Ok));
            let got: Vec<u64> = sizes.iter().map(|b| b.get()).collect();
            assert_eq!(got, want, "ceiling {ceiling} chunk {chunk}");
            assert_eq!(res.outcome, Outcome::Ceiling);
            assert_eq!(res.allocated.get(), want.iter().sum::<u64>());
            assert_eq!(res.chunks as usize, want.len());
        }
        // the real default: 3 GiB in 256 MiB chunks, exactly
        let c = ProbeConfig::for_target(Bytes(2 * GIB), 1 << 30);
        let (res, sizes) = drive(c, |_, _| (1.0, ChunkResult::Ok));
        assert_eq!(sizes.len(), 12);
        assert_eq!(res.allocated, Bytes(3 * GIB));
    }

    #[test]
    fn oom_at_the_first_chunk_allocates_nothing() {
        let (res, _) = drive(cfg(2 * GIB, GIB), |_, _| (5.0, ChunkResult::Oom));
        assert_eq!(
            res,
            ProbeResult {
                allocated: Bytes::ZERO,
                outcome: Outcome::Oom,
                chunks: 0,
                elapsed_ms: 5
            }
        );
        assert!(res.message().starts_with("Nothing could be allocated"));
    }

    #[test]
    fn oom_later_keeps_what_was_allocated() {
        let (res, _) = drive(cfg(GIB, 100 * MIB), |i, _| {
            (
                2.0,
                if i < 3 {
                    ChunkResult::Ok
                } else {
                    ChunkResult::Oom
                },
            )
        });
        assert_eq!(res.outcome, Outcome::Oom);
        assert_eq!(res.allocated, Bytes(300 * MIB));
        assert_eq!(res.chunks, 3);
        assert_eq!(res.elapsed_ms, 8);
        assert_eq!(res.message(), Outcome::Oom.message());
    }

    #[test]
    fn device_lost_stops_without_counting_the_chunk() {
        let (res, _) = drive(cfg(GIB, 100 * MIB), |i, _| {
            (
                2.0,
                if i < 2 {
                    ChunkResult::Ok
                } else {
                    ChunkResult::Lost
                },
            )
        });
        assert_eq!(res.outcome, Outcome::DeviceLost);
        assert_eq!(res.allocated, Bytes(200 * MIB));
    }

    #[test]
    fn swap_after_the_baseline() {
        // 100 ms per chunk for the baseline (median of 90, 100, 110), then
        // 400 ms is exactly 4x (not more: goes on), then 401 ms stops.
        let times = [90.0, 110.0, 100.0, 400.0, 401.0, 100.0];
        let (res, _) = drive(cfg(10 * GIB, 256 * MIB), |i, _| {
            (times[i as usize], ChunkResult::Ok)
        });
        assert_eq!(res.outcome, Outcome::Swap);
        assert_eq!(res.chunks, 4, "the slow chunk is not counted");
        assert_eq!(res.allocated, Bytes(GIB));
    }

    #[test]
    fn swap_is_judged_per_byte() {
        // The last, smaller chunk takes less time but is 10x slower per byte.
        let c = cfg(1024 * MIB + 64 * MIB, 256 * MIB);
        let (res, _) = drive(c, |_, size| {
            let ms = if size.get() < 256 * MIB { 250.0 } else { 100.0 };
            (ms, ChunkResult::Ok)
        });
        assert_eq!(res.outcome, Outcome::Swap);
        assert_eq!(res.allocated, Bytes(GIB));
    }

    #[test]
    fn fast_chunks_are_never_swap() {
        // 0.1 ms baseline, then 10 ms: 100x slower, but under the noise floor.
        let (res, _) = drive(cfg(2 * GIB, 256 * MIB), |i, _| {
            (if i < 3 { 0.1 } else { 10.0 }, ChunkResult::Ok)
        });
        assert_eq!(res.outcome, Outcome::Ceiling);
        assert_eq!(res.allocated, Bytes(2 * GIB));
        // and with baseline_chunks = 0 there is no swap rule at all
        let c = ProbeConfig {
            baseline_chunks: 0,
            ..cfg(GIB, 256 * MIB)
        };
        let (res, _) = drive(c, |i, _| {
            (if i == 0 { 1.0 } else { 5000.0 }, ChunkResult::Ok)
        });
        assert_eq!(res.outcome, Outcome::Ceiling);
    }

    #[test]
    fn time_limit() {
        let c = ProbeConfig {
            time_limit_ms: 1000,
            ..cfg(10 * GIB, 256 * MIB)
        };
        // 300 ms each: after 4 chunks 1200 ms > 1000 ms; the 4th counts.
        let (res, _) = drive(c, |_, _| (300.0, ChunkResult::Ok));
        assert_eq!(res.outcome, Outcome::Time);
        assert_eq!(res.chunks, 4);
        assert_eq!(res.allocated, Bytes(GIB));
        assert_eq!(res.elapsed_ms, 1200);
    }

    #[test]
    fn ceiling_wins_over_time_on_the_same_chunk() {
        let c = ProbeConfig {
            time_limit_ms: 10,
            ..cfg(512 * MIB, 256 * MIB)
        };
        let (res, _) = drive(c, |_, _| (20.0, ChunkResult::Ok));
        assert_eq!(res.outcome, Outcome::Time, "the first chunk is over time");
        assert_eq!(res.allocated, Bytes(256 * MIB));
        let c = ProbeConfig {
            time_limit_ms: 30,
            ..cfg(512 * MIB, 256 * MIB)
        };
        let (res, _) = drive(c, |_, _| (20.0, ChunkResult::Ok));
        assert_eq!(res.outcome, Outcome::Ceiling);
    }

    #[test]
    fn cancel_stops_and_first_stop_wins() {
        let mut t = Tracker::new(cfg(GIB, 256 * MIB));
        assert_eq!(t.next_chunk(), Some(Bytes(256 * MIB)));
        assert_eq!(
            t.record_chunk(Bytes(256 * MIB), 3.0, ChunkResult::Ok),
            Decision::Continue
        );
        assert_eq!(t.cancel(), Decision::Stop(Outcome::Cancelled));
        assert_eq!(t.next_chunk(), None);
        // later input changes nothing
        assert_eq!(
            t.record_chunk(Bytes(256 * MIB), 3.0, ChunkResult::Oom),
            Decision::Stop(Outcome::Cancelled)
        );
        assert_eq!(
            t.stop_with(Outcome::DeviceLost),
            Decision::Stop(Outcome::Cancelled)
        );
        let r = t.result();
        assert_eq!(
            (r.allocated, r.outcome, r.chunks),
            (Bytes(256 * MIB), Outcome::Cancelled, 1)
        );
        assert_eq!(
            t.progress(),
            Progress {
                allocated: Bytes(256 * MIB),
                chunks: 1,
                elapsed_ms: 3,
                ceiling: Bytes(GIB)
            }
        );
    }

    #[test]
    fn odd_timings_do_not_break_the_rules() {
        let mut t = Tracker::new(cfg(GIB, 256 * MIB));
        assert_eq!(
            t.record_chunk(Bytes(256 * MIB), f64::NAN, ChunkResult::Ok),
            Decision::Continue
        );
        assert_eq!(
            t.record_chunk(Bytes(256 * MIB), -5.0, ChunkResult::Ok),
            Decision::Continue
        );
        assert_eq!(t.progress().elapsed_ms, 0);
    }

    #[test]
    fn result_serializes_with_outcome_keys() {
        let r = ProbeResult {
            allocated: Bytes(3 * GIB),
            outcome: Outcome::NoAdapter,
            chunks: 12,
            elapsed_ms: 1500,
        };
        let json = serde_json::to_string(&r).expect("test value");
        assert_eq!(
            json,
            r#"{"allocated":3221225472,"outcome":"no-adapter","chunks":12,"elapsed_ms":1500}"#
        );
        assert_eq!(
            r.summary(),
            "at least 3.00 GiB could be allocated (12 buffers, 1.5 s)"
        );
        assert_eq!(
            ProbeResult::failed(Outcome::Unsupported).allocated,
            Bytes::ZERO
        );
    }

    fn any_result() -> impl Strategy<Value = ChunkResult> {
        prop_oneof![
            20 => Just(ChunkResult::Ok),
            1 => Just(ChunkResult::Oom),
            1 => Just(ChunkResult::Lost),
        ]
    }

    proptest! {
        /// Whatever the device does, the probe ends, never holds more than
        /// the ceiling, and its figure is the sum of the good chunks.
        #[test]
        fn never_exceeds_the_ceiling_and_terminates(
            ceiling in 0u64..(64 * GIB),
            chunk_div in 1u64..200,
            max_buf in 0u64..(2 * GIB),
            results in proptest::collection::vec((any_result(), 0.0f64..500.0), 0..400),
            cancel_at in proptest::option::of(0usize..400),
            time_limit_ms in 0u64..100_000,
        ) {
            let mut c = ProbeConfig::new(Bytes(ceiling), max_buf.max(ceiling / chunk_div));
            c.time_limit_ms = time_limit_ms;
            let mut t = Tracker::new(c);
            let mut good = Bytes::ZERO;
            let mut steps = 0usize;
            // At most ceiling/chunk + 1 chunks (plus the aligned tail) fit.
            let bound = (ceiling / c.chunk.get().max(1)) as usize + 2;
            while let Some(size) = t.next_chunk() {
                prop_assert!(size.get() > 0 && size.get() % ALIGN == 0);
                prop_assert!(size <= c.chunk.max(Bytes(ALIGN)));
                if cancel_at == Some(steps) {
                    t.cancel();
                    break;
                }
                let (r, ms) = results.get(steps).copied().unwrap_or((ChunkResult::Ok, 1.0));
                let before = t.progress().allocated;
                let d = t.record_chunk(size, ms, r);
                let after = t.progress().allocated;
                prop_assert!(after == before || after == before + size);
                if after > before { good += size; }
                prop_assert!(after <= c.ceiling);
                steps += 1;
                prop_assert!(steps <= bound, "did not terminate: {steps} > {bound}");
                if matches!(d, Decision::Stop(_)) { break; }
            }
            let res = t.result();
            prop_assert!(res.allocated <= c.ceiling);
            prop_assert_eq!(res.allocated, good);
            prop_assert!(t.next_chunk().is_none());
            prop_assert!(matches!(t.decision(), Decision::Stop(_)));
            if res.outcome == Outcome::Ceiling {
                prop_assert!(c.ceiling.get() - res.allocated.get() < ALIGN);
            }
        }
    }
}
