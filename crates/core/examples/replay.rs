//! Replays allocation traces through the caching allocator's port and
//! prints one JSON line per trace:
//! `cargo run --release -p vramfit-core --example replay -- FILE...`
//!
//! - `*.trace`: the harness's (`scripts/measure/allocator/trace.py`),
//!   replayed with and without expandable segments;
//! - `*.gpu.gz`: the allocator's own, recorded on a GPU
//!   (`scripts/measure/device/record.py`), replayed with the setting it ran
//!   under (`--expandable`) and the segments where its driver put them,
//!   beside what that GPU recorded: its segments' cudaMalloc calls and
//!   bytes. `--limit BYTES` replays on a device that
//!   can give the allocator that much.

#[path = "../tests/gpu_trace/mod.rs"]
mod gpu_trace;

use gpu_trace::Addresses;
use std::process::ExitCode;
use vramfit_core::caching::{self, Config, Event, Stream};

fn parse(text: &str) -> Result<(serde_json::Value, Vec<Event>), String> {
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().ok_or("empty trace")?)
        .map_err(|e| format!("header: {e}"))?;
    let mut events = Vec::new();
    for (n, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(' ').collect();
        let num = |i: usize| -> Result<u64, String> {
            f.get(i)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("line {}: `{line}`", n + 2))
        };
        let id = u32::try_from(num(1)?).map_err(|e| e.to_string())?;
        events.push(match f[0] {
            "a" => Event::Alloc {
                id,
                bytes: num(2)?,
                stream: Stream(0),
            },
            "f" => Event::Free { id },
            _ => return Err(format!("line {}: `{line}`", n + 2)),
        });
    }
    Ok((header, events))
}

fn one(path: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let (header, events) = parse(&text)?;
    let mut out = serde_json::json!({
        "trace": path,
        "argv": header["argv"],
        "harness_peak": header["row"]["measured"]["peak_overall"],
        "events": events.len(),
    });
    for (name, expandable_segments) in [("plain", false), ("expandable", true)] {
        let cfg = Config {
            expandable_segments,
            max_split_size: None,
        };
        let s = caching::replay(&events, cfg, u64::MAX).map_err(|e| format!("{e:?}"))?;
        let min = caching::min_capacity(&events, cfg).map_err(|e| format!("{e:?}"))?;
        out[name] = serde_json::json!({
            "peak_requested": s.peak_requested,
            "peak_allocated": s.peak_allocated,
            "peak_reserved": s.peak_reserved,
            "min_capacity": min,
            "device_allocs": s.device_allocs,
        });
    }
    Ok(out)
}

fn one_gpu(path: &str, expandable_segments: bool, limit: u64) -> Result<serde_json::Value, String> {
    let gpu_trace::Trace { events, device } = gpu_trace::read(path, Addresses::AsRecorded)?;
    let cfg = Config {
        expandable_segments,
        max_split_size: None,
    };
    let s = caching::replay(&events, cfg, limit).map_err(|e| format!("{e:?}"))?;
    let min = caching::min_capacity(&events, cfg).map_err(|e| format!("{e:?}"))?;
    Ok(serde_json::json!({
        "trace": path,
        "expandable": expandable_segments,
        "limit": limit,
        "events": events.len(),
        "gpu": {
            "segment_allocs": device.segment_allocs,
            "segment_bytes_peak": device.segment_bytes_peak,
            "ooms": device.ooms,
        },
        "replay": {
            "peak_requested": s.peak_requested,
            "peak_allocated": s.peak_allocated,
            "peak_reserved": s.peak_reserved,
            "device_allocs": s.device_allocs,
            "retries": s.retries,
            "min_capacity": min,
        },
    }))
}

fn main() -> ExitCode {
    let mut rc = ExitCode::SUCCESS;
    let mut expandable = false;
    let mut limit = u64::MAX;
    let mut args = std::env::args().skip(1);
    while let Some(path) = args.next() {
        if path == "--expandable" {
            expandable = true;
            continue;
        }
        if path == "--limit" {
            match args.next().and_then(|v| v.parse().ok()) {
                Some(bytes) => limit = bytes,
                None => {
                    eprintln!("--limit takes a count of bytes");
                    return ExitCode::FAILURE;
                }
            }
            continue;
        }
        let result = if path.ends_with(".gpu.gz") {
            one_gpu(&path, expandable, limit)
        } else {
            one(&path)
        };
        match result {
            Ok(v) => println!("{v}"),
            Err(e) => {
                eprintln!("{e}");
                rc = ExitCode::FAILURE;
            }
        }
    }
    rc
}
