//! GGUF as data (`model::gguf`): the ggml type table against ggml's own
//! numbers, the file types against llama.cpp's, the prediction of
//! `llama-quantize`'s files against 41 published file sizes
//! (`fixtures/gguf_file_sizes.jsonl`, `scripts/measure/gguf/NOTES.md` §7),
//! and the header readers against the tiny real files in
//! `fixtures/gguf/` (their `.expected.json` written by gguf-py's own
//! reader), every truncation and corrupted bytes.
//!
//! Run with `--nocapture` to see the published-size table.

mod common;

use common::fixture_bytes;
use serde_json::{Map, Value};
use vramfit_core::model::gguf::{
    architecture_of, predict, predict_each, predict_folded, predict_with, read_gguf,
    read_safetensors, FileType, GgmlType, GgufArchError, GgufError, GgufHeader, MetaKv, MetaValue,
    PredictError, Recipe, Rules, SafetensorsError, ValueType,
};
use vramfit_core::model::{hf_config, preset, Architecture, Family, PRESETS};

fn json(path: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ---------------------------------------------------------------- the type table

/// One ggml type: its id, its name, its block, and its bytes as the
/// `static_assert(sizeof(block_*) == …)` of `ggml-common.h` writes them
/// (ggml_half = 2 bytes, QK_K = 256, K_SCALE_SIZE = 12).
fn check_type(t: GgmlType, id: u32, name: &str, block: u64, bytes: u64) {
    assert_eq!(
        (t.id(), t.name(), t.block(), t.block_bytes()),
        (id, name, block, bytes),
        "{t:?}"
    );
    assert_eq!(GgmlType::from_id(id), Some(t));
}

#[test]
fn ggml_types_match_ggml() {
    // Source: llama.cpp b8973 (3142f1db) ggml/include/ggml.h (ids),
    // ggml/src/ggml.c type_traits[] (names, blck_size), ggml-common.h
    // static_asserts (the formulas below); Q2_0: ggml d99724f2.
    const H: u64 = 2; // sizeof(ggml_half)
    const K: u64 = 256; // QK_K
    use GgmlType as T;
    check_type(T::F32, 0, "f32", 1, 4);
    check_type(T::F16, 1, "f16", 1, 2);
    check_type(T::Q4_0, 2, "q4_0", 32, H + 32 / 2);
    check_type(T::Q4_1, 3, "q4_1", 32, 2 * H + 32 / 2);
    check_type(T::Q5_0, 6, "q5_0", 32, H + 4 + 32 / 2);
    check_type(T::Q5_1, 7, "q5_1", 32, 2 * H + 4 + 32 / 2);
    check_type(T::Q8_0, 8, "q8_0", 32, H + 32);
    check_type(T::Q8_1, 9, "q8_1", 32, 2 * H + 32);
    check_type(T::Q2K, 10, "q2_K", K, 2 * H + K / 16 + K / 4);
    check_type(T::Q3K, 11, "q3_K", K, H + K / 4 + K / 8 + 12);
    check_type(T::Q4K, 12, "q4_K", K, 2 * H + 12 + K / 2);
    check_type(T::Q5K, 13, "q5_K", K, 2 * H + 12 + K / 2 + K / 8);
    check_type(T::Q6K, 14, "q6_K", K, H + K / 16 + 3 * K / 4);
    check_type(T::Q8K, 15, "q8_K", K, 4 + K + K / 16 * 2);
    check_type(T::Iq2Xxs, 16, "iq2_xxs", K, H + K / 8 * 2);
    check_type(T::Iq2Xs, 17, "iq2_xs", K, H + K / 8 * 2 + K / 32);
    check_type(T::Iq3Xxs, 18, "iq3_xxs", K, H + 3 * (K / 8));
    check_type(T::Iq1S, 19, "iq1_s", K, H + K / 8 + K / 16);
    check_type(T::Iq4Nl, 20, "iq4_nl", 32, H + 32 / 2);
    check_type(T::Iq3S, 21, "iq3_s", K, H + 13 * (K / 32) + K / 64);
    check_type(T::Iq2S, 22, "iq2_s", K, H + K / 4 + K / 16);
    check_type(T::Iq4Xs, 23, "iq4_xs", K, H + 2 + K / 64 + K / 2);
    check_type(T::I8, 24, "i8", 1, 1);
    check_type(T::I16, 25, "i16", 1, 2);
    check_type(T::I32, 26, "i32", 1, 4);
    check_type(T::I64, 27, "i64", 1, 8);
    check_type(T::F64, 28, "f64", 1, 8);
    check_type(T::Iq1M, 29, "iq1_m", K, K / 8 + K / 16 + K / 32);
    check_type(T::Bf16, 30, "bf16", 1, 2);
    check_type(T::Tq1_0, 34, "tq1_0", K, H + K / 64 + (K - 4 * K / 64) / 5);
    check_type(T::Tq2_0, 35, "tq2_0", K, H + K / 4);
    check_type(T::Mxfp4, 39, "mxfp4", 32, 1 + 32 / 2);
    check_type(T::Nvfp4, 40, "nvfp4", 64, 64 / 16 + 64 / 2);
    check_type(T::Q1_0, 41, "q1_0", 128, H + 128 / 8);
    check_type(T::Q2_0, 42, "q2_0", 64, H + 64 / 4);
    // Removed ids are refused (blck_size 0 in type_traits).
    for id in [4, 5, 31, 32, 33, 36, 37, 38, 43] {
        assert_eq!(GgmlType::from_id(id), None, "id {id}");
    }
    for (i, t) in GgmlType::ALL.into_iter().enumerate() {
        assert_eq!(t.index(), i);
    }
}

#[test]
fn tensor_bytes_are_ggml_nbytes() {
    // ggml_nbytes: ne0/blck · type_size · ne1 · ne2; a partial block is
    // no tensor.
    let check = |t: GgmlType, ne: &[u64], bytes: Option<u128>| {
        assert_eq!(t.tensor_bytes(ne), bytes, "{t} {ne:?}")
    };
    check(
        GgmlType::Q4K,
        &[4096, 14336],
        Some(4096 / 256 * 144 * 14336),
    );
    check(
        GgmlType::Mxfp4,
        &[2880, 2880, 32],
        Some(2880 / 32 * 17 * 2880 * 32),
    );
    check(GgmlType::Q4K, &[2880, 1], None);
    check(GgmlType::F32, &[7], Some(28));
    check(GgmlType::F64, &[u64::MAX, u64::MAX, u64::MAX], None);
}

// ---------------------------------------------------------------- file types

#[test]
fn file_types_match_llama_cpp() {
    // Source: include/llama.h enum llama_ftype (ids) and
    // src/llama-quant.cpp llama_ftype_get_default_type (b8973).
    use FileType as F;
    use GgmlType as T;
    let rows = [
        (F::F32, 0, T::F32),
        (F::F16, 1, T::F16),
        (F::Q4_0, 2, T::Q4_0),
        (F::Q4_1, 3, T::Q4_1),
        (F::Q8_0, 7, T::Q8_0),
        (F::Q5_0, 8, T::Q5_0),
        (F::Q5_1, 9, T::Q5_1),
        (F::Q2K, 10, T::Q2K),
        (F::Q3KS, 11, T::Q3K),
        (F::Q3KM, 12, T::Q3K),
        (F::Q3KL, 13, T::Q3K),
        (F::Q4KS, 14, T::Q4K),
        (F::Q4KM, 15, T::Q4K),
        (F::Q5KS, 16, T::Q5K),
        (F::Q5KM, 17, T::Q5K),
        (F::Q6K, 18, T::Q6K),
        (F::Iq2Xxs, 19, T::Iq2Xxs),
        (F::Iq2Xs, 20, T::Iq2Xs),
        (F::Q2KS, 21, T::Q2K),
        (F::Iq3Xs, 22, T::Iq3S),
        (F::Iq3Xxs, 23, T::Iq3Xxs),
        (F::Iq1S, 24, T::Iq1S),
        (F::Iq4Nl, 25, T::Iq4Nl),
        (F::Iq3S, 26, T::Iq3S),
        (F::Iq3M, 27, T::Iq3S),
        (F::Iq2S, 28, T::Iq2Xs),
        (F::Iq2M, 29, T::Iq2S),
        (F::Iq4Xs, 30, T::Iq4Xs),
        (F::Iq1M, 31, T::Iq1M),
        (F::Bf16, 32, T::Bf16),
        (F::Tq1_0, 36, T::Tq1_0),
        (F::Tq2_0, 37, T::Tq2_0),
        (F::Mxfp4Moe, 38, T::Mxfp4),
        (F::Q1_0, 40, T::Q1_0),
    ];
    assert_eq!(rows.len(), FileType::ALL.len());
    for (f, id, default) in rows {
        assert_eq!((f.id(), f.default_type()), (id, default), "{f}");
        assert_eq!(FileType::from_id(id), Some(f));
        assert_eq!(FileType::from_key(f.key()), Some(f));
        assert_eq!(f.key(), f.label().to_ascii_lowercase());
    }
    assert_eq!(
        FileType::from_id(39),
        None,
        "NVFP4 has no default type at b8973"
    );
}

// ---------------------------------------------------------------- published sizes

/// The config a row's file was made from: the fixture config with the
/// row's published overrides (a null removes a field's value).
fn row_config(row: &Value) -> Map<String, Value> {
    let name = row["config_fixture"].as_str().expect("config_fixture");
    let Value::Object(mut cfg) = json(&format!("hf_configs/{name}.json")) else {
        panic!("{name}: not an object");
    };
    if let Value::Object(ov) = &row["config_overrides"] {
        for (k, v) in ov {
            cfg.insert(k.clone(), v.clone());
        }
    }
    cfg
}

/// `predict.py`'s `_rope_type`, and whether the converter writes its rope
/// tables for this config (Llama's `llama3` rope_freqs; Phi-3's factors
/// whenever `rope_scaling` is set).
fn rope_tables(cfg: &Map<String, Value>) -> bool {
    let present = |k: &str| {
        cfg.get(k)
            .filter(|v| !v.is_null() && *v != &Value::Object(Map::new()))
    };
    let mut rs = present("rope_scaling").or_else(|| present("rope_parameters"));
    if let Some(full) = rs.and_then(|r| r.get("full_attention")) {
        rs = Some(full);
    }
    let rope_type = rs
        .and_then(|r| r.get("rope_type").or_else(|| r.get("type")))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    match cfg.get("model_type").and_then(Value::as_str) {
        Some("llama" | "mistral" | "mixtral") => rope_type == "llama3",
        Some("phi3") => present("rope_scaling").is_some(),
        _ => false,
    }
}

/// The recipe a row states: the llama.cpp rules it was made with, whether
/// an importance matrix was used (stated, or the variant that fits).
fn row_recipe(row: &Value, cfg: &Map<String, Value>) -> Recipe {
    let rules = match row["llama_cpp_rules"].as_str() {
        Some("legacy") => Rules::Before8266,
        Some("legacy+pre-b2248-tied-embd") => Rules::Before2248,
        Some("b8973") => Rules::B8973,
        other => panic!("rules {other:?}"),
    };
    Recipe {
        rules,
        imatrix: row["imatrix_assumed"] == true,
        rope_tables: rope_tables(cfg),
    }
}

struct SizeRow {
    file: String,
    size: u64,
    predicted: u128,
    header: u64,
    error_pct: f64,
}

/// One published file: the prediction equals `predict.py`'s (tensor
/// count, count per type, bytes, data section) and the weights error is
/// within 0.5 %.
fn check_size_row(row: &Value) -> SizeRow {
    let file = row["file"].as_str().expect("file").to_owned();
    let cfg = row_config(row);
    let text = serde_json::to_string(&cfg).expect("json");
    let arch = hf_config::read(&text)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .arch;
    let ft_key = row["file_type"]
        .as_str()
        .expect("file_type")
        .to_ascii_lowercase();
    let ft = FileType::from_key(&ft_key).unwrap_or_else(|| panic!("{ft_key}"));
    let w =
        predict_with(&arch, ft, row_recipe(row, &cfg)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("{file}: {k}"));
    assert_eq!(
        u64::from(w.tensors),
        n("predicted_tensor_count"),
        "{file}: tensors"
    );
    let by_type: Map<String, Value> = w
        .by_type()
        .map(|(t, count, _)| (t.name().to_ascii_uppercase(), Value::from(count)))
        .collect();
    assert_eq!(
        Value::Object(by_type),
        row["predicted_by_type"],
        "{file}: types"
    );
    assert_eq!(
        w.total,
        u128::from(n("predicted_tensor_bytes")),
        "{file}: bytes"
    );
    assert_eq!(
        w.data_section,
        u128::from(n("predicted_tensor_data_bytes")),
        "{file}"
    );
    // The parts add up to the whole.
    let parts = w.token_embd + w.output + w.other + w.layers.iter().sum::<u128>();
    assert_eq!(parts, w.total, "{file}: parts");
    let (size, header) = (n("size_bytes"), n("reference_header_bytes"));
    let implied = (size - header) as f64;
    let error_pct = 100.0 * (w.data_section as f64 - implied) / implied;
    assert!(error_pct.abs() < 0.5, "{file}: {error_pct:.4} %");
    SizeRow {
        file,
        size,
        predicted: w.data_section,
        header,
        error_pct,
    }
}

#[test]
fn published_gguf_sizes_are_predicted() {
    // Source: fixtures/gguf_file_sizes.jsonl (table.py --write): 41 files
    // whose exact sizes four catalogues list with their checksums; each
    // row names its config, llama.cpp era and importance matrix, and
    // predict.py's tensors. The header (tokenizer, metadata) is the
    // family's median residual: only the data section is predicted.
    let text = String::from_utf8(fixture_bytes("gguf_file_sizes.jsonl")).expect("utf-8");
    let rows: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a json row"))
        .collect();
    assert_eq!(rows.len(), 41);
    println!(
        "{:52} {:>14} {:>14} {:>10} {:>8}",
        "file", "published", "predicted", "header", "error %"
    );
    let mut worst = 0f64;
    for row in &rows {
        let r = check_size_row(row);
        println!(
            "{:52} {:>14} {:>14} {:>10} {:>8.4}",
            r.file.chars().take(52).collect::<String>(),
            r.size,
            r.predicted,
            r.header,
            r.error_pct
        );
        worst = worst.max(r.error_pct.abs());
    }
    println!("largest error {worst:.4} % (predict.py: 0.012 %)");
    assert!(worst <= 0.0125, "{worst}");
}

// ---------------------------------------------------------------- the rules, by hand

fn arch(id: &str) -> Architecture {
    preset(id).unwrap_or_else(|| panic!("{id}")).arch
}

/// Types and counts of a prediction, as `(type name, count)`.
fn type_counts(a: &Architecture, ft: FileType, recipe: Recipe) -> Vec<(&'static str, u32)> {
    let w = predict_with(a, ft, recipe).expect("a prediction");
    w.by_type().map(|(t, n, _)| (t.name(), n)).collect()
}

#[test]
fn the_rules_give_the_known_mixtures() {
    // Source: NOTES.md §5 (llama-quant.cpp b8973), worked by hand.
    let b8973 = Recipe::default();
    let check = |id: &str, ft: FileType, recipe: Recipe, expected: &[(&str, u32)]| {
        assert_eq!(type_counts(&arch(id), ft, recipe), expected, "{id} {ft}")
    };
    // Llama 3.1 8B Q4_K_M: use_more_bits picks 16 of 32 layers for attn_v
    // and ffn_down (Q6_K), output Q6_K; 65 f32 norms.
    check(
        "llama3.1-8b",
        FileType::Q4KM,
        b8973,
        &[("f32", 65), ("q4_K", 193), ("q6_K", 33)],
    );
    // Mixtral 8x7B Q4_K_M: 8 experts send attn_k and attn_v to Q8_0 and
    // attn_output to Q5_K (NOTES.md §5.5).
    check(
        "mixtral-8x7b",
        FileType::Q4KM,
        b8973,
        &[
            ("f32", 97),
            ("q8_0", 64),
            ("q4_K", 113),
            ("q5_K", 32),
            ("q6_K", 17),
        ],
    );
    // Phi-3 mini Q4_K_M: its fused attn_qkv takes the attn_v rule at
    // b8973 (Q6_K where use_more_bits) and Q5_K before build 8266.
    let phi = |rules| {
        type_counts(
            &arch("phi3-mini"),
            FileType::Q4KM,
            Recipe { rules, ..b8973 },
        )
    };
    assert!(
        phi(Rules::B8973).contains(&("q6_K", 33)),
        "{:?}",
        phi(Rules::B8973)
    );
    assert!(
        phi(Rules::Before8266).contains(&("q5_K", 32)),
        "{:?}",
        phi(Rules::Before8266)
    );
    // Gemma 3 1B (hidden 1152 = 4.5 blocks of 256): Q4_K rows fall back
    // to Q5_0, Q6_K rows to Q8_0 (tensor_type_fallback).
    let g = predict(&arch("gemma3-1b"), FileType::Q4KM).expect("gemma3");
    assert!(g.fallbacks > 100, "{}", g.fallbacks);
    assert!(g.by_type().any(|(t, _, _)| t == GgmlType::Q5_0));
}

#[test]
fn every_preset_and_file_type_predicts_or_says_why() {
    // No panic anywhere; the parts add up; gpt-oss MXFP4_MOE keeps the
    // experts MXFP4 and the rest Q8_0 (NOTES.md §5.3 rule 2).
    for p in PRESETS {
        for &ft in FileType::ALL {
            match predict(&p.arch, ft) {
                Ok(w) => {
                    let parts = w.token_embd + w.output + w.other + w.layers.iter().sum::<u128>();
                    assert_eq!(parts, w.total, "{} {ft}", p.id);
                    let by_type: u128 = w.by_type().map(|(_, _, b)| b).sum();
                    assert_eq!(by_type, w.total, "{} {ft}", p.id);
                    assert_eq!(w.layers.len(), p.arch.layers as usize);
                }
                Err(PredictError::NoFallback(n)) => {
                    assert!(n.row % n.ty.block() != 0, "{} {ft}: {n:?}", p.id)
                }
                Err(e) => panic!("{} {ft}: {e}", p.id),
            }
        }
    }
    let oss = predict(&arch("gpt-oss-20b"), FileType::Mxfp4Moe).expect("gpt-oss");
    let types: Vec<_> = oss.by_type().map(|(t, _, _)| t).collect();
    assert_eq!(types, [GgmlType::F32, GgmlType::Q8_0, GgmlType::Mxfp4]);
}

/// One tensor as a prediction tells it: name, type, row, bytes.
type Told = (String, GgmlType, u64, u128);

/// `predict_each`'s tensors by layer (index 0: outside the layers).
fn each_by_layer(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
) -> Result<Vec<Vec<Told>>, PredictError> {
    let mut layers = vec![Vec::new(); a.layers as usize + 1];
    predict_each(a, ft, recipe, &mut |t| {
        let i = t.layer.map_or(0, |l| l as usize + 1);
        layers[i].push((t.name.to_string(), t.ty, t.ne0, t.bytes));
    })?;
    Ok(layers)
}

/// `predict_folded`'s tensors unfolded by layer, as `each_by_layer`.
fn folded_by_layer(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
) -> Result<Vec<Vec<Told>>, PredictError> {
    let mut outside = Vec::new();
    let mut classes: Vec<Vec<Told>> = Vec::new();
    let runs = predict_folded(a, ft, recipe, &mut |class, t| {
        let told = (t.name.to_string(), t.ty, t.ne0, t.bytes);
        match class {
            None => outside.push(told),
            Some(k) => {
                classes.resize(classes.len().max(usize::from(k) + 1), Vec::new());
                classes[usize::from(k)].push(told);
            }
        }
    })?;
    let mut layers = vec![outside];
    for r in &runs {
        assert_eq!(r.lo as usize + 1, layers.len(), "runs follow each other");
        for l in r.lo..r.hi {
            layers.push(classes[usize::from(r.kind_of(l))].clone());
        }
    }
    Ok(layers)
}

/// The fold types a layer only where its class may change: unfolded, its
/// tensors are `predict_each`'s layer by layer (or it names the same
/// tensor `llama-quantize` refuses), for every preset, file type, build's
/// rules and importance matrix, and for 1 to 48 layers and a few larger
/// counts (some dense first) of a dense, a mixture-of-experts and a
/// latent-attention model.
#[test]
fn the_folded_prediction_is_the_prediction() {
    let mut archs: Vec<Architecture> = PRESETS.iter().map(|p| p.arch).collect();
    for id in ["llama3.1-8b", "qwen3-30b-a3b", "deepseek-v3"] {
        for layers in (1..=48).chain([61, 64, 80, 95, 126]) {
            let mut a = arch(id);
            a.layers = layers;
            a.dense_layers = a.dense_layers.min(layers / 3);
            a.sliding_layers = a.sliding_layers.min(layers);
            archs.push(a);
        }
    }
    for a in &archs {
        for &ft in FileType::ALL {
            for rules in [Rules::Before2248, Rules::Before8266, Rules::B8973] {
                for imatrix in [false, true] {
                    let recipe = Recipe {
                        rules,
                        imatrix,
                        rope_tables: false,
                    };
                    assert_eq!(
                        folded_by_layer(a, ft, recipe),
                        each_by_layer(a, ft, recipe),
                        "{:?} {} layers {ft} {rules:?} imatrix {imatrix}",
                        a.family,
                        a.layers
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------- GGUF headers

/// A metadata value against gguf-py's parse: the same type and value (an
/// f32 as the exact decimal of the float).
fn check_value(v: &MetaValue, ty: &str, expected: &Value, bytes: &[u8], key: &str) {
    let same = match (v, ty) {
        (MetaValue::U8(x), "UINT8") => expected.as_u64() == Some(u64::from(*x)),
        (MetaValue::I8(x), "INT8") => expected.as_i64() == Some(i64::from(*x)),
        (MetaValue::U16(x), "UINT16") => expected.as_u64() == Some(u64::from(*x)),
        (MetaValue::I16(x), "INT16") => expected.as_i64() == Some(i64::from(*x)),
        (MetaValue::U32(x), "UINT32") => expected.as_u64() == Some(u64::from(*x)),
        (MetaValue::I32(x), "INT32") => expected.as_i64() == Some(i64::from(*x)),
        (MetaValue::U64(x), "UINT64") => expected.as_u64() == Some(*x),
        (MetaValue::I64(x), "INT64") => expected.as_i64() == Some(*x),
        (MetaValue::F32(x), "FLOAT32") => expected.as_f64() == Some(f64::from(*x)),
        (MetaValue::F64(x), "FLOAT64") => expected.as_f64() == Some(*x),
        (MetaValue::Bool(x), "BOOL") => expected.as_bool() == Some(*x),
        (MetaValue::Str(x), "STRING") => expected.as_str() == Some(x.as_str()),
        (MetaValue::Array(a), "ARRAY") => {
            let items = expected.as_array().expect("an array");
            assert_eq!(a.len as usize, items.len(), "{key}");
            if a.values.is_empty() && a.len > 0 {
                let strings = a.strings(bytes).expect("strings");
                let want: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                strings.iter().map(String::as_str).eq(want)
            } else {
                for (v, e) in a.values.iter().zip(items) {
                    check_value(v, type_name(a.elem), e, bytes, key);
                }
                true
            }
        }
        _ => false,
    };
    assert!(same, "{key}: {v:?} is not {ty} {expected}");
}

/// gguf-py's names of the value types.
fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::U8 => "UINT8",
        ValueType::I8 => "INT8",
        ValueType::U16 => "UINT16",
        ValueType::I16 => "INT16",
        ValueType::U32 => "UINT32",
        ValueType::I32 => "INT32",
        ValueType::F32 => "FLOAT32",
        ValueType::Bool => "BOOL",
        ValueType::Str => "STRING",
        ValueType::Array => "ARRAY",
        ValueType::U64 => "UINT64",
        ValueType::I64 => "INT64",
        ValueType::F64 => "FLOAT64",
    }
}

/// A fixture file read to the byte: counts, alignment, data offset, every
/// key, every tensor, the sizes.
fn check_gguf_fixture(name: &str) -> (Vec<u8>, GgufHeader) {
    let bytes = fixture_bytes(&format!("gguf/{name}.gguf"));
    let e = json(&format!("gguf/{name}.expected.json"));
    let h = read_gguf(&bytes).unwrap_or_else(|err| panic!("{name}: {err}"));
    let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{k}"));
    assert_eq!(u64::from(h.version), n("version"));
    assert_eq!(h.metadata.len() as u64, n("kv_count"));
    assert_eq!(h.tensors.len() as u64, n("tensor_count"));
    assert_eq!(h.alignment, n("alignment"));
    assert_eq!(h.data_offset, n("data_offset"));
    assert_eq!(h.tensor_bytes(), u128::from(n("tensor_bytes")));
    assert_eq!(h.file_size(), u128::from(n("file_size")));
    assert_eq!(bytes.len() as u64, n("file_size"));
    let kvs = e["metadata"].as_array().expect("metadata");
    for (kv, want) in h.metadata.iter().zip(kvs) {
        assert_eq!(kv.key, want["key"].as_str().expect("key"));
        let ty = want["type"].as_str().expect("type");
        check_value(&kv.value, ty, &want["value"], &bytes, &kv.key);
        if let MetaValue::Array(a) = &kv.value {
            assert_eq!(Some(a.len), want["array_len"].as_u64(), "{}", kv.key);
        }
    }
    let tensors = e["tensors"].as_array().expect("tensors");
    for (t, want) in h.tensors.iter().zip(tensors) {
        let ne: Vec<u64> = want["ne"]
            .as_array()
            .expect("ne")
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        assert_eq!(t.name, want["name"].as_str().expect("name"));
        assert_eq!(t.shape(), ne.as_slice(), "{}", t.name);
        assert_eq!(
            t.ty.name().to_ascii_uppercase(),
            want["type"].as_str().expect("type")
        );
        assert_eq!(Some(u64::from(t.ty.id())), want["type_id"].as_u64());
        assert_eq!(Some(t.offset), want["offset"].as_u64(), "{}", t.name);
        assert_eq!(Some(t.bytes), want["n_bytes"].as_u64(), "{}", t.name);
        assert_eq!(Some(h.data_offset + t.offset), want["file_offset"].as_u64());
    }
    (bytes, h)
}

#[test]
fn tiny_gguf_files_are_read_to_the_byte() {
    // Source: fixtures/gguf/README.md (make_fixtures.py, gguf-py 0.19.0;
    // the expected parse is gguf.GGUFReader's).
    for name in ["tiny-llama-mixed", "tiny-moe-align64"] {
        let (_, h) = check_gguf_fixture(name);
        check_read_weights(&h, &json(&format!("gguf/{name}.expected.json")));
    }
}

/// A read file's bytes by part: the token embedding, the output, each
/// `blk.N.` layer and the rest sum the expected tensors' `n_bytes`.
fn check_read_weights(h: &GgufHeader, e: &Value) {
    let w = h.weights();
    let mut parts = [0u128; 3];
    let mut layers = vec![0u128; w.layers.len()];
    for t in e["tensors"].as_array().expect("tensors") {
        let (name, bytes) = (
            t["name"].as_str().expect("name"),
            t["n_bytes"].as_u64().expect("n"),
        );
        let layer = name
            .strip_prefix("blk.")
            .and_then(|r| r.split('.').next()?.parse::<usize>().ok());
        let slot = match (name, layer) {
            (_, Some(l)) => &mut layers[l],
            ("token_embd.weight", None) => &mut parts[0],
            ("output.weight", None) => &mut parts[1],
            (_, None) => &mut parts[2],
        };
        *slot += u128::from(bytes);
    }
    assert_eq!([w.token_embd, w.output, w.other], parts);
    assert_eq!(w.layers, layers);
    assert_eq!(
        w.total,
        u128::from(e["tensor_bytes"].as_u64().expect("bytes"))
    );
    assert_eq!(
        w.data_section,
        u128::from(e["tensor_data_bytes"].as_u64().expect("bytes"))
    );
    assert_eq!(
        u64::from(w.tensors),
        e["tensor_count"].as_u64().expect("count")
    );
    let ft = e["metadata"]
        .as_array()
        .expect("metadata")
        .iter()
        .find(|kv| kv["key"] == "general.file_type");
    let id = ft
        .and_then(|kv| kv["value"].as_u64())
        .and_then(|v| u32::try_from(v).ok());
    assert_eq!(w.file_type, id.and_then(FileType::from_id));
}

#[test]
fn every_truncated_header_asks_for_more() {
    // The page reads a file in parts: every prefix of the header answers
    // NeedMore with a length beyond it and within the header.
    for name in ["tiny-llama-mixed", "tiny-moe-align64"] {
        let bytes = fixture_bytes(&format!("gguf/{name}.gguf"));
        let h = read_gguf(&bytes).expect("whole");
        let end = h.header_len as usize;
        for p in 0..end {
            match read_gguf(&bytes[..p]) {
                Err(GgufError::NeedMore { at_least }) => {
                    assert!(
                        at_least > p as u64 && at_least <= h.header_len,
                        "{name} {p}: {at_least}"
                    )
                }
                other => panic!("{name}: prefix {p}: {other:?}"),
            }
        }
        assert_eq!(read_gguf(&bytes[..end]).as_ref(), Ok(&h), "{name}");
    }
    let st = fixture_bytes("gguf/tiny.safetensors");
    let end = read_safetensors(&st).expect("whole").data_offset as usize;
    for p in 0..end {
        match read_safetensors(&st[..p]) {
            Err(SafetensorsError::NeedMore { at_least }) => {
                assert!(
                    at_least > p as u64 && at_least <= end as u64,
                    "{p}: {at_least}"
                )
            }
            other => panic!("safetensors prefix {p}: {other:?}"),
        }
    }
    assert!(read_safetensors(&st[..end]).is_ok());
}

/// xorshift64*: a deterministic stream for the corruption loop.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn corrupted_headers_never_panic() {
    // Flip 1–4 bytes of the header (and sometimes truncate): any answer
    // but a panic, and the header's describing functions too.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let files = [
        fixture_bytes("gguf/tiny-llama-mixed.gguf"),
        fixture_bytes("gguf/tiny-moe-align64.gguf"),
    ];
    let (mut ok, mut need, mut bad) = (0, 0, 0);
    for i in 0..6000 {
        let src = &files[i % 2];
        let head = 3100.min(src.len());
        let mut b = src[..head].to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(head);
            b[at] ^= 1 << rng.below(8);
        }
        if i % 3 == 0 {
            b.truncate(rng.below(head));
        }
        match read_gguf(&b) {
            Ok(h) => {
                ok += 1;
                let _ = architecture_of(&h);
                let _ = h.model();
                let _ = h.weights();
            }
            Err(GgufError::NeedMore { .. }) => need += 1,
            Err(_) => bad += 1,
        }
    }
    println!("corrupted GGUF: {ok} read, {need} need more, {bad} refused");
    assert!(bad > 0 && need > 0);
    let st = fixture_bytes("gguf/tiny.safetensors");
    for _ in 0..3000 {
        let mut b = st.clone();
        let at = rng.below(b.len().min(700));
        b[at] ^= 1 << rng.below(8);
        let _ = read_safetensors(&b);
    }
}

/// A GGUF header built by hand: the 24-byte start, then keys.
fn gguf_bytes(n_tensors: i64, kvs: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(n_tensors.to_le_bytes());
    b.extend((kvs.len() as i64).to_le_bytes());
    for (k, ty, v) in kvs {
        b.extend((k.len() as u64).to_le_bytes());
        b.extend(k.as_bytes());
        b.extend(ty.to_le_bytes());
        b.extend(*v);
    }
    b
}

#[test]
fn hostile_counts_ask_for_bytes_not_memory() {
    // Counts far beyond the bytes: an answer at once, no allocation
    // sized by them (gguf.cpp's limits: strings 1 GiB, arrays 2^30).
    let check = |b: &[u8], expected: GgufError| assert_eq!(read_gguf(b), Err(expected));
    let huge_tensors = gguf_bytes(i64::MAX, &[]);
    check(&huge_tensors, GgufError::NeedMore { at_least: 32 });
    let long_string = gguf_bytes(0, &[("k", 8, &(1u64 << 29).to_le_bytes())]);
    check(
        &long_string,
        GgufError::NeedMore {
            at_least: 45 + (1 << 29),
        },
    );
    let mut big_array = 10u32.to_le_bytes().to_vec();
    big_array.extend((1u64 << 30).to_le_bytes());
    let arr = gguf_bytes(0, &[("k", 9, &big_array)]);
    check(
        &arr,
        GgufError::NeedMore {
            at_least: 49 + (8 << 30),
        },
    );
    big_array[4..].copy_from_slice(&((1u64 << 30) + 1).to_le_bytes());
    let arr = gguf_bytes(0, &[("k", 9, &big_array)]);
    assert!(matches!(read_gguf(&arr), Err(GgufError::Invalid { .. })));
    let negative = gguf_bytes(-1, &[]);
    assert!(matches!(
        read_gguf(&negative),
        Err(GgufError::Invalid { .. })
    ));
    assert_eq!(read_gguf(b"GGUF\x01\0\0\0"), Err(GgufError::Version(1)));
    assert_eq!(read_gguf(b"GGML"), Err(GgufError::NotGguf));
    let bad_align = gguf_bytes(0, &[("general.alignment", 4, &48u32.to_le_bytes())]);
    assert!(matches!(
        read_gguf(&bad_align),
        Err(GgufError::Invalid { .. })
    ));
    let dup = gguf_bytes(0, &[("a", 0, &[1]), ("a", 0, &[2])]);
    assert!(matches!(read_gguf(&dup), Err(GgufError::Invalid { .. })));
}

#[test]
fn safetensors_header_is_read_to_the_byte() {
    // Source: fixtures/gguf/tiny.safetensors.expected.json.
    let bytes = fixture_bytes("gguf/tiny.safetensors");
    let e = json("gguf/tiny.safetensors.expected.json");
    let h = read_safetensors(&bytes).expect("tiny.safetensors");
    assert_eq!(Some(h.header_len), e["header_len"].as_u64());
    assert_eq!(Some(h.data_offset), e["data_offset"].as_u64());
    assert_eq!(
        h.tensor_bytes(),
        u128::from(e["tensor_bytes"].as_u64().expect("bytes"))
    );
    let meta: Vec<(String, String)> = e["metadata"]
        .as_object()
        .expect("metadata")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("text").to_owned()))
        .collect();
    assert_eq!(h.metadata, meta);
    let want = e["tensors"].as_array().expect("tensors");
    assert_eq!(h.tensors.len(), want.len());
    for (t, w) in h.tensors.iter().zip(want) {
        let shape: Vec<u64> = w["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        assert_eq!(t.name, w["name"].as_str().expect("name"));
        assert_eq!(t.dtype, w["dtype"].as_str().expect("dtype"));
        assert_eq!(t.shape, shape, "{}", t.name);
        assert_eq!(
            Value::from(vec![t.begin, t.end]),
            w["data_offsets"],
            "{}",
            t.name
        );
        assert_eq!(Some(t.bytes()), w["n_bytes"].as_u64());
        assert_eq!(Some(h.data_offset + t.begin), w["file_offset"].as_u64());
    }
    let mut huge = bytes.clone();
    huge[..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        read_safetensors(&huge),
        Err(SafetensorsError::Invalid(_))
    ));
}

