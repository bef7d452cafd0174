//! Transformer decoder architectures: the shapes that decide parameter
//! counts and what each layer keeps for backward.

use crate::choice::choice_enum;
use serde::Serialize;
use std::fmt;

choice_enum! {
    /// A model family: how Hugging Face transformers builds its layers.
    pub enum Family {
        /// GPT-2: learned positions, LayerNorm with bias, fused qkv `Conv1D`
        /// (addmm) with biases, `gelu_new` MLP, dropout 0.1.
        Gpt2 = "gpt2", "GPT-2",
        /// Llama: RMSNorm, RoPE, q/k/v/o without bias, gated SiLU MLP, GQA.
        Llama = "llama", "Llama",
        /// Qwen2: Llama with biases on q, k and v.
        Qwen2 = "qwen2", "Qwen2",
        /// Mistral: Llama with sliding-window attention (same memory with SDPA).
        Mistral = "mistral", "Mistral",
        /// Phi-3: Llama with fused `qkv_proj` and `gate_up_proj`.
        Phi3 = "phi3", "Phi-3",
        /// Gemma: Llama-like with GeGLU, (1 + w) RMSNorm in fp32 and a scaled embedding.
        Gemma = "gemma", "Gemma",
        /// Any other decoder, built like Llama.
        Generic = "generic", "generic decoder",
    }
}

impl Family {
    /// Families whose layers are built like Llama (RMSNorm, RoPE, gated MLP).
    pub fn llama_like(self) -> bool {
        !matches!(self, Family::Gpt2)
    }
}

/// A decoder-only transformer, as its `config.json` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Architecture {
    pub family: Family,
    /// Model width h (`hidden_size`, `n_embd`).
    pub hidden: u32,
    /// Decoder layers L.
    pub layers: u32,
    /// Attention heads.
    pub heads: u32,
    /// Key/value heads (GQA); equal to `heads` without GQA.
    pub kv_heads: u32,
    /// Width of one head.
    pub head_dim: u32,
    /// MLP inner width (`intermediate_size`, `n_inner`).
    pub ffn: u32,
    pub vocab: u32,
    /// Output projection shares the embedding matrix.
    pub tied: bool,
    /// Learned absolute positions (GPT-2's `n_positions`); 0 with RoPE.
    pub positions: u32,
}

/// Why a set of architecture numbers cannot be a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchError {
    /// `field` must be at least 1.
    Zero { field: &'static str },
    /// `heads` does not divide `hidden` and no `head_dim` was given.
    HeadsDoNotDivideHidden { heads: u32, hidden: u32 },
    /// `kv_heads` must divide `heads`.
    KvHeadsDoNotDivideHeads { kv_heads: u32, heads: u32 },
    /// GPT-2 attention needs `heads × head_dim = hidden`.
    Gpt2HeadDim {
        heads: u32,
        head_dim: u32,
        hidden: u32,
    },
    /// GPT-2 has no GQA.
    Gpt2KvHeads { kv_heads: u32, heads: u32 },
    /// GPT-2 needs learned positions; RoPE families need none.
    Positions { family: Family },
}

impl ArchError {
    /// The query key the error belongs next to.
    pub fn field(&self) -> &'static str {
        match self {
            ArchError::Zero { field } => field,
            ArchError::HeadsDoNotDivideHidden { .. } => "heads",
            ArchError::KvHeadsDoNotDivideHeads { .. } | ArchError::Gpt2KvHeads { .. } => "kv_heads",
            ArchError::Gpt2HeadDim { .. } => "head_dim",
            ArchError::Positions { .. } => "positions",
        }
    }
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::Zero { field } => write!(f, "{field} must be at least 1"),
            ArchError::HeadsDoNotDivideHidden { heads, hidden } => write!(
                f,
                "heads ({heads}) must divide hidden ({hidden}), or give head_dim"
            ),
            ArchError::KvHeadsDoNotDivideHeads { kv_heads, heads } => {
                write!(f, "kv_heads ({kv_heads}) must divide heads ({heads})")
            }
            ArchError::Gpt2HeadDim {
                heads,
                head_dim,
                hidden,
            } => write!(
                f,
                "GPT-2 needs heads × head_dim = hidden ({heads} × {head_dim} ≠ {hidden})"
            ),
            ArchError::Gpt2KvHeads { kv_heads, heads } => write!(
                f,
                "GPT-2 has no grouped-query attention: kv_heads ({kv_heads}) must equal heads ({heads})"
            ),
            ArchError::Positions { family } => match family {
                Family::Gpt2 => f.write_str("GPT-2 needs learned positions (positions ≥ 1)"),
                _ => write!(f, "{} uses rotary positions: positions must be 0", family.label()),
            },
        }
    }
}

