//! A decoder's numbers ([`Architecture`]) and what follows from them and its
//! family's [`Spec`](crate::families::Spec): the parameter tensors, and
//! from those the parameter count, the tensor count and the largest tensor.
//!
//! Every product of shapes is computed in `u128`: the largest numbers the
//! codec accepts multiply to about 2^75 elements, which no `u64` holds. The
//! estimator converts once, checked, and names the inputs when a size does
//! not fit.

pub use crate::families::Family;
use crate::families::{AttnBias, Layout, Mlp, Norm, Positions, Qkv};
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
    /// GPT-2 has no GQA.
    NoGqa {
        family: Family,
        kv_heads: u32,
        heads: u32,
    },
}

impl ArchError {
    /// The query key the error belongs next to.
    pub fn field(&self) -> &'static str {
        match self {
            ArchError::TooSmall { num, .. } => num.key(),
            ArchError::LearnedPositions { .. } => "positions",
            ArchError::HeadsDoNotDivideHidden { .. } => "heads",
            ArchError::KvHeadsDoNotDivideHeads { .. } | ArchError::NoGqa { .. } => "kv_heads",
            ArchError::FusedHeadDim { .. } => "head_dim",
        }
    }
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchError::TooSmall { num, min } => write!(f, "{} must be at least {min}", num.key()),
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

/// What a parameter is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Embedding,
    /// A learned position table.
    PositionTable,
    Norm,
    Attention,
    Mlp,
    /// The output projection (never a LoRA target).
    Head,
}

/// The projections LoRA can target, as sets (a fused module serves several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Proj(u8);

impl Proj {
    pub const NONE: Proj = Proj(0);
    pub const Q: Proj = Proj(1);
    pub const K: Proj = Proj(2);
    pub const V: Proj = Proj(4);
    pub const O: Proj = Proj(8);
    pub const GATE: Proj = Proj(16);
    pub const UP: Proj = Proj(32);
    pub const DOWN: Proj = Proj(64);

    pub const fn or(self, other: Proj) -> Proj {
        Proj(self.0 | other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every projection of `self` is in `set`.
    pub const fn within(self, set: Proj) -> bool {
        self.0 & !set.0 == 0
    }

    /// Some projection of `self` is in `set`.
    pub const fn meets(self, set: Proj) -> bool {
        self.0 & set.0 != 0
    }
}

/// One parameter tensor (a module's weight, with its bias when it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamTensor {
    /// The module's name in transformers, e.g. `q_proj`.
    pub name: &'static str,
    /// Output features (or a vector's length).
    pub rows: u64,
    /// Input features; 1 for a vector.
    pub cols: u64,
    /// The module also has a bias of `rows` elements (a tensor of its own).
    pub bias: bool,
    pub role: Role,
    /// The projections it computes: LoRA's targets (empty: not a linear
    /// layer LoRA adapts).
    pub proj: Proj,
}

impl ParamTensor {
    const fn new(name: &'static str, rows: u64, cols: u64, role: Role) -> Self {
        ParamTensor {
            name,
            rows,
            cols,
            bias: false,
            role,
            proj: Proj::NONE,
        }
    }

    const fn linear(name: &'static str, out: u64, inp: u64, bias: bool, proj: Proj) -> Self {
        let role = if proj.within(Proj::Q.or(Proj::K).or(Proj::V).or(Proj::O)) {
            Role::Attention
        } else {
            Role::Mlp
        };
        ParamTensor {
            name,
            rows: out,
            cols: inp,
            bias,
            role,
            proj,
        }
    }

    /// Elements of the weight.
    pub fn weight_elems(&self) -> u128 {
        u128::from(self.rows) * u128::from(self.cols)
    }

    /// Elements of the weight and its bias.
    pub fn elems(&self) -> u128 {
        self.weight_elems() + if self.bias { u128::from(self.rows) } else { 0 }
    }

