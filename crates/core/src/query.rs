//! The URL codec. Two stages, as in ripgrep's low/high-level arguments:
//! [`RawQuery`] keeps what was typed (decoded, unvalidated, in order), and
//! [`decode`] turns it into a validated [`Scenario`] plus the [`Notice`]s that
//! say what was ignored and why. [`encode`] writes the canonical query back.
//!
//! The page and the CLI share this module, so a link and a command line give
//! the same scenario.

use crate::model::family::Positions;
use crate::model::presets;
use crate::model::{ArchNum, Family};
use crate::scenario::{
    ArchOverrides, Attn, Batch, Capacity, Ckpt, Dtype, Gpus, GradAccum, HubId, Iters, Leak,
    LoraRank, ModelSpec, Offload, Optimizer, Overhead, Parallel, ParamCount, Prob, Quant, Scenario,
    SeqLen, ShortText, Training, View, ZeroStage,
};
use crate::train::Targets;
use crate::units::{Bytes, Decimal, DisplayUnit, NotCount, GIB};
use std::fmt;

/// Longest value accepted for any key; longer ones are rejected unread.
pub const MAX_VALUE_LEN: usize = 64;
/// Most key/value pairs read from one query string; the rest are ignored.
pub const MAX_PAIRS: usize = 64;

/// Query parameters exactly as given, percent-decoded, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawQuery {
    pairs: Vec<(String, String)>,
    /// Pairs dropped because the query had more than [`MAX_PAIRS`].
    dropped: usize,
}

impl RawQuery {
    /// Splits `a=1&b=2` (a leading `?` is allowed). `+` means a space.
    /// Never fails: undecodable bytes become U+FFFD.
    pub fn parse(query: &str) -> Self {
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut raw = RawQuery::default();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            if raw.pairs.len() == MAX_PAIRS {
                raw.dropped += 1;
                continue;
            }
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            raw.pairs.push((percent_decode(k), percent_decode(v)));
        }
        raw
    }

    /// The last value given for `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Replaces every value of `key` with one, keeping its first position.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.pairs.iter().position(|(k, _)| k == key) {
            Some(i) => {
                self.pairs[i].1 = value.to_string();
                let mut seen = false;
                self.pairs.retain(|(k, _)| {
                    let dup = k == key && seen;
                    seen |= k == key;
                    !dup
                });
            }
            None => self.pairs.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes `key` entirely.
    pub fn remove(&mut self, key: &str) {
        self.pairs.retain(|(k, _)| k != key);
    }

    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `k=v&k=v`, percent-encoded, without a leading `?`.
    pub fn to_query_string(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.pairs {
            if !out.is_empty() {
                out.push('&');
            }
            percent_encode_into(k, &mut out);
            out.push('=');
            percent_encode_into(v, &mut out);
        }
        out
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn percent_encode_into(s: &str, out: &mut String) {
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'~') {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
}

/// Why one value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    Empty,
    TooLong,
    NotANumber,
    NotWhole,
    /// A plain count written with a sign, decimals or an exponent.
    DigitsOnly,
    /// A count written with a sign (`+8`, `-0`).
    Signed,
    /// Text with control characters.
    ControlCharacters,
    TooSmall {
        min: String,
    },
    TooLarge {
        max: String,
    },
    UnknownChoice {
        choices: String,
    },
    /// The value is fine alone but not with the others (architecture rules).
    Conflict(String),
    /// Not a preset id.
    UnknownModel,
    /// Not a GPU id.
    UnknownGpu,
    /// Not `owner/name` as the Hugging Face Hub writes model ids.
    NotAHubId,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldError::Empty => f.write_str("is empty"),
            FieldError::TooLong => write!(f, "is longer than {MAX_VALUE_LEN} characters"),
            FieldError::NotANumber => f.write_str("is not a number"),
            FieldError::NotWhole => f.write_str("is not a whole number"),
            FieldError::DigitsOnly => {
                f.write_str("must be written in digits alone (no sign, decimals or exponent)")
            }
            FieldError::Signed => f.write_str("must be written without a sign"),
            FieldError::ControlCharacters => f.write_str("contains control characters"),
            FieldError::TooSmall { min } => write!(f, "must be at least {min}"),
            FieldError::TooLarge { max } => write!(f, "must be at most {max}"),
            FieldError::UnknownChoice { choices } => write!(f, "must be one of: {choices}"),
            FieldError::Conflict(why) => write!(f, "does not fit: {why}"),
            FieldError::UnknownGpu => {
                f.write_str("is not a GPU in the list: pick one, or choose custom and type its memory")
            }
            FieldError::NotAHubId => f.write_str(
                "is not a Hugging Face model id: write it as owner/name with letters, digits, `-`, `_` or `.` (e.g. Qwen/Qwen3-8B)",
            ),
            FieldError::UnknownModel => {
                f.write_str("is not a known model: pick one from the list, or change a preset's architecture fields")
            }
        }
    }
}

/// Something in the query that was not used as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A key vramfit does not know; ignored.
    UnknownKey { key: String },
    /// A known key with a refused value; the default is used instead.
    Invalid {
        key: &'static str,
        value: String,
        error: FieldError,
        default: String,
    },
    /// A key given more than once; the last value is used.
    Repeated { key: &'static str },
    /// More than [`MAX_PAIRS`] parameters; the rest were ignored.
    TooManyPairs { dropped: usize },
    /// `params` next to a model: the architecture decides N.
    ParamsIgnored { model: &'static str },
    /// A valid value that the other keys make irrelevant.
    Unused { key: &'static str, because: String },
    /// `hub` alone: the model's config.json has not been read, so no key
    /// says its architecture yet.
    HubNotLoaded { id: String },
}

impl Notice {
    /// The query key this notice belongs next to, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Notice::UnknownKey { key } => Some(key),
            Notice::Invalid { key, .. } | Notice::Repeated { key } | Notice::Unused { key, .. } => {
                Some(key)
            }
            Notice::ParamsIgnored { .. } => Some("params"),
            Notice::HubNotLoaded { .. } => Some("hub"),
            Notice::TooManyPairs { .. } => None,
        }
    }
}

/// Shortens and cleans a user value for echoing in a message.
fn echo(value: &str) -> String {
    crate::clip::clip(value, 24)
}

impl Notice {
    /// What the page did about it (the CLI refuses instead).
    pub fn consequence(&self) -> String {
        match self {
            Notice::UnknownKey { .. }
            | Notice::TooManyPairs { .. }
            | Notice::ParamsIgnored { .. }
            | Notice::Unused { .. } => "ignored".into(),
            Notice::Invalid { default, .. } if default.is_empty() => "ignored".into(),
            Notice::Invalid { default, .. } => format!("using the default {default}"),
            Notice::Repeated { .. } => "using the last".into(),
            Notice::HubNotLoaded { .. } => "showing the default model until it is".into(),
        }
    }
}

