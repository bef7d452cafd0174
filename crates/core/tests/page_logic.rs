//! What the page computes besides the estimate: the fit verdict, the
//! largest batch and sequence that fit, ranked suggestions, the formula
//! table and its CSV, and memory over training steps.

mod common;

use common::scenario;
use vramfit_core::explain::{self, group};
use vramfit_core::inputs::Capacity;
use vramfit_core::query::Key;
use vramfit_core::solve::{self, Verdict};
use vramfit_core::train::steps;
use vramfit_core::{Bytes, Component, Estimate, Estimates, RawQuery};

const GIB: u64 = 1 << 30;

fn primary(q: &str) -> (vramfit_core::Scenario, Estimate) {
    let s = scenario(q);
    let e = Estimates::new(&s).primary().cloned().expect("estimate");
    (s, e)
}

#[test]
fn verdict_spare_and_short() {
    let v = Verdict::new(Bytes(20 * GIB), Bytes(24 * GIB));
    assert!(v.fits());
    assert_eq!((v.spare(), v.short()), (Bytes(4 * GIB), Bytes::ZERO));
    let v = Verdict::new(Bytes(30 * GIB), Bytes(24 * GIB));
    assert!(!v.fits());
    assert_eq!((v.spare(), v.short()), (Bytes::ZERO, Bytes(6 * GIB)));
}

#[test]
fn capacity_comes_from_the_gpu_list_a_typed_size_or_the_probe() {
    let s = scenario("gpu=rtx-4090-laptop");
    assert_eq!(s.view.capacity.bytes(), Bytes(16 * GIB));
    let s = scenario("gpu=custom&capacity_gib=23.5");
    assert_eq!(
        s.view.capacity,
        Capacity::Typed {
            bytes: Bytes(47 * GIB / 2)
        }
    );
    let s = scenario("capacity_gib=10");
    assert_eq!(s.view.capacity.bytes(), Bytes(10 * GIB));
    let s = scenario("gpu=probe&probe_bytes=1073741824&probe_adapter=SwiftShader");
    assert_eq!(s.view.capacity.bytes(), Bytes(GIB));
    assert_eq!(
        s.view.capacity.describe(vramfit_core::DisplayUnit::Gib),
        "1.00 GiB measured on SwiftShader (a lower bound)"
    );
    // Apple: the share macOS lets the GPU use (3/4 of 128 GiB).
    let s = scenario("gpu=m3-max-128");
    assert_eq!(s.view.capacity.bytes(), Bytes(96 * GIB));
}

#[test]
fn largest_batch_and_sequence_that_fit() {
    let (s, _) = primary("model=llama3.2-1b&dtype=bf16&optim=adamw&batch=1&seq=2048&gpu=rtx-4090");
    let cap = s.view.capacity.bytes();
    let b = solve::max_batch(&s, cap).expect("some batch fits");
    // The answer fits and one more does not.
    let at = |q: String| solve::peak_of(&scenario(&q)).expect("peak");
    let base = "model=llama3.2-1b&dtype=bf16&optim=adamw&seq=2048";
    assert!(at(format!("{base}&batch={b}")) <= cap);
    assert!(at(format!("{base}&batch={}", b + 1)) > cap);
    let l = solve::max_seq(&s, cap).expect("some seq fits");
    let base = "model=llama3.2-1b&dtype=bf16&optim=adamw&batch=1";
    assert!(at(format!("{base}&seq={l}")) <= cap);
    assert!(at(format!("{base}&seq={}", l + 1)) > cap);
    // Nothing fits: the model states alone are too big.
    let (s, _) = primary("model=llama3.1-70b&dtype=fp32&gpu=rtx-4090");
    assert_eq!(solve::max_batch(&s, s.view.capacity.bytes()), None);
}

#[test]
fn suggestions_are_ranked_by_what_they_save_and_each_one_is_real() {
    let (s, e) =
        primary("model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=4&seq=2048&gpu=a100-80");
    let cap = s.view.capacity.bytes();
    let list = solve::suggestions(&s, cap);
    assert!(list.len() >= 5, "{list:?}");
    // On one GPU, changes that keep one GPU come first; then most saving.
    for w in list
        .windows(2)
        .filter(|w| !w[1].label.starts_with("Recipe"))
    {
        assert!((w[0].gpus, w[1].saves) <= (w[1].gpus, w[0].saves), "{w:?}");
    }
    for x in &list {
        // Applying the change through the URL gives exactly the shown peak.
        let mut raw = vramfit_core::encode(&s);
        for (k, v) in &x.changes {
            raw.set(k, v);
        }
        let peak = solve::peak_of(&scenario(&raw.to_query_string())).expect("peak");
        assert_eq!(peak, x.peak, "{}", x.label);
        assert_eq!(x.saves, e.peak_total_bytes.saturating_sub(x.peak));
        assert_eq!(x.fits, x.peak <= cap);
        assert!(!x.cost.is_empty(), "{}", x.label);
    }
    let labels: Vec<&str> = list.iter().map(|x| x.label.as_str()).collect();
    assert!(labels.contains(&"Turn on gradient checkpointing"));
    assert!(labels.contains(&"Fine-tune with LoRA (rank 16)"));
}

