//! A decoder's numbers ([`Architecture`]) and what follows from them and its
//! family's [`Spec`](crate::families::Spec): the parameter tensors, and
//! from those the parameter count, the tensor count and the largest tensor.
//!
//! Every product of shapes is computed in `u128`: the largest numbers the
//! codec accepts multiply to about 2^75 elements, which no `u64` holds. The
//! estimator converts once, checked, and names the inputs when a size does
//! not fit.

pub use crate::families::Family;
use crate::families::{
    AttnBias, EmbedScale, KvHeads, Layout, Mlp, Norm, NormPlace, Positions, QkNorm, Qkv, Router,
    Shared, Sliding,
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
    QLoraRank = "q_lora_rank", q_lora_rank, "Query compression rank",
        "Multi-head latent attention: rank of the query's low-rank projection (0: a plain q_proj).", 0, 1 << 20;
    KvLoraRank = "kv_lora_rank", kv_lora_rank, "KV compression rank",
        "Multi-head latent attention: width of the compressed key/value.", 0, 1 << 20;
    RopeDim = "rope_dim", rope_dim, "Rotary head part",
        "Multi-head latent attention: the rotary part of each query/key head (qk_rope_head_dim); head_dim is the whole head.",
        0, 1 << 20;
    VHeadDim = "v_head_dim", v_head_dim, "Value head dimension",
        "Multi-head latent attention: width of one value head.", 0, 1 << 20;
    SlidingWindow = "sliding_window", sliding_window, "Sliding window",
        "Tokens a sliding-window layer attends to (0: none). With SDPA and a sequence at least this long, each such layer keeps a seq² mask.",
        0, 1 << 24;
    SlidingLayers = "sliding_layers", sliding_layers, "Sliding-window layers",
        "How many layers use the sliding window (Gemma 2: every other one, Gemma 3: five of six, Mistral: all).",
        0, 1 << 14;
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
}

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
        q_lora_rank: 0,
        kv_lora_rank: 0,
        rope_dim: 0,
        v_head_dim: 0,
        sliding_window: 0,
        sliding_layers: 0,
    };
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
    /// GPTBigCode: kv_heads is 1 (multi-query) or heads.
    MultiQuery { kv_heads: u32, heads: u32 },
    /// More sliding-window layers than layers.
    SlidingLayers { sliding: u32, layers: u32 },
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
            ArchError::NotInFamily { num, .. } | ArchError::Needed { num, .. } => num.key(),
            ArchError::ExpertsPerToken { .. } => "experts_per_token",
            ArchError::DenseLayers { .. } => "dense_layers",
            ArchError::RopeDim { .. } => "rope_dim",
            ArchError::MultiQuery { .. } => "kv_heads",
            ArchError::SlidingLayers { .. } => "sliding_layers",
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
    /// An MoE router's weight (a parameter, not a linear layer).
    Router,
    /// Stacked experts (3-D parameters, not linear layers).
    Expert,
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

    /// A linear layer that is none of the seven (Qwen2-MoE's
    /// `shared_expert_gate`): only "all-linear" adapts it.
    pub const OTHER: Proj = Proj(128);
    /// q, k and v together (a fused projection).
    pub const QKV: Proj = Proj(1 | 2 | 4);
    /// q, k, v and o.
    pub const ATTN: Proj = Proj(1 | 2 | 4 | 8);
    /// Every linear layer but the output head: peft's "all-linear".
    pub const ALL: Proj = Proj(255);
    /// Each projection with its query-string name, in canonical order.
    pub const NAMES: [(Proj, &'static str); 7] = [
        (Proj::Q, "q"),
        (Proj::K, "k"),
        (Proj::V, "v"),
        (Proj::O, "o"),
        (Proj::GATE, "gate"),
        (Proj::UP, "up"),
        (Proj::DOWN, "down"),
    ];

    pub const fn or(self, other: Proj) -> Proj {
        Proj(self.0 | other.0)
    }

    /// The names of the projections in `self`, in canonical order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Proj::NAMES
            .into_iter()
            .filter(move |(p, _)| p.within(self))
            .map(|(_, n)| n)
    }

    /// The query-string text: `all`, `attn`, or a comma list (`q,v`).
    pub fn text(self) -> String {
        match self {
            Proj::ALL => "all".into(),
            Proj::ATTN => "attn".into(),
            p => p.names().collect::<Vec<_>>().join(","),
        }
    }

    /// Reads `all`, `attn` or a comma list of q, k, v, o, gate, up, down
    /// (peft's module names `q_proj`, ... are accepted too).
    pub fn parse(text: &str) -> Option<Proj> {
        match text.trim() {
            "all" | "all-linear" => return Some(Proj::ALL),
            "attn" => return Some(Proj::ATTN),
            _ => {}
        }
        let mut set = Proj::NONE;
        for part in text.split(',').map(str::trim) {
            let name = part.strip_suffix("_proj").unwrap_or(part);
            let (p, _) = Proj::NAMES.iter().find(|(_, n)| *n == name)?;
            set = set.or(*p);
        }
        (!set.is_empty()).then_some(set)
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

/// The linear modules a family has, as transformers names them: the last
/// component of the module's path, which peft's `target_modules` matches
/// (`model.layers.0.self_attn.q_proj` is `q_proj`).
///
/// Source: the `__init__` of each family's attention and MLP modules in
/// transformers 5.23; peft 0.21 `check_target_module_exists` (a name
/// matches a module whose path ends with `.name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ModuleName {
    QProj,
    KProj,
    VProj,
    OProj,
    QkvProj,
    CAttn,
    /// GPT-2's attention output and MLP down projection share the name.
    CProjAttn,
    CFc,
    CProjMlp,
    GateProj,
    UpProj,
    DownProj,
    GateUpProj,
    QAProj,
    QBProj,
    KvAProjWithMqa,
    KvBProj,
    SharedExpertGate,
    /// An MoE router, and stacked experts: peft reaches them only through
    /// its experts conversion ("all-linear"), never by a name here.
    Router,
    ExpertsGateUp,
    ExpertsDown,
}