impl fmt::Display for Notice {
    /// The problem alone, e.g. "batch: `0` must be at least 1".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::UnknownKey { key } => write!(f, "unknown parameter `{}`", echo(key)),
            Notice::Invalid {
                key,
                error: FieldError::Empty,
                ..
            } => write!(f, "{key} is empty"),
            Notice::Invalid {
                key, value, error, ..
            } => write!(f, "{key}: `{}` {error}", echo(value)),
            Notice::Repeated { key } => write!(f, "{key} is given more than once"),
            Notice::TooManyPairs { dropped } => {
                write!(f, "more than {MAX_PAIRS} parameters ({dropped} more)")
            }
            Notice::Unused { key, because } => write!(f, "{key} is not used: {because}"),
            Notice::HubNotLoaded { id } => write!(
                f,
                "hub: the config.json of `{id}` is not loaded (the page loads it; the CLI reads it with --config FILE)"
            ),
            Notice::ParamsIgnored { model } => write!(
                f,
                "params is set by the architecture of model `{model}`; remove model to use params alone"
            ),
        }
    }
}

/// Something true of an accepted scenario that the numbers rest on: shown
/// next to its field, carried in the CLI's JSON; never a refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A config.json of an unknown family read as Llama-like, by choice.
    ReadAsLlama { model_type: String },
    /// A rotary model run past the context it was trained for: it runs
    /// (rope scaling), with the memory of the longer sequence.
    BeyondTrainedContext { seq: u32, positions: u32 },
}

impl Note {
    /// The query key it belongs next to.
    pub fn key(&self) -> &'static str {
        match self {
            Note::ReadAsLlama { .. } => "like_llama",
            Note::BeyondTrainedContext { .. } => "seq",
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::ReadAsLlama { model_type } => write!(
                f,
                "`{}` is not a family vramfit knows: it is estimated as a Llama-like decoder, \
                 as you chose; fields a Llama does not have are ignored",
                echo(model_type)
            ),
            Note::BeyondTrainedContext { seq, positions } => write!(
                f,
                "seq {seq} is longer than the {positions} tokens the model was trained for: \
                 it runs with rope scaling, at this sequence length's memory"
            ),
        }
    }
}

/// How a field is entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A whole number in `min..=max`, typed (a text box).
    Count { min: u64, max: u64 },
    /// A decimal number in `min..=max` (as typed), typed.
    Decimal {
        min: &'static str,
        max: &'static str,
    },
    /// One of a closed list: `(query value, label)`.
    Choice(&'static [(&'static str, &'static str)]),
    /// `true` / `false`.
    Toggle,
    /// A preset id (see [`crate::model::presets::PRESETS`]).
    Model,
    /// A GPU id (see [`crate::gpus::GPUS`]), `custom` or `probe`.
    Gpu,
    /// Free text (short).
    Text,
}

/// Which part of the form a field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Model,
    Architecture,
    Run,
    Parallel,
    Overhead,
    /// The GPU to fit on.
    Fit,
    /// Display and the over-iterations chart.
    View,
}

/// Everything the query sets, before the model is resolved and checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct Draft {
    pub model: Option<&'static str>,
    pub params: Option<ParamCount>,
    pub overrides: ArchOverrides,
    pub train: Training,
    pub parallel: Parallel,
    pub overhead: Overhead,
    pub view: View,
    /// `gpu=custom` / `gpu=probe` wait for their sizes.
    pub capacity_typed: Option<Bytes>,
    pub probe_bytes: Option<Bytes>,
    pub probe_adapter: Option<ShortText>,
    pub gpu: Option<GpuKey>,
    /// `like_llama`: the model_type of a config read as Llama-like.
    pub like_llama: Option<ShortText>,
    /// `hub`: the model id whose config.json set the architecture.
    pub hub: Option<HubId>,
}

/// The `gpu` key: a listed GPU, or where the size comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKey {
    Listed(&'static str),
    Custom,
    Probe,
}

/// One query key: how to read it into a draft and write it back.
pub struct Field {
    pub key: &'static str,
    pub kind: FieldKind,
    pub group: Group,
    /// Form label.
    pub label: &'static str,
    /// One plain-words sentence for tooltips and `--help`.
    pub help: &'static str,
    apply: fn(&mut Draft, &str) -> Result<(), FieldError>,
    /// The canonical text for a scenario; `None` leaves the key out.
    write: fn(&Scenario) -> Option<String>,
    /// What a left-out key means for a scenario (architecture numbers show
    /// the resolved architecture; the others their default).
    implied: fn(&Scenario) -> String,
}

impl Field {
    /// Checks one value on its own, as the form does while the user types.
    pub fn validate(&self, value: &str) -> Result<(), FieldError> {
        (self.apply)(&mut Draft::default(), value)
    }

    /// The canonical text of this field for `s` (`None`: left out).
    pub fn value_of(&self, s: &Scenario) -> Option<String> {
        (self.write)(s)
    }

    /// The text the form shows for `s`: the canonical value, or what the
    /// scenario implies when the key is left out.
    pub fn shown_value(&self, s: &Scenario) -> String {
        self.value_of(s).unwrap_or_else(|| (self.implied)(s))
    }
}

/// Architecture fields only: written when they differ from the preset.
fn arch_override(s: &Scenario, get: fn(&ArchOverrides) -> Option<String>) -> Option<String> {
    match &s.model {
        ModelSpec::Preset { overrides, .. } => get(overrides),
        ModelSpec::ParamsOnly { .. } => None,
    }
}

macro_rules! arch_number {
    ($num:expr) => {
        Field {
            key: $num.key(),
            kind: FieldKind::Count {
                min: $num.min() as u64,
                max: $num.max() as u64,
            },
            group: Group::Architecture,
            label: $num.label(),
            help: $num.help(),
            implied: |s| s.arch.map(|a| $num.get(&a).to_string()).unwrap_or_default(),
            apply: |d, v| {
                d.overrides
                    .set($num, Some(count(v, $num.min(), $num.max(), Some)?));
                Ok(())
            },
            write: |s| arch_override(s, |o| o.get($num).map(|n| n.to_string())),
        }
    };
}

