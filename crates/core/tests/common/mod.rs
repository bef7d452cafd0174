//! Shared test helpers: scenarios from query strings, and a proptest
//! strategy over the whole query space.
#![allow(dead_code)]

use proptest::prelude::*;
use vramfit_core::inputs::Attn;
use vramfit_core::model::family::Positions;
use vramfit_core::model::presets::PRESETS;
use vramfit_core::model::Architecture;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::train::run::Dtype;
use vramfit_core::train::run::Optimizer;
use vramfit_core::train::run::Trainer;
use vramfit_core::train::run::Transformers;
use vramfit_core::Scenario;

/// A `config.json` fixture's text (`tests/fixtures/hf_configs/NAME.json`).
pub fn hf_fixture(name: &str) -> String {
    hf_fixture_if_any(name).unwrap_or_else(|| panic!("no fixture hf_configs/{name}.json"))
}

/// A `config.json` fixture's text, if there is one by that name.
pub fn hf_fixture_if_any(name: &str) -> Option<String> {
    let path = format!(
        "{}/tests/fixtures/hf_configs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).ok()
}

/// `(input, expected)` rows, each failure named.
pub fn check<I: std::fmt::Debug, T: PartialEq + std::fmt::Debug>(
    rows: &[(I, T)],
    f: impl Fn(&I) -> T,
) {
    let bad: Vec<String> = rows
        .iter()
        .filter_map(|(i, want)| {
            let got = f(i);
            (got != *want).then(|| format!("{i:?}: got {got:?}, want {want:?}"))
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A fixture file's bytes (`tests/fixtures/PATH`).
pub fn fixture_bytes(path: &str) -> Vec<u8> {
    let p = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The rows of a JSON-lines fixture (`tests/fixtures/NAME`).
pub fn fixture_rows(name: &str) -> Vec<serde_json::Value> {
    let text = String::from_utf8(fixture_bytes(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
        .collect()
}

/// The inference estimate of the link `q` (its refusal as text).
pub fn infer_estimate(q: &str) -> Result<vramfit_core::Estimate, String> {
    vramfit_core::infer::estimate(&scenario(q).infer_run()).map_err(|e| e.to_string())
}

/// The engine's figures for the inference link `q`.
pub fn served(q: &str) -> vramfit_core::report::Served {
    let e = infer_estimate(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    *e.served.unwrap_or_else(|| panic!("{q}: no engine figures"))
}

/// A preset's architecture.
pub fn preset_arch(id: &str) -> Architecture {
    vramfit_core::model::preset(id)
        .unwrap_or_else(|| panic!("preset {id}"))
        .arch
}

/// The scenario of a valid query (panics with the notices otherwise).
pub fn scenario(q: &str) -> Scenario {
    decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("bad test query {q}: {n:?}"))
}

fn model() -> impl Strategy<Value = String> {
    prop_oneof![
        (1_000u64..=1_000_000_000_000).prop_map(|n| format!("params={n}")),
        (
            prop::sample::select(PRESETS.iter().map(|p| p.id).collect::<Vec<_>>()),
            prop::option::of(1u32..=48),
            prop::option::of(1u32..=65_536),
            prop::option::of(any::<bool>()),
        )
            .prop_map(|(id, layers, vocab, tied)| {
                let mut q = format!("model={id}");
                if let Some(l) = layers {
                    q.push_str(&format!("&layers={l}"));
                }
                if let Some(v) = vocab {
                    q.push_str(&format!("&vocab={v}"));
                }
                if let Some(t) = tied {
                    q.push_str(&format!("&tied={t}"));
                }
                q
            }),
    ]
}

/// The preset architecture a generated model query starts from.
fn table_arch(m: &str) -> Option<Architecture> {
    PRESETS
        .iter()
        .find(|p| m.starts_with(&format!("model={}&", p.id)) || m == format!("model={}", p.id))
        .map(|p| p.arch)
}

/// A valid query over every key (sizes kept moderate so estimates fit).
pub fn queries() -> impl Strategy<Value = String> {
    (
        model(),
        prop::sample::select(Dtype::ALL),
        prop::sample::select(Optimizer::ALL),
        prop::sample::select(Attn::ALL),
        (1u32..=64, 1u32..=8192, 1u32..=8),
        (any::<bool>(), 0u32..=64, any::<bool>(), any::<bool>()),
        prop::option::of(0u16..=9999),
        (1u32..=64, 0u8..=3, 0u32..=2048, 0u8..=30),
        (
            prop::sample::select(Transformers::ALL),
            prop::sample::select(Trainer::ALL),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(|(m, dtype, optim, attn, (b, s, acc), (ckpt, r, keep, cuda), drop, (g, z, ctx, res), (tf, trainer, cache, fsdp, prefetch))| {
            // flash-attn needs CUDA and has no attention sinks (gpt-oss).
            let attn = if attn == Attn::FlashAttention2 && (!cuda || m.contains("gpt-oss")) {
                Attn::Sdpa
            } else {
                attn
            };
            // Learned positions (GPT-2, StarCoder) stop at the table's length.
            let table = table_arch(&m)
                .filter(|a| a.family.spec().positions == Positions::Learned)
                .map(|a| a.positions);
            let s = table.map_or(s, |t| s % t + 1);
            let mut q = format!(
                "{m}&dtype={dtype}&optim={optim}&attn={attn}&batch={b}&seq={s}&grad_accum={acc}\
                 &grad_ckpt={ckpt}&lora_r={r}&keep_outputs={keep}&cuda_like={cuda}&gpus={g}&zero={z}\
                 &ctx_mib={ctx}&reserve_pct={res}"
            );
            if let Some(p) = drop {
                q.push_str(&format!("&dropout=0.{p:04}"));
            }
            // transformers 4.48 and 4.57 predate some families
            // (`Legacy::in_448`, `Legacy::in_457`), and are refused for
            // one whose 4.x code is not modelled (`Legacy::v4_unmodelled`).
            let legacy = table_arch(&m).map(|a| a.family.spec().legacy);
            let tf = match (tf, legacy) {
                (Transformers::V448 | Transformers::V457, Some(l))
                    if !l.in_457 || l.v4_unmodelled =>
                {
                    Transformers::V5
                }
                (Transformers::V448, Some(l)) if !l.in_448 => Transformers::V457,
                (tf, _) => tf,
            };
            q.push_str(&format!("&transformers={tf}&trainer={trainer}&use_cache={cache}"));
            // FSDP1 with full sharding only.
            if fsdp && z == 3 {
                q.push_str(&format!("&shard=fsdp1&backward_prefetch={prefetch}"));
            } else if z == 3 && dtype == Dtype::MixedBf16 {
                // DeepSpeed's ZeRO-3, with either bucket setting.
                let buckets = if prefetch { "default" } else { "auto" };
                q.push_str(&format!("&shard=deepspeed&ds_buckets={buckets}"));
            }
            q
        })
}

/// A tensor as a GGUF file or vramfit's prediction of it has it: its
/// layer, name, row width and elements (elements, so that any type
/// compares).
pub type TensorRow = (Option<u32>, String, u64, u128);

fn tensor_row(t: &vramfit_core::model::gguf::TensorBytes) -> TensorRow {
    let elems = t.bytes / u128::from(t.ty.block_bytes()) * u128::from(t.ty.block());
    (t.layer, t.name.to_string(), t.ne0, elems)
}

/// A GGUF header's tensors, sorted.
pub fn header_tensors(h: &vramfit_core::model::gguf::GgufHeader) -> Vec<TensorRow> {
    let mut rows = Vec::new();
    h.weights_each(&mut |t| rows.push(tensor_row(&t)));
    rows.sort();
    rows
}

/// The tensors of the file vramfit predicts for `a` at `ft` (llama-quantize's
/// recipe for it), sorted.
pub fn predicted_tensors(
    a: &Architecture,
    ft: vramfit_core::model::gguf::FileType,
) -> Result<Vec<TensorRow>, vramfit_core::model::gguf::PredictError> {
    use vramfit_core::model::gguf::{predict_each, Recipe};
    let mut rows = Vec::new();
    predict_each(a, ft, Recipe::for_file_type(ft), &mut |t| {
        rows.push(tensor_row(&t))
    })?;
    rows.sort();
    Ok(rows)
}

/// `rows` with vramfit's name for a post-attention norm (Gemma's
/// `post_attention_norm`; a norm's name moves no byte) as the converters
/// of other families write it (`ffn_norm`), sorted.
pub fn norms_as_converter(rows: Vec<TensorRow>) -> Vec<TensorRow> {
    let mut rows: Vec<TensorRow> = rows
        .into_iter()
        .map(|(l, n, ne0, e)| (l, n.replace("post_attention_norm", "ffn_norm"), ne0, e))
        .collect();
    rows.sort();
    rows
}