/// A mixture of experts too big for a laptop GPU on llama.cpp without
/// `--fit`: keeping every layer's experts in host memory is offered, and
/// what it shows is what the link with it estimates.
#[test]
fn cpu_moe_is_offered_for_experts_that_do_not_fit() {
    let (s, _) = primary(
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&weights=q4_k_m&ctx=8192&fit=false&gpu=rtx-4060-laptop",
    );
    let cap = s.view.capacity.bytes();
    let list = solve::suggestions(&s, cap);
    let x = list
        .iter()
        .find(|x| x.label == "Keep the routed experts in host memory (--cpu-moe)")
        .unwrap_or_else(|| panic!("{list:?}"));
    assert_eq!(x.changes, vec![(Key::NCpuMoe, "48".to_string())]);
    assert!(x.fits, "{x:?}");
    let mut raw = vramfit_core::encode(&s);
    raw.set(Key::NCpuMoe, "48");
    assert_eq!(
        solve::peak_of(&scenario(&raw.to_query_string())),
        Some(x.peak)
    );
    // The fewest layers whose experts must leave: N fits, N - 1 does not.
    let least = list
        .iter()
        .find(|x| x.label.contains("(--n-cpu-moe "))
        .unwrap_or_else(|| panic!("{list:?}"));
    let n: u32 = least.changes[0].1.parse().expect("a count");
    assert!(least.fits && n < 48, "{least:?}");
    let fits = |n: u32| {
        let mut raw = vramfit_core::encode(&s);
        raw.set(Key::NCpuMoe, &n.to_string());
        solve::peak_of(&scenario(&raw.to_query_string())).is_some_and(|p| p <= cap)
    };
    assert!(fits(n) && !fits(n - 1), "{n}");
    // A dense model is offered none.
    let (d, _) = primary("task=infer&engine=llamacpp&model=qwen3-8b&fit=false&gpu=rtx-4060-laptop");
    assert!(solve::suggestions(&d, cap)
        .iter()
        .all(|x| !x.label.contains("--cpu-moe")));
}

#[test]
fn when_nothing_fits_alone_the_changes_are_combined() {
    let (s, _) =
        primary("model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=8&seq=4096&gpu=rtx-4090");
    let list = solve::suggestions(&s, s.view.capacity.bytes());
    let last = list.last().expect("suggestions");
    assert!(last.label.starts_with("Recipe: "), "{}", last.label);
    assert!(last.changes.len() > 1);
    assert!(list
        .iter()
        .all(|x| x.peak >= last.peak || x.label == last.label));
}

#[test]
fn breakdown_rows_cover_the_peak_with_formulas() {
    let (s, e) = primary("model=qwen2.5-1.5b&dtype=bf16&optim=adamw&batch=1&seq=512");
    let rows = explain::rows(&s, &e);
    let sum: u64 = rows.iter().map(|r| r.bytes.get()).sum();
    assert_eq!(sum, e.peak_total_bytes.get());
    let params = rows
        .iter()
        .find(|r| r.component == Component::Parameters)
        .expect("params row");
    assert_eq!(
        params.formula,
        "weights: 1\u{2009}543\u{2009}714\u{2009}304 parameters × 2 B = 3\u{2009}087\u{2009}428\u{2009}608 B; \
         buffers (RoPE tables, a causal mask): 512 B"
    );
    assert!(rows.iter().all(|r| !r.formula.is_empty()), "{rows:?}");
    // 16 vs 20 bytes per parameter: pure bf16 AdamW is 10.
    let bpp = explain::bytes_per_param(&e).expect("step");
    assert!(bpp.starts_with("10.0 bytes per parameter at the optimizer step: 2.0 weights + 2.0 gradients + 4.0 optimizer state + 2.0 temporaries"), "{bpp}");
}

/// The overhead row says what the figure holds, engine by engine: PyTorch's
/// caching allocator reserves beyond its allocations (training,
/// transformers), vLLM's budget holds it, llama.cpp and MLX allocate their
/// own buffers (the figure is the CUDA context alone).
#[test]
fn overhead_row_says_what_it_holds() {
    for (q, says) in [
        ("model=gpt2-124m&batch=8&seq=1024", "CUDA context 767 MiB + 5% caching-allocator reserve"),
        ("task=infer&engine=transformers&model=qwen3-8b", "CUDA context 767 MiB + 5% caching-allocator reserve"),
        (
            "model=llama3.2-1b&gpus=8&zero=3",
            "CUDA context 767 MiB + NCCL 556 MiB (one rank's, measured) + 5%",
        ),
        ("task=infer&engine=vllm&model=qwen3-8b&gpu=rtx-4090", "outside vLLM's budget"),
        (
            "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&gpu=rtx-4060-laptop",
            "CUDA context 512 MiB (llama.cpp (b10488) allocates its own buffers: no caching-allocator reserve)",
        ),
        (
            "task=infer&engine=ollama&model=qwen3-8b&gpu=rtx-4090",
            "CUDA context 512 MiB (Ollama (fb30760) allocates its own buffers: no caching-allocator reserve)",
        ),
    ] {
        let (s, e) = primary(q);
        let rows = explain::rows(&s, &e);
        let overhead = rows
            .iter()
            .find(|r| r.component == Component::Overhead)
            .unwrap_or_else(|| panic!("{q}: no overhead row"));
        assert!(overhead.formula.contains(says), "{q}: {}", overhead.formula);
    }
}

