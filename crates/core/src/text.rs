//! Short validated text that stays `Copy`: a probed adapter's name, a
//! config.json's `model_type` ([`ShortText`]), a Hugging Face model id
//! ([`HubId`]). Imports nothing of the crate; the codec turns a
//! [`TextError`] into its own field error.

use serde::Serialize;
use std::fmt;

/// Why a text was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextError {
    /// Longer than [`ShortText::MAX`] characters.
    TooLong,
    /// With control characters.
    ControlCharacters,
    /// Not `owner/name` as the Hugging Face Hub writes model ids.
    NotAHubId,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::TooLong => write!(f, "is longer than {} characters", ShortText::MAX),
            TextError::ControlCharacters => f.write_str("contains control characters"),
            TextError::NotAHubId => f.write_str(
                "is not a Hugging Face model id: write it as owner/name with letters, digits, `-`, `_` or `.` (e.g. Qwen/Qwen3-8B)",
            ),
        }
    }
}

/// Short text that stays `Copy` (a probed adapter's name, a model type):
/// at most [`ShortText::MAX`] characters, none of them control characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShortText {
    bytes: [u8; ShortText::MAX_BYTES],
    len: u16,
}

impl ShortText {
    /// Most characters kept.
    pub const MAX: usize = 64;
    const MAX_BYTES: usize = 4 * ShortText::MAX;

    /// The empty text.
    pub const EMPTY: ShortText = ShortText {
        bytes: [0; ShortText::MAX_BYTES],
        len: 0,
    };

    /// `s` itself, or why it cannot be one: longer than [`ShortText::MAX`]
    /// characters, or with control characters. Nothing is cut or dropped.
    pub fn new(s: &str) -> Result<Self, TextError> {
        if s.chars().count() > Self::MAX {
            return Err(TextError::TooLong);
        }
        if s.chars().any(char::is_control) {
            return Err(TextError::ControlCharacters);
        }
        let mut out = ShortText::EMPTY;
        // At most 64 characters of at most 4 bytes each: always fits.
        out.bytes[..s.len()].copy_from_slice(s.as_bytes());
        out.len = s.len() as u16;
        Ok(out)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl std::fmt::Debug for ShortText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for ShortText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A Hugging Face model id, `owner/name`, as the Hub accepts it: letters,
/// digits, `-`, `_` and `.`; neither part starts or ends with `-` or `.`,
/// nor holds `--` or `..`; each part at most 96 characters.
/// Source: huggingface_hub `validate_repo_id` (REPO_ID_REGEX).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HubId {
    bytes: [u8; HubId::MAX_BYTES],
    len: u8,
}

impl HubId {
    /// Most characters in one part (owner or name).
    pub const MAX_PART: usize = 96;
    const MAX_BYTES: usize = 2 * HubId::MAX_PART + 1;

    pub fn new(s: &str) -> Result<Self, TextError> {
        let bad = TextError::NotAHubId;
        let (owner, name) = s.split_once('/').ok_or(bad)?;
        let part_ok = |p: &str| {
            !p.is_empty()
                && p.len() <= Self::MAX_PART
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                && !p.starts_with(['-', '.'])
                && !p.ends_with(['-', '.'])
                && !p.contains("--")
                && !p.contains("..")
        };
        if !part_ok(owner) || !part_ok(name) {
            return Err(bad);
        }
        let mut out = HubId {
            bytes: [0; HubId::MAX_BYTES],
            len: 0,
        };
        // Two parts of at most 96 ASCII bytes and a slash: always fits.
        out.bytes[..s.len()].copy_from_slice(s.as_bytes());
        out.len = s.len() as u8;
        Ok(out)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// Where the Hub serves the model's config.json.
    pub fn config_url(&self, base: &str) -> String {
        format!(
            "{}/{}/resolve/main/config.json",
            base.trim_end_matches('/'),
            self.as_str()
        )
    }
}

impl std::fmt::Debug for HubId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for HubId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
