//! One description per model family. Everything vramfit knows about how a
//! family is built lives in its [`Spec`]: the parameter tensors (and so the
//! parameter count, the tensor count, the largest tensor, LoRA's adapters,
//! Adafactor's state and the optimizer's temporaries) and what its layers
//! save for backward (the ledger reads the same spec).
//!
//! Adding a family: add its variant to [`Family`] (the `model_type` name
//! transformers uses), its arm in [`Family::spec`] (the compiler points at
//! every other place that must learn it), its presets with their published
//! parameter counts, and measured rows in the test fixtures.

use crate::choice::choice_enum;

choice_enum! {
    /// A model family: transformers' `model_type`.
    pub enum Family {
        /// GPT-2: learned positions, LayerNorm with bias, fused qkv `Conv1D`
        /// with biases, Python `gelu_new` MLP, dropout 0.1.
        Gpt2 = "gpt2", "GPT-2",
        /// Llama: RMSNorm, RoPE, q/k/v/o without bias, gated SiLU MLP, GQA.
        Llama = "llama", "Llama",
        /// Mistral: Llama with sliding-window attention (the same memory:
        /// SDPA keeps no scores, eager masks full scores).
        Mistral = "mistral", "Mistral",
        /// Qwen2 / Qwen2.5: Llama with biases on q, k and v.
        Qwen2 = "qwen2", "Qwen2",
        /// Phi-3 / Phi-4: Llama with fused `qkv_proj` and `gate_up_proj`.
        Phi3 = "phi3", "Phi-3",
        /// Gemma: GeGLU, (1 + w) RMSNorm in fp32, a scaled embedding.
        Gemma = "gemma", "Gemma",
    }
}

/// How positions enter the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// A learned table of `positions` rows added to the embedding (GPT-2):
    /// a sequence cannot be longer than the table.
    Learned,
    /// Rotary embeddings: `positions` is the trained context length (0 if
    /// unknown); longer sequences run (with rope scaling).
    Rotary,
}

/// The normalisation layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// `nn.LayerNorm` with weight and bias.
    LayerNorm,
    /// RMSNorm (`x.float()`, `pow(2).mean`, `rsqrt`, `weight * x.to(dtype)`).
    Rms,
    /// Gemma's RMSNorm: normalised in fp32, times `(1 + weight.float())`.
    RmsPlusOne,
}

/// How q, k and v are projected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qkv {
    /// `q_proj`, `k_proj`, `v_proj`.
    Separate,
    /// One linear to q, k and v (Phi-3's `qkv_proj`, GPT-2's `c_attn`).
    Fused,
}

/// Which attention projections carry a bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttnBias {
    None,
    /// q, k and v (Qwen2).
    Qkv,
    /// q, k, v and the output projection (GPT-2).
    All,
}

/// How a layer's modules are named and registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `GPT2Block`: `ln_1`, `attn` (`c_attn`, `c_proj`), `ln_2`, `mlp`
    /// (`c_fc`, `c_proj`): `Conv1D` modules, no GQA, `heads × head_dim =
    /// hidden`.
    Gpt2,
    /// `LlamaDecoderLayer`: `self_attn`, `mlp`, then the norms.
    Llama,
}

/// The MLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mlp {
    /// `down(act(gate(x)) * up(x))`, separate gate and up.
    Gated,
    /// As `Gated` with one `gate_up_proj` (Phi-3).
    GatedFused,
    /// `c_proj(gelu_new(c_fc(x)))` with biases (GPT-2).
    Plain,
}

/// Which activation the MLP applies, as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// One kernel (SiLU, `gelu_pytorch_tanh`): saves its input.
    Fused,
    /// transformers' `NewGELUActivation` in Python: `pow`, `tanh` and two
    /// products, each saving tensors.
    GeluNew,
}

/// A family's build, as transformers' modeling file writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub layout: Layout,
    pub positions: Positions,
    pub norm: Norm,
    pub qkv: Qkv,
    pub attn_bias: AttnBias,
    pub mlp: Mlp,
    pub act: Act,
    /// The embedding is multiplied by √hidden (Gemma).
    pub embed_scale: bool,
    /// `tie_word_embeddings` when a config.json leaves it out.
    pub tied_default: bool,
    /// Dropout the published config sets (attention, residual and
    /// embedding), in ten-thousandths.
    pub dropout: u16,
    /// Bytes of non-parameter buffers per `head_dim` (RoPE's `inv_freq` and
    /// `original_inv_freq`: two fp32 vectors of head_dim / 2).
    pub rope_buffer_bytes_per_head_dim: u32,
}

const LLAMA: Spec = Spec {
    layout: Layout::Llama,
    positions: Positions::Rotary,
    norm: Norm::Rms,
    qkv: Qkv::Separate,
    attn_bias: AttnBias::None,
    mlp: Mlp::Gated,
    act: Act::Fused,
    embed_scale: false,
    tied_default: false,
    dropout: 0,
    rope_buffer_bytes_per_head_dim: 4,
};

impl Family {
    /// The family's description.
    ///
    /// Sources: transformers 5.23 `models/<model_type>/modeling_*.py`, the
    /// module tree of each `*ForCausalLM`; held to the measured rows in
    /// `tests/fixtures/`.
    pub const fn spec(self) -> Spec {
        match self {
            Family::Gpt2 => Spec {
                layout: Layout::Gpt2,
                positions: Positions::Learned,
                norm: Norm::LayerNorm,
                qkv: Qkv::Fused,
                attn_bias: AttnBias::All,
                mlp: Mlp::Plain,
                act: Act::GeluNew,
                embed_scale: false,
                tied_default: true,
                dropout: 1000,
                rope_buffer_bytes_per_head_dim: 0,
            },
            Family::Llama | Family::Mistral => LLAMA,
            Family::Qwen2 => Spec {
                attn_bias: AttnBias::Qkv,
                ..LLAMA
            },
            Family::Phi3 => Spec {
                qkv: Qkv::Fused,
                mlp: Mlp::GatedFused,
                ..LLAMA
            },
            Family::Gemma => Spec {
                norm: Norm::RmsPlusOne,
                embed_scale: true,
                tied_default: true,
                ..LLAMA
            },
        }
    }
}