#[test]
fn seed_rows_use_the_seed_formulas() {
    let (s, e) = primary("params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048");
    let rows = explain::rows(&s, &e);
    let acts = rows
        .iter()
        .find(|r| r.component == Component::Activations)
        .expect("acts");
    assert!(
        acts.formula
            .contains("A = 4.6894e-4 × N + 1.8494e6 = 2552810"),
        "{}",
        acts.formula
    );
}

#[test]
fn csv_export_has_the_table_and_every_phase() {
    let (s, e) = primary("model=gpt2-124m&batch=8&seq=1024");
    let csv = explain::csv(&s, &e);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("component,bytes,share_percent,formula"));
    assert!(csv.contains("\niteration,micro_step,phase,peak_bytes,end_bytes\n"));
    assert_eq!(csv.lines().filter(|l| l.starts_with("2,1,")).count(), 4);
    // Formulas with commas are quoted (the layers' parts name "attention
    // (q, k, v, output)").
    let acts = csv
        .lines()
        .find(|l| l.starts_with("activations,"))
        .expect("activations row");
    assert!(acts.contains(",\"token ids and labels"), "{acts}");
    assert!(acts.ends_with('"'), "{acts}");
}

#[test]
fn digits_are_grouped() {
    assert_eq!(group(0u64), "0");
    assert_eq!(group(999u64), "999");
    assert_eq!(group(1_000u64), "1\u{2009}000");
    assert_eq!(
        group(92_650_478_080u64),
        "92\u{2009}650\u{2009}478\u{2009}080"
    );
}

#[test]
fn steps_show_the_state_jump_and_a_leak_running_out_of_memory() {
    let (s, e) =
        primary("model=gpt2-124m&dtype=fp32&batch=4&seq=1024&iters=10&gpu=custom&capacity_gib=9");
    let t = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).expect("timeline");
    assert_eq!(t.step_peaks.len(), 10);
    // Step 2 carries the optimizer state step 1 created; later steps repeat it.
    assert!(t.step_peaks[1] > t.step_peaks[0]);
    assert!(t.step_peaks[2..].iter().all(|p| *p == t.step_peaks[1]));
    assert_eq!(t.oom_step, None);
    // Keeping the logits of every step: B × S × V × 4 B more each step.
    let (s, e) = primary("model=gpt2-124m&dtype=fp32&batch=4&seq=1024&iters=10&gpu=custom&capacity_gib=9&leak=logits");
    let t = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).expect("timeline");
    assert_eq!(t.leak_per_step, Bytes(4 * 1024 * 50257 * 4));
    let k = t.oom_step.expect("runs out");
    assert!(t.step_peaks[k as usize - 1] > s.view.capacity.bytes());
    assert!(t.step_peaks[k as usize - 2] <= s.view.capacity.bytes());
    assert!(t.points.windows(2).all(|w| w[0].x <= w[1].x));
}

#[test]
fn data_on_the_gpu_counts_in_every_phase() {
    let (_, without) = primary("model=gpt2-124m");
    let (_, with) = primary("model=gpt2-124m&dataset_mib=1024");
    assert_eq!(
        with.peak_allocated_bytes.get() - without.peak_allocated_bytes.get(),
        1 << 30
    );
}

#[test]
fn micro_steps_repeat_in_the_steps_chart() {
    let (s, e) = primary("model=gpt2-124m&grad_accum=3&iters=2");
    let t = steps::timeline(&s.train_run(), &e, Bytes(u64::MAX)).expect("timeline");
    // 3 × (forward + backward) + step + zero_grad, 3 points each, 2 steps.
    assert_eq!(t.points.len(), 2 * (3 * 2 + 2) * 3);
}

/// Issue 11, the laptop case: Llama 3.1 8B, batch 4 × 4096, on an RTX 4090
/// Laptop (16 GB) ends with a recipe that fits on that one GPU, and every
/// step of it is a change the page can apply.
#[test]
fn the_laptop_case_ends_with_a_recipe_that_fits_on_one_gpu() {
    let (s, _) = primary(
        "model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=4&seq=4096&gpu=rtx-4090-laptop",
    );
    let cap = s.view.capacity.bytes();
    let list = solve::suggestions(&s, cap);
    let last = list.last().expect("suggestions");
    assert!(
        last.label
            .starts_with("Recipe: turn on gradient checkpointing, then QLoRA: "),
        "{}",
        last.label
    );
    assert!(last.fits || last.fits_paging, "{last:#?}");
    assert_eq!(last.gpus, 1, "{last:#?}");
    let mut raw = vramfit_core::encode(&s);
    for (k, v) in &last.changes {
        raw.set(k, v);
    }
    let q = raw.to_query_string();
    let peak = solve::peak_of(&scenario(&q)).expect("peak");
    assert_eq!(peak, last.peak, "{q}");
    println!("{q}\n{}\n{}", last.label, last.cost);
}

