//! What the codec says about a query: why a value was refused
//! ([`FieldError`]), what was not used ([`Notice`]), and what the numbers
//! rest on ([`Note`]).

use super::{Key, MAX_PAIRS, MAX_VALUE_LEN};
use std::fmt;

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
    /// Not in the value's own form (a read file's bytes), and why.
    Form(String),
}

impl From<crate::text::TextError> for FieldError {
    fn from(e: crate::text::TextError) -> Self {
        use crate::text::TextError;
        match e {
            TextError::TooLong => FieldError::TooLong,
            TextError::ControlCharacters => FieldError::ControlCharacters,
            TextError::NotAHubId => FieldError::NotAHubId,
        }
    }
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
            FieldError::ControlCharacters => crate::text::TextError::ControlCharacters.fmt(f),
            FieldError::TooSmall { min } => write!(f, "must be at least {min}"),
            FieldError::TooLarge { max } => write!(f, "must be at most {max}"),
            FieldError::UnknownChoice { choices } => write!(f, "must be one of: {choices}"),
            FieldError::Conflict(why) => write!(f, "does not fit: {why}"),
            FieldError::UnknownGpu => {
                f.write_str("is not a GPU in the list: pick one, or choose custom and type its memory")
            }
            // The text's own words (one copy of them).
            FieldError::NotAHubId => crate::text::TextError::NotAHubId.fmt(f),
            FieldError::Form(why) => write!(f, "is {why}"),
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
        key: Key,
        value: String,
        error: FieldError,
        default: String,
    },
    /// A key given more than once; the last value is used.
    Repeated { key: Key },
    /// More than [`MAX_PAIRS`] parameters; the rest were ignored.
    TooManyPairs { dropped: usize },
    /// `params` next to a model: the architecture decides N.
    ParamsIgnored { model: &'static str },
    /// A valid value that the other keys make irrelevant.
    Unused { key: Key, because: String },
    /// `hub` alone: the model's config.json has not been read, so no key
    /// says its architecture yet.
    HubNotLoaded { id: String },
}

impl Notice {
    /// The query key this notice belongs next to, if any (as written: an
    /// unknown key too).
    pub fn key(&self) -> Option<&str> {
        match self {
            Notice::UnknownKey { key } => Some(key),
            _ => self.field_key().map(Key::text),
        }
    }

    /// The known key this notice belongs next to, if any.
    pub fn field_key(&self) -> Option<Key> {
        match self {
            Notice::Invalid { key, .. } | Notice::Repeated { key } | Notice::Unused { key, .. } => {
                Some(*key)
            }
            Notice::ParamsIgnored { .. } => Some(Key::Params),
            Notice::HubNotLoaded { .. } => Some(Key::Hub),
            Notice::UnknownKey { .. } | Notice::TooManyPairs { .. } => None,
        }
    }
}

/// Shortens and cleans a user value for echoing in a message.
pub(super) fn echo(value: &str) -> String {
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
    /// A multimodal checkpoint: its language model alone is estimated.
    TextOnly,
    /// A rotary model run past the context it was trained for: it runs
    /// (rope scaling), with the memory of the longer sequence.
    BeyondTrainedContext { seq: u32, positions: u32 },
    /// ZeRO-3 by the paper's accounting (`shard=generic`), which is not
    /// what DeepSpeed allocates (`scripts/measure/deepspeed/NOTES.md`).
    PaperZero3,
    /// DeepSpeed's gathered set above `stage3_max_live_parameters`: an
    /// upper bound (the cap and the largest parameter), not traced.
    DeepspeedLiveCap,
    /// A pipeline's key (`micro_batches`, `pp_schedule`) set without a
    /// pipeline: not read.
    PipelineOnly { key: Key },
}

impl Note {
    /// The query key it belongs next to.
    pub fn key(&self) -> Key {
        match self {
            Note::ReadAsLlama { .. } => Key::LikeLlama,
            Note::TextOnly => Key::Multimodal,
            Note::BeyondTrainedContext { .. } => Key::Seq,
            Note::PaperZero3 | Note::DeepspeedLiveCap => Key::Shard,
            Note::PipelineOnly { key } => *key,
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
            Note::TextOnly => f.write_str(
                "text only: the checkpoint's vision or audio encoder is not estimated (its \
                 weights, its activations, and under vLLM the encoder's profiling run and \
                 encoder cache); the language model is, on text prompts",
            ),
            Note::PaperZero3 => f.write_str(
                "ZeRO-3 is counted as the ZeRO paper does (the largest module gathered with its \
                 gradient); DeepSpeed's own ZeRO-3 holds more (at its defaults a 1 GB reduce \
                 bucket, and from its second step parameters gathered up to \
                 stage3_max_live_parameters): shard=deepspeed models it, shard=fsdp1 or fsdp2 \
                 PyTorch's FSDP",
            ),
            Note::DeepspeedLiveCap => f.write_str(
                "this model has more than stage3_max_live_parameters (1e9) parameters: from its \
                 second step DeepSpeed keeps gathered what its prefetcher reached, counted here \
                 as the cap plus the largest parameter (an upper bound; which parameters depends \
                 on the module order, not traced)",
            ),
            Note::PipelineOnly { key } => write!(
                f,
                "{key} is read only with pipeline parallelism (pp > 1)",
                key = key.text()
            ),
            Note::BeyondTrainedContext { seq, positions } => write!(
                f,
                "seq {seq} is longer than the {positions} tokens the model was trained for: \
                 it runs with rope scaling, at this sequence length's memory"
            ),
        }
    }
}
