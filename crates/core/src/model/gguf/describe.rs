//! A GGUF header's metadata as a model's description: the hyperparameters
//! llama.cpp reads ([`GgufModel`]), and the [`Architecture`] they make
//! where vramfit has the family, refused by name otherwise.
//!
//! Source: llama.cpp b8973 (`3142f1db`) `gguf-py/gguf/constants.py`
//! (`Keys.LLM`, `Keys.Attention`, `Keys.Rope`: `{arch}.block_count` …),
//! `convert_hf_to_gguf.py` (`TextModel.set_gguf_parameters` and each
//! family's: which config field each key holds; DeepSeek's MLA keys),
//! `src/llama-model.cpp` (`load_hparams`).

use super::super::arch::{ArchError, ArchNum, Architecture};
use super::super::family::{Blocks, Family, Qkv, Recurrence, RopeStyle, Shared, Sliding};
use super::super::module::Proj;
use super::header::{GgufHeader, MetaValue};
use super::layout::Converter;
use super::types::GgmlType;
use std::fmt;

/// The hyperparameters a GGUF header states (`None`: the key is absent
/// or not a whole number).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GgufModel {
    /// `general.architecture`.
    pub architecture: String,
    /// `general.file_type` (a `llama_ftype` id).
    pub file_type: Option<u64>,
    pub context_length: Option<u64>,
    pub block_count: Option<u64>,
    pub embedding_length: Option<u64>,
    pub feed_forward_length: Option<u64>,
    pub head_count: Option<u64>,
    pub head_count_kv: Option<u64>,
    /// `attention.key_length` / `value_length` (a head's width).
    pub key_length: Option<u64>,
    pub value_length: Option<u64>,
    /// DeepSeek's MLA: the decompressed head widths.
    pub key_length_mla: Option<u64>,
    pub value_length_mla: Option<u64>,
    pub q_lora_rank: Option<u64>,
    pub kv_lora_rank: Option<u64>,
    pub rope_dimension_count: Option<u64>,
    pub expert_count: Option<u64>,
    pub expert_used_count: Option<u64>,
    pub expert_feed_forward_length: Option<u64>,
    pub expert_shared_count: Option<u64>,
    pub expert_shared_feed_forward_length: Option<u64>,
    pub leading_dense_block_count: Option<u64>,
    /// Llama 4: experts on every n-th layer (`interleave_moe_layer_step`,
    /// `Llama4Model.set_gguf_parameters`).
    pub interleave_moe_layer_step: Option<u64>,
    /// 1 softmax, 2 sigmoid (DeepSeek-V3).
    pub expert_gating_func: Option<u64>,
    pub sliding_window: Option<u64>,
    /// Layers marked in `attention.sliding_window_pattern`, when it is a
    /// list.
    pub sliding_layers: Option<u64>,
    /// Rows of `token_embd.weight`, else `{arch}.vocab_size`, else the
    /// length of `tokenizer.ggml.tokens`.
    pub vocab: Option<u64>,
    /// No `output.weight`: the output layer reads the token embedding.
    pub tied: bool,
    /// Gemma 4 (`src/models/gemma4.cpp` `load_arch_hparams`): the sliding
    /// layers' head width (`attention.key_length_swa`; `key_length` is the
    /// global layers'), the global layers' key/value heads (from a
    /// per-layer `attention.head_count_kv` list, where `head_count_kv` is
    /// the first sliding layer's), the widest layer's MLP (a per-layer
    /// `feed_forward_length` list), the layers reusing keys and values
    /// (`attention.shared_kv_layers`), the per-layer embedding's width
    /// (`embedding_length_per_layer_input`) and rows
    /// (`per_layer_token_embd.weight`), the period of the sliding pattern
    /// (every n-th layer full, when the list is periodic), and whether the
    /// first global layer has an `attn_v` (none: keys are values).
    pub key_length_swa: Option<u64>,
    pub head_count_kv_global: Option<u64>,
    pub feed_forward_length_max: Option<u64>,
    pub shared_kv_layers: Option<u64>,
    pub embedding_length_per_layer: Option<u64>,
    pub per_layer_vocab: Option<u64>,
    pub sliding_period: Option<u64>,
    pub global_attn_v: Option<bool>,
    /// `nextn_predict_layers`: MTP blocks counted in `block_count`
    /// (GLM-4.5's converter, `conversion/glm.py`).
    pub nextn_predict_layers: Option<u64>,
    /// The first layer has `attn_q_norm.weight` (GLM-4.5's optional q/k
    /// norms).
    pub q_norm: bool,
    /// LFM2 (`src/llama-model.cpp` `load_hparams`): the layers whose
    /// `attention.head_count_kv` entry is 0 are recurrent
    /// (`recurrent_layer_arr`), and `shortconv.l_cache` is their kernel.
    pub kv_zero_layers: Option<u64>,
    pub shortconv_l_cache: Option<u64>,
    /// Nemotron-H (`src/models/nemotron-h.cpp` `load_arch_hparams`): the
    /// layers whose per-layer `feed_forward_length` entry is not 0 are MLPs
    /// alone (the others recurrent, with 0 key/value heads too, or
    /// attention).
    pub ffn_nonzero_layers: Option<u64>,
    /// Mamba-2 (`src/models/granite-hybrid.cpp` `load_arch_hparams`): the
    /// `ssm.*` keys.
    pub ssm: SsmKeys,
    /// DeepSeek Sparse Attention (`src/models/deepseek32.cpp`,
    /// `glm-dsa.cpp` `load_arch_hparams`): the indexer's heads
    /// (`attention.indexer.head_count`) and head width (`key_length`), and
    /// the layers `attention.indexer.types` marks as reusing the previous
    /// layer's indexer (`false`; GLM-5.2).
    pub indexer_head_count: Option<u64>,
    pub indexer_key_length: Option<u64>,
    /// The indexer's top-k (`attention.indexer.top_k`).
    pub indexer_top_k: Option<u64>,
    pub indexer_shared_layers: Option<u64>,
}

