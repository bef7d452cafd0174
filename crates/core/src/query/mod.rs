//! The URL codec. Two stages, as in ripgrep's low/high-level arguments:
//! [`RawQuery`] keeps what was typed (decoded, unvalidated, in order), and
//! [`decode`] turns it into a validated [`Scenario`] plus the [`Notice`]s that
//! say what was ignored and why. [`encode`] writes the canonical query back.
//!
//! The page and the CLI share this module, so a link and a command line give
//! the same scenario.
//!
//! `key` names every key ([`Key`]); `fields` reads and writes each one
//! ([`FIELDS`]); `notice` says what was not used and why; `checks` holds
//! the rules across keys and the model's resolution.
//!
//! Imports the model, the scenario and the workloads' input types; nothing
//! of an estimate, and nothing of the page.

mod checks;
mod fields;
pub mod form;
mod key;
mod notice;
mod tasks;

pub use checks::capacity_keys_unused_by;
use checks::{
    check_lora, check_model_keys, check_offload, check_quant, check_sequence, check_stack,
    check_tensor_parallel, resolve,
};
pub use fields::{
    field, model_keys, parse_count, Draft, Field, FieldKind, GpuKey, Group, Tasks, FIELDS,
};
pub use key::Key;
pub use notice::{FieldError, Note, Notice};

use crate::scenario::Scenario;

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
    pub fn get(&self, key: impl AsRef<str>) -> Option<&str> {
        let key = key.as_ref();
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Replaces every value of `key` with one, keeping its first position.
    pub fn set(&mut self, key: impl AsRef<str>, value: &str) {
        let key = key.as_ref();
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
    pub fn remove(&mut self, key: impl AsRef<str>) {
        let key = key.as_ref();
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
    // Most keys and values have nothing to decode: one copy.
    if !b.iter().any(|&c| c == b'%' || c == b'+') {
        return s.to_string();
    }
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
    // Valid UTF-8 (the usual case) keeps its buffer; otherwise U+FFFD.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
    let mut seen: Vec<Key> = Vec::new();
    let mut texts: Vec<(Key, &str)> = Vec::new();
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
    tasks::check_task(&mut scenario, &texts, &mut notices);
    check_quant(&mut scenario, &texts, &mut notices);
    check_lora(&mut scenario, &texts, &mut notices);
    check_model_keys(&mut scenario, &mut notices);
    check_offload(&mut scenario, &texts, &mut notices);
    check_stack(&mut scenario, &texts, &mut notices);
    check_tensor_parallel(&mut scenario, &texts, &mut notices);
    checks::check_pipeline(&mut scenario, &texts, &mut notices);
    let mut notes = check_sequence(&mut scenario, &texts, &mut notices);
    notes.extend(tasks::check_infer(&mut scenario, &texts, &mut notices));
    notes.extend(checks::stack_notes(&scenario));
    Decoded {
        scenario,
        notices,
        notes,
    }
}

/// Sets `key` to what was typed in the raw form, with the form's rules:
/// a new model (or none: a parameter count alone) starts from its own
/// architecture, so the architecture keys go; a typed architecture number
/// is no longer the Hub's config, so `hub` goes; a listed GPU replaces a
/// typed or measured capacity. The page's fields all edit through here.
pub fn edit(form: &mut RawQuery, key: Key, value: &str) {
    let Some(f) = key.field() else {
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
            for k in model_keys().filter(|k| !matches!(k, Key::Model | Key::Params)) {
                form.remove(k);
            }
        }
        _ if f.group == Group::Architecture => {
            form.set(key, value);
            form.remove(Key::Hub);
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
pub fn apply_import(form: &mut RawQuery, changes: &[(String, String)], extra: &[(Key, String)]) {
    for k in model_keys() {
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
pub(super) fn shown(key: Key, s: &Scenario) -> String {
    key.field().map(|f| f.shown_value(s)).unwrap_or_default()
}

/// Whether an inference run reads `key` (its engine's keys, its weights'
/// options): the one rule behind "not read by this engine" notices and the
/// resetting of unread inputs.
pub fn reads(i: &crate::infer::run::Inference, key: Key) -> bool {
    key.field().is_some_and(|f| tasks::reads(i, f))
}

/// Whether an inference run's engine refuses `key` at any value but its
/// default (the codec says why, as a conflict): read, but not a setting.
pub fn refused(i: &crate::infer::run::Inference, key: Key) -> bool {
    tasks::refused(i.engine, key)
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
    let read = |f: &Field| match s.task {
        crate::scenario::Task::Train => true,
        crate::scenario::Task::Infer => tasks::reads(&s.infer, f),
    };
    for f in FIELDS.iter().filter(|f| f.tasks.include(s.task) && read(f)) {
        if let Some(v) = f.value_of(s) {
            raw.pairs.push((f.key.text().to_string(), v));
        }
    }
    raw
}