impl ModuleName {
    pub const ALL: [ModuleName; 21] = [
        ModuleName::QProj,
        ModuleName::KProj,
        ModuleName::VProj,
        ModuleName::OProj,
        ModuleName::QkvProj,
        ModuleName::CAttn,
        ModuleName::CProjAttn,
        ModuleName::CFc,
        ModuleName::CProjMlp,
        ModuleName::GateProj,
        ModuleName::UpProj,
        ModuleName::DownProj,
        ModuleName::GateUpProj,
        ModuleName::QAProj,
        ModuleName::QBProj,
        ModuleName::KvAProjWithMqa,
        ModuleName::KvBProj,
        ModuleName::SharedExpertGate,
        ModuleName::Router,
        ModuleName::ExpertsGateUp,
        ModuleName::ExpertsDown,
    ];

    pub const fn text(self) -> &'static str {
        match self {
            ModuleName::QProj => "q_proj",
            ModuleName::KProj => "k_proj",
            ModuleName::VProj => "v_proj",
            ModuleName::OProj => "o_proj",
            ModuleName::QkvProj => "qkv_proj",
            ModuleName::CAttn => "c_attn",
            ModuleName::CProjAttn | ModuleName::CProjMlp => "c_proj",
            ModuleName::CFc => "c_fc",
            ModuleName::GateProj => "gate_proj",
            ModuleName::UpProj => "up_proj",
            ModuleName::DownProj => "down_proj",
            ModuleName::GateUpProj => "gate_up_proj",
            ModuleName::QAProj => "q_a_proj",
            ModuleName::QBProj => "q_b_proj",
            ModuleName::KvAProjWithMqa => "kv_a_proj_with_mqa",
            ModuleName::KvBProj => "kv_b_proj",
            ModuleName::SharedExpertGate => "shared_expert_gate",
            ModuleName::Router => "router",
            ModuleName::ExpertsGateUp => "experts.gate_up_proj",
            ModuleName::ExpertsDown => "experts.down_proj",
        }
    }

    /// Whether `lora_targets` can name it.
    pub const fn nameable(self) -> bool {
        match self {
            ModuleName::Router | ModuleName::ExpertsGateUp | ModuleName::ExpertsDown => false,
            ModuleName::QProj
            | ModuleName::KProj
            | ModuleName::VProj
            | ModuleName::OProj
            | ModuleName::QkvProj
            | ModuleName::CAttn
            | ModuleName::CProjAttn
            | ModuleName::CFc
            | ModuleName::CProjMlp
            | ModuleName::GateProj
            | ModuleName::UpProj
            | ModuleName::DownProj
            | ModuleName::GateUpProj
            | ModuleName::QAProj
            | ModuleName::QBProj
            | ModuleName::KvAProjWithMqa
            | ModuleName::KvBProj
            | ModuleName::SharedExpertGate => true,
        }
    }

    /// The projections the module computes (before a family's rules:
    /// see [`Family::module`]).
    pub const fn proj(self) -> Proj {
        match self {
            ModuleName::QProj | ModuleName::QAProj | ModuleName::QBProj => Proj::Q,
            ModuleName::KProj => Proj::K,
            ModuleName::VProj => Proj::V,
            ModuleName::OProj | ModuleName::CProjAttn => Proj::O,
            ModuleName::QkvProj | ModuleName::CAttn => Proj::QKV,
            // DeepSeek's compressed key/value path serves both.
            ModuleName::KvAProjWithMqa | ModuleName::KvBProj => Proj::K.or(Proj::V),
            ModuleName::GateProj => Proj::GATE,
            ModuleName::UpProj | ModuleName::CFc => Proj::UP,
            ModuleName::DownProj | ModuleName::CProjMlp | ModuleName::ExpertsDown => Proj::DOWN,
            ModuleName::GateUpProj | ModuleName::ExpertsGateUp => Proj::GATE.or(Proj::UP),
            ModuleName::SharedExpertGate | ModuleName::Router => Proj::OTHER,
        }
    }

    /// Every nameable module called `text`.
    fn bits_named(text: &str) -> u32 {
        ModuleName::ALL
            .into_iter()
            .filter(|m| m.nameable() && m.text() == text)
            .fold(0, |b, m| b | m.bit())
    }

    const fn bit(self) -> u32 {
        1 << self as u8
    }
}

