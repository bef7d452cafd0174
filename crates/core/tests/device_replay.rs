//! The caching allocator's port (`caching.rs`) against the allocator
//! itself: traces recorded on an H200 (torch 2.11.0+cu130, transformers
//! 5.17, `scripts/measure/device/`) replayed through the port, beside what
//! the GPU reported for the same run (`max_memory_reserved`,
//! `max_memory_allocated`, `num_device_alloc`).
//!
//! - With the segments where the GPU's driver put them, the port is exact.
//! - In order (what the port does without a trace's addresses): exact with
//!   expandable segments; with plain segments the allocated peak is exact,
//!   but among cached blocks of one size the lowest address is taken, and
//!   the driver's addresses are not in order, so the reserved peak can
//!   differ (measured: 3 runs of 25, by +0.2%, -1.1% and -5.4%).

mod gpu_trace;

use gpu_trace::Addresses;
use serde_json::Value;
use vramfit_core::caching::{self, Config, Event, Stats, Stream};

const RAW: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scripts/measure/device/raw"
);

/// One measured run: its trace and what the GPU reported.
struct Run {
    name: String,
    trace: String,
    expandable: bool,
    reserved: u64,
    allocated: u64,
    device_allocs: u64,
    retries: u64,
    /// Bytes an earlier run of the same process left allocated when this
    /// one began (cuBLAS's 32 MiB workspace, kept for the process): in the
    /// GPU's counters, not in its trace.
    before: u64,
}

