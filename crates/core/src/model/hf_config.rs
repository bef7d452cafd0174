//! Reads a Hugging Face `config.json` (transformers 4 or 5 layout) into the
//! model it describes: the [`Architecture`], and the facts of the checkpoint
//! that a workload may read (its dropout, whether it asks for router
//! logits, how it was quantized). An unknown `model_type`, or a field that
//! changes memory which vramfit does not model, is an error that names it,
//! never a silent guess; reading such a config as Llama-like is an explicit
//! choice ([`Reading::AsLlama`]). A field the config leaves out takes
//! transformers' default for that model type.
//!
//! What a family understands and requires is derived from its [`Spec`]
//! where the description says it; the dense numbers are read through one
//! shared table. The query keys an import sets are `crate::import`'s: this
//! module imports nothing of the codec or a workload.

use super::arch::{ArchError, ArchNum, Architecture};
use super::family::{
    AttnBias, Family, KvHeads, Layout, Positions, Shared, Sliding, Spec, ALTUP_STREAMS, LAUREL_RANK,
};
use serde_json::{Map, Value};
use std::fmt;

/// A short, clean excerpt of what the config holds, for messages.
pub fn quote(s: &str) -> String {
    crate::clip::clip(s, crate::clip::QUOTE)
}

fn quote_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{}\"", quote(s)),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
        other => quote(&other.to_string()),
    }
}

