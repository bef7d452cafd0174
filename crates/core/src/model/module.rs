//! The modules a family's layers are made of, as transformers names them,
//! and what kind each is (attention, dense MLP, expert, router): one
//! classification, from which LoRA's nameable modules and the family's
//! modules both derive.

use super::family::Family;
use serde::Serialize;

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

    /// How many projections the set holds.
    pub const fn count(self) -> u32 {
        self.0.count_ones()
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

/// The output layer's name as peft's `target_modules` writes it (and
/// `lora_targets`, for an engine's adapter).
pub const HEAD_TARGET: &str = "lm_head";

/// `text` (a list of targets, possibly empty) with the output layer's
/// name after it when `head`.
pub fn with_head_target(text: String, head: bool) -> String {
    match (head, text.is_empty()) {
        (false, _) => text,
        (true, true) => HEAD_TARGET.to_string(),
        (true, false) => text + "," + HEAD_TARGET,
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
    /// Experts without a gate (Nemotron-H's `experts.up_proj`, `[E, I,
    /// h]`, as its MLP: [`crate::model::family::Mlp::Up`]).
    ExpertsUp,
    ExpertsDown,
    /// Mixtral's routed experts as transformers 4 builds them, one
    /// `nn.Linear` each: `w1` (gate), `w3` (up), `w2` (down). peft 0.21
    /// reads these names on transformers 5 too, as the stacked experts'
    /// projections.
    W1,
    W2,
    W3,
    /// A Gated DeltaNet's projections (Qwen3.5 and 3.6): `nn.Linear`s
    /// that compute none of the seven projections, so only "all-linear"
    /// or their own names adapt them.
    InProjQkv,
    InProjZ,
    InProjB,
    InProjA,
    OutProj,
    /// Qwen3-Next's fused DeltaNet input projections.
    InProjQkvz,
    InProjBa,
    /// Gemma 4's per-layer inputs: each layer's gate `h → p` and
    /// projection `p → h`, the model's projection of the embeddings
    /// `h → layers · p` (`nn.Linear`s peft's all-linear adapts).
    PerLayerInputGate,
    PerLayerProjection,
    PerLayerModelProjection,
    /// GPT-NeoX's fused `query_key_value`, attention output `dense`, and
    /// MLP `dense_h_to_4h` and `dense_4h_to_h` (`GPTNeoXAttention`,
    /// `GPTNeoXMLP`).
    QueryKeyValue,
    Dense,
    DenseHTo4h,
    Dense4hToH,
}

/// What a module is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleKind {
    /// Query, key, value and output projections (latent attention's too).
    Attention,
    /// A dense MLP's linears (and a shared expert's).
    Mlp,
    /// The gate that scales a shared expert (Qwen2-MoE).
    Gate,
    /// Routed experts, stacked in 3-D parameters.
    Expert,
    /// One routed expert's linear layer (transformers 4's per-expert
    /// `nn.ModuleList`: Mixtral's `w1`, `w2`, `w3`).
    ExpertLinear,
    /// An MoE router.
    Router,
}

impl ModuleKind {
    /// Whether `lora_targets` can name modules of this kind: peft reaches
    /// stacked experts and routers only through its experts conversion
    /// ("all-linear"), never by a name.
    pub const fn nameable(self) -> bool {
        match self {
            ModuleKind::Attention
            | ModuleKind::Mlp
            | ModuleKind::Gate
            | ModuleKind::ExpertLinear => true,
            ModuleKind::Expert | ModuleKind::Router => false,
        }
    }
}

impl ModuleName {
    pub const ALL: [ModuleName; 39] = [
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
        ModuleName::ExpertsUp,
        ModuleName::ExpertsDown,
        ModuleName::W1,
        ModuleName::W2,
        ModuleName::W3,
        ModuleName::InProjQkv,
        ModuleName::InProjZ,
        ModuleName::InProjB,
        ModuleName::InProjA,
        ModuleName::OutProj,
        ModuleName::InProjQkvz,
        ModuleName::InProjBa,
        ModuleName::PerLayerInputGate,
        ModuleName::PerLayerProjection,
        ModuleName::PerLayerModelProjection,
        ModuleName::QueryKeyValue,
        ModuleName::Dense,
        ModuleName::DenseHTo4h,
        ModuleName::Dense4hToH,
    ];

    /// The module's name, its kind and the projections it computes
    /// (before a family's rules: see [`Family::module`]): one table.
    const fn describe(self) -> (&'static str, ModuleKind, Proj) {
        use ModuleKind::{Attention, Expert, ExpertLinear, Gate, Mlp, Router};
        match self {
            ModuleName::QProj => ("q_proj", Attention, Proj::Q),
            ModuleName::KProj => ("k_proj", Attention, Proj::K),
            ModuleName::VProj => ("v_proj", Attention, Proj::V),
            ModuleName::OProj => ("o_proj", Attention, Proj::O),
            ModuleName::QkvProj => ("qkv_proj", Attention, Proj::QKV),
            ModuleName::CAttn => ("c_attn", Attention, Proj::QKV),
            ModuleName::CProjAttn => ("c_proj", Attention, Proj::O),
            ModuleName::CFc => ("c_fc", Mlp, Proj::UP),
            ModuleName::CProjMlp => ("c_proj", Mlp, Proj::DOWN),
            ModuleName::GateProj => ("gate_proj", Mlp, Proj::GATE),
            ModuleName::UpProj => ("up_proj", Mlp, Proj::UP),
            ModuleName::DownProj => ("down_proj", Mlp, Proj::DOWN),
            ModuleName::GateUpProj => ("gate_up_proj", Mlp, Proj::GATE.or(Proj::UP)),
            ModuleName::QAProj => ("q_a_proj", Attention, Proj::Q),
            ModuleName::QBProj => ("q_b_proj", Attention, Proj::Q),
            // DeepSeek's compressed key/value path serves both.
            ModuleName::KvAProjWithMqa => ("kv_a_proj_with_mqa", Attention, Proj::K.or(Proj::V)),
            ModuleName::KvBProj => ("kv_b_proj", Attention, Proj::K.or(Proj::V)),
            ModuleName::SharedExpertGate => ("shared_expert_gate", Gate, Proj::OTHER),
            ModuleName::Router => ("router", Router, Proj::OTHER),
            ModuleName::ExpertsGateUp => ("experts.gate_up_proj", Expert, Proj::GATE.or(Proj::UP)),
            ModuleName::ExpertsUp => ("experts.up_proj", Expert, Proj::UP),
            ModuleName::ExpertsDown => ("experts.down_proj", Expert, Proj::DOWN),
            ModuleName::W1 => ("w1", ExpertLinear, Proj::GATE),
            ModuleName::W2 => ("w2", ExpertLinear, Proj::DOWN),
            ModuleName::W3 => ("w3", ExpertLinear, Proj::UP),
            ModuleName::InProjQkv => ("in_proj_qkv", Attention, Proj::OTHER),
            ModuleName::InProjZ => ("in_proj_z", Attention, Proj::OTHER),
            ModuleName::InProjB => ("in_proj_b", Attention, Proj::OTHER),
            ModuleName::InProjA => ("in_proj_a", Attention, Proj::OTHER),
            ModuleName::OutProj => ("out_proj", Attention, Proj::OTHER),
            ModuleName::InProjQkvz => ("in_proj_qkvz", Attention, Proj::OTHER),
            ModuleName::InProjBa => ("in_proj_ba", Attention, Proj::OTHER),
            ModuleName::PerLayerInputGate => ("per_layer_input_gate", Mlp, Proj::OTHER),
            ModuleName::PerLayerProjection => ("per_layer_projection", Mlp, Proj::OTHER),
            ModuleName::PerLayerModelProjection => ("per_layer_model_projection", Mlp, Proj::OTHER),
            ModuleName::QueryKeyValue => ("query_key_value", Attention, Proj::QKV),
            ModuleName::Dense => ("dense", Attention, Proj::O),
            ModuleName::DenseHTo4h => ("dense_h_to_4h", Mlp, Proj::UP),
            ModuleName::Dense4hToH => ("dense_4h_to_h", Mlp, Proj::DOWN),
        }
    }

    /// The name transformers gives it (GPT-2's attention output and MLP
    /// down projection share `c_proj`).
    pub const fn text(self) -> &'static str {
        self.describe().0
    }

    pub const fn kind(self) -> ModuleKind {
        self.describe().1
    }

    /// Whether `lora_targets` can name it.
    pub const fn nameable(self) -> bool {
        self.kind().nameable()
    }

    /// The projections the module computes (before a family's rules:
    /// see [`Family::module`]).
    pub const fn proj(self) -> Proj {
        self.describe().2
    }

    /// Every nameable module called `text`, as bits.
    pub(crate) fn bits_named(text: &str) -> u64 {
        ModuleName::ALL
            .into_iter()
            .filter(|m| m.nameable() && m.text() == text)
            .fold(0, |b, m| b | m.bit())
    }

    pub(crate) const fn bit(self) -> u64 {
        1 << self as u8
    }
}

