//! Issue 33: what people have in hand, pasted, read to the query its
//! author ran, with every figure it measured beside vramfit's estimate.
//! The texts are published ones, kept under `fixtures/pastes/` (their
//! sources are in each case below and in `fixtures/README.md`), and the
//! start-up logs of `llamacpp_logs.jsonl` and `vllm_logs.jsonl`, whose
//! figures those files transcribe independently.

use serde_json::Value;
use vramfit_core::compare::{self, Holds};
use vramfit_core::paste::{self, Figure, PasteError};
use vramfit_core::query::{decode, RawQuery};
use vramfit_core::Estimates;

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).expect("fixture")
}

/// One published paste.
struct Case {
    file: &'static str,
    /// Where it was published.
    source: &'static str,
    /// The query it reads to.
    reads: &'static str,
    /// Every figure it measured, exactly as its printed numbers give them.
    measured: &'static [(&'static str, u64)],
    /// What its author ran that the paste does not say, applied on top
    /// for the comparison, and how each figure then compares.
    beside: &'static str,
    holds: &'static [(&'static str, Holds)],
}

const CASES: &[Case] = &[
    Case {
        file: "llamacpp-qwen3-0.6b-orin-b5489.log",
        source: "https://github.com/SunOfHomeBoy/blogSrc/blob/8608947a5ed4192c4e1f54e727a6361bdcb73cbe/source/_posts/%E5%B7%A5%E4%BD%9C%E5%AD%A6%E4%B9%A0%E6%97%A5%E8%AE%B0/25%E5%B9%B4/5%E6%9C%88/GPU%E8%BF%90%E8%A1%8C%E6%97%A5%E5%BF%97%E5%88%86%E6%9E%90.md (lines 1-252: the command and llama-server's log)",
        reads: "task=infer&model=qwen3-0.6b&engine=llamacpp&weights=q4_k_m&ctx=4096&n_parallel=1&n_batch=2048&n_ubatch=512&cache_type_k=f16&cache_type_v=f16&flash_attn=off&n_gpu_layers=0&build=b5489",
        // CPU_Mapped model buffer 456.11 MiB; the cache's size 448.00 MiB;
        // CUDA0's compute buffer 422.92 MiB (no layer on the GPU).
        measured: &[
            ("weights_bytes", 478_265_999),
            ("kv_cache_bytes", 469_762_048),
            ("peak_allocated_bytes", 443_463_762),
        ],
        beside: "",
        holds: &[
            ("kv_cache_bytes", Holds::WithinRounding),
            // DIFFERENCE: the file's tensors are 456.11 MiB; vramfit
            // predicts a Q4_K_M file of Qwen3-0.6B at 372.6 MiB (-18.3%),
            // by llama-quantize's rules (the estimate's caveat says the
            // bytes are predicted; `--gguf FILE` reads them exactly).
            ("weights_bytes", Holds::Differs),
            // DIFFERENCE: CUDA0's compute buffer, 422.92 MiB, against
            // vramfit's 420.47 MiB from the graph's code (-0.58%; the
            // estimate's caveat: llama.cpp reserves its graphs).
            ("peak_allocated_bytes", Holds::Differs),
        ],
    },
    Case {
        file: "pytorch-oom-23.65gib.txt",
        source: "https://github.com/pytorch/pytorch/issues/16417 (comment by WangFengtu1996, 2024-03-13)",
        reads: "gpu=custom&capacity_gib=23.65",
        // Allocated 22.90 GiB + the 22.00 MiB it tried; in use 23.60 GiB + 22.00 MiB.
        measured: &[("peak_allocated_bytes", 24_611_756_442), ("peak_total_bytes", 25_363_375_718)],
        // The comment does not say the run; a full fine-tune of Llama 3.1
        // 8B in bf16 is one that cannot fit 23.65 GiB.
        beside: "model=llama3.1-8b&dtype=bf16&batch=1&seq=512",
        holds: &[
            ("peak_allocated_bytes", Holds::AtLeastReached),
            ("peak_total_bytes", Holds::AtLeastReached),
        ],
    },
    Case {
        file: "pytorch-oom-old-format.txt",
        source: "https://github.com/pytorch/pytorch/issues/59778 (description, 2021-06-10)",
        reads: "gpu=custom&capacity_gib=6.00",
        measured: &[("peak_allocated_bytes", 3_246_213_038)],
        beside: "model=gpt2-124m&batch=1&seq=128",
        holds: &[("peak_allocated_bytes", Holds::BelowReached)],
    },
    Case {
        file: "vllm-serve-qwen2.5-3b-awq.txt",
        source: "https://github.com/vllm-project/vllm/issues/15204 (description, 2025-03-20; vLLM 0.8.1 on an RTX 3090)",
        reads: "task=infer&model=qwen2.5-3b&engine=vllm&weights=awq",
        measured: &[],
        beside: "gpu=rtx-3090",
        holds: &[],
    },
    Case {
        file: "vllm-free-memory-line.txt",
        source: "https://github.com/vllm-project/vllm/issues/50722 (turn 7 by Jim2016713, 2026-08-14)",
        reads: "task=infer&engine=vllm&gpu_memory_utilization=0.85&gpu=custom&capacity_gib=79.33",
        measured: &[
            ("requested_bytes", 72_402_411_192),
            ("weights_bytes", 18_167_711_662),
            ("activation_peak_bytes", 6_077_378_724),
            ("non_torch_bytes", 139_586_437),
            ("cudagraph_bytes", 1_438_814_044),
        ],
        // Its model (Qwen3.5-35B-A3B) is no preset: only the budget,
        // capacity × utilization, is the same whatever the model.
        beside: "",
        holds: &[("requested_bytes", Holds::WithinRounding)],
    },
    Case {
        file: "trl-example_config.yaml",
        source: "https://github.com/huggingface/trl/blob/2e736f58dd4cf01fe012b6963709e029a43d497f/examples/cli_configs/example_config.yaml",
        reads: "task=train&model=qwen2.5-0.5b",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "axolotl-llama3-qlora-1b.yml",
        source: "https://github.com/axolotl-ai-cloud/axolotl/blob/ba1be71d70582bc0abf67ad604abb6739567f504/examples/llama-3/qlora-1b.yml",
        reads: "task=train&model=llama3.2-1b&optim=adamw8bit&batch=2&seq=2048&grad_accum=4&grad_ckpt=true&attn=flash_attention_2&lora_r=32&lora_targets=gate_proj%2Cdown_proj%2Cup_proj%2Cq_proj%2Cv_proj%2Ck_proj%2Co_proj&lora_dropout=0.05&quant=nf4",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "vllm-qwen3.6-35b-a3b-nvfp4-5090.log",
        source: "https://github.com/noonghunna/club-3090/issues/612 (turn 0 by guybrush01: the KV lines and vLLM 0.24's non-default args)",
        reads: "task=infer&model=qwen3.6-35b-a3b&engine=vllm&ctx=131072&kv_dtype=fp8&max_num_seqs=1&max_num_batched_tokens=8192&enable_prefix_caching=true",
        measured: &[("kv_cache_bytes", 6_420_976_108), ("kv_tokens", 567_978)],
        // vramfit models vLLM 0.33, where an RTX 5090 runs FlashInfer's
        // Gated DeltaNet prefill (a checkpoint block more per request);
        // this 0.24 run's pool, Triton's rules, is held to the log in
        // `tests/infer_vllm.rs` (`r28_hybrid_pool_as_published`).
        // modelopt's NVFP4 weights are not modelled.
        beside: "",
        holds: &[],
    },
    Case {
        file: "vllm-gemma4-31b-b300-0.26.log",
        source: "John Pfeiffer, 'Getting stable with DeepSeek-V4-Flash-0731 on a single Nvidia B300', section 'B300 with Gemma4 details' (GitHub johnpfeiffer/source.johnpfeiffer.github.io, content/ai/b300-deepseek-0731.md; vLLM 0.26.0, the log's memory lines as the post quotes them)",
        reads: "task=infer&model=gemma4-31b&engine=vllm&weights=bf16&ctx=16384&gpu_memory_utilization=0.92&max_num_batched_tokens=8192&gpu=custom&capacity_gib=267.69",
        measured: &[
            ("weights_bytes", 63_340_030_198),
            ("kv_cache_bytes", 195_818_296_443),
            ("kv_tokens", 217_116),
            ("requested_bytes", 264_430_398_996),
            ("activation_peak_bytes", 4_187_593_114),
            ("non_torch_bytes", 268_435_456),
            ("cudagraph_bytes", 751_619_277),
        ],
        // The budget is the GPU's whatever vramfit estimates; the pool
        // given its logged size is held in `tests/infer_vllm_gemma4.rs`.
        // The weights and the profiling peak leave out the vision
        // encoder vLLM loads (the estimate's caveat).
        beside: "",
        holds: &[("requested_bytes", Holds::WithinRounding)],
    },
    Case {
        file: "vllm-gemma4-e2b-qat-t4-0.29.log",
        source: "xbill, 'Gemma 4 on a Tesla T4, Part 2: The Minimum GCE VM and a Script to Drive It' (dev.to/gde, 2026-09-22; GitHub xbill9/gemma4-dev, gpu-vllm-t4-2b/devto-gemma4-t4-vm-deploy.md: run/vllm.log as quoted; vLLM 0.29.0 on a Tesla T4)",
        reads: "task=infer&model=gemma4-e2b&engine=vllm&ctx=16384&gpu_memory_utilization=0.9&max_num_seqs=8",
        measured: &[
            ("weights_bytes", 8_611_409_428),
            ("kv_cache_bytes", 5_003_636_900),
            ("kv_tokens", 519_681),
        ],
        // A compressed-tensors W4A16 checkpoint, not a format vramfit
        // has: its pool given the logged memory is held in
        // `tests/infer_vllm_gemma4.rs`.
        beside: "",
        holds: &[],
    },
    Case {
        file: "nvidia-smi-a800.txt",
        source: "https://github.com/pytorch/pytorch/issues/37250 (comment by beyondguo, 2023-07-06)",
        reads: "gpu=custom&capacity_gib=80",
        measured: &[("peak_total_bytes", 12_433 << 20)],
        beside: "",
        holds: &[],
    },
    Case {
        file: "llamacpp-b10488-lora-all-r64-f16-cpu.log",
        source: "vramfit's own run of llama-server b10488 (CPU build) with a LoRA adapter: scripts/measure/llamacpp/lora/raw/logs.tar.xz, A-f16-all-r64-f16-faon.log",
        // The base is a made file (no preset: listed as unknown); its
        // adapter's bytes are held in `tests/lora_adapters.rs`.
        reads: "task=infer&engine=llamacpp&weights=f16&ctx=4096&n_parallel=1&n_batch=2048&n_ubatch=512&cache_type_k=f16&cache_type_v=f16&flash_attn=on&kv_unified=false",
        measured: &[
            ("weights_bytes", 94_413_783),
            ("lora_bytes", 9_311_355),
            ("kv_cache_bytes", 16_777_216),
        ],
        beside: "",
        holds: &[],
    },
    Case {
        file: "llamacpp-lora-llama3-8b-f16-2gpu.log",
        source: "https://github.com/ngxson/llama.cpp/pull/9 (comment by slaren, 2024-07-10: the command and its LoRA lines; llama.cpp of July 2024, `llama_lora_adapter_init_internal`)",
        // Llama 3 8B Instruct is no preset (its path is listed as unknown);
        // the adapter's rank is not printed (listed too).
        reads: "task=infer&engine=llamacpp&n_gpu_layers=30",
        // 18.08 + 110.00 + 40.00 MiB of LoRA buffers on the host and two
        // GPUs (those two also listed, not one peak).
        measured: &[("lora_bytes", 176_244_654)],
        // The adapter (rwitz/Llama-3-8B-Instruct-abliterated-lora) is f16;
        // 450 tensors are 225 pairs: the seven projections of 32 layers and
        // the output layer, at rank 32 (2 · 32 · (32 · 81,920 + 132,352)
        // bytes = 168.08 MiB, as printed). Llama 3.1 8B has Llama 3 8B's
        // widths.
        beside: "model=llama3.1-8b&weights=f16&lora_r=32&lora_targets=all,lm_head&lora_type=f16",
        holds: &[("lora_bytes", Holds::WithinRounding)],
    },
    Case {
        file: "peft-adapter_config-llama3.2-3b-r8.json",
        source: "https://github.com/AdelaCorbeanu/Fine-Tuning-Llama-3.2-3B-for-Romanian-Contextual-Question-Answering-via-LoRA/blob/bc2ff135d0c2a38269a4c33d85b16795a4c4972f/adapter_config.json (PEFT's LoraConfig as save_pretrained writes it)",
        // The adapter's rank and targets, its base model; no task (it
        // serves as well as it trains).
        reads: "model=llama3.2-3b&lora_r=8&lora_targets=q_proj%2Cv_proj&lora_dropout=0.05",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "ollama-ps-two-models.txt",
        source: "https://github.com/attogram/ollama-bash-lib/blob/550a7b3708a7d23c6d4d7ca2481d8271fcfc0ce5/demos/ps.md (lines 7-9: `ollama ps` of Ollama 0.9.7 or later, 2025-07-29)",
        // granite3.3:2b is no preset (listed as unknown); the second
        // row, llama3.2:3b, is another model loaded (unknown).
        reads: "task=infer&engine=ollama&ctx=4096",
        // 2.7 GB, 100% GPU: the same file's `/api/ps` gives size and
        // size_vram 2,686,878,533 bytes, within the printed ±0.05 GB.
        measured: &[
            ("ollama_ps_size", 2_700_000_000),
            ("ollama_ps_size_vram", 2_700_000_000),
        ],
        beside: "",
        holds: &[],
    },
    Case {
        file: "pytorch-memory-summary.txt",
        source: "https://github.com/pytorch/pytorch/pull/91854 (description, 2023-01-08; the summary's first 13 lines, as far as the copy read goes)",
        reads: "",
        measured: &[("peak_allocated_bytes", 1 << 20)],
        beside: "",
        holds: &[],
    },
    Case {
        file: "pytorch-memory-summary-reserved.txt",
        source: "https://github.com/pytorch/pytorch/issues/35901 (turn 5 by david-macleod, 2020: the summary's first 16 lines, up to the `GPU reserved memory` row, as far as the copy read goes)",
        reads: "",
        // Torch 1.x's binary `MB`, floored: the allocated peak 4877 MiB
        // (± 1 MiB), the reserved peak 12420 MiB (the total's at least).
        measured: &[
            ("peak_allocated_bytes", 4877 << 20),
            ("peak_total_bytes", 12_420 << 20),
        ],
        beside: "",
        holds: &[],
    },
    Case {
        file: "accelerate-deepspeed_zero3.yaml",
        source: "https://github.com/huggingface/trl/blob/c3d2465f5e4e2a69a23d4fe1d98ef24e86a96584/examples/accelerate_configs/deepspeed_zero3.yaml",
        reads: "task=train&dtype=mixed_bf16&grad_accum=1&gpus=8&zero=3&shard=deepspeed",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "accelerate-fsdp2.yaml",
        source: "https://github.com/huggingface/trl/blob/ca08043183baccb0b8dae34ac9091fa6c69122cb/examples/accelerate_configs/fsdp2.yaml",
        reads: "task=train&gpus=8&zero=3&shard=fsdp2",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "torchtitan-llama3_8b.toml",
        source: "https://github.com/pytorch/torchtitan/blob/73a0e6979dd10b6b1904098eb3c8f62c18ab87ce/torchtitan/models/llama3/train_configs/llama3_8b.toml (torchtitan v0.2.2)",
        reads: "task=train&model=llama3.1-8b&dtype=amp_bf16&optim=adamw_fused&batch=1&seq=8192&zero=3&shard=fsdp2",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "torchtitan-llama3_70b.toml",
        source: "https://github.com/pytorch/torchtitan/blob/73a0e6979dd10b6b1904098eb3c8f62c18ab87ce/torchtitan/models/llama3/train_configs/llama3_70b.toml (torchtitan v0.2.2)",
        reads: "task=train&model=llama3.1-70b&dtype=amp_bf16&optim=adamw_fused&batch=8&seq=8192&grad_ckpt=non_reentrant&tp=8&zero=3&shard=fsdp2",
        measured: &[],
        beside: "",
        holds: &[],
    },
    Case {
        file: "torchtitan-qwen3_32b.toml",
        source: "https://github.com/pytorch/torchtitan/blob/73a0e6979dd10b6b1904098eb3c8f62c18ab87ce/torchtitan/models/qwen3/train_configs/qwen3_32b.toml (torchtitan v0.2.2)",
        reads: "task=train&model=qwen3-32b&dtype=amp_bf16&optim=adamw_fused&batch=2&seq=4096&grad_ckpt=non_reentrant&zero=3&shard=fsdp2",
        measured: &[],
        beside: "",
        holds: &[],
    },
];