// ---------------------------------------------------------------- the description

#[test]
fn the_architecture_is_read_from_the_header() {
    // Source: the fixtures' metadata (README.md): tiny-llama-mixed is
    // llama, 2 layers, width 256, 2 heads of 32 and 1 key/value head,
    // MLP 32, 32 tokens, an output tensor, context 128.
    let (_, h) = check_gguf_fixture("tiny-llama-mixed");
    let llama = Architecture {
        family: Family::Llama,
        hidden: 256,
        layers: 2,
        heads: 2,
        kv_heads: 1,
        head_dim: 32,
        ffn: 32,
        vocab: 32,
        tied: false,
        positions: 128,
        ..Architecture::BLANK
    };
    assert_eq!(architecture_of(&h), Ok(llama));
    let m = h.model();
    assert_eq!(
        (m.file_type, m.block_count, m.context_length),
        (Some(15), Some(2), Some(128))
    );
    assert_eq!(FileType::from_id(15), Some(FileType::Q4KM));
    // tiny-moe-align64: qwen3moe, 4 experts of width 32, 2 per token.
    let (_, h) = check_gguf_fixture("tiny-moe-align64");
    let moe = Architecture {
        family: Family::Qwen3Moe,
        hidden: 64,
        layers: 1,
        heads: 2,
        kv_heads: 1,
        head_dim: 32,
        ffn: 256,
        vocab: 8,
        positions: 64,
        experts: 4,
        experts_per_token: 2,
        moe_ffn: 32,
        ..Architecture::BLANK
    };
    assert_eq!(architecture_of(&h), Ok(moe));
}

