//! The URL codec: round trips, lenient decoding with notices, and the exact
//! words of every message (snapshots).

mod common;

use proptest::prelude::*;
use vramfit_core::query::{
    decode, decode_strict, encode, parse_count, FieldError, Key, RawQuery, FIELDS,
};
use vramfit_core::scenario::ModelSpec;
use vramfit_core::train::run::Dtype;
use vramfit_core::train::run::Shard;
use vramfit_core::Scenario;

/// Counts in 0..=u64::MAX, or 1..=65536 with `small`.
fn check_count(input: &str, suffixes: bool, expected: Result<u64, FieldError>) {
    assert_eq!(
        parse_count(input, suffixes, 0, u64::MAX),
        expected,
        "{input:?}"
    );
}

fn check_small(input: &str, expected: Result<u64, FieldError>) {
    assert_eq!(parse_count(input, false, 1, 65_536), expected, "{input:?}");
}

#[test]
fn counts() {
    use FieldError::*;
    check_count("2048", false, Ok(2048));
    check_count(" 8 ", false, Ok(8));
    check_count("1.5e9", true, Ok(1_500_000_000));
    check_count("1.5B", true, Ok(1_500_000_000));
    check_count("124M", true, Ok(124_000_000));
    check_count("7b", true, Ok(7_000_000_000));
    check_count("2T", true, Ok(2_000_000_000_000));
    check_count("4k", true, Ok(4_000));
    check_count("4k", false, Err(NotANumber));
    check_count("18446744073709551615", false, Ok(u64::MAX));
    check_count(
        "18446744073709551616",
        false,
        Err(TooLarge {
            max: u64::MAX.to_string(),
        }),
    );
    check_count(
        "1e30",
        true,
        Err(TooLarge {
            max: u64::MAX.to_string(),
        }),
    );
    check_count("1.5", false, Err(NotWhole));
    check_count("-3", false, Err(TooSmall { min: "0".into() }));
    check_count("", false, Err(Empty));
    check_count("inf", false, Err(NotANumber));
    check_count("NaN", false, Err(NotANumber));
    check_count("0x10", false, Err(NotANumber));
    check_count("e", false, Err(NotANumber));
    check_count(&"9".repeat(100), false, Err(TooLong));
    // Issue 9, finding 7: a sign, decimals or an exponent on a plain count
    // used to pass silently (`-0` as 0, `+8` as 8, `2.048e3` as 2048).
    check_count("-0", false, Err(Signed));
    check_count("+8", false, Err(Signed));
    check_count("+8", true, Err(Signed));
    check_count("-0", true, Err(Signed));
    check_count("2.048e3", false, Err(DigitsOnly));
    check_count("1e30", false, Err(DigitsOnly));
    check_count("2.048e3", true, Ok(2048));
    let (min, max) = (
        || TooSmall { min: "1".into() },
        || TooLarge {
            max: "65536".into(),
        },
    );
    check_small("0", Err(min()));
    check_small("-1", Err(min()));
    check_small("-0.5", Err(min()));
    check_small("65536", Ok(65_536));
    check_small("65537", Err(max()));
    check_small("1e5", Err(DigitsOnly));
    // Read exactly (no f64): far past f64's range is still a number.
    check_small("1e400", Err(DigitsOnly));
    check_small("1e-400", Err(NotWhole));
    check_small("0e999999999999", Err(DigitsOnly));
    check_small("e5", Err(NotANumber));
    check_small(".", Err(NotANumber));
    check_small("1e", Err(NotANumber));
    check_small("inf", Err(NotANumber));
    check_small("0x10", Err(NotANumber));
    check_small("1.5", Err(NotWhole));
    check_small("1.50e1", Err(DigitsOnly));
    // Counts typed with decimals and suffixes are exact past 2^53.
    check_count("1.5e9", true, Ok(1_500_000_000));
    check_count("1.5B", true, Ok(1_500_000_000));
    check_count("0.5k", true, Ok(500));
    check_count("12345678.9012345678901M", true, Err(NotWhole));
    check_count("9007199254740993e0", true, Ok(9_007_199_254_740_993));
    check_count("18446744073709551615e0", true, Ok(u64::MAX));
    check_count(
        "18446744073709551616e0",
        true,
        Err(TooLarge {
            max: u64::MAX.to_string(),
        }),
    );
    check_count("1e-400", true, Err(NotWhole));
    check_count(
        "1e400",
        true,
        Err(TooLarge {
            max: u64::MAX.to_string(),
        }),
    );
    check_count("1.0e-0", true, Ok(1));
    check_count("-0.0", true, Err(Signed));
}