/// A module LoRA may adapt: its name and the projections it computes
/// (empty: not a target in this family, whatever it is called).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Module {
    pub name: ModuleName,
    pub proj: Proj,
}

impl Module {
    pub const fn new(name: ModuleName, proj: Proj) -> Module {
        Module { name, proj }
    }
}

/// What `lora_targets` selects: projections by vramfit's names (a module
/// is adapted when every projection it computes is selected: a fused
/// `qkv_proj` needs q, k and v) and modules by their transformers names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Targets {
    pub proj: Proj,
    names: u32,
}

impl Targets {
    /// peft's "all-linear": every linear layer but the output head.
    pub const ALL: Targets = Targets {
        proj: Proj::ALL,
        names: 0,
    };
    /// q, k, v and o.
    pub const ATTN: Targets = Targets {
        proj: Proj::ATTN,
        names: 0,
    };

    pub const fn of(proj: Proj) -> Targets {
        Targets { proj, names: 0 }
    }

    /// Whether `m` gets an adapter.
    pub fn adapts(&self, m: Module) -> bool {
        !m.proj.is_empty() && (m.proj.within(self.proj) || self.names & m.name.bit() != 0)
    }

    /// The modules named (not through a projection).
    pub fn names(self) -> impl Iterator<Item = ModuleName> {
        ModuleName::ALL
            .into_iter()
            .filter(move |m| self.names & m.bit() != 0)
    }

    /// Reads `all` (or `all-linear`), `attn`, and comma lists of q, k, v,
    /// o, gate, up, down and module names (`q_proj`, `qkv_proj`, `c_attn`,
    /// …); the first word it cannot read is the error.
    pub fn parse(text: &str) -> Result<Targets, String> {
        let mut t = Targets::default();
        for word in text.split(',').map(str::trim) {
            let word_lc = word.to_ascii_lowercase();
            match word_lc.as_str() {
                "all" | "all-linear" => t.proj = Proj::ALL,
                "attn" => t.proj = t.proj.or(Proj::ATTN),
                w => {
                    if let Some((p, _)) = Proj::NAMES.iter().find(|(_, n)| *n == w) {
                        t.proj = t.proj.or(*p);
                    } else if ModuleName::bits_named(w) != 0 {
                        t.names |= ModuleName::bits_named(w);
                    } else {
                        return Err(word.to_string());
                    }
                }
            }
        }
        if t.proj == Proj::ALL {
            t.names = 0;
        }
        Ok(t)
    }