/// DeepSeek Sparse Attention's headers (`dsa/llamacpp/tiny_gguf.py`'s
/// files, cut at their data): the MLA keys as DeepSeek's, the indexer's
/// heads and width (`attention.indexer.head_count`, `key_length`), and a
/// `block_count` that counts the MTP block the converter appends
/// (`nextn_predict_layers`: llama.cpp's `n_layer()` leaves it out,
/// `src/llama-hparams.cpp:297-298`). A GLM-5.2-style file whose
/// `attention.indexer.types` marks layers as reusing an indexer is
/// refused. llama-server loaded all three whole
/// (`scripts/measure/families/dsa/llamacpp/raw/`).
#[test]
fn a_sparse_attention_header_has_its_indexer() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-deepseek32.header.gguf")).expect("a header");
    let want = Architecture {
        family: Family::DeepseekV32,
        hidden: 512,
        layers: 4,
        heads: 4,
        kv_heads: 4,
        head_dim: 192,
        ffn: 512,
        vocab: 1024,
        tied: false,
        positions: 163840,
        experts: 16,
        experts_per_token: 2,
        moe_ffn: 256,
        shared_experts: 1,
        dense_layers: 1,
        q_lora_rank: 256,
        kv_lora_rank: 256,
        rope_dim: 64,
        v_head_dim: 128,
        index_heads: 4,
        index_head_dim: 128,
        index_topk: 64,
        ..Architecture::BLANK
    };
    assert_eq!(architecture_of(&h), Ok(want));
    // The file's bytes as llama.cpp loads them: the MTP block (blk.4, 16,897,088
    // bytes) left out, 53,639,360 (`deepseek32-f16-tensors.txt`; llama.cpp
    // also loads that block's 64-byte `exp_probs_b.bias`).
    let bytes = fixture_bytes("gguf/tiny-deepseek32.header.gguf");
    let read = vramfit_core::import::gguf(&bytes, "tiny-deepseek32-f16.gguf").expect("read");
    let file = read
        .file_keys
        .iter()
        .find(|(k, _)| *k == vramfit_core::query::Key::FileBytes)
        .map(|(_, v)| v.clone())
        .expect("file_bytes");
    let read = vramfit_core::infer::local::ReadFile::parse(&file).expect("parsed");
    assert_eq!((read.layers(), read.total()), (4, 53_639_360));
    let h = read_gguf(&fixture_bytes("gguf/tiny-glmdsa.header.gguf")).expect("a header");
    let glm = architecture_of(&h).map(|a| (a.family, a.index_heads, a.layers));
    assert_eq!(glm, Ok((Family::GlmMoeDsa, 4, 4)));
    let h = read_gguf(&fixture_bytes("gguf/tiny-glmdsa-types.header.gguf")).expect("a header");
    let e = architecture_of(&h)
        .expect_err("shared indexers")
        .to_string();
    insta::assert_snapshot!(e, @"`glm-dsa.attention.indexer.types` marks 2 layers as reusing the previous layer's indexer (no indexer or indexer cache of their own), which vramfit does not model yet");
}

