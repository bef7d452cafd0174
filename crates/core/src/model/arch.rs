//! A decoder's numbers ([`Architecture`]), the rules a real model of its
//! family satisfies ([`ArchError`]), and the numbers a query key can change
//! ([`ArchNum`], [`ArchOverrides`]).
//!
//! Every product of shapes is computed in `u128`: the largest numbers the
//! codec accepts multiply to about 2^75 elements, which no `u64` holds. The
//! estimators convert once, checked, and name the inputs when a size does
//! not fit.

use super::family::{
    Blocks, Family, KvHeads, Layout, Moe, Positions, Qkv, RopeStyle, Shared, Sliding, Spec,
};
use serde::Serialize;
use std::fmt;

/// Declares the architecture numbers a query key can set: one entry per
/// number (key, field, label, help, bounds), from which the codec's fields,
/// the overrides and the config.json importer's bounds all derive.
macro_rules! arch_nums {
    ($( $(#[$m:meta])* $variant:ident = $key:literal, $field:ident, $label:literal, $help:literal, $min:expr, $max:expr; )+) => {
        /// A whole number of the architecture that a query key sets.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ArchNum { $( $(#[$m])* $variant ),+ }

        impl ArchNum {
            /// Every number, in form order.
            pub const ALL: &'static [ArchNum] = &[$(ArchNum::$variant),+];
            /// How many there are.
            pub const COUNT: usize = ArchNum::ALL.len();

            /// The query key.
            pub const fn key(self) -> &'static str {
                match self { $(ArchNum::$variant => $key),+ }
            }
            /// The form label.
            pub const fn label(self) -> &'static str {
                match self { $(ArchNum::$variant => $label),+ }
            }
            /// One plain-words sentence.
            pub const fn help(self) -> &'static str {
                match self { $(ArchNum::$variant => $help),+ }
            }
            /// The smallest value the codec accepts.
            pub const fn min(self) -> u32 {
                match self { $(ArchNum::$variant => $min),+ }
            }
            /// The largest value the codec accepts.
            pub const fn max(self) -> u32 {
                match self { $(ArchNum::$variant => $max),+ }
            }
            /// The number in `a`.
            pub fn get(self, a: &Architecture) -> u32 {
                match self { $(ArchNum::$variant => a.$field),+ }
            }
            /// Sets the number in `a`.
            pub fn set(self, a: &mut Architecture, v: u32) {
                match self { $(ArchNum::$variant => a.$field = v),+ }
            }
            /// Why `v` cannot be this number, in the codec's words (`None`:
            /// it can).
            pub fn out_of_range(self, v: u64) -> Option<String> {
                if v < u64::from(self.min()) {
                    Some(format!("must be at least {}", self.min()))
                } else if v > u64::from(self.max()) {
                    Some(format!("must be at most {}", self.max()))
                } else {
                    None
                }
            }
            /// The number a query key names.
            pub fn from_key(key: &str) -> Option<ArchNum> {
                match key { $($key => Some(ArchNum::$variant),)+ _ => None }
            }
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

arch_nums! {
    Hidden = "hidden", hidden, "Hidden size", "Model width h (hidden_size, n_embd).", 1, 1 << 20;
    Layers = "layers", layers, "Layers", "Decoder layers L.", 1, 1 << 14;
    Heads = "heads", heads, "Attention heads", "Query heads.", 1, 1 << 14;
    KvHeads = "kv_heads", kv_heads, "Key/value heads",
        "Key/value heads (fewer than heads with grouped-query attention, 1 with multi-query).", 1, 1 << 14;
    HeadDim = "head_dim", head_dim, "Head dimension", "Width of one query/key head (default hidden / heads).", 1, 1 << 20;
    Ffn = "ffn", ffn, "MLP size", "MLP inner width (intermediate_size) of the dense layers.", 1, 1 << 22;
    Vocab = "vocab", vocab, "Vocabulary", "Vocabulary size: sets the logits' size.", 1, 1 << 24;
    Positions = "positions", positions, "Positions",
        "Learned positions (GPT-2's n_positions: a hard limit on seq); with rotary positions the trained context length (0: unknown).",
        0, 1 << 24;
    Experts = "experts", experts, "Experts",
        "Routed experts per MoE layer (num_local_experts, num_experts, n_routed_experts); 0 for a dense model.",
        0, 1 << 16;
    ExpertsPerToken = "experts_per_token", experts_per_token, "Experts per token",
        "Experts each token is routed to (num_experts_per_tok, top-k).", 0, 1 << 16;
    MoeFfn = "moe_ffn", moe_ffn, "Expert MLP size",
        "Inner width of one expert (moe_intermediate_size; Mixtral's intermediate_size).", 0, 1 << 22;
    SharedExperts = "shared_experts", shared_experts, "Shared experts",
        "Shared experts every token goes through, as multiples of the expert width (DeepSeek n_shared_experts; Qwen2-MoE shared_expert_intermediate_size / moe_intermediate_size).",
        0, 1 << 10;
    DenseLayers = "dense_layers", dense_layers, "Dense layers first",
        "Layers before the first MoE layer, with a dense MLP of ffn (DeepSeek's first_k_dense_replace).", 0, 1 << 14;
    MoeStep = "moe_step", moe_step, "MoE layer step",
        "Llama 4: experts on every n-th layer (interleave_moe_layer_step; Maverick 2), a dense MLP of ffn on the others; 0 or 1: experts on every layer after the dense ones.",
        0, 1 << 14;
    QLoraRank = "q_lora_rank", q_lora_rank, "Query compression rank",
        "Multi-head latent attention: rank of the query's low-rank projection (0: a plain q_proj).", 0, 1 << 20;
    KvLoraRank = "kv_lora_rank", kv_lora_rank, "KV compression rank",
        "Multi-head latent attention: width of the compressed key/value.", 0, 1 << 20;
    RopeDim = "rope_dim", rope_dim, "Rotary head part",
        "The rotary part of each query/key head: multi-head latent attention's qk_rope_head_dim (head_dim is the whole head), GLM-4.5's and the Gated DeltaNet hybrids' full-attention heads' head_dim × partial_rotary_factor.",
        0, 1 << 20;
    VHeadDim = "v_head_dim", v_head_dim, "Value head dimension",
        "Multi-head latent attention: width of one value head.", 0, 1 << 20;
    SlidingWindow = "sliding_window", sliding_window, "Sliding window",
        "Tokens a sliding-window layer attends to (0: none). With SDPA and a sequence at least this long, each such layer keeps a seq² mask.",
        0, 1 << 24;
    SlidingLayers = "sliding_layers", sliding_layers, "Sliding-window layers",
        "How many layers use the sliding window (Gemma 2: every other one, Gemma 3: five of six, Mistral: all).",
        0, 1 << 14;
    LinearLayers = "linear_layers", linear_layers, "Recurrent layers",
        "Hybrid models: how many layers have a recurrent state instead of a key/value cache (Qwen3.5, Qwen3-Next: Gated DeltaNet, linear_attention in layer_types; LFM2: short convolutions, the layers full_attn_idxs leaves out); the others are full attention.",
        0, 1 << 14;
    LinearKHeads = "linear_k_heads", linear_k_heads, "DeltaNet key heads",
        "Gated DeltaNet: query/key heads (linear_num_key_heads).", 0, 1 << 14;
    LinearVHeads = "linear_v_heads", linear_v_heads, "DeltaNet value heads",
        "Gated DeltaNet: value heads (linear_num_value_heads), a multiple of the key heads; the state is value heads × key dim × value dim.",
        0, 1 << 14;
    LinearKDim = "linear_k_dim", linear_k_dim, "DeltaNet key head dimension",
        "Gated DeltaNet: width of one query/key head (linear_key_head_dim).", 0, 1 << 20;
    LinearVDim = "linear_v_dim", linear_v_dim, "DeltaNet value head dimension",
        "Gated DeltaNet: width of one value head (linear_value_head_dim).", 0, 1 << 20;
    LinearConv = "linear_conv", linear_conv, "Recurrent convolution kernel",
        "The recurrent layers' causal convolution kernel (Gated DeltaNet's linear_conv_kernel_dim, LFM2's conv_L_cache); its state keeps kernel - 1 steps.",
        0, 1 << 10;
    FfnLayers = "ffn_layers", ffn_layers, "MLP-only layers",
        "Nemotron-H: layers that are an MLP alone (hybrid_override_pattern's -), or the experts alone (E, Nemotron 3), with no attention or recurrent mixer; its other layers are a mixer alone (M: Mamba-2, counted in linear_layers; *: attention).",
        0, 1 << 14;
    SlidingPeriod = "sliding_period", sliding_period, "Sliding pattern period",
        "Every n-th layer attends to every token and the others slide (layer_types; Gemma 3 and 4: 6, Gemma 4 E2B: 5); 0: the family's default.",
        0, 1 << 14;
    GlobalHeadDim = "global_head_dim", global_head_dim, "Global head dimension",
        "Gemma 4: width of a full-attention layer's heads (global_head_dim); 0: head_dim.",
        0, 1 << 20;
    GlobalKvHeads = "global_kv_heads", global_kv_heads, "Global key/value heads",
        "Gemma 4: a full-attention layer's key/value heads (num_global_key_value_heads, used with keys as values); 0: kv_heads.",
        0, 1 << 14;
    KEqV = "k_eq_v", k_eq_v, "Keys are values",
        "Gemma 4: 1 when a full-attention layer's keys are also its values (attention_k_eq_v: no v_proj).",
        0, 1;
    KvSharedLayers = "kv_shared_layers", kv_shared_layers, "Layers sharing keys and values",
        "Gemma 4 and 3n: the last layers that reuse an earlier layer's keys and values (num_kv_shared_layers): no cache of their own.",
        0, 1 << 14;
    DoubleWide = "double_wide", double_wide, "Double-wide shared MLP",
        "Gemma 4: 1 when the layers sharing keys and values have an MLP twice as wide (use_double_wide_mlp).",
        0, 1;
    PleDim = "ple_dim", ple_dim, "Per-layer embedding width",
        "Gemma 4 and 3n: width of each layer's slice of the per-layer embedding (hidden_size_per_layer_input); 0: none.",
        0, 1 << 16;
    PleVocab = "ple_vocab", ple_vocab, "Per-layer embedding vocabulary",
        "Gemma 4 and 3n: rows of the per-layer embedding table (vocab_size_per_layer_input).",
        0, 1 << 24;
    QkNorm = "qk_norm", qk_norm, "Query/key norms",
        "GLM-4.5: 1 when an RMSNorm normalises each query and key head (use_qk_norm: GLM-4.5 and 4.6), 0 when not (GLM-4.5-Air); Llama 4: 1 when its rotated layers L2-normalise the query and key (use_qk_norm: Scout), 0 when not (Maverick). Other families have them or not by design and leave it 0.",
        0, 1;
    IndexHeads = "index_heads", index_heads, "Indexer heads",
        "DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): the lightning indexer's query heads (index_n_heads), which score the cached tokens to pick the top index_topk.",
        0, 1 << 14;
    IndexHeadDim = "index_head_dim", index_head_dim, "Indexer head dimension",
        "DeepSeek Sparse Attention: width of the indexer's heads and of its one cached key per token and layer (index_head_dim).",
        0, 1 << 20;
    IndexTopk = "index_topk", index_topk, "Indexer top-k",
        "DeepSeek Sparse Attention: the cached tokens each query attends to, as the indexer picks them (index_topk); vLLM sizes its top-k buffers by it.",
        0, 1 << 24;
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
    /// Learned absolute positions (GPT-2's `n_positions`); for rotary
    /// families the trained context length, 0 when unknown.
    pub positions: u32,
    /// Routed experts per MoE layer (0: dense).
    pub experts: u32,
    pub experts_per_token: u32,
    /// One expert's inner width.
    pub moe_ffn: u32,
    /// The shared expert's width in expert widths (0: none).
    pub shared_experts: u32,
    /// Dense layers before the MoE layers.
    pub dense_layers: u32,
    /// After them, experts on every `moe_step`-th layer only (0 or 1:
    /// every layer; `Moe::interleaved`).
    pub moe_step: u32,
    /// Multi-head latent attention (0 elsewhere): the query's low rank (0:
    /// none), the compressed kv width, the rotary part of a head, the value
    /// head width.
    pub q_lora_rank: u32,
    pub kv_lora_rank: u32,
    pub rope_dim: u32,
    pub v_head_dim: u32,
    /// Sliding-window attention: the window (0: none) and how many layers
    /// use it.
    pub sliding_window: u32,
    pub sliding_layers: u32,
    /// Hybrid models: the Gated DeltaNet layers (0: none), their key and
    /// value heads, head widths and convolution kernel.
    pub linear_layers: u32,
    pub linear_k_heads: u32,
    pub linear_v_heads: u32,
    pub linear_k_dim: u32,
    pub linear_v_dim: u32,
    pub linear_conv: u32,
    /// Layers that are an MLP alone ([`Blocks::Single`]: Nemotron-H's
    /// `mlp` layers), after the recurrent ones in the layers' order; 0 in
    /// a family whose every layer has an MLP.
    pub ffn_layers: u32,
    /// Every `sliding_period`-th layer is full attention (0: the family's
    /// rule).
    pub sliding_period: u32,
    /// Gemma 4's full-attention layers: their head width and key/value
    /// heads (0: as the others), whether their keys are their values.
    pub global_head_dim: u32,
    pub global_kv_heads: u32,
    pub k_eq_v: u32,
    /// The last layers that reuse earlier keys and values, and whether
    /// their MLP is twice as wide.
    pub kv_shared_layers: u32,
    pub double_wide: u32,
    /// Per-layer embeddings: each layer's width (0: none) and the table's
    /// rows.
    pub ple_dim: u32,
    pub ple_vocab: u32,
    /// 1: the q/k norms a family makes optional are on (GLM-4.5's and
    /// Llama 4's `use_qk_norm`); 0 elsewhere.
    pub qk_norm: u32,
    /// DeepSeek Sparse Attention's indexer: its query heads and head width
    /// (0 elsewhere).
    pub index_heads: u32,
    pub index_head_dim: u32,
    /// The tokens the indexer picks for each query (`index_topk`; 0
    /// elsewhere).
    pub index_topk: u32,
    /// Tensor parallelism's share of the projections whose outputs
    /// transformers 5.23's plan gathers whole (1: whole): the Gated
    /// DeltaNet's (`colwise_gather_output`) and, under
    /// [`super::family::TpPlan::GatheredHeads`], attention's (q, k and v
    /// `colwise_gather_output`, o `rowwise_split_input`). Each GPU holds
    /// ⌈out / this⌉ of their output features (of o's input features); only
    /// the weights are split, the activations are one GPU's. Set by the
    /// training estimator's tensor-parallel share alone, never read from a
    /// config or a link.
    #[serde(skip)]
    pub gathered_tp: u32,
}

/// Llama 4 without a chunk (`attention_chunk_size` null): which layers
/// take RoPE is not kept (vramfit knows them as the chunked ones).
const NOPE_UNKNOWN: &str = "without a chunk (attention_chunk_size null) the layers with RoPE are not known: every layer is taken as a full one without RoPE (no q/k norm, the query's temperature on each); transformers' generate and training may differ by their attention's q and k copies";

impl Architecture {
    /// Every number 0 and the default family: a base for constructors
    /// (`Architecture { hidden: .., ..Architecture::BLANK }`), never a model.
    pub const BLANK: Architecture = Architecture {
        family: Family::Llama,
        hidden: 0,
        layers: 0,
        heads: 0,
        kv_heads: 0,
        head_dim: 0,
        ffn: 0,
        vocab: 0,
        tied: false,
        positions: 0,
        experts: 0,
        experts_per_token: 0,
        moe_ffn: 0,
        shared_experts: 0,
        dense_layers: 0,
        moe_step: 0,
        q_lora_rank: 0,
        kv_lora_rank: 0,
        rope_dim: 0,
        v_head_dim: 0,
        sliding_window: 0,
        sliding_layers: 0,
        linear_layers: 0,
        linear_k_heads: 0,
        linear_v_heads: 0,
        linear_k_dim: 0,
        linear_v_dim: 0,
        linear_conv: 0,
        ffn_layers: 0,
        sliding_period: 0,
        global_head_dim: 0,
        global_kv_heads: 0,
        k_eq_v: 0,
        kv_shared_layers: 0,
        double_wide: 0,
        ple_dim: 0,
        ple_vocab: 0,
        qk_norm: 0,
        index_heads: 0,
        index_head_dim: 0,
        index_topk: 0,
        gathered_tp: 1,
    };

    /// The family's description as this model has it: the q/k norms a
    /// family makes optional (`Spec::qk_norm_optional`) off unless
    /// `qk_norm` is 1. Every reader of the layers' tensors and of what they
    /// keep goes through it.
    pub fn spec(&self) -> &'static Spec {
        if self.qk_norm == 0 {
            self.family.spec_without_qk_norm()
        } else {
            self.family.spec()
        }
    }
}

/// Why a set of architecture numbers cannot be a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchError {
    /// `field` is below its smallest value for this family.
    TooSmall { num: ArchNum, min: u32 },
    /// `heads` does not divide `hidden` and no `head_dim` was given.
    HeadsDoNotDivideHidden { heads: u32, hidden: u32 },
    /// `kv_heads` must divide `heads`.
    KvHeadsDoNotDivideHeads { kv_heads: u32, heads: u32 },
    /// A fused `Conv1D` attention (GPT-2) needs `heads × head_dim = hidden`.
    FusedHeadDim {
        family: Family,
        heads: u32,
        head_dim: u32,
        hidden: u32,
    },
    /// A learned position table needs at least one row.
    LearnedPositions { family: Family },
    /// A number this family does not have must be 0.
    NotInFamily { num: ArchNum, family: Family },
    /// A number this family needs is 0.
    Needed { num: ArchNum, family: Family },
    /// More experts per token than experts.
    ExpertsPerToken { k: u32, experts: u32 },
    /// More dense layers than layers.
    DenseLayers { dense: u32, layers: u32 },
    /// The rotary part of a latent-attention head must be smaller than it.
    RopeDim { rope_dim: u32, head_dim: u32 },
    /// A partial rotary part wider than the head.
    RotaryPart { rope_dim: u32, head_dim: u32 },
    /// GPTBigCode: kv_heads is 1 (multi-query) or heads.
    MultiQuery { kv_heads: u32, heads: u32 },
    /// More sliding-window layers than layers.
    SlidingLayers { sliding: u32, layers: u32 },
    /// More linear-attention layers than layers.
    LinearLayers { linear: u32, layers: u32 },
    /// More recurrent and MLP-only layers than layers.
    FfnLayers { ffn: u32, linear: u32, layers: u32 },
    /// Gated DeltaNet's value heads must be a multiple of its key heads.
    LinearHeads { k_heads: u32, v_heads: u32 },
    /// Some layer must keep its own keys and values.
    KvSharedLayers { shared: u32, layers: u32 },
    /// The global key/value heads must divide the heads.
    GlobalKvHeads { kv_heads: u32, heads: u32 },
    /// GPT-2 has no GQA.
    NoGqa {
        family: Family,
        kv_heads: u32,
        heads: u32,
    },
}