/// Why a `config.json` could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not JSON, or not a JSON object.
    Json(String),
    /// A `model_type` vramfit has no family for.
    UnknownModelType {
        model_type: String,
        /// Fields that change memory, which a Llama reading would ignore.
        not_understood: Vec<String>,
    },
    /// A known family with fields that change memory which vramfit does not
    /// model.
    NotUnderstood {
        model_type: String,
        fields: Vec<String>,
    },
    /// Required fields are absent.
    Missing {
        model_type: String,
        fields: Vec<&'static str>,
    },
    /// A field is present but not a usable value.
    Invalid { field: &'static str, reason: String },
    /// The numbers do not make a model.
    Arch(ArchError),
    /// `architectures` names heads that are not a causal language model's
    /// (a classifier, a masked LM, a bare encoder): their memory differs.
    NotCausalLm { architectures: Vec<String> },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[String]| {
            v.iter()
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            ConfigError::Json(e) => write!(f, "not a valid config.json: {e}"),
            ConfigError::UnknownModelType {
                model_type,
                not_understood,
            } => {
                write!(
                    f,
                    "model_type `{model_type}` is not a family vramfit knows ({})",
                    Family::keys_joined()
                )?;
                if !not_understood.is_empty() {
                    write!(
                        f,
                        "; a Llama-like reading would ignore {}",
                        list(not_understood)
                    )?;
                }
                Ok(())
            }
            ConfigError::NotUnderstood { model_type, fields } => write!(
                f,
                "model_type `{model_type}`: vramfit does not model {} ({} memory)",
                list(fields),
                if fields.len() == 1 {
                    "it changes"
                } else {
                    "they change"
                }
            ),
            ConfigError::Missing { model_type, fields } => write!(
                f,
                "model_type `{model_type}`: missing {}",
                fields
                    .iter()
                    .map(|x| format!("`{x}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ConfigError::Invalid { field, reason } => write!(f, "`{field}` {reason}"),
            ConfigError::Arch(e) => write!(f, "these numbers do not make a model: {e}"),
            ConfigError::NotCausalLm { architectures } => write!(
                f,
                "{} is not a causal language model (…ForCausalLM): vramfit estimates \
                 training with a language-modelling head over the vocabulary",
                list(architectures)
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// `architectures`, when given, must hold a causal LM: `…ForCausalLM`,
/// GPT-2's `…LMHeadModel`, or a multimodal `…ForConditionalGeneration`
/// whose `text_config` is one. Source: transformers' auto classes
/// (`MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`).
fn causal_lm(top: &serde_json::Map<String, Value>) -> Result<(), ConfigError> {
    let Some(Value::Array(names)) = top.get("architectures") else {
        return Ok(());
    };
    let names: Vec<String> = names.iter().filter_map(Value::as_str).map(quote).collect();
    let causal = |n: &String| {
        n.ends_with("ForCausalLM")
            || n.ends_with("LMHeadModel")
            || (n.ends_with("ForConditionalGeneration") && top.contains_key("text_config"))
    };
    if names.is_empty() || names.iter().any(causal) {
        Ok(())
    } else {
        Err(ConfigError::NotCausalLm {
            architectures: names.into_iter().take(4).collect(),
        })
    }
}

impl ConfigError {
    /// Whether "read it as Llama-like" is a choice to offer.
    pub fn can_read_as_llama(&self) -> bool {
        matches!(
            self,
            ConfigError::UnknownModelType { .. } | ConfigError::NotUnderstood { .. }
        )
    }
}

/// How to read a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// As its `model_type` says; unknown types and fields are errors.
    AsItSays,
    /// As a Llama-like decoder, by the user's choice: fields that a Llama
    /// does not have are ignored, and the result says so.
    AsLlama,
}

/// The model a config describes, and the checkpoint's facts a workload
/// may read.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    pub arch: Architecture,
    /// `model_type` as written (clipped).
    pub model_type: String,
    /// Read as Llama-like by the user's choice (`model_type` is what it
    /// really is).
    pub read_as_llama: bool,
    /// The dropout the config sets, when it differs from the family's, and
    /// the field that set it.
    pub dropout: Option<(f64, &'static str)>,
    /// `output_router_logits: true` in a family that computes the
    /// load-balancing loss then (transformers adds it, training or not).
    pub router_logits: bool,
    /// How the checkpoint's weights are quantized (bitsandbytes), when its
    /// `quantization_config` says so.
    pub quantization: Option<Bnb>,
    /// The checkpoint holds more than the language model: its config nests
    /// it under `text_config`, or has a `vision_config` or `audio_config`
    /// (transformers' `…ForConditionalGeneration` configs).
    pub multimodal: bool,
    /// Why transformers 5.23 refuses the file as written (a field of the
    /// wrong type in a strict config class), said beside the estimate,
    /// which takes the value that loads ([`strict_refusal`]).
    pub refused_by_transformers: Option<String>,
}

/// A checkpoint saved already quantized by bitsandbytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bnb {
    /// 4-bit: NormalFloat (`nf4`) or float (`fp4`), with or without double
    /// quantization, computing in fp32 (`BitsAndBytesConfig`'s default) or
    /// not.
    FourBit {
        nf4: bool,
        double_quant: bool,
        compute_fp32: bool,
    },
    /// LLM.int8().
    Int8,
}

/// Reads a `config.json` text as its `model_type` says.
pub fn read(text: &str) -> Result<ModelConfig, ConfigError> {
    read_as(text, Reading::AsItSays)
}

/// Config fields that change memory in some family, with the value that
/// changes nothing. Present with another value, a reader that does not
/// understand them refuses the config; an unknown model type lists them.
const MEMORY_FIELDS: &[(&str, Neutral)] = &[
    ("num_local_experts", Neutral::Off),
    ("num_experts", Neutral::Off),
    ("n_routed_experts", Neutral::Off),
    ("num_experts_per_tok", Neutral::Off),
    ("moe_intermediate_size", Neutral::Off),
    ("shared_expert_intermediate_size", Neutral::Off),
    ("n_shared_experts", Neutral::Off),
    ("first_k_dense_replace", Neutral::Off),
    ("mlp_layer_types", Neutral::Off),
    ("mlp_only_layers", Neutral::Off),
    ("decoder_sparse_step", Neutral::One),
    ("moe_layer_freq", Neutral::One),
    ("kv_lora_rank", Neutral::Off),
    ("q_lora_rank", Neutral::Off),
    ("attn_logit_softcapping", Neutral::Off),
    ("final_logit_softcapping", Neutral::Off),
    ("sliding_window_pattern", Neutral::Off),
    ("attention_bias", Neutral::Off),
    ("mlp_bias", Neutral::Off),
    ("qk_layernorm", Neutral::Off),
    ("use_qk_norm", Neutral::Off),
    ("multi_query", Neutral::Off),
    ("partial_rotary_factor", Neutral::One),
    ("rotary_pct", Neutral::One),
    ("use_parallel_residual", Neutral::Off),
    ("parallel_attn", Neutral::Off),
    ("new_decoder_architecture", Neutral::Off),
    ("output_router_logits", Neutral::Off),
    ("use_sliding_window", Neutral::Off),
    // Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5): recurrent layers and a
    // gated attention.
    ("linear_num_key_heads", Neutral::Off),
    ("linear_num_value_heads", Neutral::Off),
    ("full_attention_interval", Neutral::Off),
    ("attn_output_gate", Neutral::Off),
    // Gemma 4: global layers' own geometry, keys as values, layers that
    // reuse keys and values, per-layer embeddings, experts beside the MLP.
    ("global_head_dim", Neutral::Off),
    ("num_global_key_value_heads", Neutral::Off),
    ("attention_k_eq_v", Neutral::Off),
    ("num_kv_shared_layers", Neutral::Off),
    ("use_double_wide_mlp", Neutral::Off),
    ("hidden_size_per_layer_input", Neutral::Off),
    ("enable_moe_block", Neutral::Off),
    // transformers' per-expert Python loop keeps more than the default
    // grouped_mm (measured: tiny-*-eager-experts rows in families.jsonl).
    ("experts_implementation", Neutral::Text("grouped_mm")),
    // LFM2: short-convolution layers (`full_attn_idxs` names the others),
    // the convolution's kernel and biases.
    ("full_attn_idxs", Neutral::Off),
    ("conv_L_cache", Neutral::Off),
    ("conv_bias", Neutral::Off),
    // Granite 4.0-H: Mamba-2 layers and a shared MLP.
    ("mamba_n_heads", Neutral::Off),
    ("mamba_d_state", Neutral::Off),
    ("shared_intermediate_size", Neutral::Off),
    // The recurrent state's dtype vLLM takes from the config when its own
    // is `auto` (vLLM 0.33 `model_executor/models/config.py`:
    // `mamba_ssm_cache_dtype` for Nemotron-H, `mamba_ssm_dtype` for
    // Qwen3.5): vramfit models the published float32
    // (`Linear::ssm_fp32`).
    ("mamba_ssm_cache_dtype", Neutral::Text("float32")),
    ("mamba_ssm_dtype", Neutral::Text("float32")),
    // Nemotron-H: Mamba-2 layers and layers of one thing each.
    ("mamba_num_heads", Neutral::Off),
    ("ssm_state_size", Neutral::Off),
    ("hybrid_override_pattern", Neutral::Off),
    ("layers_block_type", Neutral::Off),
    // DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5).
    ("index_n_heads", Neutral::Off),
    ("index_head_dim", Neutral::Off),
];

/// The value of a memory field that leaves memory as it is.
#[derive(Clone, Copy)]
enum Neutral {
    /// null, false, 0, an empty list or text.
    Off,
    /// 1 (a factor or a step).
    One,
    /// This text (a default implementation named), or null.
    Text(&'static str),
}

/// How a family's config names its numbers.
struct Reader {
    /// (number, config keys in order of preference, default when absent):
    /// the dense table, then the family's own entries, which replace the
    /// dense entry of the same number.
    nums: [&'static [(ArchNum, &'static [&'static str], Default)]; 2],
    /// Memory fields this family tolerates although they are not modelled
    /// exactly (read from the description or named here).
    tolerated: &'static [&'static str],
    /// Numbers written differently (a ratio, a sum, a flag), after `nums`.
    derive: fn(&Map<String, Value>, &mut Architecture) -> Result<(), ConfigError>,
}

type Nums = &'static [(ArchNum, &'static [&'static str], Default)];

/// The numbers every decoder with Llama's config names has.
const DENSE: Nums = &[
    (ArchNum::Hidden, &["hidden_size"], Default::Required),
    (ArchNum::Layers, &["num_hidden_layers"], Default::Required),
    (ArchNum::Heads, &["num_attention_heads"], Default::Required),
    (
        ArchNum::KvHeads,
        &["num_key_value_heads"],
        Default::Same(ArchNum::Heads),
    ),
    (ArchNum::HeadDim, &["head_dim"], Default::HiddenOverHeads),
    (ArchNum::Ffn, &["intermediate_size"], Default::Required),
    (ArchNum::Vocab, &["vocab_size"], Default::Required),
    (
        ArchNum::Positions,
        &["max_position_embeddings"],
        Default::Zero,
    ),
];

/// Gemma 3n's: Llama's names but `intermediate_size`, a list of one width
/// per layer ([`gemma3n`] reads it), and the layers sharing keys and
/// values.
const GEMMA3N_DENSE: Nums = &[
    DENSE[0], DENSE[1], DENSE[2], DENSE[3], DENSE[4], DENSE[6], DENSE[7],
];

const GEMMA3N: Nums = &[(
    ArchNum::KvSharedLayers,
    &["num_kv_shared_layers"],
    Default::Zero,
)];

/// GPT-2's names (GPTBigCode's too).
const GPT2: Nums = &[
    (ArchNum::Hidden, &["n_embd"], Default::Required),
    (ArchNum::Layers, &["n_layer"], Default::Required),
    (ArchNum::Heads, &["n_head"], Default::Required),
    (ArchNum::KvHeads, &[], Default::Same(ArchNum::Heads)),
    (ArchNum::HeadDim, &[], Default::HiddenOverHeads),
    (ArchNum::Ffn, &["n_inner"], Default::FourHidden),
    (ArchNum::Vocab, &["vocab_size"], Default::Required),
    (ArchNum::Positions, &["n_positions"], Default::Required),
];

/// Mixtral and gpt-oss: `intermediate_size` is an expert's width.
const MIXTRAL: Nums = &[
    (ArchNum::Experts, &["num_local_experts"], Default::Required),
    (
        ArchNum::ExpertsPerToken,
        &["num_experts_per_tok", "experts_per_token"],
        Default::Required,
    ),
    (ArchNum::MoeFfn, &["intermediate_size"], Default::Required),
];

/// Qwen2-MoE and Qwen3-MoE.
const QWEN_MOE: Nums = &[
    (ArchNum::Experts, &["num_experts"], Default::Required),
    (
        ArchNum::ExpertsPerToken,
        &["num_experts_per_tok"],
        Default::Required,
    ),
    (
        ArchNum::MoeFfn,
        &["moe_intermediate_size"],
        Default::Required,
    ),
];

/// The Gated DeltaNet layers of a hybrid (Qwen3-Next, Qwen3.5); how many
/// there are is derived ([`hybrid`]).
const LINEAR: Nums = &[
    (
        ArchNum::LinearKHeads,
        &["linear_num_key_heads"],
        Default::Required,
    ),
    (
        ArchNum::LinearVHeads,
        &["linear_num_value_heads"],
        Default::Required,
    ),
    (
        ArchNum::LinearKDim,
        &["linear_key_head_dim"],
        Default::Required,
    ),
    (
        ArchNum::LinearVDim,
        &["linear_value_head_dim"],
        Default::Required,
    ),
    (
        ArchNum::LinearConv,
        &["linear_conv_kernel_dim"],
        Default::Required,
    ),
];

/// Qwen3.5 dense.
const QWEN35: Nums = LINEAR;

/// Qwen3-Next: the DeltaNet and the experts (`intermediate_size` is read
/// but no layer is dense unless `mlp_only_layers` says so, which is
/// refused).
const QWEN3_NEXT: Nums = &[
    LINEAR[0],
    LINEAR[1],
    LINEAR[2],
    LINEAR[3],
    LINEAR[4],
    QWEN_MOE[0],
    QWEN_MOE[1],
    QWEN_MOE[2],
];

/// Qwen3.5-MoE: as Qwen3-Next, and its text config has no
/// `intermediate_size` (`Qwen3_5MoeTextConfig`): the dense width, which no
/// layer uses, is the expert's.
const QWEN35_MOE: Nums = &[
    LINEAR[0],
    LINEAR[1],
    LINEAR[2],
    LINEAR[3],
    LINEAR[4],
    QWEN_MOE[0],
    QWEN_MOE[1],
    QWEN_MOE[2],
    (
        ArchNum::Ffn,
        &["intermediate_size"],
        Default::Same(ArchNum::MoeFfn),
    ),
];

/// DeepSeek-V2 and V3 (head_dim is derived: nope + rope).
const DEEPSEEK: Nums = &[
    (ArchNum::KvHeads, &[], Default::Same(ArchNum::Heads)),
    (ArchNum::HeadDim, &[], Default::Zero),
    (ArchNum::Experts, &["n_routed_experts"], Default::Required),
    (
        ArchNum::ExpertsPerToken,
        &["num_experts_per_tok"],
        Default::Required,
    ),
    (
        ArchNum::MoeFfn,
        &["moe_intermediate_size"],
        Default::Required,
    ),
    (ArchNum::SharedExperts, &["n_shared_experts"], Default::Zero),
    (
        ArchNum::DenseLayers,
        &["first_k_dense_replace"],
        Default::Zero,
    ),
    (ArchNum::QLoraRank, &["q_lora_rank"], Default::Zero),
    (ArchNum::KvLoraRank, &["kv_lora_rank"], Default::Required),
    (ArchNum::RopeDim, &["qk_rope_head_dim"], Default::Required),
    (ArchNum::VHeadDim, &["v_head_dim"], Default::Required),
];

/// Kimi Linear's: DeepSeek's latent attention and experts under
/// `KimiLinearConfig`'s names, the trained context as the converter takes
/// it (`model_max_length`); the KDA layers' numbers are nested
/// ([`kimi_linear`]).
const KIMI_LINEAR: Nums = &[
    DEEPSEEK[0],
    DEEPSEEK[1],
    (ArchNum::Experts, &["num_experts"], Default::Required),
    (
        ArchNum::ExpertsPerToken,
        &["num_experts_per_token"],
        Default::Required,
    ),
    DEEPSEEK[4],
    (
        ArchNum::SharedExperts,
        &["num_shared_experts"],
        Default::Zero,
    ),
    DEEPSEEK[6],
    DEEPSEEK[7],
    DEEPSEEK[8],
    DEEPSEEK[9],
    DEEPSEEK[10],
    (
        ArchNum::Positions,
        &["max_position_embeddings", "model_max_length"],
        Default::Zero,
    ),
];

/// Gemma 4: the global layers' key/value heads and the layers sharing
/// keys and values; the global head width, the per-layer embeddings and
/// the experts are derived ([`gemma4`]), as their defaults and switches
/// are transformers'.
const GEMMA4: Nums = &[
    (
        ArchNum::GlobalKvHeads,
        &["num_global_key_value_heads"],
        Default::Zero,
    ),
    (
        ArchNum::KvSharedLayers,
        &["num_kv_shared_layers"],
        Default::Zero,
    ),
    (ArchNum::Experts, &["num_experts"], Default::Zero),
    (ArchNum::ExpertsPerToken, &["top_k_experts"], Default::Zero),
    (ArchNum::MoeFfn, &["moe_intermediate_size"], Default::Zero),
];

/// DeepSeek-V3.2's and GLM-5's: DeepSeek's numbers and the indexer's
/// (`DeepseekV32Config`, `GlmMoeDsaConfig`; every published config sets
/// them).
const DSA: Nums = &[
    DEEPSEEK[0],
    DEEPSEEK[1],
    DEEPSEEK[2],
    DEEPSEEK[3],
    DEEPSEEK[4],
    DEEPSEEK[5],
    DEEPSEEK[6],
    DEEPSEEK[7],
    DEEPSEEK[8],
    DEEPSEEK[9],
    DEEPSEEK[10],
    (ArchNum::IndexHeads, &["index_n_heads"], Default::Required),
    (
        ArchNum::IndexHeadDim,
        &["index_head_dim"],
        Default::Required,
    ),
    (ArchNum::IndexTopk, &["index_topk"], Default::Required),
];

/// GLM-4.5's experts (`Glm4MoeConfig`); its config names them as
/// DeepSeek's, and the rotary part is derived ([`glm4_moe`]). The shared
/// experts and the dense layers are required: every published config sets
/// them.
const GLM4_MOE: Nums = &[
    DEEPSEEK[2],
    DEEPSEEK[3],
    DEEPSEEK[4],
    (
        ArchNum::SharedExperts,
        &["n_shared_experts"],
        Default::Required,
    ),
    (
        ArchNum::DenseLayers,
        &["first_k_dense_replace"],
        Default::Required,
    ),
];

impl Reader {
    /// Every number with its config keys: the dense table's, replaced by
    /// the family's own where it has them, then the family's others.
    fn numbers(&self) -> impl Iterator<Item = (ArchNum, &'static [&'static str], Default)> + '_ {
        let [dense, own] = self.nums;
        let replaced = move |n: ArchNum| own.iter().any(|(m, _, _)| *m == n);
        dense
            .iter()
            .filter(move |(n, _, _)| !replaced(*n))
            .chain(own.iter())
            .copied()
    }

    /// Memory fields this family reads or knows to leave memory unchanged:
    /// the ones its numbers are read from, what its description says it
    /// has, and the fields that only shape masks or routing choices.
    fn understood(&self, spec: &Spec, field: &str) -> bool {
        let moe = spec.moe;
        self.numbers().any(|(_, keys, _)| keys.contains(&field))
            || self.tolerated.contains(&field)
            || MASKS_AND_ROUTING.contains(&field)
            || match field {
                "multi_query" => spec.kv_heads == KvHeads::OneOrSame,
                "attn_logit_softcapping" => spec.attn_softcap,
                "final_logit_softcapping" => spec.final_softcap,
                // GPT-2's layout has biases and no such field: ignored.
                "attention_bias" => spec.attn_bias == AttnBias::All || spec.layout == Layout::Gpt2,
                "output_router_logits" => moe.is_some(),
                "shared_expert_intermediate_size" => moe.is_some_and(|m| m.shared == Shared::Gated),
                _ => false,
            }
    }
}

/// Memory fields the family's description assumes on: a config that turns
/// one off (present, at its neutral value) is not this description; left
/// out, it takes transformers' default for the model type, which is on
/// (`Gemma2Config`: softcapping 50 and 30; `GptOssConfig`:
/// `attention_bias=True`).
fn required_on(spec: &Spec) -> impl Iterator<Item = &'static str> {
    [
        ("attn_logit_softcapping", spec.attn_softcap),
        ("final_logit_softcapping", spec.final_softcap),
        (
            "attention_bias",
            spec.attn_bias == AttnBias::All && spec.layout == Layout::Llama,
        ),
        ("attn_output_gate", spec.attn_gate),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(k, _)| k)
}

/// What a number is when the config leaves it out.
#[derive(Clone, Copy)]
enum Default {
    Required,
    Zero,
    /// Equal to another number (kv_heads = heads).
    Same(ArchNum),
    /// hidden / heads (0 when it does not divide: the architecture check
    /// names it).
    HiddenOverHeads,
    /// 4 × hidden (GPT-2's `n_inner: null`).
    FourHidden,
}

/// Fields that only shape attention masks or routing choices: transformers
/// keeps the same tensors whatever their values (SDPA keeps no scores,
/// eager masks full seq² scores; routing picks which experts, not how many).
const MASKS_AND_ROUTING: &[&str] = &["sliding_window_pattern", "norm_topk_prob"];

fn reader(family: Family) -> Reader {
    let plain = |own| Reader {
        nums: [DENSE, own],
        tolerated: &[],
        derive: nothing,
    };
    match family {
        Family::Gpt2 => Reader {
            nums: [GPT2, &[]],
            ..plain(&[])
        },
        Family::GptNeox => Reader {
            tolerated: &[
                "rotary_pct",
                "partial_rotary_factor",
                "use_parallel_residual",
                "attention_bias",
            ],
            derive: gpt_neox,
            ..plain(&[])
        },
        Family::GptBigcode => Reader {
            nums: [GPT2, &[]],
            derive: bigcode,
            ..plain(&[])
        },
        Family::Llama
        | Family::Mistral
        | Family::Ministral3
        | Family::SmolLm3
        | Family::Qwen2
        | Family::Qwen3
        | Family::Gemma
        | Family::Gemma2
        | Family::Gemma3Text
        | Family::Olmo2
        | Family::Olmo3 => plain(&[]),
        // Phi-4-mini's partial rotary factor shrinks only the cos/sin
        // tables (B·L·rot_dim: 64 bytes less at b2 s512, measured in
        // families.jsonl), which vramfit counts at the full head width.
        Family::Phi3 => Reader {
            tolerated: &["partial_rotary_factor"],
            ..plain(&[])
        },
        Family::Mixtral | Family::GptOss => plain(MIXTRAL),
        Family::Qwen2Moe => Reader {
            derive: qwen2_moe,
            ..plain(QWEN_MOE)
        },
        Family::Qwen3Moe => plain(QWEN_MOE),
        Family::DeepseekV2 | Family::DeepseekV3 => Reader {
            derive: deepseek,
            ..plain(DEEPSEEK)
        },
        Family::Qwen35Text => Reader {
            tolerated: HYBRID_TOLERATED,
            derive: hybrid,
            ..plain(QWEN35)
        },
        Family::Qwen3Next => Reader {
            tolerated: HYBRID_TOLERATED,
            derive: hybrid_moe,
            ..plain(QWEN3_NEXT)
        },
        Family::Qwen35MoeText => Reader {
            tolerated: HYBRID_TOLERATED,
            derive: hybrid_moe,
            ..plain(QWEN35_MOE)
        },
        Family::Gemma4Text => Reader {
            tolerated: GEMMA4_TOLERATED,
            derive: gemma4,
            ..plain(GEMMA4)
        },
        // The 12B's config lists the same fields (`hidden_size_per_layer_input`
        // 0, `num_experts` null), which its text config class does not
        // read.
        Family::Gemma4UnifiedText => Reader {
            tolerated: GEMMA4_TOLERATED,
            derive: gemma4,
            ..plain(&GEMMA4[..2])
        },
        Family::Gemma3nText => Reader {
            nums: [GEMMA3N_DENSE, GEMMA3N],
            tolerated: GEMMA3N_TOLERATED,
            derive: gemma3n,
        },
        Family::KimiLinear => Reader {
            tolerated: KIMI_LINEAR_TOLERATED,
            derive: kimi_linear,
            ..plain(KIMI_LINEAR)
        },
        Family::MinimaxM2 => Reader {
            tolerated: &["partial_rotary_factor", "use_qk_norm"],
            derive: minimax_m2,
            ..plain(MIXTRAL)
        },
        Family::Glm4Moe => Reader {
            tolerated: &["partial_rotary_factor", "use_qk_norm", "attention_bias"],
            derive: glm4_moe,
            ..plain(GLM4_MOE)
        },
        // Mistral 4: DeepSeek's numbers and head width; its
        // `rope_parameters` (yarn, the query temperature's β) and the
        // router's group settings change no byte.
        Family::Mistral4 => Reader {
            derive: deepseek,
            ..plain(DEEPSEEK)
        },
        // `partial_rotary_factor` (1.0 in the published config) would
        // scale the rotary part (`Glm4MoeLiteRotaryEmbedding`), which MLA's
        // split does not follow: any other value is refused as a memory
        // field this reader does not understand.
        Family::Glm4MoeLite => Reader {
            tolerated: &["mlp_layer_types"],
            derive: glm4_moe_lite,
            ..plain(DEEPSEEK)
        },
        Family::DeepseekV32 | Family::GlmMoeDsa => Reader {
            tolerated: &["mlp_layer_types", "indexer_types"],
            derive: dsa,
            ..plain(DSA)
        },
        Family::Lfm2 => Reader {
            tolerated: &["full_attn_idxs", "conv_L_cache"],
            derive: lfm2,
            ..plain(LFM2)
        },
        // `Lfm2MoeConfig` names its experts as Qwen-MoE's; the dense layers
        // before them are derived ([`lfm2_moe`]).
        Family::Lfm2Moe => Reader {
            tolerated: &["full_attn_idxs", "conv_L_cache", "norm_topk_prob"],
            derive: lfm2_moe,
            ..plain(QWEN_MOE)
        },
        // Every number past the dense table's is derived with
        // transformers' defaults ([`granite_hybrid`]).
        Family::GraniteMoeHybrid => Reader {
            tolerated: GRANITE_TOLERATED,
            derive: granite_hybrid,
            ..plain(&[])
        },
        // The layers are the pattern's ([`nemotron_h`]); the head width and
        // the MLP's have transformers' defaults.
        Family::NemotronH => Reader {
            tolerated: NEMOTRON_H_TOLERATED,
            derive: nemotron_h,
            ..plain(NEMOTRON_H)
        },
        // The L2 q/k norm has no weight (`use_qk_norm` changes no tensor,
        // only what the attention makes: read by [`llama4`]).
        Family::Llama4Text => Reader {
            tolerated: &["use_qk_norm", "attention_bias"],
            derive: llama4,
            ..plain(LLAMA4)
        },
    }
}

/// LFM2's names (`Lfm2Config.__post_init__`: `block_ff_dim` is the MLP's
/// width before [`lfm2`] adjusts it).
const LFM2: Nums = &[(
    ArchNum::Ffn,
    &["block_ff_dim", "intermediate_size"],
    Default::Required,
)];

/// LFM2 as transformers 5.23 reads it: its layers ([`lfm2_layers`]) and
/// the MLP's width adjusted as `Lfm2MLP.__init__` does when
/// `block_auto_adjust_ff_dim` (true): ⌊2·ff/3⌋, then, with a
/// `block_ffn_dim_multiplier` (1.0), ⌊m·ff⌋ rounded up to a multiple of
/// `block_multiple_of` (256).
fn lfm2(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    lfm2_layers(obj, a)?;
    if !boolean(obj, "block_auto_adjust_ff_dim")?.unwrap_or(true) {
        return Ok(());
    }
    let mut ff = u64::from(a.ffn) * 2 / 3;
    let factor = match obj.get("block_ffn_dim_multiplier") {
        None => Some(1.0),
        Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|f| *f > 0.0 && *f <= 16.0)
                .ok_or_else(|| ConfigError::Invalid {
                    field: "block_ffn_dim_multiplier",
                    reason: format!("must be a number in (0, 16], not {}", quote_value(v)),
                })?,
        ),
    };
    if let Some(m) = factor {
        let multiple = uint(obj, "block_multiple_of")?.unwrap_or(256).max(1);
        // `ff` is below 2^32 and `m` at most 16: the product fits.
        ff = ((ff as f64 * m) as u64).div_ceil(multiple) * multiple;
    }
    a.ffn = checked(ArchNum::Ffn, "block_ff_dim", ff)?;
    Ok(())
}

/// LFM2's and LFM2-MoE's layers (`Lfm2Config.__post_init__`): the
/// convolution layers are those `layer_types` calls `conv`, else those
/// `full_attn_idxs` leaves out (every layer attention when it is absent);
/// the kernel `conv_L_cache` (3); `tie_embedding` wins over
/// `tie_word_embeddings`.
fn lfm2_layers(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let layers = u64::from(a.layers);
    let listed = layer_types(obj, a, &["conv"], &["full_attention"])?;
    let conv = match (listed, obj.get("full_attn_idxs")) {
        (Some(n), _) => n,
        (None, Some(Value::Array(idxs))) => {
            let mut attention: Vec<u64> = Vec::with_capacity(idxs.len());
            for i in idxs {
                match i.as_u64().filter(|&i| i < layers) {
                    Some(i) if !attention.contains(&i) => attention.push(i),
                    _ => {
                        return Err(ConfigError::Invalid {
                            field: "full_attn_idxs",
                            reason: format!(
                            "must list distinct layers below num_hidden_layers ({layers}), not {}",
                            quote_value(i)
                        ),
                        })
                    }
                }
            }
            layers - attention.len() as u64
        }
        _ => 0,
    };
    a.linear_layers = checked(ArchNum::LinearLayers, "full_attn_idxs", conv)?;
    let kernel = uint(obj, "conv_L_cache")?.unwrap_or(3);
    a.linear_conv = checked(ArchNum::LinearConv, "conv_L_cache", kernel)?;
    if let Some(tied) = boolean(obj, "tie_embedding")? {
        a.tied = tied;
    }
    Ok(())
}

/// LFM2-MoE as transformers 5.23 reads it: LFM2's layers
/// ([`lfm2_layers`]; `Lfm2MoeMLP` takes `intermediate_size` as it is),
/// `num_dense_layers` (2) dense layers first, and the expert bias
/// (`use_expert_bias`, true in the published config; a model without it is
/// refused by name).
fn lfm2_moe(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    lfm2_layers(obj, a)?;
    let dense = uint(obj, "num_dense_layers")?.unwrap_or(2);
    a.dense_layers = checked(ArchNum::DenseLayers, "num_dense_layers", dense)?;
    if boolean(obj, "use_expert_bias")? == Some(false) {
        return Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec!["use_expert_bias (false: vramfit models the expert bias)".into()],
        });
    }
    Ok(())
}