/// A text written here reads to `reads`, with `unknown` things listed as
/// not read.
fn reads_to(text: &str, reads: &str, unknown: usize) {
    let r = paste::read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(r.query(), reads, "{text}");
    assert_eq!(r.unknown.len(), unknown, "{text}: {:?}", r.unknown);
}

/// Commands written here to reach each program's flag table (not
/// published texts: those are [`CASES`]): what each reads to, and how
/// many of its words are listed as unknown.
#[test]
fn each_programs_flags_read_to_their_keys() {
    let check = reads_to;
    check(
        "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 32768 -ngl 99 -fa on -ctk q8_0 -ctv q8_0 --port 8080 --jinja",
        "task=infer&model=qwen3-8b&engine=llamacpp&weights=q4_k_m&ctx=32768&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on&n_gpu_layers=99",
        2,
    );
    check(
        "./build/bin/llama-server -hf unsloth/Qwen3-8B-GGUF:Q8_0 --ctx-size=8192 -np 2 -kvu -ub 1024 -b 4096 -ts 3/1 -sm layer -ot '.ffn_.*_exps.=CPU' --n-cpu-moe 4 -ngl all",
        "task=infer&model=qwen3-8b&engine=llamacpp&weights=q8_0&ctx=8192&n_parallel=2&n_batch=4096&n_ubatch=1024&n_cpu_moe=4&kv_unified=true&tensor_split=3%2C1&override_tensor=.ffn_.%2A_exps.%3DCPU&split_mode=layer",
        0,
    );
    check(
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen3-8B --max_model_len 32768 -tp 2 --gpu-memory-utilization=0.85 \\\n  --kv-cache-dtype fp8 --enforce-eager --port 8000",
        "task=infer&model=qwen3-8b&engine=vllm&ctx=32768&kv_dtype=fp8&gpu_memory_utilization=0.85&enforce_eager=true&tensor_parallel_size=2",
        2,
    );
    // vLLM's abbreviations (`EngineArgs.add_cli_args`): -pp, -dp, -ep and
    // -q read as their long forms; -dcp and -O (no key) are unknown.
    check(
        "vllm serve Qwen/Qwen3-30B-A3B -pp 2 -dp=2 -ep -q fp8 -dcp 2 -O3",
        "task=infer&model=qwen3-30b-a3b&engine=vllm&weights=fp8&pipeline_parallel_size=2&data_parallel_size=2&enable_expert_parallel=true",
        2,
    );
    // A checkpoint's name says its format (llm-compressor names its
    // scheme); a quantization the name says but vramfit does not read
    // from it is listed, never estimated as the preset's weights
    // silently: Google's QAT W4A16 checkpoint, an MLX DWQ conversion,
    // unsloth's dynamic GGUF types.
    check(
        "vllm serve RedHatAI/Qwen3-8B-FP8-dynamic",
        "task=infer&model=qwen3-8b&engine=vllm&weights=fp8_dynamic",
        0,
    );
    check(
        "vllm serve RedHatAI/Qwen3-8B-quantized.w8a8",
        "task=infer&model=qwen3-8b&engine=vllm&weights=w8a8",
        0,
    );
    check(
        "vllm serve google/gemma-4-E2B-it-qat-w4a16-ct --max-model-len 16384",
        "task=infer&model=gemma4-e2b&engine=vllm&ctx=16384",
        1,
    );
    check(
        "mlx_lm.generate --model mlx-community/Qwen3-8B-4bit-DWQ",
        "task=infer&model=qwen3-8b&engine=mlx",
        1,
    );
    check(
        "llama-server -m Qwen3-8B-UD-Q4_K_XL.gguf",
        "task=infer&model=qwen3-8b&engine=llamacpp",
        1,
    );
    check(
        "llama-server -m qwen3-8b.gguf",
        "task=infer&model=qwen3-8b&engine=llamacpp",
        0,
    );
    // Prefix caching off (a hybrid's states then take one block a
    // request), in a command and in a log's non-default args.
    check(
        "vllm serve Qwen/Qwen3.6-35B-A3B --no-enable-prefix-caching --mamba-ssm-cache-dtype bfloat16 --mamba-cache-dtype=float32",
        "task=infer&model=qwen3.6-35b-a3b&engine=vllm&enable_prefix_caching=false&mamba_cache_dtype=float32&mamba_ssm_cache_dtype=bfloat16",
        0,
    );
    check(
        "INFO 11-02 10:00:00 [utils.py:253] non-default args: {'model_tag': 'Qwen/Qwen3.6-35B-A3B', 'model': 'Qwen/Qwen3.6-35B-A3B', 'enable_prefix_caching': False}",
        "task=infer&model=qwen3.6-35b-a3b&engine=vllm&enable_prefix_caching=false",
        0,
    );
    // MTP speculative decoding, its aliases and a log's Python dict; a
    // draft model's method is not modelled and listed.
    check(
        r#"vllm serve Qwen/Qwen3.6-27B -tp 2 --speculative-config '{"method":"qwen3_next_mtp","num_speculative_tokens":3}'"#,
        "task=infer&model=qwen3.6-27b&engine=vllm&tensor_parallel_size=2&num_speculative_tokens=3",
        0,
    );
    check(
        "INFO 06-01 09:20:16 [utils.py:278] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', 'model': 'Qwen/Qwen3.6-27B', 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 2}}",
        "task=infer&model=qwen3.6-27b&engine=vllm&num_speculative_tokens=2",
        0,
    );
    // The engine's config line, where a log's non-default args are cut
    // (club-3090 #642, vLLM 0.24.0, shortened): the fields with keys read,
    // the rest counted once; the name's int4 and the unmodelled
    // quantization each listed.
    check(
        "(EngineCore pid=104) INFO 07-07 19:59:32 [core.py:114] Initializing a V1 LLM engine (v0.24.0) with config: model='~/.cache/huggingface/qwen3.6-27b-autoround-int4', speculative_config=SpeculativeConfig(method='mtp', model='~/.cache/huggingface/qwen3.6-27b-autoround-int4', num_spec_tokens=3), skip_tokenizer_init=False, dtype=torch.float16, max_seq_len=262144, tensor_parallel_size=2, quantization=inc, enforce_eager=False, kv_cache_dtype=fp8_e5m2, enable_prefix_caching=True",
        "task=infer&model=qwen3.6-27b&engine=vllm&ctx=262144&kv_dtype=fp8_e5m2&tensor_parallel_size=2&enable_prefix_caching=true&num_speculative_tokens=3",
        3,
    );
    // A config line cut inside its speculative config: listed, not read
    // as one draft token.
    check(
        "INFO [core.py:114] Initializing a V1 LLM engine (v0.24.0) with config: model='Qwen/Qwen3.6-27B', speculative_config=SpeculativeConfig(method='mtp', model='Qwen/Qwen3.6-27B')",
        "task=infer&model=qwen3.6-27b&engine=vllm",
        1,
    );
    check(
        r#"vllm serve Qwen/Qwen3.6-27B --speculative-config '{"method":"dflash","model":"z-lab/dflash","num_speculative_tokens":5}'"#,
        "task=infer&model=qwen3.6-27b&engine=vllm",
        1,
    );
    check(
        "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct --dtype float16 --quantization fp8 --max-num-seqs 64",
        "task=infer&model=llama3.1-8b&engine=vllm&weights=fp8&max_num_seqs=64",
        1,
    );
    // Ollama's server settings are `ollama serve`'s environment
    // (`cmd/cmd.go` lists them for `serve`; for `run` only OLLAMA_HOST,
    // OLLAMA_EDITOR and OLLAMA_NOHISTORY): before `ollama run` they reach
    // the client and are listed as not applied.
    check(
        "OLLAMA_NUM_PARALLEL=2 OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 OLLAMA_CONTEXT_LENGTH=8192 ollama serve",
        "task=infer&engine=ollama&ctx=8192&num_parallel=2&kv_cache_type=q8_0&flash_attention=true",
        0,
    );
    check(
        "OLLAMA_NUM_PARALLEL=2 OLLAMA_KV_CACHE_TYPE=q8_0 ollama run qwen3:8b",
        "task=infer&model=qwen3-8b&engine=ollama",
        2,
    );
    check(
        "OLLAMA_FLASH_ATTENTION=1 ollama serve\nollama run qwen3:8b",
        "task=infer&model=qwen3-8b&engine=ollama&flash_attention=true",
        0,
    );
    // The server's environment as Ollama's FAQ sets it (docs/faq.mdx): a
    // systemd drop-in (`systemctl edit ollama.service`), the macOS app's
    // `launchctl setenv`; OLLAMA_HOST is no memory setting.
    check(
        "[Service]\nEnvironment=\"OLLAMA_HOST=0.0.0.0:11434\"\nEnvironment=\"OLLAMA_CONTEXT_LENGTH=16384\" \"OLLAMA_NUM_PARALLEL=2\"\n",
        "task=infer&engine=ollama&ctx=16384&num_parallel=2",
        1,
    );
    check(
        "launchctl setenv OLLAMA_KV_CACHE_TYPE \"q8_0\"\nlaunchctl setenv OLLAMA_FLASH_ATTENTION 1",
        "task=infer&engine=ollama&kv_cache_type=q8_0&flash_attention=true",
        0,
    );
    check(
        "mlx_lm.generate --model mlx-community/Qwen3-8B-4bit --prompt hi --max-tokens 256 --max-kv-size 4096",
        "task=infer&model=qwen3-8b&engine=mlx&weights=4bit&new=256&max_kv_size=4096",
        1,
    );
    check(
        "mlx_lm.generate --model mlx-community/Qwen3-8B-MXFP4 --prompt hi",
        "task=infer&model=qwen3-8b&engine=mlx&weights=mxfp4",
        1,
    );
    check(
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True accelerate launch --num_processes 2 train.py --model_name_or_path Qwen/Qwen2.5-7B --per_device_train_batch_size 4 --gradient_checkpointing --bf16 --torch_dtype bfloat16 --use_peft --lora_target_modules all-linear --max_length 2048 --learning_rate 2e-4",
        "task=train&model=qwen2.5-7b&dtype=bf16_autocast&batch=4&seq=2048&grad_ckpt=true&lora_r=16&lora_targets=all&gpus=2&expandable_segments=true",
        1,
    );
    check(
        "$ torchrun --nproc_per_node 4 sft.py --model_name_or_path meta-llama/Llama-3.2-1B --load_in_4bit --use_peft --lora_r 64 --optim paged_adamw_8bit --fsdp 'full_shard auto_wrap'",
        "task=train&model=llama3.2-1b&optim=paged_adamw_8bit&lora_r=64&quant=nf4&gpus=4&zero=3&shard=fsdp1",
        0,
    );
}

