//! The scenarios every estimate benchmark runs: criterion's timings
//! (`benches/estimate.rs`) and the instruction counts of
//! `examples/instructions.rs` (`scripts/bench-ir.sh`), which a busy
//! machine cannot disturb.

/// Training estimates: (name, query).
pub const TRAIN: &[(&str, &str)] = &[
    (
        "llama3.1-8b amp sdpa",
        "model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=4&seq=2048",
    ),
    (
        "gpt2 fp32 eager ckpt",
        "model=gpt2-124m&dtype=fp32&attn=eager&grad_ckpt=true&batch=8&seq=1024",
    ),
    (
        "qwen2.5-7b lora zero3",
        "model=qwen2.5-7b&dtype=bf16&lora_r=16&gpus=8&zero=3&grad_accum=4",
    ),
    (
        "mixtral-8x7b moe lora ckpt",
        "model=mixtral-8x7b&dtype=amp_bf16&lora_r=16&grad_ckpt=true&batch=2&seq=4096",
    ),
    (
        "deepseek-v3 moe mla zero3",
        "model=deepseek-v3&dtype=bf16&gpus=64&zero=3&batch=1&seq=4096",
    ),
    (
        "llama3.1-70b tp8 fsdp2 ckpt",
        "model=llama3.1-70b&dtype=bf16&gpus=64&tp=8&shard=fsdp2&zero=3&grad_ckpt=true&batch=1&seq=8192",
    ),
    // Three ranks' breakdowns and phases (the first, the fullest middle
    // and the last): 21 to 24 µs here, over the 5 µs of one GPU's.
    (
        "llama3.1-8b pp8 1f1b 16 micro-batches",
        "model=llama3.1-8b&dtype=bf16&gpus=8&pp=8&micro_batches=16&batch=16&seq=4096",
    ),
    // Each rank's two kinds of stage on breakdowns of their own, and the
    // rank's parameters on a third.
    (
        "llama3.1-8b pp4 interleaved vpp2 8 micro-batches",
        "model=llama3.1-8b&dtype=bf16&gpus=4&pp=4&pp_schedule=interleaved_1f1b&vpp=2&micro_batches=8&batch=8&seq=4096",
    ),
    (
        "qwen3-30b-a3b moe aux offload",
        "model=qwen3-30b-a3b&dtype=bf16&aux_loss=true&zero=2&offload=optimizer&grad_ckpt=offload&batch=4&seq=2048",
    ),
    // An extreme the codec accepts (issue 27: 150 ms walked parameter
    // by parameter): DeepSpeed's prefetch over 37,151 experts a layer,
    // one nn.Linear each (transformers 4.57).
    (
        "deepspeed 37151 per-expert linears (worst case)",
        "model=deepseek-v3&experts=37151&dtype=mixed_bf16&transformers=4.57&gpus=2&zero=3&shard=deepspeed&ds_buckets=auto&lora_r=64",
    ),
];

/// Inference estimates: (name, query).
pub const INFER: &[(&str, &str)] = &[
    (
        "llama3.1-8b nf4 P8192 N512",
        "task=infer&model=llama3.1-8b&weights=nf4&double_quant=true&prompt=8192&new=512",
    ),
    (
        "gemma3-1b sliding P32768",
        "task=infer&model=gemma3-1b&prompt=32768&new=64",
    ),
    (
        "mixtral-8x7b B16",
        "task=infer&model=mixtral-8x7b&batch=16&prompt=1024&new=16",
    ),
    (
        "gpt-oss-20b eager",
        "task=infer&model=gpt-oss-20b&prompt=4096&new=256",
    ),
    (
        "qwen3.6-35b-a3b hybrid P8192",
        "task=infer&model=qwen3.6-35b-a3b&prompt=8192&new=256",
    ),
    (
        "vllm qwen3-8b L4",
        "task=infer&engine=vllm&model=qwen3-8b&ctx=32768&gpu=l4-24",
    ),
    (
        "vllm gpt-oss-20b auto H100",
        "task=infer&engine=vllm&model=gpt-oss-20b&ctx=auto&gpu=h100-sxm-80",
    ),
    (
        "llama.cpp qwen3-8b q4_k_m 32k 4060 laptop",
        "task=infer&engine=llamacpp&model=qwen3-8b&weights=q4_k_m&ctx=32768&gpu=rtx-4060-laptop",
    ),
    (
        "ollama qwen3-8b 4090",
        "task=infer&engine=ollama&model=qwen3-8b&gpu=rtx-4090",
    ),
    (
        "llama.cpp llama3.1-70b q4_k_m 8k 4090",
        "task=infer&engine=llamacpp&model=llama3.1-70b&weights=q4_k_m&ctx=8192&gpu=rtx-4090",
    ),
    (
        "llama.cpp qwen3-30b-a3b q4_k_m 32k 4090 (experts placed)",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&weights=q4_k_m&ctx=32768&gpu=rtx-4090",
    ),
    // The extremes the codec accepts (issue 27: these took up to
    // seconds): --fit's search over llama.cpp's most layers, and MLX's
    // cache grown over a 2M-token prompt in chunks of 3.
    (
        "llama.cpp 512 layers --fit (worst case)",
        "task=infer&engine=llamacpp&model=qwen3-30b-a3b&layers=512&weights=q4_k_m&gpu=rtx-4090",
    ),
    (
        "mlx 2M prompt in 3-token chunks (worst case)",
        "task=infer&engine=mlx&model=qwen2.5-1.5b&prompt=2019910&prefill_step_size=3",
    ),
];