/// Issue 9, finding 7: choosing a GPU from the list leaves no ignored
/// capacity key behind (the decoder would flag each as unused).
#[test]
fn choosing_a_gpu_drops_the_capacity_keys_it_does_not_read() {
    use vramfit_core::query::capacity_keys_unused_by;
    let measured = "gpu=probe&probe_bytes=8589934592&probe_adapter=x&capacity_gib=12";
    let mut kept = RawQuery::parse(measured);
    kept.set("gpu", "rtx-4090");
    assert_eq!(
        vramfit_core::decode(&kept).notices.len(),
        3,
        "each one said"
    );
    for gpu in ["rtx-4090", "custom", "probe"] {
        let mut raw = RawQuery::parse(measured);
        raw.set("gpu", gpu);
        for k in capacity_keys_unused_by(gpu) {
            raw.remove(k);
        }
        let d = vramfit_core::decode(&raw);
        assert!(d.notices.is_empty(), "{gpu}: {:?}", d.notices);
    }
}

/// Issue 15, finding 1: the logits leak keeps the estimate's own logits
/// term every step (the output object of each micro-step), not a formula
/// of its own. Over a quantized base prepared for k-bit training the
/// residual stream is fp32, so the logits are too: 525,336,576 B at
/// batch 2 × 512 over Llama 3.2's 128,256 entries (the leak said
/// 262,668,288 before).
#[test]
fn the_logits_leak_keeps_the_estimates_own_logits_term() {
    let q = "model=llama3.2-1b&batch=2&seq=512&dtype=bf16&lora_r=16&quant=nf4&kbit_prep=true&leak=logits";
    let (s, e) = primary(q);
    let logits = e.terms.bytes(vramfit_core::terms::TermId::LogitsOut);
    assert_eq!(logits, 525_336_576);
    let t = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).expect("timeline");
    assert_eq!(u128::from(t.leak_per_step.get()), logits);
    let (s, e) = primary(&format!("{q}&grad_accum=3"));
    let t = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).expect("timeline");
    assert_eq!(u128::from(t.leak_per_step.get()), 3 * logits);
}

/// Issue 15, finding 5: the steps chart follows the estimate's size rule:
/// what the steps keep beyond 2^64 bytes is an error naming the inputs,
/// never a total held at 2^64 − 1.
#[test]
fn the_steps_chart_refuses_what_the_estimate_would_call_too_large() {
    let q = "model=qwen3-30b-a3b&batch=5265&seq=3315675&grad_accum=4096&leak=logits";
    let (s, e) = primary(q);
    let Err(err) = steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()) else {
        panic!("{q}: drawn");
    };
    assert_eq!(
        err.to_string(),
        "batch × seq × grad_accum (the logits kept every step) is too large: the memory would exceed 16 EiB (2^64 bytes)"
    );
    // The leak a typed size keeps cannot exceed 64 bits in 1000 steps
    // (16 TiB a step at most): it is drawn.
    let (s, e) = primary("model=gpt2-124m&leak=custom&leak_mib=16777216&iters=1000");
    assert!(steps::timeline(&s.train_run(), &e, s.view.capacity.bytes()).is_ok());
}

/// Issue 15, finding 2: one verdict for the answer, the pinned summary and
/// the solver. A run whose paged optimizer state pages out to host memory
/// fits by paging; the summary said "short by" where the answer said it
/// fits by paging.
#[test]
fn the_summary_and_the_answer_agree_on_fitting_by_paging() {
    let (s, e) = primary("model=llama3.2-1b&dtype=bf16&optim=paged_adamw&batch=1&seq=512");
    assert!(e.pageable_bytes > Bytes::ZERO);
    // A GPU short of the peak by less than the pageable state.
    let capacity = Bytes(e.peak_total_bytes.get() - e.pageable_bytes.get() / 2);
    let v = Verdict::of(&e, capacity);
    assert_eq!(v.fit(), solve::Fit::Paging);
    let unit = s.view.unit;
    let short = v.short().display(unit);
    assert_eq!(
        v.headline(unit),
        format!("Fits only by paging {short} of optimizer state to host memory: slower steps")
    );
    assert_eq!(v.summary(unit), format!("fits by paging {short}"));
    // Short by more than what can page out: it does not fit, and both say so.
    let v = Verdict::of(
        &e,
        Bytes(e.peak_total_bytes.get() - e.pageable_bytes.get() - (1 << 30)),
    );
    assert_eq!(v.fit(), solve::Fit::No);
    assert!(v.summary(unit).starts_with("short by "));
    assert!(v.headline(unit).starts_with("Does not fit: short by "));
}