/// Every key the codec knows, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        key: "model",
        kind: FieldKind::Model,
        group: Group::Model,
        label: "Model",
        help: "A preset model; architecture fields below change it.",
        implied: |_| String::new(),
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(FieldError::Empty);
            }
            let p = presets::preset(&v.to_ascii_lowercase()).ok_or(FieldError::UnknownModel)?;
            d.model = Some(p.id);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset { id, .. } => Some(id.to_string()),
            ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: "params",
        kind: FieldKind::Count { min: ParamCount::MIN, max: ParamCount::MAX },
        group: Group::Model,
        label: "Parameters (N)",
        help: "Parameter count alone (seed formula only), e.g. 1.5e9, 1.5B or 124M.",
        implied: |s| s.params().to_string(),
        apply: |d, v| {
            let n = parse_count(v, true, ParamCount::MIN, ParamCount::MAX)?;
            d.params = Some(ParamCount::new(n).ok_or(FieldError::NotANumber)?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::ParamsOnly { params } => Some(params.get().to_string()),
            ModelSpec::Preset { .. } => None,
        },
    },
    Field {
        key: "like_llama",
        kind: FieldKind::Text,
        group: Group::Model,
        label: "Read as Llama-like",
        help: "The model_type of a config.json vramfit does not know, estimated as a Llama-like decoder by your choice.",
        implied: |_| String::new(),
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(FieldError::Empty);
            }
            d.like_llama = Some(ShortText::new(v)?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset {
                like_llama: Some(t),
                ..
            } => Some(t.as_str().to_string()),
            ModelSpec::Preset { .. } | ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: "hub",
        kind: FieldKind::Text,
        group: Group::Model,
        label: "Hugging Face model id",
        help: "A model id on the Hugging Face Hub (owner/name): the page loads its config.json and the link reloads it; the CLI reads it from --config.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.hub = Some(HubId::new(v.trim())?);
            Ok(())
        },
        write: |s| match s.model {
            ModelSpec::Preset { hub: Some(h), .. } => Some(h.as_str().to_string()),
            ModelSpec::Preset { .. } | ModelSpec::ParamsOnly { .. } => None,
        },
    },
    Field {
        key: "family",
        kind: FieldKind::Choice(Family::OPTIONS),
        group: Group::Architecture,
        label: "Family",
        help: "How the layers are built (norms, MLP, biases, positions).",
        implied: |s| s.arch.map(|a| a.family.key().to_string()).unwrap_or_default(),
        apply: |d, v| {
            d.overrides.family = Some(choice(v, Family::from_key, Family::keys_joined)?);
            Ok(())
        },
        write: |s| arch_override(s, |o| o.family.map(|f| f.key().to_string())),
    },
    arch_number!(ArchNum::Hidden),
    arch_number!(ArchNum::Layers),
    arch_number!(ArchNum::Heads),
    arch_number!(ArchNum::KvHeads),
    arch_number!(ArchNum::HeadDim),
    arch_number!(ArchNum::Ffn),
    arch_number!(ArchNum::Vocab),
    Field {
        key: "tied",
        kind: FieldKind::Toggle,
        group: Group::Architecture,
        label: "Tied embeddings",
        help: "The output head shares the input embedding matrix.",
        implied: |s| s.arch.map(|a| a.tied.to_string()).unwrap_or_default(),
        apply: |d, v| {
            d.overrides.tied = Some(boolean(v)?);
            Ok(())
        },
        write: |s| arch_override(s, |o| o.tied.map(|t| t.to_string())),
    },
    arch_number!(ArchNum::Positions),
    arch_number!(ArchNum::Experts),
    arch_number!(ArchNum::ExpertsPerToken),
    arch_number!(ArchNum::MoeFfn),
    arch_number!(ArchNum::SharedExperts),
    arch_number!(ArchNum::DenseLayers),
    arch_number!(ArchNum::QLoraRank),
    arch_number!(ArchNum::KvLoraRank),
    arch_number!(ArchNum::RopeDim),
    arch_number!(ArchNum::VHeadDim),
    arch_number!(ArchNum::SlidingWindow),
    arch_number!(ArchNum::SlidingLayers),
    Field {
        key: "dtype",
        kind: FieldKind::Choice(Dtype::OPTIONS),
        group: Group::Run,
        label: "Precision",
        help: "How weights, gradients and optimizer state are stored, and what forward computes in.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.dtype = choice(v, Dtype::from_key, Dtype::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.train.dtype.key().to_string()),
    },
    Field {
        key: "optim",
        kind: FieldKind::Choice(Optimizer::OPTIONS),
        group: Group::Run,
        label: "Optimizer",
        help: "The optimizer and its implementation: it decides the state and the step's temporaries.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.optim = choice(v, Optimizer::from_key, Optimizer::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.train.optim.key().to_string()),
    },
    Field {
        key: "batch",
        kind: FieldKind::Count { min: Batch::MIN as u64, max: Batch::MAX as u64 },
        group: Group::Run,
        label: "Batch size",
        help: "Sequences in one forward/backward pass, per GPU and micro-step.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.batch = count(v, Batch::MIN, Batch::MAX, Batch::new)?;
            Ok(())
        },
        write: |s| Some(s.train.batch.get().to_string()),
    },
    Field {
        key: "seq",
        kind: FieldKind::Count { min: SeqLen::MIN as u64, max: SeqLen::MAX as u64 },
        group: Group::Run,
        label: "Sequence length",
        help: "Tokens per sequence.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.seq = count(v, SeqLen::MIN, SeqLen::MAX, SeqLen::new)?;
            Ok(())
        },
        write: |s| Some(s.train.seq.get().to_string()),
    },
    Field {
        key: "grad_accum",
        kind: FieldKind::Count { min: GradAccum::MIN as u64, max: GradAccum::MAX as u64 },
        group: Group::Run,
        label: "Gradient accumulation",
        help: "Micro-batches summed before each optimizer step (gradients stay alive between them).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.grad_accum = count(v, GradAccum::MIN, GradAccum::MAX, GradAccum::new)?;
            Ok(())
        },
        write: |s| Some(s.train.grad_accum.get().to_string()),
    },
    Field {
        key: "grad_ckpt",
        kind: FieldKind::Choice(Ckpt::OPTIONS),
        group: Group::Run,
        label: "Gradient checkpointing",
        help: "Keep only each layer's input and recompute the layer in backward (true: non-reentrant, the HF Trainer's default; reentrant: what prepare_model_for_kbit_training selects unless told otherwise); offload keeps those inputs in host memory.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.grad_ckpt = match v.trim().to_ascii_lowercase().as_str() {
                "offload" => Ckpt::Offload,
                "reentrant" => Ckpt::Reentrant,
                _ => {
                    if boolean(v).map_err(|_| FieldError::UnknownChoice {
                        choices: Ckpt::keys_joined(),
                    })? {
                        Ckpt::On
                    } else {
                        Ckpt::Off
                    }
                }
            };
            Ok(())
        },
        write: |s| Some(s.train.grad_ckpt.key().to_string()),
    },
    Field {
        key: "attn",
        kind: FieldKind::Choice(Attn::OPTIONS),
        group: Group::Run,
        label: "Attention",
        help: "SDPA (flash / memory-efficient) or eager attention, which stores seq² scores.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.attn = choice(v, Attn::from_key, Attn::keys_joined)?;
            Ok(())
        },
        write: |s| Some(s.train.attn.key().to_string()),
    },
    Field {
        key: "lora_r",
        kind: FieldKind::Count { min: 0, max: LoraRank::MAX as u64 },
        group: Group::Run,
        label: "LoRA rank",
        help: "LoRA adapters of this rank on every linear layer (0: full fine-tuning).",
        implied: |_| String::new(),
        apply: |d, v| {
            let r = count(v, 0, LoraRank::MAX, Some)?;
            d.train.lora_r = LoraRank::new(r);
            Ok(())
        },
        write: |s| Some(s.train.lora_r.map_or(0, LoraRank::get).to_string()),
    },
    Field {
        key: "lora_targets",
        kind: FieldKind::Text,
        group: Group::Run,
        label: "LoRA targets",
        help: "Which modules get adapters: all (every linear layer but the head, peft's all-linear), attn (q, k, v, o), or a list of projections (q,v or gate,up,down) or of the model's module names as in peft's target_modules (q_proj,v_proj; qkv_proj; c_attn).",
        implied: |_| "all".into(),
        apply: |d, v| {
            d.train.lora_targets = Targets::parse(v).map_err(|word| FieldError::UnknownChoice {
                choices: format!(
                    "all, attn, or a comma list of q, k, v, o, gate, up, down or module names such as q_proj (`{}` is neither)",
                    echo(&word)
                ),
            })?;
            Ok(())
        },
        write: |s| (s.train.lora_targets != Targets::ALL).then(|| s.train.lora_targets.text()),
    },
    Field {
        key: "lora_dropout",
        kind: FieldKind::Decimal {
            min: "0",
            max: "0.9999",
        },
        group: Group::Run,
        label: "LoRA dropout",
        help: "peft's lora_dropout before each adapter: a mask and a dropped copy of the input are kept for backward.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.train.lora_dropout = probability(v)?;
            Ok(())
        },
        write: |s| (s.train.lora_dropout.get() > 0).then(|| format_prob(s.train.lora_dropout)),
    },
    Field {
        key: "dora",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "DoRA",
        help: "peft's use_dora: weight-decomposed LoRA, which also computes the norm of each adapted weight with its update in every forward.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.dora = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.dora.then(|| "true".to_string()),
    },
    Field {
        key: "quant",
        kind: FieldKind::Choice(Quant::OPTIONS),
        group: Group::Run,
        label: "Quantized base",
        help: "The frozen base's linear weights quantized by bitsandbytes (load_in_4bit / load_in_8bit): nf4 or fp4 in blocks of 64 (QLoRA), or int8. Needs LoRA.",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.train.quant = choice(v, Quant::from_key, Quant::keys_joined)?;
            Ok(())
        },
        write: |s| (s.train.quant != Quant::None).then(|| s.train.quant.key().to_string()),
    },
    Field {
        key: "double_quant",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "Double quantization",
        help: "bnb_4bit_use_double_quant: the 4-bit blocks' fp32 scales quantized again to 8 bits (QLoRA's recipe; off in BitsAndBytesConfig by default).",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.double_quant = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.double_quant.then(|| "true".to_string()),
    },
    Field {
        key: "bnb_compute",
        kind: FieldKind::Choice(&[
            ("bf16", "bf16 (QLoRA recipes)"),
            ("fp32", "fp32 (BitsAndBytesConfig's default)"),
        ]),
        group: Group::Run,
        label: "4-bit compute dtype",
        help: "bnb_4bit_compute_dtype: the dtype 4-bit weights are dequantized to for each matmul. QLoRA recipes set bf16; BitsAndBytesConfig's default is fp32.",
        implied: |_| "bf16".into(),
        apply: |d, v| {
            d.train.compute_fp32 = match v.trim().to_ascii_lowercase().as_str() {
                "bf16" | "bfloat16" => false,
                "fp32" | "float32" => true,
                _ => {
                    return Err(FieldError::UnknownChoice {
                        choices: "bf16, fp32".into(),
                    })
                }
            };
            Ok(())
        },
        write: |s| s.train.compute_fp32.then(|| "fp32".to_string()),
    },
    Field {
        key: "kbit_prep",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "prepare_model_for_kbit_training",
        help: "peft's prepare_model_for_kbit_training, which TRL's SFTTrainer and most QLoRA scripts call: the weights left unquantized (embeddings, head, norms) are upcast to fp32.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.train.kbit_prep = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.train.kbit_prep).then(|| "false".to_string()),
    },
    Field {
        key: "keep_outputs",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "Keep outputs through backward",
        help: "`out = model(x); out.loss.backward()` keeps the logits alive until backward ends.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.keep_outputs = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.keep_outputs.then(|| "true".to_string()),
    },
    Field {
        key: "aux_loss",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "MoE auxiliary loss",
        help: "A mixture-of-experts model's load-balancing loss (transformers' output_router_logits): every MoE layer's router logits (tokens × experts) are kept for it through the loss.",
        implied: |_| "false".into(),
        apply: |d, v| {
            d.train.aux_loss = boolean(v)?;
            Ok(())
        },
        write: |s| s.train.aux_loss.then(|| "true".to_string()),
    },
    Field {
        key: "dropout",
        kind: FieldKind::Decimal { min: "0", max: "0.9999" },
        group: Group::Run,
        label: "Dropout",
        help: "Dropout probability replacing the model's own (GPT-2 uses 0.1, Llama-like 0).",
        implied: |_| String::new(),
        apply: |d, v| {
            d.train.dropout = Some(probability(v)?);
            Ok(())
        },
        write: |s| s.train.dropout.map(format_prob),
    },
    Field {
        key: "cuda_like",
        kind: FieldKind::Toggle,
        group: Group::Run,
        label: "CUDA kernels",
        help: "CUDA's kernels (1-byte dropout masks, fused SDPA with dropout); false models PyTorch's CPU kernels.",
        implied: |_| "true".into(),
        apply: |d, v| {
            d.train.cuda_like = boolean(v)?;
            Ok(())
        },
        write: |s| (!s.train.cuda_like).then(|| "false".to_string()),
    },
    Field {
        key: "gpus",
        kind: FieldKind::Count { min: Gpus::MIN as u64, max: Gpus::MAX as u64 },
        group: Group::Parallel,
        label: "GPUs (data parallel)",
        help: "Data-parallel GPUs; the estimate is per GPU.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.parallel.gpus = count(v, Gpus::MIN, Gpus::MAX, Gpus::new)?;
            Ok(())
        },
        write: |s| Some(s.parallel.gpus.get().to_string()),
    },
    Field {
        key: "zero",
        kind: FieldKind::Choice(&[
            ("0", "0: none (DDP)"),
            ("1", "1: optimizer state"),
            ("2", "2: + gradients (FSDP SHARD_GRAD_OP)"),
            ("3", "3: + parameters (FSDP FULL_SHARD)"),
        ]),
        group: Group::Parallel,
        label: "ZeRO stage",
        help: "What is partitioned across the GPUs.",
        implied: |_| String::new(),
        apply: |d, v| {
            let z = count(v, 0, 3, |n| u8::try_from(n).ok())?;
            d.parallel.zero = ZeroStage::new(z).ok_or(FieldError::NotANumber)?;
            Ok(())
        },
        write: |s| Some(s.parallel.zero.get().to_string()),
    },
    Field {
        key: "offload",
        kind: FieldKind::Choice(Offload::OPTIONS),
        group: Group::Parallel,
        label: "Offload to host memory",
        help: "ZeRO-Offload / FSDP CPU offload: the optimizer (fp32 master weights, gradients, state; the step runs on the CPU), or the parameters too (ZeRO-3). Needs ZeRO.",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.parallel.offload = choice(v, Offload::from_key, Offload::keys_joined)?;
            Ok(())
        },
        write: |s| (s.parallel.offload != Offload::None).then(|| s.parallel.offload.key().to_string()),
    },
    Field {
        key: "ctx_mib",
        kind: FieldKind::Count { min: 0, max: 65_536 },
        group: Group::Overhead,
        label: "CUDA context (MiB)",
        help: "Memory the CUDA context and kernels take before any tensor (not in allocated bytes).",
        implied: |_| Overhead::default().cuda_ctx_mib.to_string(),
        apply: |d, v| {
            d.overhead.cuda_ctx_mib = count(v, 0, 65_536, Some)?;
            Ok(())
        },
        write: |s| (s.overhead.cuda_ctx_mib != Overhead::default().cuda_ctx_mib)
            .then(|| s.overhead.cuda_ctx_mib.to_string()),
    },
    Field {
        key: "reserve_pct",
        kind: FieldKind::Count { min: 0, max: 100 },
        group: Group::Overhead,
        label: "Allocator reserve (%)",
        help: "What PyTorch's caching allocator holds above the live tensors at the peak, in percent.",
        implied: |_| Overhead::default().reserve_pct.to_string(),
        apply: |d, v| {
            d.overhead.reserve_pct = count(v, 0, 100, |n| u8::try_from(n).ok())?;
            Ok(())
        },
        write: |s| (s.overhead.reserve_pct != Overhead::default().reserve_pct)
            .then(|| s.overhead.reserve_pct.to_string()),
    },
    Field {
        key: "gpu",
        kind: FieldKind::Gpu,
        group: Group::Fit,
        label: "GPU",
        help: "The GPU to fit on; custom: type its memory; probe: use what this browser measured.",
        implied: |s| match s.view.capacity {
            Capacity::Gpu { id } => id.to_string(),
            Capacity::Typed { .. } => "custom".into(),
            Capacity::Probed { .. } => "probe".into(),
        },
        apply: |d, v| {
            let v = v.trim().to_ascii_lowercase();
            d.gpu = Some(match v.as_str() {
                "" => return Err(FieldError::Empty),
                "custom" => GpuKey::Custom,
                "probe" => GpuKey::Probe,
                id => GpuKey::Listed(crate::gpus::gpu(id).ok_or(FieldError::UnknownGpu)?.id),
            });
            Ok(())
        },
        write: |s| match s.view.capacity {
            c if c == View::default().capacity => None,
            Capacity::Gpu { id } => Some(id.to_string()),
            Capacity::Typed { .. } => Some("custom".into()),
            Capacity::Probed { .. } => Some("probe".into()),
        },
    },
    Field {
        key: "capacity_gib",
        kind: FieldKind::Decimal { min: "0.001", max: "65536" },
        group: Group::Fit,
        label: "GPU memory (GiB)",
        help: "Your GPU's memory in GiB (2^30 bytes), as nvidia-smi shows it; decimals allowed.",
        implied: |s| format_gib(s.view.capacity.bytes()),
        apply: |d, v| {
            d.capacity_typed = Some(gib_value(v)?);
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Typed { bytes } => Some(format_gib(bytes)),
            _ => None,
        },
    },
    Field {
        key: "probe_bytes",
        kind: FieldKind::Count { min: 1, max: 1 << 50 },
        group: Group::Fit,
        label: "Measured (bytes)",
        help: "What the in-page probe could allocate: a lower bound of the GPU's memory.",
        implied: |_| String::new(),
        apply: |d, v| {
            let n = parse_count(v, false, 1, 1 << 50)?;
            d.probe_bytes = Some(Bytes(n));
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Probed { bytes, .. } => Some(bytes.get().to_string()),
            _ => None,
        },
    },
    Field {
        key: "probe_adapter",
        kind: FieldKind::Text,
        group: Group::Fit,
        label: "Measured on",
        help: "The adapter the probe ran on.",
        implied: |_| String::new(),
        apply: |d, v| {
            d.probe_adapter = Some(ShortText::new(v)?);
            Ok(())
        },
        write: |s| match s.view.capacity {
            Capacity::Probed { adapter, .. } if !adapter.as_str().is_empty() => Some(adapter.as_str().to_string()),
            _ => None,
        },
    },
    Field {
        key: "unit",
        kind: FieldKind::Choice(&[("gib", "GiB (2^30 bytes)"), ("gb", "GB (10^9 bytes)")]),
        group: Group::View,
        label: "Units",
        help: "GiB as nvidia-smi and PyTorch count, or GB as GPU boxes are labelled.",
        implied: |_| "gib".into(),
        apply: |d, v| {
            d.view.unit = match v.trim().to_ascii_lowercase().as_str() {
                "" => return Err(FieldError::Empty),
                "gib" => DisplayUnit::Gib,
                "gb" => DisplayUnit::Gb,
                _ => return Err(FieldError::UnknownChoice { choices: "gib, gb".into() }),
            };
            Ok(())
        },
        write: |s| (s.view.unit == DisplayUnit::Gb).then(|| "gb".to_string()),
    },
    Field {
        key: "iters",
        kind: FieldKind::Count { min: Iters::MIN as u64, max: Iters::MAX as u64 },
        group: Group::View,
        label: "Steps shown",
        help: "Training steps drawn in the memory-over-steps chart.",
        implied: |_| View::default().iters.get().to_string(),
        apply: |d, v| {
            d.view.iters = count(v, Iters::MIN, Iters::MAX, Iters::new)?;
            Ok(())
        },
        write: |s| (s.view.iters != View::default().iters).then(|| s.view.iters.get().to_string()),
    },
    Field {
        key: "leak",
        kind: FieldKind::Choice(Leak::OPTIONS),
        group: Group::View,
        label: "Leak",
        help: "Memory the loop keeps every step by mistake, e.g. appending the outputs to a list.",
        implied: |_| "none".into(),
        apply: |d, v| {
            d.view.leak = choice(v, Leak::from_key, Leak::keys_joined)?;
            Ok(())
        },
        write: |s| (s.view.leak != Leak::None).then(|| s.view.leak.key().to_string()),
    },
    Field {
        key: "leak_mib",
        kind: FieldKind::Count { min: 0, max: 1 << 24 },
        group: Group::View,
        label: "Leak per step (MiB)",
        help: "MiB kept every step when the leak is custom.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.view.leak_mib = count(v, 0, 1 << 24, Some)?;
            Ok(())
        },
        write: |s| (s.view.leak_mib != 0).then(|| s.view.leak_mib.to_string()),
    },
    Field {
        key: "dataset_mib",
        kind: FieldKind::Count { min: 0, max: 1 << 24 },
        group: Group::View,
        label: "Data on the GPU (MiB)",
        help: "A dataset or other tensors put on the GPU once; counted in every phase.",
        implied: |_| "0".into(),
        apply: |d, v| {
            d.view.dataset_mib = count(v, 0, 1 << 24, Some)?;
            Ok(())
        },
        write: |s| (s.view.dataset_mib != 0).then(|| s.view.dataset_mib.to_string()),
    },
];