impl ArchError {
    /// The number the error belongs next to.
    pub fn field(&self) -> ArchNum {
        match self {
            ArchError::TooSmall { num, .. }
            | ArchError::NotInFamily { num, .. }
            | ArchError::Needed { num, .. } => *num,
            ArchError::LearnedPositions { .. } => ArchNum::Positions,
            ArchError::ExpertsPerToken { .. } => ArchNum::ExpertsPerToken,
            ArchError::DenseLayers { .. } => ArchNum::DenseLayers,
            ArchError::RopeDim { .. } | ArchError::RotaryPart { .. } => ArchNum::RopeDim,
            ArchError::SlidingLayers { .. } => ArchNum::SlidingLayers,
            ArchError::LinearLayers { .. } => ArchNum::LinearLayers,
            ArchError::FfnLayers { .. } => ArchNum::FfnLayers,
            ArchError::LinearHeads { .. } => ArchNum::LinearVHeads,
            ArchError::KvSharedLayers { .. } => ArchNum::KvSharedLayers,
            ArchError::GlobalKvHeads { .. } => ArchNum::GlobalKvHeads,
            ArchError::HeadsDoNotDivideHidden { .. } => ArchNum::Heads,
            ArchError::MultiQuery { .. }
            | ArchError::KvHeadsDoNotDivideHeads { .. }
            | ArchError::NoGqa { .. } => ArchNum::KvHeads,
            ArchError::FusedHeadDim { .. } => ArchNum::HeadDim,
        }
    }
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::TooSmall { num, min } => write!(f, "{} must be at least {min}", num.key()),
            ArchError::NotInFamily { num, family } => write!(
                f,
                "{} has no {}: it must be 0",
                family.label(),
                num.label().to_ascii_lowercase()
            ),
            ArchError::Needed { num, family } => write!(
                f,
                "{} needs {} ({}) of at least 1",
                family.label(),
                num.label().to_ascii_lowercase(),
                num.key()
            ),
            ArchError::ExpertsPerToken { k, experts } => write!(
                f,
                "experts_per_token ({k}) must be at most experts ({experts})"
            ),
            ArchError::DenseLayers { dense, layers } => write!(
                f,
                "dense_layers ({dense}) must be at most layers ({layers})"
            ),
            ArchError::RotaryPart { rope_dim, head_dim } => write!(
                f,
                "rope_dim ({rope_dim}) must be at most head_dim ({head_dim})"
            ),
            ArchError::RopeDim { rope_dim, head_dim } => write!(
                f,
                "rope_dim ({rope_dim}) must be less than head_dim ({head_dim}), which includes it"
            ),
            ArchError::MultiQuery { kv_heads, heads } => write!(
                f,
                "GPTBigCode has multi-query or full attention: kv_heads ({kv_heads}) must be 1 or heads ({heads})"
            ),
            ArchError::SlidingLayers { sliding, layers } => write!(
                f,
                "sliding_layers ({sliding}) must be at most layers ({layers})"
            ),
            ArchError::LinearLayers { linear, layers } => write!(
                f,
                "linear_layers ({linear}) must be at most layers ({layers})"
            ),
            ArchError::FfnLayers { ffn, linear, layers } => write!(
                f,
                "ffn_layers ({ffn}) and linear_layers ({linear}) together must be at most layers ({layers})"
            ),
            ArchError::LinearHeads { k_heads, v_heads } => write!(
                f,
                "linear_v_heads ({v_heads}) must be a multiple of linear_k_heads ({k_heads})"
            ),
            ArchError::KvSharedLayers { shared, layers } => write!(
                f,
                "kv_shared_layers ({shared}) must be less than layers ({layers}): the shared layers reuse an earlier layer's keys and values"
            ),
            ArchError::GlobalKvHeads { kv_heads, heads } => {
                write!(f, "global_kv_heads ({kv_heads}) must divide heads ({heads})")
            }
            ArchError::LearnedPositions { family } => write!(
                f,
                "{} learns a position table: positions must be at least 1",
                family.label()
            ),
            ArchError::HeadsDoNotDivideHidden { heads, hidden } => write!(
                f,
                "heads ({heads}) must divide hidden ({hidden}), or give head_dim"
            ),
            ArchError::KvHeadsDoNotDivideHeads { kv_heads, heads } => {
                write!(f, "kv_heads ({kv_heads}) must divide heads ({heads})")
            }
            ArchError::FusedHeadDim {
                family,
                heads,
                head_dim,
                hidden,
            } => write!(
                f,
                "{} needs heads × head_dim = hidden ({heads} × {head_dim} ≠ {hidden})",
                family.label()
            ),
            ArchError::NoGqa {
                family,
                kv_heads,
                heads,
            } => write!(
                f,
                "{} has no grouped-query attention: kv_heads ({kv_heads}) must equal heads ({heads})",
                family.label()
            ),
        }
    }
}