/// Nemotron-H's headers (`nemotron_h/nemotronh_gguf.py`'s files, cut at
/// their data): a layer without key/value heads and without an MLP
/// (`feed_forward_length` 0 in the per-layer lists) is Mamba-2, one with an
/// MLP an MLP alone (or the experts alone, `nemotron_h_moe`), the rest
/// attention (`src/models/nemotron-h.cpp`); `attention.key_length` the
/// head width. llama-server loaded both whole
/// (`scripts/measure/families/nemotron_h/raw/`).
#[test]
fn a_nemotron_h_header_has_its_kinds_of_layer() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-nemotronh.header.gguf")).expect("a header");
    let want = Architecture {
        family: Family::NemotronH,
        hidden: 512,
        layers: 10,
        heads: 8,
        kv_heads: 2,
        head_dim: 128,
        ffn: 1024,
        vocab: 1024,
        tied: false,
        positions: 1 << 20,
        linear_layers: 4,
        ffn_layers: 4,
        linear_k_heads: 4,
        linear_v_heads: 16,
        linear_k_dim: 32,
        linear_v_dim: 48,
        linear_conv: 4,
        ..Architecture::BLANK
    };
    assert_eq!(architecture_of(&h), Ok(want));
    let h = read_gguf(&fixture_bytes("gguf/tiny-nemotronh-moe.header.gguf")).expect("a header");
    assert_eq!(
        architecture_of(&h),
        Ok(Architecture {
            ffn: 256,
            linear_v_dim: 64,
            experts: 16,
            experts_per_token: 4,
            moe_ffn: 256,
            shared_experts: 2,
            ..want
        })
    );
}