/// Issue 15, finding 4: the form's edit rules live in the core, where the
/// page's every field edits through them: a new model starts from its own
/// architecture (and is no longer the Hub's config), a typed architecture
/// number drops `hub`, a listed GPU drops the capacity keys it does not
/// read; an import replaces the model's keys.
#[test]
fn the_forms_edit_rules_are_the_cores() {
    let form = |q: &str| RawQuery::parse(q);
    for (start, key, value, expected) in [
        (
            "model=llama3.1-8b&layers=16&hub=meta-llama/Llama-3.1-8B&batch=2",
            "model",
            "qwen3-8b",
            "model=qwen3-8b&batch=2",
        ),
        (
            "model=llama3.1-8b&layers=16&batch=2",
            "model",
            "",
            "batch=2",
        ),
        (
            "model=llama3.1-8b&hub=meta-llama/Llama-3.1-8B",
            "layers",
            "16",
            "model=llama3.1-8b&layers=16",
        ),
        (
            "gpu=probe&probe_bytes=1000&probe_adapter=x&capacity_gib=3",
            "gpu",
            "rtx-4090",
            "gpu=rtx-4090",
        ),
        (
            "gpu=probe&probe_bytes=1000&capacity_gib=3",
            "gpu",
            "custom",
            "gpu=custom&capacity_gib=3",
        ),
        ("batch=2", "seq", "4096", "batch=2&seq=4096"),
    ] {
        let mut f = form(start);
        let key = vramfit_core::query::Key::from_text(key).expect("a key");
        vramfit_core::query::edit(&mut f, key, value);
        assert_eq!(f.to_query_string(), expected, "{start} + {key}={value}");
    }
    let mut f = form("model=llama3.1-8b&layers=16&dropout=0.1&batch=2");
    vramfit_core::query::apply_import(
        &mut f,
        &[("model".into(), "qwen3-8b".into())],
        &[(vramfit_core::query::Key::Hub, "Qwen/Qwen3-8B".into())],
    );
    assert_eq!(
        f.to_query_string(),
        "batch=2&model=qwen3-8b&hub=Qwen%2FQwen3-8B"
    );
}

/// Issue 15, finding 4: one reading of the tools worker's reply to an
/// import, for the pasted config and the Hub alike.
#[test]
fn an_import_reply_is_read_once() {
    use vramfit_core::tools::{ImportOutcome, ToolReply};
    assert_eq!(
        ImportOutcome::of(Ok(ToolReply::Refused {
            why: "no".into(),
            offer_llama: true
        })),
        ImportOutcome::Refused {
            why: "no".into(),
            offer_llama: true
        }
    );
    assert_eq!(
        ImportOutcome::of(Ok(ToolReply::Exported { json: "{}".into() })),
        ImportOutcome::WorkerFailed(
            "the import worker answered another question: reload the page".into()
        )
    );
    assert_eq!(
        ImportOutcome::of(Err("offline".into())),
        ImportOutcome::WorkerFailed("offline".into())
    );
}

/// Issue 15, finding 6: every key is typed, has its field and reads back
/// from its text; every change the solver suggests decodes with no notice
/// (a misspelt or refused key would make its suggestion silently vanish).
#[test]
fn every_key_has_its_field_and_every_suggestion_decodes() {
    use vramfit_core::query::{Key, FIELDS};
    for f in FIELDS {
        assert_eq!(Key::from_text(f.key.text()), Some(f.key));
        assert_eq!(FIELDS.iter().filter(|g| g.key == f.key).count(), 1);
    }
    for k in Key::all() {
        assert_eq!(k.field().map(|f| f.key), Some(k), "{k}");
    }
    for q in [
        "model=llama3.1-8b&dtype=amp_bf16&batch=4&seq=4096&gpu=rtx-4090-laptop",
        "model=qwen2.5-7b&lora_r=16&quant=nf4&kbit_prep=true&gpus=2&gpu=rtx-4060-laptop",
        "model=mixtral-8x7b&optim=adamw_forloop&attn=eager&keep_outputs=true&gpus=4&zero=1",
        "model=gpt2-124m&dtype=fp32&grad_ckpt=true&batch=2",
        "model=deepseek-v3&optim=lion&gpus=64&zero=3",
        "params=7b&dtype=bf16",
    ] {
        let (s, _) = primary(q);
        let all = solve::candidates(&s);
        assert!(!all.is_empty(), "{q}");
        for c in all {
            let mut raw = vramfit_core::encode(&s);
            for (k, v) in &c.changes {
                raw.set(k, v);
            }
            let d = vramfit_core::decode(&raw);
            assert!(
                d.notices.is_empty(),
                "{q}: {} gives {:?}",
                c.label,
                d.notices
            );
        }
    }
}

