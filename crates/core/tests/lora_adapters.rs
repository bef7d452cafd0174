//! A LoRA adapter llama.cpp loads beside the model (`--lora`; Ollama's
//! `ADAPTER`), held to llama.cpp b10488 run on its CPU backend
//! (`scripts/measure/llamacpp/lora/`: `raw/table.md` holds every probed
//! buffer; the base model is `gen.py`'s, here
//! `fixtures/hf_configs/tiny-lora-llama*.json`).
//!
//! 1. The adapter's buffer, to the probed byte, by targets, rank and type.
//! 2. What the adapter adds to the CPU compute buffer (the warm-up's
//!    second reserve), against the probed difference with and without it.
//! 3. Placement: the adapter follows the layers (`-ngl`), `--fit` does
//!    not count it.
//! 4. The link: keys read by llama.cpp and Ollama only, notices.

use vramfit_core::infer::local::adapter::LoadedAdapter;
use vramfit_core::infer::local::{
    llama_cpp_with, Backend, FlashAttn, FoldedFile, Frontend, Gpu, LlamaCpp, LocalModel, MlaKeys,
};
use vramfit_core::lora::{Adapter, AdapterType, LoraRank, Targets};
use vramfit_core::model::gguf::{FileType, Recipe};
use vramfit_core::model::{hf_config, Architecture};
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::report::Estimate;

fn arch(narrow: bool) -> Architecture {
    let text = if narrow {
        include_str!("fixtures/hf_configs/tiny-lora-llama-narrow.json")
    } else {
        include_str!("fixtures/hf_configs/tiny-lora-llama.json")
    };
    hf_config::read(text).expect("a config").arch
}

/// (the narrow base, `gen.py`'s adapter name, rank, and the type or the
/// run).
type Case<T> = (bool, &'static str, u32, T);

/// `-c`, `-ub`, flash attention.
type Run = (u32, u32, bool);

fn adapter(targets: &str, r: u32, ty: AdapterType) -> Adapter {
    Adapter {
        r: LoraRank::new(r).expect("a rank"),
        targets: Targets::parse(targets).expect("targets"),
        ty,
    }
}

/// `gen.py`'s adapters by the words of `raw/table.md`'s case names.
fn targets_of(case: &str) -> &'static str {
    match case {
        "attn" => "attn",
        "all" => "all",
        "allo" => "all,lm_head",
        "gate" => "gate",
        "odd" => "q",
        other => panic!("no adapter {other}"),
    }
}

// ---------------------------------------------------------------- 1. the buffer

/// (adapter as `gen.py` names it: targets, rank, type) → the probed
/// `llama_adapter_lora::bufs` bytes (`raw/table.md`, rows A, H and N).
#[test]
fn adapter_buffer_to_the_probed_byte() {
    use AdapterType::{F16, F32, Q8_0};
    let rows: &[(Case<AdapterType>, u128)] = &[
        ((false, "attn", 8, F16), 425_984),
        ((false, "attn", 64, F16), 3_407_872),
        ((false, "all", 8, F16), 1_163_264),
        ((false, "all", 64, F16), 9_306_112),
        // The output layer's pair (1024 → 1024) beside the layers'.
        ((false, "allo", 64, F16), 9_568_256),
        ((false, "all", 64, F32), 18_612_224),
        ((false, "all", 256, F16), 37_224_448),
        ((false, "all", 64, Q8_0), 4_943_872),
        // lora_b's rows are r = 8 wide: not whole blocks of 32, F16.
        ((false, "all", 8, Q8_0), 894_464),
        ((false, "odd", 7, F32), 229_376),
        ((false, "gate", 512, F16), 15_728_640),
        ((false, "gate", 4096, F16), 125_829_120),
        ((true, "all", 8, F16), 819_200),
        ((true, "all", 64, F16), 6_553_600),
    ];
    for ((narrow, case, r, ty), probed) in rows {
        let a = arch(*narrow);
        let ad = LoadedAdapter::of(&a, &adapter(targets_of(case), *r, *ty)).expect("sized");
        assert_eq!(ad.bytes(), *probed, "{case} r{r} {ty:?} narrow={narrow}");
    }
}