/// A header with the keys `convert_hf_to_gguf.py` writes for `a`
/// (`TextModel.set_gguf_parameters` and the family's own), no tensors.
fn converted_header(a: &Architecture) -> Vec<u8> {
    let arch = vramfit_core::model::gguf::gguf_architecture(a);
    let mut keys: Vec<(String, u32)> = vec![
        ("block_count".into(), a.layers),
        ("context_length".into(), a.positions),
        ("embedding_length".into(), a.hidden),
        ("feed_forward_length".into(), a.ffn),
        ("attention.head_count".into(), a.heads),
        ("attention.head_count_kv".into(), a.kv_heads),
        ("attention.key_length".into(), a.head_dim),
        ("vocab_size".into(), a.vocab),
    ];
    if a.experts > 0 {
        keys.push(("expert_count".into(), a.experts));
        keys.push(("expert_used_count".into(), a.experts_per_token));
        keys.push(("expert_feed_forward_length".into(), a.moe_ffn));
    }
    if a.sliding_window > 0 {
        keys.push(("attention.sliding_window".into(), a.sliding_window));
    }
    let mut owned: Vec<(String, u32, Vec<u8>)> = keys
        .into_iter()
        .map(|(k, v)| (format!("{arch}.{k}"), 4, v.to_le_bytes().to_vec()))
        .collect();
    let mut name = (arch.len() as u64).to_le_bytes().to_vec();
    name.extend(arch.as_bytes());
    owned.push(("general.architecture".into(), 8, name));
    let kvs: Vec<(&str, u32, &[u8])> = owned
        .iter()
        .map(|(k, t, v)| (k.as_str(), *t, v.as_slice()))
        .collect();
    gguf_bytes(0, &kvs)
}