#[test]
fn the_local_runners_best_weights_and_their_levers() {
    // The most precise GGUF that fits whole on an 8 GB laptop GPU at 8k
    // tokens: Qwen3-8B at q8_0 is too much with the cache and compute
    // buffers; q6_k fits (7.50 GiB). Each answer is checked against the
    // estimate itself, not against a number.
    let (s, _) = primary(
        "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=8192&gpu=rtx-4060-laptop",
    );
    let cap = s.view.capacity.bytes();
    let answer = solve::weights_that_fit(&s, cap).expect("some GGUF fits");
    // Applied, --fit is off: every layer stays on the GPU.
    assert_eq!(
        answer.changes,
        [
            (Key::Weights, answer.value.to_string()),
            (Key::Fit, "false".to_string())
        ]
    );
    let best = answer.value;
    let needed = |w: &str| {
        solve::peak_of(&scenario(&format!(
            "task=infer&engine=llamacpp&model=qwen3-8b&weights={w}&ctx=8192&fit=false&gpu=rtx-4060-laptop"
        )))
        .expect("peak")
    };
    assert!(needed(best) <= cap, "{best}");
    let ladder = [
        "f16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k",
    ];
    let at = ladder
        .iter()
        .position(|w| *w == best)
        .expect("on the ladder");
    assert!(at > 0, "f16 of an 8B model cannot fit 8 GB");
    assert!(needed(ladder[at - 1]) > cap, "{} fits too", ladder[at - 1]);
    // MLX on an 18 GB Mac: its GPU working set.
    let (m, _) = primary("task=infer&engine=mlx&model=qwen3-8b&weights=bf16&gpu=m3-pro-18");
    let best = solve::weights_that_fit(&m, m.view.capacity.bytes()).expect("some MLX weights fit");
    assert_ne!(best.value, "bf16");
    // The levers: lighter weights and a quantized cache, each decoding
    // with no notice and lowering what is needed.
    for s in [&s, &m] {
        let list = solve::suggestions(s, cap);
        assert!(
            list.iter()
                .any(|x| x.changes.iter().any(|(k, _)| *k == Key::Weights)),
            "{list:?}"
        );
        for x in &list {
            assert!(x.saves.get() > 0, "{x:?}");
        }
    }
}

#[test]
fn every_engines_answers_come_from_the_core_and_fit_as_applied() {
    // (query, the key the longest context sets, whether `batch` is read,
    // the weights' kind's first rung: a checkpoint's is the run's own 16
    // or 32 bits). Each answer is applied as the page
    // types it and judged by the page's verdict.
    let cases = [
        (
            "task=infer&model=qwen3-4b&weights=fp32&new=256&gpu=l4-24",
            Key::Prompt,
            true,
            "fp32",
        ),
        (
            "task=infer&engine=vllm&model=qwen3-4b&weights=fp32&gpu=l4-24",
            Key::Ctx,
            false,
            "fp32",
        ),
        (
            "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=8192&gpu=rtx-4060-laptop",
            Key::Ctx,
            false,
            "f16",
        ),
        (
            "task=infer&engine=ollama&model=qwen3-8b&weights=q4_k_m&ctx=8192&gpu=rtx-4060-laptop",
            Key::Ctx,
            false,
            "f16",
        ),
        (
            "task=infer&engine=mlx&model=qwen3-8b&weights=8bit&gpu=m3-pro-18",
            Key::Prompt,
            false,
            "bf16",
        ),
    ];
    for (q, context_key, reads_batch, first) in cases {
        let s = scenario(q);
        let cap = s.view.capacity.bytes();
        let a = solve::answers(&s, cap);
        let fits = |changes: &[(Key, String)]| {
            let t =
                solve::applied(&s, changes).unwrap_or_else(|| panic!("{q}: {changes:?} decodes"));
            let e = Estimates::primary_of(&t).expect("estimate");
            Verdict::of(&e, cap).fits()
        };
        let (key, n) = a.context.unwrap_or_else(|| panic!("{q}: a context fits"));
        assert_eq!(key, context_key, "{q}");
        assert!(fits(&[(key, n.to_string())]), "{q}: {n} tokens");
        assert_eq!(a.batch.is_some(), reads_batch, "{q}");
        if let Some(Some(b)) = a.batch {
            assert!(fits(&[(Key::Batch, b.to_string())]), "{q}: batch {b}");
        }
        let w = a.weights.unwrap_or_else(|| panic!("{q}: some weights fit"));
        assert!(fits(&w.changes), "{q}: {}", w.value);
        // The ladder starts at the kind's most precise rung: a run that
        // fits there is offered it.
        let big = if q.contains("engine=mlx") {
            "m3-max-128"
        } else {
            "h200-141"
        };
        let others: Vec<&str> = q.split('&').filter(|p| !p.starts_with("gpu=")).collect();
        let roomy = scenario(&format!("{}&gpu={big}", others.join("&")));
        let top = solve::weights_that_fit(&roomy, roomy.view.capacity.bytes()).map(|w| w.value);
        assert_eq!(top, Some(first), "{q} on {big}");
    }
}