#[test]
fn the_readme_query_decodes_without_notices() {
    let raw = RawQuery::parse("params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048");
    let s = decode_strict(&raw).expect("valid");
    assert_eq!(s.params(), 1_500_000_000);
    assert!(matches!(s.model, ModelSpec::ParamsOnly { .. }));
    assert_eq!(s.train.dtype, Dtype::Bf16);
    assert_eq!(
        encode(&s).to_query_string(),
        "params=1500000000&dtype=bf16&optim=adamw&batch=8&seq=2048&grad_accum=1&grad_ckpt=false\
         &attn=sdpa&lora_r=0&gpus=1&zero=0"
    );
}

#[test]
fn empty_query_is_the_default_scenario() {
    let d = decode(&RawQuery::parse(""));
    assert_eq!(d.scenario, Scenario::default());
    assert!(d.notices.is_empty());
}

#[test]
fn percent_encoding_round_trips() {
    let mut raw = RawQuery::default();
    raw.set("note", "a b&c=d%é<script>");
    let back = RawQuery::parse(&raw.to_query_string());
    assert_eq!(back.get("note"), Some("a b&c=d%é<script>"));
    assert_eq!(RawQuery::parse("?a=%zz&b=1+2").get("a"), Some("%zz"));
    assert_eq!(RawQuery::parse("?a=%zz&b=1+2").get("b"), Some("1 2"));
    // (value as written, as decoded): plain text is copied; bytes that are
    // not UTF-8 become U+FFFD; an escape cut short is kept.
    let cases: [(&str, &str); 6] = [
        ("llama3.1-8b", "llama3.1-8b"),
        ("a%20b", "a b"),
        ("%E2%82%AC", "\u{20ac}"),
        ("%FF", "\u{fffd}"),
        ("x%2", "x%2"),
        ("", ""),
    ];
    for (written, decoded) in cases {
        let raw = RawQuery::parse(&format!("k={written}"));
        assert_eq!(raw.get("k"), Some(decoded), "{written}");
    }
}

#[test]
fn set_replaces_every_repeat_in_place() {
    let mut raw = RawQuery::parse("batch=1&seq=2&batch=3");
    raw.set("batch", "9");
    assert_eq!(raw.to_query_string(), "batch=9&seq=2");
}