// ---------------------------------------------------------------- 2. the compute buffer

/// The CPU compute buffer of `llama-server -c ctx -np np -ub ub -fa fa`
/// on `a` in f16, with or without the adapter.
fn cpu_compute(
    a: &Architecture,
    ad: Option<&Adapter>,
    (ctx, np, ub, fa): (u32, u32, u32, bool),
) -> u128 {
    let m = LocalModel::of(a, MlaKeys::Present);
    let f = FoldedFile::predict(a, FileType::F16, Recipe::for_file_type(FileType::F16))
        .expect("a file");
    let p = LlamaCpp {
        n_ctx: Some(ctx),
        n_parallel: Some(np),
        n_ubatch: ub,
        flash_attn: if fa { FlashAttn::On } else { FlashAttn::Off },
        fit: Some(false),
        ..LlamaCpp::defaults(Frontend::Server)
    };
    let loaded = ad.map(|ad| LoadedAdapter::of(a, ad).expect("sized"));
    llama_cpp_with(&m, &f.weights(), &p, &[], None, loaded.as_ref())
        .expect("a plan")
        .plan
        .host
        .compute
}

/// The CPU compute buffer of `llama-server -c ctx -np 1 -ub ub -fa fa`
/// on the f16 base, without and with the adapter.
fn compute(narrow: bool, ad: Option<&Adapter>, (ctx, ub, fa): Run) -> u128 {
    cpu_compute(&arch(narrow), ad, (ctx, 1, ub, fa))
}

/// (base, adapter, (ctx, ub, flash attention)) → the probed difference
/// of the CPU compute buffer with the adapter (`raw/table.md`, the last
/// column): nothing where the base graph peaks in the MLP or at the
/// scores, the gate's `ax` past the MLP's width, the query projection's
/// `ax` where the attention peaks there.
#[test]
fn compute_buffer_grows_as_probed() {
    use AdapterType::F16;
    let rows: &[(Case<Run>, u128)] = &[
        ((false, "all", 64, (4096, 512, true)), 0),
        ((false, "all", 64, (4096, 512, false)), 0),
        ((false, "all", 256, (4096, 512, true)), 0),
        ((false, "attn", 64, (4096, 512, true)), 0),
        ((false, "all", 64, (1024, 512, true)), 0),
        ((false, "all", 64, (8192, 512, false)), 0),
        ((false, "all", 64, (4096, 1024, true)), 0),
        ((false, "gate", 2048, (4096, 512, true)), 0),
        ((false, "gate", 2048, (4096, 128, false)), 0),
        ((false, "gate", 4096, (4096, 512, false)), 0),
        ((false, "gate", 4096, (4096, 128, true)), 655_360),
        ((false, "gate", 4096, (4096, 512, true)), 2_621_440),
        ((true, "all", 8, (4096, 512, false)), 0),
        ((true, "all", 64, (4096, 128, false)), 0),
        ((true, "all", 8, (4096, 128, true)), 4_096),
        ((true, "all", 64, (4096, 128, true)), 32_768),
        ((true, "all", 8, (4096, 512, true)), 16_384),
        ((true, "all", 64, (4096, 512, true)), 131_072),
    ];
    for ((narrow, case, r, run), probed) in rows {
        let ad = adapter(targets_of(case), *r, F16);
        let delta = compute(*narrow, Some(&ad), *run) - compute(*narrow, None, *run);
        assert_eq!(delta, *probed, "{case} r{r} {run:?} narrow={narrow}");
    }
}

/// `-ub`, `-np`, flash attention.
type WideRun = (u32, u32, bool);