/// torchtitan TOML configs written here (not published: the published
/// ones are [`CASES`]) in torchtitan v0.2.2's fields, to reach each rule
/// of `paste/torchtitan.rs`: what each reads to, and the start of each
/// line it lists as unknown that a rule wrote (every unread field is
/// listed too, and counted).
#[test]
fn torchtitan_configs_read_to_their_keys() {
    fn check(toml: &str, reads: &str, unknown: &[&str]) {
        let r = paste::read(toml).unwrap_or_else(|e| panic!("{toml}: {e}"));
        assert_eq!(r.found, ["a torchtitan TOML training config"], "{toml}");
        assert_eq!(r.query(), reads, "{toml}");
        let got: Vec<&str> = r.unknown.iter().map(String::as_str).collect();
        assert_eq!(got.len(), unknown.len(), "{toml}: {got:#?}");
        for (u, want) in got.iter().zip(unknown) {
            assert!(u.starts_with(want), "{toml}: `{u}` is not `{want}…`");
        }
    }
    // A pipeline over four GPUs: GPipe, micro-batches of 2 out of 8, no
    // FSDP, so no mixed precision (maybe_enable_amp).
    check(
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n\
         [parallelism]\ndata_parallel_shard_degree = 1\npipeline_parallel_degree = 4\n\
         pipeline_parallel_schedule = \"GPipe\"\npipeline_parallel_microbatch_size = 2\n\
         [activation_checkpoint]\nmode = \"none\"\n",
        "task=train&model=llama3.1-8b&dtype=fp32&optim=adamw_fused&batch=8&seq=4096&grad_ckpt=false&gpus=4&pp=4&pp_schedule=gpipe&pp_split=torchtitan&micro_batches=4",
        &[],
    );
    // Interleaved 1F1B: torchtitan's 2 stages a rank when no layers-per-
    // stage count is given; with one, ceil((32 + 1 + 1) / count) stages
    // over the ranks (`pipeline_llm`): 3 a stage makes 12, 6 a rank; 4
    // makes 9, which 2 ranks cannot share (torchtitan's words).
    check(
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n\
         [parallelism]\ndata_parallel_shard_degree = 1\npipeline_parallel_degree = 2\n\
         pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_microbatch_size = 2\n\
         [activation_checkpoint]\nmode = \"none\"\n",
        "task=train&model=llama3.1-8b&dtype=fp32&optim=adamw_fused&batch=8&seq=4096&grad_ckpt=false&gpus=2&pp=2&pp_schedule=interleaved_1f1b&vpp=2&pp_split=torchtitan&micro_batches=4",
        &[],
    );
    check(
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n\
         [parallelism]\ndata_parallel_shard_degree = 1\npipeline_parallel_degree = 2\n\
         pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 4\n\
         [activation_checkpoint]\nmode = \"none\"\n",
        "task=train&model=llama3.1-8b&dtype=fp32&optim=adamw_fused&batch=8&seq=4096&grad_ckpt=false&gpus=2",
        &[
            "parallelism.pipeline_parallel_layers_per_stage = 4 (line 11): torchtitan refuses it: 9 virtual stages must be divisible by pipeline parallel size (2)",
            "parallelism.pipeline_parallel_degree = 2 (line 9): not read",
        ],
    );
    check(
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\n\
         [parallelism]\ndata_parallel_shard_degree = 1\npipeline_parallel_degree = 2\n\
         pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 3\n\
         pipeline_parallel_microbatch_size = 2\n[activation_checkpoint]\nmode = \"none\"\n",
        "task=train&model=llama3.1-8b&dtype=fp32&optim=adamw_fused&batch=8&seq=4096&grad_ckpt=false&gpus=2&pp=2&pp_schedule=interleaved_1f1b&vpp=6&pp_split=torchtitan&micro_batches=4",
        &[],
    );
    // Tensor parallelism inside FSDP2 over 4 × 2 GPUs, a global batch of
    // 64 (8 accumulation steps), AdamW foreach, full checkpointing.
    check(
        "[model]\nname = \"qwen3\"\nflavor = \"8B\"\n[optimizer]\nname = \"AdamW\"\nimplementation = \"foreach\"\nlr = 8e-4\n\
         [training]\nlocal_batch_size = 2\nglobal_batch_size = 64\nseq_len = 8192\n\
         [parallelism]\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 2\n\
         [activation_checkpoint]\nmode = \"full\"\nselective_ac_option = \"op\"\n",
        "task=train&model=qwen3-8b&dtype=amp_bf16&optim=adamw&batch=2&seq=8192&grad_accum=8&grad_ckpt=non_reentrant&gpus=8&tp=2&zero=3&shard=fsdp2",
        &[
            "activation_checkpoint.selective_ac_option = op (line 17) (no effect on memory: mode is full)",
            "parallelism.tensor_parallel_degree = 2 (line 14): sequence and loss parallel",
            "optimizer.lr = 8e-4 (line 7) (no effect on memory)",
        ],
    );
    // An older config (`batch_size`), pure bf16, a schedule and a
    // microbatch size vramfit cannot take: the pipeline is not read.
    check(
        "[training]\nbatch_size = 4\ndtype = \"bfloat16\"\n[parallelism]\ndata_parallel_shard_degree = 1\n\
         pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"Interleaved1F1B\"\n\
         pipeline_parallel_microbatch_size = 3\n",
        "task=train&dtype=bf16&optim=adamw_fused&batch=4&seq=2048&gpus=2",
        &[
            "activation_checkpoint.mode = selective (torchtitan's default): selective activation checkpointing (selective_ac_option = 2) is not modelled",
            "parallelism.pipeline_parallel_microbatch_size = 3 (line 8): torchtitan refuses it",
            "parallelism.pipeline_parallel_degree = 2 (line 6): not read",
        ],
    );
    // HSDP, context and expert parallelism: not modelled, and no GPU count.
    check(
        "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 2\n\
         context_parallel_degree = 2\nexpert_parallel_degree = 2\n[activation_checkpoint]\n\
         mode = \"selective\"\nselective_ac_option = \"1\"\n",
        "task=train&dtype=amp_bf16&optim=adamw_fused&batch=8&seq=2048&grad_ckpt=non_reentrant",
        &[
            "parallelism.data_parallel_replicate_degree = 2 (line 2), parallelism.data_parallel_shard_degree = 2 (line 3): HSDP",
            "parallelism.context_parallel_degree = 2 (line 4): context parallelism is not modelled",
            "parallelism.expert_parallel_degree = 2 (line 5): expert parallelism is not modelled",
        ],
    );
    // The GPUs left to FSDP (-1) under a pipeline: no count, and FSDP2
    // without resharding (the default under PP) is not modelled; a
    // flavor with no preset; the embedding weighed as no layer.
    check(
        "[model]\nname = \"llama3\"\nflavor = \"405B\"\n[parallelism]\npipeline_parallel_degree = 2\n\
         pipeline_parallel_first_stage_less_layers = 0\n[training]\nenable_cpu_offload = false\n",
        "task=train&dtype=amp_bf16&optim=adamw_fused&batch=8&seq=2048&pp=2&pp_schedule=1f1b&pp_split=torchtitan&pp_first_less=0&micro_batches=8",
        &[
            "model.name = llama3 (line 2), model.flavor = 405B (line 3): no vramfit preset",
            "activation_checkpoint.mode = selective (torchtitan's default)",
            "parallelism.data_parallel_shard_degree = -1 (torchtitan's default): as many GPUs as torchrun starts beyond 2",
            "parallelism.fsdp_reshard_after_forward = default (torchtitan's default): FSDP2 keeping the parameters gathered",
            "training.enable_cpu_offload = false (line 8) (off: no effect on memory)",
        ],
    );
    check(
        "[parallelism]\ntensor_parallel_degree = 0\n[optimizer]\nname = \"Adam\"\n",
        "task=train&batch=8&seq=2048",
        &[
            "optimizer.name = Adam (line 4), optimizer.implementation = fused (torchtitan's default): an optimizer vramfit does not model",
            "activation_checkpoint.mode = selective",
            "parallelism.tensor_parallel_degree = 0 (line 2): torchtitan takes a degree of 1 or more",
            "training.mixed_precision_param = bfloat16 (torchtitan's default): whether it applies depends on the parallelism",
        ],
    );
}

