//! Popular models as presets: each one's architecture from its `config.json`
//! on the Hugging Face Hub, and its published parameter count, which the
//! architecture must reproduce exactly (tested).

use crate::model::{Architecture, Family};

/// One preset model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The URL key, e.g. `llama3.1-8b`.
    pub id: &'static str,
    /// Display name, e.g. "Llama 3.1 8B".
    pub name: &'static str,
    /// Hugging Face repository the architecture is read from.
    pub repo: &'static str,
    pub arch: Architecture,
    /// The parameter count the model's publisher states (model card or
    /// `model.num_parameters()` as published).
    pub published_params: u64,
}

/// A dense architecture with rotary positions, trained for `positions`
/// tokens.
#[allow(clippy::too_many_arguments)]
pub(crate) const fn dense(
    family: Family,
    hidden: u32,
    layers: u32,
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    ffn: u32,
    vocab: u32,
    tied: bool,
    positions: u32,
) -> Architecture {
    Architecture {
        family,
        hidden,
        layers,
        heads,
        kv_heads,
        head_dim,
        ffn,
        vocab,
        tied,
        positions,
        ..Architecture::BLANK
    }
}

const fn gpt2(hidden: u32, layers: u32, heads: u32) -> Architecture {
    Architecture {
        family: Family::Gpt2,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        ffn: 4 * hidden,
        vocab: 50257,
        tied: true,
        positions: 1024,
        ..Architecture::BLANK
    }
}

/// A Pythia model (`gpt_neox`): heads of `hidden / heads`, a quarter of
/// each rotated (`rotary_pct` 0.25), a 4 × hidden MLP, untied embeddings,
/// 2048 positions. Source: EleutherAI/pythia-1b's config.json
/// (`scripts/measure/families/gpt_neox/pythia-1b.json`), the model card's
/// table of layers, widths and heads for the others.
const fn pythia(hidden: u32, layers: u32, heads: u32, vocab: u32) -> Architecture {
    Architecture {
        family: Family::GptNeox,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        rope_dim: hidden / heads / 4,
        ffn: 4 * hidden,
        vocab,
        tied: false,
        positions: 2048,
        ..Architecture::BLANK
    }
}

use Family::{
    DeepseekV2, DeepseekV3, DeepseekV32, Gemma, Gemma2, Gemma3Text, Glm4Moe, Glm4MoeLite,
    GlmMoeDsa, GptBigcode, GptOss, GraniteMoeHybrid, Lfm2, Lfm2Moe, Llama, Llama4Text, MinimaxM2,
    Ministral3, Mistral, Mistral4, Mixtral, NemotronH, Olmo2, Olmo3, Phi3, Qwen2, Qwen2Moe, Qwen3,
    Qwen35MoeText, Qwen35Text, Qwen3Moe, Qwen3Next, SmolLm3,
};

/// LFM2 1.2B's published config (`scripts/measure/families/lfm2/lfm2-1.2b.json`).
const LFM2_1_2B: Architecture = Architecture {
    family: Lfm2,
    hidden: 2048,
    layers: 16,
    heads: 32,
    kv_heads: 8,
    head_dim: 64,
    ffn: 8192,
    vocab: 65536,
    tied: true,
    positions: 128_000,
    linear_layers: 10,
    linear_conv: 3,
    ..Architecture::BLANK
};

/// Granite 4.0-H Micro's config, reconstructed from public copies
/// (`scripts/measure/families/granite_hybrid/granite-4.0-h-micro.json`,
/// its sources in `granite_hybrid/NOTES.md`):
/// 40 layers of 2048, attention on 5, 15, 25 and 35 (32 heads and 8
/// key/value heads of 64, no position embedding), Mamba-2 on the other 36
/// (64 heads of 64, a state of 128, one group, kernel 4), a shared MLP of
/// 8192 in every layer, a 100,352-token vocabulary, tied.
const GRANITE_H_MICRO: Architecture = Architecture {
    family: GraniteMoeHybrid,
    hidden: 2048,
    layers: 40,
    heads: 32,
    kv_heads: 8,
    head_dim: 64,
    ffn: 8192,
    vocab: 100352,
    tied: true,
    positions: 131_072,
    linear_layers: 36,
    linear_k_heads: 1,
    linear_v_heads: 64,
    linear_k_dim: 128,
    linear_v_dim: 64,
    linear_conv: 4,
    ..Architecture::BLANK
};

/// Nemotron Nano 2 9B's config, reconstructed from public copies
/// (`scripts/measure/families/nemotron_h/NVIDIA-Nemotron-Nano-9B-v2.json`,
/// its sources in that folder's NOTES.md §4; the 12B's and 47B's are
/// reconstructed too, the 8B's and Nemotron 3 Nano's public copies of the
/// files): 56 layers of 4480, as
/// `hybrid_override_pattern` says 27 Mamba-2 (128 heads of 80, a state of
/// 128, 8 groups, kernel 4), 25 squared-ReLU MLPs of 15680 and 4
/// attention layers (40 heads and 8 key/value heads of 128, no position
/// embedding), a 131,072-token vocabulary, untied.
const NEMOTRON_NANO_9B: Architecture = Architecture {
    family: NemotronH,
    hidden: 4480,
    layers: 56,
    heads: 40,
    kv_heads: 8,
    head_dim: 128,
    ffn: 15680,
    vocab: 131072,
    tied: false,
    positions: 131_072,
    linear_layers: 27,
    ffn_layers: 25,
    linear_k_heads: 8,
    linear_v_heads: 128,
    linear_k_dim: 128,
    linear_v_dim: 80,
    linear_conv: 4,
    ..Architecture::BLANK
};

/// What Llama 4 Scout and Maverick share (their published `text_config`s,
/// `tests/fixtures/hf_configs/llama4-*.json`): 48 layers of 5120, 40 heads
/// and 8 key/value heads of 128, experts of 8192 top-1 with a shared one, a
/// dense MLP of 16384 where a layer has no experts, chunks of 8192 on all
/// but every 4th layer, a 202,048-token vocabulary, untied.
const LLAMA4: Architecture = Architecture {
    family: Llama4Text,
    hidden: 5120,
    layers: 48,
    heads: 40,
    kv_heads: 8,
    head_dim: 128,
    ffn: 16384,
    vocab: 202048,
    tied: false,
    experts_per_token: 1,
    moe_ffn: 8192,
    shared_experts: 1,
    sliding_window: 8192,
    sliding_layers: 36,
    ..Architecture::BLANK
};

/// What every Gemma 4 shares: a 262,144-token vocabulary, tied, heads of
/// 256 on the sliding layers and 512 on the global ones, final-logit
/// softcapping. Source: the published `config.json`s' `text_config`
/// (`tests/fixtures/hf_configs/gemma4-*.json`).
const GEMMA4: Architecture = Architecture {
    family: Family::Gemma4Text,
    head_dim: 256,
    global_head_dim: 512,
    vocab: 262_144,
    tied: true,
    ..Architecture::BLANK
};

/// Gemma 4's E-models: a window of 512, per-layer embeddings of 256 over
/// the whole vocabulary, the last layers reusing keys and values, 128K
/// positions.
const GEMMA4_E: Architecture = Architecture {
    sliding_window: 512,
    ple_dim: 256,
    ple_vocab: 262_144,
    positions: 131_072,
    ..GEMMA4
};

/// Gemma 3n E2B and E4B: Gemma 3's 8 heads of 256 over 2 key/value heads
/// on a hidden width of 2048, a 262,400-token vocabulary (tied) with
/// per-layer embeddings of 256 over 262,144 rows, a window of 512 on four
/// layers in five, 20 layers with keys and values of their own, 32K
/// positions. Source: `scripts/measure/families/gemma3n/SOURCES.md` (the
/// published `text_config`s as public copies give them,
/// `tests/fixtures/hf_configs/gemma3n-*.json`).
const GEMMA3N: Architecture = Architecture {
    family: Family::Gemma3nText,
    hidden: 2048,
    heads: 8,
    kv_heads: 2,
    head_dim: 256,
    vocab: 262_400,
    tied: true,
    sliding_window: 512,
    ple_dim: 256,
    ple_vocab: 262_144,
    positions: 32_768,
    ..Architecture::BLANK
};

/// Gemma 4 26B-A4B and 31B: a window of 1024, global layers with fewer
/// key/value heads that are keys and values at once, 256K positions.
const GEMMA4_LARGE: Architecture = Architecture {
    sliding_window: 1024,
    k_eq_v: 1,
    positions: 262_144,
    ..GEMMA4
};