/// A Mamba-2 model's `ssm.*` keys: the kernel (`conv_kernel`), the state
/// (`state_size`), the groups (`group_count`), `d_inner` (`inner_size`)
/// and the heads (`time_step_rank`, which holds `mamba_n_heads`:
/// `conversion/granite.py`, `GraniteHybridModel.set_gguf_parameters`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SsmKeys {
    pub conv_kernel: Option<u64>,
    pub state_size: Option<u64>,
    pub group_count: Option<u64>,
    pub inner_size: Option<u64>,
    pub time_step_rank: Option<u64>,
    /// Kimi Linear's KDA heads' width (`kda.head_dim`).
    pub kda_head_dim: Option<u64>,
}

impl GgufHeader {
    /// The hyperparameters the metadata states.
    pub fn model(&self) -> GgufModel {
        let arch = self
            .get("general.architecture")
            .and_then(MetaValue::as_str)
            .unwrap_or("")
            .to_owned();
        let num = |key: &str| {
            self.get(&format!("{arch}.{key}"))
                .and_then(MetaValue::as_u64)
        };
        let vocab = self
            .tensor("token_embd.weight")
            .filter(|t| t.n_dims >= 2)
            .map(|t| t.ne[1])
            .or_else(|| num("vocab_size"))
            .or_else(|| {
                let tokens = self.get("tokenizer.ggml.tokens")?;
                tokens.as_array().map(|a| a.len)
            });
        let sliding_layers = self
            .get(&format!("{arch}.attention.sliding_window_pattern"))
            .and_then(MetaValue::as_array)
            .filter(|a| !a.values.is_empty())
            .map(|a| {
                a.values
                    .iter()
                    .filter(|v| **v == MetaValue::Bool(true))
                    .count() as u64
            });
        let pattern = self.swa_pattern(&arch);
        let first_global = pattern.iter().position(|swa| !swa);
        let list = |key: &str| {
            self.get(&format!("{arch}.{key}"))
                .and_then(MetaValue::as_array)
                .map(|a| a.values.iter().map(MetaValue::as_u64).collect::<Vec<_>>())
        };
        let kv_list = list("attention.head_count_kv");
        let at = |l: &Option<Vec<Option<u64>>>, i: Option<usize>| {
            l.as_ref()
                .and_then(|v| v.get(i.unwrap_or(0)).copied().flatten())
        };
        let first_swa = pattern.iter().position(|swa| *swa);
        let ffn_list = list("feed_forward_length");
        GgufModel {
            key_length_swa: num("attention.key_length_swa"),
            head_count_kv_global: at(&kv_list, first_global),
            feed_forward_length_max: ffn_list
                .as_ref()
                .and_then(|v| v.iter().flatten().copied().max()),
            shared_kv_layers: num("attention.shared_kv_layers"),
            embedding_length_per_layer: num("embedding_length_per_layer_input"),
            per_layer_vocab: self
                .tensor("per_layer_token_embd.weight")
                .filter(|t| t.n_dims >= 2)
                .map(|t| t.ne[1]),
            sliding_period: first_global
                .map(|g| g + 1)
                .filter(|&p| {
                    pattern
                        .iter()
                        .enumerate()
                        .all(|(i, swa)| *swa != (i + 1).is_multiple_of(p))
                })
                .map(|p| p as u64),
            global_attn_v: first_global
                .map(|g| self.tensor(&format!("blk.{g}.attn_v.weight")).is_some()),
            file_type: self.get("general.file_type").and_then(MetaValue::as_u64),
            context_length: num("context_length"),
            block_count: num("block_count"),
            embedding_length: num("embedding_length"),
            feed_forward_length: num("feed_forward_length").or(at(&ffn_list, Some(0))),
            head_count: num("attention.head_count"),
            // A list's first sliding layer's (Gemma 4), else its widest
            // (LFM2's convolution layers have 0).
            head_count_kv: num("attention.head_count_kv").or(at(&kv_list, first_swa)
                .filter(|&k| k > 0)
                .or_else(|| kv_list.as_ref()?.iter().flatten().copied().max())),
            kv_zero_layers: kv_list
                .as_ref()
                .map(|v| v.iter().filter(|k| **k == Some(0)).count() as u64),
            shortconv_l_cache: num("shortconv.l_cache"),
            ffn_nonzero_layers: ffn_list
                .as_ref()
                .map(|v| v.iter().filter(|f| f.is_some_and(|f| f > 0)).count() as u64),
            ssm: SsmKeys {
                conv_kernel: num("ssm.conv_kernel"),
                state_size: num("ssm.state_size"),
                group_count: num("ssm.group_count"),
                inner_size: num("ssm.inner_size"),
                time_step_rank: num("ssm.time_step_rank"),
                kda_head_dim: num("kda.head_dim"),
            },
            key_length: num("attention.key_length"),
            value_length: num("attention.value_length"),
            key_length_mla: num("attention.key_length_mla"),
            value_length_mla: num("attention.value_length_mla"),
            q_lora_rank: num("attention.q_lora_rank"),
            kv_lora_rank: num("attention.kv_lora_rank"),
            rope_dimension_count: num("rope.dimension_count"),
            expert_count: num("expert_count"),
            expert_used_count: num("expert_used_count"),
            expert_feed_forward_length: num("expert_feed_forward_length"),
            expert_shared_count: num("expert_shared_count"),
            expert_shared_feed_forward_length: num("expert_shared_feed_forward_length"),
            leading_dense_block_count: num("leading_dense_block_count"),
            interleave_moe_layer_step: num("interleave_moe_layer_step"),
            expert_gating_func: num("expert_gating_func"),
            sliding_window: num("attention.sliding_window"),
            sliding_layers,
            vocab,
            tied: self.tensor("output.weight").is_none(),
            nextn_predict_layers: num("nextn_predict_layers"),
            q_norm: self.tensor("blk.0.attn_q_norm.weight").is_some(),
            indexer_head_count: num("attention.indexer.head_count"),
            indexer_key_length: num("attention.indexer.key_length"),
            indexer_top_k: num("attention.indexer.top_k"),
            indexer_shared_layers: self
                .get(&format!("{arch}.attention.indexer.types"))
                .and_then(MetaValue::as_array)
                .map(|a| {
                    a.values
                        .iter()
                        .filter(|v| **v == MetaValue::Bool(false))
                        .count() as u64
                }),
            architecture: arch,
        }
    }
}