/// Lines written here in the formats of mlx-lm's `generate.py` and of
/// nvidia-smi's table (no published copy is kept yet): what each reads
/// to and the figure it measures.
#[test]
fn mlx_and_nvidia_smi_lines_read_to_their_figures() {
    let r = paste::read(
        "mlx_lm.generate --model mlx-community/Qwen3-8B-4bit --prompt hi\nPeak memory: 5.123 GB\n",
    )
    .expect("reads");
    assert_eq!(
        r.query(),
        "task=infer&model=qwen3-8b&engine=mlx&weights=4bit"
    );
    let got: Vec<(&str, u64)> = r
        .measured
        .iter()
        .map(|m| (m.field, measured_value(m.figure)))
        .collect();
    assert_eq!(got, [("peak_allocated_bytes", 5_123_000_000)]);
    let smi = "|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0  On |                  N/A |\n\
               | 30%   45C    P2            120W /  350W |   15982MiB /  24576MiB |     12%      Default |\n";
    let r = paste::read(smi).expect("reads");
    assert_eq!(r.query(), "gpu=custom&capacity_gib=24");
    let got: Vec<(&str, u64)> = r
        .measured
        .iter()
        .map(|m| (m.field, measured_value(m.figure)))
        .collect();
    assert_eq!(got, [("peak_total_bytes", 15_982 << 20)]);
}

