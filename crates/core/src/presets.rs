//! Popular models as presets: each one's architecture from its `config.json`
//! on the Hugging Face Hub, and its published parameter count, which the
//! architecture must reproduce exactly (tested).

use crate::arch::{Architecture, Family};

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

/// A Llama-like architecture (rotary positions, trained for `positions`
/// tokens).
#[allow(clippy::too_many_arguments)]
pub(crate) const fn llama_like(
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
    }
}

use Family::{Gemma, Llama, Mistral, Phi3, Qwen2};

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
    Preset {
        id: "llama-20m",
        name: "Tiny Llama test model (20M)",
        repo: "vramfit ground truth: hf_configs/llama-20m.json",
        arch: llama_like(Llama, 512, 6, 8, 4, 64, 1408, 8192, true, 2048),
        published_params: 21_895_680,
    },
    Preset {
        id: "smollm2-135m",
        name: "SmolLM2 135M",
        repo: "HuggingFaceTB/SmolLM2-135M",
        arch: llama_like(Llama, 576, 30, 9, 3, 64, 1536, 49152, true, 8192),
        published_params: 134_515_008,
    },
    Preset {
        id: "smollm2-360m",
        name: "SmolLM2 360M",
        repo: "HuggingFaceTB/SmolLM2-360M",
        arch: llama_like(Llama, 960, 32, 15, 5, 64, 2560, 49152, true, 8192),
        published_params: 361_821_120,
    },
    Preset {
        id: "smollm2-1.7b",
        name: "SmolLM2 1.7B",
        repo: "HuggingFaceTB/SmolLM2-1.7B",
        arch: llama_like(Llama, 2048, 24, 32, 32, 64, 8192, 49152, true, 8192),
        published_params: 1_711_376_384,
    },
    Preset {
        id: "tinyllama-1.1b",
        name: "TinyLlama 1.1B",
        repo: "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
        arch: llama_like(Llama, 2048, 22, 32, 4, 64, 5632, 32000, false, 2048),
        published_params: 1_100_048_384,
    },
    Preset {
        id: "llama3.2-1b",
        name: "Llama 3.2 1B",
        repo: "meta-llama/Llama-3.2-1B",
        arch: llama_like(Llama, 2048, 16, 32, 8, 64, 8192, 128256, true, 131072),
        published_params: 1_235_814_400,
    },
    Preset {
        id: "llama3.2-3b",
        name: "Llama 3.2 3B",
        repo: "meta-llama/Llama-3.2-3B",
        arch: llama_like(Llama, 3072, 28, 24, 8, 128, 8192, 128256, true, 131072),
        published_params: 3_212_749_824,
    },
    Preset {
        id: "llama2-7b",
        name: "Llama 2 7B",
        repo: "meta-llama/Llama-2-7b-hf",
        arch: llama_like(Llama, 4096, 32, 32, 32, 128, 11008, 32000, false, 4096),
        published_params: 6_738_415_616,
    },
    Preset {
        id: "llama3.1-8b",
        name: "Llama 3.1 8B",
        repo: "meta-llama/Llama-3.1-8B",
        arch: llama_like(Llama, 4096, 32, 32, 8, 128, 14336, 128256, false, 131072),
        published_params: 8_030_261_248,
    },
    Preset {
        id: "llama2-13b",
        name: "Llama 2 13B",
        repo: "meta-llama/Llama-2-13b-hf",
        arch: llama_like(Llama, 5120, 40, 40, 40, 128, 13824, 32000, false, 4096),
        published_params: 13_015_864_320,
    },
    Preset {
        id: "llama3.1-70b",
        name: "Llama 3.1 70B",
        repo: "meta-llama/Llama-3.1-70B",
        arch: llama_like(Llama, 8192, 80, 64, 8, 128, 28672, 128256, false, 131072),
        published_params: 70_553_706_496,
    },
    Preset {
        id: "qwen2.5-0.5b",
        name: "Qwen2.5 0.5B",
        repo: "Qwen/Qwen2.5-0.5B",
        arch: llama_like(Qwen2, 896, 24, 14, 2, 64, 4864, 151936, true, 32768),
        published_params: 494_032_768,
    },
    Preset {
        id: "qwen2.5-1.5b",
        name: "Qwen2.5 1.5B",
        repo: "Qwen/Qwen2.5-1.5B",
        arch: llama_like(Qwen2, 1536, 28, 12, 2, 128, 8960, 151936, true, 32768),
        published_params: 1_543_714_304,
    },
    Preset {
        id: "qwen2.5-3b",
        name: "Qwen2.5 3B",
        repo: "Qwen/Qwen2.5-3B",
        arch: llama_like(Qwen2, 2048, 36, 16, 2, 128, 11008, 151936, true, 32768),
        published_params: 3_085_938_688,
    },
    Preset {
        id: "qwen2.5-7b",
        name: "Qwen2.5 7B",
        repo: "Qwen/Qwen2.5-7B",
        arch: llama_like(Qwen2, 3584, 28, 28, 4, 128, 18944, 152064, false, 131072),
        published_params: 7_615_616_512,
    },
    Preset {
        id: "qwen2.5-14b",
        name: "Qwen2.5 14B",
        repo: "Qwen/Qwen2.5-14B",
        arch: llama_like(Qwen2, 5120, 48, 40, 8, 128, 13824, 152064, false, 131072),
        published_params: 14_770_033_664,
    },
    Preset {
        id: "mistral-7b",
        name: "Mistral 7B v0.1",
        repo: "mistralai/Mistral-7B-v0.1",
        arch: llama_like(Mistral, 4096, 32, 32, 8, 128, 14336, 32000, false, 32768),
        published_params: 7_241_732_096,
    },
    Preset {
        id: "mistral-nemo-12b",
        name: "Mistral NeMo 12B",
        repo: "mistralai/Mistral-Nemo-Base-2407",
        arch: llama_like(Mistral, 5120, 40, 32, 8, 128, 14336, 131072, false, 1024000),
        published_params: 12_247_782_400,
    },
    Preset {
        id: "phi3-mini",
        name: "Phi-3 mini (3.8B)",
        repo: "microsoft/Phi-3-mini-4k-instruct",
        arch: llama_like(Phi3, 3072, 32, 32, 32, 96, 8192, 32064, false, 4096),
        published_params: 3_821_079_552,
    },
    Preset {
        id: "gemma-2b",
        name: "Gemma 2B",
        repo: "google/gemma-2b",
        arch: llama_like(Gemma, 2048, 18, 8, 1, 256, 16384, 256000, true, 8192),
        published_params: 2_506_172_416,
    },
    Preset {
        id: "gemma-7b",
        name: "Gemma 7B",
        repo: "google/gemma-7b",
        arch: llama_like(Gemma, 3072, 28, 16, 16, 256, 24576, 256000, true, 8192),
        published_params: 8_537_680_896,
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