/// Granite 4.0-H's memory fields, read by [`granite_hybrid`].
const GRANITE_TOLERATED: &[&str] = &[
    "num_local_experts",
    "num_experts_per_tok",
    "shared_intermediate_size",
    "mamba_n_heads",
    "mamba_d_state",
];

/// A whole-number field, or transformers' default when it is absent.
fn uint_or(
    obj: &Map<String, Value>,
    field: &'static str,
    default: u64,
) -> Result<u64, ConfigError> {
    Ok(uint(obj, field)?.unwrap_or(default))
}

/// Granite 4.0-H as transformers 5.23 reads it (`GraniteMoeHybridConfig`,
/// its defaults where a field is absent): the Mamba-2 layers are those
/// `layer_types` calls `mamba` (every layer without the list); heads
/// `mamba_n_heads` (128) of `mamba_d_head` ("auto": `mamba_expand` (2) ×
/// hidden / heads, which must be the product), state `mamba_d_state`
/// (256), `mamba_n_groups` (1), kernel `mamba_d_conv` (4); the shared MLP
/// of `shared_intermediate_size` (1024) is a dense model's MLP, and with
/// `num_local_experts` (8) routed experts of `intermediate_size` beside
/// it, counted in their widths. A position embedding (`rope`), projection
/// biases or a convolution without one are refused by name.
fn granite_hybrid(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    granite_layers(obj, a)?;
    granite_mamba(obj, a)?;
    let shared = uint_or(obj, "shared_intermediate_size", 1024)?;
    let experts = uint_or(obj, "num_local_experts", 8)?;
    if experts == 0 {
        a.ffn = checked(ArchNum::Ffn, "shared_intermediate_size", shared)?;
        return Ok(());
    }
    let per_token = uint_or(obj, "num_experts_per_tok", 2)?;
    a.experts = checked(ArchNum::Experts, "num_local_experts", experts)?;
    a.experts_per_token = checked(ArchNum::ExpertsPerToken, "num_experts_per_tok", per_token)?;
    a.moe_ffn = a.ffn;
    let width = u64::from(a.moe_ffn.max(1));
    let of = ("intermediate_size", "MLP");
    a.shared_experts = in_expert_widths("shared_intermediate_size", shared, width, of)?;
    Ok(())
}