/// vLLM's pool lines as each version prints them: 0.2x's two lines, and
/// 0.29's one (`GPU KV cache size: N tokens, Maximum concurrency for L
/// tokens per request`, quoted from `pastes/vllm-gemma4-e2b-qat-t4-0.29.log`):
/// the tokens measured, the length read as `ctx`; the scheduler's batch.
#[test]
fn vllm_pool_lines_of_each_version_read_alike() {
    for text in [
        "GPU KV cache size: 519,681 tokens, Maximum concurrency for 16,384 tokens per request: 31.72x\n",
        "(EngineCore pid=1) INFO [kv_cache_utils.py:1733] GPU KV cache size: 519,681 tokens\n(EngineCore pid=1) INFO [kv_cache_utils.py:1734] Maximum concurrency for 16,384 tokens per request: 31.72x\n",
    ] {
        let r = paste::read(text).expect("reads");
        assert_eq!(r.query(), "task=infer&engine=vllm&ctx=16384", "{text}");
        let got: Vec<(&str, u64)> = r
            .measured
            .iter()
            .map(|m| (m.field, measured_value(m.figure)))
            .collect();
        assert_eq!(got, [("kv_tokens", 519_681)], "{text}");
    }
    let r = paste::read(
        "(APIServer pid=1) INFO 08-06 20:10:01 [scheduler.py:252] Chunked prefill is enabled with max_num_batched_tokens=8192.\n",
    )
    .expect("reads");
    assert_eq!(
        r.query(),
        "task=infer&engine=vllm&max_num_batched_tokens=8192"
    );
}

/// `ollama ps` rows written here in the shapes Ollama's
/// `ListRunningHandler` prints (fb30760; before v0.9.7 without CONTEXT):
/// what each reads to and its figures, with their bounds.
#[test]
fn ollama_ps_rows_read_to_their_figures() {
    fn check(text: &str, reads: &str, measured: &[(&str, u64, u64)], unknown: usize) {
        let r = paste::read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(r.found, ["ollama ps's table"], "{text}");
        assert_eq!(r.query(), reads, "{text}");
        let got: Vec<(&str, u64, u64)> = r
            .measured
            .iter()
            .map(|m| {
                let pm = match m.bound {
                    paste::Bound::Printed { plus_minus } => plus_minus,
                    paste::Bound::AtLeast => u64::MAX,
                };
                (m.field, measured_value(m.figure), pm)
            })
            .collect();
        assert_eq!(got, measured, "{text}");
        assert_eq!(r.unknown.len(), unknown, "{text}: {:?}", r.unknown);
    }
    // A partial offload: 6.0 GB, 62% of it on the GPU, within SIZE's
    // rounding times its percent plus half a percent of SIZE.
    check(
        "$ ollama ps\nNAME                ID              SIZE      PROCESSOR          CONTEXT    UNTIL\n\
         qwen3:8b-q4_K_M     500a1f067a9f    6.0 GB    38%/62% CPU/GPU    16384      4 minutes from now\n",
        "task=infer&model=qwen3-8b&engine=ollama&weights=q4_k_m&ctx=16384",
        &[
            ("ollama_ps_size", 6_000_000_000, 50_000_000),
            ("ollama_ps_size_vram", 3_720_000_000, 61_750_001),
        ],
        0,
    );
    // A row without its header, SIZE whole (floored from 10 GB on).
    check(
        "gpt-oss:20b    aa4295ac10c3    14 GB    100% GPU     8192       4 minutes from now",
        "task=infer&model=gpt-oss-20b&engine=ollama&ctx=8192",
        &[
            ("ollama_ps_size", 14_000_000_000, 1_000_000_000),
            ("ollama_ps_size_vram", 14_000_000_000, 1_000_000_000),
        ],
        0,
    );
    // Before v0.9.7: no CONTEXT; with a header or without, UNTIL's
    // number is not read as one. On the CPU only: nothing on the GPU.
    for text in [
        "NAME    ID    SIZE    PROCESSOR    UNTIL\nqwen3:8b    500a1f067a9f    5.9 GB    100% CPU    4 minutes from now",
        "qwen3:8b    500a1f067a9f    5.9 GB    100% CPU    4 minutes from now",
    ] {
        check(
            text,
            "task=infer&model=qwen3-8b&engine=ollama",
            &[
                ("ollama_ps_size", 5_900_000_000, 50_000_000),
                ("ollama_ps_size_vram", 0, 0),
            ],
            0,
        );
    }
    // PROCESSOR Unknown: SIZE alone; a second row is another model.
    check(
        "NAME ID SIZE PROCESSOR CONTEXT UNTIL\n\
         qwen3:8b 500a1f067a9f 5.9 GB Unknown 4096 Forever\n\
         gpt-oss:20b aa4295ac10c3 14 GB 100% GPU 8192 Forever\n",
        "task=infer&model=qwen3-8b&engine=ollama&ctx=4096",
        &[("ollama_ps_size", 5_900_000_000, 50_000_000)],
        2,
    );
    // An empty table: recognised, nothing read, and said.
    check(
        "NAME    ID    SIZE    PROCESSOR    CONTEXT    UNTIL\n",
        "",
        &[],
        1,
    );
}