impl Architecture {
    /// The heads' rules: key/value heads divide the query heads, as the
    /// family groups them, and a Conv1D attention's heads fill the hidden
    /// width.
    fn validate_heads(&self, spec: &Spec) -> Result<(), ArchError> {
        let family = self.family;
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(ArchError::KvHeadsDoNotDivideHeads {
                kv_heads: self.kv_heads,
                heads: self.heads,
            });
        }
        match spec.kv_heads {
            KvHeads::Grouped => {}
            KvHeads::Same if self.kv_heads != self.heads => {
                return Err(ArchError::NoGqa {
                    family,
                    kv_heads: self.kv_heads,
                    heads: self.heads,
                })
            }
            KvHeads::OneOrSame if self.kv_heads != 1 && self.kv_heads != self.heads => {
                return Err(ArchError::MultiQuery {
                    kv_heads: self.kv_heads,
                    heads: self.heads,
                })
            }
            KvHeads::Same | KvHeads::OneOrSame => {}
        }
        if spec.layout == Layout::Gpt2 && self.q_dim() != u64::from(self.hidden) {
            // A Conv1D attention: heads × head_dim = hidden.
            return Err(ArchError::FusedHeadDim {
                family,
                heads: self.heads,
                head_dim: self.head_dim,
                hidden: self.hidden,
            });
        }
        Ok(())
    }

    /// The layers of each kind are at most the layers: sliding, recurrent,
    /// recurrent and MLP-only together.
    fn validate_layer_counts(&self) -> Result<(), ArchError> {
        let layers = self.layers;
        if self.sliding_layers > layers {
            return Err(ArchError::SlidingLayers {
                sliding: self.sliding_layers,
                layers,
            });
        }
        if self.linear_layers > layers {
            return Err(ArchError::LinearLayers {
                linear: self.linear_layers,
                layers,
            });
        }
        if u64::from(self.linear_layers) + u64::from(self.ffn_layers) > u64::from(layers) {
            return Err(ArchError::FfnLayers {
                ffn: self.ffn_layers,
                linear: self.linear_layers,
                layers,
            });
        }
        Ok(())
    }

    /// Checks the cross-field rules a real model of its family satisfies.
    pub fn validate(&self) -> Result<(), ArchError> {
        // head_dim 0 means "hidden / heads", which did not divide.
        if self.head_dim == 0 && self.heads > 0 && self.hidden > 0 {
            return Err(ArchError::HeadsDoNotDivideHidden {
                heads: self.heads,
                hidden: self.hidden,
            });
        }
        let spec = self.family.spec();
        let family = self.family;
        for &num in ArchNum::ALL {
            if num.get(self) < num.min() {
                return Err(ArchError::TooSmall {
                    num,
                    min: num.min(),
                });
            }
        }
        if spec.positions == Positions::Learned && self.positions == 0 {
            return Err(ArchError::LearnedPositions { family });
        }
        self.validate_heads(spec)?;
        // Numbers a family has (needed ≥ 1) and has not (must be 0).
        let moe = spec.moe.is_some();
        // A family whose experts are optional needs their numbers only
        // when it has experts.
        let experts = self.moe().is_some();
        let shared = spec.moe.is_some_and(|m| m.shared != Shared::None);
        let latent = spec.qkv == Qkv::Latent;
        let partial = spec.rope == RopeStyle::PartialCat;
        let linear = spec.linear.is_some();
        // The state's head numbers (Gated DeltaNet's and Mamba-2's; a short
        // convolution has none), and the partial rotary of the DeltaNet
        // families' attention.
        let headed = spec.linear.is_some_and(|l| l.headed());
        let delta = spec.linear.is_some_and(|l| l.delta_net());
        let pattern = matches!(spec.sliding, Sliding::AllButEvery(_));
        let (global, sharing, ple) = (
            spec.global_attention,
            spec.kv_sharing,
            spec.per_layer_embeddings,
        );
        for (num, has, needed) in [
            (ArchNum::SlidingPeriod, pattern, false),
            (ArchNum::GlobalHeadDim, global, false),
            (ArchNum::GlobalKvHeads, global, false),
            (ArchNum::KEqV, global, false),
            (ArchNum::KvSharedLayers, sharing, false),
            (ArchNum::DoubleWide, sharing, false),
            (ArchNum::PleDim, ple, false),
            (ArchNum::PleVocab, ple, ple && self.ple_dim > 0),
            (ArchNum::QkNorm, spec.qk_norm_optional, false),
            (ArchNum::LinearLayers, linear, false),
            (ArchNum::LinearKHeads, headed, headed),
            (ArchNum::LinearVHeads, headed, headed),
            (ArchNum::LinearKDim, headed, headed),
            (ArchNum::LinearVDim, headed, headed),
            (ArchNum::LinearConv, linear, linear),
            (ArchNum::FfnLayers, spec.blocks == Blocks::Single, false),
            (ArchNum::Experts, moe, experts),
            (ArchNum::ExpertsPerToken, moe, experts),
            (ArchNum::MoeFfn, moe, experts),
            (ArchNum::SharedExperts, shared, false),
            (ArchNum::DenseLayers, moe, false),
            (
                ArchNum::MoeStep,
                spec.moe.is_some_and(|m| m.interleaved),
                false,
            ),
            // The indexer reads the query's low rank (`wq_b`).
            (ArchNum::QLoraRank, latent, spec.indexer),
            (ArchNum::KvLoraRank, latent, latent),
            (
                ArchNum::RopeDim,
                latent || partial || delta,
                latent || partial || delta,
            ),
            (ArchNum::VHeadDim, latent, latent),
            (ArchNum::IndexHeads, spec.indexer, spec.indexer),
            (ArchNum::IndexHeadDim, spec.indexer, spec.indexer),
            (ArchNum::IndexTopk, spec.indexer, spec.indexer),
        ] {
            let v = num.get(self);
            if !has && v != 0 {
                return Err(ArchError::NotInFamily { num, family });
            }
            if needed && v == 0 {
                return Err(ArchError::Needed { num, family });
            }
        }
        if self.experts_per_token > self.experts {
            return Err(ArchError::ExpertsPerToken {
                k: self.experts_per_token,
                experts: self.experts,
            });
        }
        self.validate_layer_counts()?;
        if linear
            && !self
                .linear_v_heads
                .is_multiple_of(self.linear_k_heads.max(1))
        {
            return Err(ArchError::LinearHeads {
                k_heads: self.linear_k_heads,
                v_heads: self.linear_v_heads,
            });
        }
        if sharing && self.kv_shared_layers > 0 && self.kv_shared_layers >= self.layers {
            return Err(ArchError::KvSharedLayers {
                shared: self.kv_shared_layers,
                layers: self.layers,
            });
        }
        if self.global_kv_heads > 0 && !self.heads.is_multiple_of(self.global_kv_heads) {
            return Err(ArchError::GlobalKvHeads {
                kv_heads: self.global_kv_heads,
                heads: self.heads,
            });
        }
        if self.dense_layers > self.layers {
            return Err(ArchError::DenseLayers {
                dense: self.dense_layers,
                layers: self.layers,
            });
        }
        if (partial || linear) && self.rope_dim > self.head_dim {
            return Err(ArchError::RotaryPart {
                rope_dim: self.rope_dim,
                head_dim: self.head_dim,
            });
        }
        if latent && self.rope_dim >= self.head_dim {
            return Err(ArchError::RopeDim {
                rope_dim: self.rope_dim,
                head_dim: self.head_dim,
            });
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

    /// Width of the attention output (`heads × v_head_dim` with latent
    /// attention, the query width otherwise).
    pub fn o_dim(&self) -> u64 {
        match self.family.spec().qkv {
            Qkv::Latent => u64::from(self.heads) * u64::from(self.v_head_dim),
            Qkv::Separate | Qkv::Fused => self.q_dim(),
        }
    }

    /// Which layers the window applies to: the family's rule, or every
    /// `sliding_period`-th layer full when the model sets its own period.
    pub fn sliding_rule(&self) -> Sliding {
        match self.family.spec().sliding {
            Sliding::AllButEvery(_) if self.sliding_period > 0 => {
                Sliding::AllButEvery(self.sliding_period)
            }
            rule => rule,
        }
    }

    /// Whether layer `l` attends within the sliding window: the rule
    /// ([`Architecture::sliding_rule`]) when the model has as many sliding
    /// layers as the rule gives, else (a count set by hand or a config's
    /// own `layer_types`) the first `sliding_layers` layers.
    pub fn slides(&self, l: u32) -> bool {
        if self.sliding_window == 0 {
            return false;
        }
        let rule = self.sliding_rule();
        if rule.count(self.layers) == self.sliding_layers {
            rule.slides(l)
        } else {
            l < self.sliding_layers
        }
    }

    /// Whether layer `l` is a Gated DeltaNet layer (a recurrent state, no
    /// key/value cache): the family's pattern when the model has as many
    /// linear layers as the pattern gives, else (a count set by hand, or a
    /// config's own `layer_types` or `full_attention_interval`) the first
    /// `linear_layers` layers.
    pub fn linear_at(&self, l: u32) -> bool {
        match self.family.spec().linear {
            None => false,
            Some(rule) if rule.count(self.layers) == self.linear_layers => {
                rule.linear_at(l, self.layers)
            }
            Some(_) => l < self.linear_layers,
        }
    }

    /// Whether the recurrent layers' places are not known, only their
    /// count (the family's pattern does not give it): they are taken as
    /// the first ones ([`Architecture::linear_at`]).
    pub fn linear_by_count(&self) -> bool {
        self.family
            .spec()
            .linear
            .is_some_and(|rule| rule.count(self.layers) != self.linear_layers)
    }

    /// Whether layer `l` is an MLP alone ([`Blocks::Single`]): the
    /// `ffn_layers` layers after the recurrent ones (the config's order is
    /// not kept: [`Architecture::layer_order_caveat`]).
    pub fn ffn_only_at(&self, l: u32) -> bool {
        l >= self.linear_layers && l - self.linear_layers < self.ffn_layers
    }

    /// The layers with attention: all but the recurrent ones and the MLPs
    /// alone.
    pub fn attention_layers(&self) -> u32 {
        self.layers
            .saturating_sub(self.linear_layers)
            .saturating_sub(self.ffn_layers)
    }

    /// A hybrid whose count of Gated DeltaNet layers is not the default
    /// pattern's (`full_attention_interval`): the description keeps the
    /// count, not the config's `layer_types`, so the layers are taken as
    /// the first ones ([`Architecture::linear_at`]); where that order
    /// matters (the layer whose moment is the peak, a pipeline stage's
    /// share, layer 0's kind in training), the workloads say it with this.
    /// MLX refuses such a model (it builds the pattern from the interval).
    pub fn layer_order_caveat(&self) -> Option<String> {
        if self.family.spec().nope_full && self.sliding_window == 0 {
            return Some(NOPE_UNKNOWN.into());
        }
        let rule = self.family.spec().linear?;
        // Layers of one kind only: no order to keep.
        let kinds = [self.linear_layers, self.ffn_layers, self.attention_layers()];
        let mixed = kinds.iter().filter(|&&n| n > 0).count() > 1;
        let (field, which) = match self.family.spec().blocks {
            // llama-quantize gives more bits to the experts of some layers
            // by their index (`use_more_bits`), and `-ngl` offloads the
            // last layers.
            Blocks::Single => (
                "hybrid_override_pattern",
                "which layers come last or where (a partial -ngl split; the experts llama-quantize gives more bits by their layer's index)",
            ),
            Blocks::Joint => (rule.kind.order_field(), "which layer comes last"),
        };
        let mlps = match (self.ffn_layers, self.moe()) {
            (0, _) => String::new(),
            (n, None) => format!(", the {n} MLP-only layers next"),
            (n, Some(_)) => format!(", the {n} MoE layers next"),
        };
        (mixed && self.linear_by_count()).then(|| {
            format!(
                "the {n} {what} are taken as the first {n}{mlps}: the config's layer order ({field}) is not kept, only the count; sizes that depend on {which} may differ",
                n = self.linear_layers,
                what = rule.kind.layers_label(),
            )
        })
    }

    /// The multi-token-prediction layers vLLM's MTP drafter builds for
    /// this model ([`super::family::Linear::mtp_layers`]; 0: a drafter
    /// vramfit does not size).
    pub fn mtp_layers(&self) -> u32 {
        self.family.spec().linear.map_or(0, |l| l.mtp_layers)
    }

    /// Gated DeltaNet layers among the dense layers and among the MoE
    /// layers ([`Architecture::layer_kinds`]' order: the dense come first).
    pub fn linear_by_kind(&self) -> [u32; 2] {
        let [(_, dense), _] = self.layer_kinds();
        let dense = u32::try_from(dense).unwrap_or(u32::MAX);
        [self.linear_in(0, dense), self.linear_in(dense, self.layers)]
    }

    /// How many of the layers `lo..hi` are Gated DeltaNet layers.
    pub fn linear_in(&self, lo: u32, hi: u32) -> u32 {
        let below = |n: u32| match self.family.spec().linear {
            None => 0,
            Some(rule) if rule.count(self.layers) == self.linear_layers => {
                rule.below(n, self.layers)
            }
            Some(_) => n.min(self.linear_layers),
        };
        let hi = hi.min(self.layers);
        if hi <= lo {
            0
        } else {
            below(hi) - below(lo)
        }
    }

    /// Gated DeltaNet's channels: the convolution's (`2·Hk·Dk + Hv·Dv`,
    /// q, k and v) and the value width (`Hv·Dv`).
    pub fn linear_widths(&self) -> (u64, u64) {
        let key = u64::from(self.linear_k_heads) * u64::from(self.linear_k_dim);
        let value = u64::from(self.linear_v_heads) * u64::from(self.linear_v_dim);
        (2 * key + value, value)
    }

    /// The family's experts, when this model has them (a family whose
    /// experts are optional, Gemma 4, has none with `experts` 0).
    pub fn moe(&self) -> Option<Moe> {
        self.family
            .spec()
            .moe
            .filter(|m| !m.optional || self.experts > 0)
    }

    /// Whether layer `l` takes no RoPE (Llama 4's full layers,
    /// `Spec::nope_full`; the chunked ones are the rotated ones). Without
    /// a chunk every layer is full, so taken as one without RoPE: said by
    /// [`Architecture::layer_order_caveat`].
    pub fn nope_at(&self, l: u32) -> bool {
        self.family.spec().nope_full && !self.slides(l)
    }

    /// Whether layer `l` is a global (full-attention) layer with Gemma 4's
    /// own geometry: not sliding, in a family with global layers.
    pub fn global_at(&self, l: u32) -> bool {
        self.family.spec().global_attention && !self.slides(l)
    }

    /// Whether layer `l` reuses an earlier layer's keys and values (one of
    /// the last `kv_shared_layers`).
    pub fn kv_shared_at(&self, l: u32) -> bool {
        self.first_kv_shared().is_some_and(|first| l >= first)
    }

    /// The first layer reusing an earlier layer's keys and values, if any.
    pub fn first_kv_shared(&self) -> Option<u32> {
        (self.family.spec().kv_sharing && self.kv_shared_layers > 0)
            .then(|| self.layers.saturating_sub(self.kv_shared_layers))
    }

    /// The layers whose keys and values the reusing layers read, for
    /// sliding and for global attention: the last earlier layer of each
    /// kind the reusing layers have (`kv_sharing_modes`' "store",
    /// transformers 5.23 `Gemma4TextConfig`).
    pub fn kv_store_layers(&self) -> [Option<u32>; 2] {
        let Some(first) = self.first_kv_shared() else {
            return [None, None];
        };
        [false, true].map(|global| {
            let reused = (first..self.layers).any(|l| self.global_at(l) == global);
            (0..first)
                .rev()
                .find(|&l| self.global_at(l) == global)
                .filter(|_| reused)
        })
    }

    /// Layer `l`'s attention: head width, key/value heads, and whether it
    /// has a `v_proj` (Gemma 4's global layers with keys as values have
    /// none). Source: transformers 5.23 `Gemma4TextConfig.__post_init__`
    /// (`per_layer_config`: `head_dim = global_head_dim` on full layers,
    /// `num_key_value_heads = num_global_key_value_heads` when
    /// `attention_k_eq_v`), `Gemma4TextAttention.__init__`.
    pub fn attention_at(&self, l: u32) -> LayerHeads {
        if self.global_at(l) {
            self.global_heads()
        } else {
            LayerHeads {
                head_dim: self.head_dim,
                kv_heads: self.kv_heads,
                v_proj: true,
            }
        }
    }

    /// A global layer's attention ([`Architecture::attention_at`]), whether
    /// or not the model has one.
    pub fn global_heads(&self) -> LayerHeads {
        let k_eq_v = self.k_eq_v > 0;
        LayerHeads {
            head_dim: if self.global_head_dim > 0 {
                self.global_head_dim
            } else {
                self.head_dim
            },
            kv_heads: if k_eq_v && self.global_kv_heads > 0 {
                self.global_kv_heads
            } else {
                self.kv_heads
            },
            v_proj: !k_eq_v,
        }
    }

    /// Layer `l`'s MLP width: `ffn`, twice it on a layer sharing keys and
    /// values with `use_double_wide_mlp` (transformers 5.23
    /// `Gemma4TextMLP.__init__`).
    pub fn ffn_at(&self, l: u32) -> u64 {
        let wide = self.double_wide > 0 && self.kv_shared_at(l);
        u64::from(self.ffn) * if wide { 2 } else { 1 }
    }

    /// Layer `l`'s kind: dense before `dense_layers`, then MoE (every
    /// `moe_step`-th layer only, with one).
    pub fn kind_of(&self, l: u32) -> LayerKind {
        let spec = self.family.spec();
        let experts = spec.moe.is_some_and(|m| !m.optional || self.experts > 0);
        let here = match spec.blocks {
            // The experts are the MLP-only layers' (Nemotron 3's `E`).
            Blocks::Single => self.ffn_only_at(l),
            Blocks::Joint => {
                l >= self.dense_layers
                    && (self.moe_step <= 1 || (l + 1).is_multiple_of(self.moe_step))
            }
        };
        if experts && here {
            LayerKind::Moe
        } else {
            LayerKind::Dense
        }
    }

    /// The layers, by kind: how many are dense and how many MoE (a dense
    /// family has only dense ones); [`Architecture::kind_of`] says which.
    pub fn layer_kinds(&self) -> [(LayerKind, u64); 2] {
        let (layers, dense) = (self.layers, self.dense_layers.min(self.layers));
        let spec = self.family.spec();
        let experts = spec.moe.filter(|m| !m.optional || self.experts > 0);
        let moe = match (experts, self.moe_step) {
            (None, _) => 0,
            (Some(_), _) if spec.blocks == Blocks::Single => u64::from(self.ffn_layers),
            (Some(_), 0 | 1) => u64::from(layers - dense),
            // Layers `l` in `dense..layers` with `(l + 1) % step == 0`.
            (Some(_), step) => u64::from(layers / step - dense / step),
        };
        [
            (LayerKind::Dense, u64::from(self.layers) - moe),
            (LayerKind::Moe, moe),
        ]
    }
}

/// One layer's attention heads (Gemma 4's global layers differ from the
/// others; every layer of another family is the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerHeads {
    pub head_dim: u32,
    pub kv_heads: u32,
    /// A `v_proj` of its own (not keys as values).
    pub v_proj: bool,
}