/// Granite 4.0-H's layer kinds and what its layers do not have.
fn granite_layers(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    // transformers 5.23 renames the entries as it reads them ("mamba" to
    // "linear_attention", "attention" to "full_attention"), and a config it
    // saves has the new names.
    let mamba = layer_types(
        obj,
        a,
        &["mamba", "linear_attention"],
        &["attention", "full_attention"],
    )?
    .unwrap_or(u64::from(a.layers));
    a.linear_layers = checked(ArchNum::LinearLayers, "layer_types", mamba)?;
    let mut refused = Vec::new();
    if let Some(v) = obj.get("position_embedding_type").filter(|v| !v.is_null()) {
        if v.as_str() != Some("nope") {
            refused.push(format!("position_embedding_type {}", quote_value(v)));
        }
    }
    if boolean(obj, "mamba_proj_bias")? == Some(true) {
        refused
            .push("mamba_proj_bias (true: vramfit models the projections without biases)".into());
    }
    if boolean(obj, "mamba_conv_bias")? == Some(false) {
        refused.push("mamba_conv_bias (false: vramfit models the convolution's bias)".into());
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: refused,
        })
    }
}

/// Granite 4.0-H's Mamba-2 numbers (`GraniteMoeHybridConfig.__init__`),
/// as the state's head numbers ([`crate::model::family::Recurrence::Mamba2`]).
fn granite_mamba(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let heads = uint_or(obj, "mamba_n_heads", 128)?;
    let expand = uint_or(obj, "mamba_expand", 2)?;
    let inner = expand.saturating_mul(u64::from(a.hidden));
    let field = "mamba_d_head";
    let head = match obj.get(field) {
        None | Some(Value::Null) => inner / heads.max(1),
        Some(Value::String(s)) if s == "auto" => inner / heads.max(1),
        Some(_) => uint(obj, field)?.unwrap_or(0),
    };
    if heads == 0 || head.saturating_mul(heads) != inner {
        return Err(ConfigError::Invalid {
            field,
            reason: format!(
                "({head}) times mamba_n_heads ({heads}) must be mamba_expand ({expand}) × hidden_size ({})",
                a.hidden
            ),
        });
    }
    a.linear_v_heads = checked(ArchNum::LinearVHeads, "mamba_n_heads", heads)?;
    a.linear_v_dim = checked(ArchNum::LinearVDim, field, head)?;
    let state = uint_or(obj, "mamba_d_state", 256)?;
    a.linear_k_dim = checked(ArchNum::LinearKDim, "mamba_d_state", state)?;
    let groups = uint_or(obj, "mamba_n_groups", 1)?;
    a.linear_k_heads = checked(ArchNum::LinearKHeads, "mamba_n_groups", groups)?;
    let kernel = uint_or(obj, "mamba_d_conv", 4)?;
    a.linear_conv = checked(ArchNum::LinearConv, "mamba_d_conv", kernel)?;
    let chunk = uint_or(obj, "mamba_chunk_size", 256)?;
    scan_chunk(a, "mamba_chunk_size", chunk)
}

/// The chunk of transformers' Mamba-2 scan: the family's
/// ([`crate::model::family::Linear::chunk`], every published config's),
/// or the config is refused.
fn scan_chunk(a: &Architecture, field: &'static str, chunk: u64) -> Result<(), ConfigError> {
    let modelled = a.family.spec().linear.map_or(0, |l| u64::from(l.chunk));
    if chunk == modelled {
        return Ok(());
    }
    Err(ConfigError::Invalid {
        field,
        reason: format!(
            "({chunk}): vramfit models this family's Mamba-2 scan in chunks of {modelled} tokens, as its published configs have"
        ),
    })
}

/// Nemotron-H's numbers that its layer list ([`nemotron_h`]) or
/// transformers' defaults give when the config leaves them out
/// (`NemotronHConfig`: `num_hidden_layers` is the list's length).
const NEMOTRON_H: Nums = &[
    (ArchNum::Layers, &["num_hidden_layers"], Default::Zero),
    (ArchNum::HeadDim, &["head_dim"], Default::Zero),
    (ArchNum::Ffn, &["intermediate_size"], Default::Zero),
];

/// Nemotron-H's memory fields, read by [`nemotron_h`].
const NEMOTRON_H_TOLERATED: &[&str] = &[
    "hybrid_override_pattern",
    "layers_block_type",
    "mamba_num_heads",
    "ssm_state_size",
    "mlp_bias",
    "attention_bias",
    "n_routed_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "n_shared_experts",
];

/// Nemotron-H as transformers 5.23 reads it (`NemotronHConfig.__post_init__`,
/// its defaults where a field is absent): the layers are `layers_block_type`
/// (or `layer_types`, or `hybrid_override_pattern`'s letters: `M` Mamba-2,
/// `*` attention, `-` an MLP), as many as it lists whatever
/// `num_hidden_layers` says; `head_dim` 128 and `intermediate_size` 21504
/// when absent; the Mamba-2 numbers ([`nemotron_h_mamba`]); the MoE
/// layers' experts ([`nemotron_h_experts`]). Multi-token prediction, latent
/// experts, biases on the projections or none on the convolution are
/// refused by name.
fn nemotron_h(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let [mamba, mlp, moe, layers] = nemotron_h_layers(obj, a)?;
    a.layers = checked(ArchNum::Layers, "hybrid_override_pattern", layers)?;
    a.linear_layers = checked(ArchNum::LinearLayers, "hybrid_override_pattern", mamba)?;
    a.ffn_layers = checked(ArchNum::FfnLayers, "hybrid_override_pattern", mlp + moe)?;
    if moe > 0 {
        nemotron_h_experts(obj, a)?;
    }
    if a.head_dim == 0 {
        a.head_dim = 128;
    }
    if a.ffn == 0 {
        a.ffn = checked(ArchNum::Ffn, "intermediate_size", 21504)?;
    }
    nemotron_h_mamba(obj, a)?;
    let mut refused = Vec::new();
    for (field, on) in [
        ("use_bias", true),
        ("mlp_bias", true),
        ("attention_bias", true),
    ] {
        if boolean(obj, field)? == Some(on) {
            refused.push(format!(
                "{field} (true: vramfit models the projections without biases)"
            ));
        }
    }
    let conv_bias = boolean(obj, "mamba_conv_bias")?.or(boolean(obj, "use_conv_bias")?);
    if conv_bias == Some(false) {
        refused.push("use_conv_bias (false: vramfit models the convolution's bias)".into());
    }
    if obj.get("moe_latent_size").is_some_and(|v| !v.is_null()) {
        refused.push("moe_latent_size (latent experts, Nemotron 3 Super, are not modelled)".into());
    }
    if uint(obj, "num_nextn_predict_layers")?.unwrap_or(0) > 0 {
        refused.push(
            "num_nextn_predict_layers (multi-token prediction layers are not modelled)".into(),
        );
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: refused,
        })
    }
}

/// Nemotron-H's layers as `NemotronHConfig.__post_init__` picks them: the
/// list (`layers_block_type`, or its alias `layer_types`; the names
/// `remap_legacy_layer_types` renames, `mamba` and `attention`, read as
/// theirs), else `hybrid_override_pattern`, else transformers' default
/// list. Returns the Mamba-2 layers, the MLPs, the MoE layers and all the
/// layers; MLPs and MoE layers in one model are refused by name (vramfit's
/// MLP-only layers are one or the other).
fn nemotron_h_layers(obj: &Map<String, Value>, a: &Architecture) -> Result<[u64; 4], ConfigError> {
    let list = ["layers_block_type", "layer_types"]
        .into_iter()
        .find_map(|f| match obj.get(f) {
            Some(Value::Array(items)) => Some((f, items)),
            _ => None,
        });
    let kinds: Vec<(&'static str, Option<char>, String)> = match list {
        Some((field, items)) => items
            .iter()
            .map(|t| {
                let kind = match t.as_str() {
                    Some("mamba" | "linear_attention") => Some('M'),
                    Some("attention" | "full_attention") => Some('*'),
                    Some("mlp") => Some('-'),
                    Some("moe") => Some('E'),
                    _ => None,
                };
                (field, kind, quote_value(t))
            })
            .collect(),
        None => match obj.get("hybrid_override_pattern") {
            Some(Value::String(p)) => p
                .chars()
                .map(|c| {
                    let kind = matches!(c, 'M' | '*' | '-' | 'E').then_some(c);
                    ("hybrid_override_pattern", kind, format!("{c:?}"))
                })
                .collect(),
            None | Some(Value::Null) => ["linear_attention", "moe", "full_attention", "mlp"]
                .into_iter()
                .zip(['M', 'E', '*', '-'])
                .map(|(t, c)| ("layers_block_type", Some(c), format!("{t:?}")))
                .collect(),
            Some(v) => {
                return Err(ConfigError::Invalid {
                    field: "hybrid_override_pattern",
                    reason: format!("must be a string of M, *, - and E, not {}", quote_value(v)),
                })
            }
        },
    };
    let (mut mamba, mut mlp, mut moe) = (0u64, 0u64, 0u64);
    for (field, kind, text) in &kinds {
        match kind {
            Some('M') => mamba += 1,
            Some('-') => mlp += 1,
            Some('E') => moe += 1,
            Some('*') => {}
            Some(_) | None => {
                return Err(ConfigError::NotUnderstood {
                    model_type: a.family.key().into(),
                    fields: vec![format!("{field} entry {text}")],
                })
            }
        }
    }
    if mlp > 0 && moe > 0 {
        return Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec![format!(
                "{} ({mlp} MLP and {moe} MoE layers in one model are not modelled)",
                kinds[0].0
            )],
        });
    }
    Ok([mamba, mlp, moe, kinds.len() as u64])
}

/// Nemotron 3's experts (`NemotronHMoE`, transformers' defaults where a
/// field is absent): `n_routed_experts` (8) of `moe_intermediate_size`
/// (7688), `num_experts_per_tok` (2) a token, one shared expert of
/// `moe_shared_expert_intermediate_size` (7688), counted in expert widths
/// (it must be a multiple), whatever `n_shared_experts` says
/// (`NemotronHMoE.__init__` builds one `NemotronHMLP`).
fn nemotron_h_experts(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let experts = uint_or(obj, "n_routed_experts", 8)?;
    a.experts = checked(ArchNum::Experts, "n_routed_experts", experts)?;
    let k = uint_or(obj, "num_experts_per_tok", 2)?;
    a.experts_per_token = checked(ArchNum::ExpertsPerToken, "num_experts_per_tok", k)?;
    let width = uint_or(obj, "moe_intermediate_size", 7688)?;
    a.moe_ffn = checked(ArchNum::MoeFfn, "moe_intermediate_size", width)?;
    let field = "moe_shared_expert_intermediate_size";
    let shared = uint_or(obj, field, 7688)?;
    let of = ("moe_intermediate_size", "expert");
    a.shared_experts = in_expert_widths(field, shared, width, of)?;
    Ok(())
}

