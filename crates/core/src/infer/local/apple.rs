//! Apple silicon: how much of a Mac's unified memory its GPU may use,
//! `MTLDevice.recommendedMaxWorkingSetSize`. llama.cpp's Metal device
//! reports it as its total and `total - currentAllocatedSize` as free
//! (`ggml-metal-device.m: ggml_metal_device_get_memory`, b10488 `:1076`),
//! so `--fit` works against it; MLX wires it for a generation
//! (`mlx_lm/generate.py: wired_limit`).
//!
//! macOS computes it; no formula is published. The rule here is the
//! measured rows of `tests/fixtures/apple_working_set.jsonl`
//! ([`ROWS`], each with its source): a Mac takes the share measured on
//! the largest measured memory size not above its own (the smallest
//! measured size below it). A constant 75% is wrong at both ends: 2/3 is
//! measured up to 32 GiB and 3/4 at 64 and 96 GiB on the macOS of 2023
//! logs, 0.74 at 16 GiB and 0.84 at 128 GiB on macOS 26. `sudo sysctl
//! iogpu.wired_limit_mb=N` (N > 0) replaces the value with N MiB exactly,
//! up or down (llmfit #754: 12000 and 14000 read back; antirez/ds4 #893:
//! 114688 read back as 112.00 GiB).

use super::ggml::{GIB, MIB};

/// Which macOS reports the working set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacOs {
    /// macOS 13-15 (the logs of 2023; a Mac mini M4 on 15.6 in 2026).
    UpTo15,
    /// macOS 26 (Tahoe).
    From26,
    /// Not known: the smaller of the two readings.
    Unknown,
}

/// One measured Mac: memory in GiB, the share as a fraction, the macOS,
/// the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub memory_gib: u32,
    pub num: u32,
    pub den: u32,
    pub macos: MacOs,
    pub source: &'static str,
}

/// The measured rows the rule reads (one per memory size and macOS; the
/// fixture holds every reading, several agreeing per size).
pub const ROWS: [Row; 7] = [
    Row {
        memory_gib: 8,
        num: 2,
        den: 3,
        macos: MacOs::UpTo15,
        source: "M2 MacBook Air, 5461.34 MiB: github.com/li-plus/chatglm.cpp/issues/76",
    },
    Row {
        memory_gib: 16,
        num: 2,
        den: 3,
        macos: MacOs::UpTo15,
        source: "M1 Pro, 10922.67 MiB: github.com/abetlen/llama-cpp-python/issues/687",
    },
    Row {
        memory_gib: 32,
        num: 2,
        den: 3,
        macos: MacOs::UpTo15,
        source: "M1 Max, 21845.34 MiB: github.com/ggml-org/llama.cpp/pull/2011",
    },
    Row {
        memory_gib: 64,
        num: 3,
        den: 4,
        macos: MacOs::UpTo15,
        source: "M1 Max, 49152.00 MiB: github.com/ggml-org/llama.cpp/issues/1870",
    },
    Row {
        memory_gib: 96,
        num: 3,
        den: 4,
        macos: MacOs::UpTo15,
        source: "M2 Max, 73728.00 MiB: github.com/ggml-org/llama.cpp/issues/3213",
    },
    Row {
        memory_gib: 16,
        num: 74,
        den: 100,
        macos: MacOs::From26,
        source: "M3, 11.84 GiB (macOS not stated, 2026; 2/3 on 15.6 the same year) [inferred 26]: github.com/AlexsJones/llmfit/pull/754",
    },
    Row {
        memory_gib: 128,
        num: 84,
        den: 100,
        macos: MacOs::From26,
        source: "M5 Max, 107.52 GiB on 26.x, two machines: github.com/antirez/ds4/pull/893",
    },
];

/// The share of `memory` bytes the rows of `macos` give.
fn share(memory: u128, macos: MacOs) -> u128 {
    let rows = ROWS.iter().filter(|r| r.macos == macos);
    let below = rows
        .clone()
        .filter(|r| u128::from(r.memory_gib) * GIB <= memory)
        .max_by_key(|r| r.memory_gib);
    let row = below.or_else(|| rows.min_by_key(|r| r.memory_gib));
    row.map_or(0, |r| memory * u128::from(r.num) / u128::from(r.den))
}

/// The GPU's working set of a Mac with `unified_memory` bytes, with
/// `iogpu.wired_limit_mb` when set.
pub fn gpu_working_set(unified_memory: u128, wired_limit_mb: Option<u32>, macos: MacOs) -> u128 {
    if let Some(n) = wired_limit_mb.filter(|&n| n > 0) {
        return u128::from(n) * MIB;
    }
    match macos {
        MacOs::UpTo15 | MacOs::From26 => share(unified_memory, macos),
        MacOs::Unknown => {
            share(unified_memory, MacOs::UpTo15).min(share(unified_memory, MacOs::From26))
        }
    }
}
