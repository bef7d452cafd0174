//! The estimator held to measured PyTorch memory: every row of
//! `fixtures/pytorch_training_memory.jsonl` (see fixtures/README.md).
//!
//! Overall peak (allocated bytes) within 3% on every row, median under 1%;
//! each phase peak within 5%. Run with `--nocapture` to see the table.

use serde_json::Value;
use vramfit_core::estimate::estimate;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::{Estimate, Phase};

struct Row {
    label: String,
    query: String,
    measured: Value,
}

fn rows() -> Vec<Row> {
    include_str!("fixtures/pytorch_training_memory.jsonl")
        .lines()
        .map(|line| {
            let r: Value = serde_json::from_str(line).expect("json row");
            let s = |k: &str| r[k].as_str().expect(k).to_string();
            let b = |k: &str| r[k].as_bool().expect(k);
            let mut q = format!(
                "model={}&dtype={}&optim={}&batch={}&seq={}&grad_ckpt={}&attn={}&keep_outputs={}&cuda_like={}",
                s("model"),
                s("dtype"),
                s("optim"),
                r["batch"],
                r["seq"],
                b("grad_ckpt"),
                s("attn"),
                b("keep_outputs"),
                b("cuda_like"),
            );
            if b("lora") {
                q.push_str(&format!("&lora_r={}", r["lora_r"]));
            }
            if b("dropout0") {
                q.push_str("&dropout=0");
            }
            Row {
                label: format!(
                    "{} {} {} b{} s{}{}{}{}{}{}",
                    s("model"),
                    s("dtype"),
                    s("optim"),
                    r["batch"],
                    r["seq"],
                    if b("grad_ckpt") { " ckpt" } else { "" },
                    if s("attn") == "eager" { " eager" } else { "" },
                    if b("lora") { " lora" } else { "" },
                    if b("keep_outputs") { " keep" } else { "" },
                    if b("cuda_like") { "" } else { " cpu" },
                ),
                query: q,
                measured: r["measured"].clone(),
            }
        })
        .collect()
}

fn est(q: &str) -> Estimate {
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    estimate(&s).expect("estimate")
}

/// Our allocated peak for a ground-truth phase name (`peak_fwd`, ...).
fn phase_peak(e: &Estimate, iteration: u32, name: &str) -> Option<u64> {
    let phase = match name {
        "peak_fwd" => Phase::Forward,
        "peak_bwd" => Phase::Backward,
        "peak_step" => Phase::OptimizerStep,
        "peak_zero_grad" => Phase::ZeroGrad,
        _ => return None,
    };
    e.phases
        .iter()
        .filter(|p| p.iteration == iteration && p.phase == phase)
        .map(|p| p.components.allocated().get())
        .max()
}

fn err(est: u64, meas: u64) -> f64 {
    (est as f64 - meas as f64) / meas as f64 * 100.0
}

#[test]
fn every_row_within_budget() {
    let rows = rows();
    assert_eq!(rows.len(), 64);
    let mut overall = Vec::new();
    let mut failures = Vec::new();
    println!(
        "\n{:<52} {:>16} {:>16} {:>8}  {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "configuration",
        "measured peak",
        "estimated",
        "err %",
        "fwd1",
        "bwd1",
        "step1",
        "fwd2",
        "bwd2",
        "step2"
    );
    for r in &rows {
        let e = est(&r.query);
        let meas = r.measured["peak_overall"].as_u64().expect("peak_overall");
        let ours = e.peak_allocated_bytes.get();
        let e_all = err(ours, meas);
        overall.push(e_all);
        if e_all.abs() > 3.0 {
            failures.push(format!("{}: overall {e_all:+.2}%", r.label));
        }
        let mut cells = Vec::new();
        for (it, key) in [(1, "iter1"), (2, "iter2")] {
            for ph in ["peak_fwd", "peak_bwd", "peak_step"] {
                let m = r.measured[key][ph].as_u64().expect("phase");
                let o = phase_peak(&e, it, ph).expect("our phase");
                let pe = err(o, m);
                if pe.abs() > 5.0 {
                    failures.push(format!("{}: {key} {ph} {pe:+.2}%", r.label));
                }
                cells.push(format!("{pe:+7.2}"));
            }
            let zm = r.measured[key]["peak_zero_grad"]
                .as_u64()
                .expect("zero_grad");
            let zo = phase_peak(&e, it, "peak_zero_grad").expect("zero_grad");
            if err(zo, zm).abs() > 5.0 {
                failures.push(format!("{}: {key} zero_grad {:+.2}%", r.label, err(zo, zm)));
            }
        }
        println!(
            "{:<52} {:>16} {:>16} {:>+8.3}  {}",
            r.label,
            meas,
            ours,
            e_all,
            cells.join(" ")
        );
    }
    let mut abs: Vec<f64> = overall.iter().map(|e| e.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let median = abs[abs.len() / 2];
    let max = abs[abs.len() - 1];
    println!(
        "\noverall peak error over {} rows: median |err| {median:.3}%, max |err| {max:.3}%",
        abs.len()
    );
    assert!(
        failures.is_empty(),
        "outside budget:\n{}",
        failures.join("\n")
    );
    assert!(median < 1.0, "median {median}% ≥ 1%");
}

/// Iteration 2 sits above iteration 1 by exactly the optimizer state before
/// the step (state appears in the first `step()`).
#[test]
fn iteration_two_adds_exactly_the_optimizer_state() {
    for r in rows() {
        let e = est(&r.query);
        let it = |i: u32, ph: Phase| {
            e.phases
                .iter()
                .find(|p| p.iteration == i && p.phase == ph)
                .expect("phase")
        };
        let state = it(2, Phase::Forward)
            .components
            .get(vramfit_core::Component::OptimizerState);
        for ph in [Phase::Forward, Phase::Backward] {
            assert_eq!(
                it(2, ph).components.allocated().get(),
                it(1, ph).components.allocated().get() + state.get(),
                "{} {ph:?}",
                r.label
            );
        }
    }
}