impl GgufHeader {
    /// `attention.sliding_window_pattern` as a list of flags (empty when
    /// it is not a list).
    fn swa_pattern(&self, arch: &str) -> Vec<bool> {
        self.get(&format!("{arch}.attention.sliding_window_pattern"))
            .and_then(MetaValue::as_array)
            .map(|a| {
                a.values
                    .iter()
                    .map(|v| *v == MetaValue::Bool(true))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Why a GGUF header does not make an [`Architecture`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GgufArchError {
    /// No `general.architecture` text.
    NoArchitecture,
    /// An architecture vramfit has no family for (its name, clipped).
    UnknownArchitecture(String),
    /// A key the family needs is absent.
    Missing(String),
    /// A key's value is not one vramfit can use, and why.
    Invalid { key: String, reason: String },
    /// The numbers do not make a model of the family.
    Arch(ArchError),
    /// A LoRA adapter's file (`general.type` `adapter`, as
    /// `convert_lora_to_gguf.py` writes it), not a model's: the keys that
    /// hold it beside the model.
    Adapter(AdapterFile),
}

/// What a LoRA adapter's GGUF says of itself: its rank (`lora_a`'s
/// `ne[1]`), the projections it adapts by their names and the output
/// layer, the weights it adapts that no target names, and its tensors'
/// type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterFile {
    pub r: u64,
    pub targets: Proj,
    pub head: bool,
    pub unnamed: usize,
    pub ty: GgmlType,
}

impl AdapterFile {
    /// The adapter a header describes, if it is one: `general.type` is
    /// `adapter` (`convert_lora_to_gguf.py`, llama.cpp b10488; the loader
    /// refuses any other, `llama_adapter_lora_init_impl`).
    pub fn of(h: &GgufHeader) -> Option<AdapterFile> {
        if h.get("general.type").and_then(MetaValue::as_str) != Some("adapter") {
            return None;
        }
        let mut f = AdapterFile {
            r: 0,
            targets: Proj::NONE,
            head: false,
            unnamed: 0,
            ty: GgmlType::F32,
        };
        for t in &h.tensors {
            let Some(base) = t.name.strip_suffix(".weight.lora_a") else {
                continue;
            };
            (f.r, f.ty) = (t.ne[1], t.ty);
            if base == "output" {
                f.head = true;
                continue;
            }
            let base = base.rsplit('.').next().unwrap_or(base);
            let p = match base {
                "attn_q" => Proj::Q,
                "attn_k" => Proj::K,
                "attn_v" => Proj::V,
                "attn_qkv" => Proj::QKV,
                "attn_output" => Proj::O,
                "ffn_gate" => Proj::GATE,
                "ffn_up" => Proj::UP,
                "ffn_down" => Proj::DOWN,
                _ => Proj::NONE,
            };
            if p.is_empty() {
                f.unnamed += 1;
            }
            f.targets = f.targets.or(p);
        }
        Some(f)
    }
}

impl fmt::Display for GgufArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufArchError::NoArchitecture => {
                f.write_str("the GGUF header names no general.architecture")
            }
            GgufArchError::UnknownArchitecture(a) => {
                write!(f, "GGUF architecture `{a}` is not one vramfit models (")?;
                // The converters' names, once each, in the families' order.
                let mut seen: Vec<&str> = Vec::with_capacity(2 * Family::ALL.len());
                for c in Family::ALL.iter().map(|&fam| Converter::of(fam)) {
                    for name in std::iter::once(c.arch).chain(c.moe_arch) {
                        if !seen.contains(&name) {
                            seen.push(name);
                        }
                    }
                }
                write!(f, "{})", seen.join(", "))
            }
            GgufArchError::Missing(key) => write!(f, "the GGUF header has no `{key}`"),
            GgufArchError::Invalid { key, reason } => write!(f, "`{key}` {reason}"),
            GgufArchError::Arch(e) => write!(f, "these numbers do not make a model: {e}"),
            GgufArchError::Adapter(a) => {
                // `lora_type`'s names are ggml's, lower case.
                let ty = a.ty.name().to_ascii_lowercase();
                write!(
                    f,
                    "this GGUF is a LoRA adapter (rank {}), not a model: read the base model's file, and hold the adapter beside it with lora_r={}&lora_targets={}&lora_type={ty}",
                    a.r,
                    a.r,
                    crate::model::with_head_target(a.targets.text(), a.head)
                )?;
                if a.unnamed > 0 {
                    let (n, s) = (a.unnamed, if a.unnamed == 1 { "" } else { "s" });
                    write!(
                        f,
                        " (and {n} more weight{s} it adapts that lora_targets cannot name, not counted)"
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for GgufArchError {}

/// The family of a GGUF architecture: the inverse of the converter's
/// choice ([`Converter::of`]), with the expert count telling Mixtral from
/// Llama and the gating function DeepSeek-V3 from V2. Mistral's files are
/// `llama` (llama.cpp ignores their sliding window), so read as Llama; a
/// Gemma 4 12B's file is `gemma4`, read as Gemma 4 (the same layers
/// without per-layer embeddings or experts).
fn family(m: &GgufModel) -> Result<Family, GgufArchError> {
    let experts = m.expert_count.unwrap_or(0) > 0;
    let family = match m.architecture.as_str() {
        "" => return Err(GgufArchError::NoArchitecture),
        "llama" if experts => Family::Mixtral,
        "deepseek2" if m.expert_gating_func == Some(2) => Family::DeepseekV3,
        // OLMo 3's files are `olmo2` with a sliding window.
        "olmo2" if m.sliding_window.unwrap_or(0) > 0 => Family::Olmo3,
        other => Family::ALL
            .iter()
            .copied()
            .filter(|f| {
                !matches!(
                    f,
                    Family::Mistral
                        | Family::Mixtral
                        | Family::DeepseekV3
                        | Family::Glm4MoeLite
                        | Family::Gemma4UnifiedText
                        | Family::Olmo3
                )
            })
            .find(|f| {
                let c = Converter::of(*f);
                c.arch == other || c.moe_arch == Some(other)
            })
            .ok_or_else(|| {
                GgufArchError::UnknownArchitecture(crate::clip::clip(other, crate::clip::QUOTE))
            })?,
    };
    Ok(family)
}

/// The [`Architecture`] a GGUF header describes, checked by
/// [`Architecture::validate`]. The numbers come from the metadata (the
/// converter's keys, `describe.rs`'s sources), the vocabulary from the
/// token embedding's rows and tying from the absence of `output.weight`.
pub fn architecture_of(h: &GgufHeader) -> Result<Architecture, GgufArchError> {
    if let Some(a) = AdapterFile::of(h) {
        return Err(GgufArchError::Adapter(a));
    }
    let m = h.model();
    let r = Keys { m: &m };
    let family = family(&m)?;
    let spec = family.spec();
    let mut a = r.dense(family)?;
    let optional = spec.moe.is_some_and(|moe| moe.optional);
    if spec.moe.is_some() && (!optional || m.expert_count.unwrap_or(0) > 0) {
        r.experts(&mut a)?;
    }
    let ffn = match spec.blocks {
        // A list whose recurrent and attention layers' entries are 0.
        Blocks::Single => m.feed_forward_length_max,
        Blocks::Joint => m.feed_forward_length,
    }
    .or(m.expert_feed_forward_length);
    a.ffn = r.fit(
        ArchNum::Ffn,
        r.need(ffn, "feed_forward_length")?,
        "feed_forward_length",
    )?;
    if spec.qkv == Qkv::Latent {
        r.latent(&mut a)?;
    }
    if spec.rope == RopeStyle::PartialCat {
        // GLM-4.5: `rope.dimension_count` is the rotary part
        // (`Glm4MoeModel.set_gguf_parameters`), `block_count` counts the
        // MTP blocks, and the q/k norms are there or not.
        let rope = m.rope_dimension_count;
        a.rope_dim = r.needed(ArchNum::RopeDim, rope, "rope.dimension_count")?;
        r.without_mtp_blocks(&mut a)?;
    }
    if spec.qk_norm_optional {
        a.qk_norm = u32::from(m.q_norm);
    }
    let window = match (Converter::of(family).implied_window, m.sliding_window) {
        (0, w) => w.unwrap_or(0),
        (_, Some(0)) => 0,
        (implied, Some(_) | None) => u64::from(implied),
    };
    if window > 0 && (spec.sliding != Sliding::None || m.sliding_layers.is_some()) {
        a.sliding_window = r.fit(ArchNum::SlidingWindow, window, "attention.sliding_window")?;
        a.sliding_layers = match m.sliding_layers {
            Some(n) => r.fit(
                ArchNum::SlidingLayers,
                n,
                "attention.sliding_window_pattern",
            )?,
            None => spec.sliding.count(a.layers),
        };
    }
    if spec.varies_by_layer() {
        r.gemma4(&mut a)?;
    }
    if spec.short_conv() {
        // LFM2: the layers without key/value heads are convolutions.
        let zeros = m.kv_zero_layers.unwrap_or(0);
        a.linear_layers = r.fit(ArchNum::LinearLayers, zeros, "attention.head_count_kv")?;
        let kernel = m.shortconv_l_cache;
        a.linear_conv = r.needed(ArchNum::LinearConv, kernel, "shortconv.l_cache")?;
    }
    if spec.mamba2() {
        r.mamba2(&mut a)?;
    }
    if spec.linear.is_some_and(|l| l.kind == Recurrence::Kda) {
        r.kda(&mut a)?;
    }
    a.validate().map_err(GgufArchError::Arch)?;
    Ok(a)
}

/// The header's numbers, read as an architecture's: present when needed,
/// and within the bounds vramfit accepts ([`ArchNum::max`]).
struct Keys<'a> {
    m: &'a GgufModel,
}

impl Keys<'_> {
    fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.m.architecture)
    }

    fn need(&self, v: Option<u64>, k: &str) -> Result<u64, GgufArchError> {
        v.ok_or_else(|| GgufArchError::Missing(self.key(k)))
    }

    fn fit(&self, num: ArchNum, v: u64, k: &str) -> Result<u32, GgufArchError> {
        u32::try_from(v)
            .ok()
            .filter(|&v| v <= num.max())
            .ok_or_else(|| GgufArchError::Invalid {
                key: self.key(k),
                reason: format!("({v}) must be at most {}", num.max()),
            })
    }

    /// `fit` of a key that must be there.
    fn needed(&self, num: ArchNum, v: Option<u64>, k: &str) -> Result<u32, GgufArchError> {
        self.fit(num, self.need(v, k)?, k)
    }

    /// The numbers every decoder has: width, layers, heads, the head's
    /// width (`key_length`, else width / heads), vocabulary, tying, the
    /// trained context.
    fn dense(&self, family: Family) -> Result<Architecture, GgufArchError> {
        let m = self.m;
        let hidden = self.needed(ArchNum::Hidden, m.embedding_length, "embedding_length")?;
        let heads = self.needed(ArchNum::Heads, m.head_count, "attention.head_count")?;
        let head_dim = match m.key_length {
            Some(k) => self.fit(ArchNum::HeadDim, k, "attention.key_length")?,
            None => hidden
                .checked_div(heads)
                .filter(|d| d * heads == hidden)
                .unwrap_or(0),
        };
        let kv = m.head_count_kv.unwrap_or(u64::from(heads));
        Ok(Architecture {
            family,
            hidden,
            layers: self.needed(ArchNum::Layers, m.block_count, "block_count")?,
            heads,
            kv_heads: self.fit(ArchNum::KvHeads, kv, "attention.head_count_kv")?,
            head_dim,
            vocab: self.needed(ArchNum::Vocab, m.vocab, "vocab_size")?,
            tied: m.tied,
            positions: self.fit(
                ArchNum::Positions,
                m.context_length.unwrap_or(0),
                "context_length",
            )?,
            ..Architecture::BLANK
        })
    }

    /// The experts' numbers: count, per token, width (Mixtral writes only
    /// `feed_forward_length`, an expert's width), the shared expert
    /// (DeepSeek counts experts; Qwen2-MoE gives a width, in expert widths
    /// here), the leading dense layers.
    fn experts(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let m = self.m;
        a.experts = self.needed(ArchNum::Experts, m.expert_count, "expert_count")?;
        a.experts_per_token = self.needed(
            ArchNum::ExpertsPerToken,
            m.expert_used_count,
            "expert_used_count",
        )?;
        let width = m.expert_feed_forward_length.or(m.feed_forward_length);
        a.moe_ffn = self.needed(ArchNum::MoeFfn, width, "expert_feed_forward_length")?;
        let dense = m.leading_dense_block_count.unwrap_or(0);
        a.dense_layers = self.fit(ArchNum::DenseLayers, dense, "leading_dense_block_count")?;
        // llama.cpp b10488 `models/llama4.cpp`: the key must be there
        // (`ml.get_key`, required), and a layer has experts where `step > 0
        // && (i + 1) % step == 0`: 1 is every layer, 0 none.
        let interleaved = a.family.spec().moe.is_some_and(|moe| moe.interleaved);
        let k = "interleave_moe_layer_step";
        let step = if interleaved {
            match self.need(m.interleave_moe_layer_step, k)? {
                0 => {
                    return Err(GgufArchError::Invalid {
                        key: self.key(k),
                        reason: "(0) gives no layer experts, which vramfit does not model".into(),
                    })
                }
                1 => 0,
                n => n,
            }
        } else {
            0
        };
        a.moe_step = self.fit(ArchNum::MoeStep, step, k)?;
        let shared = a.family.spec().moe.map_or(Shared::None, |moe| moe.shared);
        let implied = Converter::of(a.family).implied_shared;
        a.shared_experts = match shared {
            Shared::None => 0,
            Shared::Plain if implied > 0 => implied,
            // DeepSeek counts its shared experts; Granite 4.0-H gives its
            // shared MLP's width (`GraniteHybridModel`); Nemotron-H both,
            // the width its one shared expert's whole
            // (`conversion/nemotron.py`: `n_shared_experts` 1 and
            // `moe_shared_expert_intermediate_size`; `nemotron-h.cpp`
            // reads the width alone), as every converter writing both
            // does (`exaone.py`, `command_r.py`: the width times the count).
            Shared::Plain => match (m.expert_shared_feed_forward_length, m.expert_shared_count) {
                (Some(w), _) => self.shared_width(w, a)?,
                (None, Some(n)) => self.fit(ArchNum::SharedExperts, n, "expert_shared_count")?,
                (None, None) => 0,
            },
            Shared::Gated => {
                let w = m.expert_shared_feed_forward_length.unwrap_or(0);
                self.shared_width(w, a)?
            }
        };
        Ok(())
    }

    /// A shared expert's width `w` in expert widths.
    fn shared_width(&self, w: u64, a: &Architecture) -> Result<u32, GgufArchError> {
        let k = "expert_shared_feed_forward_length";
        let mf = u64::from(a.moe_ffn.max(1));
        if !w.is_multiple_of(mf) {
            return Err(GgufArchError::Invalid {
                key: self.key(k),
                reason: format!("({w}) must be a multiple of the expert width ({mf})"),
            });
        }
        self.fit(ArchNum::SharedExperts, w / mf, k)
    }

    /// Mamba-2's numbers (llama.cpp b10488 `src/models/granite-hybrid.cpp`
    /// `load_arch_hparams`, all required): the layers without key/value
    /// heads are Mamba-2's, `d_inner` is their heads' (`time_step_rank`)
    /// widths together. Nemotron-H's (`src/models/nemotron-h.cpp`): those
    /// without key/value heads and without an MLP
    /// (`feed_forward_length` 0) are, the others without heads MLPs alone.
    /// Kimi Linear as its converter writes it (`conversion/kimi_linear.py`):
    /// the KDA layers are those with 0 in the per-layer `head_count_kv`,
    /// their kernel `ssm.conv_kernel`, their heads the model's
    /// (`head_count`: llama.cpp reads one for both) of `kda.head_dim`.
    fn kda(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let (m, ssm) = (self.m, self.m.ssm);
        let zeros = m.kv_zero_layers.unwrap_or(0);
        a.linear_layers = self.fit(ArchNum::LinearLayers, zeros, "attention.head_count_kv")?;
        a.linear_conv = self.needed(ArchNum::LinearConv, ssm.conv_kernel, "ssm.conv_kernel")?;
        let d = self.needed(ArchNum::LinearVDim, ssm.kda_head_dim, "kda.head_dim")?;
        (a.linear_k_dim, a.linear_v_dim) = (d, d);
        (a.linear_k_heads, a.linear_v_heads) = (a.heads, a.heads);
        Ok(())
    }

    fn mamba2(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let (m, ssm) = (self.m, self.m.ssm);
        let mut zeros = m.kv_zero_layers.unwrap_or(0);
        if a.family.spec().blocks == Blocks::Single {
            // Nemotron-H's MTP blocks come after `block_count`'s layers:
            // llama.cpp b10488 skips their tensors unless `--spec-type
            // draft-mtp`, which then gives them a second context and cache
            // (`src/models/nemotron-h.cpp`; measured,
            // `scripts/measure/families/nemotron_h/NOTES.md`).
            if let Some(n) = m.nextn_predict_layers.filter(|&n| n > 0) {
                return Err(GgufArchError::Invalid {
                    key: self.key("nextn_predict_layers"),
                    reason: format!("({n}): Nemotron-H's multi-token-prediction layers, which llama.cpp skips unless --spec-type draft-mtp, are not modelled"),
                });
            }
            let mlps = m.ffn_nonzero_layers.unwrap_or(0);
            a.ffn_layers = self.fit(ArchNum::FfnLayers, mlps, "feed_forward_length")?;
            zeros = zeros.saturating_sub(mlps);
        }
        a.linear_layers = self.fit(ArchNum::LinearLayers, zeros, "attention.head_count_kv")?;
        a.linear_conv = self.needed(ArchNum::LinearConv, ssm.conv_kernel, "ssm.conv_kernel")?;
        a.linear_k_dim = self.needed(ArchNum::LinearKDim, ssm.state_size, "ssm.state_size")?;
        a.linear_k_heads =
            self.needed(ArchNum::LinearKHeads, ssm.group_count, "ssm.group_count")?;
        let heads = self.need(ssm.time_step_rank, "ssm.time_step_rank")?;
        a.linear_v_heads = self.fit(ArchNum::LinearVHeads, heads, "ssm.time_step_rank")?;
        let inner = self.need(ssm.inner_size, "ssm.inner_size")?;
        if heads == 0 || !inner.is_multiple_of(heads) {
            return Err(GgufArchError::Invalid {
                key: self.key("ssm.inner_size"),
                reason: format!("({inner}) must be a multiple of ssm.time_step_rank ({heads})"),
            });
        }
        a.linear_v_dim = self.fit(ArchNum::LinearVDim, inner / heads, "ssm.inner_size")?;
        Ok(())
    }

    /// Gemma 4 as its converter writes it (`conversion/gemma.py`
    /// `Gemma4Model.set_gguf_parameters`): `key_length` is the global
    /// layers' head and `key_length_swa` the sliding ones'; a per-layer
    /// `head_count_kv` list (written only with `num_global_key_value_heads`)
    /// gives the global layers theirs, which transformers applies with keys
    /// as values (no `attn_v` on a global layer); a per-layer
    /// `feed_forward_length` list doubles the shared layers' MLP; the
    /// sliding pattern's period; `shared_kv_layers`; the per-layer
    /// embedding's width and the rows of its table (Gemma 3n's alike, its
    /// table as written: padded to the vocabulary's rows).
    fn gemma4(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let m = self.m;
        let global = a.head_dim;
        let swa = m.key_length_swa.unwrap_or(u64::from(global));
        a.head_dim = self.fit(ArchNum::HeadDim, swa, "attention.key_length_swa")?;
        // Gemma 3n's layers are all of one head (`Gemma3NModel` writes no
        // `key_length_swa`).
        if a.family.spec().global_attention {
            a.global_head_dim = global;
        }
        let k_eq_v = m.global_attn_v == Some(false);
        a.k_eq_v = u32::from(k_eq_v);
        if k_eq_v {
            let g = m.head_count_kv_global.unwrap_or(u64::from(a.kv_heads));
            a.global_kv_heads = self.fit(ArchNum::GlobalKvHeads, g, "attention.head_count_kv")?;
        }
        let shared = m.shared_kv_layers.unwrap_or(0);
        a.kv_shared_layers = self.fit(
            ArchNum::KvSharedLayers,
            shared,
            "attention.shared_kv_layers",
        )?;
        let widest = m.feed_forward_length_max.unwrap_or(0);
        a.double_wide = u32::from(shared > 0 && widest == 2 * u64::from(a.ffn));
        let ple = m.embedding_length_per_layer.unwrap_or(0);
        let k = "embedding_length_per_layer_input";
        a.ple_dim = self.fit(ArchNum::PleDim, ple, k)?;
        if ple > 0 {
            let rows = self.need(m.per_layer_vocab, "per_layer_token_embd.weight")?;
            a.ple_vocab = self.fit(ArchNum::PleVocab, rows, "per_layer_token_embd.weight")?;
        }
        // The family's own period is the default (Gemma 4's 6, Gemma 3n's
        // 5): 0.
        let own = match a.family.spec().sliding {
            Sliding::AllButEvery(n) => u64::from(n),
            Sliding::None | Sliding::All | Sliding::EveryOther => 0,
        };
        let period = m.sliding_period.filter(|&p| p != own).unwrap_or(0);
        a.sliding_period = self.fit(
            ArchNum::SlidingPeriod,
            period,
            "attention.sliding_window_pattern",
        )?;
        Ok(())
    }

    /// DeepSeek's latent attention as its converter writes it
    /// (`DeepseekV2Model.set_gguf_parameters`): one key/value head "of
    /// MQA" (the model's heads are `head_count`), `key_length_mla` = nope +
    /// rope, `value_length_mla` the value head; older files (before the
    /// MLA keys) give those as `key_length` and `value_length`.
    fn latent(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let m = self.m;
        a.kv_heads = a.heads;
        a.head_dim = match m.key_length_mla {
            Some(k) => self.fit(ArchNum::HeadDim, k, "attention.key_length_mla")?,
            None => self.needed(ArchNum::HeadDim, m.key_length, "attention.key_length")?,
        };
        a.v_head_dim = match m.value_length_mla {
            Some(v) => self.fit(ArchNum::VHeadDim, v, "attention.value_length_mla")?,
            None => self.needed(ArchNum::VHeadDim, m.value_length, "attention.value_length")?,
        };
        let (kvl, ql) = (m.kv_lora_rank, m.q_lora_rank.unwrap_or(0));
        a.kv_lora_rank = self.needed(ArchNum::KvLoraRank, kvl, "attention.kv_lora_rank")?;
        a.q_lora_rank = self.fit(ArchNum::QLoraRank, ql, "attention.q_lora_rank")?;
        let rope = m.rope_dimension_count;
        a.rope_dim = self.needed(ArchNum::RopeDim, rope, "rope.dimension_count")?;
        if a.family.spec().indexer {
            self.indexer(a)?;
        }
        Ok(())
    }

    /// The layers without the MTP blocks a converter appends and counts in
    /// `block_count` (`nextn_predict_layers`; llama.cpp's `n_layer() =
    /// n_layer_all − n_layer_nextn`, `src/llama-hparams.cpp`), the dense
    /// layers at most that many.
    fn without_mtp_blocks(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let nextn = self.m.nextn_predict_layers.unwrap_or(0);
        let nextn = self.fit(ArchNum::Layers, nextn, "nextn_predict_layers")?;
        a.layers = a.layers.saturating_sub(nextn).max(1);
        a.dense_layers = a.dense_layers.min(a.layers);
        Ok(())
    }

    /// DeepSeek Sparse Attention's indexer as the converters write it
    /// (`DeepseekV32Model`, `GlmMoeDsaModel.set_gguf_parameters`, b10488
    /// `conversion/`): its heads and head width; `block_count` counts the
    /// MTP blocks the converter appends by default (`skip_mtp = False`),
    /// which llama.cpp does not load without `--spec-type draft-mtp`
    /// (`n_layer() = n_layer_all − n_layer_nextn`). Layers reusing the
    /// previous layer's indexer (`attention.indexer.types`; GLM-5.2, whose
    /// default table llama.cpp applies from a trained context of 1M) are
    /// refused: vramfit does not count them yet.
    fn indexer(&self, a: &mut Architecture) -> Result<(), GgufArchError> {
        let m = self.m;
        let heads = m.indexer_head_count;
        a.index_heads = self.needed(ArchNum::IndexHeads, heads, "attention.indexer.head_count")?;
        let width = m.indexer_key_length;
        a.index_head_dim =
            self.needed(ArchNum::IndexHeadDim, width, "attention.indexer.key_length")?;
        let top_k = m.indexer_top_k;
        a.index_topk = self.needed(ArchNum::IndexTopk, top_k, "attention.indexer.top_k")?;
        self.without_mtp_blocks(a)?;
        let glm_5_2 = a.family == crate::model::Family::GlmMoeDsa
            && m.indexer_shared_layers.is_none()
            && m.context_length.is_some_and(|c| c >= 1 << 20);
        match m.indexer_shared_layers.filter(|&n| n > 0) {
            Some(n) => Err(GgufArchError::Invalid {
                key: self.key("attention.indexer.types"),
                reason: format!("marks {n} layers as reusing the previous layer's indexer (no indexer or indexer cache of their own), which vramfit does not model yet"),
            }),
            None if glm_5_2 => Err(GgufArchError::Invalid {
                key: self.key("context_length"),
                reason: "of 1M or more without attention.indexer.types: llama.cpp gives the layers GLM-5.2's table of shared indexers, which vramfit does not model yet".into(),
            }),
            None => Ok(()),
        }
    }
}
