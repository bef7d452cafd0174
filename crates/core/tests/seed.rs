//! The seed formula (seed 001_420ff22d8420f7e5.txt), checked against hand
//! computation and against the ground truth's own `estimates.blog` figures.

mod common;

use common::scenario;
use vramfit_core::train::seed::{self, SeedTerms};
use vramfit_core::{Bytes, Component, Phase};

/// `(model, optimizer state, gradients, intermediates, activations)` in bytes.
fn check(q: &str, expected: [u64; 5]) {
    let t = SeedTerms::new(&scenario(q).train_run()).expect("estimate");
    let got = [
        t.model,
        t.optimizer_state,
        t.gradients,
        t.optimizer_intermediates,
        t.activations,
    ]
    .map(Bytes::get);
    assert_eq!(got, expected, "{q}");
}

#[test]
fn terms_by_hand() {
    // Source: hand computation from seed 001's formulas.
    // N = 1.5e9, P = 2: N×P = 3e9; A = 4.6894e-4 × 1.5e9 + 1.8494e6 = 2_552_810;
    // activations = A × 8 × 2048 × 2 = 83_650_478_080.
    check(
        "params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048",
        [
            3_000_000_000,
            6_000_000_000,
            3_000_000_000,
            3_000_000_000,
            83_650_478_080,
        ],
    );
    // P = 4 for fp32 and for mixed precision (fp32 master weights).
    // A = 4.6894e-4 × 1e9 + 1.8494e6 = 2_318_340; × 1 × 1024 × 4 = 9_495_920_640.
    check(
        "params=1B&dtype=amp_bf16&optim=adamw&batch=1&seq=1024",
        [
            4_000_000_000,
            8_000_000_000,
            4_000_000_000,
            4_000_000_000,
            9_495_920_640,
        ],
    );
    // "For simpler optimizers like SGD without momentum, this requirement may
    // be lower": no state without momentum, one buffer with it.
    check(
        "params=1000000&dtype=fp32&optim=sgd&batch=1&seq=1",
        [4_000_000, 0, 4_000_000, 4_000_000, 7_399_476],
    );
    check(
        "params=1000000&dtype=fp32&optim=sgd_mom&batch=1&seq=1",
        [4_000_000, 4_000_000, 4_000_000, 4_000_000, 7_399_476],
    );
}

/// Source: `estimates.blog` in the ground-truth file: the seed formula as
/// computed by the people who measured PyTorch (Adam rows; they apply 2×N×P
/// to every optimizer, we do not: see `seed::state_multiplier`).
#[test]
fn terms_match_ground_truth_blog_estimates() {
    let text = include_str!("fixtures/pytorch_training_memory.jsonl");
    let mut checked = 0;
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("json row");
        let optim = row["optim"].as_str().expect("optim");
        // LoRA rows: the blog figures there use the trainable count as N.
        if !optim.starts_with("adamw") || row["lora"].as_bool() == Some(true) {
            continue;
        }
        let blog = &row["estimates"]["blog"];
        let n = row["n_params"].as_u64().expect("n_params");
        let q = format!(
            "params={n}&dtype={}&optim={optim}&batch={}&seq={}",
            row["dtype"].as_str().expect("dtype"),
            row["batch"],
            row["seq"],
        );
        let f = |k: &str| blog[k].as_f64().expect("blog field");
        check(
            &q,
            [
                f("model") as u64,
                f("optimizer") as u64,
                f("gradients") as u64,
                f("optimizer_intermediates") as u64,
                f("activations").round() as u64,
            ],
        );
        checked += 1;
    }
    assert_eq!(
        checked, 50,
        "every full fine-tuning AdamW row of the fixture"
    );
}