/// The CPU compute buffer of `llama-server -c 4096 -np np -ub ub -fa fa`
/// on a wide base (`WIDE=1 gen.py`: a vocabulary of 32 768, or with
/// `VOCAB=131072` of 131 072).
fn compute_wide(vocab_131k: bool, ad: Option<&Adapter>, (ub, np, fa): WideRun) -> u128 {
    let text = if vocab_131k {
        include_str!("fixtures/hf_configs/tiny-lora-llama-wide131k.json")
    } else {
        include_str!("fixtures/hf_configs/tiny-lora-llama-wide.json")
    };
    let a = hf_config::read(text).expect("a config").arch;
    cpu_compute(&a, ad, (4096, np, ub, fa))
}

/// (ub, np, flash attention) → the compute buffer llama-server printed
/// with the adapter of every projection and the output layer (r 64,
/// f16) and without one, in hundredths of a MiB (`head.sh`,
/// `raw/head.out`; the last two on the base of 131 072 tokens,
/// `outrows.sh`, `raw/outrows.out`): 64 parallel sequences ask for 64
/// outputs, whose logits (8 MiB) are the peak at a micro-batch of 128,
/// and the head's `B·ax` adds as much again; elsewhere nothing. The
/// adapter of the projections alone changes none of these. Held to the
/// printed difference within its two roundings.
#[test]
fn the_head_adds_its_logits_where_they_peak() {
    use AdapterType::F16;
    let rows: &[(bool, WideRun, (u64, u64))] = &[
        (false, (128, 64, true), (875, 1677)),
        (false, (128, 64, false), (900, 1700)),
        (false, (128, 1, true), (713, 713)),
        (false, (128, 1, false), (2075, 2075)),
        (false, (512, 64, true), (2476, 2476)),
        (false, (512, 64, false), (2601, 2601)),
        (false, (512, 1, true), (2851, 2851)),
        (false, (512, 1, false), (8301, 8301)),
        (true, (128, 32, true), (1732, 3332)),
        (true, (256, 64, false), (3350, 6550)),
    ];
    let (head, all) = (adapter("all,lm_head", 64, F16), adapter("all", 64, F16));
    for &(big, run, (base, allo)) in rows {
        let bare = compute_wide(big, None, run);
        assert_eq!(compute_wide(big, Some(&all), run), bare, "{run:?}");
        let delta = compute_wide(big, Some(&head), run) - bare;
        let printed = u128::from(allo - base) * (1 << 20) / 100;
        assert!(
            delta.abs_diff(printed) <= (1 << 20) / 100,
            "{run:?}: {delta} against {printed}"
        );
    }
}

// ---------------------------------------------------------------- 3. placement

fn gpu(gib: u128) -> Gpu {
    Gpu {
        backend: Backend::Cuda,
        free: gib << 30,
        total: gib << 30,
    }
}

/// The adapter's bytes on the GPU and in host memory with `-ngl ngl`
/// (`--fit` off) on the f16 base, and what the GPU holds beside
/// `--fit`'s sums.
fn placed(ad: &LoadedAdapter, ngl: u32) -> (u128, u128, u128) {
    let a = arch(false);
    let m = LocalModel::of(&a, MlaKeys::Present);
    let f = FoldedFile::predict(&a, FileType::F16, Recipe::for_file_type(FileType::F16))
        .expect("a file");
    let p = LlamaCpp {
        n_ctx: Some(4096),
        n_gpu_layers: Some(ngl),
        fit: Some(false),
        ..LlamaCpp::defaults(Frontend::Server)
    };
    let plan = llama_cpp_with(&m, &f.weights(), &p, &[gpu(24)], None, Some(ad))
        .expect("a plan")
        .plan;
    let g = plan.gpu(0);
    (g.lora, plan.host.lora, g.held() - g.total())
}

