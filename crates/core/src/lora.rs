//! LoRA adapters as both workloads read them: their rank and which
//! modules they adapt (peft's `r` and `target_modules`), for training
//! under peft and for an adapter an inference engine loads beside the
//! model (llama.cpp's `--lora`, Ollama's `ADAPTER`), and the type the
//! adapter's GGUF holds.

use crate::choice::{bounded, choice_enum};
use crate::model::{
    with_head_target, Architecture, ExpertLayout, Module, ModuleKind, ModuleName, Proj, HEAD_TARGET,
};
use serde::Serialize;

bounded!(
    /// LoRA rank r.
    LoraRank(u32),
    1,
    4096
);

/// What `lora_targets` selects: projections by vramfit's names (a module
/// is adapted when every projection it computes is selected: a fused
/// `qkv_proj` needs q, k and v), modules by their transformers names, and
/// the output layer (`lm_head`, which peft adapts only by name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Targets {
    pub proj: Proj,
    names: u64,
    head: bool,
}

impl Targets {
    /// peft's "all-linear": every linear layer but the output head.
    pub const ALL: Targets = Targets {
        proj: Proj::ALL,
        names: 0,
        head: false,
    };
    /// q, k, v and o.
    pub const ATTN: Targets = Targets {
        proj: Proj::ATTN,
        names: 0,
        head: false,
    };

    pub const fn of(proj: Proj) -> Targets {
        Targets {
            proj,
            names: 0,
            head: false,
        }
    }

    /// The output layer (`lm_head`) is named: an engine's adapter may
    /// hold a pair for it (`output.weight.lora_a`/`_b` in llama.cpp's).
    pub const fn head(self) -> bool {
        self.head
    }

    /// Whether `m` gets an adapter: its projections are selected, or its
    /// name is, or (stacked experts) the per-expert linears it holds are.
    pub fn adapts(&self, m: Module) -> bool {
        !m.proj.is_empty()
            && (m.proj.within(self.selected(m.name)) || self.names & m.name.bit() != 0)
    }

    /// The projections selected for a module called `name`: transformers
    /// 4's per-expert linears' names select the stacked experts'
    /// projections too (Mixtral's `w1` is the gate; Qwen-MoE's and
    /// DeepSeek's `gate_proj`, `up_proj`, `down_proj`), as peft 0.21
    /// converts them for transformers 5's 3-D experts
    /// (`utils/transformers_weight_conversion.py`,
    /// `_convert_peft_config_moe`: such a name becomes a target parameter
    /// of the experts and leaves the target modules, so the family's dense
    /// and shared MLPs are not adapted: `Family::module`). A name the
    /// family has no per-expert linear for is refused before
    /// ([`Targets::misfit`]).
    fn selected(self, name: ModuleName) -> Proj {
        if self.names == 0 || name.kind() != ModuleKind::Expert {
            return self.proj;
        }
        self.names()
            .filter(|n| matches!(n.kind(), ModuleKind::ExpertLinear | ModuleKind::Mlp))
            .fold(self.proj, |p, n| p.or(n.proj()))
    }

    /// The modules named (not through a projection).
    pub fn names(self) -> impl Iterator<Item = ModuleName> {
        ModuleName::ALL
            .into_iter()
            .filter(move |m| self.names & m.bit() != 0)
    }

    /// Reads `all` (or `all-linear`), `attn`, and comma lists of q, k, v,
    /// o, gate, up, down, module names (`q_proj`, `qkv_proj`, `c_attn`,
    /// …) and `lm_head`; the first word it cannot read is the error.
    pub fn parse(text: &str) -> Result<Targets, String> {
        let mut t = Targets::default();
        for word in text.split(',').map(str::trim) {
            let word_lc = word.to_ascii_lowercase();
            match word_lc.as_str() {
                "all" | "all-linear" => t.proj = Proj::ALL,
                "attn" => t.proj = t.proj.or(Proj::ATTN),
                HEAD_TARGET => t.head = true,
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
    /// `q_b_proj,kv_b_proj`, `all,lm_head`).
    pub fn text(self) -> String {
        with_head_target(self.modules_text(), self.head)
    }

    /// The text of the projections and modules named.
    fn modules_text(self) -> String {
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

choice_enum! {
    /// The type of an adapter's GGUF tensors, as `convert_lora_to_gguf.py`
    /// writes them (`--outtype`, llama.cpp b10488: `f32` unless told
    /// otherwise; `q8_0` only for a tensor whose rows are whole blocks of
    /// 32, the others F16, `conversion/base.py:1000-1014`), or Ollama's
    /// conversion of a PEFT adapter (F16, BF16 from a BF16 source:
    /// `convert/reader.go:40-70`, Ollama fb30760).
    pub enum AdapterType {
        F32 = "f32", "f32 (convert_lora_to_gguf's default)",
        F16 = "f16", "f16 (Ollama's conversion)",
        Bf16 = "bf16", "bf16",
        Q8_0 = "q8_0", "q8_0 (rows not a multiple of 32 in f16)",
    }
}

impl AdapterType {
    /// The ggml type of a tensor whose rows are `ne0` wide.
    pub fn ggml(self, ne0: u64) -> crate::model::gguf::GgmlType {
        use crate::model::gguf::GgmlType as G;
        match self {
            AdapterType::F32 => G::F32,
            AdapterType::F16 => G::F16,
            AdapterType::Bf16 => G::Bf16,
            AdapterType::Q8_0 if ne0.is_multiple_of(32) => G::Q8_0,
            AdapterType::Q8_0 => G::F16,
        }
    }
}

/// An adapter an inference engine loads beside the model (llama.cpp's
/// `--lora`, Ollama's `ADAPTER`): trained at rank `r` on `targets`,
/// converted to `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Adapter {
    pub r: LoraRank,
    pub targets: Targets,
    pub ty: AdapterType,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lora_targets` as typed → as the link writes it: the output layer
    /// after the modules, and the text reads back to the same targets.
    #[test]
    fn targets_read_and_written() {
        for (typed, written, head) in [
            ("all", "all", false),
            ("all-linear,LM_HEAD", "all,lm_head", true),
            ("lm_head,q,v", "q,v,lm_head", true),
            ("lm_head", "lm_head", true),
            ("attn,q_b_proj", "attn,q_b_proj", false),
        ] {
            let t = Targets::parse(typed).expect(typed);
            assert_eq!((t.text().as_str(), t.head()), (written, head), "{typed}");
            assert_eq!(Targets::parse(&t.text()), Ok(t), "{typed}");
        }
        assert_eq!(Targets::parse("q,lm_heads"), Err("lm_heads".to_string()));
    }
}
