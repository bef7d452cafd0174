//! The URL codec. Two stages, as in ripgrep's low/high-level arguments:
//! [`RawQuery`] keeps what was typed (decoded, unvalidated, in order), and
//! [`decode`] turns it into a validated [`Scenario`] plus the [`Notice`]s that
//! say what was ignored and why. [`encode`] writes the canonical query back.
//!
//! The page and the CLI share this module, so a link and a command line give
//! the same scenario.

use crate::scenario::{Batch, Dtype, Optimizer, ParamCount, Scenario, SeqLen};
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
    TooSmall { min: String },
    TooLarge { max: String },
    UnknownChoice { choices: String },
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldError::Empty => f.write_str("is empty"),
            FieldError::TooLong => write!(f, "is longer than {MAX_VALUE_LEN} characters"),
            FieldError::NotANumber => f.write_str("is not a number"),
            FieldError::NotWhole => f.write_str("is not a whole number"),
            FieldError::TooSmall { min } => write!(f, "must be at least {min}"),
            FieldError::TooLarge { max } => write!(f, "must be at most {max}"),
            FieldError::UnknownChoice { choices } => write!(f, "must be one of: {choices}"),
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
}

impl Notice {
    /// The query key this notice belongs next to, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Notice::UnknownKey { key } => Some(key),
            Notice::Invalid { key, .. } | Notice::Repeated { key } => Some(key),
            Notice::TooManyPairs { .. } => None,
        }
    }
}

/// Shortens and cleans a user value for echoing in a message.
fn echo(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if clean.chars().count() > 24 {
        let head: String = clean.chars().take(24).collect();
        format!("{head}…")
    } else {
        clean
    }
}

impl Notice {
    /// What the page did about it (the CLI refuses instead).
    pub fn consequence(&self) -> String {
        match self {
            Notice::UnknownKey { .. } | Notice::TooManyPairs { .. } => "ignored".into(),
            Notice::Invalid { default, .. } => format!("using the default {default}"),
            Notice::Repeated { .. } => "using the last".into(),
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
        }
    }
}

/// How a field is entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Typed digits (a text box).
    Number,
    /// One of a closed list: `(query value, label)`.
    Choice(&'static [(&'static str, &'static str)]),
}

/// One query key: how to read it into a scenario and write it back.
pub struct Field {
    pub key: &'static str,
    pub kind: FieldKind,
    /// Form label.
    pub label: &'static str,
    /// One plain-words sentence for tooltips and `--help`.
    pub help: &'static str,
    apply: fn(&mut Scenario, &str) -> Result<(), FieldError>,
    write: fn(&Scenario) -> String,
}

impl Field {
    /// Checks one value on its own, as the form does while the user types.
    pub fn validate(&self, value: &str) -> Result<(), FieldError> {
        (self.apply)(&mut Scenario::default(), value)
    }

    /// The canonical text of this field for `s`.
    pub fn value_of(&self, s: &Scenario) -> String {
        (self.write)(s)
    }
}

/// Every key the codec knows, in form order.
pub const FIELDS: &[Field] = &[
    Field {
        key: "params",
        kind: FieldKind::Number,
        label: "Parameters (N)",
        help: "Total parameter count, e.g. 1.5e9, 1.5B or 124M.",
        apply: |s, v| {
            let n = parse_count(v, true, ParamCount::MIN, ParamCount::MAX)?;
            s.params = ParamCount::new(n).ok_or(FieldError::NotANumber)?;
            Ok(())
        },
        write: |s| s.params.get().to_string(),
    },
    Field {
        key: "dtype",
        kind: FieldKind::Choice(Dtype::OPTIONS),
        label: "Precision",
        help: "How weights, gradients and optimizer state are stored.",
        apply: |s, v| {
            s.dtype = choice(v, Dtype::from_key, Dtype::keys_joined)?;
            Ok(())
        },
        write: |s| s.dtype.key().to_string(),
    },
    Field {
        key: "optim",
        kind: FieldKind::Choice(Optimizer::OPTIONS),
        label: "Optimizer",
        help: "The optimizer and its PyTorch implementation.",
        apply: |s, v| {
            s.optim = choice(v, Optimizer::from_key, Optimizer::keys_joined)?;
            Ok(())
        },
        write: |s| s.optim.key().to_string(),
    },
    Field {
        key: "batch",
        kind: FieldKind::Number,
        label: "Batch size",
        help: "Sequences in one forward/backward pass (per GPU, per micro-step).",
        apply: |s, v| {
            s.batch = count(v, Batch::MIN, Batch::MAX, Batch::new)?;
            Ok(())
        },
        write: |s| s.batch.get().to_string(),
    },
    Field {
        key: "seq",
        kind: FieldKind::Number,
        label: "Sequence length",
        help: "Tokens per sequence.",
        apply: |s, v| {
            s.seq = count(v, SeqLen::MIN, SeqLen::MAX, SeqLen::new)?;
            Ok(())
        },
        write: |s| s.seq.get().to_string(),
    },
];

/// The field for `key`.
pub fn field(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

/// A plain count (no suffixes) into a bounded `u32` newtype.
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

/// Largest integer an f64 holds exactly; counts above it must be typed as digits.
const F64_EXACT: f64 = 9_007_199_254_740_992.0;

/// Reads a whole count in `min..=max`: `2048`, `1.5e9`, and with `suffixes`
/// also `124M`, `1.5B`, `7b`, `2T` (k/M/B/T = 10^3/10^6/10^9/10^12).
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
        let (num, scale) = match v.char_indices().last() {
            Some((i, c)) if suffixes && c.is_ascii_alphabetic() => {
                let scale = match c.to_ascii_lowercase() {
                    'k' => 1e3,
                    'm' => 1e6,
                    'b' | 'g' => 1e9,
                    't' => 1e12,
                    _ => return Err(FieldError::NotANumber),
                };
                (&v[..i], scale)
            }
            _ => (v, 1.0),
        };
        // Only plain decimal syntax: no "inf", "nan" or hex.
        let plain = num
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+'));
        if !plain || !num.bytes().any(|c| c.is_ascii_digit()) {
            return Err(FieldError::NotANumber);
        }
        let x = num.parse::<f64>().map_err(|_| FieldError::NotANumber)? * scale;
        if !x.is_finite() {
            return Err(FieldError::NotANumber);
        }
        if x < min as f64 {
            return Err(too_small());
        }
        if x > max as f64 || x > F64_EXACT {
            return Err(too_large());
        }
        if x.fract() != 0.0 {
            return Err(FieldError::NotWhole);
        }
        x as u64
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
}

/// Lenient decoding, for the page: bad values fall back to the defaults and
/// each one becomes a [`Notice`]. Never fails.
pub fn decode(raw: &RawQuery) -> Decoded {
    let mut scenario = Scenario::default();
    let mut notices = Vec::new();
    let mut seen: Vec<&'static str> = Vec::new();
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
        let before = scenario.clone();
        if let Err(error) = (f.apply)(&mut scenario, v) {
            scenario = before;
            notices.push(Notice::Invalid {
                key: f.key,
                value: v.to_string(),
                error,
                default: f.value_of(&Scenario::default()),
            });
        }
    }
    if raw.dropped > 0 {
        notices.push(Notice::TooManyPairs {
            dropped: raw.dropped,
        });
    }
    Decoded { scenario, notices }
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

/// The canonical query of a scenario: every field, in [`FIELDS`] order.
pub fn encode(s: &Scenario) -> RawQuery {
    let mut raw = RawQuery::default();
    for f in FIELDS {
        raw.pairs.push((f.key.to_string(), f.value_of(s)));
    }
    raw
}