impl LayerHeads {
    /// Query width over `heads`.
    pub fn q(&self, heads: u32) -> u64 {
        u64::from(heads) * u64::from(self.head_dim)
    }

    /// Key (or value) width.
    pub fn kv(&self) -> u64 {
        u64::from(self.kv_heads) * u64::from(self.head_dim)
    }
}

/// Dense layers (an MLP) and MoE layers (routed experts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    Dense,
    Moe,
}

/// Architecture numbers that replace a preset's, one slot per [`ArchNum`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArchOverrides {
    pub family: Option<Family>,
    pub tied: Option<bool>,
    nums: [Option<u32>; ArchNum::COUNT],
}

impl Default for ArchOverrides {
    /// Nothing replaced.
    fn default() -> Self {
        ArchOverrides {
            family: None,
            tied: None,
            nums: [None; ArchNum::COUNT],
        }
    }
}

impl ArchOverrides {
    pub fn is_empty(&self) -> bool {
        *self == ArchOverrides::default()
    }

    pub fn get(&self, n: ArchNum) -> Option<u32> {
        self.nums[n.index()]
    }

    pub fn set(&mut self, n: ArchNum, v: Option<u32>) {
        self.nums[n.index()] = v;
    }

    /// Removes the override of `num`; false when none was set.
    pub fn clear(&mut self, num: ArchNum) -> bool {
        let was = self.get(num);
        self.set(num, None);
        was.is_some()
    }