/// Nemotron-H's Mamba-2 numbers (`NemotronHMamba2Mixer.__init__`: the
/// inner width is `mamba_num_heads` (128) × `mamba_head_dim` (64)), as the
/// state's head numbers ([`crate::model::family::Recurrence::Mamba2`]):
/// state `ssm_state_size` (128), `n_groups` (8; `mamba_n_groups` wins,
/// `__post_init__`), kernel `conv_kernel` (4; `mamba_d_conv` wins).
fn nemotron_h_mamba(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let heads = uint_or(obj, "mamba_num_heads", 128)?;
    a.linear_v_heads = checked(ArchNum::LinearVHeads, "mamba_num_heads", heads)?;
    let head = uint_or(obj, "mamba_head_dim", 64)?;
    a.linear_v_dim = checked(ArchNum::LinearVDim, "mamba_head_dim", head)?;
    let state = uint_or(obj, "ssm_state_size", 128)?;
    a.linear_k_dim = checked(ArchNum::LinearKDim, "ssm_state_size", state)?;
    let (field, groups) = match uint(obj, "mamba_n_groups")? {
        Some(g) => ("mamba_n_groups", g),
        None => ("n_groups", uint_or(obj, "n_groups", 8)?),
    };
    a.linear_k_heads = checked(ArchNum::LinearKHeads, field, groups)?;
    let (field, kernel) = match uint(obj, "mamba_d_conv")? {
        Some(k) => ("mamba_d_conv", k),
        None => ("conv_kernel", uint_or(obj, "conv_kernel", 4)?),
    };
    a.linear_conv = checked(ArchNum::LinearConv, field, kernel)?;
    let (field, chunk) = match uint(obj, "mamba_chunk_size")? {
        Some(c) => ("mamba_chunk_size", c),
        None => ("chunk_size", uint_or(obj, "chunk_size", 128)?),
    };
    scan_chunk(a, field, chunk)
}

/// Llama 4's names (`Llama4TextConfig`): the experts' width is
/// `intermediate_size`, a dense layer's `intermediate_size_mlp`.
const LLAMA4: Nums = &[
    (ArchNum::Ffn, &["intermediate_size_mlp"], Default::Required),
    MIXTRAL[0],
    MIXTRAL[1],
    (ArchNum::MoeFfn, &["intermediate_size"], Default::Required),
];

/// Llama 4 as transformers 5.23 reads it (`Llama4TextConfig.__post_init__`):
/// experts in every layer of `moe_layers` (from `interleave_moe_layer_step`,
/// 1 when absent: `range(step - 1, layers, step)`), each with one shared
/// expert (`Llama4TextMoe`), a dense MLP of `intermediate_size_mlp` in the
/// others; the chunk of `attention_chunk_size` (8192 when absent, none
/// when null) on the layers `layer_types` calls `chunked_attention`, which
/// default to those with RoPE (`no_rope_layers`: all but every
/// `no_rope_layer_interval`-th, 4), the rotated layers (the others take
/// no RoPE: `Spec::nope_full`); the L2 q/k norm on them by `use_qk_norm`
/// (true when absent). A `moe_layers` list that is not the step's is
/// refused by name.
fn llama4(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    // `use_qk_norm`: true when absent (`Llama4TextConfig`).
    a.qk_norm = u32::from(boolean(obj, "use_qk_norm")? != Some(false));
    let layers = u64::from(a.layers);
    let step = uint(obj, "interleave_moe_layer_step")?.unwrap_or(1).max(1);
    let pattern: Vec<u64> = (1..=layers)
        .filter(|l| l % step == 0)
        .map(|l| l - 1)
        .collect();
    let listed = match obj.get("moe_layers") {
        Some(Value::Array(l)) => Some(l.iter().map(Value::as_u64).collect::<Vec<_>>()),
        _ => None,
    };
    if listed.is_some_and(|l| l.iter().copied().ne(pattern.iter().map(|&p| Some(p)))) {
        return Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec![format!(
                "moe_layers (not layers {}, {}, … as interleave_moe_layer_step {step} gives: vramfit models experts on those)",
                step - 1,
                2 * step - 1
            )],
        });
    }
    a.moe_step = if step > 1 {
        checked(ArchNum::MoeStep, "interleave_moe_layer_step", step)?
    } else {
        0
    };
    a.shared_experts = 1;
    let window = match obj.get("attention_chunk_size") {
        None => 8192,
        Some(Value::Null) => 0,
        Some(_) => uint(obj, "attention_chunk_size")?.unwrap_or(0),
    };
    if window == 0 {
        return Ok(());
    }
    // A list counts when it has items (an empty `no_rope_layers` takes
    // the default, as Python's `if self.no_rope_layers` does).
    let count = |v: &Value, pick: &dyn Fn(&Value) -> bool| match v {
        Value::Array(items) if !items.is_empty() => {
            Some(items.iter().filter(|x| pick(x)).count() as u64)
        }
        _ => None,
    };
    let chunked = obj
        .get("layer_types")
        .and_then(|v| count(v, &|t| t.as_str() == Some("chunked_attention")))
        .or_else(|| {
            obj.get("no_rope_layers")
                .and_then(|v| count(v, &|r| r.as_u64() == Some(1)))
        });
    let chunked = match chunked {
        Some(n) => n,
        None => {
            let every = uint(obj, "no_rope_layer_interval")?.unwrap_or(4).max(1);
            layers - layers / every
        }
    };
    a.sliding_window = checked(
        ArchNum::SlidingWindow,
        "attention_chunk_size",
        window.min(1 << 24),
    )?;
    a.sliding_layers = checked(ArchNum::SlidingLayers, "layer_types", chunked)?;
    Ok(())
}

/// What Gemma 4's config says that [`gemma4`] reads.
const GEMMA4_TOLERATED: &[&str] = &[
    "global_head_dim",
    "attention_k_eq_v",
    "use_double_wide_mlp",
    "hidden_size_per_layer_input",
    "enable_moe_block",
];

/// Gemma 4's numbers written as transformers 5.23 reads them
/// (`Gemma4TextConfig`): `global_head_dim` (512 when absent, popped in
/// `__post_init__`); the global key/value heads only with
/// `attention_k_eq_v` (`per_layer_config`); the per-layer embeddings of
/// `hidden_size_per_layer_input` (256 when absent, none when null or 0)
/// over `vocab_size_per_layer_input` (262144 when absent); the experts
/// only with `enable_moe_block`; the period of `layer_types` (every n-th
/// layer full; the default pattern is 6).
fn gemma4(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let global = uint(obj, "global_head_dim")?.unwrap_or(512);
    a.global_head_dim = checked(ArchNum::GlobalHeadDim, "global_head_dim", global)?;
    let k_eq_v = boolean(obj, "attention_k_eq_v")?.unwrap_or(false);
    a.k_eq_v = u32::from(k_eq_v);
    if !k_eq_v {
        a.global_kv_heads = 0;
    }
    a.double_wide = u32::from(boolean(obj, "use_double_wide_mlp")?.unwrap_or(false));
    let field = "hidden_size_per_layer_input";
    let ple = match obj.get(field) {
        // A family without per-layer embeddings (the 12B) reads no width.
        _ if !a.family.spec().per_layer_embeddings => 0,
        None => 256,
        Some(Value::Null) => 0,
        Some(_) => uint(obj, field)?.unwrap_or(0),
    };
    a.ple_dim = checked(ArchNum::PleDim, field, ple)?;
    a.ple_vocab = if ple > 0 {
        let rows = uint(obj, "vocab_size_per_layer_input")?.unwrap_or(262_144);
        checked(ArchNum::PleVocab, "vocab_size_per_layer_input", rows)?
    } else {
        0
    };
    if !boolean(obj, "enable_moe_block")?.unwrap_or(false) {
        a.experts = 0;
        a.experts_per_token = 0;
        a.moe_ffn = 0;
    }
    let period = listed_period(obj, a, 6)?;
    if period > 0 {
        a.sliding_period = period;
    }
    Ok(())
}

/// What Gemma 3n's config says that [`gemma3n`] reads, or that changes no
/// tensor an engine keeps: AltUp's coefficients' clip, its correction
/// scale (a parameter either way), its active stream and learning-rate
/// multiplier; the activation sparsity of the first layers' MLPs (a
/// top-k of activations, not of weights).
const GEMMA3N_TOLERATED: &[&str] = &[
    "hidden_size_per_layer_input",
    "altup_num_inputs",
    "laurel_rank",
    "altup_active_idx",
    "altup_coef_clip",
    "altup_correct_scale",
    "altup_lr_multiplier",
    "activation_sparsity_pattern",
];

/// Gemma 3n's numbers as transformers 5.23 reads them
/// (`Gemma3nTextConfig`): `intermediate_size` a width for every layer (a
/// list, or one number for all: a config whose layers differ is refused,
/// as every published one has one width); the per-layer embeddings of
/// `hidden_size_per_layer_input` (256 when absent) over
/// `vocab_size_per_layer_input` (262,144); AltUp's `altup_num_inputs` and
/// `laurel_rank` only at the values llama.cpp b10488 fixes
/// ([`ALTUP_STREAMS`], [`LAUREL_RANK`]); the period of `layer_types`.
fn gemma3n(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let field = "intermediate_size";
    let width = match obj.get(field) {
        Some(Value::Array(widths)) => {
            let first = widths.first().and_then(Value::as_u64);
            match first {
                Some(w) if widths.iter().all(|v| v.as_u64() == Some(w)) => w,
                _ => {
                    return Err(ConfigError::Invalid {
                        field,
                        reason: "must be one whole number for every layer: vramfit models Gemma 3n's layers at one MLP width".into(),
                    })
                }
            }
        }
        _ => uint(obj, field)?.ok_or_else(|| ConfigError::Missing {
            model_type: "gemma3n_text".into(),
            fields: vec![field],
        })?,
    };
    a.ffn = checked(ArchNum::Ffn, field, width)?;
    for (field, fixed) in [
        ("altup_num_inputs", ALTUP_STREAMS),
        ("laurel_rank", LAUREL_RANK),
    ] {
        match uint(obj, field)? {
            Some(v) if v != u64::from(fixed) => {
                return Err(ConfigError::Invalid {
                    field,
                    reason: format!("must be {fixed}: llama.cpp b10488 fixes it at {fixed} and vramfit models no other, not {v}"),
                })
            }
            Some(_) | None => {}
        }
    }
    let field = "hidden_size_per_layer_input";
    let ple = uint(obj, field)?.unwrap_or(256);
    a.ple_dim = checked(ArchNum::PleDim, field, ple)?;
    let rows = uint(obj, "vocab_size_per_layer_input")?.unwrap_or(262_144);
    a.ple_vocab = checked(ArchNum::PleVocab, "vocab_size_per_layer_input", rows)?;
    a.sliding_period = listed_period(obj, a, 5)?;
    Ok(())
}

/// The period of a `layer_types` list whose every `period`-th layer is
/// full attention, as the architecture's `sliding_period` (0: the
/// family's `default`, or no such period).
fn listed_period(
    obj: &Map<String, Value>,
    a: &Architecture,
    default: usize,
) -> Result<u32, ConfigError> {
    let Some(Value::Array(types)) = obj.get("layer_types") else {
        return Ok(0);
    };
    let full = |t: &Value| t.as_str() == Some("full_attention");
    let period = types.iter().position(full).map_or(0, |i| i + 1);
    let periodic = period > 0
        && types.len() == a.layers as usize
        && types
            .iter()
            .enumerate()
            .all(|(i, t)| full(t) == (i + 1).is_multiple_of(period));
    if periodic && period != default {
        checked(ArchNum::SlidingPeriod, "layer_types", period as u64)
    } else {
        Ok(0)
    }
}