#[test]
fn converted_headers_give_back_the_model() {
    // A dense, a GQA, a Gemma 2 (sliding every other layer), a Mixtral
    // (llama with 8 experts) and a Qwen3-MoE preset, through the keys the
    // converter writes, read back as the same architecture. With no
    // output tensor in a header without tensors, each reads as tied.
    for id in [
        "llama3.1-8b",
        "qwen2.5-7b",
        "gemma2-9b",
        "mixtral-8x7b",
        "qwen3-30b-a3b",
    ] {
        let a = arch(id);
        let h = read_gguf(&converted_header(&a)).expect("a header");
        let back = architecture_of(&h).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(back, Architecture { tied: true, ..a }, "{id}");
    }
}

#[test]
fn unknown_architectures_are_refused_by_name() {
    let mut name = 6u64.to_le_bytes().to_vec();
    name.extend(b"falcon");
    let h = read_gguf(&gguf_bytes(0, &[("general.architecture", 8, &name)])).expect("header");
    assert_eq!(
        architecture_of(&h),
        Err(GgufArchError::UnknownArchitecture("falcon".into()))
    );
    let empty = read_gguf(&gguf_bytes(0, &[])).expect("header");
    assert_eq!(architecture_of(&empty), Err(GgufArchError::NoArchitecture));
}

