//! Reads a Hugging Face `config.json` (transformers 4 or 5 layout) into the
//! query keys that describe the model, through the codec's own fields: a
//! config never imports a value the codec would refuse. An unknown
//! `model_type`, or a field that changes memory which vramfit does not
//! model, is an error that names it, never a silent guess; reading such a
//! config as Llama-like is an explicit choice ([`Reading::AsLlama`]).

use crate::arch::{ArchNum, Architecture, Family};
use crate::families::Positions;
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
    Arch(crate::arch::ArchError),
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
        }
    }
}

impl std::error::Error for ConfigError {}

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

/// Memory-relevant fields of configs vramfit does not model for any family
/// (or only for some). Present with a value that matters (not null, false,
/// 0, an empty list), a reader that does not use them refuses the config.
const MEMORY_FIELDS: &[&str] = &[
    "num_local_experts",
    "num_experts",
    "n_routed_experts",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "n_shared_experts",
    "first_k_dense_replace",
    "kv_lora_rank",
    "q_lora_rank",
    "attn_logit_softcapping",
    "final_logit_softcapping",
    "sliding_window_pattern",
    "attention_bias",
    "mlp_bias",
    "qk_layernorm",
    "use_qk_norm",
    "multi_query",
    "num_experts_per_tok",
    "partial_rotary_factor",
    "parallel_attn",
    "new_decoder_architecture",
    "mlp_only_layers",
];

/// How a family's config names its numbers.
struct Reader {
    /// (number, config keys in order of preference, default when absent).
    nums: &'static [(ArchNum, &'static [&'static str], Default)],
    /// Memory-relevant fields this reader understands (reads, or knows to
    /// leave memory unchanged).
    understood: &'static [&'static str],
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

fn reader(family: Family) -> Reader {
    match family {
        Family::Gpt2 => Reader {
            nums: &[
                (ArchNum::Hidden, &["n_embd"], Default::Required),
                (ArchNum::Layers, &["n_layer"], Default::Required),
                (ArchNum::Heads, &["n_head"], Default::Required),
                (ArchNum::KvHeads, &[], Default::Same(ArchNum::Heads)),
                (ArchNum::HeadDim, &[], Default::HiddenOverHeads),
                (ArchNum::Ffn, &["n_inner"], Default::FourHidden),
                (ArchNum::Vocab, &["vocab_size"], Default::Required),
                (ArchNum::Positions, &["n_positions"], Default::Required),
            ],
            understood: &[],
        },
        // Mistral's sliding window changes nothing that is saved: SDPA keeps
        // no scores and eager masks full seq² scores.
        Family::Mistral => Reader {
            nums: LLAMA_NUMS,
            understood: &[],
        },
        Family::Llama | Family::Qwen2 | Family::Phi3 | Family::Gemma => Reader {
            nums: LLAMA_NUMS,
            understood: &[],
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
        let fields = not_understood(obj, r.understood);
        if !fields.is_empty() {
            return Err(ConfigError::NotUnderstood { model_type, fields });
        }
    }
    let mut a = Architecture {
        family,
        hidden: 0,
        layers: 0,
        heads: 0,
        kv_heads: 0,
        head_dim: 0,
        ffn: 0,
        vocab: 0,
        tied: false,
        positions: 0,
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

/// Memory-relevant fields present in `obj` that a reader does not use.
fn not_understood(obj: &Map<String, Value>, understood: &[&str]) -> Vec<String> {
    MEMORY_FIELDS
        .iter()
        .filter(|k| !understood.contains(k))
        .filter(|k| obj.get(**k).is_some_and(matters))
        .map(|k| k.to_string())
        .collect()
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
        let presets = crate::presets::PRESETS;
        let base = presets
            .iter()
            .find(|p| p.arch == self.arch)
            .or_else(|| presets.iter().find(|p| p.arch.family == self.arch.family))
            .unwrap_or_else(|| crate::presets::default_preset());
        let mut out = vec![("model", base.id.to_string())];
        for (k, v) in &self.keys {
            let same = query::field(k).is_some_and(|f| {
                let preset = crate::Scenario {
                    model: crate::scenario::ModelSpec::Preset {
                        id: base.id,
                        overrides: crate::arch::ArchOverrides::default(),
                        like_llama: None,
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
        out
    }
}

/// The keys that describe the model: an import replaces all of them.
pub fn model_keys() -> impl Iterator<Item = &'static str> {
    query::FIELDS
        .iter()
        .filter(|f| matches!(f.group, query::Group::Model | query::Group::Architecture))
        .map(|f| f.key)
        .chain(["dropout"])
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
        .chain(MEMORY_FIELDS.iter().copied())
        .chain([
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