fn rows(file: &str) -> Vec<Value> {
    std::fs::read_to_string(format!("{RAW}/{file}"))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .filter(|r: &Value| r["status"] == "ok")
        .collect()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// One row's run: its trace under `dir`, its setting, and the counters
/// every row records alike beside its own peaks.
fn run(
    r: &Value,
    name: &str,
    dir: impl Fn(bool) -> &'static str,
    peaks: [&Value; 2],
    before: u64,
) -> Run {
    let expandable = r["alloc_conf"] == "expandable_segments:True";
    Run {
        name: format!("{name}{}", if expandable { " expandable" } else { "" }),
        trace: format!(
            "{}/{}",
            dir(expandable),
            r["trace_file"].as_str().unwrap_or("?")
        ),
        expandable,
        reserved: n(peaks[0]),
        allocated: n(peaks[1]),
        device_allocs: n(&r["allocator_stats"]["num_device_alloc"]),
        retries: n(&r["allocator_stats"]["num_alloc_retries"]),
        before,
    }
}

/// `record.py`'s rows (`measure_cuda.py`'s fields).
fn training(file: &str, dir: impl Fn(bool) -> &'static str + Copy) -> Vec<Run> {
    rows(file)
        .iter()
        .map(|r| {
            let name = format!(
                "{} {} b{} s{} {}{}{}",
                r["model"].as_str().unwrap_or("?"),
                r["dtype"].as_str().unwrap_or("?"),
                r["batch"],
                r["seq"],
                r["attn"].as_str().unwrap_or("?"),
                if r["grad_ckpt"] == true { " gc" } else { "" },
                if r["lora"] == true { " lora" } else { "" },
            );
            let peaks = [
                &r["measured_reserved"]["peak_overall"],
                &r["measured"]["peak_overall"],
            ];
            run(r, &name, dir, peaks, 0)
        })
        .collect()
}

/// `generate_cuda.py`'s rows. Its batches run one after another in one
/// process, each loading the model anew: what a batch's `loaded.allocated`
/// holds beyond the process's first batch's is what the earlier batch left
/// (cuBLAS's 32 MiB workspace, the same with either setting).
fn generate(file: &str, dir: impl Fn(bool) -> &'static str + Copy) -> Vec<Run> {
    let rows = rows(file);
    rows.iter()
        .map(|r| {
            let first = rows
                .iter()
                .find(|f| f["alloc_conf"] == r["alloc_conf"])
                .expect("the row itself");
            let before = n(&r["loaded"]["allocated"]) - n(&first["loaded"]["allocated"]);
            let name = format!("13B generate b{} 512+512", r["batch"]);
            run(
                r,
                &name,
                dir,
                [&r["peak_reserved"], &r["peak_allocated"]],
                before,
            )
        })
        .collect()
}

fn replay(run: &Run, addresses: Addresses, limit: u64) -> Stats {
    let mut t = gpu_trace::read(&format!("{RAW}/traces/{}", run.trace), addresses)
        .unwrap_or_else(|e| panic!("{e}"));
    if run.before > 0 {
        let id = u32::try_from(t.events.len()).expect("ids");
        t.events.insert(
            0,
            Event::Alloc {
                id,
                bytes: run.before,
                stream: Stream(0),
            },
        );
    }
    assert_eq!(
        t.device.segment_allocs, run.device_allocs,
        "{}: the trace's segments",
        run.name
    );
    let cfg = Config {
        expandable_segments: run.expandable,
        max_split_size: None,
    };
    caching::replay(&t.events, cfg, limit).unwrap_or_else(|e| panic!("{}: {e:?}", run.name))
}

/// Signed difference in hundredths of a percent.
fn bp(ours: u64, gpu: u64) -> i64 {
    let d = i128::from(ours) - i128::from(gpu);
    i64::try_from(d * 10_000 / i128::from(gpu)).unwrap_or(i64::MAX)
}

/// Every run whose GPU had room (no retry), replayed in order.
fn all_with_room() -> Vec<Run> {
    let train = |e: bool| if e { "train/exp" } else { "train/plain" };
    let gen = |e: bool| if e { "gen_exp" } else { "gen_plain" };
    let mut runs = training("train.jsonl", train);
    runs.extend(generate("generate.jsonl", gen));
    runs.extend(
        generate("generate16.jsonl", gen)
            .into_iter()
            .filter(|r| r.retries == 0),
    );
    runs
}

#[test]
fn with_the_drivers_addresses_the_replay_is_the_allocator() {
    let mut runs = training("train_addr.jsonl", |_| "addr");
    runs.extend(generate("generate_addr.jsonl", |_| "addr"));
    assert_eq!(runs.len(), 3);
    for run in &runs {
        let s = replay(run, Addresses::AsRecorded, u64::MAX);
        assert_eq!(
            (s.peak_reserved, s.peak_allocated, s.device_allocs),
            (run.reserved, run.allocated, run.device_allocs),
            "{}",
            run.name
        );
    }
}

#[test]
fn in_order_the_replay_is_within_the_drivers_address_order() {
    let runs = all_with_room();
    assert_eq!(runs.len(), 25);
    let mut worst = 0;
    for run in &runs {
        let s = replay(run, Addresses::InOrder, u64::MAX);
        let res = bp(s.peak_reserved, run.reserved);
        let all = i128::from(s.peak_allocated) - i128::from(run.allocated);
        println!("{:55} reserved {res:+5} bp, allocated {all:+} B", run.name);
        if run.expandable {
            assert_eq!(s.peak_reserved, run.reserved, "{}", run.name);
            // An earlier batch's leftover stands in as one allocation of
            // its bytes: within one 512-byte block.
            let leeway = if run.before > 0 { 512 } else { 0 };
            assert!(all.abs() <= leeway, "{}: {all}", run.name);
        } else {
            assert!(res.abs() <= 550, "{}: {res} bp", run.name);
            // A block kept whole (less than 1 MiB over) or split.
            assert!(all.abs() <= 1 << 20, "{}: {all}", run.name);
        }
        worst = worst.max(res.abs());
    }
    // The address order matters on some runs, not all: the test can fail
    // both ways.
    assert!(worst > 100, "no run differs: {worst}");
}

/// Batch 16, plain segments: with room the pile of cached segments would
/// reach 168 GiB; the H200 ran out of room once, released its cached
/// segments and retried, and peaked at what the device could give.
#[test]
fn at_the_devices_limit_the_replay_releases_and_retries_as_the_gpu_did() {
    let gen = |e: bool| if e { "gen_exp" } else { "gen_plain" };
    let runs: Vec<Run> = generate("generate16.jsonl", gen)
        .into_iter()
        .filter(|r| r.retries > 0)
        .collect();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    // What the allocator could have: the H200's memory (the training rows'
    // `cuda.total_memory`) less what its process held outside the allocator
    // at the end (`end_device_used - end_reserved`).
    let total = n(&rows("train.jsonl")[0]["cuda"]["total_memory"]);
    let g = &rows("generate16.jsonl")[0];
    let limit = total - (n(&g["end_device_used"]) - n(&g["end_reserved"]));
    let s = replay(run, Addresses::InOrder, limit);
    assert_eq!(s.retries, run.retries);
    let res = bp(s.peak_reserved, run.reserved);
    assert!(res.abs() <= 50, "reserved {res} bp");
    assert!(bp(s.peak_allocated, run.allocated).abs() <= 5);
}