/// Issue 30: a GLM-4.5 (`glm4moe`) header, as llama.cpp b10488's converter
/// writes one: `block_count` counts the MTP block (2 layers + 1 NextN),
/// `rope.dimension_count` is the rotary part, no `attn_q_norm` (GLM-4.5-Air's
/// layout). The header of a file llama.cpp loads (made by
/// `scripts/measure/families/glm4moe_gguf.py` with SMALL=1, cut at its data;
/// the whole file's llama-server log shows 3 cached layers:
/// `scripts/measure/families/raw/glm4moe-small-c4096.log`).
#[test]
fn a_glm4moe_header_has_its_layers_without_the_mtp_block() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-glm4moe.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    let want = Architecture {
        family: Family::Glm4Moe,
        hidden: 64,
        layers: 2,
        heads: 2,
        kv_heads: 1,
        head_dim: 32,
        ffn: 128,
        vocab: 300,
        tied: false,
        positions: 8192,
        experts: 4,
        experts_per_token: 2,
        moe_ffn: 64,
        shared_experts: 1,
        dense_layers: 1,
        rope_dim: 16,
        ..Architecture::BLANK
    };
    assert_eq!(a, want);
}

/// Issue 30: a Llama 4 (`llama4`) header as llama.cpp b10488's gguf-py
/// writes one (`scripts/measure/families/llama4_gguf.py`, cut at its data):
/// no key names the shared expert or the window, which llama.cpp's loader
/// implies (`src/models/llama4.cpp`: one `ffn_*_shexp` of `n_ff_exp` per
/// MoE layer; `n_swa` 8192, chunked, on all but every 4th layer). The
/// whole file's llama-server log: `raw/llama4-c16384-np1.log` in
/// `scripts/measure/families/` ("n_swa = 8192", 6 SWA and 2 full layers).
#[test]
fn a_llama4_header_has_its_shared_experts_and_chunks() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-llama4.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    let want = Architecture {
        family: Family::Llama4Text,
        hidden: 512,
        layers: 8,
        heads: 8,
        kv_heads: 2,
        head_dim: 64,
        ffn: 1024,
        vocab: 1024,
        tied: false,
        positions: 65536,
        experts: 8,
        experts_per_token: 1,
        moe_ffn: 512,
        shared_experts: 1,
        sliding_window: 8192,
        sliding_layers: 6,
        ..Architecture::BLANK
    };
    assert_eq!(a, want);
    // Maverick's interleaving: `interleave_moe_layer_step` 2 in the header.
    let h = read_gguf(&fixture_bytes("gguf/tiny-llama4-step2.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    assert_eq!(
        a,
        Architecture {
            moe_step: 2,
            ..want
        }
    );
}