/// The adapter's pairs go where the weights they adapt are
/// (`llama_adapter_lora_init_impl`: `ggml_backend_buffer_get_type` of the
/// base tensor): `-ngl 2` (the output layer counted) puts the last
/// layer's pairs on the GPU and the first three's in host memory; every layer of the
/// f16 adapter here is the same (all targets, r 64: a quarter of
/// 9 306 112 B each, already whole 128-byte multiples on CUDA).
#[test]
fn the_adapter_follows_the_layers() {
    let ad = LoadedAdapter::of(&arch(false), &adapter("all", 64, AdapterType::F16)).expect("sized");
    let per_layer = 9_306_112 / 4;
    for (ngl, on_gpu) in [(0, 0), (2, 1), (4, 3), (5, 4)] {
        let (gpu_lora, host_lora, beside) = placed(&ad, ngl);
        assert_eq!(
            (gpu_lora, host_lora),
            (on_gpu * per_layer, (4 - on_gpu) * per_layer),
            "-ngl {ngl}"
        );
        // Counted beside the breakdown, not in it (`--fit`'s sums).
        assert_eq!(beside, gpu_lora);
    }
}

/// The output layer's pair goes where the output layer is: `-ngl` counts
/// it first (`-ngl 1` puts only the output layer on the GPU, `-ngl 4` it
/// and the last three layers); its 2 · 64 · (1024 + 1024) f16 bytes are
/// the probed difference of the `allo` adapter (`raw/table.md`).
#[test]
fn the_head_pair_follows_the_output_layer() {
    let ad = LoadedAdapter::of(&arch(false), &adapter("all,lm_head", 64, AdapterType::F16))
        .expect("sized");
    let (layer, head) = (9_306_112 / 4, 262_144);
    assert_eq!(ad.bytes(), 4 * layer + head);
    for (ngl, on_gpu) in [
        (0, 0),
        (1, head),
        (4, 3 * layer + head),
        (5, 4 * layer + head),
    ] {
        let (gpu_lora, host_lora, _) = placed(&ad, ngl);
        assert_eq!(
            (gpu_lora, host_lora),
            (on_gpu, ad.bytes() - on_gpu),
            "-ngl {ngl}"
        );
    }
}

/// `--fit` runs before the adapter is loaded (`common/common.cpp:1294-1334`,
/// b10488): it decides the same context and layers with and without one,
/// on GPUs from one that fits everything to one that fits a few layers.
#[test]
fn fit_decides_without_the_adapter() {
    let a = arch(false);
    let m = LocalModel::of(&a, MlaKeys::Present);
    let f = FoldedFile::predict(&a, FileType::F16, Recipe::for_file_type(FileType::F16))
        .expect("a file");
    let ad = LoadedAdapter::of(&a, &adapter("all", 256, AdapterType::F32)).expect("sized");
    let p = LlamaCpp {
        fit_target: 16 << 20,
        ..LlamaCpp::defaults(Frontend::Server)
    };
    for free_mib in [64u128, 128, 256, 512, 2048] {
        let g = Gpu {
            backend: Backend::Cuda,
            free: free_mib << 20,
            total: free_mib << 20,
        };
        let run = |ad| llama_cpp_with(&m, &f.weights(), &p, &[g], None, ad).expect("fits");
        let (bare, with) = (run(None), run(Some(&ad)));
        assert_eq!(bare.fit, with.fit, "{free_mib} MiB");
        assert_eq!(
            bare.plan.n_gpu_layers, with.plan.n_gpu_layers,
            "{free_mib} MiB"
        );
        assert_eq!(bare.plan.gpu(0).lora, 0);
        let layers = with.plan.gpu(0).layers;
        assert_eq!(
            with.plan.gpu(0).lora,
            u128::from(layers) * ad.bytes() / 4,
            "{free_mib} MiB"
        );
    }
}

// ---------------------------------------------------------------- 4. the link

fn estimate(q: &str) -> Estimate {
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    vramfit_core::infer::estimate(&s.infer_run()).unwrap_or_else(|e| panic!("{q}: {e}"))
}