/// Issue 32: a full fine-tune of Llama 3.1 70B on 8 × H100 80 GB under
/// FSDP2 does not fit at 8 × 4096 tokens; splitting each layer over 2 GPUs
/// (tp=2, FSDP2 over the 4 groups) is offered, and what it shows is what
/// the link with it estimates. A tied model (Llama 3.2 1B), which
/// transformers cannot split, is never offered tensor parallelism.
#[test]
fn tensor_parallelism_is_offered_where_the_model_splits() {
    let (s, _) = primary(
        "model=llama3.1-70b&dtype=bf16&optim=adamw&batch=8&seq=4096&grad_ckpt=true&gpus=8&shard=fsdp2&zero=3&gpu=h100-sxm-80",
    );
    let cap = s.view.capacity.bytes();
    let list = solve::suggestions(&s, cap);
    let x = list
        .iter()
        .find(|x| x.label == "Split each layer over 2 GPUs (tp=2)")
        .unwrap_or_else(|| panic!("{list:?}"));
    assert_eq!(
        x.changes,
        vec![
            (Key::Tp, "2".to_string()),
            (Key::Gpus, "8".to_string()),
            (Key::Shard, "fsdp2".to_string()),
            (Key::Zero, "3".to_string())
        ]
    );
    let mut raw = vramfit_core::encode(&s);
    for (k, v) in &x.changes {
        raw.set(*k, v);
    }
    assert_eq!(
        solve::peak_of(&scenario(&raw.to_query_string())),
        Some(x.peak)
    );
    assert!(x.saves.get() > 0, "{x:?}");

    let (s, _) = primary("model=llama3.2-1b&dtype=fp32&optim=adamw&batch=16&seq=4096&gpu=rtx-4090");
    let list = solve::suggestions(&s, s.view.capacity.bytes());
    assert!(list.iter().all(|x| !x.label.contains("tp=")), "{list:?}");
}

/// Issue 32: a full fine-tune of Llama 3.1 8B in bf16 at 8 × 2048 tokens
/// does not fit one 80 GB GPU; cutting its layers into two pipeline stages
/// (two GPUs, as many micro-batches) is offered, and what it shows is what
/// the link with it estimates: the rank that needs most. A tied model
/// (Llama 3.2 1B), whose head cannot leave the embedding, is never
/// offered a pipeline.
#[test]
fn pipeline_stages_are_offered_where_the_model_cuts() {
    let (s, _) =
        primary("model=llama3.1-8b&dtype=bf16&optim=adamw&batch=8&seq=2048&gpu=h100-sxm-80");
    let cap = s.view.capacity.bytes();
    let list = solve::suggestions(&s, cap);
    let x = list
        .iter()
        .find(|x| x.label == "Cut the layers into 2 pipeline stages (pp=2)")
        .unwrap_or_else(|| panic!("{list:?}"));
    assert_eq!(
        x.changes,
        vec![
            (Key::Pp, "2".to_string()),
            (Key::Gpus, "2".to_string()),
            (Key::MicroBatches, "2".to_string())
        ]
    );
    let mut raw = vramfit_core::encode(&s);
    for (k, v) in &x.changes {
        raw.set(*k, v);
    }
    let piped = scenario(&raw.to_query_string());
    assert_eq!(solve::peak_of(&piped), Some(x.peak));
    assert!(x.saves.get() > 0, "{x:?}");

    let (s, _) = primary("model=llama3.2-1b&dtype=fp32&optim=adamw&batch=16&seq=4096&gpu=rtx-4090");
    let list = solve::suggestions(&s, s.view.capacity.bytes());
    assert!(list.iter().all(|x| !x.label.contains("pp=")), "{list:?}");
}

/// Issue 32: a pipeline run as GPipe or interleaved 1F1B is offered 1F1B,
/// which keeps fewer micro-batches in flight on each rank, with what the
/// link with it estimates; a 1F1B pipeline is not.
#[test]
fn one_f_one_b_is_offered_to_other_schedules() {
    for q in [
        "model=llama3.1-8b&dtype=bf16&optim=adamw&batch=8&seq=4096&pp=2&gpus=2&micro_batches=8&pp_schedule=gpipe&gpu=h100-sxm-80",
        "model=llama3.1-8b&dtype=bf16&optim=adamw&batch=8&seq=4096&pp=2&gpus=2&micro_batches=8&pp_schedule=interleaved_1f1b&vpp=2&gpu=a100-40",
    ] {
        let (s, _) = primary(q);
        let list = solve::suggestions(&s, s.view.capacity.bytes());
        let x = list
            .iter()
            .find(|x| x.label == "Run the pipeline as 1F1B (pp_schedule=1f1b)")
            .unwrap_or_else(|| panic!("{q}: {list:?}"));
        let mut raw = vramfit_core::encode(&s);
        for (k, v) in &x.changes {
            raw.set(*k, v);
        }
        let plain = scenario(&raw.to_query_string());
        assert_eq!(solve::peak_of(&plain), Some(x.peak), "{q}");
        assert!(x.saves.get() > 0, "{q}: {x:?}");
    }
    let (s, _) = primary(
        "model=llama3.1-8b&dtype=bf16&optim=adamw&batch=8&seq=4096&pp=2&gpus=2&micro_batches=8&gpu=h100-sxm-80",
    );
    let list = solve::suggestions(&s, s.view.capacity.bytes());
    assert!(
        list.iter().all(|x| !x.label.contains("pp_schedule")),
        "{list:?}"
    );
}