/// LFM2's header (`lfm2_gguf.py`'s file, cut at its data): the layers
/// whose `attention.head_count_kv` entry is 0 are the short convolutions
/// (`src/llama-model.cpp` fills `recurrent_layer_arr` from them), the
/// widest entry is the attention layers' key/value heads, and
/// `shortconv.l_cache` their kernel; no `output.weight`: tied. llama-server
/// loaded the whole file (`scripts/measure/families/raw/lfm2-*.log`).
#[test]
fn an_lfm2_header_has_its_convolution_layers() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-lfm2.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    let want = Architecture {
        family: Family::Lfm2,
        hidden: 512,
        layers: 8,
        heads: 8,
        kv_heads: 2,
        head_dim: 64,
        ffn: 1024,
        vocab: 1024,
        tied: true,
        positions: 65536,
        linear_layers: 6,
        linear_conv: 3,
        ..Architecture::BLANK
    };
    assert_eq!(a, want);
    // LFM2-MoE (`lfm2moe_gguf.py`): the experts' keys too, the first 2
    // layers dense (`leading_dense_block_count`).
    let h = read_gguf(&fixture_bytes("gguf/tiny-lfm2moe.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    assert_eq!(
        a,
        Architecture {
            family: Family::Lfm2Moe,
            positions: 128_000,
            experts: 8,
            experts_per_token: 2,
            moe_ffn: 256,
            dense_layers: 2,
            ..want
        }
    );
}

/// Granite 4.0-H's header (`granitehybrid_gguf.py`'s files, cut at their
/// data): the layers whose `attention.head_count_kv` entry is 0 are Mamba-2
/// layers (`src/models/granite-hybrid.cpp`), their numbers the `ssm.*`
/// keys (`time_step_rank` the heads, `inner_size` their widths together);
/// the MoE file's shared MLP a width (`expert_shared_feed_forward_length`
/// 256, two experts of 128). llama-server loaded both whole
/// (`scripts/measure/families/raw/granitehybrid-*.log`).
#[test]
fn a_granite_hybrid_header_has_its_mamba_layers() {
    let h = read_gguf(&fixture_bytes("gguf/tiny-granitehybrid.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    let want = Architecture {
        family: Family::GraniteMoeHybrid,
        hidden: 256,
        layers: 6,
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
        ffn: 512,
        vocab: 1024,
        tied: true,
        positions: 1 << 20,
        linear_layers: 4,
        linear_k_heads: 2,
        linear_v_heads: 8,
        linear_k_dim: 16,
        linear_v_dim: 64,
        linear_conv: 4,
        ..Architecture::BLANK
    };
    assert_eq!(a, want);
    let h = read_gguf(&fixture_bytes("gguf/tiny-granitehybrid-moe.header.gguf")).expect("a header");
    let a = architecture_of(&h).expect("an architecture");
    assert_eq!(
        a,
        Architecture {
            ffn: 128,
            experts: 8,
            experts_per_token: 2,
            moe_ffn: 128,
            shared_experts: 2,
            ..want
        }
    );
}

/// llama.cpp b10488 requires `llama4.interleave_moe_layer_step`
/// (`src/models/llama4.cpp`: `ml.get_key`, which throws "key not found in
/// model") and gives a layer experts where `step > 0 && (i + 1) % step ==
/// 0`: a header without it is refused as llama.cpp refuses it, and one with
/// 0 (no layer has experts) is refused by name, not read as experts on
/// every layer.
#[test]
fn a_llama4_header_needs_its_interleaving_step() {
    let bytes = fixture_bytes("gguf/tiny-llama4.header.gguf");
    let h = read_gguf(&bytes).expect("a header");
    let key = "llama4.interleave_moe_layer_step";
    let step = h
        .metadata
        .iter()
        .find(|m| m.key == key)
        .map(|m| m.value.clone());
    assert_eq!(step, Some(MetaValue::U32(1)), "the measured file writes 1");
    let with = |v: Option<MetaValue>| {
        let mut h: GgufHeader = h.clone();
        h.metadata.retain(|m| m.key != key);
        if let Some(value) = v {
            h.metadata.push(MetaKv {
                key: key.to_string(),
                value,
            });
        }
        architecture_of(&h)
            .map(|a| a.moe_step)
            .map_err(|e| e.to_string())
    };
    assert_eq!(with(Some(MetaValue::U32(1))), Ok(0));
    assert_eq!(with(Some(MetaValue::U32(4))), Ok(4));
    insta::assert_snapshot!(with(None).unwrap_err(), @"the GGUF header has no `llama4.interleave_moe_layer_step`");
    insta::assert_snapshot!(with(Some(MetaValue::U32(0))).unwrap_err(), @"`llama4.interleave_moe_layer_step` (0) gives no layer experts, which vramfit does not model");
}

/// MLX's quantization modes (`mlx_lm.convert --q-mode`, mlx-lm d78bf58e):
/// the weights `quantize_model` leaves in each mode on shrunk Qwen3-8B,
/// Llama 3.1 8B, Qwen3-30B-A3B, Qwen3.6-35B-A3B and gpt-oss-20b configs,
/// measured with mlx-cpu 0.32.4 (`tests/fixtures/mlx_modes_rows.jsonl`,
/// `scripts/measure/mlx/modes.py`), to the byte: MXFP4 and MXFP8 in
/// groups of 32, NVFP4 in groups of 16, each group one `uint8` scale; the
/// routers' and shared experts' gates at 8 bits in groups of 64, affine,
/// whatever the mode; `affine` (4 bits, groups of 64) as `4bit`.
#[test]
fn mlx_modes_as_measured() {
    use serde_json::Value;
    use vramfit_core::infer::local::estimate::mlx_weights;
    use vramfit_core::infer::run::MlxWeights;
    fn merge(base: &mut Value, over: &Value) {
        if let (Some(b), Some(o)) = (base.as_object_mut(), over.as_object()) {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    let text = String::from_utf8(common::fixture_bytes("mlx_modes_rows.jsonl")).expect("utf-8");
    let (mut rows, mut wrong) = (0, Vec::new());
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("row");
        let name = r["config"]
            .as_str()
            .expect("config")
            .trim_end_matches(".json");
        let mut config: Value =
            serde_json::from_str(&common::hf_fixture(name)).expect("config json");
        merge(&mut config, &r["override"]);
        // A shrunk hybrid's layers follow its interval (mlx-lm builds them
        // from `full_attention_interval`), not the published list.
        if let Some(text) = config.get_mut("text_config").and_then(Value::as_object_mut) {
            text.remove("layer_types");
        }
        let a = vramfit_core::model::hf_config::read(&config.to_string())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .arch;
        let weights = match r["mode"].as_str().expect("mode") {
            "affine" => MlxWeights::Q4,
            mode => MlxWeights::from_key(mode).expect("a mode vramfit reads"),
        };
        let (got, want) = (
            mlx_weights(&a, weights.quant(), 64, 2),
            u128::from(r["weights_bytes"].as_u64().expect("bytes")),
        );
        if got != want {
            wrong.push(format!("{name} {weights:?}: {got} for {want}"));
        }
        rows += 1;
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(rows, 20);
}