/// On llama.cpp and Ollama the adapter is on the GPU with the layers
/// (Llama 3.1 8B: every linear layer at r 16 is 41 943 040 parameters, 4
/// bytes each in convert_lora_to_gguf's f32, 2 in Ollama's f16): the
/// serving phase holds it and `ollama ps` leaves it out.
#[test]
fn llamacpp_and_ollama_hold_the_adapter() {
    let params: u64 = 32 * 16 * (8192 + 5120 + 5120 + 8192 + 3 * (4096 + 14336));
    assert_eq!(params, 41_943_040);
    for (engine, each) in [("llamacpp", 4), ("ollama", 2)] {
        let base = format!("task=infer&engine={engine}&model=llama3.1-8b&gpu=h100-sxm-80&ctx=8192");
        let (bare, with) = (estimate(&base), estimate(&format!("{base}&lora_r=16")));
        let served = with.served.as_ref().expect("served");
        assert_eq!(
            served.lora_bytes.map(|b| b.get()),
            Some(params * each),
            "{engine}"
        );
        assert_eq!(
            with.peak_total_bytes.get() - bare.peak_total_bytes.get(),
            params * each,
            "{engine}: the adapter, and no compute growth on this MLP-peaked graph"
        );
        if engine == "ollama" {
            let (ps, ps_bare) = (
                served.ollama_ps.expect("ps"),
                bare.served.as_ref().and_then(|s| s.ollama_ps).expect("ps"),
            );
            assert_eq!(ps.size, ps_bare.size, "ollama ps does not count it");
            assert_eq!(ps.lora_unlisted.get(), params * each);
        }
    }
}

/// The adapter's keys are read by llama.cpp and Ollama only; its targets
/// and type without a rank are unused; targets the family lacks are
/// refused as for training; what vramfit cannot lay out is an error that
/// says why.
#[test]
fn the_keys_as_the_link_gives_them() {
    let notices = |q: &str| {
        vramfit_core::decode(&RawQuery::parse(q))
            .notices
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
    };
    let said = |q: &str, part: &str| {
        let n = notices(q);
        assert!(n.iter().any(|t| t.contains(part)), "{q}: {n:?}");
    };
    said(
        "task=infer&engine=vllm&model=llama3.1-8b&lora_r=16",
        "lora_r",
    );
    said(
        "task=infer&engine=transformers&model=llama3.1-8b&lora_r=16",
        "lora_r",
    );
    said(
        "task=infer&engine=llamacpp&model=llama3.1-8b&lora_type=f16",
        "no adapter",
    );
    said(
        "task=infer&engine=llamacpp&model=llama3.1-8b&lora_r=8&lora_targets=c_attn",
        "c_attn",
    );
    assert!(notices(
        "task=infer&engine=llamacpp&model=llama3.1-8b&lora_r=8&lora_targets=q,v&lora_type=q8_0"
    )
    .is_empty());
    // The output layer: an engine's adapter of an untied one; refused on
    // a tied one (the converter's words) and in training (not measured).
    assert!(notices(
        "task=infer&engine=ollama&model=llama3.1-8b&lora_r=8&lora_targets=all,lm_head"
    )
    .is_empty());
    said(
        "task=infer&engine=llamacpp&model=qwen2.5-1.5b&lora_r=8&lora_targets=all,lm_head",
        "ignored in base model",
    );
    said(
        "model=llama3.1-8b&lora_r=8&lora_targets=all,lm_head",
        "training it is not measured",
    );
    let s = decode_strict(&RawQuery::parse(
        "task=infer&engine=llamacpp&model=mixtral-8x7b&lora_r=8&lora_targets=w2",
    ))
    .expect("decodes");
    let e = vramfit_core::infer::estimate(&s.infer_run()).expect_err("experts refused");
    assert!(e.to_string().contains("routed experts"), "{e}");
}

