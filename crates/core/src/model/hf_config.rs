//! Reads a Hugging Face `config.json` (transformers 4 or 5 layout) into the
//! query keys that describe the model, through the codec's own fields: a
//! config never imports a value the codec would refuse. An unknown
//! `model_type`, or a field that changes memory which vramfit does not
//! model, is an error that names it, never a silent guess; reading such a
//! config as Llama-like is an explicit choice ([`Reading::AsLlama`]).

use crate::model::family::{Positions, Sliding};
use crate::model::{ArchNum, Architecture, Family};
use crate::query::{self, FieldError};
use crate::scenario::ShortText;
use serde_json::{Map, Value};
use std::fmt;

/// Longest excerpt of a config value quoted in a message.
const QUOTE: usize = 40;

/// A short, clean excerpt of what the config holds, for messages.
fn quote(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .take(QUOTE + 1)
        .collect();
    if clean.chars().count() > QUOTE {
        format!("{}…", clean.chars().take(QUOTE).collect::<String>())
    } else {
        clean
    }
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
    Arch(crate::model::ArchError),
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

/// An imported model: the query keys that describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    pub arch: Architecture,
    /// `model_type` as written (clipped).
    pub model_type: String,
    /// `family`, every architecture number, `tied`, and `dropout` when the
    /// config sets a dropout, as the codec writes them.
    pub keys: Vec<(&'static str, String)>,
    /// Read as Llama-like by choice: the `model_type` it really is.
    pub assumed: Option<ShortText>,
}

/// Reads a `config.json` text as its `model_type` says.
pub fn parse(text: &str) -> Result<Imported, ConfigError> {
    parse_as(text, Reading::AsItSays)
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
    ("parallel_attn", Neutral::Off),
    ("new_decoder_architecture", Neutral::Off),
    ("output_router_logits", Neutral::Off),
    ("use_sliding_window", Neutral::Off),
    // transformers' per-expert Python loop keeps more than the default
    // grouped_mm (measured: tiny-*-eager-experts rows in families.jsonl).
    ("experts_implementation", Neutral::Text("grouped_mm")),
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
    /// (number, config keys in order of preference, default when absent).
    nums: &'static [(ArchNum, &'static [&'static str], Default)],
    /// Memory fields this reader reads or knows to leave memory unchanged.
    understood: &'static [&'static str],
    /// Memory fields this family must have at a value other than neutral
    /// (its spec assumes them on), with why.
    required_on: &'static [&'static str],
    /// Numbers written differently (a ratio, a sum, a flag), after `nums`.
    derive: fn(&Map<String, Value>, &mut Architecture) -> Result<(), ConfigError>,
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

const LLAMA_NUMS: &[(ArchNum, &[&str], Default)] = &[
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

const GPT2_NUMS: &[(ArchNum, &[&str], Default)] = &[
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
const MIXTRAL_NUMS: &[(ArchNum, &[&str], Default)] = &[
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
    (ArchNum::Experts, &["num_local_experts"], Default::Required),
    (
        ArchNum::ExpertsPerToken,
        &["num_experts_per_tok", "experts_per_token"],
        Default::Required,
    ),
    (ArchNum::MoeFfn, &["intermediate_size"], Default::Required),
];

/// Qwen2-MoE and Qwen3-MoE.
const QWEN_MOE_NUMS: &[(ArchNum, &[&str], Default)] = &[
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

/// DeepSeek-V2 and V3 (head_dim is derived: nope + rope).
const DEEPSEEK_NUMS: &[(ArchNum, &[&str], Default)] = &[
    (ArchNum::Hidden, &["hidden_size"], Default::Required),
    (ArchNum::Layers, &["num_hidden_layers"], Default::Required),
    (ArchNum::Heads, &["num_attention_heads"], Default::Required),
    (ArchNum::KvHeads, &[], Default::Same(ArchNum::Heads)),
    (ArchNum::Ffn, &["intermediate_size"], Default::Required),
    (ArchNum::Vocab, &["vocab_size"], Default::Required),
    (
        ArchNum::Positions,
        &["max_position_embeddings"],
        Default::Zero,
    ),
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
    if width % mf != 0 {
        return Err(ConfigError::Invalid {
            field,
            reason: format!(
                "({width}) must be a multiple of moe_intermediate_size ({mf}): vramfit counts the shared expert in expert widths"
            ),
        });
    }
    a.shared_experts = checked(ArchNum::SharedExperts, field, width / mf)?;
    Ok(())
}

/// DeepSeek: a query/key head is its non-rotary and rotary parts.
fn deepseek(obj: &Map<String, Value>, a: &mut Architecture) -> Result<(), ConfigError> {
    let field = "qk_nope_head_dim";
    let nope = uint(obj, field)?.ok_or(ConfigError::Missing {
        model_type: a.family.key().into(),
        fields: vec![field],
    })?;
    a.head_dim = checked(ArchNum::HeadDim, field, nope + u64::from(a.rope_dim))?;
    Ok(())
}

/// Fields that only shape attention masks or routing choices: transformers
/// keeps the same tensors whatever their values (SDPA keeps no scores,
/// eager masks full seq² scores; routing picks which experts, not how many).
const MASKS_AND_ROUTING: &[&str] = &["sliding_window_pattern", "norm_topk_prob"];

fn reader(family: Family) -> Reader {
    let plain = |nums| Reader {
        nums,
        understood: MASKS_AND_ROUTING,
        required_on: &[],
        derive: nothing,
    };
    match family {
        Family::Gpt2 => plain(GPT2_NUMS),
        Family::GptBigcode => Reader {
            understood: &["multi_query", "sliding_window_pattern"],
            derive: bigcode,
            ..plain(GPT2_NUMS)
        },
        Family::Llama | Family::Mistral | Family::Qwen2 | Family::Qwen3 | Family::Gemma => {
            plain(LLAMA_NUMS)
        }
        Family::Olmo2 => plain(LLAMA_NUMS),
        // Phi-4-mini's partial rotary factor shrinks only the cos/sin
        // tables (B·L·rot_dim: 64 bytes less at b2 s512, measured in
        // families.jsonl), which vramfit counts at the full head width.
        Family::Phi3 => Reader {
            understood: &[
                "partial_rotary_factor",
                "sliding_window_pattern",
                "norm_topk_prob",
            ],
            ..plain(LLAMA_NUMS)
        },
        Family::Gemma2 => Reader {
            understood: &[
                "attn_logit_softcapping",
                "final_logit_softcapping",
                "sliding_window_pattern",
            ],
            required_on: &["attn_logit_softcapping", "final_logit_softcapping"],
            ..plain(LLAMA_NUMS)
        },
        Family::Gemma3Text => plain(LLAMA_NUMS),
        Family::Mixtral => Reader {
            understood: &[
                "num_local_experts",
                "num_experts_per_tok",
                "sliding_window_pattern",
                "output_router_logits",
            ],
            ..plain(MIXTRAL_NUMS)
        },
        Family::GptOss => Reader {
            understood: &[
                "num_local_experts",
                "num_experts_per_tok",
                "attention_bias",
                "sliding_window_pattern",
                "output_router_logits",
            ],
            required_on: &["attention_bias"],
            ..plain(MIXTRAL_NUMS)
        },
        Family::Qwen2Moe => Reader {
            understood: &[
                "num_experts",
                "num_experts_per_tok",
                "moe_intermediate_size",
                "shared_expert_intermediate_size",
                "norm_topk_prob",
                "sliding_window_pattern",
                "output_router_logits",
            ],
            derive: qwen2_moe,
            ..plain(QWEN_MOE_NUMS)
        },
        Family::Qwen3Moe => Reader {
            understood: &[
                "num_experts",
                "num_experts_per_tok",
                "moe_intermediate_size",
                "norm_topk_prob",
                "sliding_window_pattern",
                "output_router_logits",
            ],
            ..plain(QWEN_MOE_NUMS)
        },
        Family::DeepseekV2 | Family::DeepseekV3 => Reader {
            understood: &[
                "n_routed_experts",
                "num_experts_per_tok",
                "moe_intermediate_size",
                "n_shared_experts",
                "first_k_dense_replace",
                "kv_lora_rank",
                "q_lora_rank",
                "norm_topk_prob",
                "sliding_window_pattern",
                "output_router_logits",
            ],
            derive: deepseek,
            ..plain(DEEPSEEK_NUMS)
        },
    }
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

/// A number the codec accepts for `num`, or why not (the codec's words).
fn checked(num: ArchNum, field: &'static str, v: u64) -> Result<u32, ConfigError> {
    let text = v.to_string();
    let invalid = |e: FieldError| ConfigError::Invalid {
        field,
        reason: format!("({}) {e}", num.key()),
    };
    match query::field(num.key()) {
        Some(f) => f.validate(&text).map_err(invalid)?,
        None => return Err(invalid(FieldError::NotANumber)),
    }
    u32::try_from(v).map_err(|_| {
        invalid(FieldError::TooLarge {
            max: num.max().to_string(),
        })
    })
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
pub fn parse_as(text: &str, reading: Reading) -> Result<Imported, ConfigError> {
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
    let model_type = match obj.get("model_type").or_else(|| top.get("model_type")) {
        Some(Value::String(s)) => quote(s),
        None | Some(Value::Null) => "unknown".into(),
        Some(other) => {
            return Err(ConfigError::Invalid {
                field: "model_type",
                reason: format!("must be a name, not {}", quote_value(other)),
            })
        }
    };
    causal_lm(&top)?;
    let known = Family::from_key(&model_type);
    let family = match (known, reading) {
        (Some(f), Reading::AsItSays) => f,
        (_, Reading::AsLlama) => Family::Llama,
        (None, Reading::AsItSays) => {
            return Err(ConfigError::UnknownModelType {
                not_understood: not_understood(obj, reader(Family::Llama).understood),
                model_type,
            })
        }
    };
    let r = reader(family);
    if reading == Reading::AsItSays {
        let mut fields = not_understood(obj, r.understood);
        // What the family's description assumes on must be on.
        for &k in r.required_on {
            let off = MEMORY_FIELDS
                .iter()
                .find(|(f, _)| *f == k)
                .is_some_and(|(_, n)| obj.get(k).is_none_or(|v| neutral(v, *n)));
            if off {
                fields.push(format!(
                    "{k} off (vramfit models {} with it)",
                    family.label()
                ));
            }
        }
        if !fields.is_empty() {
            return Err(ConfigError::NotUnderstood { model_type, fields });
        }
    }
    let mut a = Architecture {
        family,
        ..Architecture::BLANK
    };
    let rotary = family.spec().positions == Positions::Rotary;
    let mut missing = Vec::new();
    let mut pending = Vec::new();
    for &(num, keys, default) in r.nums {
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
            model_type,
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
    (r.derive)(obj, &mut a)?;
    sliding(obj, &mut a)?;
    a.tied = boolean(obj, "tie_word_embeddings")?.unwrap_or(family.spec().tied_default);
    a.validate().map_err(ConfigError::Arch)?;

    let mut keys = vec![("family", family.key().to_string())];
    for &num in ArchNum::ALL {
        keys.push((num.key(), num.get(&a).to_string()));
    }
    keys.push(("tied", a.tied.to_string()));
    if let Some(p) = dropout(obj, family)? {
        keys.push(("dropout", p));
    }
    // transformers adds the load-balancing loss when the config asks for
    // router logits (`output_router_logits`), training or not.
    let aux = family.spec().moe.is_some_and(|m| m.aux_loss);
    if aux && boolean(obj, "output_router_logits")? == Some(true) {
        keys.push(("aux_loss", "true".into()));
    }
    keys.extend(bnb_quantization(&top)?);
    let assumed = match reading {
        Reading::AsItSays => None,
        Reading::AsLlama => ShortText::new(&model_type).ok(),
    };
    Ok(Imported {
        arch: a,
        model_type,
        keys,
        assumed,
    })
}

/// A checkpoint saved already quantized by bitsandbytes (its
/// `quantization_config`, e.g. unsloth's `*-bnb-4bit` repositories): the
/// keys that load it so. Other methods (fp8, mxfp4) are dequantized to the
/// compute dtype for training, which is what `from_config` builds.
/// Source: transformers `BitsAndBytesConfig.to_dict`.
fn bnb_quantization(top: &Map<String, Value>) -> Result<Vec<(&'static str, String)>, ConfigError> {
    let Some(Value::Object(qc)) = top.get("quantization_config") else {
        return Ok(Vec::new());
    };
    if qc.get("quant_method").and_then(Value::as_str) != Some("bitsandbytes") {
        return Ok(Vec::new());
    }
    let mut keys = Vec::new();
    if boolean(qc, "load_in_4bit")? == Some(true) {
        let kind = match qc.get("bnb_4bit_quant_type").and_then(Value::as_str) {
            None | Some("fp4") => "fp4",
            Some("nf4") => "nf4",
            Some(other) => {
                return Err(ConfigError::Invalid {
                    field: "bnb_4bit_quant_type",
                    reason: format!("must be nf4 or fp4, not {}", quote(other)),
                })
            }
        };
        keys.push(("quant", kind.to_string()));
        if boolean(qc, "bnb_4bit_use_double_quant")? == Some(true) {
            keys.push(("double_quant", "true".into()));
        }
        if matches!(
            qc.get("bnb_4bit_compute_dtype").and_then(Value::as_str),
            None | Some("float32")
        ) {
            keys.push(("bnb_compute", "fp32".into()));
        }
    } else if boolean(qc, "load_in_8bit")? == Some(true) {
        keys.push(("quant", "int8".into()));
    }
    Ok(keys)
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
        (None, Sliding::All) => layers,
        (None, Sliding::EveryOther) => layers.div_ceil(2),
        (None, Sliding::AllButEvery(default)) => {
            let every = ["sliding_window_pattern", "_sliding_window_pattern"]
                .iter()
                .find_map(|k| obj.get(*k).and_then(Value::as_u64))
                .unwrap_or(u64::from(default))
                .max(1);
            layers - layers / every
        }
        (None, Sliding::None) => 0,
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
/// which a reader does not use.
fn not_understood(obj: &Map<String, Value>, understood: &[&str]) -> Vec<String> {
    MEMORY_FIELDS
        .iter()
        .filter(|(k, _)| !understood.contains(k))
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
/// as the `dropout` key's text.
fn dropout(obj: &Map<String, Value>, family: Family) -> Result<Option<String>, ConfigError> {
    let keys: &[&'static str] = match family.spec().positions {
        Positions::Learned => &["resid_pdrop", "embd_pdrop", "attn_pdrop"],
        Positions::Rotary => &["attention_dropout"],
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
    let Some((p, k)) = seen else {
        return Ok(None);
    };
    let default = f64::from(family.spec().dropout) / 10_000.0;
    if p == default {
        return Ok(None);
    }
    // Four decimals, as the codec takes it.
    let text = format!("{p:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    let text = if text.is_empty() { "0".into() } else { text };
    if let Some(f) = query::field("dropout") {
        f.validate(&text).map_err(|e| ConfigError::Invalid {
            field: k,
            reason: format!("(dropout) `{}` {e}", quote(&p.to_string())),
        })?;
    }
    Ok(Some(text))
}

impl Imported {
    /// The query keys that select this model: the preset it is exactly, or
    /// the first preset of its family (the default one otherwise) with every
    /// architecture key that differs from it, the config's dropout, and
    /// `like_llama` when it was read as Llama-like by choice. Applying them
    /// after removing the model's keys ([`model_keys`]) gives this model.
    pub fn changes(&self) -> Vec<(&'static str, String)> {
        let presets = crate::model::presets::PRESETS;
        let base = presets
            .iter()
            .find(|p| p.arch == self.arch)
            .or_else(|| presets.iter().find(|p| p.arch.family == self.arch.family))
            .unwrap_or_else(|| crate::model::presets::default_preset());
        let mut out = vec![("model", base.id.to_string())];
        for (k, v) in &self.keys {
            let same = query::field(k).is_some_and(|f| {
                let preset = crate::Scenario {
                    model: crate::scenario::ModelSpec::Preset {
                        id: base.id,
                        overrides: crate::model::ArchOverrides::default(),
                        like_llama: None,
                        hub: None,
                    },
                    arch: Some(base.arch),
                    ..crate::Scenario::default()
                };
                f.shown_value(&preset) == *v
            });
            if !same {
                out.push((k, v.clone()));
            }
        }
        if let Some(t) = self.assumed {
            out.push(("like_llama", t.as_str().to_string()));
        }
        // A key left out because it equals the preset's can still differ
        // once others change (head_dim defaults to hidden / heads when
        // those are overridden): then every key is written.
        let decoded = |pairs: &[(&str, String)]| {
            let mut raw = query::RawQuery::default();
            for (k, v) in pairs {
                raw.set(k, v);
            }
            query::decode(&raw).scenario.arch
        };
        if decoded(&out) != Some(self.arch) {
            out.truncate(1);
            out.extend(self.keys.iter().map(|(k, v)| (*k, v.clone())));
            if let Some(t) = self.assumed {
                out.push(("like_llama", t.as_str().to_string()));
            }
        }
        out
    }
}

/// The keys that describe the model: an import replaces all of them.
pub fn model_keys() -> impl Iterator<Item = &'static str> {
    query::FIELDS
        .iter()
        .filter(|f| matches!(f.group, query::Group::Model | query::Group::Architecture))
        .map(|f| f.key)
        .chain([
            "dropout",
            "aux_loss",
            "quant",
            "double_quant",
            "bnb_compute",
        ])
}

/// Every config field the importer reads or refuses, for any family.
pub fn known_fields() -> impl Iterator<Item = &'static str> {
    Family::ALL
        .iter()
        .flat_map(|f| {
            reader(*f)
                .nums
                .iter()
                .flat_map(|(_, keys, _)| keys.iter().copied())
        })
        .chain(MEMORY_FIELDS.iter().map(|(k, _)| *k))
        .chain([
            "qk_nope_head_dim",
            "tie_word_embeddings",
            "resid_pdrop",
            "embd_pdrop",
            "attn_pdrop",
            "attention_dropout",
        ])
}

/// The architecture number a config field sets, in some family.
pub fn number_of(field: &str) -> Option<ArchNum> {
    Family::ALL.iter().find_map(|f| {
        reader(*f)
            .nums
            .iter()
            .find(|(_, keys, _)| keys.contains(&field))
            .map(|(n, _, _)| *n)
    })
}