impl Architecture {
    /// Checks the cross-field rules a real model satisfies.
    pub fn validate(&self) -> Result<(), ArchError> {
        // head_dim 0 means "hidden / heads", which did not divide.
        if self.head_dim == 0 && self.heads > 0 && self.hidden > 0 {
            return Err(ArchError::HeadsDoNotDivideHidden {
                heads: self.heads,
                hidden: self.hidden,
            });
        }
        for (field, v) in [
            ("hidden", self.hidden),
            ("layers", self.layers),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("ffn", self.ffn),
            ("vocab", self.vocab),
        ] {
            if v == 0 {
                return Err(ArchError::Zero { field });
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(ArchError::KvHeadsDoNotDivideHeads {
                kv_heads: self.kv_heads,
                heads: self.heads,
            });
        }
        match self.family {
            Family::Gpt2 => {
                if self.kv_heads != self.heads {
                    return Err(ArchError::Gpt2KvHeads {
                        kv_heads: self.kv_heads,
                        heads: self.heads,
                    });
                }
                if u64::from(self.heads) * u64::from(self.head_dim) != u64::from(self.hidden) {
                    return Err(ArchError::Gpt2HeadDim {
                        heads: self.heads,
                        head_dim: self.head_dim,
                        hidden: self.hidden,
                    });
                }
                if self.positions == 0 {
                    return Err(ArchError::Positions {
                        family: self.family,
                    });
                }
            }
            _ if self.positions != 0 => {
                return Err(ArchError::Positions {
                    family: self.family,
                })
            }
            _ => {}
        }
        Ok(())
    }

    /// Width of all query heads together (`heads × head_dim`).
    pub fn q_dim(&self) -> u64 {
        u64::from(self.heads) * u64::from(self.head_dim)
    }

    /// Width of all key (or value) heads together (`kv_heads × head_dim`).
    pub fn kv_dim(&self) -> u64 {
        u64::from(self.kv_heads) * u64::from(self.head_dim)
    }

    /// Parameters in one decoder layer.
    ///
    /// Source: the modules of transformers' `GPT2Block` (two LayerNorms with
    /// bias, `c_attn` h→3h, `c_proj` h→h, `c_fc` h→f, `c_proj` f→h, all with
    /// bias) and `LlamaDecoderLayer` (two RMSNorms, q/k/v/o, gate/up/down;
    /// Qwen2 adds q/k/v biases).
    pub fn layer_params(&self) -> u64 {
        let h = u64::from(self.hidden);
        let f = u64::from(self.ffn);
        match self.family {
            Family::Gpt2 => 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h),
            family => {
                let (q, kv) = (self.q_dim(), self.kv_dim());
                let bias = if family == Family::Qwen2 {
                    q + 2 * kv
                } else {
                    0
                };
                2 * h + h * q + 2 * h * kv + q * h + 3 * h * f + bias
            }
        }
    }

    /// Parameters outside the layers: embeddings, final norm, untied head.
    pub fn outer_params(&self) -> u64 {
        let h = u64::from(self.hidden);
        let v = u64::from(self.vocab);
        let head = if self.tied { 0 } else { v * h };
        match self.family {
            Family::Gpt2 => v * h + u64::from(self.positions) * h + 2 * h + head,
            _ => v * h + h + head,
        }
    }

    /// Total parameter count N (tied weights counted once).
    pub fn params(&self) -> u64 {
        u64::from(self.layers) * self.layer_params() + self.outer_params()
    }

    /// Number of parameter tensors (each gets one optimizer step counter).
    pub fn param_tensors(&self) -> u64 {
        let l = u64::from(self.layers);
        let head = u64::from(!self.tied);
        match self.family {
            // wte, wpe, 12 per block, ln_f weight and bias
            Family::Gpt2 => 2 + 12 * l + 2 + head,
            Family::Qwen2 => 1 + 12 * l + 1 + head,
            _ => 1 + 9 * l + 1 + head,
        }
    }

    /// Elements of the largest single parameter tensor.
    pub fn largest_tensor(&self) -> u64 {
        let h = u64::from(self.hidden);
        let f = u64::from(self.ffn);
        let v = u64::from(self.vocab);
        let attn = match self.family {
            Family::Gpt2 => 3 * h * h,
            _ => h * self.q_dim(),
        };
        (v * h).max(h * f).max(attn)
    }

    /// Parameters of the largest single module (DeepSpeed's
    /// "largest layer": a module's own parameters, not its children's).
    pub fn largest_module(&self) -> u64 {
        let h = u64::from(self.hidden);
        let f = u64::from(self.ffn);
        match self.family {
            Family::Gpt2 => self.largest_tensor().max(h * f + f),
            _ => self.largest_tensor(),
        }
    }

    /// Bytes of non-parameter buffers: RoPE's `inv_freq` and
    /// `original_inv_freq` (head_dim/2 fp32 each).
    ///
    /// Source: measured `buffers` in the ground truth (256 bytes at head_dim
    /// 64, 512 at 128).
    pub fn buffer_bytes(&self) -> u64 {
        match self.family {
            Family::Gpt2 => 0,
            _ => 4 * u64::from(self.head_dim),
        }
    }
}