/// Every message a bad query can produce, word for word.
#[test]
fn notice_messages() {
    let cases = [
        "batch=abc",
        "batch=0",
        "batch=1e9",
        "batch=2.5",
        "batch=",
        "seq=-1",
        "params=12",
        "params=inf",
        "dtype=fp8",
        "optim=ADAMW",
        "optim=lamb",
        "colour=blue",
        "batch=2&batch=4",
        "seq=<script>alert(1)</script>",
        "dtype=%00%01",
        "model=nope",
        "model=llama3.1-8b&heads=7",
        "model=llama3.1-8b&hidden=4000",
        "model=gpt2-124m&kv_heads=4",
        "model=gpt2-124m&positions=0",
        "params=7B&model=llama3.1-8b",
        "layers=0",
        "grad_ckpt=maybe",
        "dropout=1.5",
        "dropout=0.12345",
        "zero=4",
        "lora_r=-1",
        // Issue 9, finding 7: nothing is cut, dropped or ignored silently.
        "batch=%2B8",
        "lora_r=-0",
        "seq=2.048e3",
        "gpu=probe&probe_bytes=1000&probe_adapter=%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9%C3%A9",
        "gpu=probe&probe_bytes=1000&probe_adapter=GPU%07x",
        "gpu=h100-sxm-80&capacity_gib=12&probe_bytes=1000&probe_adapter=x",
        "gpu=probe&probe_bytes=1000&capacity_gib=12",
        "capacity_gib=12&probe_bytes=1000",
        // Issue 10: a Hub id is `owner/name` as the Hub writes it, and an
        // id alone (no config read yet) says so.
        "hub=Qwen/Qwen3-8B",
        // Issue 31: several GPUs under llama.cpp.
        "task=infer&engine=llamacpp&tensor_split=3,x",
        "task=infer&engine=llamacpp&tensor_split=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
        "task=infer&engine=llamacpp&split_mode=row",
        "task=infer&engine=llamacpp&main_gpu=1",
        "task=infer&engine=llamacpp&split_mode=none&tensor_split=1,1&main_gpu=2",
        "task=infer&engine=vllm&tensor_split=1,1",
        "task=infer&engine=llamacpp&build=b4000",
        "task=infer&engine=llamacpp&build=latest",
        "task=infer&engine=llamacpp&build=b6000&n_cpu_moe=4",
        "task=infer&engine=llamacpp&build=b5000&kv_unified=true&swa_full=true",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=exps%3DCUDA0",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=(%3F!exps)%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=exps",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=attn%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=blk%5C.0%5C.ffn_up_exps%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=blk%5C.(0%7C2)%5C.ffn_.*_exps%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&n_cpu_moe=2&override_tensor=blk%5C.4%5C.ffn_.*_exps%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=output%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&override_tensor=(.%7C.)*z%3DCPU",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&build=b5000&override_tensor=exps%3DCPU",
        "hub=Qwen3-8B",
        "hub=-Qwen/Qwen3-8B",
        "hub=Qwen/Qwen3--8B",
        "hub=Qwen/Qwen3/8B",
        "hub=Qwen/Qwen3%208B",
        "params=1B&hub=Qwen/Qwen3-8B",
        // Issue 11: LoRA targets are modules the family has, whole; LoRA's
        // keys without adapters are said to be unused.
        "model=phi3-mini&lora_r=8&lora_targets=q,v",
        "model=phi3-mini&lora_r=8&lora_targets=q_proj",
        "model=gpt2-124m&lora_r=8&lora_targets=gate",
        "model=llama3.2-1b&lora_r=8&lora_targets=c_attn",
        "model=deepseek-v2-lite&lora_r=8&lora_targets=k",
        "model=llama3.2-1b&lora_r=8&lora_targets=q,x_proj",
        "model=llama3.2-1b&lora_targets=q,v&lora_dropout=0.05",
        // An adapter on the output layer: an engine's, not training's, and
        // not a tied output layer's.
        "model=llama3.1-8b&lora_r=8&lora_targets=all,lm_head",
        "task=infer&engine=llamacpp&model=qwen2.5-1.5b&lora_r=8&lora_targets=all,lm_head",
        // Issue 10: the load-balancing loss needs a router, and a family
        // whose transformers model computes it.
        "model=llama3.2-1b&aux_loss=true",
        "model=deepseek-v2-lite&aux_loss=true",
        // Issue 11: quantized bases train through LoRA; DoRA over one is
        // not estimated; offloading is ZeRO's.
        "model=llama3.1-8b&quant=nf4",
        "model=llama3.1-8b&lora_r=16&quant=nf4&dora=true",
        "model=llama3.1-8b&lora_r=16&quant=int8&double_quant=true",
        "model=llama3.1-8b&kbit_prep=false",
        "model=llama3.1-8b&dora=true",
        "model=llama3.1-8b&offload=optimizer",
        "model=llama3.1-8b&gpus=4&offload=optimizer",
        "model=llama3.1-8b&zero=2&offload=params",
        "model=llama3.1-8b&zero=2&offload=optimizer&optim=adamw8bit",
        "quant=nf8",
        "grad_ckpt=offloaded",
        "model=llama3.1-8b&lora_r=16&quant=int8&bnb_compute=fp32",
        // Issue 16: a family transformers 4.48 does not have.
        "model=qwen3-30b-a3b&transformers=4.48",
        "model=gemma3-1b&lora_r=16&transformers=4.48",
        "model=mixtral-8x7b&lora_r=16&lora_targets=w1,w3&transformers=5",
        "model=llama3.1-8b&lora_r=16&lora_targets=w1",
        "model=mistral-7b&gpus=2&zero=3&shard=fsdp2&transformers=4.48",
        "model=mistral-7b&gpus=2&zero=2&shard=fsdp2",
        "model=mistral-7b&gpus=2&zero=3&shard=fsdp2&backward_prefetch=false",
        // Issue 18: inference keys against the task, the engine, the
        // weights and the model.
        "prompt=512",
        "task=infer&seq=4096&optim=adamw8bit",
        "task=run",
        "task=infer&engine=tgi",
        "task=infer&engine=vllm&weights=nf4",
        "task=infer&engine=vllm&prompt=512&new=64&batch=4",
        "task=infer&kv_dtype=fp8",
        "task=infer&ctx=4096",
        "task=infer&engine=vllm&gpu_memory_utilization=1.2",
        "task=infer&engine=vllm&gpu_memory_utilization=0",
        "task=infer&engine=vllm&model=llama3.1-8b&tensor_parallel_size=3",
        "task=infer&engine=vllm&model=llama3.1-8b&ctx=200000",
        "task=infer&engine=vllm&ctx=auto&block_size=0",
        "task=infer&model=gpt2-124m&prompt=1000&new=100",
        // Issue 29: N new tokens feed prompt + N - 1 positions (2,048 here: runs).
        "task=infer&engine=transformers&model=santacoder&prompt=2040&new=9",
        "task=infer&engine=transformers&model=santacoder&prompt=2041&new=9",
        "task=infer&model=gemma2-2b&attn=sdpa",
        "task=infer&model=mixtral-8x7b&weights=gptq",
        "task=infer&weights=bf16&group_size=64&double_quant=true",
        "task=infer&weights=q4_k_m",
        // Issue 19: the local runners' keys, weights and files.
        "task=infer&engine=llamacpp&weights=nf4",
        "task=infer&engine=mlx&weights=q4_k_m",
        "task=infer&engine=ollama&weights=q9_k",
        "task=infer&engine=llamacpp&batch=4&prompt=100",
        "task=infer&engine=mlx&ctx=8192&n_gpu_layers=10",
        "task=infer&engine=llamacpp&cache_type_v=q8_0&flash_attn=off",
        "task=infer&engine=llamacpp&cache_type_k=q3_k",
        "task=infer&engine=llamacpp&n_gpu_layers=20000",
        "task=infer&engine=mlx&kv_bits=1",
        "task=infer&engine=vllm&file=model.gguf",
        "task=infer&engine=llamacpp&model=qwen3-8b&file_bytes=e1.n2.k1_0_0_2_0_0_0_2.s0r28",
        "task=infer&engine=llamacpp&file_bytes=e1.n2.k1_2.s0",
        "task=infer&engine=llamacpp&file=a%07b.gguf",
        // Issue 31: vLLM's own formats.
        "task=infer&engine=vllm&model=llama3.1-8b&weights=mxfp4",
        "task=infer&engine=transformers&model=llama3.1-8b&weights=w8a8",
        "task=infer&engine=vllm&model=qwen3-30b-a3b&weights=fp8_dynamic",
        // fp8 experts: vLLM's (no notice), not transformers'.
        "task=infer&engine=vllm&model=qwen3-30b-a3b&weights=fp8",
        "task=infer&engine=transformers&model=qwen3-30b-a3b&weights=fp8",
        "task=infer&engine=vllm&model=gpt-oss-20b&weights=mxfp4",
        "task=infer&engine=vllm&model=gpt-oss-20b&weights=mxfp4&pipeline_parallel_size=2",
        "task=infer&engine=vllm&model=llama3.1-8b&pipeline_parallel_size=40",
        "task=infer&engine=vllm&model=llama3.1-8b&enable_expert_parallel=true",
        "task=infer&engine=vllm&model=llama3.1-8b&num_speculative_tokens=2",
        "task=infer&engine=mlx&model=qwen3-8b&weights=mxfp4&q_group_size=128",
        "task=infer&engine=vllm&model=qwen3.6-27b&num_speculative_tokens=2&pipeline_parallel_size=2",
        "task=infer&engine=vllm&cpu_offload_gb=-1&data_parallel_size=0",
        "task=infer&engine=llamacpp&pipeline_parallel_size=2&cpu_offload_gb=4",
        // Issue 32: tensor parallelism, refused in transformers' words or as
        // not measured.
        "model=llama3.1-8b&gpus=6&tp=4",
        "model=llama3.1-8b&gpus=8&tp=2",
        "model=llama3.1-8b&gpus=8&tp=2&shard=fsdp1&zero=3",
        "model=llama3.1-8b&gpus=3&tp=3",
        "model=llama3.1-8b&gpus=16&tp=16",
        "model=llama3.2-1b&gpus=2&tp=2",
        "model=gpt2-124m&gpus=2&tp=2",
        "model=olmo2-7b&gpus=2&tp=2",
        "model=phi3-mini&gpus=2&tp=2",
        "model=deepseek-v2-lite&gpus=2&tp=2",
        "model=mixtral-8x7b&gpus=2&tp=2",
        "model=qwen2.5-7b&gpus=2&tp=2",
        "model=qwen3.6-27b&gpus=2&tp=2",
        "model=qwen1.5-moe-a2.7b&gpus=4&tp=2&shard=fsdp2&zero=3",
        "model=llama3.1-8b&gpus=2&tp=2&lora_r=16",
        "model=llama3.1-8b&gpus=2&tp=2&transformers=4.57",
        "params=8e9&gpus=2&tp=2",
        "task=infer&model=llama3.1-8b&tp=2",
        // Issue 32: pipeline parallelism, refused where it was not measured.
        "model=llama3.1-8b&batch=6&micro_batches=4",
        "model=llama3.1-8b&gpus=4&pp=2",
        "model=llama3.1-8b&gpus=2&pp=2&tp=2",
        "model=llama3.1-8b&gpus=64&pp=64",
        "model=llama3.2-1b&gpus=2&pp=2",
        "model=gpt2-124m&gpus=2&pp=2",
        "model=qwen3.6-27b&gpus=3&pp=3",
        "model=mixtral-8x7b&gpus=2&pp=2",
        "model=mixtral-8x7b&gpus=2&pp=2&aux_loss=true",
        "model=deepseek-v2-lite&gpus=2&pp=2",
        "model=gemma3-1b&gpus=2&pp=2",
        "model=llama3.1-8b&gpus=2&pp=2&lora_r=16",
        "model=llama3.1-8b&gpus=2&pp=2&grad_accum=4",
        "model=llama3.1-8b&gpus=2&pp=2&transformers=4.57",
        "params=8e9&gpus=2&pp=2",
        // Interleaved 1F1B: vpp and the schedule together, torch's rounds.
        "model=llama3.1-8b&gpus=2&pp=2&vpp=2",
        "model=llama3.1-8b&gpus=2&pp=2&pp_schedule=interleaved_1f1b",
        "model=llama3.1-8b&gpus=4&pp=4&vpp=2&pp_schedule=interleaved_1f1b&batch=9&micro_batches=9",
        "model=llama3.1-8b&gpus=4&pp=4&vpp=16&pp_schedule=interleaved_1f1b",
    ];
    let mut out = String::new();
    for q in cases {
        let d = decode(&RawQuery::parse(q));
        out.push_str(&format!("{q}\n"));
        for n in &d.notices {
            out.push_str(&format!(
                "  [{}] {n}; {}\n",
                n.key().unwrap_or("-"),
                n.consequence()
            ));
        }
    }
    let many: String = (0..70).map(|i| format!("k{i}=1&")).collect();
    for n in decode(&RawQuery::parse(&many))
        .notices
        .iter()
        .filter(|n| n.key().is_none())
    {
        out.push_str(&format!("70 pairs\n  {n}; {}\n", n.consequence()));
    }
    insta::assert_snapshot!(out);
}

