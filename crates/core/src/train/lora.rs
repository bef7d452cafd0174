//! LoRA as peft configures it: which modules get adapters ([`Targets`],
//! peft's `target_modules`) and what the adapters add ([`lora_count`]).

use crate::model::{Architecture, ExpertLayout, Module, ModuleKind, ModuleName, Proj};
use serde::Serialize;

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

    /// Whether `m` gets an adapter: its projections are selected, or its
    /// name is, or (stacked experts) the per-expert linears it holds are.
    pub fn adapts(&self, m: Module) -> bool {
        !m.proj.is_empty()
            && (m.proj.within(self.selected(m.name)) || self.names & m.name.bit() != 0)
    }

    /// The projections selected for a module called `name`: per-expert
    /// linears' names (Mixtral's `w1` is the gate) select the stacked
    /// experts' projections too, as peft 0.21 converts transformers 4's
    /// names for transformers 5's 3-D experts
    /// (`utils/transformers_weight_conversion.py`).
    fn selected(self, name: ModuleName) -> Proj {
        if self.names == 0 || name.kind() != ModuleKind::Expert {
            return self.proj;
        }
        self.names()
            .filter(|n| n.kind() == ModuleKind::ExpertLinear)
            .fold(self.proj, |p, n| p.or(n.proj()))
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

    /// Why these targets do not fit `a`'s modules (its experts held as
    /// `experts` says), or `None` when they do: a name the family does not
    /// have, a projection it does not compute, or part of a fused module
    /// (peft adapts whole modules).
    pub fn misfit(self, a: &Architecture, experts: ExpertLayout) -> Option<String> {
        if self.proj == Proj::ALL {
            return None;
        }
        let mut modules: Vec<Module> = Vec::new();
        a.for_each_tensor_as(experts, |_, t| {
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
        // transformers 4's per-expert names, which peft converts for
        // stacked experts.
        let legacy = a.family.spec().legacy.expert_linears;
        let converted = |n: ModuleName| legacy.is_some_and(|l| [l.gate, l.down, l.up].contains(&n));
        for n in self.names() {
            if !modules.iter().any(|m| m.name.text() == n.text()) && !converted(n) {
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
            let sel = self.selected(m.name);
            if m.proj.meets(sel) && !m.proj.within(sel) {
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

/// The adapters LoRA adds, counted from the parameter tensors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoraCount {
    /// Adapter parameters: r × (in + out) per adapted module.
    pub params: u128,
    /// Adapter tensors: A and B per adapted module.
    pub tensors: u128,
    /// Elements of the largest adapter (r × max(in, out)).
    pub largest: u128,
    /// Adafactor's factored elements: (r + in) + (out + r) per module.
    pub factored: u128,
}

/// Counts LoRA's adapters on `a`.
///
/// Source: peft 0.21 `LoraLayer.update_layer`: `lora_A = nn.Linear(in, r)`,
/// `lora_B = nn.Linear(r, out)`, both without bias; `ParamWrapper` (a 3-D
/// experts parameter) the same with `r × experts` (see
/// [`ParamTensor::lora_rank`]); transformers 4's per-expert linears one
/// pair each (measured: shrunk Mixtral on 4.48.1 and 4.57.6, `n_trainable`
/// in t4_rows.jsonl).
pub fn lora_count(a: &Architecture, lora: &Lora, experts: ExpertLayout) -> LoraCount {
    let mut c = LoraCount::default();
    a.for_each_tensor_as(experts, |at, t| {
        if t.module().is_some_and(|m| lora.adapts(m)) {
            let (i, o) = (u128::from(t.cols), u128::from(t.rows));
            let r = t.lora_rank(lora.r);
            // Each module of the entry (each expert's, per-expert linears).
            let n = at.copies() * t.modules();
            c.params += at.copies() * t.lora_params(lora.r);
            c.tensors += 2 * n;
            c.largest = c.largest.max(r * i.max(o));
            c.factored += n * (i + o + 2 * r);
            if lora.dora {
                // DoRA's magnitude: one fp32 vector of the output width
                // (`lora_magnitude_vector`).
                c.params += n * o;
                c.tensors += n;
                c.factored += n * o;
            }
        }
    });
    c
}
