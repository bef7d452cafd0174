//! vLLM 0.33 on Gemma 4 (`infer::vllm`): the key/value pool of layers
//! whose pages differ (the global layers' own head width and key/value
//! heads) and of layers that keep no cache (the last layers reuse earlier
//! ones), worked by hand from vLLM's code, then held to published
//! start-ups (`fixtures/vllm_gemma4_logs.jsonl`, from
//! `scripts/measure/vllm/gemma4_published_logs.md`).
//!
//! Every page below is `block × key/value heads per rank × 2 × head width
//! × 2 bytes`; the smaller page's block is raised by the ratio
//! (`unify_kv_cache_spec_page_size`, `v1/core/kv_cache_planning.py:346-408`),
//! the layers grouped by kind (`:416-556`).

mod common;

use common::check;
use serde_json::Value;
use vramfit_core::infer::run::{Count, Engine, Inference, MaxLen, TensorParallel, Tokens, Vllm};
use vramfit_core::infer::vllm::{plan, KvLayout, VllmError};
use vramfit_core::model::{hf_config, Architecture, WeightFormat};

const GIB: u128 = 1 << 30;

/// A fixture config's model (`fixtures/hf_configs/NAME.json`).
fn arch(name: &str) -> Architecture {
    hf_config::read(&common::hf_fixture(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .arch
}

fn vllm(f: impl FnOnce(&mut Inference)) -> Inference {
    let mut i = Inference {
        engine: Engine::Vllm,
        vllm: Vllm::default(),
        ..Inference::default()
    };
    f(&mut i);
    i
}

fn tp(n: u32) -> TensorParallel {
    TensorParallel::new(n).expect("a tensor parallel size")
}

/// R14, R17 on every Gemma 4: `(full block, sliding block, page, full
/// groups, sliding groups, layers a group)`. By hand, tensor parallel 1:
/// - 31B: sliding 16 heads × 2 × 256 × 2 = 16,384 B a token, global 4 ×
///   2 × 512 × 2 = 8,192: pages 262,144 and 131,072, the global block
///   raised to 32; 50 sliding and 10 global layers: groups of 10, 1 + 5.
/// - 26B-A4B: 8 × 2 × 256 × 2 = 8,192 and 2 × 2 × 512 × 2 = 4,096; 25
///   and 5 layers.
/// - 12B: 8,192 and 1 × 2 × 512 × 2 = 2,048: the global block × 4; 40 and
///   8 layers.
/// - E4B: 2 × 2 × 256 × 2 = 2,048 and 2 × 2 × 512 × 2 = 4,096 (keys as
///   values off: the global layers keep `num_key_value_heads`): the
///   sliding block raised to 32; the first 24 of 42 layers keep a cache
///   (18 reuse), full at 5, 11, 17, 23: 20 and 4.
/// - E2B: 1,024 and 2,048; the first 15 of 35 (20 reuse), full at 4, 9,
///   14: 12 and 3.
///
/// Over tensor parallel ranks the heads split (at least one a rank): the
/// 31B at 8 ranks has 2 sliding and 1 global head, 2,048 B a token both,
/// one page size.
#[test]
fn r14_pages_of_two_sizes_and_layers_without_a_cache() {
    check(
        &[
            (("gemma4-31b", 1), (32, 16, 262_144, 1, 5, 10)),
            (("gemma4-31b", 2), (32, 16, 131_072, 1, 5, 10)),
            (("gemma4-31b", 4), (32, 16, 65_536, 1, 5, 10)),
            (("gemma4-31b", 8), (16, 16, 32_768, 1, 5, 10)),
            (("gemma4-26b-a4b", 1), (32, 16, 131_072, 1, 5, 5)),
            (("gemma4-12b", 1), (64, 16, 131_072, 1, 5, 8)),
            (("gemma4-e4b", 1), (16, 32, 65_536, 1, 5, 4)),
            (("gemma4-e2b", 1), (16, 32, 32_768, 1, 4, 3)),
        ],
        |&(m, n)| {
            let k = KvLayout::of(
                &arch(m),
                &vllm(|i| i.vllm.tensor_parallel_size = tp(n)),
                8192,
                None,
            );
            (
                k.block_size,
                k.sliding_block,
                k.layer_page,
                k.full_groups,
                k.sliding_groups,
                k.layers_per_group,
            )
        },
    );
}

/// R14: a page that does not divide the larger is padded to it, its block
/// kept (`unify_kv_cache_spec_page_size`: `page_size_padded` for
/// attention that is not MLA): the 31B with global heads of 384 has pages
/// of 262,144 and 16 × 4 × 2 × 384 × 2 = 98,304 bytes.
#[test]
fn r14_a_page_that_does_not_divide_is_padded() {
    let mut a = arch("gemma4-31b");
    a.global_head_dim = 384;
    let k = KvLayout::of(&a, &vllm(|_| {}), 8192, None);
    assert_eq!(
        (k.block_size, k.sliding_block, k.layer_page),
        (16, 16, 262_144)
    );
}

/// R19 on the 31B at its 262,144 positions: `cdiv(262144, 32)` = 8,192
/// global blocks and, per sliding group, `cdiv(min(1023 + in flight,
/// len), 16) + 1`: 1,089 with an H100's 2 × 8,192 tokens in flight, 321
/// with 2 × 2,048 (an A100's default): 13,637 and 9,797 blocks of
/// 2,621,440 bytes (another calculator's tests trace the same two
/// reservations from vLLM's code).
#[test]
fn r19_blocks_a_request_of_the_whole_context() {
    let a = arch("gemma4-31b");
    check(&[(8192u32, 13_637u128), (2048, 9_797)], |&mnbt| {
        let k = KvLayout::of(&a, &vllm(|_| {}), mnbt, None);
        assert_eq!(k.bytes_per_block(), 2_621_440);
        k.blocks_per_request(262_144)
    });
}

/// vLLM over pipeline stages on a model whose layers differ is refused,
/// never estimated as alike layers.
#[test]
fn pipeline_stages_are_refused() {
    let i = vllm(|i| {
        i.vllm.pipeline_parallel_size =
            vramfit_core::infer::run::ParallelSize::new(2).expect("a size");
    });
    assert_eq!(
        plan(&arch("gemma4-31b"), &i, Some(80 * GIB)).err(),
        Some(VllmError::StagesOfVaryingLayers)
    );
}

fn rows() -> Vec<Value> {
    include_str!("fixtures/vllm_gemma4_logs.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

fn int(v: &Value, key: &str) -> Option<u32> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// A row's pool layout: its model, length and batch, with the tokens its
/// version keeps in flight (`window − 1 + max_num_batched_tokens` before
/// 0.26, twice the batch from 0.26 as in 0.33: the row's
/// `in_flight_tokens`).
fn row_layout(row: &Value) -> (KvLayout, u32) {
    let s = &row["settings"];
    let len = int(s, "max_model_len").expect("a length");
    let mnbt = int(s, "max_num_batched_tokens").expect("a batch");
    let i = vllm(|i| {
        i.ctx = MaxLen::Tokens(Tokens::new(len).expect("tokens"));
        i.vllm.max_num_batched_tokens = Count::new(mnbt);
        i.vllm.max_num_seqs = int(s, "max_num_seqs").and_then(Count::new);
        if s["dtype"] == "float16" {
            i.weights = WeightFormat::Fp16;
        }
    });
    let file = row["hf_config"].as_str().expect("a config");
    let mut k = KvLayout::of(&arch(file.trim_end_matches(".json")), &i, mnbt, None);
    k.in_flight = u128::from(int(s, "in_flight_tokens").expect("in flight"));
    (k, len)
}

/// Every published start-up's pool: the logged available memory taken as
/// given, some block count inside its rounding (±0.005 GiB) gives both the
/// logged "GPU KV cache size" and "Maximum concurrency" exactly.
#[test]
fn gemma4_pools_as_published() {
    let mut bad = Vec::new();
    for row in rows() {
        let id = row["id"].as_str().unwrap_or("?");
        let lg = &row["logged"];
        let (k, len) = row_layout(&row);
        let avail = lg["available_kv_gib"].as_f64().expect("available");
        let bytes = |g: f64| (g * GIB as f64) as u128;
        let bpb = k.bytes_per_block();
        let (lo, hi) = (bytes(avail - 0.005) / bpb, bytes(avail + 0.005) / bpb);
        let want_tokens = u128::from(lg["kv_tokens"].as_u64().expect("tokens"));
        let want_c = format!("{:.2}", lg["max_concurrency"].as_f64().expect("c"));
        let hit = (lo..=hi).find(|&b| {
            let p = k.pool(None, b * bpb, len);
            p.tokens == want_tokens && format!("{:.2}", p.max_concurrency()) == want_c
        });
        let at = k.pool(None, bytes(avail), len);
        println!(
            "{id:<36} blocks {lo}..={hi}  tokens {} (logged {want_tokens})  {:.2}x (logged {want_c})  {}",
            at.tokens,
            at.max_concurrency(),
            if hit.is_some() { "ok" } else { "BAD" }
        );
        if hit.is_none() {
            bad.push(id.to_string());
        }
    }
    assert!(bad.is_empty(), "not reproduced: {bad:?}");
    assert_eq!(rows().len(), 4, "every row held");
}

/// The logged weights against vramfit's language model, printed (not
/// held): vLLM also loads the vision encoder (and the E models' audio
/// encoder), which vramfit does not size and says so; vramfit is below
/// every logged figure.
#[test]
fn weights_beside_the_logs() {
    for row in rows() {
        let id = row["id"].as_str().unwrap_or("?");
        let logged = row["logged"]["weights_gib"].as_f64().expect("weights");
        let s = &row["settings"];
        // The QAT row's W4A16 checkpoint is not a format vramfit has.
        if row["model"].as_str().is_some_and(|m| m.contains("qat")) {
            println!("{id:<36} logged {logged:>6.2} GiB  (W4A16: not estimated)");
            continue;
        }
        let i = vllm(|i| {
            if s["dtype"] == "float16" {
                i.weights = WeightFormat::Fp16;
            }
        });
        let file = row["hf_config"].as_str().expect("a config");
        let a = arch(file.trim_end_matches(".json"));
        let ours = vramfit_core::infer::vllm::weights(&a, &i) as f64 / GIB as f64;
        println!(
            "{id:<36} logged {logged:>6.2} GiB  vramfit {ours:>6.2} GiB  encoders and the rest {:+.2}",
            logged - ours
        );
        assert!(ours < logged, "{id}: {ours} ≥ {logged}");
    }
}

/// A multimodal checkpoint's encoders, which vLLM loads and profiles
/// (`Spec::multimodal`: Gemma 4's, Ministral 3's Pixtral, Llama 4's, Qwen3.5 /
/// 3.6's vision towers), are said in
/// a caveat, never left out silently, as is the projector Ollama and
/// llama.cpp load beside them; a text model's estimate has none.
#[test]
fn encoders_of_multimodal_checkpoints_are_said() {
    use vramfit_core::infer;
    for (model, said) in [
        ("gemma4-31b", true),
        ("ministral3-8b", true),
        ("llama4-scout", true),
        ("qwen3.6-27b", true),
        ("qwen3-next-80b-a3b", false),
        ("llama3.1-8b", false),
        ("glm-4.7-flash", false),
    ] {
        let s = common::scenario(&format!(
            "task=infer&engine=vllm&model={model}&gpu=h100-sxm-80&ctx=8192"
        ));
        let e = infer::estimate(&s.infer_run()).expect("estimate");
        let has = e
            .caveats
            .iter()
            .any(|c| c.starts_with("text only: vLLM loads"));
        assert_eq!(has, said, "{model}: {:?}", e.caveats);
        // Ollama's builds carry the projector (`--mmproj`, `llm/llama_server.go`);
        // llama.cpp loads one only when given it.
        for (engine, words) in [
            ("ollama", "text only: Ollama's build of a multimodal model"),
            (
                "llamacpp",
                "text only: a vision projector passed with --mmproj",
            ),
        ] {
            let s = common::scenario(&format!(
                "task=infer&engine={engine}&model={model}&gpu=h100-sxm-80&ctx=8192"
            ));
            let e = infer::estimate(&s.infer_run()).expect("estimate");
            let has = e.caveats.iter().any(|c| c.starts_with(words));
            assert_eq!(has, said, "{engine} {model}: {:?}", e.caveats);
        }
    }
}
