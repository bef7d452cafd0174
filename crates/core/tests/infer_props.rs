//! Invariants of the inference estimates, over presets, engines, weight
//! formats and sizes: each phase's parts sum to its bytes; more sequences,
//! a longer prompt or more new tokens never need less; the context chart
//! never falls; vLLM's pool is what its budget leaves; the local runners'
//! GPU and host memory together never fall with a longer context, and
//! `--fit` keeps what it places within the GPU.

use proptest::prelude::*;
use vramfit_core::infer::{self, context_curve};
use vramfit_core::model::presets::PRESETS;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::{Component, Estimate, Scenario};

fn scenario(q: &str) -> Scenario {
    decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"))
}

/// A transformers query on a preset, as the page would write it.
fn transformers(p: usize, weights: &str, batch: u32, prompt: u32, new: u32) -> String {
    let preset = &PRESETS[p % PRESETS.len()];
    let dq = if weights == "nf4" {
        "&double_quant=true"
    } else {
        ""
    };
    format!(
        "task=infer&model={}&weights={weights}{dq}&batch={batch}&prompt={prompt}&new={new}",
        preset.id
    )
}

/// The query decoded, or `None` when the codec refuses it (a learned
/// position table too short, a format the model's experts cannot take).
fn decoded(q: &str) -> Option<Scenario> {
    decode_strict(&RawQuery::parse(q)).ok()
}