/// Issue 32: a pipeline's largest batch is whole micro-batches (the codec
/// refuses a batch they do not divide): the answer is a multiple of
/// `micro_batches` that fits, and the next multiple does not.
#[test]
fn a_pipelines_largest_batch_is_whole_micro_batches() {
    let (s, _) = primary(
        "model=llama3.1-8b&dtype=bf16&optim=adamw&batch=4&seq=4096&pp=4&gpus=4&micro_batches=4&gpu=h100-sxm-80",
    );
    let cap = s.view.capacity.bytes();
    let b = solve::max_batch(&s, cap).expect("a batch fits");
    assert_eq!(b % 4, 0, "{b}");
    let with = |batch: u32| {
        let mut raw = vramfit_core::encode(&s);
        raw.set(Key::Batch, &batch.to_string());
        solve::peak_of(&scenario(&raw.to_query_string())).expect("estimate")
    };
    assert!(with(b) <= cap, "batch {b}");
    assert!(with(b + 4) > cap, "batch {} fits too", b + 4);
}

/// A local runner that places the layers itself (llama.cpp's `--fit` with
/// `-ngl` left out, Ollama without `num_gpu`) fits any context by moving
/// layers to host memory, which vramfit does not know: its longest context
/// is the longest with every layer on the GPU (the run at that context
/// estimates as the same run with the placement typed in; one token more
/// and the engine moves something, or it does not fit), and none when the
/// model is not whole on the GPU at any context (Llama 4 Scout's 61 GB of
/// Q4_K_M on a 24 GB card: the answer had been 4,194,304 tokens). Where the
/// link sets the placement, the GPU's share alone bounds it, as before.
/// `--fit` keeps its 1 GiB target free (`--fit-target`), so its longest
/// whole context is shorter than the same run's with `fit=false`.
#[test]
fn a_self_placed_local_run_s_longest_context_keeps_every_layer_on_the_gpu() {
    let check = |q: &str, expected: Option<u32>, whole: bool| {
        let s = scenario(q);
        let cap = s.view.capacity.bytes();
        let a = solve::answers(&s, cap);
        assert_eq!(a.context.map(|(_, n)| n), expected, "{q}");
        assert_eq!(a.context_whole, whole, "{q}");
        let Some((key, n)) = a.context else { return };
        assert_eq!(key, Key::Ctx, "{q}");
        let peak = |extra: &str, n: u32| {
            let t = scenario(&format!("{q}&ctx={n}{extra}"));
            let e = Estimates::primary_of(&t).expect("estimate");
            (e.needed(), e.host_bytes, Verdict::of(&e, cap).fits())
        };
        let placed = if q.contains("engine=ollama") {
            "&num_gpu=999"
        } else {
            "&fit=false"
        };
        let (need, host, fits) = peak("", n);
        assert!(fits, "{q}: {n} tokens fit");
        let positions = s.arch.map_or(0, |a| a.positions);
        if whole {
            assert_eq!(
                (need, host, true),
                peak(placed, n),
                "{q}: nothing moved at {n}"
            );
        }
        if whole && n < positions {
            let (next, next_host, next_fits) = peak("", n + 1);
            assert!(
                !next_fits || (next, next_host, true) != peak(placed, n + 1),
                "{q}: {} tokens keep every layer on the GPU",
                n + 1
            );
        }
    };
    let scout = "task=infer&model=llama4-scout&gpu=rtx-4090";
    check(&format!("{scout}&engine=llamacpp"), None, true);
    check(&format!("{scout}&engine=ollama"), None, true);
    let l8 = "task=infer&model=llama3.1-8b&weights=q4_k_m&gpu=rtx-4060-laptop";
    check(&format!("{l8}&engine=llamacpp"), Some(16_896), true);
    check(&format!("{l8}&engine=ollama"), Some(16_896), true);
    check(
        &format!("{l8}&engine=llamacpp&fit=false"),
        Some(25_088),
        false,
    );
    check(
        &format!("{l8}&engine=ollama&num_gpu=33"),
        Some(25_088),
        false,
    );
    // 16 layers on the GPU: their share of the cache alone bounds it.
    check(
        &format!("{l8}&engine=llamacpp&n_gpu_layers=16"),
        Some(83_456),
        false,
    );
    // The model's positions bound a small model (Qwen3 8B: 40,960).
    let q8 = "task=infer&model=qwen3-8b&weights=q4_k_m&gpu=rtx-4090";
    check(&format!("{q8}&engine=llamacpp"), Some(40_960), true);
}