/// What Kimi Linear's config says that [`kimi_linear`] reads, or that
/// changes no tensor an engine keeps: the router's scaling and grouping,
/// `mla_use_nope` (no rotary positions: the rotary key is cached all the
/// same), the top-level `head_dim` (`hidden / heads`, which the latent
/// attention does not read).
const KIMI_LINEAR_TOLERATED: &[&str] = &[
    "linear_attn_config",
    "mla_use_nope",
    "moe_layer_freq",
    "moe_renormalize",
    "moe_router_activation_func",
    "routed_scaling_factor",
    "num_expert_group",
    "topk_group",
    "head_dim",
];

/// Kimi Linear as transformers 5.23 reads it (`KimiLinearConfig`):
/// DeepSeek's head width ([`deepseek`]); `linear_attn_config`'s
/// `num_heads` KDA heads (key and value) of `head_dim`, its
/// `short_conv_kernel_size` and its `kda_layers` (1-based), as many KDA
/// layers as listed (their order is not kept:
/// [`Architecture::layer_order_caveat`]); experts on every layer after
/// the dense ones (`moe_layer_freq` 1, as published; another is refused).
fn kimi_linear(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    deepseek(obj, a)?;
    if uint(obj, "moe_layer_freq")?.is_some_and(|f| f != 1) {
        return Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec!["moe_layer_freq".into()],
        });
    }
    let Some(Value::Object(kda)) = obj.get("linear_attn_config") else {
        return Err(ConfigError::Missing {
            model_type: a.family.key().into(),
            fields: vec!["linear_attn_config"],
        });
    };
    let need = |field: &'static str| {
        uint(kda, field)?.ok_or_else(|| ConfigError::Missing {
            model_type: "kimi_linear".into(),
            fields: vec![field],
        })
    };
    let heads = checked(ArchNum::LinearVHeads, "num_heads", need("num_heads")?)?;
    let dim = checked(ArchNum::LinearVDim, "head_dim", need("head_dim")?)?;
    let kernel = need("short_conv_kernel_size")?;
    a.linear_conv = checked(ArchNum::LinearConv, "short_conv_kernel_size", kernel)?;
    (a.linear_k_heads, a.linear_v_heads) = (heads, heads);
    (a.linear_k_dim, a.linear_v_dim) = (dim, dim);
    let field = "kda_layers";
    let Some(Value::Array(listed)) = kda.get(field) else {
        a.linear_layers = 0;
        return Ok(());
    };
    let layers = a.layers;
    let valid = |v: &Value| {
        v.as_u64()
            .is_some_and(|l| (1..=u64::from(layers)).contains(&l))
    };
    if !listed.iter().all(valid) {
        return Err(ConfigError::Invalid {
            field,
            reason: format!("must list layers from 1 to {layers} (1-based)"),
        });
    }
    a.linear_layers = checked(ArchNum::LinearLayers, field, listed.len() as u64)?;
    // As many as the family's pattern (every fourth layer and the last
    // full attention) but elsewhere: an order the description cannot keep.
    let rule = a.family.spec().linear;
    let pattern = |l: u64| rule.is_some_and(|r| r.linear_at((l - 1) as u32, layers));
    let elsewhere = listed.iter().filter_map(Value::as_u64).any(|l| !pattern(l));
    if rule.is_some_and(|r| r.count(layers) == a.linear_layers) && elsewhere {
        return Err(ConfigError::Invalid {
            field,
            reason: "lists the KDA layers elsewhere than every layer but each fourth and the last, which vramfit does not model".into(),
        });
    }
    Ok(())
}

/// What a hybrid's config says that vramfit reads elsewhere or that leaves
/// its numbers as they are: the pattern (read by [`hybrid`]), the gate
/// (`Spec::attn_gate`; a config turning it off is refused by
/// [`required_on`]), and the partial rotary factor (read by [`hybrid`]
/// into `rope_dim`).
const HYBRID_TOLERATED: &[&str] = &[
    "full_attention_interval",
    "attn_output_gate",
    "partial_rotary_factor",
];

/// A Gated DeltaNet hybrid: how many layers are linear attention, from
/// `layer_types` when the config lists them (every entry
/// `linear_attention` or `full_attention`), else from
/// `full_attention_interval` (transformers' default: every fourth layer
/// full, `Qwen3NextConfig.__post_init__`).
fn hybrid(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let field = "layer_types";
    let linear = match layer_types(obj, a, &["linear_attention"], &["full_attention"])? {
        Some(n) => n,
        None => {
            let every = uint(obj, "full_attention_interval")?.unwrap_or(4);
            if every == 0 {
                return Err(ConfigError::Invalid {
                    field: "full_attention_interval",
                    reason: "must be at least 1".into(),
                });
            }
            let layers = u64::from(a.layers);
            layers - layers / every
        }
    };
    a.linear_layers = checked(ArchNum::LinearLayers, field, linear)?;
    // The full-attention layers rotate a quarter of each head by default
    // (`Qwen3_5TextConfig.__post_init__`, `Qwen3NextConfig.__post_init__`:
    // `setdefault("partial_rotary_factor", 0.25)`).
    rotary_part(obj, a, 0.25)
}

/// A hybrid with experts: the pattern, and the shared expert in expert
/// widths.
fn hybrid_moe(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    hybrid(obj, a)?;
    qwen2_moe(obj, a)
}

/// How many layers a hybrid's `layer_types` list calls `recurrent` (the
/// others must be `attention`), or `None` without a list; a list of
/// another length, or another kind of layer, is refused by name.
fn layer_types(
    obj: &Map<String, Value>,
    a: &Architecture,
    recurrent: &[&str],
    attention: &[&str],
) -> Result<Option<u64>, ConfigError> {
    let Some(Value::Array(types)) = obj.get("layer_types") else {
        return Ok(None);
    };
    if types.len() != a.layers as usize {
        return Err(ConfigError::Invalid {
            field: "layer_types",
            reason: format!(
                "lists {} layers, not num_hidden_layers ({})",
                types.len(),
                a.layers
            ),
        });
    }
    let mut n = 0u64;
    for t in types {
        match t.as_str() {
            Some(k) if recurrent.contains(&k) => n += 1,
            Some(k) if attention.contains(&k) => {}
            _ => {
                return Err(ConfigError::NotUnderstood {
                    model_type: a.family.key().into(),
                    fields: vec![format!("layer_types entry {}", quote_value(t))],
                })
            }
        }
    }
    Ok(Some(n))
}

fn nothing(_: &Map<String, Value>, _: &mut Architecture) -> Result<(), ConfigError> {
    Ok(())
}

/// GPTBigCode: `multi_query` (the default) means one key/value head.
fn bigcode(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    if boolean(obj, "multi_query")?.unwrap_or(true) {
        a.kv_heads = 1;
    }
    Ok(())
}

/// Qwen2-MoE: the shared expert's width in expert widths.
fn qwen2_moe(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let field = "shared_expert_intermediate_size";
    let Some(width) = uint(obj, field)? else {
        return Ok(());
    };
    let mf = u64::from(a.moe_ffn.max(1));
    let of = ("moe_intermediate_size", "expert");
    a.shared_experts = in_expert_widths(field, width, mf, of)?;
    Ok(())
}

/// A shared expert's width `shared` (config field `field`) in widths of an
/// expert (`width`, read from `of.0`): a multiple of it, or refused with
/// what it is (`of.1`: the shared expert, Granite's shared MLP).
fn in_expert_widths(
    field: &'static str,
    shared: u64,
    width: u64,
    of: (&str, &str),
) -> Result<u32, ConfigError> {
    if width == 0 || !shared.is_multiple_of(width) {
        let (width_field, what) = of;
        return Err(ConfigError::Invalid {
            field,
            reason: format!(
                "({shared}) must be a multiple of {width_field} ({width}): vramfit counts the shared {what} in expert widths"
            ),
        });
    }
    checked(ArchNum::SharedExperts, field, shared / width)
}

/// DeepSeek: a query/key head is its non-rotary and rotary parts.
fn deepseek(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let field = "qk_nope_head_dim";
    let nope = uint(obj, field)?.ok_or(ConfigError::Missing {
        model_type: a.family.key().into(),
        fields: vec![field],
    })?;
    // Saturating: a width past u64 is past the codec's bound too, and
    // `checked` names that bound rather than a wrapped sum.
    let width = nope.saturating_add(u64::from(a.rope_dim));
    a.head_dim = checked(ArchNum::HeadDim, field, width)?;
    Ok(())
}

/// GLM-4.7-Flash: DeepSeek's head width ([`deepseek`]) and the dense
/// layers as transformers 5.23 builds them ([`dense_by_mlp_layer_types`];
/// absent, the first layer dense: `Glm4MoeLiteConfig.__post_init__`).
fn glm4_moe_lite(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    deepseek(obj, a)?;
    dense_by_mlp_layer_types(obj, a, 1)
}

/// The dense layers from `mlp_layer_types` (`"dense"` or `"sparse"` per
/// layer; `absent` dense layers first when the config has none).
/// `first_k_dense_replace`, which the published configs keep and vLLM and
/// llama.cpp read, must agree.
fn dense_by_mlp_layer_types(
    obj: &Map<String, Value>,
    a: &mut Architecture,
    absent: u64,
) -> Result<(), ConfigError> {
    let not_understood = |what: String| ConfigError::NotUnderstood {
        model_type: a.family.key().into(),
        fields: vec![what],
    };
    let dense = match obj.get("mlp_layer_types") {
        None | Some(Value::Null) => absent.min(u64::from(a.layers)),
        Some(Value::Array(types)) => {
            let dense = types
                .iter()
                .take_while(|t| t.as_str() == Some("dense"))
                .count();
            let sparse_after = types[dense..].iter().all(|t| t.as_str() == Some("sparse"));
            if types.len() != a.layers as usize || !sparse_after {
                return Err(not_understood(
                    "mlp_layer_types other than dense layers first, then one sparse layer each to the last".into(),
                ));
            }
            dense as u64
        }
        Some(v) => {
            return Err(ConfigError::Invalid {
                field: "mlp_layer_types",
                reason: format!("must be a list, not {}", quote_value(v)),
            })
        }
    };
    if let Some(k) = uint(obj, "first_k_dense_replace")?.filter(|&k| k != dense) {
        return Err(not_understood(format!(
            "first_k_dense_replace {k} against {dense} dense layers in transformers' mlp_layer_types"
        )));
    }
    a.dense_layers = checked(ArchNum::DenseLayers, "mlp_layer_types", dense)?;
    Ok(())
}

/// DeepSeek-V3.2 and GLM-5: GLM-4.7-Flash's numbers, the dense layers
/// `first_k_dense_replace` (3 when absent) when `mlp_layer_types` is
/// absent (`DeepseekV32Config.__post_init__`), and an indexer in every
/// layer. GLM-5's layers that reuse the previous layer's choice of tokens
/// (`indexer_types` "shared", from `index_topk_pattern` or
/// `index_topk_freq` above 1: `GlmMoeDsaConfig.__post_init__`) have no
/// indexer and no indexer cache, which vramfit does not count yet: such a
/// config is refused by name.
fn dsa(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    deepseek(obj, a)?;
    let absent = uint(obj, "first_k_dense_replace")?.unwrap_or(3);
    dense_by_mlp_layer_types(obj, a, absent)?;
    let text = |v: &Value| match v {
        Value::String(t) => t.contains('S'),
        Value::Array(kinds) => kinds
            .iter()
            .any(|k| k.as_str().is_some_and(|k| k == "shared" || k == "S")),
        _ => false,
    };
    let shared = ["indexer_types", "index_topk_pattern"]
        .iter()
        .find(|f| obj.get(**f).is_some_and(text))
        .copied()
        .or(uint(obj, "index_topk_freq")?
            .is_some_and(|f| f > 1)
            .then_some("index_topk_freq"));
    match shared {
        Some(field) => Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec![format!(
                "{field}: layers that reuse the previous layer's indexer (no indexer or indexer cache of their own)"
            )],
        }),
        None => Ok(()),
    }
}