fn needed(s: &Scenario) -> Option<u64> {
    infer::estimate(&s.infer_run())
        .ok()
        .map(|e: Estimate| e.needed().get())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parts_sum_to_every_phase(p in 0usize..64, w in 0usize..4, b in 1u32..9, prompt in 1u32..3000, new in 1u32..300) {
        let weights = ["bf16", "nf4", "int8", "fp32"][w];
        // transformers refuses Gemma 4 (`tests/gemma4.rs`).
        let spec = PRESETS[p % PRESETS.len()].arch.family.spec();
        if spec.varies_by_layer() {
            return Ok(());
        }
        let Some(s) = decoded(&transformers(p, weights, b, prompt, new)) else { return Ok(()) };
        let e = infer::estimate(&s.infer_run()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for ph in &e.phases {
            prop_assert_eq!(ph.components.total(), ph.peak_bytes);
            prop_assert_eq!(ph.end_components.total(), ph.end_bytes);
            prop_assert!(ph.end_bytes <= ph.peak_bytes, "{:?}", ph.phase);
        }
        let served = e.served.as_ref().map(|v| v.kv_cache_bytes.get()).unwrap_or(0);
        prop_assert!(served > 0);
    }

    #[test]
    fn more_never_needs_less(p in 0usize..64, b in 1u32..9, prompt in 1u32..3000, new in 1u32..300, more in 1u32..200) {
        // Sliding-window models are the exception: their padded masks
        // (`a_padded_mask_makes_a_shorter_prompt_need_more`).
        if PRESETS[p % PRESETS.len()].arch.sliding_window > 0 {
            return Ok(());
        }
        let q = transformers(p, "bf16", b, prompt, new);
        let Some(now) = decoded(&q).as_ref().and_then(needed) else { return Ok(()) };
        for q2 in [
            transformers(p, "bf16", b + 1, prompt, new),
            transformers(p, "bf16", b, prompt + more, new),
            transformers(p, "bf16", b, prompt, new + more),
        ] {
            if let Some(after) = decoded(&q2).as_ref().and_then(needed) {
                prop_assert!(after >= now, "{q2}: {after} < {now} ({q})");
            }
        }
    }

    #[test]
    fn local_runners_parts_sum_and_more_context_never_needs_less(
        p in 0usize..64, e in 0usize..3, t in 0usize..4, ctx in 256u32..40000, more in 1u32..8000,
    ) {
        let preset = &PRESETS[p % PRESETS.len()];
        let (engine, weights) = [("llamacpp", ["q4_k_m", "q8_0", "f16", "iq4_xs"][t]), ("ollama", "q4_k_m"), ("mlx", ["4bit", "8bit", "bf16", "3bit"][t])][e];
        // Whole model on the GPU, no --fit: the same placement at every length.
        let q = |n: u32| match engine {
            "mlx" => format!("task=infer&engine=mlx&model={}&weights={weights}&prompt={n}&new=64&gpu=m3-max-128", preset.id),
            "ollama" => format!("task=infer&engine=ollama&model={}&weights={weights}&ctx={n}&num_gpu=16384&gpu=h100-sxm-80", preset.id),
            _ => format!("task=infer&engine=llamacpp&model={}&weights={weights}&ctx={n}&fit=false&gpu=h100-sxm-80", preset.id),
        };
        let Some(s) = decoded(&q(ctx)) else { return Ok(()) };
        let Ok(now) = infer::estimate(&s.infer_run()) else { return Ok(()) };
        for ph in &now.phases {
            prop_assert_eq!(ph.components.total(), ph.peak_bytes);
            prop_assert!(ph.end_bytes <= ph.peak_bytes, "{:?}", ph.phase);
        }
        let Some(s2) = decoded(&q(ctx + more)) else { return Ok(()) };
        let Ok(after) = infer::estimate(&s2.infer_run()) else { return Ok(()) };
        let all = |e: &Estimate| e.needed().get() + e.host_bytes.get();
        prop_assert!(all(&after) >= all(&now), "{}: {} < {}", q(ctx + more), all(&after), all(&now));
    }

    #[test]
    fn fit_places_within_the_gpu(p in 0usize..64, ctx in 512u32..131072, g in 0usize..4) {
        let preset = &PRESETS[p % PRESETS.len()];
        let gpu = ["rtx-4060-laptop", "rtx-3060-12", "rtx-4090", "l4-24"][g];
        let q = format!("task=infer&engine=llamacpp&model={}&ctx={ctx}&gpu={gpu}", preset.id);
        let Some(s) = decoded(&q) else { return Ok(()) };
        let Ok(e) = infer::estimate(&s.infer_run()) else { return Ok(()) };
        let fit = e.served.as_ref().and_then(|v| v.fit);
        if !fit.is_some_and(|f| f.starts_with("could not fit")) {
            // --fit leaves 1 GiB of the GPU's free memory (capacity less
            // the CUDA context) unused.
            let free = s.view.capacity.bytes().get() - (u64::from(s.overhead.context(s.context_default())) << 20);
            let placed = e.peak_allocated_bytes.get();
            prop_assert!(placed + (1 << 30) <= free, "{q}: {placed} + 1 GiB > {free} ({fit:?})");
        }
    }

    #[test]
    fn vllm_pool_is_what_the_budget_leaves(p in 0usize..64, ctx in 64u32..40000, util in 5000u32..9800) {
        let preset = &PRESETS[p % PRESETS.len()];
        let q = format!(
            "task=infer&engine=vllm&model={}&ctx={ctx}&gpu_memory_utilization=0.{util:04}&gpu=h100-sxm-80",
            preset.id
        );
        let Some(s) = decoded(&q) else { return Ok(()) };
        let Ok(e) = infer::estimate(&s.infer_run()) else { return Ok(()) };
        let cap = s.view.capacity.bytes();
        let budget = e.budget(cap);
        let serve = e.phases.last().map(|ph| ph.components).expect("a serving phase");
        let v = e.served.as_ref().expect("vLLM's figures");
        if e.needed() <= budget {
            // The pool fills the budget, less than one block short.
            let left = budget.get() - serve.allocated().get();
            let blocks = v.kv_blocks.unwrap_or(0).max(1);
            prop_assert!(left < v.kv_cache_bytes.get() / blocks + 1, "{q}: {left} left");
        } else {
            // Short: serving shows the blocks one request needs.
            prop_assert_eq!(serve.allocated(), e.needed(), "{}", q);
            prop_assert!(serve.get(Component::KvCache).get() > 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// MTP's draft tokens never make a hybrid need less on vLLM (R29): the
    /// drafter's weights, its cache page and the states' steps and blocks
    /// only add; its pool still fills the budget the same way.
    #[test]
    fn more_draft_tokens_never_need_less(m in 0usize..3, ctx in 256u32..131072, k in 0u32..8, more in 1u32..4) {
        let model = ["qwen3.6-27b", "qwen3.6-35b-a3b", "qwen3-next-80b-a3b"][m];
        let q = |k: u32| format!(
            "task=infer&engine=vllm&model={model}&ctx={ctx}&gpu=h100-sxm-80&num_speculative_tokens={k}"
        );
        let needed = |k: u32| {
            let s = decoded(&q(k)).expect("a query the codec takes");
            let e = infer::estimate(&s.infer_run()).expect("an estimate");
            let v = e.served.as_ref().expect("vLLM's figures").clone();
            (e.needed(), v.weights_bytes)
        };
        let (n0, w0) = needed(k);
        let (n1, w1) = needed(k + more);
        prop_assert!(n1 >= n0, "{}: {n1:?} < {n0:?}", q(k + more));
        prop_assert!(w1 >= w0);
        if k == 0 {
            prop_assert!(w1 > w0, "the drafter adds weights");
        }
    }
}

/// The context chart never falls, for each engine, where the attention
/// needs no mask (see the next test for where it does).
#[test]
fn the_context_chart_never_falls() {
    for q in [
        "task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&new=512",
        "task=infer&model=gpt-oss-20b&new=16",
        "task=infer&model=deepseek-v2-lite&new=16",
        "task=infer&engine=vllm&model=qwen3-8b&gpu=l4-24",
        "task=infer&engine=vllm&model=gemma3-1b&kv_dtype=fp8&gpu=rtx-4090",
    ] {
        let curve = context_curve(&scenario(q).infer_run(), None, 24);
        assert!(curve.len() >= 20, "{q}: {} points", curve.len());
        for w in curve.windows(2) {
            assert!(w[0].tokens < w[1].tokens, "{q}");
            assert!(
                w[0].peak.total() <= w[1].peak.total(),
                "{q}: {} tokens {} > {} tokens {}",
                w[0].tokens,
                w[0].peak.total(),
                w[1].tokens,
                w[1].peak.total()
            );
        }
    }
}

/// A sliding-window layer under SDPA gets a boolean mask once the keys
/// reach the window; CUDA's memory-efficient kernel converts it to a bias
/// (`where`) and, when the keys are not a multiple of 8, pads a copy of it
/// while the bias is alive (torch 2.15 `preprocess_mask`, `pad_bias<8>`;
/// `scripts/measure/infer/NOTES.md` §5). So a shorter prompt can need more:
/// on Gemma 3 1B, 27 001 prompt tokens need more than 32 704.
#[test]
fn a_padded_mask_makes_a_shorter_prompt_need_more() {
    let need = |prompt: u32| {
        let s = scenario(&format!(
            "task=infer&model=gemma3-1b&prompt={prompt}&new=64"
        ));
        infer::estimate(&s.infer_run())
            .map(|e| e.needed().get())
            .unwrap_or(0)
    };
    assert!(need(27_001) > need(32_704));
    // Aligned to 8, it is back in order.
    assert!(need(27_000) < need(32_704));
}

/// The local runners estimate every preset (the properties above skip a
/// query the codec or the engine refuses: none is refused here but by
/// name: GLM-4.5's MTP layer on llama.cpp, a family mlx-lm lacks on MLX).
#[test]
fn local_runners_estimate_every_preset() {
    let mut failed = Vec::new();
    for p in PRESETS {
        for q in [
            format!(
                "task=infer&engine=llamacpp&model={}&ctx=8192&gpu=rtx-4090",
                p.id
            ),
            format!("task=infer&engine=ollama&model={}&gpu=rtx-4090", p.id),
            format!("task=infer&engine=mlx&model={}&gpu=m3-max-128", p.id),
        ] {
            let got = decoded(&q)
                .ok_or("refused".to_string())
                .and_then(|s| infer::estimate(&s.infer_run()).map_err(|e| e.to_string()));
            // llama.cpp's key/value cache for GLM-4.5's MTP layer is not
            // modelled: llama.cpp and Ollama refuse it by name
            // (`scripts/measure/families/NOTES.md`).
            let nextn =
                vramfit_core::model::gguf::nextn_cached(p.arch.family) && !q.contains("engine=mlx");
            // MLX is refused for a family mlx-lm has no model of.
            let no_mlx = !p.arch.family.spec().in_mlx_lm && q.contains("engine=mlx");
            match got {
                Err(e) if no_mlx && e.contains("mlx-lm has no model") => {}
                Ok(_) if no_mlx => failed.push(format!("{q}: estimated on MLX")),
                Err(e) if nextn && e.contains("multi-token-prediction") => {}
                Ok(_) if nextn => failed.push(format!("{q}: estimated GLM's MTP layer")),
                Ok(_) => {}
                Err(e) => failed.push(format!("{q}: {e}")),
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
