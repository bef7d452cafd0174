//! A Hugging Face `config.json` as the query keys that describe it: the
//! model the importer reads (`crate::model::hf_config`) and the checkpoint's
//! facts a run reads (its dropout, the load-balancing loss it asks for, a
//! bitsandbytes quantization), written through the codec's own fields, so a
//! config never imports a value the codec would refuse.
//!
//! Between the model's importer and the codec: imports both and the
//! scenario; nothing of a workload's estimate.

use crate::model::hf_config::{self, quote, Bnb, ConfigError, ModelConfig, Reading};
use crate::model::{ArchNum, Architecture};
use crate::query::{self, Key};
use crate::text::ShortText;

/// An imported model: the query keys that describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    pub arch: Architecture,
    /// `model_type` as written (clipped).
    pub model_type: String,
    /// `family`, every architecture number, `tied`, and `dropout` when the
    /// config sets a dropout, as the codec writes them.
    pub keys: Vec<(Key, String)>,
    /// Read as Llama-like by choice: the `model_type` it really is.
    pub assumed: Option<ShortText>,
    /// What the estimate cannot show and the user should know of the file
    /// (transformers refusing it as written).
    pub notes: Vec<String>,
}

/// Reads a `config.json` text as its `model_type` says.
pub fn parse(text: &str) -> Result<Imported, ConfigError> {
    parse_as(text, Reading::AsItSays)
}

/// Reads a `config.json` text, as its `model_type` says or as Llama-like.
pub fn parse_as(text: &str, reading: Reading) -> Result<Imported, ConfigError> {
    let m = hf_config::read_as(text, reading)?;
    let a = m.arch;
    let mut keys = arch_keys(&a);
    if let Some((p, field)) = m.dropout {
        keys.push((Key::Dropout, dropout_text(p, field)?));
    }
    if m.router_logits {
        keys.push((Key::AuxLoss, "true".into()));
    }
    keys.extend(quantization_keys(&m));
    if m.multimodal {
        keys.push((Key::Multimodal, "true".into()));
    }
    let assumed = if m.read_as_llama {
        // As the codec keeps `like_llama` (trimmed), so the key reads back.
        ShortText::new(m.model_type.trim()).ok()
    } else {
        None
    };
    Ok(Imported {
        arch: a,
        model_type: m.model_type,
        keys,
        assumed,
        notes: m.refused_by_transformers.into_iter().collect(),
    })
}

/// `family`, every architecture number and `tied`, as the codec writes them.
fn arch_keys(a: &Architecture) -> Vec<(Key, String)> {
    let mut keys = vec![(Key::Family, a.family.key().to_string())];
    for &num in ArchNum::ALL {
        keys.push((Key::Arch(num), num.get(a).to_string()));
    }
    keys.push((Key::Tied, a.tied.to_string()));
    keys
}

/// A GGUF file's header read: the model it describes, as a `config.json`
/// import gives it, and the file's own keys (its file type, its name, its
/// bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufImport {
    pub model: Imported,
    pub file_keys: Vec<(Key, String)>,
}

/// Why a GGUF header gives no import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GgufImportError {
    /// Read at least this many bytes from the file's start, then again.
    NeedMore { at_least: u64 },
    /// Not read, and why.
    Refused(String),
}