#[test]
fn phases_follow_the_seed() {
    use Component as C;
    let s = scenario("params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048");
    let e = seed::estimate(&s.train_run()).expect("estimate");
    let order: Vec<(u32, Phase)> = e.phases.iter().map(|p| (p.iteration, p.phase)).collect();
    assert_eq!(
        order,
        [
            (0, Phase::Init),
            (1, Phase::Forward),
            (1, Phase::Backward),
            (1, Phase::OptimizerStep),
            (2, Phase::Forward),
            (2, Phase::Backward),
            (2, Phase::OptimizerStep),
        ]
    );
    // The HF blog's reading of the seed: total = params + state +
    // max(grads + intermediates, activations) = 3e9 + 6e9 + 83.65e9.
    assert_eq!(e.peak_total_bytes, Bytes(92_650_478_080));
    assert_eq!((e.peak_iteration, e.peak_phase), (2, Phase::Forward));
    // Iteration 1 has no optimizer state before its step.
    assert_eq!(e.phases[1].components.get(C::OptimizerState), Bytes::ZERO);
    assert_eq!(
        e.phases[4].components.get(C::OptimizerState),
        Bytes(6_000_000_000)
    );
    // The step frees gradients and intermediates.
    let step = &e.phases[3];
    assert_eq!(step.peak_bytes, Bytes(15_000_000_000));
    assert_eq!(step.end_components.get(C::Gradients), Bytes::ZERO);
    assert_eq!(step.end_bytes, Bytes(9_000_000_000));
}

#[test]
fn small_activations_put_the_peak_in_the_optimizer_step() {
    let s = scenario("params=7e9&dtype=fp32&optim=adamw&batch=1&seq=16");
    let e = seed::estimate(&s.train_run()).expect("estimate");
    assert_eq!(e.peak_phase, Phase::OptimizerStep);
    // 7e9 × 4 × (1 + 2 + 1 + 1)
    assert_eq!(e.peak_total_bytes, Bytes(140_000_000_000));
}

#[test]
fn overflow_is_an_error_naming_the_fields() {
    let s = scenario("params=100T&dtype=fp32&optim=adamw&batch=65536&seq=4194304");
    let err = seed::estimate(&s.train_run()).expect_err("too large");
    assert_eq!(
        err.to_string(),
        "batch × seq is too large: the memory would exceed 16 EiB (2^64 bytes)"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use vramfit_core::query::encode;
    use vramfit_core::train::run::SeqLen;
    use vramfit_core::Scenario;

    /// The scenario with `key` changed, when that is valid (a longer
    /// sequence may pass a learned-position model's table).
    fn with(s: &Scenario, key: &str, v: u32) -> Option<Scenario> {
        let mut raw = encode(s);
        raw.set(key, &v.to_string());
        vramfit_core::query::decode_strict(&raw).ok()
    }

    proptest! {
        #[test]
        fn parts_sum_to_totals(q in common::queries()) {
            let s = scenario(&q);
            let e = seed::estimate(&s.train_run()).expect("estimate");
            for p in &e.phases {
                prop_assert_eq!(p.components.iter().map(|(_, b)| b).sum::<Bytes>(), p.peak_bytes);
                prop_assert_eq!(p.end_components.total(), p.end_bytes);
                prop_assert!(p.end_bytes <= p.peak_bytes);
            }
            let max = e.phases.iter().map(|p| p.peak_bytes).max().expect("phases");
            prop_assert_eq!(e.peak_total_bytes, max);
        }

        #[test]
        fn monotone_in_batch_and_seq(q in common::queries(), more in 1u32..64) {
            let s = scenario(&q);
            let e = seed::estimate(&s.train_run()).expect("estimate").peak_total_bytes;
            let b = s.train.batch.get() + more;
            let l = (s.train.seq.get() + more).min(SeqLen::MAX);
            for bigger in [with(&s, "batch", b), with(&s, "seq", l)].into_iter().flatten() {
                prop_assert!(seed::estimate(&bigger.train_run()).expect("estimate").peak_total_bytes >= e);
            }
        }
    }
}
