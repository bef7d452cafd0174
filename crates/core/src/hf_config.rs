//! Reads a Hugging Face `config.json` (transformers 4 or 5 layout) into an
//! [`Architecture`].

use crate::arch::{ArchError, Architecture, Family};
use serde_json::{Map, Value};
use std::fmt;

/// Why a `config.json` could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not JSON, or not a JSON object.
    Json(String),
    /// Required fields are absent.
    Missing {
        model_type: String,
        fields: Vec<&'static str>,
    },
    /// A field is present but not a usable value.
    Invalid { field: &'static str, reason: String },
    /// The numbers do not make a model.
    Arch(ArchError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Json(e) => write!(f, "not a valid config.json: {e}"),
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

/// An imported architecture and the name the config gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    pub arch: Architecture,
    /// `model_type` as written.
    pub model_type: String,
    /// Set when the model type is not one vramfit knows: it is read as a
    /// generic (Llama-like) decoder.
    pub generic: bool,
}

/// Reads a `config.json` text.
pub fn parse(text: &str) -> Result<Imported, ConfigError> {
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
    let model_type = obj
        .get("model_type")
        .or_else(|| top.get("model_type"))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let arch = match model_type.as_str() {
        "gpt2" => gpt2(obj, &model_type)?,
        _ => llama_like(obj, &model_type)?,
    };
    arch.validate().map_err(ConfigError::Arch)?;
    let generic = arch.family == Family::Generic;
    Ok(Imported {
        arch,
        model_type,
        generic,
    })
}

/// A positive whole number that fits `u32`; `Ok(None)` when absent or null.
fn uint(obj: &Map<String, Value>, field: &'static str) -> Result<Option<u32>, ConfigError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| ConfigError::Invalid {
                field,
                reason: format!("must be a whole number up to {}, not {v}", u32::MAX),
            }),
    }
}

fn boolean(obj: &Map<String, Value>, field: &'static str) -> Result<Option<bool>, ConfigError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(ConfigError::Invalid {
            field,
            reason: format!("must be true or false, not {v}"),
        }),
    }
}

/// Reads required fields, reporting every missing one at once.
fn required<const N: usize>(
    obj: &Map<String, Value>,
    model_type: &str,
    fields: [&'static str; N],
) -> Result<[u32; N], ConfigError> {
    let mut out = [0; N];
    let mut missing = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        match uint(obj, f)? {
            Some(v) => out[i] = v,
            None => missing.push(*f),
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(ConfigError::Missing {
            model_type: model_type.to_string(),
            fields: missing,
        })
    }
}

/// GPT-2 (`GPT2Config`): `n_embd`, `n_layer`, `n_head`, `n_inner` (null:
/// 4 × n_embd), `n_positions`, `vocab_size`; tied by default.
fn gpt2(obj: &Map<String, Value>, model_type: &str) -> Result<Architecture, ConfigError> {
    let [hidden, layers, heads, vocab, positions] = required(
        obj,
        model_type,
        ["n_embd", "n_layer", "n_head", "vocab_size", "n_positions"],
    )?;
    let ffn = uint(obj, "n_inner")?.unwrap_or(hidden.saturating_mul(4));
    Ok(Architecture {
        family: Family::Gpt2,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden.checked_div(heads).unwrap_or(0),
        ffn,
        vocab,
        tied: boolean(obj, "tie_word_embeddings")?.unwrap_or(true),
        positions,
    })
}

/// Llama-like configs: `hidden_size`, `num_hidden_layers`,
/// `num_attention_heads`, `num_key_value_heads` (default: no GQA),
/// `head_dim` (default hidden / heads), `intermediate_size`, `vocab_size`,
/// `tie_word_embeddings` (each family's own default when absent).
fn llama_like(obj: &Map<String, Value>, model_type: &str) -> Result<Architecture, ConfigError> {
    let family = match model_type {
        "llama" => Family::Llama,
        "qwen2" => Family::Qwen2,
        "mistral" => Family::Mistral,
        "phi3" => Family::Phi3,
        "gemma" => Family::Gemma,
        _ => Family::Generic,
    };
    let [hidden, layers, heads, ffn, vocab] = required(
        obj,
        model_type,
        [
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "vocab_size",
        ],
    )?;
    let kv_heads = uint(obj, "num_key_value_heads")?.unwrap_or(heads);
    let head_dim = match uint(obj, "head_dim")? {
        Some(d) => d,
        // 0 stands for "does not divide"; validate() names it.
        None if heads > 0 && hidden % heads == 0 => hidden / heads,
        None => 0,
    };
    // transformers' defaults: Gemma ties; Llama, Qwen2, Mistral and Phi-3
    // configs default to untied; PretrainedConfig itself ties.
    let tied_default = matches!(family, Family::Gemma | Family::Generic);
    let tied = boolean(obj, "tie_word_embeddings")?.unwrap_or(tied_default);
    Ok(crate::presets::llama_like(
        family, hidden, layers, heads, kv_heads, head_dim, ffn, vocab, tied,
    ))
}