    /// The preset's architecture with these numbers replaced. When `heads`
    /// or `hidden` change and `head_dim` is not given, head_dim follows
    /// `hidden / heads`, as `config.json` readers do; `kv_heads` follows
    /// `heads` in a model without GQA; a switch between learned and rotary
    /// positions resets `positions` (1024 learned, or unknown).
    pub fn apply(&self, base: &Architecture) -> Architecture {
        let mut a = *base;
        if let Some(f) = self.family {
            a.family = f;
        }
        if let Some(t) = self.tied {
            a.tied = t;
        }
        for &n in ArchNum::ALL {
            if let Some(v) = self.get(n) {
                n.set(&mut a, v);
            }
        }
        let given = |n: ArchNum| self.get(n).is_some();
        if !given(ArchNum::KvHeads) && given(ArchNum::Heads) && base.kv_heads == base.heads {
            a.kv_heads = a.heads;
        }
        if !given(ArchNum::HeadDim) && (given(ArchNum::Hidden) || given(ArchNum::Heads)) {
            a.head_dim = if a.heads > 0 && a.hidden.is_multiple_of(a.heads) {
                a.hidden / a.heads
            } else {
                0
            };
        }
        if given(ArchNum::Layers) || self.family.is_some() {
            // Layer counts that follow the layers: the first dense layers
            // stay at most all of them; the sliding-window layers follow
            // the family's rule.
            if !given(ArchNum::DenseLayers) {
                a.dense_layers = a.dense_layers.min(a.layers);
            }
            if !given(ArchNum::SlidingLayers) && a.sliding_window > 0 {
                a.sliding_layers = a.sliding_rule().count(a.layers);
            }
            if !given(ArchNum::KvSharedLayers) {
                // At least one layer keeps its own keys and values.
                a.kv_shared_layers = a.kv_shared_layers.min(a.layers.saturating_sub(1));
            }
            if !given(ArchNum::LinearLayers) {
                // A short-convolution family has no default pattern (its
                // config lists the attention layers): the count stays, at
                // most every layer.
                a.linear_layers = match a.family.spec().linear {
                    Some(r) if r.full_every > 0 => r.count(a.layers),
                    Some(_) => a.linear_layers.min(a.layers),
                    None => 0,
                };
            }
            if !given(ArchNum::FfnLayers) {
                // At most the layers the recurrent ones leave; none in a
                // family whose every layer has its MLP.
                a.ffn_layers = match a.family.spec().blocks {
                    Blocks::Single => a.ffn_layers.min(a.layers - a.linear_layers.min(a.layers)),
                    Blocks::Joint => 0,
                };
            }
        }
        let (from, to) = (base.family.spec().positions, a.family.spec().positions);
        if !given(ArchNum::Positions) && from != to {
            a.positions = match to {
                Positions::Learned => 1024,
                Positions::Rotary => 0,
            };
        }
        a
    }
}

impl Serialize for ArchOverrides {
    /// Only the numbers that are set, by query key.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(f) = self.family {
            m.serialize_entry("family", &f)?;
        }
        for &n in ArchNum::ALL {
            if let Some(v) = self.get(n) {
                m.serialize_entry(n.key(), &v)?;
            }
        }
        if let Some(t) = self.tied {
            m.serialize_entry("tied", &t)?;
        }
        m.end()
    }
}
