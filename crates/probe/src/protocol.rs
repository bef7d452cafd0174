//! The messages between the page and the probe's Web Worker, as
//! [`vramfit_core::wire`] text. The worker holds wgpu and the JSON export;
//! the page holds only these types and their hand-written codec, so its
//! wasm stays small and the probe's code is fetched when someone opens it.

use crate::plan::{Outcome, ProbeConfig, ProbeResult, Progress};
use crate::report::AdapterReport;
use vramfit_core::wire::{Reader, Writer};
use vramfit_core::Bytes;

/// What the page asks of the worker.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Describe the adapter (allocates nothing).
    Report,
    /// Run a probe within this plan.
    Probe { config: ProbeConfig },
    /// Stop the running probe before its next chunk.
    Cancel,
}

/// What the worker tells the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The worker's wasm is loaded and listening.
    Ready,
    /// The adapter, and its report as the JSON the page exports.
    Report {
        report: AdapterReport,
        json: String,
    },
    /// No WebGPU, or no adapter.
    Missing {
        outcome: Outcome,
    },
    Progress {
        progress: Progress,
    },
    /// The result, and the whole probe (adapter, plan, result) as the JSON
    /// document the page exports ([`crate::document_json`]).
    Done {
        result: ProbeResult,
        json: String,
    },
}

/// A message that can travel between the page and the worker.
pub trait Message: Sized {
    fn write(&self, w: Writer) -> Writer;
    fn read(r: &mut Reader<'_>) -> Option<Self>;
}

/// Encodes a message.
pub fn encode<T: Message>(message: &T) -> String {
    message.write(Writer::new()).finish()
}

/// Decodes a message; `None` for anything that is not one.
pub fn decode<T: Message>(text: &str) -> Option<T> {
    let mut r = Reader::new(text);
    let m = T::read(&mut r)?;
    r.done(m)
}

fn outcome(r: &mut Reader<'_>) -> Option<Outcome> {
    Outcome::from_key(r.text()?)
}

fn bytes(r: &mut Reader<'_>) -> Option<Bytes> {
    r.num().map(Bytes)
}

impl Message for ProbeConfig {
    fn write(&self, w: Writer) -> Writer {
        w.num(self.ceiling.get())
            .num(self.chunk.get())
            .num(self.time_limit_ms)
            .num(self.swap_slowdown)
            .num(self.baseline_chunks)
            .num(self.swap_floor_ms)
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some(ProbeConfig {
            ceiling: bytes(r)?,
            chunk: bytes(r)?,
            time_limit_ms: r.num()?,
            swap_slowdown: r.num()?,
            baseline_chunks: r.num()?,
            swap_floor_ms: r.num()?,
        })
    }
}

impl Message for Progress {
    fn write(&self, w: Writer) -> Writer {
        w.num(self.allocated.get())
            .num(self.chunks)
            .num(self.elapsed_ms)
            .num(self.ceiling.get())
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some(Progress {
            allocated: bytes(r)?,
            chunks: r.num()?,
            elapsed_ms: r.num()?,
            ceiling: bytes(r)?,
        })
    }
}

impl Message for ProbeResult {
    fn write(&self, w: Writer) -> Writer {
        w.num(self.allocated.get())
            .text(self.outcome.key())
            .num(self.chunks)
            .num(self.elapsed_ms)
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some(ProbeResult {
            allocated: bytes(r)?,
            outcome: outcome(r)?,
            chunks: r.num()?,
            elapsed_ms: r.num()?,
        })
    }
}

impl Message for AdapterReport {
    fn write(&self, w: Writer) -> Writer {
        let mut w = w
            .text(&self.name)
            .text(&self.vendor)
            .text(&self.architecture)
            .text(&self.device)
            .text(&self.description)
            .text(&self.backend)
            .text(&self.device_type)
            .num(self.fallback)
            .num(self.limits.len());
        for (name, value) in &self.limits {
            w = w.text(name).num(value);
        }
        w = w.num(self.features.len());
        for f in &self.features {
            w = w.text(f);
        }
        w
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        let mut report = AdapterReport {
            name: r.text()?.to_string(),
            vendor: r.text()?.to_string(),
            architecture: r.text()?.to_string(),
            device: r.text()?.to_string(),
            description: r.text()?.to_string(),
            backend: r.text()?.to_string(),
            device_type: r.text()?.to_string(),
            fallback: r.num()?,
            ..AdapterReport::default()
        };
        // Counts come from the message: each item is read (and fails at the
        // message's end) before anything is reserved for the next.
        let limits: usize = r.num()?;
        for _ in 0..limits {
            report.limits.push((r.text()?.to_string(), r.num()?));
        }
        let features: usize = r.num()?;
        for _ in 0..features {
            report.features.push(r.text()?.to_string());
        }
        Some(report)
    }
}

impl Message for Request {
    fn write(&self, w: Writer) -> Writer {
        match self {
            Request::Report => w.text("report"),
            Request::Probe { config } => config.write(w.text("probe")),
            Request::Cancel => w.text("cancel"),
        }
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.text()? {
            "report" => Request::Report,
            "probe" => Request::Probe {
                config: ProbeConfig::read(r)?,
            },
            "cancel" => Request::Cancel,
            _ => return None,
        })
    }
}