/// The field for `key`.
pub fn field(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

/// A plain count (no suffixes) in `min..=max`, converted by `new`.
fn count<T>(v: &str, min: u32, max: u32, new: fn(u32) -> Option<T>) -> Result<T, FieldError> {
    let n = parse_count(v, false, min.into(), max.into())?;
    u32::try_from(n)
        .ok()
        .and_then(new)
        .ok_or(FieldError::NotANumber)
}

fn choice<T>(v: &str, from: fn(&str) -> Option<T>, all: fn() -> String) -> Result<T, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    from(&v.to_ascii_lowercase()).ok_or_else(|| FieldError::UnknownChoice { choices: all() })
}

/// `true`/`false`, also `1`/`0`, `yes`/`no`, `on`/`off`.
fn boolean(v: &str) -> Result<bool, FieldError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" => Err(FieldError::Empty),
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(FieldError::UnknownChoice {
            choices: "true, false".into(),
        }),
    }
}

/// A probability in [0, 1) with at most four decimals, as ten-thousandths.
fn probability(v: &str) -> Result<Prob, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if !int.bytes().all(|c| c.is_ascii_digit()) || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return Err(FieldError::NotANumber);
    }
    if frac.len() > 4 {
        return Err(FieldError::Conflict("use at most 4 decimals".into()));
    }
    let int: u32 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| FieldError::TooLarge {
            max: "0.9999".into(),
        })?
    };
    let frac_n: u32 = format!("{frac:0<4}").parse().unwrap_or(0);
    let n = int.saturating_mul(10_000).saturating_add(frac_n);
    u16::try_from(n)
        .ok()
        .and_then(Prob::new)
        .ok_or(FieldError::TooLarge {
            max: "0.9999".into(),
        })
}