    /// Tensors: the weight, and the bias.
    pub fn tensors(&self) -> u128 {
        1 + u128::from(self.bias)
    }
}

/// Where a tensor sits: outside the layers, or in every layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Before the layers (embeddings).
    Before,
    /// In each of `count` layers.
    Layers { count: u64 },
    /// After the layers (final norm, head).
    After,
}

impl Place {
    /// How many copies of the tensor exist.
    pub fn copies(self) -> u128 {
        match self {
            Place::Before | Place::After => 1,
            Place::Layers { count } => u128::from(count),
        }
    }
}

impl Architecture {
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
        for &num in ArchNum::ALL {
            if num.get(self) < num.min() {
                return Err(ArchError::TooSmall {
                    num,
                    min: num.min(),
                });
            }
        }
        if spec.positions == Positions::Learned && self.positions == 0 {
            return Err(ArchError::LearnedPositions {
                family: self.family,
            });
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(ArchError::KvHeadsDoNotDivideHeads {
                kv_heads: self.kv_heads,
                heads: self.heads,
            });
        }
        if spec.layout == Layout::Gpt2 {
            // GPT-2's Conv1D attention: no GQA, heads × head_dim = hidden.
            if self.kv_heads != self.heads {
                return Err(ArchError::NoGqa {
                    family: self.family,
                    kv_heads: self.kv_heads,
                    heads: self.heads,
                });
            }
            if self.q_dim() != u64::from(self.hidden) {
                return Err(ArchError::FusedHeadDim {
                    family: self.family,
                    heads: self.heads,
                    head_dim: self.head_dim,
                    hidden: self.hidden,
                });
            }
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

    /// Visits every parameter tensor in `model.parameters()` order, with
    /// where it sits.
    ///
    /// Source: the `__init__` of each family's modules in transformers 5.23
    /// (GPT-2: `wte`, `wpe`, each `GPT2Block`'s `ln_1`, `c_attn`, `c_proj`,
    /// `ln_2`, `c_fc`, `c_proj`, then `ln_f`; Llama-likes: `embed_tokens`,
    /// each layer's attention, MLP and two norms, then `norm` and an untied
    /// `lm_head`).
    pub fn for_each_tensor(&self, mut f: impl FnMut(Place, &ParamTensor)) {
        let spec = self.family.spec();
        let (h, v, ff) = (
            u64::from(self.hidden),
            u64::from(self.vocab),
            u64::from(self.ffn),
        );
        let (q, kv) = (self.q_dim(), self.kv_dim());
        let layers = Place::Layers {
            count: u64::from(self.layers),
        };
        let norm = |name| ParamTensor {
            bias: spec.norm == Norm::LayerNorm,
            ..ParamTensor::new(name, h, 1, Role::Norm)
        };

        f(
            Place::Before,
            &ParamTensor::new("embed_tokens", v, h, Role::Embedding),
        );
        if spec.positions == Positions::Learned {
            f(
                Place::Before,
                &ParamTensor::new(
                    "position_embeddings",
                    u64::from(self.positions),
                    h,
                    Role::PositionTable,
                ),
            );
        }

        // One decoder layer.
        let qkv_bias = spec.attn_bias != AttnBias::None;
        let o_bias = spec.attn_bias == AttnBias::All;
        let pre_norms = spec.layout == Layout::Gpt2;
        if pre_norms {
            f(layers, &norm("ln_1"));
        }
        match spec.qkv {
            Qkv::Separate => {
                f(
                    layers,
                    &ParamTensor::linear("q_proj", q, h, qkv_bias, Proj::Q),
                );
                f(
                    layers,
                    &ParamTensor::linear("k_proj", kv, h, qkv_bias, Proj::K),
                );
                f(
                    layers,
                    &ParamTensor::linear("v_proj", kv, h, qkv_bias, Proj::V),
                );
                f(
                    layers,
                    &ParamTensor::linear("o_proj", h, q, o_bias, Proj::O),
                );
            }
            Qkv::Fused => {
                let qkv = Proj::Q.or(Proj::K).or(Proj::V);
                let (fused, o) = if pre_norms {
                    ("c_attn", "c_proj")
                } else {
                    ("qkv_proj", "o_proj")
                };
                if !pre_norms {
                    // Phi3Attention registers o_proj before qkv_proj.
                    f(layers, &ParamTensor::linear(o, h, q, o_bias, Proj::O));
                }
                f(
                    layers,
                    &ParamTensor::linear(fused, q + 2 * kv, h, qkv_bias, qkv),
                );
                if pre_norms {
                    f(layers, &ParamTensor::linear(o, h, q, o_bias, Proj::O));
                }
            }
        }
        if pre_norms {
            f(layers, &norm("ln_2"));
        }
        match spec.mlp {
            Mlp::Gated => {
                f(
                    layers,
                    &ParamTensor::linear("gate_proj", ff, h, false, Proj::GATE),
                );
                f(
                    layers,
                    &ParamTensor::linear("up_proj", ff, h, false, Proj::UP),
                );
                f(
                    layers,
                    &ParamTensor::linear("down_proj", h, ff, false, Proj::DOWN),
                );
            }
            Mlp::GatedFused => {
                f(
                    layers,
                    &ParamTensor::linear("gate_up_proj", 2 * ff, h, false, Proj::GATE.or(Proj::UP)),
                );
                f(
                    layers,
                    &ParamTensor::linear("down_proj", h, ff, false, Proj::DOWN),
                );
            }
            Mlp::Plain => {
                f(layers, &ParamTensor::linear("c_fc", ff, h, true, Proj::UP));
                f(
                    layers,
                    &ParamTensor::linear("c_proj", h, ff, true, Proj::DOWN),
                );
            }
        }
        if !pre_norms {
            f(layers, &norm("input_layernorm"));
            f(layers, &norm("post_attention_layernorm"));
        }

        f(Place::After, &norm("norm"));
        if !self.tied {
            f(Place::After, &ParamTensor::new("lm_head", v, h, Role::Head));
        }
    }

    /// Total parameter count N (tied weights counted once).
    pub fn params(&self) -> u128 {
        let mut n = 0u128;
        self.for_each_tensor(|at, t| n += at.copies() * t.elems());
        n
    }

    /// Number of parameter tensors (each gets one optimizer step counter).
    pub fn param_tensors(&self) -> u128 {
        let mut n = 0u128;
        self.for_each_tensor(|at, t| n += at.copies() * t.tensors());
        n
    }

    /// Elements of the largest single parameter tensor.
    pub fn largest_tensor(&self) -> u128 {
        let mut m = 0u128;
        self.for_each_tensor(|_, t| m = m.max(t.weight_elems()));
        m
    }

    /// Parameters of the largest single module: its weight and bias
    /// (DeepSpeed's "largest layer").
    pub fn largest_module(&self) -> u128 {
        let mut m = 0u128;
        self.for_each_tensor(|_, t| m = m.max(t.elems()));
        m
    }

    /// Bytes of non-parameter buffers: RoPE's `inv_freq` and
    /// `original_inv_freq` (head_dim / 2 fp32 each).
    ///
    /// Source: measured `buffers` in the ground truth (256 bytes at head_dim
    /// 64, 512 at 128).
    pub fn buffer_bytes(&self) -> u64 {
        u64::from(self.family.spec().rope_buffer_bytes_per_head_dim) * u64::from(self.head_dim)
    }
}

/// Architecture numbers that replace a preset's, one slot per [`ArchNum`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArchOverrides {
    pub family: Option<Family>,
    pub tied: Option<bool>,
    nums: [Option<u32>; ArchNum::COUNT],
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

    /// Removes the override a query key names; false when none was set.
    pub fn clear(&mut self, key: &str) -> bool {
        let was = *self;
        match key {
            "family" => self.family = None,
            "tied" => self.tied = None,
            k => {
                if let Some(n) = ArchNum::from_key(k) {
                    self.set(n, None);
                }
            }
        }
        *self != was
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