/// Reads the first bytes of a GGUF file named `name` (`hf:repo/path`, or
/// a file's name on disk).
pub fn gguf(bytes: &[u8], name: &str) -> Result<GgufImport, GgufImportError> {
    use crate::infer::local::{FileName, ReadFile};
    use crate::model::gguf::{architecture_of, read_gguf, FileType, GgufError};
    let h = read_gguf(bytes).map_err(|e| match e {
        GgufError::NeedMore { at_least } => GgufImportError::NeedMore { at_least },
        other => GgufImportError::Refused(other.to_string()),
    })?;
    let refused = |why: String| GgufImportError::Refused(why);
    let a = architecture_of(&h).map_err(|e| refused(e.to_string()))?;
    if crate::model::gguf::nextn_cached(a.family) {
        // GLM-4.5's file carries its MTP layer as a block llama.cpp caches
        // (`Converter::nextn_cached`), which its estimate does not model.
        return Err(refused(format!(
            "a {} GGUF: llama.cpp keeps its multi-token-prediction block (blk.N.nextn) as a layer with a key/value cache, which vramfit does not model yet",
            a.family.label()
        )));
    }
    // The MTP blocks DeepSeek-V3.2's and GLM-5's converters append past
    // the layers llama.cpp does not load (but their `exp_probs_b.bias`,
    // `n_expert × 4` bytes, not counted).
    let mtp_skipped = crate::model::gguf::mtp_skipped(a.family).then_some(a.layers);
    let read = ReadFile::of_header(&h, mtp_skipped).map_err(|e| refused(e.to_string()))?;
    // llama.cpp creates `blk.0` to `blk.{block_count - 1}` and refuses a
    // file whose tensors are others (`llama_model::load_tensors`: a
    // missing tensor, or "wrong number of tensors").
    if read.layers() != a.layers {
        return Err(refused(format!(
            "the header's block_count is {} but its tensors are for {} layers: llama.cpp refuses such a file",
            a.layers,
            read.layers()
        )));
    }
    let name = FileName::new(name).map_err(refused)?;
    let described = h.model();
    let mut file_keys = Vec::new();
    let file_type = described.file_type.and_then(|id| u32::try_from(id).ok());
    if let Some(t) = file_type.and_then(FileType::from_id) {
        file_keys.push((Key::Weights, t.key().to_string()));
    }
    file_keys.push((Key::File, name.to_string()));
    file_keys.push((Key::FileBytes, read.to_string()));
    Ok(GgufImport {
        model: Imported {
            arch: a,
            model_type: quote(&described.architecture),
            keys: arch_keys(&a),
            assumed: None,
            notes: Vec::new(),
        },
        file_keys,
    })
}

/// A dropout probability as the `dropout` key's text: four decimals, as the
/// codec takes it, or why the codec refuses it.
fn dropout_text(p: f64, field: &'static str) -> Result<String, ConfigError> {
    let text = format!("{p:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    let text = if text.is_empty() { "0".into() } else { text };
    if let Some(f) = Key::Dropout.field() {
        f.validate(&text).map_err(|e| ConfigError::Invalid {
            field,
            reason: format!("(dropout) `{}` {e}", quote(&p.to_string())),
        })?;
    }
    Ok(text)
}

/// The keys that load a bitsandbytes checkpoint as it was saved.
fn quantization_keys(m: &ModelConfig) -> Vec<(Key, String)> {
    let mut keys = Vec::new();
    match m.quantization {
        None => {}
        Some(Bnb::FourBit {
            nf4,
            double_quant,
            compute_fp32,
        }) => {
            keys.push((Key::Quant, if nf4 { "nf4" } else { "fp4" }.to_string()));
            if double_quant {
                keys.push((Key::DoubleQuant, "true".into()));
            }
            if compute_fp32 {
                keys.push((Key::BnbCompute, "fp32".into()));
            }
        }
        Some(Bnb::Int8) => keys.push((Key::Quant, "int8".into())),
    }
    keys
}

impl Imported {
    /// The query keys that select this model: the preset it is exactly, or
    /// the first preset of its family (the default one otherwise) with every
    /// architecture key that differs from it, the config's dropout, and
    /// `like_llama` when it was read as Llama-like by choice. Applying them
    /// after removing the model's keys ([`query::model_keys`]) gives this model.
    pub fn changes(&self) -> Vec<(Key, String)> {
        let presets = crate::model::presets::PRESETS;
        let base = presets
            .iter()
            .find(|p| p.arch == self.arch)
            .or_else(|| presets.iter().find(|p| p.arch.family == self.arch.family))
            .unwrap_or_else(|| crate::model::presets::default_preset());
        let mut out = vec![(Key::Model, base.id.to_string())];
        for (k, v) in &self.keys {
            let same = k.field().is_some_and(|f| {
                let preset = crate::Scenario {
                    model: crate::scenario::ModelSpec::Preset {
                        id: base.id,
                        overrides: crate::model::ArchOverrides::default(),
                        like_llama: None,
                        hub: None,
                        multimodal: false,
                    },
                    arch: Some(base.arch),
                    ..crate::Scenario::default()
                };
                f.shown_value(&preset) == *v
            });
            if !same {
                out.push((*k, v.clone()));
            }
        }
        if let Some(t) = self.assumed {
            out.push((Key::LikeLlama, t.as_str().to_string()));
        }
        // A key left out because it equals the preset's can still differ
        // once others change (head_dim defaults to hidden / heads when
        // those are overridden): then every key is written.
        let decoded = |pairs: &[(Key, String)]| {
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
                out.push((Key::LikeLlama, t.as_str().to_string()));
            }
        }
        out
    }
}
