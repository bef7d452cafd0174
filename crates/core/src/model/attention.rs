//! How a model's layers attend, as numbers per token: the widths of the
//! queries, keys and values that attention computes on, what a latent
//! attention compresses them to, and which layers see only a sliding
//! window. Training reads it for what attention saves for backward;
//! inference for what a key/value cache holds.

use super::arch::Architecture;
use super::family::{Qkv, RopeStyle};

/// One layer's attention, per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerAttention {
    /// Query heads over key/value heads of the same width: multi-head
    /// (`kv_heads = heads`), grouped-query (fewer) or multi-query (one).
    Heads {
        heads: u64,
        kv_heads: u64,
        head_dim: u64,
        /// The rotated part of a query/key head: `head_dim`, or `rope_dim`
        /// where the family rotates only part of it (`RopeStyle::PartialCat`,
        /// and the Gated DeltaNet hybrids' full-attention layers).
        rotary: u64,
    },
    /// DeepSeek's multi-head latent attention.
    Latent(Latent),
}

/// DeepSeek's multi-head latent attention: keys and values are expanded
/// per head from one compressed vector of `kv_lora_rank` plus a rotary key
/// of `rope_dim` shared by every head.
/// Source: transformers 5.23 `DeepseekV3Attention.forward`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latent {
    pub heads: u64,
    /// A query/key head, its rotary part included.
    pub qk_head_dim: u64,
    pub rope_dim: u64,
    pub v_head_dim: u64,
    pub kv_lora_rank: u64,
    /// The query's low rank (0: a plain `q_proj`).
    pub q_lora_rank: u64,
}

/// Every layer's attention: its kind, and which layers use a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvGeometry {
    pub layer: LayerAttention,
    pub layers: u64,
    /// Layers that attend within a sliding window (0: none).
    pub sliding_layers: u64,
    /// The window, in tokens (0: none).
    pub window: u64,
}

impl KvGeometry {
    /// The geometry of `a`.
    pub fn of(a: &Architecture) -> KvGeometry {
        let n = |x: u32| u64::from(x);
        let spec = a.family.spec();
        let layer = match spec.qkv {
            Qkv::Latent => LayerAttention::Latent(Latent {
                heads: n(a.heads),
                qk_head_dim: n(a.head_dim),
                rope_dim: n(a.rope_dim),
                v_head_dim: n(a.v_head_dim),
                kv_lora_rank: n(a.kv_lora_rank),
                q_lora_rank: n(a.q_lora_rank),
            }),
            Qkv::Separate | Qkv::Fused => LayerAttention::Heads {
                heads: n(a.heads),
                kv_heads: n(a.kv_heads),
                head_dim: n(a.head_dim),
                rotary: if spec.rope == RopeStyle::PartialCat
                    || spec.linear.is_some_and(|l| l.delta_net())
                {
                    n(a.rope_dim)
                } else {
                    n(a.head_dim)
                },
            },
        };
        KvGeometry {
            layer,
            layers: n(a.layers),
            sliding_layers: if a.sliding_window > 0 {
                n(a.sliding_layers)
            } else {
                0
            },
            window: n(a.sliding_window),
        }
    }

    /// Query heads.
    pub fn heads(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads { heads, .. } => heads,
            LayerAttention::Latent(m) => m.heads,
        }
    }

    /// All query heads together, per token.
    pub fn q_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads {
                heads, head_dim, ..
            } => heads * head_dim,
            LayerAttention::Latent(m) => m.heads * m.qk_head_dim,
        }
    }

    /// The keys attention computes on, per token: every key/value head
    /// (`kv_heads × head_dim`), or latent attention's decompressed keys
    /// (`heads × qk_head_dim`).
    pub fn k_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads {
                kv_heads, head_dim, ..
            } => kv_heads * head_dim,
            LayerAttention::Latent(m) => m.heads * m.qk_head_dim,
        }
    }

    /// The values attention computes on, per token (latent attention's
    /// decompressed values: `heads × v_head_dim`).
    pub fn v_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads {
                kv_heads, head_dim, ..
            } => kv_heads * head_dim,
            LayerAttention::Latent(m) => m.heads * m.v_head_dim,
        }
    }

    /// Attention's output, per token (what `o_proj` reads).
    pub fn o_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads { .. } => self.q_width(),
            LayerAttention::Latent(m) => m.heads * m.v_head_dim,
        }
    }

    /// Latent attention's compressed key/value per token: the latent and
    /// the shared rotary key (`kv_lora_rank + rope_dim`, what
    /// `kv_a_proj_with_mqa` makes); 0 for other attention.
    pub fn latent_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads { .. } => 0,
            LayerAttention::Latent(m) => m.kv_lora_rank + m.rope_dim,
        }
    }

    /// Layers that attend to every earlier token.
    pub fn full_layers(&self) -> u64 {
        self.layers - self.sliding_layers.min(self.layers)
    }

    /// The width of the rotary part of a query/key head (RoPE's tables).
    pub fn rotary_width(&self) -> u64 {
        match self.layer {
            LayerAttention::Heads { rotary, .. } => rotary,
            LayerAttention::Latent(m) => m.rope_dim,
        }
    }
}