// ---------------------------------------------------------------- 5. an adapter's file

/// An adapter's GGUF given where a model's is expected (the page's file
/// picker, `--gguf`) is said to be one, with the keys that hold it; those
/// keys size the same adapter the file holds (`gen.py`'s, cut at the data
/// section by `fixtures.py`: the attention at r 8 in f16, and every
/// projection and the head at r 64 in q8_0). The attention's bytes are
/// the probed buffer's; the other's are its header's 58 tensors, Σ
/// pad32(nbytes): 4,943,872 probed for the layers' (row N) and the head's
/// pair, 2 × 64 rows of 1024 in q8_0 (2 × 69,632).
#[test]
fn an_adapter_file_says_the_keys_that_hold_it() {
    let rows = [
        (
            "tiny-lora-attn-r8-f16",
            "lora_r=8&lora_targets=attn&lora_type=f16",
            false,
            425_984u128,
        ),
        (
            "tiny-lora-allo-r64-q8_0",
            "lora_r=64&lora_targets=q,k,v,o,gate,up,down,lm_head&lora_type=q8_0",
            false,
            4_943_872 + 2 * 69_632,
        ),
    ];
    for (name, keys, unnamed, file_bytes) in rows {
        let bytes = std::fs::read(format!(
            "{}/tests/fixtures/gguf/{name}.header.gguf",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture");
        let why = match vramfit_core::import::gguf(&bytes, name) {
            Err(vramfit_core::import::GgufImportError::Refused(why)) => why,
            other => panic!("{name}: {other:?}"),
        };
        assert!(why.contains("LoRA adapter") && why.contains(keys), "{why}");
        assert_eq!(why.contains("cannot name"), unnamed, "{why}");
        // The keys it gives, on the base model, size the file's layers.
        let q: RawQuery = RawQuery::parse(keys);
        let r = q
            .get(vramfit_core::query::Key::LoraR)
            .expect("r")
            .parse()
            .expect("a rank");
        let ty = AdapterType::from_key(q.get(vramfit_core::query::Key::LoraType).expect("type"))
            .expect("a type");
        let targets = q
            .get(vramfit_core::query::Key::LoraTargets)
            .expect("targets");
        let ad = LoadedAdapter::of(&arch(false), &adapter(targets, r, ty)).expect("sized");
        assert_eq!(ad.bytes(), file_bytes, "{name}");
    }
}

// ---------------------------------------------------------------- 6. a pasted log

/// llama-server's own log of the run (`raw/logs.tar.xz`,
/// `A-f16-all-r64-f16-faon.log`, kept as a paste fixture) read as a
/// paste: its `LoRA buffer size` line is the adapter's `lora_bytes`
/// within the printed rounding of the bytes sized here, and the rank is
/// not in it (the link's keys carry it).
#[test]
fn a_pasted_log_measures_the_adapter() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/pastes/llamacpp-b10488-lora-all-r64-f16-cpu.log",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture");
    let read = vramfit_core::paste::read(&text).expect("read");
    assert!(read.keys.iter().all(|s| !s.key.text().starts_with("lora")));
    let lora: Vec<_> = read
        .measured
        .iter()
        .filter(|m| m.field == "lora_bytes")
        .collect();
    let [m] = lora.as_slice() else {
        panic!("{:?}", read.measured)
    };
    let (vramfit_core::paste::Figure::Bytes(b), vramfit_core::paste::Bound::Printed { plus_minus }) =
        (m.figure, m.bound)
    else {
        panic!("{m:?}")
    };
    let sized = LoadedAdapter::of(&arch(false), &adapter("all", 64, AdapterType::F16))
        .expect("sized")
        .bytes();
    assert_eq!(sized, 9_306_112);
    assert!(
        u128::from(b.get()).abs_diff(sized) <= u128::from(plus_minus),
        "{b:?} ±{plus_minus} against {sized}"
    );
}