// Every module name has a bit of a `u64` (`Targets::names`).
const _: () = assert!(ModuleName::ALL.len() <= u64::BITS as usize);

impl Family {
    /// Module `name` as LoRA sees it in this family: the projections it
    /// computes, or none where peft gives it no adapter. With peft's
    /// experts conversion (`Moe::peft_experts`) "all-linear" adapts the
    /// stacked experts and the router, and leaves the dense and shared
    /// MLPs' linears alone; without it, experts and routers are never
    /// adapted.
    ///
    /// Source: peft 0.21 `tuners/lora/model.py` (experts conversion);
    /// measured in `tests/fixtures/families.jsonl` (LoRA rows of each MoE
    /// family).
    pub const fn module(self, name: ModuleName) -> Module {
        let (peft_experts, router_linear) = match self.described().moe {
            Some(m) => (m.peft_experts, m.router_linear),
            None => (false, false),
        };
        let adapted = match name.kind() {
            ModuleKind::Expert => peft_experts,
            ModuleKind::Router => peft_experts || router_linear,
            ModuleKind::Mlp => !peft_experts,
            ModuleKind::Attention | ModuleKind::Gate | ModuleKind::ExpertLinear => true,
        };
        Module::new(name, if adapted { name.proj() } else { Proj::NONE })
    }
}

impl Family {
    /// Module `name` as LoRA sees it on transformers 4, which has no
    /// stacked experts for peft to convert: every `nn.Linear` is a target
    /// as its name and projections say, a router too where it is an
    /// `nn.Linear` (the families whose 4.x experts are per-expert linears);
    /// stacked experts and a router parameter are not linear layers.
    ///
    /// Source: transformers 4.48.1 and 4.57.6 modeling code; peft 0.13 and
    /// 0.17 `all-linear` (every `nn.Linear` but the output head).
    pub const fn module_v4(self, name: ModuleName) -> Module {
        let linear_router = match self.described().legacy.expert_linears {
            Some(e) => e.router_linear,
            None => false,
        };
        let adapted = match name.kind() {
            ModuleKind::Expert => false,
            ModuleKind::Router => linear_router,
            ModuleKind::Attention
            | ModuleKind::Mlp
            | ModuleKind::Gate
            | ModuleKind::ExpertLinear => true,
        };
        Module::new(name, if adapted { name.proj() } else { Proj::NONE })
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

impl Serialize for Proj {
    /// As the query-string text (`all`, `attn`, `q,v`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}
