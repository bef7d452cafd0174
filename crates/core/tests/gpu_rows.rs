//! The estimate against `max_memory_allocated` measured on a GPU: the
//! training runs of `scripts/measure/device/` (an H200, torch
//! 2.11.0+cu130, transformers 5.17, random weights, two iterations), each
//! with plain and with expandable segments.
//!
//! vramfit models transformers 5 on torch 2.15; every run agrees within
//! 0.05% but one. In that one, smollm2-135m in fp32, torch 2.11 ran SDPA's
//! math kernel for grouped-query heads (the row's `sdpa_backends`: `MATH`,
//! `enable_gqa` true). It kept each layer's (batch, heads, seq, seq)
//! scores. torch 2.15's memory-efficient kernel takes grouped heads on
//! NVIDIA GPUs (its `scaled_dot_product_attention` docstring), which
//! vramfit models, so the run is 23% above the estimate. That is the
//! difference between the two releases, and the test holds it to that.

use serde_json::Value;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::Estimates;

const ROWS: &str = include_str!("../../../scripts/measure/device/raw/train.jsonl");

/// The row's configuration as a query string.
fn query(r: &Value) -> String {
    let s = |k: &str| {
        r[k].as_str()
            .unwrap_or_else(|| panic!("{k}: {r}"))
            .to_string()
    };
    let mut q = format!(
        "model={}&dtype={}&optim={}&batch={}&seq={}&attn={}&gpu=h200-141",
        s("model"),
        s("dtype"),
        s("optim"),
        r["batch"],
        r["seq"],
        s("attn"),
    );
    if r["grad_ckpt"] == true {
        q.push_str("&grad_ckpt=true");
    }
    if r["lora"] == true {
        q.push_str(&format!("&lora_r={}&lora_targets=all-linear", r["lora_r"]));
    }
    if r["alloc_conf"] == "expandable_segments:True" {
        q.push_str("&expandable_segments=true");
    }
    q
}

#[test]
fn the_allocated_peak_is_the_gpus() {
    let mut checked = 0;
    for line in ROWS.lines() {
        let r: Value = serde_json::from_str(line).expect("json");
        let q = query(&r);
        let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        let e = Estimates::primary_of(&s).unwrap_or_else(|e| panic!("{q}: {e:?}"));
        let ours = e.peak_allocated_bytes.get();
        let gpu = r["measured"]["peak_overall"].as_u64().expect("peak");
        let bp = (i128::from(ours) - i128::from(gpu)) * 10_000 / i128::from(gpu);
        let math = r["sdpa_backends"][0]["backend"] == "MATH";
        println!(
            "{q:110} {bp:+6} bp{}",
            if math { " (math kernel)" } else { "" }
        );
        if math {
            assert!((-2_400..=-2_200).contains(&bp), "{q}: {bp} bp");
        } else {
            assert!(bp.abs() <= 5, "{q}: {bp} bp");
        }
        checked += 1;
    }
    assert_eq!(checked, 20);
}

/// `generate` on the same H200 (`generate_cuda.py`: the Llama-2-13B shape,
/// bf16, SDPA, 512 + 512 tokens, batch 1, 4 and 16), against the
/// `llama2-13b` preset on that GPU: the weights, the cache grown by
/// `torch.cat`, the step's transients and cuBLAS's 32 MiB workspace (the
/// 32 MiB a later batch of the same process found already allocated).
/// With expandable segments the allocator hands out what is asked
/// (rounded to 512 bytes): within 0.01%. With plain segments it also
/// counts the whole blocks it keeps when 1 MiB or less would be left
/// (each 13824 × 5120 MLP weight is 1 MiB short of its segment: 120 MiB,
/// `WeightBlocks`): within 0.03%, the rest being blocks of the cache and
/// the transients that the order of reuse decides.
#[test]
fn generates_allocated_peak_is_the_gpus() {
    let files = [
        include_str!("../../../scripts/measure/device/raw/generate.jsonl"),
        include_str!("../../../scripts/measure/device/raw/generate16.jsonl"),
        include_str!("../../../scripts/measure/device/raw/generate_addr.jsonl"),
    ];
    let mut checked = 0;
    for line in files.iter().flat_map(|f| f.lines()) {
        let r: Value = serde_json::from_str(line).expect("json");
        if r["status"] != "ok" {
            continue;
        }
        let expandable = r["alloc_conf"] == "expandable_segments:True";
        let q = format!(
            "task=infer&engine=transformers&model=llama2-13b&batch={}&prompt={}&new={}&gpu=h200-141{}",
            r["batch"],
            r["prompt"],
            r["new"],
            if expandable { "&expandable_segments=true" } else { "" }
        );
        let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
        let e = Estimates::primary_of(&s).unwrap_or_else(|e| panic!("{q}: {e:?}"));
        let ours = e.peak_allocated_bytes.get();
        let gpu = r["peak_allocated"].as_u64().expect("peak");
        let bp = (i128::from(ours) - i128::from(gpu)) * 10_000 / i128::from(gpu);
        println!("{q:120} {bp:+5} bp");
        let within = if expandable { 1 } else { 3 };
        assert!(bp.abs() <= within, "{q}: {bp} bp");
        checked += 1;
    }
    assert_eq!(checked, 7);
}