    /// The query-string text: `all`, `attn`, or a comma list (`q,v`,
    /// `q_b_proj,kv_b_proj`).
    pub fn text(self) -> String {
        if self.names == 0 {
            return self.proj.text();
        }
        let mut words: Vec<&str> = if self.proj == Proj::ATTN {
            vec!["attn"]
        } else {
            self.proj.names().collect()
        };
        for n in self.names().map(ModuleName::text) {
            if !words.contains(&n) {
                words.push(n);
            }
        }
        words.join(",")
    }

    /// Why these targets do not fit `a`'s modules, or `None` when they do:
    /// a name the family does not have, a projection it does not compute,
    /// or part of a fused module (peft adapts whole modules).
    pub fn misfit(self, a: &Architecture) -> Option<String> {
        if self.proj == Proj::ALL {
            return None;
        }
        let mut modules: Vec<Module> = Vec::new();
        a.for_each_tensor(|_, t| {
            if let Some(m) = t.module() {
                if !m.proj.is_empty() && !modules.contains(&m) {
                    modules.push(m);
                }
            }
        });
        let fam = a.family.label();
        let list = |ms: &[Module]| {
            let mut names: Vec<&str> = Vec::new();
            for m in ms.iter().filter(|m| m.name.nameable()) {
                if !names.contains(&m.name.text()) {
                    names.push(m.name.text());
                }
            }
            names.join(", ")
        };
        for n in self.names() {
            if !modules.iter().any(|m| m.name.text() == n.text()) {
                return Some(format!(
                    "{fam} has no module `{}` (its linear layers: {})",
                    n.text(),
                    list(&modules)
                ));
            }
        }
        for (p, word) in Proj::NAMES {
            if !p.within(self.proj) {
                continue;
            }
            if !modules.iter().any(|m| p.within(m.proj)) {
                return Some(format!(
                    "{fam} has no {word} projection (its linear layers: {})",
                    list(&modules)
                ));
            }
        }
        for m in &modules {
            if m.proj.meets(self.proj) && !m.proj.within(self.proj) {
                let all: Vec<&str> = m.proj.names().collect();
                return Some(format!(
                    "{fam} computes {} in one module `{}`: name {} together, or none of them",
                    all.join(", "),
                    m.name.text(),
                    all.join(", ")
                ));
            }
        }
        None
    }
}

impl Serialize for Targets {
    /// As the query-string text.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// What LoRA adapts: see [`Targets`] (peft's "all-linear" is every
/// projection; the output head is never one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lora {
    pub r: u64,
    pub targets: Targets,
    /// DoRA: a trainable magnitude per output row of each adapted layer.
    pub dora: bool,
}

impl Lora {
    /// Whether module `m` gets an adapter.
    pub fn adapts(&self, m: Module) -> bool {
        self.targets.adapts(m)
    }
}

impl Serialize for Proj {
    /// As the query-string text (`all`, `attn`, `q,v`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// One parameter tensor (a module's weight, with its bias when it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamTensor {
    /// The module's name in transformers, e.g. `q_proj`.
    pub name: &'static str,
    /// Experts stacked in one 3-D parameter (1 otherwise).
    pub stack: u64,
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
    /// The module it is the weight of, for the ones LoRA can adapt.
    pub module: Option<ModuleName>,
}

impl ParamTensor {
    const fn new(name: &'static str, rows: u64, cols: u64, role: Role) -> Self {
        ParamTensor {
            name,
            stack: 1,
            rows,
            cols,
            bias: false,
            role,
            proj: Proj::NONE,
            module: None,
        }
    }

    /// The module LoRA would adapt, if it is one.
    pub fn module(&self) -> Option<Module> {
        self.module.map(|n| Module::new(n, self.proj))
    }

    /// The weight of linear module `m` (`out × inp`).
    fn linear(m: Module, out: u64, inp: u64, bias: bool) -> Self {
        let role = if m.name.proj().within(Proj::ATTN) {
            Role::Attention
        } else {
            Role::Mlp
        };
        ParamTensor {
            name: m.name.text(),
            stack: 1,
            rows: out,
            cols: inp,
            bias,
            role,
            proj: m.proj,
            module: Some(m.name),
        }
    }