/// `torch.cuda.memory_summary()`'s peaks are floored to their unit: the
/// allocated peak within one unit, the reserved peak a floor of the
/// process's total (`at least`, as the OOM message's memory in use).
#[test]
fn memory_summary_peaks_are_bounded_as_floored() {
    let r = paste::read(&fixture("pastes/pytorch-memory-summary-reserved.txt")).expect("reads");
    let bounds: Vec<(&str, paste::Bound)> = r.measured.iter().map(|m| (m.field, m.bound)).collect();
    assert_eq!(
        bounds,
        [
            (
                "peak_allocated_bytes",
                paste::Bound::Printed {
                    plus_minus: 1 << 20
                }
            ),
            ("peak_total_bytes", paste::Bound::AtLeast),
        ]
    );
}

fn measured_value(f: Figure) -> u64 {
    match f {
        Figure::Bytes(b) => b.get(),
        Figure::Count(n) => n,
    }
}

#[test]
fn published_pastes_read_to_their_queries_with_measured_beside_estimated() {
    for case in CASES {
        let text = fixture(&format!("pastes/{}", case.file));
        let mut read = paste::read(&text).unwrap_or_else(|e| panic!("{}: {e}", case.file));
        assert_eq!(read.query(), case.reads, "{} ({})", case.file, case.source);
        let got: Vec<(&str, u64)> = read
            .measured
            .iter()
            .map(|m| (m.field, measured_value(m.figure)))
            .collect();
        assert_eq!(got, case.measured, "{}", case.file);
        if case.holds.is_empty() {
            continue;
        }
        let raw = read.settle(&RawQuery::parse(case.beside));
        let decoded = decode(&raw);
        assert!(
            decoded.notices.is_empty(),
            "{}: {:?}",
            case.file,
            decoded.notices
        );
        let e = Estimates::primary_of(&decoded.scenario)
            .unwrap_or_else(|e| panic!("{}: {e}", case.file));
        let rows = compare::compare(&read, &e);
        for (field, holds) in case.holds {
            let row = rows
                .iter()
                .find(|r| r.field == *field)
                .unwrap_or_else(|| panic!("{}: {field}", case.file));
            assert_eq!(row.holds, *holds, "{}: {}", case.file, row.text());
            // A row the estimate does not hold says its likely cause; one
            // it holds says none.
            let unheld = matches!(row.holds, Holds::Differs | Holds::BelowReached);
            assert_eq!(row.cause.is_some(), unheld, "{}: {}", case.file, row.text());
            println!("{:<36} {}", case.file, row.text());
        }
    }
}

/// A PEFT `adapter_config.json` pasted over an inference link sizes the
/// adapter llama.cpp loads (Llama 3.2 3B, q and v at r 8, in
/// convert_lora_to_gguf's f32: 28 layers × 8 × ((3072 + 3072) + (3072 +
/// 1024)) × 4 bytes), and over a training link the LoRA run.
#[test]
fn a_peft_adapter_config_sizes_the_adapter_for_either_task() {
    let text = fixture("pastes/peft-adapter_config-llama3.2-3b-r8.json");
    let mut read = paste::read(&text).expect("read");
    assert_eq!(read.found, ["a PEFT adapter_config.json"]);
    let raw = read.settle(&RawQuery::parse("task=infer&engine=llamacpp"));
    let e = Estimates::primary_of(&decode(&raw).scenario).expect("estimates");
    let lora = e.served.as_ref().and_then(|s| s.lora_bytes);
    assert_eq!(lora.map(|b| b.get()), Some(28 * 8 * (6144 + 4096) * 4));
    let raw = read.settle(&RawQuery::parse("task=train"));
    let d = decode(&raw);
    assert_eq!(d.scenario.train.lora_r.map(|r| r.get()), Some(8));
    // Without `r`, LoraConfig's default, said as such.
    let unranked = paste::read(&text.replace("\"r\": 8,", "")).expect("read");
    let r = unranked
        .keys
        .iter()
        .find(|k| k.key.text() == "lora_r")
        .expect("lora_r");
    assert_eq!(r.value, "8");
    assert!(r.from.contains("default rank 8"), "{}", r.from);
}

/// A paste that names a model vramfit cannot read sets its figures beside
/// the link's model's estimate: a difference says so rather than guess at
/// settings (`ollama ps` of granite3.3:2b, no preset, beside the default
/// model). A paste that names no model keeps the figure's own cause.
#[test]
fn a_figure_beside_another_models_estimate_says_so() {
    let causes = |file: &str| {
        let mut read = paste::read(&fixture(&format!("pastes/{file}"))).expect("reads");
        let raw = read.settle(&RawQuery::default());
        let e = Estimates::primary_of(&decode(&raw).scenario).expect("estimates");
        let unread = read.model_unread;
        let rows = compare::compare(&read, &e);
        (unread, rows.iter().map(|r| r.cause).collect::<Vec<_>>())
    };
    assert_eq!(
        causes("ollama-ps-two-models.txt"),
        (true, vec![Some(compare::MODEL_UNREAD); 2])
    );
    let (unread, smi) = causes("nvidia-smi-a800.txt");
    assert!(!unread);
    assert_eq!(smi, vec![compare::likely_cause("peak_total_bytes", true)]);
}

/// Every figure the comparison reads from an estimate has a likely cause
/// to say when it differs; a name it does not know has none.
#[test]
fn every_compared_figure_has_a_likely_cause() {
    for field in [
        "peak_allocated_bytes",
        "peak_total_bytes",
        "host_bytes",
        "weights_bytes",
        "kv_cache_bytes",
        "lora_bytes",
        "activation_peak_bytes",
        "non_torch_bytes",
        "cudagraph_bytes",
        "requested_bytes",
        "kv_tokens",
        "kv_blocks",
        "ollama_ps_size",
        "ollama_ps_size_vram",
    ] {
        for training in [true, false] {
            assert!(compare::likely_cause(field, training).is_some(), "{field}");
        }
    }
    assert_eq!(compare::likely_cause("tokens_per_second", true), None);
    // A served model's peak is not driven by a training step's settings.
    let served = compare::likely_cause("peak_allocated_bytes", false).unwrap_or_default();
    assert!(served.contains("the context"), "{served}");
    assert!(!served.contains("the optimizer"), "{served}");
}

#[test]
fn unknown_settings_are_listed_never_dropped() {
    let mut out = String::new();
    for case in CASES {
        let read = paste::read(&fixture(&format!("pastes/{}", case.file))).expect("reads");
        out.push_str(&format!("== {} ({})\n", case.file, read.found.join(", ")));
        for s in &read.keys {
            out.push_str(&format!("  {}={}  <- {}\n", s.key, s.value, s.from));
        }
        for u in &read.unknown {
            out.push_str(&format!("  ? {u}\n"));
        }
    }
    insta::assert_snapshot!(out);
}