/// GiB with up to three decimals (`23.5`), as exact bytes (rounded to
/// whole bytes).
fn gib_value(v: &str) -> Result<Bytes, FieldError> {
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return Err(FieldError::NotANumber);
    }
    if frac.len() > 3 {
        return Err(FieldError::Conflict("use at most 3 decimals".into()));
    }
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| FieldError::TooLarge {
            max: "65536".into(),
        })?
    };
    let milli = whole
        .saturating_mul(1000)
        .saturating_add(format!("{frac:0<3}").parse::<u64>().unwrap_or(0));
    if milli == 0 {
        return Err(FieldError::TooSmall {
            min: "0.001".into(),
        });
    }
    if milli > 65_536_000 {
        return Err(FieldError::TooLarge {
            max: "65536".into(),
        });
    }
    Ok(Bytes(milli * GIB / 1000))
}

/// Bytes as GiB with at most three decimals, trailing zeros dropped.
fn format_gib(b: Bytes) -> String {
    let milli = (u128::from(b.get()) * 1000 + u128::from(GIB) / 2) / u128::from(GIB);
    let s = format!("{}.{:03}", milli / 1000, milli % 1000);
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// `1000` → `0.1`.
fn format_prob(p: Prob) -> String {
    let s = format!("{}.{:04}", p.get() / 10_000, p.get() % 10_000);
    let s = s.trim_end_matches('0');
    s.strip_suffix('.')
        .map(|i| i.to_string())
        .unwrap_or_else(|| s.to_string())
}

/// Reads a whole count in `min..=max`.
///
/// Plain counts (`suffixes == false`: batch, seq, layers, ...) are digits
/// only: `8`, `2048`. A sign, decimals or an exponent are refused with a
/// reason (`+8`, `-0`, `2.048e3`), never read silently. Parameter counts
/// (`suffixes == true`) also take `1.5e9` and `124M`, `1.5B`, `7b`, `2T`
/// (k/M/B/T = 10^3/10^6/10^9/10^12), still without a sign.
pub fn parse_count(v: &str, suffixes: bool, min: u64, max: u64) -> Result<u64, FieldError> {
    let too_small = || FieldError::TooSmall {
        min: min.to_string(),
    };
    let too_large = || FieldError::TooLarge {
        max: max.to_string(),
    };
    let v = v.trim();
    if v.is_empty() {
        return Err(FieldError::Empty);
    }
    if v.len() > MAX_VALUE_LEN {
        return Err(FieldError::TooLong);
    }
    let n = if v.bytes().all(|c| c.is_ascii_digit()) {
        v.parse::<u64>().map_err(|_| too_large())?
    } else {
        let (num, shift) = match v.char_indices().last() {
            Some((i, c)) if suffixes && c.is_ascii_alphabetic() => {
                let shift = match c.to_ascii_lowercase() {
                    'k' => 3,
                    'm' => 6,
                    'b' | 'g' => 9,
                    't' => 12,
                    _ => return Err(FieldError::NotANumber),
                };
                (&v[..i], shift)
            }
            _ => (v, 0),
        };
        // Plain decimal syntax only (no "inf", "nan" or hex), read exactly.
        let x = Decimal::parse(num).ok_or(FieldError::NotANumber)?;
        if x.negative && !x.is_zero() {
            return Err(too_small());
        }
        let n = x.count(shift).map_err(|e| match e {
            NotCount::NotWhole => FieldError::NotWhole,
            NotCount::TooLarge => too_large(),
        });
        if matches!(n, Err(FieldError::NotWhole)) {
            return n;
        }
        if num.starts_with(['+', '-']) {
            // `+8`, `-0`: a sign on a count is a typo, not a value.
            return Err(FieldError::Signed);
        }
        if !suffixes {
            return Err(FieldError::DigitsOnly);
        }
        n?
    };
    if n < min {
        Err(too_small())
    } else if n > max {
        Err(too_large())
    } else {
        Ok(n)
    }
}

/// A validated scenario and what was ignored on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub scenario: Scenario,
    pub notices: Vec<Notice>,
    /// What the numbers rest on that the user should know (nothing refused).
    pub notes: Vec<Note>,
}