/// Qwen3.6 27B (the same text model as Qwen3.5 27B): 64 layers, a gated
/// full-attention layer every fourth, 48 Gated DeltaNet layers of 16 key
/// and 48 value heads of 128. Source: the published `config.json`'s
/// `text_config` (`tests/fixtures/hf_configs/qwen3.6-27b.json`).
const QWEN36_27B: Architecture = Architecture {
    family: Family::Qwen35Text,
    hidden: 5120,
    layers: 64,
    heads: 24,
    kv_heads: 4,
    head_dim: 256,
    ffn: 17408,
    vocab: 248_320,
    tied: false,
    positions: 262_144,
    linear_layers: 48,
    linear_k_heads: 16,
    linear_v_heads: 48,
    linear_k_dim: 128,
    linear_v_dim: 128,
    linear_conv: 4,
    // A quarter of each 256-wide head (`partial_rotary_factor` 0.25).
    rope_dim: 64,
    ..Architecture::BLANK
};

/// The DeltaNet of Qwen3.6 35B-A3B and Qwen3-Next 80B-A3B: 30 of 40
/// layers, 16 key and 32 value heads of 128, a kernel of 4.
const QWEN36_LINEAR_32: Architecture = Architecture {
    linear_layers: 30,
    linear_k_heads: 16,
    linear_v_heads: 32,
    linear_k_dim: 128,
    linear_v_dim: 128,
    linear_conv: 4,
    rope_dim: 64,
    ..Architecture::BLANK
};

/// DeepSeek-V3's shapes (`deepseek-ai/DeepSeek-V3`), which DeepSeek-V3.2
/// keeps.
const DEEPSEEK_V3: Architecture = Architecture {
    family: DeepseekV3,
    hidden: 7168,
    layers: 61,
    heads: 128,
    kv_heads: 128,
    head_dim: 192,
    ffn: 18432,
    vocab: 129280,
    tied: false,
    positions: 163840,
    experts: 256,
    experts_per_token: 8,
    moe_ffn: 2048,
    shared_experts: 1,
    dense_layers: 3,
    q_lora_rank: 1536,
    kv_lora_rank: 512,
    rope_dim: 64,
    v_head_dim: 128,
    ..Architecture::BLANK
};

/// Kimi K2's text model (DeepSeek-V3's architecture), which K2.5 shares.
/// Source: `tests/fixtures/hf_configs/kimi-k2.json`.
const KIMI_K2: Architecture = Architecture {
    family: DeepseekV3,
    hidden: 7168,
    layers: 61,
    heads: 64,
    kv_heads: 64,
    head_dim: 192,
    ffn: 18432,
    vocab: 163840,
    tied: false,
    positions: 262144,
    experts: 384,
    experts_per_token: 8,
    moe_ffn: 2048,
    shared_experts: 1,
    dense_layers: 1,
    q_lora_rank: 1536,
    kv_lora_rank: 512,
    rope_dim: 64,
    v_head_dim: 128,
    ..Architecture::BLANK
};