/// GLM-4.5: the rotary part of a head, `int(head_dim ×
/// partial_rotary_factor)` (top level in transformers 4's layout, inside
/// `rope_parameters` in 5's; 0.5 when absent), the q/k norms
/// (`use_qk_norm`, off when absent), and the q/k/v biases, which every
/// published config turns on (`attention_bias`, off when absent:
/// a config without them is refused rather than miscounted).
/// Source: transformers 5.23 `Glm4MoeConfig` (`use_qk_norm: bool = False`,
/// `attention_bias: bool = False`, `__post_init__`'s
/// `setdefault("partial_rotary_factor", 0.5)`),
/// `Glm4MoeRotaryEmbedding.compute_default_rope_parameters` (`dim =
/// int(head_dim * partial_rotary_factor)`); llama.cpp b10488
/// `conversion/glm.py` writes the same `rope.dimension_count`.
fn glm4_moe(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    if boolean(obj, "attention_bias")? != Some(true) {
        return Err(ConfigError::NotUnderstood {
            model_type: a.family.key().into(),
            fields: vec![format!(
                "attention_bias off (vramfit models {} with it)",
                a.family.label()
            )],
        });
    }
    rotary_part(obj, a, 0.5)?;
    a.qk_norm = u32::from(boolean(obj, "use_qk_norm")? == Some(true));
    Ok(())
}

/// The rotary part of a head, `int(head_dim × partial_rotary_factor)`:
/// the factor at the top level (transformers 4's layout) or inside
/// `rope_parameters` (5's), `default` when absent (the family's
/// `__post_init__` `setdefault`). `int()` truncates, as transformers does.
fn rotary_part(
    obj: &Map<String, Value>,
    a: &mut Architecture,
    default: f64,
) -> Result<(), ConfigError> {
    rotary_part_named(obj, a, "partial_rotary_factor", default)
}

/// [`rotary_part`] with the top-level factor under the name `field`
/// (GPT-NeoX's `rotary_pct`); inside `rope_parameters` it is always
/// `partial_rotary_factor`.
fn rotary_part_named(
    obj: &Map<String, Value>,
    a: &mut Architecture,
    field: &'static str,
    default: f64,
) -> Result<(), ConfigError> {
    let nested = match obj.get("rope_parameters") {
        Some(Value::Object(r)) => r.get("partial_rotary_factor"),
        _ => None,
    };
    let factor = match obj.get(field).or(nested) {
        None | Some(Value::Null) => default,
        Some(v) => v
            .as_f64()
            .filter(|f| *f > 0.0 && *f <= 1.0)
            .ok_or_else(|| ConfigError::Invalid {
                field,
                reason: format!("must be a fraction in (0, 1], not {}", quote_value(v)),
            })?,
    };
    // The product of a u32 and a fraction at most 1 fits.
    let rotary = (f64::from(a.head_dim) * factor) as u64;
    a.rope_dim = checked(ArchNum::RopeDim, field, rotary)?;
    Ok(())
}

/// GPT-NeoX: the rotary part of a head from `rotary_pct` (the published
/// configs' name, which `GPTNeoXConfig.convert_rope_params_to_dict` moves
/// into `rope_parameters` as `partial_rotary_factor`; 0.25 when absent),
/// and the parallel residual and the attention's biases, on in every
/// published config and by default (`use_parallel_residual: bool = True`,
/// `attention_bias: bool = True`): a config turning either off is refused
/// rather than estimated as another build. Source: transformers 5.23
/// `configuration_gpt_neox.py`.
fn gpt_neox(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    for field in ["use_parallel_residual", "attention_bias"] {
        if boolean(obj, field)? == Some(false) {
            return Err(ConfigError::NotUnderstood {
                model_type: a.family.key().into(),
                fields: vec![format!(
                    "{field} off (vramfit models {} with it)",
                    a.family.label()
                )],
            });
        }
    }
    rotary_part_named(obj, a, "rotary_pct", 0.25)
}

/// MiniMax-M2: the rotary part of a head, `rotary_dim` (transformers 5.23
/// `MiniMaxM2Config.convert_rope_params_to_dict`: `partial_rotary_factor =
/// rotary_dim / head_dim`), else `partial_rotary_factor`, else the whole
/// head. Its q/k norms are built whatever `use_qk_norm` says
/// (`MiniMaxM2Attention.__init__`).
fn minimax_m2(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let rotary = match uint(obj, "rotary_dim")? {
        Some(r) => r,
        None => {
            let field = "partial_rotary_factor";
            let nested = match obj.get("rope_parameters") {
                Some(Value::Object(r)) => r.get(field),
                _ => None,
            };
            match obj.get(field).or(nested) {
                None | Some(Value::Null) => u64::from(a.head_dim),
                Some(v) => {
                    let f = v
                        .as_f64()
                        .filter(|f| *f > 0.0 && *f <= 1.0)
                        .ok_or_else(|| ConfigError::Invalid {
                            field,
                            reason: format!("must be a fraction in (0, 1], not {}", quote_value(v)),
                        })?;
                    (f64::from(a.head_dim) * f) as u64
                }
            }
        }
    };
    a.rope_dim = checked(ArchNum::RopeDim, "rotary_dim", rotary)?;
    Ok(())
}

/// A whole number from the config: `Ok(None)` when absent or null.
fn uint(obj: &Map<String, Value>, field: &'static str) -> Result<Option<u64>, ConfigError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| ConfigError::Invalid {
            field,
            reason: format!("must be a whole number, not {}", quote_value(v)),
        }),
    }
}

fn boolean(obj: &Map<String, Value>, field: &'static str) -> Result<Option<bool>, ConfigError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(ConfigError::Invalid {
            field,
            reason: format!("must be true or false, not {}", quote_value(v)),
        }),
    }
}

/// `v` as architecture number `num`, or why not (the codec's bounds, in
/// its words).
fn checked(num: ArchNum, field: &'static str, v: u64) -> Result<u32, ConfigError> {
    match num.out_of_range(v) {
        Some(why) => Err(ConfigError::Invalid {
            field,
            reason: format!("({}) {why}", num.key()),
        }),
        None => u32::try_from(v).map_err(|_| ConfigError::Invalid {
            field,
            reason: format!("({}) must be at most {}", num.key(), num.max()),
        }),
    }
}

/// Whether a config value says "this feature is on".
fn matters(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Reads a `config.json` text.
pub fn read_as(text: &str, reading: Reading) -> Result<ModelConfig, ConfigError> {
    // serde_json stops at 128 levels of nesting with an error: a deeply
    // nested file is refused, never a stack overflow.
    let v: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json(e.to_string()))?;
    let Value::Object(top) = v else {
        return Err(ConfigError::Json("expected a JSON object".into()));
    };
    // Multimodal configs nest the language model under `text_config`.
    let obj = match top.get("text_config") {
        Some(Value::Object(t))
            if !top.contains_key("hidden_size") && !top.contains_key("n_embd") =>
        {
            t
        }
        _ => &top,
    };
    let nested = !std::ptr::eq(obj, &top);
    let model_type = match obj.get("model_type").or_else(|| top.get("model_type")) {
        // A multimodal config's text model named by its wrapper
        // (`gemma4` → `gemma4_text`) when its `text_config` names none.
        Some(Value::String(s))
            if nested
                && !obj.contains_key("model_type")
                && Family::from_key(&format!("{s}_text")).is_some() =>
        {
            quote(&format!("{s}_text"))
        }
        Some(Value::String(s)) if !s.trim().is_empty() => quote(s),
        // A blank name names nothing: read as a config without one.
        Some(Value::String(_)) | None | Some(Value::Null) => "unknown".into(),
        Some(other) => {
            return Err(ConfigError::Invalid {
                field: "model_type",
                reason: format!("must be a name, not {}", quote_value(other)),
            })
        }
    };
    causal_lm(&top)?;
    let family = family_of(obj, &model_type, reading)?;
    let mut a = architecture(obj, family, &model_type)?;
    if nested {
        a.tied = wrapper_tied(&top)?.unwrap_or(a.tied);
    }
    let aux = family.spec().moe.is_some_and(|m| m.aux_loss);
    Ok(ModelConfig {
        arch: a,
        read_as_llama: reading == Reading::AsLlama,
        dropout: dropout(obj, family)?,
        router_logits: aux && boolean(obj, "output_router_logits")? == Some(true),
        quantization: bnb_quantization(&top)?,
        multimodal: !std::ptr::eq(obj, &top)
            || top.contains_key("vision_config")
            || top.contains_key("audio_config"),
        refused_by_transformers: strict_refusal(obj, family),
        model_type,
    })
}

/// Fields that transformers 5.23's strict config classes (`@strict`,
/// huggingface_hub's dataclass validation) type as a bool and a published
/// `config.json` writes otherwise: `AutoConfig.from_pretrained` raises
/// `StrictDataclassFieldValidationError` before a tensor is made.
/// `configuration_llama4.py:161` (`attn_temperature_tuning: bool = True`;
/// meta-llama's Scout writes 4). Measured on every config fixture:
/// `scripts/measure/families/strict/raw/check_all.txt`.
const STRICT_BOOLS: &[(Family, &str)] = &[(Family::Llama4Text, "attn_temperature_tuning")];

/// What transformers 5.23 says of a field of the wrong type, or `None`
/// when the file loads there.
fn strict_refusal(obj: &Map<String, Value>, family: Family) -> Option<String> {
    let (field, v) =
        STRICT_BOOLS
            .iter()
            .filter(|(f, _)| *f == family)
            .find_map(|&(_, field)| match obj.get(field) {
                None | Some(Value::Null) | Some(Value::Bool(_)) => None,
                Some(v) => Some((field, v)),
            })?;
    Some(format!(
        "transformers 5.23 refuses this config.json as written: `{field}` is {} where the `{}` config class asks for true or false (`from_pretrained` raises StrictDataclassFieldValidationError); the estimate is for the file with `{field}` true, which loads",
        quote_value(v),
        family.key()
    ))
}

/// Whether a multimodal wrapper ties its head to the embedding: the head
/// is the wrapper's (`…ForConditionalGeneration.lm_head`), tied by the
/// wrapper's own `tie_word_embeddings` (transformers 5.23
/// `PreTrainedModel.get_expanded_tied_weights_keys` reads `self.config`),
/// whose class default holds when the file has none; the text config's
/// flag moves nothing there. Measured: a tiny `mistral4` inside
/// `Mistral3ForConditionalGeneration` ties with no top-level flag and a
/// text config saying false
/// (`scripts/measure/families/mistral4/transformers/params_out.txt`).
/// `None`: a wrapper whose default vramfit does not know, read from its
/// text config.
fn wrapper_tied(top: &Map<String, Value>) -> Result<Option<bool>, ConfigError> {
    if let Some(flag) = boolean(top, "tie_word_embeddings")? {
        return Ok(Some(flag));
    }
    let wrapper = top.get("model_type").and_then(Value::as_str);
    Ok(WRAPPER_TIED
        .iter()
        .find(|(name, _)| Some(*name) == wrapper)
        .map(|&(_, tied)| tied))
}