/// Issue 9, finding 7: a 64-character adapter name of two-byte characters
/// is kept whole (it was cut to 32 characters).
#[test]
fn a_long_probe_adapter_name_is_kept_whole() {
    let name = "é".repeat(64);
    let mut raw = RawQuery::parse("gpu=probe&probe_bytes=1000");
    raw.set("probe_adapter", &name);
    let s = decode_strict(&raw).expect("valid");
    assert_eq!(
        s.view.capacity,
        vramfit_core::inputs::Capacity::Probed {
            bytes: vramfit_core::Bytes(1000),
            adapter: vramfit_core::text::ShortText::new(&name).expect("64 characters"),
        }
    );
    assert_eq!(encode(&s).get("probe_adapter"), Some(name.as_str()));
}

#[test]
fn bad_values_keep_the_rest() {
    let d = decode(&RawQuery::parse("batch=abc&seq=4096&dtype=fp32"));
    assert_eq!(d.scenario.train.batch, Scenario::default().train.batch);
    assert_eq!(d.scenario.train.seq.get(), 4096);
    assert_eq!(d.scenario.train.dtype, Dtype::Fp32);
    assert_eq!(d.notices.len(), 1);
}

#[test]
fn every_field_validates_its_default() {
    let s = Scenario::default();
    for f in FIELDS {
        let shown = f.shown_value(&s);
        if shown.is_empty() {
            continue; // model (none), dropout (the model's), probe fields
        }
        assert_eq!(f.validate(&shown), Ok(()), "{}", f.key);
    }
}