impl Message for Reply {
    fn write(&self, w: Writer) -> Writer {
        match self {
            Reply::Ready => w.text("ready"),
            Reply::Report { report, json } => report.write(w.text("report")).text(json),
            Reply::Missing { outcome } => w.text("missing").text(outcome.key()),
            Reply::Progress { progress } => progress.write(w.text("progress")),
            Reply::Done { result, json } => result.write(w.text("done")).text(json),
        }
    }
    fn read(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.text()? {
            "ready" => Reply::Ready,
            "report" => Reply::Report {
                report: AdapterReport::read(r)?,
                json: r.text()?.to_string(),
            },
            "missing" => Reply::Missing {
                outcome: outcome(r)?,
            },
            "progress" => Reply::Progress {
                progress: Progress::read(r)?,
            },
            "done" => Reply::Done {
                result: ProbeResult::read(r)?,
                json: r.text()?.to_string(),
            },
            _ => return None,
        })
    }
}

// Native only: the wasm32 test run is the browser suite.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn report() -> AdapterReport {
        AdapterReport {
            name: "SwiftShader Device (Subzero)".into(),
            vendor: "google".into(),
            architecture: "swiftshader".into(),
            device: "0xc0de".into(),
            description: "a:b 3:é".into(),
            backend: "webgpu".into(),
            device_type: "cpu".into(),
            fallback: true,
            limits: vec![
                ("maxBufferSize".into(), 1 << 31),
                ("maxBindGroups".into(), 4),
            ],
            features: vec!["shader-f16".into(), String::new()],
        }
    }

    #[test]
    fn messages_read_back_as_written() {
        let cfg = ProbeConfig::new(Bytes(1 << 30), 1 << 30);
        for req in [
            Request::Report,
            Request::Probe { config: cfg },
            Request::Cancel,
        ] {
            assert_eq!(decode::<Request>(&encode(&req)), Some(req));
        }
        let report = report();
        let result = ProbeResult::failed(Outcome::NoAdapter);
        for reply in [
            Reply::Ready,
            Reply::Report {
                json: report.to_json(),
                report,
            },
            Reply::Missing {
                outcome: Outcome::Unsupported,
            },
            Reply::Progress {
                progress: Progress {
                    allocated: Bytes(3 << 28),
                    chunks: 3,
                    elapsed_ms: 17,
                    ceiling: Bytes(1 << 31),
                },
            },
            Reply::Done {
                result,
                json: "{}".into(),
            },
        ] {
            assert_eq!(decode::<Reply>(&encode(&reply)), Some(reply));
        }
        assert_eq!(encode(&Request::Cancel), "6:cancel");
        for bad in ["not a message", "6:cancel1:x", "7:missing3:odd", "6:report"] {
            assert_eq!(decode::<Reply>(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn any_plan_and_result_read_back(
            ceiling: u64, chunk: u64, time: u64, slow in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO | proptest::num::f64::INFINITE,
            base: usize, floor in proptest::num::f64::NORMAL, chunks: u32,
            outcome in proptest::sample::select(Outcome::ALL.to_vec()),
        ) {
            let config = ProbeConfig {
                ceiling: Bytes(ceiling), chunk: Bytes(chunk), time_limit_ms: time,
                swap_slowdown: slow, baseline_chunks: base, swap_floor_ms: floor,
            };
            let back = decode::<Request>(&encode(&Request::Probe { config }));
            // -0.0 == 0.0: compare the bits.
            match back {
                Some(Request::Probe { config: b }) => {
                    prop_assert_eq!(b.swap_slowdown.to_bits(), slow.to_bits());
                    prop_assert_eq!((b.ceiling, b.chunk, b.time_limit_ms, b.baseline_chunks), (Bytes(ceiling), Bytes(chunk), time, base));
                    prop_assert_eq!(b.swap_floor_ms, floor);
                }
                other => prop_assert!(false, "{other:?}"),
            }
            let result = ProbeResult { allocated: Bytes(ceiling), outcome, chunks, elapsed_ms: time };
            let reply = Reply::Done { result, json: String::new() };
            prop_assert_eq!(decode::<Reply>(&encode(&reply)), Some(reply));
        }
    }
}