fn lines(row: &Value) -> String {
    row["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A GPU's holding from a llama.cpp log with a LoRA adapter: its model,
/// LoRA, output and KV buffers and its compute buffer once, as last
/// printed (llama-server b10488 reserves its graphs again at warm-up once
/// the adapter is applied, `common_init_result`: the allocator keeps the
/// larger buffer, which the second line prints). vramfit's own CPU run,
/// its buffers' device named as a GPU's.
#[test]
fn a_gpus_compute_buffer_counts_once() {
    let text = fixture("pastes/llamacpp-b10488-lora-all-r64-f16-cpu.log")
        .lines()
        .map(|l| {
            if l.contains("buffer size") {
                l.replace("CPU_Mapped", "CUDA0").replace(" CPU ", " CUDA0 ")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let read = paste::read(&text).expect("read");
    let peak = read
        .measured
        .iter()
        .find(|m| m.field == "peak_allocated_bytes")
        .expect("a peak");
    // 90.04 (model) + 8.88 (LoRA) + 0.00 (output) + 16.00 (KV) + 28.51
    // (compute, printed twice) MiB, each to the nearest byte.
    assert_eq!(
        measured_value(peak.figure),
        94_413_783 + 9_311_355 + 16_777_216 + 29_894_902,
        "{}",
        peak.source
    );
    assert!(peak.source.contains("LoRA"), "{}", peak.source);
}

/// Every published llama.cpp log line of `llamacpp_logs.jsonl` reads as a
/// llama.cpp log, and what it says of the cache agrees with the row's own
/// transcription (its cache types, its context).
#[test]
fn llamacpp_log_fixtures_read_as_their_rows_say() {
    for line in fixture("llamacpp_logs.jsonl").lines() {
        let row: Value = serde_json::from_str(line).expect("row");
        let id = row["id"].as_str().unwrap_or("?");
        let read = paste::read(&lines(&row)).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(
            read.found.contains(&"a llama.cpp start-up log"),
            "{id}: {:?}",
            read.found
        );
        let key = |k: &str| {
            read.keys
                .iter()
                .find(|s| s.key.text() == k)
                .map(|s| s.value.clone())
        };
        for (k, field) in [
            ("cache_type_k", "cache_type_k"),
            ("cache_type_v", "cache_type_v"),
        ] {
            if let (Some(got), Some(want)) = (key(k), row[field].as_str()) {
                assert_eq!(got, want, "{id}: {k}");
            }
        }
        if let (Some(got), Some(want)) = (key("ctx"), row["n_ctx"].as_u64()) {
            assert_eq!(got, want.to_string(), "{id}: ctx");
        }
        assert!(
            !read.keys.is_empty() && !read.measured.is_empty() || read.keys.len() > 2,
            "{id}: little read"
        );
    }
}

/// Every vLLM log of `vllm_logs.jsonl` reads as one, and each figure it
/// measured is the row's own transcription (`logged`, in GiB as printed)
/// within the printed rounding, counts exactly.
#[test]
fn vllm_log_fixtures_measure_what_their_rows_transcribe() {
    let gib = |x: f64| x * f64::from(1u32 << 30);
    for line in fixture("vllm_logs.jsonl").lines() {
        let row: Value = serde_json::from_str(line).expect("row");
        let id = row["id"].as_str().unwrap_or("?");
        let read = paste::read(&lines(&row)).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(
            read.found.contains(&"a vLLM start-up log"),
            "{id}: {:?}",
            read.found
        );
        let logged = &row["logged"];
        let mut checked = 0;
        for m in &read.measured {
            let (name, tolerance) = match m.field {
                "weights_bytes" => ("weights_gib", 0.00005),
                "kv_cache_bytes" => ("available_kv_gib", 0.005),
                "non_torch_bytes" => ("non_torch_gib", 0.005),
                "activation_peak_bytes" => ("activation_peak_gib", 0.005),
                "cudagraph_bytes" => ("cudagraph_gib", 0.005),
                "requested_bytes" => ("requested_gib", 0.005),
                "kv_blocks" => ("kv_blocks", 0.0),
                "kv_tokens" => ("kv_tokens", 0.0),
                other => panic!("{id}: {other}"),
            };
            let Some(want) = logged[name].as_f64() else {
                continue;
            };
            let got = measured_value(m.figure) as f64;
            let (want, tol) = if name.ends_with("_gib") {
                (gib(want), gib(tolerance) + 1.0)
            } else {
                (want, 0.0)
            };
            assert!(
                (got - want).abs() <= tol,
                "{id}: {} {got} vs {want}",
                m.field
            );
            checked += 1;
        }
        assert!(checked > 0, "{id}: nothing measured");
    }
}

/// Hostile or foreign input: a clear message, never a panic or a hang.
#[test]
fn hostile_input_gets_a_clear_message() {
    let big = "a".repeat(paste::MAX_PASTE_BYTES + 1);
    let long_line = format!("llama-server {}", "-c 1 ".repeat(200_000));
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    // Near the size limit, every line a figure or a list item: still linear.
    let figures: String = (0..130_000)
        .map(|i| format!("Model loading took {i}.5 GiB\n"))
        .collect();
    let items: String = std::iter::once("datasets:\n".to_string())
        .chain((0..60_000).map(|i| format!("  - path: p{i}\n  - s{i}\n")))
        .collect();
    let toml_tables: String =
        std::iter::once("[parallelism]\ntensor_parallel_degree = 2\n".to_string())
            .chain((0..100_000).map(|i| format!("[t{i}]\nk = [\"a\", {i}]\n")))
            .collect();
    let mut out = String::new();
    let texts: Vec<(&str, String)> = vec![
        ("empty", "  \n\t ".into()),
        ("too large", big),
        ("binary", "GGUF\0\0\0\x03".into()),
        (
            "another tool's log",
            "   Compiling serde v1.0.200\n    Finished `dev` profile\n".into(),
        ),
        (
            "nginx log",
            "127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326".into(),
        ),
        (
            "yaml anchor",
            "base: &b\n  lora_r: 8\nmodel_name_or_path: *b\n".into(),
        ),
        (
            "yaml python tag",
            "model_name_or_path: !!python/object/apply:os.system [\"rm -rf /\"]\nbf16: true\n"
                .into(),
        ),
        (
            "yaml flow map",
            "model_name_or_path: {a: 1}\nbf16: true\n".into(),
        ),
        ("truncated json", "{\"a\": [1, 2".into()),
        ("deep json", format!("{{\"a\": {deep}}}")),
        (
            "query in a config value",
            "model_name_or_path: qwen3-8b&gpu=h100\nper_device_train_batch_size: 4&seq=99\n".into(),
        ),
        ("a flag's value of 200 000 words", long_line),
        ("130 000 figures", figures),
        ("a list of 60 000 maps and 60 000 scalars", items),
        (
            "torchtitan TOML that does not parse",
            "[job]\ndump_folder = ./outputs\n[training]\nseq_len = 8192\n".into(),
        ),
        (
            "another trainer's TOML, with no field only torchtitan has",
            "[model]\nname = \"llama\"\n[training]\nseq_len = 2048\n".into(),
        ),
        (
            "another tool's TOML",
            "[package]\nname = \"vramfit\"\nversion = \"0.1.0\"\n".into(),
        ),
        (
            "a log that opens with a header-like line",
            "[INFO]\nModel loading took 14.2474 GiB and 5.02 seconds\n".into(),
        ),
        ("a torchtitan TOML of 100 000 tables", toml_tables),
    ];
    for (what, text) in &texts {
        let start = std::time::Instant::now();
        let msg = match paste::read(text) {
            Ok(r) => format!(
                "read {} ({} unknown): {}",
                r.query(),
                r.unknown.len(),
                r.unknown.first().cloned().unwrap_or_default()
            ),
            Err(e) => format!("refused: {e}"),
        };
        assert!(start.elapsed().as_secs() < 10, "{what}: slow");
        assert!(msg.len() < 2048, "{what}: {} bytes", msg.len());
        out.push_str(&format!("{what}: {msg}\n"));
    }
    assert_eq!(
        paste::read_bytes(&[0xff, 0xfe, b'a']),
        Err(PasteError::NotUtf8 { at: 0 })
    );
    insta::assert_snapshot!(out);
}

mod props {
    use proptest::prelude::*;
    use vramfit_core::paste;

    /// Fragments of the formats read, recombined: the readers' paths, not
    /// only their refusals.
    const PIECES: &[&str] = &[
        "llama-server ",
        "vllm serve ",
        "-c ",
        "--max-model-len ",
        "8192 ",
        "Qwen/Qwen3-8B ",
        "-fa ",
        "\\\n",
        "'",
        "\"",
        "=",
        "llama_context: n_ctx = ",
        "MiB",
        " GiB",
        "size = ",
        "K (f16): ",
        "model_name_or_path: ",
        "  - ",
        ": ",
        "\n",
        "CUDA out of memory. Tried to allocate ",
        "GPU 0 has a total capacity of ",
        "Model loading took ",
        "# GPU blocks: ",
        "99999999999999999999",
        "1.5",
        "-",
        "{",
        "}",
        "[",
        "]",
        "non-default args: {'max_model_len': ",
        "MiB / ",
        "é",
        "\t",
        "[parallelism]\n",
        "[training]\n",
        "pipeline_parallel_degree = ",
        "local_batch_size = ",
        "data_parallel_shard_degree = -1\n",
        "\"GPipe\"",
        "\"\"\"",
        "[[",
        " # ",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_text_reads_or_is_refused_without_panic(s in ".{0,400}") {
            let _ = paste::read(&s);
        }

        #[test]
        fn any_bytes_read_or_are_refused_without_panic(b in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = paste::read_bytes(&b);
        }

        #[test]
        fn recombined_formats_never_panic(ix in proptest::collection::vec(0..PIECES.len(), 0..60)) {
            let text: String = ix.iter().map(|&i| PIECES[i]).collect();
            if let Ok(mut r) = paste::read(&text) {
                // Whatever was kept decodes, and a message stays short.
                let raw = r.settle(&vramfit_core::query::RawQuery::default());
                let _ = vramfit_core::query::decode(&raw);
                prop_assert!(r.unknown.iter().all(|u| u.len() < 1024));
            }
        }
    }
}

/// Ollama's Modelfile (fb30760 `parser/parser.go`: case-insensitive
/// instructions, `#` comments, `"""` values), an `ollama run` session's
/// `/set parameter` (`cmd/interactive.go`) and an API request, written
/// here: the
/// model and `num_ctx`/`num_gpu` read, what changes memory but is not
/// modelled listed, sampling settings passed over; Ollama's library names
/// (`gemma4:e4b`) read as vramfit's ids, and a tuned checkpoint's Hub name
/// as its base's preset.
#[test]
fn ollama_modelfiles_sessions_and_model_names_read_to_their_keys() {
    let check = reads_to;
    check(
        "FROM qwen3:8b\n# a comment\nPARAMETER num_ctx 32768\nparameter temperature 0.6\nPARAMETER num_gpu 20\nSYSTEM \"\"\"You are\nPARAMETER num_ctx 2\n\"\"\"\n",
        "task=infer&model=qwen3-8b&engine=ollama&ctx=32768&num_gpu=20",
        0,
    );
    // num_batch and an adapter change memory; an option Ollama has not.
    check(
        "FROM hf.co/unsloth/GLM-4.7-Flash-GGUF:Q4_K_M\nPARAMETER num_batch 1024\nADAPTER ./lora.gguf\nPARAMETER num_ctxx 4096\n",
        "task=infer&model=glm-4.7-flash&engine=ollama&weights=q4_k_m",
        3,
    );
    check(
        "$ ollama run gemma4:e4b\n>>> /set parameter num_ctx 16384\nSet parameter 'num_ctx' to '16384'\n",
        "task=infer&model=gemma4-e4b&engine=ollama&ctx=16384",
        1,
    );
    // An API request's body (fb30760 `api/types.go`), alone or in the
    // `curl` Ollama's docs write: the model and its options read, the
    // text and streaming passed over, num_batch listed.
    check(
        r#"{"model": "gemma4:e4b", "prompt": "Why?", "stream": false, "options": {"num_ctx": 16384, "temperature": 0.2, "num_batch": 256}}"#,
        "task=infer&model=gemma4-e4b&engine=ollama&ctx=16384",
        1,
    );
    check(
        "$ curl http://localhost:11434/api/chat -d '{\n  \"model\": \"llama3.1:8b\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}],\n  \"options\": {\"num_ctx\": 32768, \"num_gpu\": 28}\n}'\n",
        "task=infer&model=llama3.1-8b&engine=ollama&ctx=32768&num_gpu=28",
        0,
    );
    // A request to an OpenAI-compatible server (vLLM 0.33's
    // `ChatCompletionRequest`, llama-server's and Ollama's `/v1`): the
    // server from its default port, the model from the body (a Hub id for
    // vLLM, Ollama's name for Ollama; llama-server serves the model it
    // started with), the text, counts and sampling passed over.
    check(
        "curl http://localhost:8000/v1/chat/completions -H \"Content-Type: application/json\" -d '{\"model\": \"Qwen/Qwen3-8B\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}], \"max_tokens\": 512, \"n\": 2}'",
        "task=infer&model=qwen3-8b&engine=vllm",
        0,
    );
    check(
        "$ curl http://localhost:11434/v1/chat/completions -d '{\"model\": \"gemma4:e4b\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"temperature\": 0.7, \"stream_options\": {\"include_usage\": true}}'",
        "task=infer&model=gemma4-e4b&engine=ollama",
        0,
    );
    check(
        "curl -s http://127.0.0.1:8080/v1/completions \\\n  -H \"Content-Type: application/json\" \\\n  -d '{\"model\": \"any\", \"prompt\": \"Once\", \"max_tokens\": 64, \"cache_prompt\": true}'",
        "task=infer&engine=llamacpp",
        1,
    );
    // Without a URL, or on another port, the server is not known: listed.
    // A body with a field only the OpenAI API has at its top is one.
    check(
        r#"{"model": "meta-llama/Llama-3.1-8B-Instruct", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 100, "logit_bias_x": 1}"#,
        "task=infer&model=llama3.1-8b",
        2,
    );
    check(
        "curl http://gpu-box:9000/v1/completions -d '{\"model\": \"Qwen/Qwen3-8B-FP8\", \"prompt\": \"x\"}'",
        "task=infer&model=qwen3-8b&weights=fp8",
        1,
    );
    // A tuned checkpoint's Hub name reads as its base's preset: the words
    // that tell the tuning do not change the shapes.
    check(
        "vllm serve mistralai/Ministral-3-8B-Instruct-2512",
        "task=infer&model=ministral3-8b&engine=vllm",
        0,
    );
    // A bad value is listed next to its field, never read.
    check(
        "FROM llama3.1:8b\nPARAMETER num_ctx lots\n",
        "task=infer&model=llama3.1-8b&engine=ollama",
        1,
    );
}

/// `docker run` of vLLM's and llama.cpp's server images, as their docs
/// write it: Docker's own options passed over, its `-e` / `--env` values
/// read as the environment, the image's arguments as the engine's.
#[test]
fn docker_run_commands_read_as_the_engine_they_start() {
    let check = reads_to;
    check(
        "docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface -p 8000:8000 --ipc=host vllm/vllm-openai:latest --model Qwen/Qwen3-8B --max-model-len 8192 --gpu-memory-utilization 0.85",
        "task=infer&model=qwen3-8b&engine=vllm&ctx=8192&gpu_memory_utilization=0.85",
        0,
    );
    check(
        "docker run -d --gpus all -v /models:/models -p 8080:8080 ghcr.io/ggml-org/llama.cpp:server-cuda \\\n  -m /models/Qwen3-8B-Q4_K_M.gguf -c 16384 -ngl 99",
        "task=infer&model=qwen3-8b&engine=llamacpp&weights=q4_k_m&ctx=16384&n_gpu_layers=99",
        0,
    );
    // An environment variable given to the container is read as one
    // given to the program; one vramfit does not read is listed.
    check(
        "docker run --gpus all -e HF_TOKEN=hf_x --env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-8B",
        "task=infer&model=qwen3-8b&engine=vllm&expandable_segments=true",
        1,
    );
    // A program run in a container (Ollama's Docker instructions).
    check(
        "sudo docker run --ipc=host --gpus=all vllm/vllm-openai --model Qwen/Qwen3-8B",
        "task=infer&model=qwen3-8b&engine=vllm",
        0,
    );
    check(
        "docker exec -it ollama ollama run llama3.1:8b",
        "task=infer&model=llama3.1-8b&engine=ollama",
        0,
    );
    // Ollama's image runs `ollama serve` (its Dockerfile's CMD): `-e` sets
    // the server's environment (the command from Ollama's docs/docker.mdx,
    // with two settings added).
    check(
        "docker run -d --gpus=all -v ollama:/root/.ollama -p 11434:11434 -e OLLAMA_KV_CACHE_TYPE=q8_0 -e OLLAMA_FLASH_ATTENTION=1 --name ollama ollama/ollama",
        "task=infer&engine=ollama&kv_cache_type=q8_0&flash_attention=true",
        0,
    );
    check(
        "docker run -d --device /dev/kfd --device /dev/dri -v ollama:/root/.ollama -p 11434:11434 --name ollama ollama/ollama:rocm serve --verbose",
        "task=infer&engine=ollama",
        1,
    );
    // An image vramfit does not know is not a command it reads.
    assert!(paste::read("docker run --gpus all nvidia/cuda:12.4.0-base nvidia-smi").is_err());
}

/// A LoRA adapter (llama.cpp's `--lora`, `--lora-scaled`; a Modelfile's
/// `ADAPTER`) changes memory vramfit does not size yet: it is listed as
/// such, with its file, never as a setting without memory
/// (`scripts/measure/llamacpp/lora/NOTES.md`), and the rest still reads.
#[test]
fn lora_adapters_are_said_not_counted() {
    for (text, shown) in [
        (
            "llama-server -m qwen3-8b-Q4_K_M.gguf -c 8192 --lora my-adapter.gguf -ngl 99",
            "--lora my-adapter.gguf",
        ),
        (
            "llama-server -m qwen3-8b-Q4_K_M.gguf --lora-scaled=my-adapter.gguf:0.5 -c 8192",
            "--lora-scaled my-adapter.gguf:0.5",
        ),
        (
            "FROM qwen3:8b\nADAPTER ./my-adapter.gguf\nPARAMETER num_ctx 8192",
            "ADAPTER ./my-adapter.gguf",
        ),
    ] {
        let read = paste::read(text).expect("reads");
        let said = read
            .unknown
            .iter()
            .find(|u| u.starts_with(shown))
            .unwrap_or_else(|| panic!("{text}: {:?}", read.unknown));
        assert!(
            said.contains("LoRA adapter") && said.contains("not counted"),
            "{said}"
        );
        assert!(
            read.keys
                .iter()
                .any(|s| s.key.text() == "ctx" || s.key.text() == "num_ctx"),
            "{text}: {:?}",
            read.keys.iter().map(|s| s.key.text()).collect::<Vec<_>>()
        );
    }
}