proptest! {
    #[test]
    fn url_round_trip(q in common::queries()) {
        let s = common::scenario(&q);
        let again = encode(&s).to_query_string();
        prop_assert_eq!(decode_strict(&RawQuery::parse(&again)), Ok(s));
    }

    #[test]
    fn any_query_decodes_without_panicking(q in ".{0,200}") {
        let d = decode(&RawQuery::parse(&q));
        // Whatever came in, the scenario re-encodes to a clean query.
        let again = decode(&RawQuery::parse(&encode(&d.scenario).to_query_string()));
        prop_assert!(again.notices.is_empty());
        prop_assert_eq!(again.scenario, d.scenario);
    }

    #[test]
    fn any_value_of_any_field_is_accepted_or_explained(v in "\\PC{0,40}", i in 0..FIELDS.len()) {
        let f = &FIELDS[i];
        if let Err(e) = f.validate(&v) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

/// The notes a query decodes with, each as `key: message`.
fn notes(q: &str) -> Vec<String> {
    decode(&RawQuery::parse(q))
        .notes
        .iter()
        .map(|n| format!("{}: {n}", n.key().text()))
        .collect()
}

/// Issue 31: a multimodal checkpoint's estimate says it is the language
/// model's on text only, next to `multimodal`, for training and every
/// engine; a parameter count alone has no model to say it of.
#[test]
fn a_multimodal_checkpoint_is_estimated_text_only() {
    let said = [
        "multimodal: text only: the checkpoint's vision or audio encoder is not \
                 estimated (its weights, its activations, and under vLLM the encoder's \
                 profiling run and encoder cache); the language model is, on text prompts",
    ];
    for q in [
        "model=llama3.1-8b&multimodal=true",
        "task=infer&engine=vllm&model=llama3.1-8b&multimodal=true",
        "task=infer&engine=llamacpp&model=llama3.1-8b&multimodal=true",
    ] {
        assert_eq!(notes(q), said, "{q}");
    }
    assert!(notes("task=infer&engine=vllm&model=llama3.1-8b").is_empty());
    let d = decode(&RawQuery::parse("params=7B&multimodal=true"));
    assert!(d.notes.is_empty());
    assert_eq!(d.notices.len(), 1, "{:?}", d.notices);
}

/// Issue 16: DeepSpeed's ZeRO-3 holds a reduce bucket and prefetched
/// parameters that the paper's accounting (`shard=generic`) leaves out
/// (`scripts/measure/deepspeed/NOTES.md`): said next to `shard`, and only
/// where it applies.
#[test]
fn zero3_by_the_paper_says_what_deepspeed_holds_beyond_it() {
    assert_eq!(
        notes("model=llama3.1-8b&gpus=8&zero=3"),
        ["shard: ZeRO-3 is counted as the ZeRO paper does (the largest module gathered with its \
          gradient); DeepSpeed's own ZeRO-3 holds more (at its defaults a 1 GB reduce bucket, and \
          from its second step parameters gathered up to stage3_max_live_parameters): \
          shard=deepspeed models it, shard=fsdp1 or fsdp2 PyTorch's FSDP"]
    );
    for q in [
        // DeepSpeed's offload and its ZeRO-1/2 are not measured; FSDP is modelled
        "model=llama3.1-8b&gpus=8&zero=3&offload=params",
        "model=llama3.1-8b&gpus=8&zero=2",
        "model=llama3.1-8b&gpus=8&zero=3&shard=fsdp1",
        "model=llama3.1-8b&gpus=8&zero=3&shard=fsdp2",
        "task=infer&model=llama3.1-8b&gpus=8&zero=3",
        // below stage3_max_live_parameters DeepSpeed's gathered set is exact
        "model=qwen2.5-0.5b&gpus=8&zero=3&shard=deepspeed&dtype=mixed_bf16",
    ] {
        assert!(notes(q).is_empty(), "{q}");
    }
}

/// `shard=deepspeed` (issue 16): above `stage3_max_live_parameters` its
/// gathered set is an upper bound, said next to `shard`; what it was not
/// measured with is refused next to the field, and `ds_buckets` is unused
/// without it.
#[test]
fn deepspeed_says_where_it_is_a_bound_and_refuses_what_is_not_measured() {
    assert_eq!(
        notes("model=llama3.1-8b&gpus=8&zero=3&shard=deepspeed&dtype=mixed_bf16"),
        ["shard: this model has more than stage3_max_live_parameters (1e9) parameters: from its \
          second step DeepSpeed keeps gathered what its prefetcher reached, counted here as the \
          cap plus the largest parameter (an upper bound; which parameters depends on the module \
          order, not traced)"]
    );
    let ds = "model=qwen2.5-0.5b&gpus=8&shard=deepspeed";
    for (q, key, shard) in [
        ("&zero=2&dtype=mixed_bf16", Key::Shard, Shard::Generic),
        ("&zero=3&dtype=bf16", Key::Shard, Shard::Generic),
        (
            "&zero=3&dtype=mixed_bf16&offload=optimizer",
            Key::Offload,
            Shard::Deepspeed,
        ),
        (
            "&zero=3&dtype=mixed_bf16&quant=nf4&lora_r=16",
            Key::Shard,
            Shard::Generic,
        ),
    ] {
        let d = decode(&RawQuery::parse(&format!("{ds}{q}")));
        assert_eq!(d.scenario.parallel.shard, shard, "{q}");
        let keys: Vec<Option<Key>> = d.notices.iter().map(|n| n.field_key()).collect();
        assert_eq!(keys, [Some(key)], "{q}");
    }
    let d = decode(&RawQuery::parse("model=qwen2.5-0.5b&ds_buckets=auto"));
    assert_eq!(
        d.notices.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
        ["ds_buckets is not used: only DeepSpeed (shard=deepspeed) has these buckets"]
    );
}

/// Issue 9, finding 10: GPT-2's 1024 learned positions make PyTorch fail at
/// the position embedding past 1024 tokens: refused next to `seq`, using
/// 1024. A rotary model past its trained context runs: a note, nothing
/// refused.
#[test]
fn sequence_length_against_the_models_positions() {
    let d = decode(&RawQuery::parse("model=gpt2-124m&seq=4096"));
    assert_eq!(d.scenario.train.seq.get(), 1024);
    assert_eq!(d.notices.len(), 1);
    assert_eq!(
        format!("{}; {}", d.notices[0], d.notices[0].consequence()),
        "seq: `4096` does not fit: GPT-2 has 1024 learned positions: seq must be at most 1024; \
         using the default 1024"
    );
    assert!(decode_strict(&RawQuery::parse("model=gpt2-124m&seq=1024")).is_ok());

    let d = decode(&RawQuery::parse("model=llama2-7b&seq=8192"));
    assert!(d.notices.is_empty(), "{:?}", d.notices);
    assert_eq!(d.scenario.train.seq.get(), 8192);
    assert_eq!(
        d.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "seq 8192 is longer than the 4096 tokens the model was trained for: it runs with \
          rope scaling, at this sequence length's memory"
        ]
    );
    assert!(decode(&RawQuery::parse("model=llama2-7b&seq=4096"))
        .notes
        .is_empty());
}

/// A Hub id next to the keys its config.json set round-trips, with no
/// notice; the longest ids the Hub allows are kept whole.
#[test]
fn a_hub_id_rides_with_the_model_it_loaded() {
    let d = decode(&RawQuery::parse("model=qwen3-8b&hub=Qwen/Qwen3-8B"));
    assert!(d.notices.is_empty(), "{:?}", d.notices);
    assert_eq!(encode(&d.scenario).get("hub"), Some("Qwen/Qwen3-8B"));
    let long = format!("{}/{}", "o".repeat(96), "n".repeat(96));
    let d = decode(&RawQuery::parse(&format!("model=qwen3-8b&hub={long}")));
    assert!(d.notices.is_empty(), "{:?}", d.notices);
    assert_eq!(encode(&d.scenario).get("hub"), Some(long.as_str()));
    let too_long = format!("{}/{}", "o".repeat(97), "n");
    assert_eq!(
        decode(&RawQuery::parse(&format!("model=qwen3-8b&hub={too_long}")))
            .notices
            .len(),
        1
    );
}

/// A config read as Llama-like by choice carries that choice as a note.
#[test]
fn read_as_llama_is_a_note_on_llama_only() {
    let d = decode(&RawQuery::parse("model=llama3.2-1b&like_llama=olmoe"));
    assert!(d.notices.is_empty(), "{:?}", d.notices);
    assert_eq!(d.notes.len(), 1);
    assert_eq!(encode(&d.scenario).get("like_llama"), Some("olmoe"));
    let d = decode(&RawQuery::parse("model=qwen2.5-0.5b&like_llama=olmoe"));
    assert_eq!(
        d.notices
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["like_llama is not used: the family is qwen2, not llama"]
    );
}

/// A field's kind states its bounds (the fuzz campaign and the form read
/// them); they are the bounds its value is checked against.
#[test]
fn every_count_field_takes_exactly_its_stated_bounds() {
    use vramfit_core::query::FieldKind;
    for f in FIELDS {
        if let FieldKind::Count { min, max } = f.kind {
            assert_eq!(f.validate(&min.to_string()), Ok(()), "{} min", f.key);
            assert_eq!(f.validate(&max.to_string()), Ok(()), "{} max", f.key);
            assert!(
                f.validate(&(max + 1).to_string()).is_err(),
                "{} max+1",
                f.key
            );
            if min > 0 {
                assert!(
                    f.validate(&(min - 1).to_string()).is_err(),
                    "{} min-1",
                    f.key
                );
            }
        }
    }
}

/// Every architecture number is a query key (described once, in `ArchNum`).
#[test]
fn every_architecture_number_is_a_field() {
    for n in vramfit_core::model::ArchNum::ALL {
        let f = vramfit_core::query::field(n.key()).unwrap_or_else(|| panic!("{}", n.key()));
        assert_eq!(f.label, n.label());
    }
}

/// Every query key is documented in the README's key table (one source of
/// truth for keys is `FIELDS`; this keeps the documentation in step).
#[test]
fn every_key_is_in_the_readme_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let table = readme
        .split("### Query keys")
        .nth(1)
        .and_then(|rest| rest.split("### JSON fields").next())
        .expect("the query keys section");
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| `")).collect();
    for f in FIELDS {
        let key = format!("`{}`", f.key);
        assert!(
            rows.iter()
                .any(|r| r.split(" | ").next().is_some_and(|c| c.contains(&key))),
            "README's key table lacks {key}"
        );
    }
}

/// Sizes typed in the probe panel (GiB, MiB), read exactly and rounded
/// down to whole bytes.
#[test]
fn decimals_times_a_unit() {
    use vramfit_core::units::Decimal;
    let check = |t: &str, unit: u64, expected: Option<u128>| {
        let got = Decimal::parse(t).and_then(|d| d.times_floor(unit));
        assert_eq!(got, expected, "{t:?} × {unit}");
    };
    check("1.5", 1 << 30, Some(3 << 29));
    check("0.001", 1 << 30, Some(1_073_741));
    check("2e3", 1 << 20, Some(2000 << 20));
    check("1e-40", 1 << 30, Some(0));
    check("1e40", 1 << 30, None);
    check("", 1, None);
    check("1.2.3", 1, None);
    check("١", 1, None);
}

/// Issue 16: a run described by its whole stack is accepted as written
/// and comes back unchanged; `grad_ckpt=true` on transformers 4.48 is the
/// release's default, reentrant checkpointing.
#[test]
fn a_stack_query_is_accepted() {
    let q = "model=mistral-7b&transformers=4.48&trainer=trl&attn=flash_attention_2&shard=fsdp1\
             &gpus=2&zero=3&lora_r=16&lora_targets=attn&grad_ckpt=true";
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{n:?}"));
    assert_eq!(s.train.ckpt(), vramfit_core::train::run::Ckpt::Reentrant);
    let text = encode(&s).to_query_string();
    let again = decode_strict(&RawQuery::parse(&text)).expect("round trip");
    assert_eq!(again, s);
    for key in [
        "transformers=4.48",
        "trainer=trl",
        "shard=fsdp1",
        "attn=flash_attention_2",
    ] {
        assert!(text.contains(key), "{text}");
    }
}

/// The same run under FSDP2 (transformers 5, the only release it is
/// measured on) is accepted and round-trips.
#[test]
fn an_fsdp2_query_is_accepted() {
    let q = "model=mistral-7b&trainer=trl&attn=flash_attention_2&shard=fsdp2\
             &gpus=2&zero=3&lora_r=16&lora_targets=attn&grad_ckpt=true";
    let s = decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{n:?}"));
    assert_eq!(s.parallel.shard, vramfit_core::train::run::Shard::Fsdp2);
    let text = encode(&s).to_query_string();
    assert!(text.contains("shard=fsdp2"), "{text}");
    let again = decode_strict(&RawQuery::parse(&text)).expect("round trip");
    assert_eq!(again, s);
}

/// Issue 32: a pipeline's keys set without a pipeline are kept in the link
/// but not read, and said so next to them; with `pp` they are read.
#[test]
fn pipeline_keys_without_a_pipeline_are_said_unread() {
    let said = |key: &str| {
        vec![format!(
            "{key}: {key} is read only with pipeline parallelism (pp > 1)"
        )]
    };
    assert_eq!(
        notes("model=llama3.1-8b&batch=8&micro_batches=4"),
        said("micro_batches")
    );
    assert_eq!(
        notes("model=llama3.1-8b&pp_schedule=gpipe"),
        said("pp_schedule")
    );
    assert_eq!(notes("model=llama3.1-8b&vpp=2"), said("vpp"));
    assert!(
        notes("model=llama3.1-8b&batch=8&micro_batches=4&pp=2&gpus=2&pp_schedule=gpipe").is_empty()
    );
    let d = decode(&RawQuery::parse(
        "model=llama3.1-8b&batch=8&micro_batches=4",
    ));
    assert_eq!(encode(&d.scenario).get(Key::MicroBatches), Some("4"));
}
