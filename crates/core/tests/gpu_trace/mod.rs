//! The caching allocator's own traces, recorded on a GPU by
//! `scripts/measure/device/record.py` (its `dump` writes the format), read
//! for `caching::replay`. Shared by `tests/device_replay.rs` and
//! `examples/replay.rs`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use vramfit_core::caching::{Event, Stream};

/// What the GPU's trace says besides its allocations.
#[derive(Clone, Copy, Debug, Default)]
pub struct Device {
    /// The allocator's cudaMalloc calls (segments mapped, with expandable
    /// segments).
    pub segment_allocs: u64,
    /// The most its segments held at once.
    pub segment_bytes_peak: u64,
    pub ooms: u64,
}

/// A GPU trace: its allocations and frees in order, and its segments.
pub struct Trace {
    pub events: Vec<Event>,
    pub device: Device,
}

/// Whether the replay puts each segment where the GPU's driver put it
/// (`Event::Place`, where the trace has addresses) or one after another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addresses {
    AsRecorded,
    InOrder,
}

/// Reads a `*.gpu.gz` trace.
pub fn read(path: &str, addresses: Addresses) -> Result<Trace, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .map_err(|e| format!("{path}: {e}"))?;
    parse(&text, addresses).map_err(|e| format!("{path}: {e}"))
}

/// `a ID SIZE STREAM [ADDR]`, `f ID`, `s SIZE [ADDR]`, `S SIZE [ADDR]`,
/// `o SIZE`, `x ACTION SIZE`: each stream numbered in order of first use.
pub fn parse(text: &str, addresses: Addresses) -> Result<Trace, String> {
    let mut events = Vec::new();
    let mut streams: HashMap<&str, u8> = HashMap::new();
    let mut device = Device::default();
    let mut held = 0u64;
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split(' ').collect();
        let num = |i: usize| -> Result<u64, String> {
            f.get(i)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("line {}: `{line}`", n + 1))
        };
        let id = |i: usize| num(i).and_then(|v| u32::try_from(v).map_err(|e| e.to_string()));
        match f[0] {
            "a" => {
                let next = u8::try_from(streams.len()).map_err(|e| e.to_string())?;
                let stream = *streams
                    .entry(f.get(3).copied().unwrap_or("0"))
                    .or_insert(next);
                events.push(Event::Alloc {
                    id: id(1)?,
                    bytes: num(2)?,
                    stream: Stream(stream),
                });
            }
            "f" => events.push(Event::Free { id: id(1)? }),
            "s" => {
                if addresses == Addresses::AsRecorded && f.len() > 2 {
                    events.push(Event::Place { addr: num(2)? });
                }
                device.segment_allocs += 1;
                held += num(1)?;
                device.segment_bytes_peak = device.segment_bytes_peak.max(held);
            }
            "S" => held = held.saturating_sub(num(1)?),
            "o" => device.ooms += 1,
            "x" => {}
            other => return Err(format!("line {}: unknown event `{other}`", n + 1)),
        }
    }
    Ok(Trace { events, device })
}