/// The wrappers' `tie_word_embeddings` defaults (transformers 5.23
/// `configuration_mistral3.py:98`, `configuration_gemma3.py:89`,
/// `configuration_gemma4.py:166`, `configuration_gemma4_unified.py:139`,
/// `configuration_gemma3n.py:111`, `configuration_llama4.py:146`,
/// `configuration_qwen3_5.py:93`, `configuration_qwen3_5_moe.py:99`).
const WRAPPER_TIED: &[(&str, bool)] = &[
    ("mistral3", true),
    ("gemma3", true),
    ("gemma4", true),
    ("gemma4_unified", true),
    ("gemma3n", true),
    ("llama4", false),
    ("qwen3_5", false),
    ("qwen3_5_moe", false),
];

/// `model_type`s a publisher gave an architecture vramfit knows under its
/// own name, and the family they are read as.
///
/// Source: Kimi K2 (`moonshotai/Kimi-K2-Instruct-0905`, K2-Thinking, and
/// the `text_config` of K2.5 / K2.6) writes `"model_type": "kimi_k2"` with
/// `architectures: ["DeepseekV3ForCausalLM"]` and remote code
/// `configuration_deepseek.DeepseekV3Config`; its deployment guidance says
/// the model "reuses DeepSeekV3CausalLM" and runs as `deepseek_v3` when the
/// name is changed. transformers 5.23 has no `kimi_k2` model type
/// (`models/auto/configuration_auto.py`), llama.cpp converts it as
/// `deepseek2`.
const ALIASES: &[(&str, Family)] = &[("kimi_k2", Family::DeepseekV3)];

/// The family a `model_type` names: its own, or the one an alias reads it as.
fn family_named(model_type: &str) -> Option<Family> {
    Family::from_key(model_type).or_else(|| {
        ALIASES
            .iter()
            .find(|(name, _)| *name == model_type)
            .map(|(_, f)| *f)
    })
}

/// The family to read `obj` as; reading it as its `model_type` says, a
/// field that changes memory which the family does not understand, or one
/// it requires on turned off, is an error.
fn family_of(
    obj: &Map<String, Value>,
    model_type: &str,
    reading: Reading,
) -> Result<Family, ConfigError> {
    let family = match (family_named(model_type), reading) {
        (Some(f), Reading::AsItSays) => f,
        (_, Reading::AsLlama) => return Ok(Family::LLAMA_LIKE),
        (None, Reading::AsItSays) => {
            return Err(ConfigError::UnknownModelType {
                not_understood: not_understood(obj, Family::LLAMA_LIKE),
                model_type: model_type.into(),
            })
        }
    };
    let spec = family.spec();
    let mut fields = not_understood(obj, family);
    for k in required_on(spec) {
        let off = MEMORY_FIELDS
            .iter()
            .find(|(f, _)| *f == k)
            .is_some_and(|(_, n)| obj.get(k).is_some_and(|v| neutral(v, *n)));
        if off {
            fields.push(format!(
                "{k} off (vramfit models {} with it)",
                family.label()
            ));
        }
    }
    if fields.is_empty() {
        Ok(family)
    } else {
        Err(ConfigError::NotUnderstood {
            model_type: model_type.into(),
            fields,
        })
    }
}

/// The architecture numbers of `obj`, as `family` names them.
fn architecture(
    obj: &Map<String, Value>,
    family: Family,
    model_type: &str,
) -> Result<Architecture, ConfigError> {
    let r = reader(family);
    let mut a = Architecture {
        family,
        ..Architecture::BLANK
    };
    let rotary = family.spec().positions == Positions::Rotary;
    let mut missing = Vec::new();
    let mut pending = Vec::new();
    for (num, keys, default) in r.numbers() {
        let mut found = None;
        for &k in keys {
            if let Some(mut v) = uint(obj, k)? {
                if rotary && num == ArchNum::Positions {
                    // A trained context past 2^24 tokens only feeds the
                    // "longer than trained" notice, which no accepted seq
                    // (at most 2^22) can reach.
                    v = v.min(u64::from(num.max()));
                }
                found = Some(checked(num, k, v)?);
                break;
            }
        }
        match (found, default) {
            (Some(v), _) => num.set(&mut a, v),
            (None, Default::Required) => missing.push(keys.first().copied().unwrap_or("?")),
            (None, Default::Zero) => num.set(&mut a, 0),
            (None, d) => pending.push((num, d)),
        }
    }
    if !missing.is_empty() {
        return Err(ConfigError::Missing {
            model_type: model_type.into(),
            fields: missing,
        });
    }
    for (num, d) in pending {
        let v = match d {
            Default::Same(other) => other.get(&a),
            Default::HiddenOverHeads => {
                if a.heads > 0 && a.hidden.is_multiple_of(a.heads) {
                    a.hidden / a.heads
                } else {
                    0
                }
            }
            Default::FourHidden => checked(num, "n_inner", 4 * u64::from(a.hidden))?,
            Default::Required | Default::Zero => 0,
        };
        num.set(&mut a, v);
    }
    // Tied first: a family's own name for it (LFM2's `tie_embedding`) is
    // read by its derivation.
    a.tied = boolean(obj, "tie_word_embeddings")?.unwrap_or(family.spec().tied_default);
    (r.derive)(obj, &mut a)?;
    sliding(obj, &mut a)?;
    a.validate().map_err(ConfigError::Arch)?;
    Ok(a)
}

/// A checkpoint saved already quantized by bitsandbytes (its
/// `quantization_config`, e.g. unsloth's `*-bnb-4bit` repositories). Other
/// methods (fp8, mxfp4) are dequantized to the compute dtype for training,
/// which is what `from_config` builds.
/// Source: transformers `BitsAndBytesConfig.to_dict`.
fn bnb_quantization(top: &Map<String, Value>) -> Result<Option<Bnb>, ConfigError> {
    let Some(Value::Object(qc)) = top.get("quantization_config") else {
        return Ok(None);
    };
    if qc.get("quant_method").and_then(Value::as_str) != Some("bitsandbytes") {
        return Ok(None);
    }
    if boolean(qc, "load_in_4bit")? == Some(true) {
        let nf4 = match qc.get("bnb_4bit_quant_type").and_then(Value::as_str) {
            None | Some("fp4") => false,
            Some("nf4") => true,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    field: "bnb_4bit_quant_type",
                    reason: format!("must be nf4 or fp4, not {}", quote(other)),
                })
            }
        };
        Ok(Some(Bnb::FourBit {
            nf4,
            double_quant: boolean(qc, "bnb_4bit_use_double_quant")? == Some(true),
            compute_fp32: matches!(
                qc.get("bnb_4bit_compute_dtype").and_then(Value::as_str),
                None | Some("float32")
            ),
        }))
    } else if boolean(qc, "load_in_8bit")? == Some(true) {
        Ok(Some(Bnb::Int8))
    } else {
        Ok(None)
    }
}

/// The sliding window and the layers that use it: `layer_types` when the
/// config lists them, else the family's rule (`Spec::sliding`); none when
/// the family ignores the window (Qwen's `use_sliding_window: false`).
fn sliding(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let window = uint(obj, "sliding_window")?.unwrap_or(0);
    let ignored = boolean(obj, "use_sliding_window")? == Some(false);
    let rule = a.family.spec().sliding;
    if window == 0 || ignored || rule == Sliding::None {
        return Ok(());
    }
    let layers = u64::from(a.layers);
    let listed = match obj.get("layer_types") {
        Some(Value::Array(types)) => Some(
            types
                .iter()
                .filter(|t| t.as_str() == Some("sliding_attention"))
                .count() as u64,
        ),
        _ => None,
    };
    let count = match (listed, rule) {
        (Some(n), _) => n,
        (None, Sliding::All | Sliding::EveryOther | Sliding::None) => {
            u64::from(rule.count(a.layers))
        }
        (None, Sliding::AllButEvery(default)) => {
            let every = ["sliding_window_pattern", "_sliding_window_pattern"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_u64))
                .unwrap_or(u64::from(default))
                .max(1);
            layers - layers / every
        }
    };
    a.sliding_window = checked(
        ArchNum::SlidingWindow,
        "sliding_window",
        window.min(1 << 24),
    )?;
    a.sliding_layers = checked(ArchNum::SlidingLayers, "layer_types", count)?;
    Ok(())
}

/// Memory-relevant fields present in `obj` at a value that changes memory,
/// which `family` does not understand.
fn not_understood(obj: &Map<String, Value>, family: Family) -> Vec<String> {
    let (r, spec) = (reader(family), family.spec());
    MEMORY_FIELDS
        .iter()
        .filter(|(k, _)| !r.understood(spec, k))
        .filter(|(k, n)| obj.get(*k).is_some_and(|v| !neutral(v, *n)))
        .map(|(k, _)| k.to_string())
        .collect()
}

/// Whether a config value leaves memory as it is.
fn neutral(v: &Value, n: Neutral) -> bool {
    match n {
        Neutral::Off => !matters(v),
        Neutral::One => v.is_null() || v.as_f64() == Some(1.0),
        Neutral::Text(t) => v.is_null() || v.as_str() == Some(t),
    }
}

/// The dropout a config sets, when it differs from the family's default,
/// and the field it was read from.
fn dropout(
    obj: &Map<String, Value>,
    family: Family,
) -> Result<Option<(f64, &'static str)>, ConfigError> {
    let spec = family.spec();
    let keys: &[&'static str] = match (spec.positions, spec.resid_dropout) {
        (Positions::Learned, _) => &["resid_pdrop", "embd_pdrop", "attn_pdrop"],
        // GPT-NeoX: `hidden_dropout` on the embeddings and both branches.
        (Positions::Rotary, true) => &["attention_dropout", "hidden_dropout"],
        (Positions::Rotary, false) => &["attention_dropout"],
    };
    let mut seen: Option<(f64, &'static str)> = None;
    for &k in keys {
        let p = match obj.get(k) {
            None | Some(Value::Null) => continue,
            Some(v) => v.as_f64().ok_or_else(|| ConfigError::Invalid {
                field: k,
                reason: format!("must be a probability, not {}", quote_value(v)),
            })?,
        };
        match seen {
            Some((q, first)) if q != p => {
                return Err(ConfigError::NotUnderstood {
                    model_type: family.key().into(),
                    fields: vec![format!("{first} = {q} next to {k} = {p}")],
                })
            }
            _ => seen = Some((p, k)),
        }
    }
    let default = f64::from(family.spec().dropout) / 10_000.0;
    Ok(seen.filter(|(p, _)| *p != default))
}

/// Every config field the importer reads or refuses, for any family.
pub fn known_fields() -> impl Iterator<Item = &'static str> {
    Family::ALL
        .iter()
        .flat_map(|f| {
            let r = reader(*f);
            r.numbers()
                .flat_map(|(_, keys, _)| keys.iter().copied())
                .collect::<Vec<_>>()
        })
        .chain(MEMORY_FIELDS.iter().map(|(k, _)| *k))
        .chain([
            "qk_nope_head_dim",
            "rotary_dim",
            "tie_word_embeddings",
            "resid_pdrop",
            "embd_pdrop",
            "attn_pdrop",
            "attention_dropout",
            "hidden_dropout",
        ])
}

/// The architecture number a config field sets, in some family.
pub fn number_of(field: &str) -> Option<ArchNum> {
    Family::ALL.iter().find_map(|f| {
        reader(*f)
            .numbers()
            .find(|(_, keys, _)| keys.contains(&field))
            .map(|(n, _, _)| n)
    })
}