/// Lenient decoding, for the page: bad values fall back to the defaults and
/// each one becomes a [`Notice`]. Never fails.
pub fn decode(raw: &RawQuery) -> Decoded {
    let mut draft = Draft::default();
    let mut notices = Vec::new();
    let mut seen: Vec<&'static str> = Vec::new();
    let mut texts: Vec<(&'static str, &str)> = Vec::new();
    for (k, v) in raw.pairs() {
        let Some(f) = field(k) else {
            notices.push(Notice::UnknownKey { key: k.to_string() });
            continue;
        };
        if seen.contains(&f.key) {
            if !notices.contains(&Notice::Repeated { key: f.key }) {
                notices.push(Notice::Repeated { key: f.key });
            }
        } else {
            seen.push(f.key);
        }
        let before = draft;
        match (f.apply)(&mut draft, v) {
            Ok(()) => texts.push((f.key, v)),
            Err(error) => {
                draft = before;
                notices.push(Notice::Invalid {
                    key: f.key,
                    value: v.to_string(),
                    error,
                    default: f.shown_value(&Scenario::default()),
                });
            }
        }
    }
    if raw.dropped > 0 {
        notices.push(Notice::TooManyPairs {
            dropped: raw.dropped,
        });
    }
    let mut scenario = resolve(draft, &texts, &mut notices);
    check_quant(&mut scenario, &texts, &mut notices);
    check_lora(&mut scenario, &texts, &mut notices);
    check_model_keys(&mut scenario, &mut notices);
    check_offload(&mut scenario, &texts, &mut notices);
    let notes = check_sequence(&mut scenario, &texts, &mut notices);
    Decoded {
        scenario,
        notices,
        notes,
    }
}

/// LoRA's keys against the run and the model: without adapters they are
/// unused (said, and reset); targets must be modules the family has, whole
/// (peft adapts modules, and refuses names it does not find).
fn check_lora(s: &mut Scenario, texts: &[(&'static str, &str)], notices: &mut Vec<Notice>) {
    let default = Training::default();
    let t = &mut s.train;
    if t.lora_r.is_none() {
        let because = || "lora_r is 0: full fine-tuning has no adapters".to_string();
        if t.lora_targets != default.lora_targets {
            notices.push(Notice::Unused {
                key: "lora_targets",
                because: because(),
            });
            t.lora_targets = default.lora_targets;
        }
        if t.lora_dropout != default.lora_dropout {
            notices.push(Notice::Unused {
                key: "lora_dropout",
                because: because(),
            });
            t.lora_dropout = default.lora_dropout;
        }
        if t.dora {
            notices.push(Notice::Unused {
                key: "dora",
                because: because(),
            });
            t.dora = false;
        }
        return;
    }
    let Some(a) = s.arch else {
        return;
    };
    check_misfit(t, &a, texts, notices);
}

/// The value the query gave for `key` (for a message), or the scenario's.
fn given(texts: &[(&'static str, &str)], key: &str, otherwise: impl FnOnce() -> String) -> String {
    texts
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map_or_else(otherwise, |(_, v)| v.to_string())
}

/// A refusal of `key`'s value because of the others: said next to the
/// field, and the key's default used.
fn conflict(
    notices: &mut Vec<Notice>,
    texts: &[(&'static str, &str)],
    key: &'static str,
    why: String,
) {
    let default = field(key)
        .map(|f| f.shown_value(&Scenario::default()))
        .unwrap_or_default();
    notices.push(Notice::Invalid {
        key,
        value: given(texts, key, || default.clone()),
        error: FieldError::Conflict(why),
        default,
    });
}

/// A quantized base is frozen: it trains through LoRA adapters only.
/// Double quantization nests the scales of 4-bit blocks; preparing for
/// k-bit training touches a quantized model only.
fn check_quant(s: &mut Scenario, texts: &[(&'static str, &str)], notices: &mut Vec<Notice>) {
    let t = &mut s.train;
    let default = Training::default();
    if t.quant != Quant::None && t.lora_r.is_none() {
        conflict(
            notices,
            texts,
            "quant",
            "quantized weights are frozen: train LoRA adapters over them (set lora_r)".into(),
        );
        t.quant = Quant::None;
    }
    if t.quant != Quant::None && s.arch.is_some_and(|a| a.experts > 0) {
        conflict(
            notices,
            texts,
            "quant",
            "a quantized mixture-of-experts base is not estimated: transformers 5 keeps the experts as 3-D parameters, which bitsandbytes' nn.Linear replacement does not quantize".into(),
        );
        t.quant = Quant::None;
    }
    if t.quant != Quant::None && t.dora {
        conflict(
            notices,
            texts,
            "dora",
            format!(
                "DoRA over a {} base is not estimated (peft dequantizes every weight for its norm in each forward); use LoRA, or an unquantized base",
                t.quant.key()
            ),
        );
        t.dora = false;
    }
    let four_bit = matches!(t.quant, Quant::Nf4 | Quant::Fp4);
    if t.double_quant && !four_bit {
        notices.push(Notice::Unused {
            key: "double_quant",
            because: "only 4-bit weights (nf4, fp4) have scales to quantize again".into(),
        });
        t.double_quant = default.double_quant;
    }
    if t.compute_fp32 && !four_bit {
        notices.push(Notice::Unused {
            key: "bnb_compute",
            because: "only 4-bit weights (nf4, fp4) are dequantized to a compute dtype".into(),
        });
        t.compute_fp32 = default.compute_fp32;
    }
    if t.kbit_prep != default.kbit_prep && t.quant == Quant::None {
        notices.push(Notice::Unused {
            key: "kbit_prep",
            because: "only a quantized base is prepared for k-bit training".into(),
        });
        t.kbit_prep = default.kbit_prep;
    }
}

/// Offloading is ZeRO's (DeepSpeed) or FSDP's: the optimizer needs a ZeRO
/// stage, the parameters stage 3; the step then runs DeepSpeed's CPU Adam
/// or Lion.
fn check_offload(s: &mut Scenario, texts: &[(&'static str, &str)], notices: &mut Vec<Notice>) {
    let (zero, offload) = (s.parallel.zero.get(), s.parallel.offload);
    let why = match offload {
        Offload::None => None,
        Offload::Optimizer if zero == 0 => Some(
            "offloading is done by ZeRO (DeepSpeed) or FSDP: set zero to 1, 2 or 3 (one GPU is fine)"
                .to_string(),
        ),
        Offload::Params if zero < 3 => Some(
            "offloading parameters needs ZeRO stage 3 (or FSDP full sharding): set zero=3".into(),
        ),
        Offload::Optimizer | Offload::Params if s.train.optim.spec().cpu_offload => None,
        Offload::Optimizer | Offload::Params => Some(format!(
            "the offloaded step runs DeepSpeed's CPU Adam or Lion, not {}: choose adamw or lion",
            s.train.optim.key()
        )),
    };
    if let Some(why) = why {
        conflict(notices, texts, "offload", why);
        s.parallel.offload = Offload::None;
    }
}

/// Keys that only some models read: the auxiliary loss needs experts.
fn check_model_keys(s: &mut Scenario, notices: &mut Vec<Notice>) {
    let moe = s
        .arch
        .and_then(|a| a.family.spec().moe.map(|m| (a.family, m)));
    let because = match moe {
        None => Some("the model has no experts (no router logits)".to_string()),
        Some((f, m)) if !m.aux_loss => Some(format!(
            "{}'s transformers model has no load-balancing loss",
            f.label()
        )),
        Some(_) => None,
    };
    if let (true, Some(because)) = (s.train.aux_loss, because) {
        notices.push(Notice::Unused {
            key: "aux_loss",
            because,
        });
        s.train.aux_loss = false;
    }
}

/// LoRA targets the family has no module for.
fn check_misfit(
    t: &mut Training,
    a: &crate::model::Architecture,
    texts: &[(&'static str, &str)],
    notices: &mut Vec<Notice>,
) {
    let default = Training::default();
    if let Some(why) = t.lora_targets.misfit(a) {
        let value = texts
            .iter()
            .rev()
            .find(|(k, _)| *k == "lora_targets")
            .map_or_else(|| t.lora_targets.text(), |(_, v)| v.to_string());
        notices.push(Notice::Invalid {
            key: "lora_targets",
            value,
            error: FieldError::Conflict(why),
            default: default.lora_targets.text(),
        });
        t.lora_targets = default.lora_targets;
    }
}

/// The sequence length against the model's positions: past a learned
/// table PyTorch fails at the position embedding (refused, using the
/// table's length); past a rotary model's trained context it runs (a note).
fn check_sequence(
    s: &mut Scenario,
    texts: &[(&'static str, &str)],
    notices: &mut Vec<Notice>,
) -> Vec<Note> {
    let mut notes = Vec::new();
    if let ModelSpec::Preset { like_llama, .. } = &mut s.model {
        if let Some(model_type) = *like_llama {
            let family = s.arch.map(|a| a.family);
            if family == Some(Family::LLAMA_LIKE) {
                notes.push(Note::ReadAsLlama {
                    model_type: model_type.as_str().to_string(),
                });
            } else {
                notices.push(Notice::Unused {
                    key: "like_llama",
                    because: format!(
                        "the family is {}, not {}",
                        family.map_or("unknown", Family::key),
                        Family::LLAMA_LIKE.key()
                    ),
                });
                *like_llama = None;
            }
        }
    }
    let Some(a) = s.arch else {
        return notes;
    };
    let seq = s.train.seq.get();
    if a.positions == 0 || seq <= a.positions {
        return notes;
    }
    match a.family.spec().positions {
        Positions::Rotary => notes.push(Note::BeyondTrainedContext {
            seq,
            positions: a.positions,
        }),
        Positions::Learned => {
            // The default (2048) is the table's length for a model with
            // fewer positions; a typed length is refused with the reason.
            let typed = texts.iter().rev().find(|(k, _)| *k == "seq");
            if let Some((_, value)) = typed {
                notices.push(Notice::Invalid {
                    key: "seq",
                    value: value.to_string(),
                    error: FieldError::Conflict(format!(
                        "{} has {} learned positions: seq must be at most {}",
                        a.family.label(),
                        a.positions,
                        a.positions
                    )),
                    default: a.positions.to_string(),
                });
            }
            if let Some(max) = SeqLen::new(a.positions) {
                s.train.seq = max;
            }
        }
    }
    notes
}

/// Turns a draft into a scenario: picks the model and checks the
/// architecture, dropping overrides that break it (each with a notice).
fn resolve(
    mut draft: Draft,
    texts: &[(&'static str, &str)],
    notices: &mut Vec<Notice>,
) -> Scenario {
    let view = View {
        capacity: capacity(&draft, notices),
        ..draft.view
    };
    let base = Scenario {
        train: draft.train,
        parallel: draft.parallel,
        overhead: draft.overhead,
        view,
        ..Scenario::default()
    };
    if let (None, true, Some(params)) = (draft.model, draft.overrides.is_empty(), draft.params) {
        if draft.like_llama.is_some() {
            notices.push(Notice::Unused {
                key: "like_llama",
                because: "a parameter count alone has no architecture".into(),
            });
        }
        if draft.hub.is_some() {
            notices.push(Notice::Unused {
                key: "hub",
                because: "a parameter count alone has no architecture".into(),
            });
        }
        return Scenario {
            model: ModelSpec::ParamsOnly { params },
            arch: None,
            ..base
        };
    }
    if let (Some(id), None, true) = (draft.hub, draft.model, draft.overrides.is_empty()) {
        notices.push(Notice::HubNotLoaded {
            id: id.as_str().to_string(),
        });
    }
    let preset = draft
        .model
        .and_then(presets::preset)
        .unwrap_or_else(presets::default_preset);
    if draft.params.is_some() {
        notices.push(Notice::ParamsIgnored { model: preset.id });
    }
    loop {
        let arch = draft.overrides.apply(&preset.arch);
        let Err(e) = arch.validate() else {
            return Scenario {
                model: ModelSpec::Preset {
                    id: preset.id,
                    overrides: draft.overrides,
                    like_llama: draft.like_llama,
                    hub: draft.hub,
                },
                arch: Some(arch),
                ..base
            };
        };
        // Drop the override the rule names; if it was not given, every
        // override goes (the preset itself is always valid).
        let key = e.field();
        let value = texts
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string());
        let default = Scenario::default();
        let preset_scenario = Scenario {
            arch: Some(preset.arch),
            ..default
        };
        notices.push(Notice::Invalid {
            key,
            value: value.clone().unwrap_or_else(|| {
                shown(
                    key,
                    &Scenario {
                        arch: Some(arch),
                        ..default
                    },
                )
            }),
            error: FieldError::Conflict(e.to_string()),
            default: shown(key, &preset_scenario),
        });
        if value.is_some() && draft.overrides.clear(key) {
            continue;
        }
        draft.overrides = ArchOverrides::default();
    }
}

/// The capacity the `gpu` key (and its companions) describe. A companion
/// the chosen `gpu` does not read is reported, never dropped silently.
fn capacity(d: &Draft, notices: &mut Vec<Notice>) -> Capacity {
    let default = View::default().capacity;
    let mut missing = |key: &'static str, why: &str| {
        notices.push(Notice::Invalid {
            key,
            value: String::new(),
            error: FieldError::Conflict(why.into()),
            default: "rtx-4090".into(),
        });
        default
    };
    let capacity = match (d.gpu, d.capacity_typed, d.probe_bytes) {
        (None, Some(bytes), _) | (Some(GpuKey::Custom), Some(bytes), _) => {
            Capacity::Typed { bytes }
        }
        (Some(GpuKey::Custom), None, _) => missing("capacity_gib", "gpu=custom needs capacity_gib"),
        (Some(GpuKey::Probe), _, Some(bytes)) => Capacity::Probed {
            bytes,
            adapter: d.probe_adapter.unwrap_or(ShortText::EMPTY),
        },
        (Some(GpuKey::Probe), _, None) => missing("probe_bytes", "gpu=probe needs probe_bytes"),
        (Some(GpuKey::Listed(id)), _, _) => Capacity::Gpu { id },
        (None, None, _) => default,
    };
    let (typed_used, probe_used) = match capacity {
        Capacity::Typed { .. } => (true, false),
        Capacity::Probed { .. } => (false, true),
        Capacity::Gpu { .. } => (false, false),
    };
    let because = match d.gpu {
        Some(GpuKey::Listed(id)) => format!("gpu={id} decides the capacity"),
        Some(GpuKey::Custom) | None => "only gpu=probe reads it".to_string(),
        Some(GpuKey::Probe) => "gpu=probe uses the measured bytes".to_string(),
    };
    for (key, given, used) in [
        ("capacity_gib", d.capacity_typed.is_some(), typed_used),
        ("probe_bytes", d.probe_bytes.is_some(), probe_used),
        ("probe_adapter", d.probe_adapter.is_some(), probe_used),
    ] {
        if given && !used {
            notices.push(Notice::Unused {
                key,
                because: because.clone(),
            });
        }
    }
    capacity
}

/// The capacity keys that `gpu=value` does not read: the page drops them
/// when the GPU is chosen, so the link carries no ignored key (the decoder
/// would say each is unused, see [`capacity`]).
pub fn capacity_keys_unused_by(gpu: &str) -> &'static [&'static str] {
    match gpu.trim() {
        "custom" => &["probe_bytes", "probe_adapter"],
        "probe" => &["capacity_gib"],
        _ => &["capacity_gib", "probe_bytes", "probe_adapter"],
    }
}

/// Sets `key` to what was typed in the raw form, with the form's rules:
/// a new model (or none: a parameter count alone) starts from its own
/// architecture, so the architecture keys go; a typed architecture number
/// is no longer the Hub's config, so `hub` goes; a listed GPU replaces a
/// typed or measured capacity. The page's fields all edit through here.
pub fn edit(form: &mut RawQuery, key: &str, value: &str) {
    let Some(f) = field(key) else {
        form.set(key, value);
        return;
    };
    match f.kind {
        FieldKind::Model => {
            if value.trim().is_empty() {
                form.remove(key);
            } else {
                form.set(key, value);
            }
            for k in crate::import::model_keys().filter(|k| !matches!(*k, "model" | "params")) {
                form.remove(k);
            }
        }
        _ if f.group == Group::Architecture => {
            form.set(key, value);
            form.remove("hub");
        }
        FieldKind::Gpu => {
            form.set(key, value);
            for k in capacity_keys_unused_by(value) {
                form.remove(k);
            }
        }
        _ => form.set(key, value),
    }
}

/// Replaces the model's keys in the raw form by an import's `changes`,
/// then sets `extra` (the Hub id, a link's dropout).
pub fn apply_import(form: &mut RawQuery, changes: &[(String, String)], extra: &[(&str, String)]) {
    for k in crate::import::model_keys() {
        form.remove(k);
    }
    for (k, v) in changes {
        form.set(k, v);
    }
    for (k, v) in extra {
        form.set(k, v);
    }
}

/// What the form shows for `key` in `s`.
fn shown(key: &str, s: &Scenario) -> String {
    field(key).map(|f| f.shown_value(s)).unwrap_or_default()
}

/// Strict decoding, for the command line: any notice is an error.
pub fn decode_strict(raw: &RawQuery) -> Result<Scenario, Vec<Notice>> {
    let d = decode(raw);
    if d.notices.is_empty() {
        Ok(d.scenario)
    } else {
        Err(d.notices)
    }
}

/// The canonical query of a scenario, in [`FIELDS`] order. Keys at their
/// default that are rarely changed are left out.
pub fn encode(s: &Scenario) -> RawQuery {
    let mut raw = RawQuery::default();
    for f in FIELDS {
        if let Some(v) = f.value_of(s) {
            raw.pairs.push((f.key.to_string(), v));
        }
    }
    raw
}