/// Every preset, grouped by family, small to large.
pub const PRESETS: &[Preset] = &[
    Preset {
        id: "gpt2-124m",
        name: "GPT-2 (124M)",
        repo: "openai-community/gpt2",
        arch: gpt2(768, 12, 12),
        published_params: 124_439_808,
    },
    Preset {
        id: "gpt2-medium",
        name: "GPT-2 Medium (355M)",
        repo: "openai-community/gpt2-medium",
        arch: gpt2(1024, 24, 16),
        published_params: 354_823_168,
    },
    Preset {
        id: "gpt2-large",
        name: "GPT-2 Large (774M)",
        repo: "openai-community/gpt2-large",
        arch: gpt2(1280, 36, 20),
        published_params: 774_030_080,
    },
    Preset {
        id: "gpt2-xl",
        name: "GPT-2 XL (1.5B)",
        repo: "openai-community/gpt2-xl",
        arch: gpt2(1600, 48, 25),
        published_params: 1_557_611_200,
    },
    // Pythia: the model card's "Non-Embedding Params" (EleutherAI/pythia-*,
    // "exact parameter counts") plus the untied input and output tables
    // (2 × vocab × hidden; vocab 50304, 6.9B 50432, 12B 50688 as their
    // config.json files say); `GPTNeoXForCausalLM` built from each config
    // on the meta device counts the same (`scripts/measure/families/NOTES.md`).
    Preset {
        id: "pythia-410m",
        name: "Pythia 410M",
        repo: "EleutherAI/pythia-410m",
        arch: pythia(1024, 24, 16, 50304),
        published_params: 405_334_016,
    },
    Preset {
        id: "pythia-1b",
        name: "Pythia 1B",
        repo: "EleutherAI/pythia-1b",
        arch: pythia(2048, 16, 8, 50304),
        published_params: 1_011_781_632,
    },
    Preset {
        id: "pythia-1.4b",
        name: "Pythia 1.4B",
        repo: "EleutherAI/pythia-1.4b",
        arch: pythia(2048, 24, 16, 50304),
        published_params: 1_414_647_808,
    },
    Preset {
        id: "pythia-2.8b",
        name: "Pythia 2.8B",
        repo: "EleutherAI/pythia-2.8b",
        arch: pythia(2560, 32, 32, 50304),
        published_params: 2_775_208_960,
    },
    Preset {
        id: "pythia-6.9b",
        name: "Pythia 6.9B",
        repo: "EleutherAI/pythia-6.9b",
        arch: pythia(4096, 32, 32, 50432),
        published_params: 6_857_302_016,
    },
    Preset {
        id: "pythia-12b",
        name: "Pythia 12B",
        repo: "EleutherAI/pythia-12b",
        arch: pythia(5120, 36, 40, 50688),
        published_params: 11_846_072_320,
    },
    Preset {
        id: "llama-20m",
        name: "Tiny Llama test model (20M)",
        repo: "vramfit ground truth: hf_configs/llama-20m.json",
        arch: dense(Llama, 512, 6, 8, 4, 64, 1408, 8192, true, 2048),
        published_params: 21_895_680,
    },
    Preset {
        id: "smollm2-135m",
        name: "SmolLM2 135M",
        repo: "HuggingFaceTB/SmolLM2-135M",
        arch: dense(Llama, 576, 30, 9, 3, 64, 1536, 49152, true, 8192),
        published_params: 134_515_008,
    },
    Preset {
        id: "smollm2-360m",
        name: "SmolLM2 360M",
        repo: "HuggingFaceTB/SmolLM2-360M",
        arch: dense(Llama, 960, 32, 15, 5, 64, 2560, 49152, true, 8192),
        published_params: 361_821_120,
    },
    Preset {
        id: "smollm2-1.7b",
        name: "SmolLM2 1.7B",
        repo: "HuggingFaceTB/SmolLM2-1.7B",
        arch: dense(Llama, 2048, 24, 32, 32, 64, 8192, 49152, true, 8192),
        published_params: 1_711_376_384,
    },
    // SmolLM3-3B: Llama's layers (NoPE on every fourth), 36 layers of 2048,
    // 16 heads and 4 key/value heads of 128, tied embeddings. Source:
    // transformers 5.23 `SmolLM3Config`'s defaults, documented as
    // HuggingFaceTB/SmolLM3-3B (`tests/fixtures/hf_configs/smollm3-3b.json`);
    // the count is `SmolLM3ForCausalLM` built from it on the meta device
    // (the Hub's 3.08 B).
    Preset {
        id: "smollm3-3b",
        name: "SmolLM3 3B",
        repo: "HuggingFaceTB/SmolLM3-3B",
        arch: Architecture {
            family: SmolLm3,
            hidden: 2048,
            layers: 36,
            heads: 16,
            kv_heads: 4,
            head_dim: 128,
            ffn: 11008,
            vocab: 128256,
            tied: true,
            positions: 32768,
            ..Architecture::BLANK
        },
        published_params: 3_075_098_624,
    },
    Preset {
        id: "tinyllama-1.1b",
        name: "TinyLlama 1.1B",
        repo: "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
        arch: dense(Llama, 2048, 22, 32, 4, 64, 5632, 32000, false, 2048),
        published_params: 1_100_048_384,
    },
    Preset {
        id: "llama3.2-1b",
        name: "Llama 3.2 1B",
        repo: "meta-llama/Llama-3.2-1B",
        arch: dense(Llama, 2048, 16, 32, 8, 64, 8192, 128256, true, 131072),
        published_params: 1_235_814_400,
    },
    Preset {
        id: "llama3.2-3b",
        name: "Llama 3.2 3B",
        repo: "meta-llama/Llama-3.2-3B",
        arch: dense(Llama, 3072, 28, 24, 8, 128, 8192, 128256, true, 131072),
        published_params: 3_212_749_824,
    },
    Preset {
        id: "llama2-7b",
        name: "Llama 2 7B",
        repo: "meta-llama/Llama-2-7b-hf",
        arch: dense(Llama, 4096, 32, 32, 32, 128, 11008, 32000, false, 4096),
        published_params: 6_738_415_616,
    },
    Preset {
        id: "llama3.1-8b",
        name: "Llama 3.1 8B",
        repo: "meta-llama/Llama-3.1-8B",
        arch: dense(Llama, 4096, 32, 32, 8, 128, 14336, 128256, false, 131072),
        published_params: 8_030_261_248,
    },
    Preset {
        id: "llama2-13b",
        name: "Llama 2 13B",
        repo: "meta-llama/Llama-2-13b-hf",
        arch: dense(Llama, 5120, 40, 40, 40, 128, 13824, 32000, false, 4096),
        published_params: 13_015_864_320,
    },
    Preset {
        id: "llama3.1-70b",
        name: "Llama 3.1 70B",
        repo: "meta-llama/Llama-3.1-70B",
        arch: dense(Llama, 8192, 80, 64, 8, 128, 28672, 128256, false, 131072),
        published_params: 70_553_706_496,
    },
    Preset {
        id: "qwen2.5-0.5b",
        name: "Qwen2.5 0.5B",
        repo: "Qwen/Qwen2.5-0.5B",
        arch: dense(Qwen2, 896, 24, 14, 2, 64, 4864, 151936, true, 32768),
        published_params: 494_032_768,
    },
    Preset {
        id: "qwen2.5-1.5b",
        name: "Qwen2.5 1.5B",
        repo: "Qwen/Qwen2.5-1.5B",
        arch: dense(Qwen2, 1536, 28, 12, 2, 128, 8960, 151936, true, 32768),
        published_params: 1_543_714_304,
    },
    Preset {
        id: "qwen2.5-3b",
        name: "Qwen2.5 3B",
        repo: "Qwen/Qwen2.5-3B",
        arch: dense(Qwen2, 2048, 36, 16, 2, 128, 11008, 151936, true, 32768),
        published_params: 3_085_938_688,
    },
    Preset {
        id: "qwen2.5-7b",
        name: "Qwen2.5 7B",
        repo: "Qwen/Qwen2.5-7B",
        arch: dense(Qwen2, 3584, 28, 28, 4, 128, 18944, 152064, false, 131072),
        published_params: 7_615_616_512,
    },
    Preset {
        id: "qwen2.5-14b",
        name: "Qwen2.5 14B",
        repo: "Qwen/Qwen2.5-14B",
        arch: dense(Qwen2, 5120, 48, 40, 8, 128, 13824, 152064, false, 131072),
        published_params: 14_770_033_664,
    },
    Preset {
        id: "mistral-7b",
        name: "Mistral 7B v0.1",
        repo: "mistralai/Mistral-7B-v0.1",
        arch: Architecture {
            sliding_window: 4096,
            sliding_layers: 32,
            ..dense(Mistral, 4096, 32, 32, 8, 128, 14336, 32000, false, 32768)
        },
        published_params: 7_241_732_096,
    },
    Preset {
        id: "mistral-nemo-12b",
        name: "Mistral NeMo 12B",
        repo: "mistralai/Mistral-Nemo-Base-2407",
        arch: dense(Mistral, 5120, 40, 32, 8, 128, 14336, 131072, false, 1024000),
        published_params: 12_247_782_400,
    },
    Preset {
        id: "phi3-mini",
        name: "Phi-3 mini (3.8B)",
        repo: "microsoft/Phi-3-mini-4k-instruct",
        arch: Architecture {
            sliding_window: 2047,
            sliding_layers: 32,
            ..dense(Phi3, 3072, 32, 32, 32, 96, 8192, 32064, false, 4096)
        },
        published_params: 3_821_079_552,
    },
    Preset {
        id: "gemma-2b",
        name: "Gemma 2B",
        repo: "google/gemma-2b",
        arch: dense(Gemma, 2048, 18, 8, 1, 256, 16384, 256000, true, 8192),
        published_params: 2_506_172_416,
    },
    Preset {
        id: "gemma-7b",
        name: "Gemma 7B",
        repo: "google/gemma-7b",
        arch: dense(Gemma, 3072, 28, 16, 16, 256, 24576, 256000, true, 8192),
        published_params: 8_537_680_896,
    },
    Preset {
        id: "mistral-7b-v0.3",
        name: "Mistral 7B v0.3",
        repo: "mistralai/Mistral-7B-v0.3",
        arch: Architecture {
            family: Mistral,
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 14336,
            vocab: 32768,
            tied: false,
            positions: 32768,
            ..Architecture::BLANK
        },
        published_params: 7_248_023_552,
    },
    Preset {
        id: "mistral-small-24b",
        name: "Mistral Small 24B (2501)",
        repo: "mistralai/Mistral-Small-24B-Base-2501",
        arch: Architecture {
            family: Mistral,
            hidden: 5120,
            layers: 40,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 32768,
            vocab: 131072,
            tied: false,
            positions: 32768,
            ..Architecture::BLANK
        },
        published_params: 23_572_403_200,
    },
    // Ministral 3 8B's language model: Mistral's layers with the query's
    // temperature, 34 layers of 4096, a 131,072-token vocabulary, untied.
    // Source: transformers 5.23 `Ministral3Config`'s defaults, documented
    // as mistralai/Ministral-3-8B-Base-2512 (`@auto_docstring(checkpoint=…)`;
    // `tests/fixtures/hf_configs/ministral3-8b.json`); the count is
    // `Ministral3ForCausalLM` built from it on the meta device (the card's
    // 8B with its 0.4B vision encoder, which is not counted).
    Preset {
        id: "ministral3-8b",
        name: "Ministral 3 8B (text)",
        repo: "mistralai/Ministral-3-8B-Base-2512",
        arch: Architecture {
            family: Ministral3,
            hidden: 4096,
            layers: 34,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 14336,
            vocab: 131072,
            tied: false,
            positions: 262144,
            ..Architecture::BLANK
        },
        published_params: 8_489_553_920,
    },
    Preset {
        id: "qwen3-0.6b",
        name: "Qwen3 0.6B",
        repo: "Qwen/Qwen3-0.6B",
        arch: Architecture {
            family: Qwen3,
            hidden: 1024,
            layers: 28,
            heads: 16,
            kv_heads: 8,
            head_dim: 128,
            ffn: 3072,
            vocab: 151936,
            tied: true,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 596_049_920,
    },
    Preset {
        id: "qwen3-1.7b",
        name: "Qwen3 1.7B",
        repo: "Qwen/Qwen3-1.7B",
        arch: Architecture {
            family: Qwen3,
            hidden: 2048,
            layers: 28,
            heads: 16,
            kv_heads: 8,
            head_dim: 128,
            ffn: 6144,
            vocab: 151936,
            tied: true,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 1_720_574_976,
    },
    Preset {
        id: "qwen3-4b",
        name: "Qwen3 4B",
        repo: "Qwen/Qwen3-4B",
        arch: Architecture {
            family: Qwen3,
            hidden: 2560,
            layers: 36,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 9728,
            vocab: 151936,
            tied: true,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 4_022_468_096,
    },
    Preset {
        id: "qwen3-8b",
        name: "Qwen3 8B",
        repo: "Qwen/Qwen3-8B",
        arch: Architecture {
            family: Qwen3,
            hidden: 4096,
            layers: 36,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 12288,
            vocab: 151936,
            tied: false,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 8_190_735_360,
    },
    Preset {
        id: "qwen3-14b",
        name: "Qwen3 14B",
        repo: "Qwen/Qwen3-14B",
        arch: Architecture {
            family: Qwen3,
            hidden: 5120,
            layers: 40,
            heads: 40,
            kv_heads: 8,
            head_dim: 128,
            ffn: 17408,
            vocab: 151936,
            tied: false,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 14_768_307_200,
    },
    Preset {
        id: "qwen3-32b",
        name: "Qwen3 32B",
        repo: "Qwen/Qwen3-32B",
        arch: Architecture {
            family: Qwen3,
            hidden: 5120,
            layers: 64,
            heads: 64,
            kv_heads: 8,
            head_dim: 128,
            ffn: 25600,
            vocab: 151936,
            tied: false,
            positions: 40960,
            ..Architecture::BLANK
        },
        published_params: 32_762_123_264,
    },
    Preset {
        id: "gemma2-2b",
        name: "Gemma 2 2B",
        repo: "google/gemma-2-2b",
        arch: Architecture {
            family: Gemma2,
            hidden: 2304,
            layers: 26,
            heads: 8,
            kv_heads: 4,
            head_dim: 256,
            ffn: 9216,
            vocab: 256000,
            tied: true,
            positions: 8192,
            sliding_window: 4096,
            sliding_layers: 13,
            ..Architecture::BLANK
        },
        published_params: 2_614_341_888,
    },
    Preset {
        id: "gemma2-9b",
        name: "Gemma 2 9B",
        repo: "google/gemma-2-9b",
        arch: Architecture {
            family: Gemma2,
            hidden: 3584,
            layers: 42,
            heads: 16,
            kv_heads: 8,
            head_dim: 256,
            ffn: 14336,
            vocab: 256000,
            tied: true,
            positions: 8192,
            sliding_window: 4096,
            sliding_layers: 21,
            ..Architecture::BLANK
        },
        published_params: 9_241_705_984,
    },
    Preset {
        id: "gemma2-27b",
        name: "Gemma 2 27B",
        repo: "google/gemma-2-27b",
        arch: Architecture {
            family: Gemma2,
            hidden: 4608,
            layers: 46,
            heads: 32,
            kv_heads: 16,
            head_dim: 128,
            ffn: 36864,
            vocab: 256000,
            tied: true,
            positions: 8192,
            sliding_window: 4096,
            sliding_layers: 23,
            ..Architecture::BLANK
        },
        published_params: 27_227_128_320,
    },
    Preset {
        id: "gemma3-270m",
        name: "Gemma 3 270M",
        repo: "google/gemma-3-270m",
        arch: Architecture {
            family: Gemma3Text,
            hidden: 640,
            layers: 18,
            heads: 4,
            kv_heads: 1,
            head_dim: 256,
            ffn: 2048,
            vocab: 262144,
            tied: true,
            positions: 32768,
            sliding_window: 512,
            sliding_layers: 15,
            ..Architecture::BLANK
        },
        published_params: 268_098_176,
    },
    Preset {
        id: "gemma3-1b",
        name: "Gemma 3 1B",
        repo: "google/gemma-3-1b-pt",
        arch: Architecture {
            family: Gemma3Text,
            hidden: 1152,
            layers: 26,
            heads: 4,
            kv_heads: 1,
            head_dim: 256,
            ffn: 6912,
            vocab: 262144,
            tied: true,
            positions: 32768,
            sliding_window: 512,
            sliding_layers: 22,
            ..Architecture::BLANK
        },
        published_params: 999_885_952,
    },
    Preset {
        id: "phi3.5-mini",
        name: "Phi-3.5 mini (3.8B)",
        repo: "microsoft/Phi-3.5-mini-instruct",
        arch: Architecture {
            family: Phi3,
            hidden: 3072,
            layers: 32,
            heads: 32,
            kv_heads: 32,
            head_dim: 96,
            ffn: 8192,
            vocab: 32064,
            tied: false,
            positions: 131072,
            sliding_window: 262144,
            sliding_layers: 32,
            ..Architecture::BLANK
        },
        published_params: 3_821_079_552,
    },
    Preset {
        id: "phi3-medium",
        name: "Phi-3 medium (14B)",
        repo: "microsoft/Phi-3-medium-4k-instruct",
        arch: Architecture {
            family: Phi3,
            hidden: 5120,
            layers: 40,
            heads: 40,
            kv_heads: 10,
            head_dim: 128,
            ffn: 17920,
            vocab: 32064,
            tied: false,
            positions: 4096,
            sliding_window: 2047,
            sliding_layers: 40,
            ..Architecture::BLANK
        },
        published_params: 13_960_238_080,
    },
    Preset {
        id: "phi4",
        name: "Phi-4 (14.7B)",
        repo: "microsoft/phi-4",
        arch: Architecture {
            family: Phi3,
            hidden: 5120,
            layers: 40,
            heads: 40,
            kv_heads: 10,
            head_dim: 128,
            ffn: 17920,
            vocab: 100352,
            tied: false,
            positions: 16384,
            ..Architecture::BLANK
        },
        published_params: 14_659_507_200,
    },
    Preset {
        id: "olmo2-1b",
        name: "OLMo 2 1B",
        repo: "allenai/OLMo-2-0425-1B",
        arch: Architecture {
            family: Olmo2,
            hidden: 2048,
            layers: 16,
            heads: 16,
            kv_heads: 16,
            head_dim: 128,
            ffn: 8192,
            vocab: 100352,
            tied: false,
            positions: 4096,
            ..Architecture::BLANK
        },
        published_params: 1_484_916_736,
    },
    Preset {
        id: "olmo2-7b",
        name: "OLMo 2 7B",
        repo: "allenai/OLMo-2-1124-7B",
        arch: Architecture {
            family: Olmo2,
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            ffn: 11008,
            vocab: 100352,
            tied: false,
            positions: 4096,
            ..Architecture::BLANK
        },
        published_params: 7_298_617_344,
    },
    Preset {
        id: "olmo2-13b",
        name: "OLMo 2 13B",
        repo: "allenai/OLMo-2-1124-13B",
        arch: Architecture {
            family: Olmo2,
            hidden: 5120,
            layers: 40,
            heads: 40,
            kv_heads: 40,
            head_dim: 128,
            ffn: 13824,
            vocab: 100352,
            tied: false,
            positions: 4096,
            ..Architecture::BLANK
        },
        published_params: 13_716_198_400,
    },
    // OLMo 3 7B: OLMo 2's layers, a 4096-token window on three layers in
    // four. Source: the config.json's values (`tests/fixtures/hf_configs/
    // olmo-3-7b.json`: hidden 4096, 32 layers and heads, ffn 11008,
    // vocabulary 100278, as loaders' copies of allenai's files give them);
    // the count is transformers 5.23's `Olmo3ForCausalLM` built from it on
    // the meta device (the Hub's 7.30 B).
    Preset {
        id: "olmo-3-7b",
        name: "OLMo 3 7B",
        repo: "allenai/Olmo-3-1025-7B",
        arch: Architecture {
            family: Olmo3,
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            ffn: 11008,
            vocab: 100278,
            tied: false,
            positions: 65536,
            sliding_window: 4096,
            sliding_layers: 24,
            ..Architecture::BLANK
        },
        published_params: 7_298_011_136,
    },
    Preset {
        id: "santacoder",
        name: "SantaCoder (1.1B)",
        repo: "bigcode/gpt_bigcode-santacoder",
        arch: Architecture {
            family: GptBigcode,
            hidden: 2048,
            layers: 24,
            heads: 16,
            kv_heads: 1,
            head_dim: 128,
            ffn: 8192,
            vocab: 49280,
            tied: true,
            positions: 2048,
            ..Architecture::BLANK
        },
        published_params: 1_124_886_528,
    },
    Preset {
        id: "starcoderbase-1b",
        name: "StarCoderBase 1B",
        repo: "bigcode/starcoderbase-1b",
        arch: Architecture {
            family: GptBigcode,
            hidden: 2048,
            layers: 24,
            heads: 16,
            kv_heads: 1,
            head_dim: 128,
            ffn: 8192,
            vocab: 49152,
            tied: true,
            positions: 8192,
            ..Architecture::BLANK
        },
        published_params: 1_137_207_296,
    },
    Preset {
        id: "starcoder",
        name: "StarCoder (15.5B)",
        repo: "bigcode/starcoder",
        arch: Architecture {
            family: GptBigcode,
            hidden: 6144,
            layers: 40,
            heads: 48,
            kv_heads: 1,
            head_dim: 128,
            ffn: 24576,
            vocab: 49152,
            tied: true,
            positions: 8192,
            ..Architecture::BLANK
        },
        published_params: 15_517_456_384,
    },
    Preset {
        id: "mixtral-8x7b",
        name: "Mixtral 8x7B",
        repo: "mistralai/Mixtral-8x7B-v0.1",
        arch: Architecture {
            family: Mixtral,
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            ffn: 14336,
            vocab: 32000,
            tied: false,
            positions: 32768,
            experts: 8,
            experts_per_token: 2,
            moe_ffn: 14336,
            ..Architecture::BLANK
        },
        published_params: 46_702_792_704,
    },
    Preset {
        id: "mixtral-8x22b",
        name: "Mixtral 8x22B",
        repo: "mistralai/Mixtral-8x22B-v0.1",
        arch: Architecture {
            family: Mixtral,
            hidden: 6144,
            layers: 56,
            heads: 48,
            kv_heads: 8,
            head_dim: 128,
            ffn: 16384,
            vocab: 32000,
            tied: false,
            positions: 65536,
            experts: 8,
            experts_per_token: 2,
            moe_ffn: 16384,
            ..Architecture::BLANK
        },
        published_params: 140_620_634_112,
    },
    Preset {
        id: "qwen1.5-moe-a2.7b",
        name: "Qwen1.5-MoE A2.7B",
        repo: "Qwen/Qwen1.5-MoE-A2.7B",
        arch: Architecture {
            family: Qwen2Moe,
            hidden: 2048,
            layers: 24,
            heads: 16,
            kv_heads: 16,
            head_dim: 128,
            ffn: 5632,
            vocab: 151936,
            tied: false,
            positions: 8192,
            experts: 60,
            experts_per_token: 4,
            moe_ffn: 1408,
            shared_experts: 4,
            ..Architecture::BLANK
        },
        published_params: 14_315_784_192,
    },
    Preset {
        id: "qwen2-57b-a14b",
        name: "Qwen2 57B-A14B (MoE)",
        repo: "Qwen/Qwen2-57B-A14B",
        arch: Architecture {
            family: Qwen2Moe,
            hidden: 3584,
            layers: 28,
            heads: 28,
            kv_heads: 4,
            head_dim: 128,
            ffn: 18944,
            vocab: 151936,
            tied: false,
            positions: 131072,
            experts: 64,
            experts_per_token: 8,
            moe_ffn: 2560,
            shared_experts: 8,
            ..Architecture::BLANK
        },
        published_params: 57_408_658_944,
    },
    Preset {
        id: "qwen3-30b-a3b",
        name: "Qwen3 30B-A3B (MoE)",
        repo: "Qwen/Qwen3-30B-A3B",
        arch: Architecture {
            family: Qwen3Moe,
            hidden: 2048,
            layers: 48,
            heads: 32,
            kv_heads: 4,
            head_dim: 128,
            ffn: 6144,
            vocab: 151936,
            tied: false,
            positions: 40960,
            experts: 128,
            experts_per_token: 8,
            moe_ffn: 768,
            ..Architecture::BLANK
        },
        published_params: 30_532_122_624,
    },
    Preset {
        id: "qwen3-235b-a22b",
        name: "Qwen3 235B-A22B (MoE)",
        repo: "Qwen/Qwen3-235B-A22B",
        arch: Architecture {
            family: Qwen3Moe,
            hidden: 4096,
            layers: 94,
            heads: 64,
            kv_heads: 4,
            head_dim: 128,
            ffn: 12288,
            vocab: 151936,
            tied: false,
            positions: 40960,
            experts: 128,
            experts_per_token: 8,
            moe_ffn: 1536,
            ..Architecture::BLANK
        },
        published_params: 235_093_634_560,
    },
    Preset {
        id: "qwen3.6-27b",
        name: "Qwen3.6 27B (hybrid)",
        repo: "Qwen/Qwen3.6-27B",
        arch: Architecture {
            family: Qwen35Text,
            ..QWEN36_27B
        },
        // The text model as transformers 5.23 loads it
        // (`Qwen3_5ForCausalLM(config.text_config).num_parameters()` on the
        // meta device: 851 tensors; the checkpoint's `mtp.*` and
        // `model.visual.*` are not loaded); the model card says 27B.
        published_params: 26_895_998_464,
    },
    Preset {
        id: "qwen3.6-35b-a3b",
        name: "Qwen3.6 35B-A3B (hybrid MoE)",
        repo: "Qwen/Qwen3.6-35B-A3B",
        arch: Architecture {
            family: Qwen35MoeText,
            hidden: 2048,
            layers: 40,
            heads: 16,
            kv_heads: 2,
            head_dim: 256,
            ffn: 512,
            vocab: 248_320,
            tied: false,
            positions: 262_144,
            experts: 256,
            experts_per_token: 8,
            moe_ffn: 512,
            shared_experts: 1,
            ..QWEN36_LINEAR_32
        },
        // `Qwen3_5MoeForCausalLM(config.text_config).num_parameters()`,
        // transformers 5.23, meta device (693 tensors); the model card
        // says 35B with the vision encoder and the MTP layer.
        published_params: 34_660_610_688,
    },
    Preset {
        id: "qwen3-next-80b-a3b",
        name: "Qwen3-Next 80B-A3B (hybrid MoE)",
        repo: "Qwen/Qwen3-Next-80B-A3B-Instruct",
        arch: Architecture {
            family: Qwen3Next,
            hidden: 2048,
            layers: 48,
            heads: 16,
            kv_heads: 2,
            head_dim: 256,
            ffn: 5120,
            vocab: 151_936,
            tied: false,
            positions: 262_144,
            experts: 512,
            experts_per_token: 10,
            moe_ffn: 512,
            shared_experts: 1,
            linear_layers: 36,
            ..QWEN36_LINEAR_32
        },
        // `Qwen3NextForCausalLM(config).num_parameters()`, transformers
        // 5.23, meta device (759 tensors, `mtp.*` not loaded); the model
        // card says 80B.
        published_params: 79_674_391_296,
    },
    Preset {
        id: "gemma4-e2b",
        name: "Gemma 4 E2B",
        repo: "google/gemma-4-E2B-it",
        arch: Architecture {
            hidden: 1536,
            layers: 35,
            heads: 8,
            kv_heads: 1,
            ffn: 6144,
            // Four sliding layers to a global one (`layer_types`).
            sliding_layers: 28,
            sliding_period: 5,
            kv_shared_layers: 20,
            double_wide: 1,
            ..GEMMA4_E
        },
        // The text model as transformers 5.23 builds it
        // (`Gemma4ForCausalLM(config.text_config).num_parameters()`, meta
        // device, 505 tensors: `scripts/measure/gemma4/params.txt`); the
        // checkpoint also stores the shared layers' k/v projections,
        // which transformers does not load, and the model card's 5.1B
        // counts the vision and audio encoders.
        published_params: 4_628_569_344,
    },
    Preset {
        id: "gemma4-e4b",
        name: "Gemma 4 E4B",
        repo: "google/gemma-4-E4B-it",
        arch: Architecture {
            hidden: 2560,
            layers: 42,
            heads: 8,
            kv_heads: 2,
            ffn: 10240,
            sliding_layers: 35,
            kv_shared_layers: 18,
            ..GEMMA4_E
        },
        // `Gemma4ForCausalLM(text_config).num_parameters()`, transformers
        // 5.23, meta device (623 tensors); the model card says 8B with the
        // encoders.
        published_params: 7_463_013_376,
    },
    Preset {
        id: "kimi-linear-48b-a3b",
        name: "Kimi Linear 48B-A3B",
        repo: "moonshotai/Kimi-Linear-48B-A3B-Instruct",
        arch: Architecture {
            family: Family::KimiLinear,
            hidden: 2304,
            layers: 27,
            heads: 32,
            kv_heads: 32,
            head_dim: 192,
            ffn: 9216,
            vocab: 163_840,
            tied: false,
            positions: 1_048_576,
            experts: 256,
            experts_per_token: 8,
            moe_ffn: 1024,
            shared_experts: 1,
            dense_layers: 1,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 128,
            // 20 KDA layers of 32 heads of 128 (`linear_attn_config`),
            // the latent attention on layers 4, 8, ..., 24 and 27
            // (1-based).
            linear_layers: 20,
            linear_k_heads: 32,
            linear_v_heads: 32,
            linear_k_dim: 128,
            linear_v_dim: 128,
            linear_conv: 4,
            ..Architecture::BLANK
        },
        // `KimiLinearForCausalLM(config).num_parameters()`, transformers
        // 5.23, meta device (`scripts/measure/families/kimi_linear/
        // transformers/params.json`); with its 26 correction-bias buffers
        // of 256, 49,122,681,728: the checkpoint's element count
        // (`SOURCES.md`) and mlx-lm's.
        published_params: 49_122_675_072,
    },
    Preset {
        id: "gemma3n-e2b",
        name: "Gemma 3n E2B",
        repo: "google/gemma-3n-E2B-it",
        arch: Architecture {
            layers: 30,
            ffn: 8192,
            sliding_layers: 24,
            kv_shared_layers: 10,
            ..GEMMA3N
        },
        // The text model as transformers 5.23 builds it
        // (`Gemma3nForCausalLM(text_config).num_parameters()`, meta device,
        // 701 tensors: `scripts/measure/families/gemma3n/params.txt`); the
        // checkpoint also stores the 10 shared layers' k/v projections and
        // key norms (20,974,080), which transformers does not load.
        published_params: 4_435_182_688,
    },
    Preset {
        id: "gemma3n-e4b",
        name: "Gemma 3n E4B",
        repo: "google/gemma-3n-E4B-it",
        arch: Architecture {
            layers: 35,
            ffn: 16384,
            sliding_layers: 28,
            kv_shared_layers: 15,
            ..GEMMA3N
        },
        // `Gemma3nForCausalLM(text_config).num_parameters()`, transformers
        // 5.23, meta device (806 tensors).
        published_params: 6_835_235_568,
    },
    Preset {
        id: "gemma4-12b",
        name: "Gemma 4 12B",
        repo: "google/gemma-4-12B-it",
        arch: Architecture {
            family: Family::Gemma4UnifiedText,
            hidden: 3840,
            layers: 48,
            heads: 16,
            kv_heads: 8,
            global_kv_heads: 1,
            ffn: 15360,
            sliding_layers: 40,
            ..GEMMA4_LARGE
        },
        // `Gemma4UnifiedForCausalLM(text_config).num_parameters()`,
        // transformers 5.23, meta device (618 tensors: its config.json is
        // `gemma4_unified`, transformers 5.10.0.dev0).
        published_params: 11_907_350_272,
    },
    Preset {
        id: "gemma4-26b-a4b",
        name: "Gemma 4 26B-A4B (MoE)",
        repo: "google/gemma-4-26B-A4B-it",
        arch: Architecture {
            hidden: 2816,
            layers: 30,
            heads: 16,
            kv_heads: 8,
            global_kv_heads: 2,
            ffn: 2112,
            experts: 128,
            experts_per_token: 8,
            moe_ffn: 704,
            sliding_layers: 25,
            ..GEMMA4_LARGE
        },
        // `Gemma4ForCausalLM(text_config).num_parameters()`, transformers
        // 5.23, meta device (627 tensors); the model card says 25.2B.
        published_params: 25_233_141_760,
    },
    Preset {
        id: "gemma4-31b",
        name: "Gemma 4 31B",
        repo: "google/gemma-4-31B-it",
        arch: Architecture {
            hidden: 5376,
            layers: 60,
            heads: 32,
            kv_heads: 16,
            global_kv_heads: 4,
            ffn: 21504,
            sliding_layers: 50,
            ..GEMMA4_LARGE
        },
        // `Gemma4ForCausalLM(text_config).num_parameters()`, transformers
        // 5.23, meta device (772 tensors); the model card says 30.7B.
        published_params: 30_697_345_280,
    },
    Preset {
        id: "deepseek-v2-lite",
        name: "DeepSeek-V2-Lite (16B)",
        repo: "deepseek-ai/DeepSeek-V2-Lite",
        arch: Architecture {
            family: DeepseekV2,
            hidden: 2048,
            layers: 27,
            heads: 16,
            kv_heads: 16,
            head_dim: 192,
            ffn: 10944,
            vocab: 102400,
            tied: false,
            positions: 163840,
            experts: 64,
            experts_per_token: 6,
            moe_ffn: 1408,
            shared_experts: 2,
            dense_layers: 1,
            q_lora_rank: 0,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 128,
            ..Architecture::BLANK
        },
        published_params: 15_706_484_224,
    },
    Preset {
        id: "deepseek-v2",
        name: "DeepSeek-V2 (236B)",
        repo: "deepseek-ai/DeepSeek-V2",
        arch: Architecture {
            family: DeepseekV2,
            hidden: 5120,
            layers: 60,
            heads: 128,
            kv_heads: 128,
            head_dim: 192,
            ffn: 12288,
            vocab: 102400,
            tied: false,
            positions: 163840,
            experts: 160,
            experts_per_token: 6,
            moe_ffn: 1536,
            shared_experts: 2,
            dense_layers: 1,
            q_lora_rank: 1536,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 128,
            ..Architecture::BLANK
        },
        published_params: 235_741_434_880,
    },
    Preset {
        id: "moonlight-16b-a3b",
        name: "Moonlight 16B-A3B",
        repo: "moonshotai/Moonlight-16B-A3B",
        arch: Architecture {
            family: DeepseekV3,
            hidden: 2048,
            layers: 27,
            heads: 16,
            kv_heads: 16,
            head_dim: 192,
            ffn: 11264,
            vocab: 163840,
            tied: false,
            positions: 8192,
            experts: 64,
            experts_per_token: 6,
            moe_ffn: 1408,
            shared_experts: 2,
            dense_layers: 1,
            q_lora_rank: 0,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 128,
            ..Architecture::BLANK
        },
        published_params: 15_960_108_544,
    },
    Preset {
        id: "deepseek-v3",
        name: "DeepSeek-V3 (671B)",
        repo: "deepseek-ai/DeepSeek-V3",
        arch: DEEPSEEK_V3,
        published_params: 671_026_404_352,
    },
    // Kimi K2: DeepSeek-V3's architecture with 384 routed experts, 64
    // heads and one dense layer; its config says `model_type: "kimi_k2"`,
    // read as DeepSeek-V3 (`hf_config::ALIASES`). Source: the published
    // config.json (`tests/fixtures/hf_configs/kimi-k2.json`); the count is
    // transformers 5.23's `DeepseekV3ForCausalLM` built from it on the meta
    // device (1,026,408,209,408; the card's "1T total", the Hub's 1.03 T).
    Preset {
        id: "kimi-k2",
        name: "Kimi K2 (1T)",
        repo: "moonshotai/Kimi-K2-Instruct-0905",
        arch: KIMI_K2,
        published_params: 1_026_408_209_408,
    },
    // Kimi K2.5: a vision-language checkpoint (`kimi_k25`) whose
    // `text_config` is Kimi K2's architecture to the number (61 layers,
    // hidden 7168, 64 heads, 384 experts top-8, q/kv LoRA ranks 1536/512,
    // 262144 positions), so the same text model and count; its vision
    // tower is not counted (a config.json import says `multimodal`).
    // Source: the K2.5 `text_config` as loaders' fixtures copy it
    // (`tests/arch.rs`, `kimi_k25_reads_its_text_config_as_deepseek_v3`).
    Preset {
        id: "kimi-k2.5",
        name: "Kimi K2.5 (1T, text)",
        repo: "moonshotai/Kimi-K2.5",
        arch: KIMI_K2,
        published_params: 1_026_408_209_408,
    },
    // GLM-4.5-Air and GLM-4.6: grouped-query attention with q/k/v biases
    // and rotary positions on 64 of each head's 128 channels, DeepSeek-V3's
    // experts. Source: the published config.json files
    // (`tests/fixtures/hf_configs/glm-4.5-air.json`, `glm-4.6.json`); the
    // counts are transformers 5.23's `Glm4MoeForCausalLM` built from them
    // on the meta device, without the MTP layer transformers does not
    // build (`_keys_to_ignore_on_load_unexpected`: `model.layers.46.*`,
    // `model.layers.92.*`): the cards' "106B" and "355B" total, the Hub's
    // 110 B and 357 B with it.
    Preset {
        id: "glm-4.5-air",
        name: "GLM-4.5-Air (106B-A12B)",
        repo: "zai-org/GLM-4.5-Air",
        arch: Architecture {
            family: Glm4Moe,
            hidden: 4096,
            layers: 46,
            heads: 96,
            kv_heads: 8,
            head_dim: 128,
            ffn: 10944,
            vocab: 151552,
            tied: false,
            positions: 131072,
            experts: 128,
            experts_per_token: 8,
            moe_ffn: 1408,
            shared_experts: 1,
            dense_layers: 1,
            rope_dim: 64,
            ..Architecture::BLANK
        },
        published_params: 106_852_245_504,
    },
    // GLM-4.7-Flash: DeepSeek-V3's latent attention (20 heads of 192 + 64,
    // values of 256, q and kv latents of 768 and 512) over 47 layers, the
    // first dense, 64 routed experts (4 a token) of 1536 and a shared one.
    // Source: the published numbers (`tests/fixtures/hf_configs/glm-4.7-flash.json`,
    // written from the fields vLLM's `glm4_moe_lite` config test and
    // Megatron-Bridge list for zai-org/GLM-4.7-Flash); the count is
    // transformers 5.23's `Glm4MoeLiteForCausalLM` built from it on the
    // meta device, without the MTP layer it does not build
    // (`_keys_to_ignore_on_load_unexpected`: `model.layers.47.*`): the
    // card's "30B-A3B", the Hub's 31 B with it.
    Preset {
        id: "glm-4.7-flash",
        name: "GLM-4.7-Flash (30B-A3B)",
        repo: "zai-org/GLM-4.7-Flash",
        arch: Architecture {
            family: Glm4MoeLite,
            hidden: 2048,
            layers: 47,
            heads: 20,
            kv_heads: 20,
            head_dim: 256,
            ffn: 10240,
            vocab: 154880,
            tied: false,
            positions: 202752,
            experts: 64,
            experts_per_token: 4,
            moe_ffn: 1536,
            shared_experts: 1,
            dense_layers: 1,
            q_lora_rank: 768,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 256,
            ..Architecture::BLANK
        },
        published_params: 29_943_390_976,
    },
    // Mistral Small 4: latent attention (32 heads of 64 + 64, values of
    // 128, q and kv latents of 1024 and 256) over 36 layers, every one
    // with 128 routed experts (4 a token) of 2048 and a shared one. Source:
    // transformers 5.23's `Mistral4Config` defaults, documented against
    // mistralai/Mistral-Small-4-119B-2603 and checked against public
    // copies of its numbers (`scripts/measure/families/mistral4/
    // transformers/SOURCES.md`; no verbatim copy of its config.json was
    // found); the count is
    // transformers 5.23's `Mistral4ForCausalLM` built from it on the meta
    // device (`scripts/measure/families/mistral4/transformers/`), the
    // card's "119B" without the vision tower.
    Preset {
        id: "mistral-small-4",
        name: "Mistral Small 4 (119B MoE)",
        repo: "mistralai/Mistral-Small-4-119B-2603",
        arch: Architecture {
            family: Mistral4,
            hidden: 4096,
            layers: 36,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            ffn: 12288,
            vocab: 131072,
            tied: false,
            positions: 1_048_576,
            experts: 128,
            experts_per_token: 4,
            moe_ffn: 2048,
            shared_experts: 1,
            q_lora_rank: 1024,
            kv_lora_rank: 256,
            rope_dim: 64,
            v_head_dim: 128,
            ..Architecture::BLANK
        },
        published_params: 118_972_826_624,
    },
    // Mistral Large 3: DeepSeek-V3's widths (128 heads of 128 + 64, q and
    // kv latents of 1536 and 512) over 61 layers, the first 3 dense, 128
    // routed experts (4 a token) of 4096 and a shared one. Its repository
    // has Mistral's `params.json`, no config.json: read as transformers
    // 5.23's `mistral4` (softmax routing and the query temperature, as vLLM
    // runs it), translated field by field as Unsloth's
    // `mistral_params_to_mistral4_config` does (`SOURCES.md`); the count
    // is `Mistral4ForCausalLM` built from it on the meta device: the
    // card's 673B language model, without its 2.5B vision encoder.
    Preset {
        id: "mistral-large-3",
        name: "Mistral Large 3 (675B MoE)",
        repo: "mistralai/Mistral-Large-3-675B-Instruct-2512",
        arch: Architecture {
            family: Mistral4,
            hidden: 7168,
            layers: 61,
            heads: 128,
            kv_heads: 128,
            head_dim: 192,
            ffn: 16384,
            vocab: 131072,
            tied: false,
            positions: 294_912,
            experts: 128,
            experts_per_token: 4,
            moe_ffn: 4096,
            shared_experts: 1,
            dense_layers: 3,
            q_lora_rank: 1536,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 128,
            ..Architecture::BLANK
        },
        published_params: 673_421_089_792,
    },
    // DeepSeek-V3.2: DeepSeek-V3's shapes with DeepSeek Sparse Attention's
    // indexer (64 heads of 128) in every layer. Source: the published
    // config.json (`tests/fixtures/hf_configs/deepseek-v3.2.json`,
    // `scripts/measure/families/dsa/configs/SOURCES.md`); the count is
    // transformers 5.23's `DeepseekV32ForCausalLM` built from it on the
    // meta device, without the MTP layer it does not build (671,877,929,216:
    // with it, its biases and the FP8 scales, the checkpoint's
    // 685,396,921,376 elements, `dsa/transformers/`).
    Preset {
        id: "deepseek-v3.2",
        name: "DeepSeek-V3.2 (685B)",
        repo: "deepseek-ai/DeepSeek-V3.2",
        arch: Architecture {
            family: DeepseekV32,
            index_heads: 64,
            index_head_dim: 128,
            index_topk: 2048,
            ..DEEPSEEK_V3
        },
        published_params: 671_877_929_216,
    },
    // GLM-5.1: 78 layers of 6144, the first 3 dense, latent attention of
    // 64 heads (192 + 64, values of 256, q and kv latents of 2048 and 512),
    // 256 routed experts (8 a token) of 2048 and a shared one, an indexer
    // of 32 heads of 128 in every layer. Source: the published config.json
    // (`tests/fixtures/hf_configs/glm-5.1.json`); the count is transformers
    // 5.23's `GlmMoeDsaForCausalLM` on the meta device, without the MTP
    // layer (with it and the correction biases, the checkpoint's
    // 753,864,139,008 elements).
    Preset {
        id: "glm-5.1",
        name: "GLM-5.1 (744B)",
        repo: "zai-org/GLM-5.1",
        arch: Architecture {
            family: GlmMoeDsa,
            hidden: 6144,
            layers: 78,
            heads: 64,
            kv_heads: 64,
            head_dim: 256,
            ffn: 12288,
            vocab: 154880,
            tied: false,
            positions: 202752,
            experts: 256,
            experts_per_token: 8,
            moe_ffn: 2048,
            shared_experts: 1,
            dense_layers: 3,
            q_lora_rank: 2048,
            kv_lora_rank: 512,
            rope_dim: 64,
            v_head_dim: 256,
            index_heads: 32,
            index_head_dim: 128,
            index_topk: 2048,
            ..Architecture::BLANK
        },
        published_params: 743_911_199_232,
    },
    Preset {
        id: "glm-4.6",
        name: "GLM-4.6 (355B-A32B)",
        repo: "zai-org/GLM-4.6",
        arch: Architecture {
            family: Glm4Moe,
            hidden: 5120,
            layers: 92,
            heads: 96,
            kv_heads: 8,
            head_dim: 128,
            ffn: 12288,
            vocab: 151552,
            tied: false,
            positions: 202752,
            experts: 160,
            experts_per_token: 8,
            moe_ffn: 1536,
            shared_experts: 1,
            dense_layers: 3,
            rope_dim: 64,
            qk_norm: 1,
            ..Architecture::BLANK
        },
        published_params: 352_797_814_784,
    },
    // MiniMax-M2: 62 layers of grouped-query attention (48 heads, 8
    // key/value heads of 128, rotary on 64) and 256 routed experts (8 per
    // token) of 1536. Source: the published config.json
    // (`tests/fixtures/hf_configs/minimax-m2.json`); the count is
    // transformers 5.23's `MiniMaxM2ForCausalLM` built from it on the meta
    // device, without the MTP modules it does not build (the Hub's 229 B).
    Preset {
        id: "minimax-m2",
        name: "MiniMax-M2 (230B-A10B)",
        repo: "MiniMaxAI/MiniMax-M2",
        arch: Architecture {
            family: MinimaxM2,
            hidden: 3072,
            layers: 62,
            heads: 48,
            kv_heads: 8,
            head_dim: 128,
            ffn: 1536,
            vocab: 200064,
            tied: false,
            positions: 196608,
            experts: 256,
            experts_per_token: 8,
            moe_ffn: 1536,
            rope_dim: 64,
            ..Architecture::BLANK
        },
        published_params: 228_689_748_992,
    },
    // `text_config` of `meta-llama/Llama-4-Scout-17B-16E-Instruct`
    // (`scripts/measure/families/llama4/scout-text.json`); transformers
    // 5.23's `Llama4ForCausalLM` built from it on the meta device (579
    // tensors, the language model without the vision encoder the
    // checkpoint's 109B counts).
    Preset {
        id: "llama4-scout",
        name: "Llama 4 Scout (109B-A17B)",
        repo: "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        arch: Architecture {
            positions: 10485760,
            experts: 16,
            qk_norm: 1,
            ..LLAMA4
        },
        published_params: 107_769_861_120,
    },
    // `text_config` of `meta-llama/Llama-4-Maverick-17B-128E-Instruct`
    // (`scripts/measure/families/llama4/maverick-text.json`): Scout's
    // layers with 128 experts on every other layer (`interleave_moe_layer_step`
    // 2), a dense MLP of 16384 on the others, no q/k norm; transformers
    // 5.23's `Llama4ForCausalLM` built from it on the meta device (507
    // tensors; the checkpoint's 400B adds the vision encoder).
    Preset {
        id: "llama4-maverick",
        name: "Llama 4 Maverick (400B-A17B)",
        repo: "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        arch: Architecture {
            positions: 1048576,
            experts: 128,
            moe_step: 2,
            ..LLAMA4
        },
        published_params: 400_711_848_960,
    },
    // LFM2 (`scripts/measure/families/lfm2/lfm2-*.json`, the published
    // configs): 16 layers, attention on 2, 5, 8, 10, 12 and 14
    // (`full_attn_idxs`), short convolutions of 3 on the other 10, GQA with
    // 8 key/value heads of 64, the MLP's `block_ff_dim` adjusted (12288 ->
    // 8192, 6656 -> 4608), a 65,536-token vocabulary, tied; transformers
    // 5.23's `Lfm2ForCausalLM` built from each on the meta device (148
    // tensors, `lfm2/params.txt`).
    Preset {
        id: "lfm2-350m",
        name: "LFM2 350M (hybrid)",
        repo: "LiquidAI/LFM2-350M",
        arch: Architecture {
            hidden: 1024,
            heads: 16,
            ffn: 4608,
            ..LFM2_1_2B
        },
        published_params: 354_483_968,
    },
    Preset {
        id: "lfm2-1.2b",
        name: "LFM2 1.2B (hybrid)",
        repo: "LiquidAI/LFM2-1.2B",
        arch: LFM2_1_2B,
        published_params: 1_170_340_608,
    },
    // LFM2-8B-A1B (`scripts/measure/families/lfm2/moe_lfm2-8b-a1b.json`,
    // the published config): 24 layers, attention on 2, 6, 10, 14, 18
    // and 21, short convolutions on the other 18, the first 2 layers dense
    // (7168), 32 experts of 1792, 4 a token, in the others; transformers
    // 5.23's `Lfm2MoeForCausalLM` on the meta device (`lfm2/moe_params.txt`;
    // the expert biases are buffers, not parameters).
    Preset {
        id: "lfm2-8b-a1b",
        name: "LFM2 8B-A1B (hybrid MoE)",
        repo: "LiquidAI/LFM2-8B-A1B",
        arch: Architecture {
            family: Lfm2Moe,
            layers: 24,
            ffn: 7168,
            experts: 32,
            experts_per_token: 4,
            moe_ffn: 1792,
            dense_layers: 2,
            linear_layers: 18,
            ..LFM2_1_2B
        },
        published_params: 8_339_929_856,
    },
    // Granite 4.0-H (`scripts/measure/families/granite_hybrid/*.json`, the
    // configs reconstructed from public copies): Mamba-2 hybrids with
    // attention on 4 layers;
    // Tiny and Small have routed experts beside a shared MLP twice an
    // expert's width; transformers 5.23's `GraniteMoeHybridForCausalLM` on
    // the meta device (`granite_hybrid/params.txt`).
    Preset {
        id: "granite-4.0-h-350m",
        name: "Granite 4.0-H 350M (hybrid)",
        repo: "ibm-granite/granite-4.0-h-350m",
        arch: Architecture {
            hidden: 768,
            layers: 32,
            heads: 12,
            kv_heads: 4,
            ffn: 2048,
            positions: 32_768,
            linear_layers: 28,
            linear_v_heads: 48,
            linear_v_dim: 32,
            ..GRANITE_H_MICRO
        },
        published_params: 340_332_224,
    },
    Preset {
        id: "granite-4.0-h-1b",
        name: "Granite 4.0-H 1B (hybrid)",
        repo: "ibm-granite/granite-4.0-h-1b",
        arch: Architecture {
            hidden: 1536,
            heads: 12,
            kv_heads: 4,
            head_dim: 128,
            ffn: 4096,
            linear_v_heads: 48,
            ..GRANITE_H_MICRO
        },
        published_params: 1_461_538_368,
    },
    Preset {
        id: "granite-4.0-h-micro",
        name: "Granite 4.0-H Micro 3B (hybrid)",
        repo: "ibm-granite/granite-4.0-h-micro",
        arch: GRANITE_H_MICRO,
        published_params: 3_191_396_096,
    },
    Preset {
        id: "granite-4.0-h-tiny",
        name: "Granite 4.0-H Tiny 7B-A1B (hybrid MoE)",
        repo: "ibm-granite/granite-4.0-h-tiny",
        arch: Architecture {
            hidden: 1536,
            heads: 12,
            kv_heads: 4,
            head_dim: 128,
            ffn: 512,
            experts: 64,
            experts_per_token: 6,
            moe_ffn: 512,
            shared_experts: 2,
            linear_v_heads: 48,
            ..GRANITE_H_MICRO
        },
        published_params: 6_939_037_248,
    },
    Preset {
        id: "granite-4.0-h-small",
        name: "Granite 4.0-H Small 32B-A9B (hybrid MoE)",
        repo: "ibm-granite/granite-4.0-h-small",
        arch: Architecture {
            hidden: 4096,
            head_dim: 128,
            ffn: 768,
            experts: 72,
            experts_per_token: 10,
            moe_ffn: 768,
            shared_experts: 2,
            linear_v_heads: 128,
            ..GRANITE_H_MICRO
        },
        published_params: 32_207_337_984,
    },
    // Nemotron-H: the counts are transformers 5.23's `NemotronHForCausalLM`
    // on the meta device from each config
    // (`scripts/measure/families/nemotron_h/params.txt`).
    Preset {
        id: "nemotron-nano-9b-v2",
        name: "Nemotron Nano 2 9B (hybrid)",
        repo: "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        arch: NEMOTRON_NANO_9B,
        published_params: 8_888_227_328,
    },
    Preset {
        id: "nemotron-nano-12b-v2",
        name: "Nemotron Nano 2 12B (hybrid)",
        repo: "nvidia/NVIDIA-Nemotron-Nano-12B-v2",
        arch: Architecture {
            hidden: 5120,
            layers: 62,
            ffn: 20480,
            linear_layers: 28,
            ffn_layers: 28,
            ..NEMOTRON_NANO_9B
        },
        published_params: 12_310_001_152,
    },
    Preset {
        id: "nemotron-h-8b",
        name: "Nemotron-H 8B (hybrid)",
        repo: "nvidia/Nemotron-H-8B-Base-8K",
        arch: Architecture {
            hidden: 4096,
            layers: 52,
            heads: 32,
            ffn: 21504,
            positions: 8192,
            linear_layers: 24,
            ffn_layers: 24,
            linear_v_dim: 64,
            ..NEMOTRON_NANO_9B
        },
        published_params: 8_100_852_736,
    },
    Preset {
        id: "nemotron-h-47b",
        name: "Nemotron-H 47B (hybrid)",
        repo: "nvidia/Nemotron-H-47B-Base-8K",
        arch: Architecture {
            hidden: 8192,
            layers: 98,
            heads: 64,
            ffn: 30720,
            positions: 8192,
            linear_layers: 45,
            ffn_layers: 48,
            linear_v_heads: 256,
            linear_k_dim: 256,
            linear_v_dim: 64,
            ..NEMOTRON_NANO_9B
        },
        published_params: 46_791_554_816,
    },
    // 52 layers of 2688: 23 Mamba-2 (64 heads of 64, a state of 128, 8
    // groups), 23 MoE layers (128 experts of 1856, 6 a token, a shared
    // expert of 3712) and 6 attention layers (32 heads and 2 key/value
    // heads of 128).
    Preset {
        id: "nemotron-3-nano-30b-a3b",
        name: "Nemotron 3 Nano 30B-A3B (hybrid MoE)",
        repo: "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        arch: Architecture {
            hidden: 2688,
            layers: 52,
            heads: 32,
            kv_heads: 2,
            ffn: 1856,
            positions: 262_144,
            linear_layers: 23,
            ffn_layers: 23,
            linear_v_heads: 64,
            linear_v_dim: 64,
            experts: 128,
            experts_per_token: 6,
            moe_ffn: 1856,
            shared_experts: 2,
            ..NEMOTRON_NANO_9B
        },
        published_params: 31_577_937_344,
    },
    Preset {
        id: "gpt-oss-20b",
        name: "gpt-oss 20B",
        repo: "openai/gpt-oss-20b",
        arch: Architecture {
            family: GptOss,
            hidden: 2880,
            layers: 24,
            heads: 64,
            kv_heads: 8,
            head_dim: 64,
            ffn: 2880,
            vocab: 201088,
            tied: false,
            positions: 131072,
            experts: 32,
            experts_per_token: 4,
            moe_ffn: 2880,
            sliding_window: 128,
            sliding_layers: 12,
            ..Architecture::BLANK
        },
        published_params: 20_914_757_184,
    },
    Preset {
        id: "gpt-oss-120b",
        name: "gpt-oss 120B",
        repo: "openai/gpt-oss-120b",
        arch: Architecture {
            family: GptOss,
            hidden: 2880,
            layers: 36,
            heads: 64,
            kv_heads: 8,
            head_dim: 64,
            ffn: 2880,
            vocab: 201088,
            tied: false,
            positions: 131072,
            experts: 128,
            experts_per_token: 4,
            moe_ffn: 2880,
            sliding_window: 128,
            sliding_layers: 18,
            ..Architecture::BLANK
        },
        published_params: 116_829_156_672,
    },
];

/// The preset with this id.
pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The id of the default model: Qwen2.5-1.5B, the seed article's example.
pub const DEFAULT_PRESET: &str = "qwen2.5-1.5b";

/// The default model's preset.
pub fn default_preset() -> &'static Preset {
    preset(DEFAULT_PRESET).unwrap_or(&PRESETS[0])
}