    /// Elements of the weight.
    pub fn weight_elems(&self) -> u128 {
        u128::from(self.stack) * u128::from(self.rows) * u128::from(self.cols)
    }

    /// Elements of the weight and its bias.
    pub fn elems(&self) -> u128 {
        self.weight_elems()
            + if self.bias {
                u128::from(self.stack) * u128::from(self.rows)
            } else {
                0
            }
    }

    /// Tensors: the weight, and the bias.
    pub fn tensors(&self) -> u128 {
        1 + u128::from(self.bias)
    }

    /// The width of LoRA's rank dimension on this tensor, for rank `r`:
    /// peft's `ParamWrapper` gives a stacked parameter `r × experts` (and
    /// twice that for a projection fused from two: experts' `gate_up_proj`);
    /// a linear layer gets `r`.
    pub fn lora_rank(&self, r: u64) -> u128 {
        let fused = if self.role == Role::Expert {
            u128::from(self.proj.0.count_ones().max(1))
        } else {
            1
        };
        u128::from(r) * fused * u128::from(self.stack)
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
        // Numbers a family has (needed ≥ 1) and has not (must be 0).
        let moe = spec.moe.is_some();
        let shared = spec.moe.is_some_and(|m| m.shared != Shared::None);
        let latent = spec.qkv == Qkv::Latent;
        for (num, has, needed) in [
            (ArchNum::Experts, moe, moe),
            (ArchNum::ExpertsPerToken, moe, moe),
            (ArchNum::MoeFfn, moe, moe),
            (ArchNum::SharedExperts, shared, false),
            (ArchNum::DenseLayers, moe, false),
            (ArchNum::QLoraRank, latent, false),
            (ArchNum::KvLoraRank, latent, latent),
            (ArchNum::RopeDim, latent, latent),
            (ArchNum::VHeadDim, latent, latent),
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
        if self.sliding_layers > self.layers {
            return Err(ArchError::SlidingLayers {
                sliding: self.sliding_layers,
                layers: self.layers,
            });
        }
        if self.dense_layers > self.layers {
            return Err(ArchError::DenseLayers {
                dense: self.dense_layers,
                layers: self.layers,
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

    /// The layers, by kind: dense first, then MoE (a dense family has only
    /// dense ones).
    pub fn layer_kinds(&self) -> [(LayerKind, u64); 2] {
        let moe = if self.family.spec().moe.is_some() {
            u64::from(self.layers - self.dense_layers.min(self.layers))
        } else {
            0
        };
        [
            (LayerKind::Dense, u64::from(self.layers) - moe),
            (LayerKind::Moe, moe),
        ]
    }

    /// Visits every parameter tensor in `model.parameters()` order, with
    /// where it sits.
    ///
    /// Source: the `__init__` of each family's modules in transformers 5.23
    /// (GPT-2: `wte`, `wpe`, each `GPT2Block`'s `ln_1`, `c_attn`, `c_proj`,
    /// `ln_2`, `c_fc`, `c_proj`, then `ln_f`; the others: `embed_tokens`,
    /// each layer's attention, MLP (or router, experts and shared expert)
    /// and norms, then `norm` and an untied `lm_head`). Experts are 3-D
    /// parameters (transformers 5 stacks them: `gate_up_proj` [E, 2f, h],
    /// `down_proj` [E, h, f]).
    pub fn for_each_tensor(&self, mut f: impl FnMut(Place, &ParamTensor)) {
        self.walk_tensors(&mut f);
    }

    /// The one body of [`Architecture::for_each_tensor`], behind a `dyn`
    /// callback so the page's wasm holds it once rather than once per
    /// caller.
    fn walk_tensors(&self, f: &mut dyn FnMut(Place, &ParamTensor)) {
        let spec = self.family.spec();
        let (h, v) = (u64::from(self.hidden), u64::from(self.vocab));
        let norm = |name, width| ParamTensor {
            bias: spec.norm == Norm::LayerNorm,
            ..ParamTensor::new(name, width, 1, Role::Norm)
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
        for (kind, count) in self.layer_kinds() {
            if count > 0 {
                self.layer_tensors(kind, Place::Layers { count }, f);
            }
        }
        f(Place::After, &norm("norm", h));
        if !self.tied {
            f(Place::After, &ParamTensor::new("lm_head", v, h, Role::Head));
        }
    }

    /// One decoder layer's tensors.
    fn layer_tensors(&self, kind: LayerKind, at: Place, f: &mut dyn FnMut(Place, &ParamTensor)) {
        let spec = self.family.spec();
        let (h, ff) = (u64::from(self.hidden), u64::from(self.ffn));
        let (q, kv, o) = (self.q_dim(), self.kv_dim(), self.o_dim());
        let hd = u64::from(self.head_dim);
        let mut put = |t: ParamTensor| f(at, &t);
        let norm = |name, width| ParamTensor {
            bias: spec.norm == Norm::LayerNorm,
            ..ParamTensor::new(name, width, 1, Role::Norm)
        };
        let qkv_bias = spec.attn_bias != AttnBias::None;
        let o_bias = spec.attn_bias == AttnBias::All;
        let gpt2 = spec.layout == Layout::Gpt2;
        if gpt2 {
            put(norm("ln_1", h));
        }
        // Attention.
        match spec.qkv {
            Qkv::Separate => {
                put(ParamTensor::linear(
                    self.family.module(ModuleName::QProj),
                    q,
                    h,
                    qkv_bias,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::KProj),
                    kv,
                    h,
                    qkv_bias,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::VProj),
                    kv,
                    h,
                    qkv_bias,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::OProj),
                    h,
                    o,
                    o_bias,
                ));
            }
            Qkv::Fused if gpt2 => {
                put(ParamTensor::linear(
                    self.family.module(ModuleName::CAttn),
                    q + 2 * kv,
                    h,
                    qkv_bias,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::CProjAttn),
                    h,
                    o,
                    o_bias,
                ));
            }
            Qkv::Fused => {
                // Phi3Attention registers o_proj before qkv_proj.
                put(ParamTensor::linear(
                    self.family.module(ModuleName::OProj),
                    h,
                    o,
                    o_bias,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::QkvProj),
                    q + 2 * kv,
                    h,
                    qkv_bias,
                ));
            }
            Qkv::Latent => {
                let (ql, kvl, rope) = (
                    u64::from(self.q_lora_rank),
                    u64::from(self.kv_lora_rank),
                    u64::from(self.rope_dim),
                );
                let nope_v = u64::from(self.heads) * (hd - rope + u64::from(self.v_head_dim));
                if ql > 0 {
                    put(ParamTensor::linear(
                        self.family.module(ModuleName::QAProj),
                        ql,
                        h,
                        false,
                    ));
                    put(norm("q_a_layernorm", ql));
                    put(ParamTensor::linear(
                        self.family.module(ModuleName::QBProj),
                        q,
                        ql,
                        false,
                    ));
                } else {
                    put(ParamTensor::linear(
                        self.family.module(ModuleName::QProj),
                        q,
                        h,
                        false,
                    ));
                }
                put(ParamTensor::linear(
                    self.family.module(ModuleName::KvAProjWithMqa),
                    kvl + rope,
                    h,
                    false,
                ));
                put(norm("kv_a_layernorm", kvl));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::KvBProj),
                    nope_v,
                    kvl,
                    false,
                ));
                put(ParamTensor::linear(
                    self.family.module(ModuleName::OProj),
                    h,
                    o,
                    false,
                ));
            }
        }
        match spec.qk_norm {
            QkNorm::None => {}
            QkNorm::PerHead => {
                put(norm("q_norm", hd));
                put(norm("k_norm", hd));
            }
            QkNorm::Whole => {
                put(norm("q_norm", q));
                put(norm("k_norm", kv));
            }
        }
        if spec.sinks {
            put(ParamTensor::new(
                "sinks",
                u64::from(self.heads),
                1,
                Role::Attention,
            ));
        }
        if gpt2 {
            put(norm("ln_2", h));
        }
        // The MLP, or the experts.
        match (kind, spec.moe) {
            (LayerKind::Moe, Some(moe)) => {
                let (e, mf) = (u64::from(self.experts), u64::from(self.moe_ffn));
                let router = ParamTensor {
                    bias: moe.router == Router::TopKSoftmax,
                    proj: self.family.module(ModuleName::Router).proj,
                    module: Some(ModuleName::Router),
                    ..ParamTensor::new("router", e, h, Role::Router)
                };
                let experts = [
                    ParamTensor {
                        stack: e,
                        proj: self.family.module(ModuleName::ExpertsGateUp).proj,
                        module: Some(ModuleName::ExpertsGateUp),
                        ..ParamTensor::new("experts.gate_up_proj", 2 * mf, h, Role::Expert)
                    },
                    ParamTensor {
                        stack: e,
                        proj: self.family.module(ModuleName::ExpertsDown).proj,
                        module: Some(ModuleName::ExpertsDown),
                        ..ParamTensor::new("experts.down_proj", h, mf, Role::Expert)
                    },
                ];
                // 2-D biases [E, out] (gpt-oss), tensors of their own.
                let biases = [
                    ParamTensor::new("experts.gate_up_proj_bias", e, 2 * mf, Role::Expert),
                    ParamTensor::new("experts.down_proj_bias", e, h, Role::Expert),
                ];
                let sf = u64::from(self.shared_experts) * mf;
                let shared = self.mlp_tensors(sf);
                let put_experts = |put: &mut dyn FnMut(ParamTensor)| {
                    put(experts[0]);
                    if moe.expert_bias {
                        put(biases[0]);
                    }
                    put(experts[1]);
                    if moe.expert_bias {
                        put(biases[1]);
                    }
                };
                if moe.router_first {
                    put(router);
                    put_experts(&mut put);
                } else {
                    put_experts(&mut put);
                    put(router);
                }
                if sf > 0 {
                    for t in shared.into_iter().flatten() {
                        put(t);
                    }
                    if moe.shared == Shared::Gated {
                        put(ParamTensor::linear(
                            self.family.module(ModuleName::SharedExpertGate),
                            1,
                            h,
                            false,
                        ));
                    }
                }
            }
            (LayerKind::Dense, _) | (LayerKind::Moe, None) => {
                for t in self.mlp_tensors(ff).into_iter().flatten() {
                    put(t);
                }
            }
        }
        match spec.norm_place {
            NormPlace::Pre if gpt2 => {}
            NormPlace::Pre => {
                put(norm("input_layernorm", h));
                put(norm("post_attention_layernorm", h));
            }
            NormPlace::Sandwich => {
                put(norm("input_layernorm", h));
                put(norm("post_attention_layernorm", h));
                put(norm("pre_feedforward_layernorm", h));
                put(norm("post_feedforward_layernorm", h));
            }
            NormPlace::Post => {
                put(norm("post_attention_layernorm", h));
                put(norm("post_feedforward_layernorm", h));
            }
        }
    }

    /// A dense MLP's tensors, of width `f`: gate, up and down (or fused
    /// gate_up), or GPT-2's c_fc and c_proj with biases. Under peft's
    /// experts conversion these linears are not LoRA targets.
    fn mlp_tensors(&self, f: u64) -> [Option<ParamTensor>; 3] {
        let spec = self.family.spec();
        let h = u64::from(self.hidden);
        match spec.mlp {
            Mlp::Gated => [
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::GateProj),
                    f,
                    h,
                    false,
                )),
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::UpProj),
                    f,
                    h,
                    false,
                )),
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::DownProj),
                    h,
                    f,
                    false,
                )),
            ],
            Mlp::GatedFused => [
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::GateUpProj),
                    2 * f,
                    h,
                    false,
                )),
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::DownProj),
                    h,
                    f,
                    false,
                )),
                None,
            ],
            Mlp::Plain => [
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::CFc),
                    f,
                    h,
                    true,
                )),
                Some(ParamTensor::linear(
                    self.family.module(ModuleName::CProjMlp),
                    h,
                    f,
                    true,
                )),
                None,
            ],
        }
    }

    /// Visits the tensors of layer 0 (the last layer backward reaches).
    pub fn for_each_first_layer_tensor(&self, mut f: impl FnMut(&ParamTensor)) {
        let kind = self
            .layer_kinds()
            .into_iter()
            .find(|(_, n)| *n > 0)
            .map_or(LayerKind::Dense, |(k, _)| k);
        self.layer_tensors(
            kind,
            Place::Layers { count: 1 },
            &mut |_, t: &ParamTensor| f(t),
        );
    }

    /// Elements of the tensors outside the layers that backward reaches
    /// last: the token embedding (and a learned position table).
    pub fn embedding_params(&self) -> u128 {
        let mut n = 0;
        self.for_each_tensor(|at, t| {
            if at == Place::Before {
                n += t.elems();
            }
        });
        n
    }

    /// The counts an estimate needs, in one walk over the tensors (the
    /// single-purpose methods below each walk them again).
    pub fn stats(&self) -> ParamStats {
        let mut st = ParamStats::default();
        self.for_each_tensor(|at, t| {
            let copies = at.copies();
            st.params += copies * t.elems();
            st.tensors += copies * t.tensors();
            st.largest_tensor = st.largest_tensor.max(t.weight_elems());
            st.largest_module = st.largest_module.max(t.elems());
            if at == Place::Before {
                st.embedding += t.elems();
            }
        });
        st
    }

    /// Total parameter count N (tied weights counted once).
    pub fn params(&self) -> u128 {
        let mut n = 0u128;
        self.for_each_tensor(|at, t| n += at.copies() * t.elems());
        n
    }

    /// Parameters a token goes through: the experts it is routed to, not
    /// all of them (MoE's "active" parameters; N for a dense model).
    pub fn active_params(&self) -> u128 {
        let mut n = 0u128;
        let (e, k) = (u128::from(self.experts), u128::from(self.experts_per_token));
        self.for_each_tensor(|at, t| {
            let all = at.copies() * t.elems();
            n += if t.role == Role::Expert && e > 0 {
                all / e * k
            } else {
                all
            };
        });
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

    /// Bytes of non-parameter buffers, for weights of `param_bytes`: RoPE's
    /// `inv_freq` and `original_inv_freq` (fp32, half the rotary width
    /// each, per RoPE table), Gemma 2/3's 0-dim `embed_scale`, and
    /// DeepSeek-V3's per-layer router `e_score_correction_bias`.
    ///
    /// Source: measured `buffers` in the ground truth (256 bytes at head_dim
    /// 64, 512 at 128).
    pub fn buffer_bytes(&self, param_bytes: u64) -> u64 {
        let spec = self.family.spec();
        let rotary = match spec.qkv {
            Qkv::Latent => u64::from(self.rope_dim),
            Qkv::Separate | Qkv::Fused => u64::from(self.head_dim),
        };
        let rope = u64::from(spec.rope_tables) * 4 * rotary;
        let scale = match spec.embed_scale {
            EmbedScale::Buffer => param_bytes,
            EmbedScale::None | EmbedScale::PerForward => 0,
        };
        let correction = match spec.moe.map(|m| m.router) {
            Some(Router::SigmoidGrouped) => {
                self.layer_kinds()[1].1 * u64::from(self.experts) * param_bytes
            }
            Some(Router::Softmax | Router::SoftmaxFp32 | Router::TopKSoftmax) | None => 0,
        };
        rope + scale + correction
    }
}

/// What [`Architecture::stats`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamStats {
    /// N, tied weights once ([`Architecture::params`]).
    pub params: u128,
    /// Parameter tensors ([`Architecture::param_tensors`]).
    pub tensors: u128,
    /// [`Architecture::largest_tensor`].
    pub largest_tensor: u128,
    /// [`Architecture::largest_module`].
    pub largest_module: u128,
    /// [`Architecture::embedding_params`].
    pub embedding: u128,
}

/// Dense layers (an MLP) and MoE layers (routed experts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    Dense,
    Moe,
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
        if given(ArchNum::Layers) || self.family.is_some() {
            // Layer counts that follow the layers: the first dense layers
            // stay at most all of them; the sliding-window layers follow
            // the family's rule.
            if !given(ArchNum::DenseLayers) {
                a.dense_layers = a.dense_layers.min(a.layers);
            }
            if !given(ArchNum::SlidingLayers) && a.sliding_window > 0 {
                a.sliding_layers = match a.family.spec().sliding {
                    Sliding::None => 0,
                    Sliding::All => a.layers,
                    Sliding::EveryOther => a.layers.div_ceil(2),
                    Sliding::AllButEvery(n) => a.layers - a.layers / n.max(1),
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
