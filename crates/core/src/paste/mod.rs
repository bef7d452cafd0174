//! What someone has in hand, pasted: the command they run (`llama-server`,
//! `vllm serve`, `ollama run`, `mlx_lm.generate`, an engine's `docker run`,
//! `accelerate launch` or `torchrun` with a training script's arguments), a training config
//! (TRL, transformers, Axolotl, LLaMA-Factory, DeepSpeed, accelerate; YAML
//! or JSON; torchtitan's TOML), an engine's start-up log (llama.cpp,
//! Ollama's llama.cpp lines, vLLM, mlx-lm), `ollama ps` or nvidia-smi's
//! table, an Ollama Modelfile or API request, a request to an
//! OpenAI-compatible server, or PyTorch's out-of-memory message, read as
//! the query keys it sets
//! ([`Read::keys`]), what it does not say in vramfit's keys
//! ([`Read::unknown`], verbatim, clipped: never dropped silently) and the
//! figures it measured ([`Read::measured`], named as the estimate's JSON
//! fields).
//!
//! Beside `import` at the codec's layer: imports the codec, the model's
//! presets and file types, and nothing of an estimate (the comparison
//! with vramfit's figures is `crate::compare`). Every value is validated
//! by the codec's own field before it is kept, and the keys decoded
//! together: a notice moves its key to `unknown`. Linear in the text:
//! each line is looked at a fixed number of times.

mod command;
mod config;
mod log;
mod modelfile;
mod openai;
mod shell;
mod toml;
mod torchtitan;
mod yaml;

use crate::clip::{clip, QUOTE};
use crate::model::presets::{Preset, PRESETS};
use crate::query::{self, Key, RawQuery};
use crate::units::{Bytes, Decimal};

/// The largest paste read: a start-up log is tens of KB; a file of
/// megabytes is not a paste.
pub const MAX_PASTE_BYTES: usize = 4 << 20;

/// Entries of `unknown` kept (a long log's unread lines are not a list
/// anyone reads); the rest are counted in the last entry.
pub const MAX_UNKNOWN: usize = 60;

/// Measured figures kept: a log printing thousands (each rank's, each
/// restart's) is not a table anyone reads, and keeping them is linear.
pub const MAX_MEASURED: usize = 64;

/// Characters of a line quoted as a measurement's source or an unknown.
const LINE: usize = 160;

/// One query key read, and the text it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: Key,
    pub value: String,
    /// The flag, field or line it came from (clipped).
    pub from: String,
}

/// A figure the paste measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Bytes(Bytes),
    /// A count (the cache's tokens or blocks).
    Count(u64),
}

/// How a measured figure bounds the estimate's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The figure itself, as printed: within `plus_minus` of the exact one.
    Printed { plus_minus: u64 },
    /// What the run had reached when it failed: it needed at least this.
    AtLeast,
}

/// One figure found, named as the estimate's JSON field that holds the
/// same thing (`weights_bytes`, `kv_cache_bytes`, `peak_allocated_bytes`,
/// ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measured {
    pub field: &'static str,
    pub figure: Figure,
    pub bound: Bound,
    /// The line it was read from (clipped).
    pub source: String,
}

/// A paste read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// What was recognised, in words ("a vllm serve command", "a llama.cpp
    /// start-up log", "PyTorch's out-of-memory message").
    pub found: Vec<&'static str>,
    pub keys: Vec<Setting>,
    /// Every flag, field or setting line not read into a key, verbatim
    /// (clipped), with why where known.
    pub unknown: Vec<String>,
    pub measured: Vec<Measured>,
    /// The paste names a model vramfit could not read (said in
    /// `unknown`): the estimate its figures are set beside is the link's
    /// model, not that one.
    pub model_unread: bool,
}

/// Why a paste is not read at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasteError {
    Empty,
    TooLarge {
        bytes: usize,
    },
    Binary {
        at: usize,
    },
    NotUtf8 {
        at: usize,
    },
    /// Not a command, config, log or message vramfit reads.
    Unrecognised {
        first_line: String,
    },
    /// A config that is not read (with the line and why).
    Config(String),
}

impl std::fmt::Display for PasteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PasteError::Empty => f.write_str("nothing to read: the paste is empty"),
            PasteError::TooLarge { bytes } => write!(
                f,
                "{bytes} bytes: a paste is read up to {MAX_PASTE_BYTES} bytes (4 MiB); paste the command, the config or the log's start-up lines"
            ),
            PasteError::Binary { at } => write!(
                f,
                "a binary file (a NUL byte at {at}), not a command, a config or a log"
            ),
            PasteError::NotUtf8 { at } => write!(f, "not UTF-8 text (byte {at})"),
            PasteError::Unrecognised { first_line } => write!(
                f,
                "not a command, a training config, a start-up log or an out-of-memory message vramfit reads (it starts `{first_line}`)"
            ),
            PasteError::Config(why) => write!(f, "a config vramfit cannot read: {why}"),
        }
    }
}

/// Reads a file's or a paste's bytes: refused when too large, binary or
/// not UTF-8, else [`read`].
pub fn read_bytes(bytes: &[u8]) -> Result<Read, PasteError> {
    if bytes.len() > MAX_PASTE_BYTES {
        return Err(PasteError::TooLarge { bytes: bytes.len() });
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(PasteError::Binary { at });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| PasteError::NotUtf8 {
        at: e.valid_up_to(),
    })?;
    read(text)
}

/// Reads a paste: a JSON config, a torchtitan TOML config, a command (and
/// the log lines after it), a log or a message, else a YAML config.
pub fn read(text: &str) -> Result<Read, PasteError> {
    if text.len() > MAX_PASTE_BYTES {
        return Err(PasteError::TooLarge { bytes: text.len() });
    }
    if let Some(at) = text.bytes().position(|b| b == 0) {
        return Err(PasteError::Binary { at });
    }
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return Err(PasteError::Empty);
    }
    let mut c = Collector::default();
    let request = openai::curl(trimmed);
    let json = request.as_ref().map_or(trimmed, |(body, _)| body.as_str());
    if json.starts_with('{') {
        let entries = yaml::read_json(json).map_err(PasteError::Config)?;
        match request.map(|(_, api)| api) {
            Some(openai::Api::OpenAi(server)) => openai::read(&entries, server, &mut c),
            None if openai::is_request(&entries) => openai::read(&entries, None, &mut c),
            Some(openai::Api::Ollama) | None if modelfile::is_api_request(&entries) => {
                modelfile::read_api_request(&entries, &mut c)
            }
            Some(openai::Api::Ollama) | None => {
                config::read(&entries, "a JSON training config", &mut c)
            }
        }
        return Ok(c.finish());
    }
    if let Some(table) = toml::first_table(trimmed) {
        match toml::read(trimmed) {
            Ok(entries) if torchtitan::is_config(&entries) => {
                torchtitan::read(&entries, &mut c);
                return Ok(c.finish());
            }
            Err(why) if torchtitan::is_table(table) => return Err(PasteError::Config(why)),
            // Some other TOML (or a line that only looks like a header):
            // read as before.
            Ok(_) | Err(_) => {}
        }
    }
    let text = if modelfile::is_modelfile(trimmed) {
        modelfile::read(trimmed, &mut c)
    } else {
        trimmed.to_string()
    };
    let text: String = text
        .lines()
        .filter(|l| !modelfile::session_line(l, &mut c) && !modelfile::server_env_line(l, &mut c))
        .flat_map(|l| [l, "\n"])
        .collect();
    let rest = command::read_commands(&text, &mut c);
    log::read(&rest, &mut c);
    if c.found.is_empty() {
        match yaml::read(trimmed) {
            Ok(entries) if !entries.is_empty() => {
                config::read(&entries, "a YAML training config", &mut c);
                if c.keys.is_empty() && !looks_like_config(&entries) {
                    return Err(unrecognised(trimmed));
                }
            }
            Ok(_) => return Err(unrecognised(trimmed)),
            Err(why) if looks_like_yaml(trimmed) => return Err(PasteError::Config(why)),
            Err(_) => return Err(unrecognised(trimmed)),
        }
    }
    Ok(c.finish())
}

fn unrecognised(text: &str) -> PasteError {
    PasteError::Unrecognised {
        first_line: clip(text.lines().next().unwrap_or(""), QUOTE),
    }
}

/// Most lines are `key: value`: a YAML config that did not parse.
fn looks_like_yaml(text: &str) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(20)
        .collect();
    let keyed = lines
        .iter()
        .filter(|l| {
            let t = l.trim();
            t.starts_with('#') || t.starts_with("- ") || t.contains(": ") || t.ends_with(':')
        })
        .count();
    !lines.is_empty() && keyed * 2 > lines.len()
}

/// A config none of whose keys vramfit reads still names a known
/// trainer's setting (else it is some other YAML).
fn looks_like_config(entries: &[yaml::Entry]) -> bool {
    entries.iter().any(|e| config::is_known_field(&e.path))
}

/// What the readers found, gathered: each setting validated as it
/// arrives.
#[derive(Default)]
pub(crate) struct Collector {
    found: Vec<&'static str>,
    keys: Vec<Setting>,
    unknown: Vec<String>,
    unknown_dropped: usize,
    measured: Vec<Measured>,
    /// A model named that is no preset: unknown unless another line
    /// (a log's `general.name`) names one.
    model_miss: Option<String>,
    /// The model's name or a flag says its weights are quantized (vLLM's
    /// `--dtype` then is not the weights').
    quantized: bool,
}

impl Collector {
    pub(crate) fn found(&mut self, what: &'static str) {
        if !self.found.contains(&what) {
            self.found.push(what);
        }
    }

    /// Keeps `key=value` if the codec's field takes it (a later value
    /// replaces an earlier one), else lists it as unknown with the reason.
    pub(crate) fn set(&mut self, key: Key, value: &str, from: &str) {
        let from = clip(from.trim(), LINE);
        if let Some(f) = key.field() {
            if let Err(e) = f.validate(value) {
                self.unknown(format!("{from}: `{}` for {key} {e}", clip(value, QUOTE)));
                return;
            }
        }
        self.keys.retain(|s| s.key != key);
        self.keys.push(Setting {
            key,
            value: value.to_string(),
            from,
        });
    }

    /// A model named that is no preset (said unless another line names
    /// one).
    pub(crate) fn model_missed(&mut self, name: &str) {
        self.model_miss = Some(format!(
            "model {name}: no preset vramfit knows by that name (the page reads its config.json from the Hub; the CLI takes --config FILE, or add model=...)"
        ));
    }

    pub(crate) fn has(&self, key: Key) -> bool {
        self.keys.iter().any(|s| s.key == key)
    }

    pub(crate) fn unknown(&mut self, what: String) {
        if self.unknown.len() < MAX_UNKNOWN {
            self.unknown.push(clip(&what, LINE + QUOTE));
        } else {
            self.unknown_dropped += 1;
        }
    }

    pub(crate) fn measured(
        &mut self,
        field: &'static str,
        figure: Figure,
        bound: Bound,
        line: &str,
    ) {
        // A figure printed on several lines (each rank's) is kept once.
        if self.measured.len() >= MAX_MEASURED
            || self
                .measured
                .iter()
                .any(|m| m.field == field && m.figure == figure)
        {
            return;
        }
        let source = clip(line.trim(), LINE);
        self.measured.push(Measured {
            field,
            figure,
            bound,
            source,
        });
    }

    fn finish(mut self) -> Read {
        let miss = self.model_miss.take().filter(|_| !self.has(Key::Model));
        let model_unread = miss.is_some();
        if let Some(miss) = miss {
            self.unknown(miss);
        }
        // In the codec's order, as a link writes them.
        self.keys
            .sort_by_key(|s| Key::all().position(|k| k == s.key));
        if self.unknown_dropped > 0 {
            self.unknown.push(format!(
                "… and {} more lines not read",
                self.unknown_dropped
            ));
        }
        Read {
            found: self.found,
            keys: self.keys,
            unknown: self.unknown,
            measured: self.measured,
            model_unread,
        }
    }
}

impl Read {
    /// The read keys with `over` (the query's own keys) applied on top,
    /// decoded together: a read key the codec does not use as given (a
    /// notice: a context longer than the model's, a key the engine does
    /// not read) leaves the query and moves to `unknown` with the notice.
    /// The query's own keys stay, for the caller's strict decode.
    pub fn settle(&mut self, over: &RawQuery) -> RawQuery {
        self.settle_between(&RawQuery::default(), over)
    }

    /// [`Read::settle`] on top of `base` (the page's form, which already
    /// holds the read keys): a notice on a read key moves it to `unknown`.
    pub fn settle_on(&mut self, base: &RawQuery) -> RawQuery {
        self.settle_between(base, &RawQuery::default())
    }

    fn settle_between(&mut self, base: &RawQuery, over: &RawQuery) -> RawQuery {
        loop {
            let mut raw = base.clone();
            for s in &self.keys {
                raw.set(s.key, &s.value);
            }
            for (k, v) in over.pairs() {
                raw.set(k, v);
            }
            let decoded = query::decode(&raw);
            let moved: Vec<(Key, String)> = decoded
                .notices
                .iter()
                .filter_map(|n| {
                    let k = n.field_key()?;
                    if over.get(k).is_some() {
                        return None;
                    }
                    let s = self.keys.iter().find(|s| s.key == k)?;
                    Some((k, format!("{}: {n}", s.from)))
                })
                .collect();
            if moved.is_empty() {
                return raw;
            }
            for (k, why) in moved {
                self.keys.retain(|s| s.key != k);
                self.unknown.push(clip(&why, LINE + QUOTE));
            }
        }
    }

    /// The keys as a query string (what a link carries).
    pub fn query(&self) -> String {
        let mut raw = RawQuery::default();
        for s in &self.keys {
            raw.set(s.key, &s.value);
        }
        raw.to_query_string()
    }

    /// The GPU capacity the paste measured, if it set one.
    pub fn capacity(&self) -> Option<&str> {
        self.keys
            .iter()
            .find(|s| s.key == Key::CapacityGib)
            .map(|s| s.value.as_str())
    }
}

/// The preset a model name or Hub id names: its repository exactly, or
/// the longest preset repository name the name starts with, followed by
/// a separator (`Llama-3.1-8B-Instruct` is Llama 3.1 8B's architecture;
/// `Qwen2.5-3B-Instruct-AWQ` Qwen2.5 3B's). A name with a path or a GGUF
/// file type is cut to its last component first.
pub(crate) fn preset_for(name: &str) -> Option<&'static Preset> {
    let name = name.trim().trim_end_matches('/');
    if let Some(p) = PRESETS.iter().find(|p| p.repo.eq_ignore_ascii_case(name)) {
        return Some(p);
    }
    let last = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let last = last.trim_end_matches(".gguf");
    // Ollama's and Hub names write `qwen3:8b` for `qwen3-8b`.
    let last = last.replace(':', "-");
    let repos = || {
        PRESETS
            .iter()
            .filter_map(|p| Some((p.repo.rsplit_once('/')?.1.to_ascii_lowercase(), p)))
    };
    // The repository's name (`Qwen3-8B-Q4_K_M.gguf`), else vramfit's id,
    // which Ollama's library names follow (`gemma4:e4b`, `llama3.1:8b`),
    // else the repository's name and the pasted one without the words
    // that tell a base from a tuned checkpoint of the same weights' shapes
    // (`Ministral-3-8B-Instruct-2512` for `Ministral-3-8B-Base-2512`).
    longest_prefix(&last, repos())
        .or_else(|| longest_prefix(&last, PRESETS.iter().map(|p| (p.id.to_string(), p))))
        .or_else(|| {
            let stems = repos().map(|(base, p)| (untuned(&base), p));
            longest_prefix(&untuned(&last), stems)
        })
}

/// The preset whose name is the longest that `name` starts with, followed
/// by nothing or a separator (`qwen3-8b` in `qwen3-8b-q4_k_m`).
fn longest_prefix(
    name: &str,
    names: impl Iterator<Item = (String, &'static Preset)>,
) -> Option<&'static Preset> {
    names
        .filter_map(|(base, p)| {
            let rest = name.strip_prefix(base.as_str())?;
            (rest.is_empty() || rest.starts_with(['-', '_', '.'])).then_some((base.len(), p))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, p)| p)
}

/// A checkpoint's name without the words that tell its tuning
/// (`-base`, `-instruct`, `-it`, `-chat`), which do not change its shapes.
fn untuned(name: &str) -> String {
    name.split('-')
        .filter(|w| !matches!(*w, "base" | "instruct" | "it" | "chat"))
        .collect::<Vec<_>>()
        .join("-")
}

/// The GGUF file type a file or tag name carries (`Qwen3-8B-Q4_K_M.gguf`,
/// `qwen3:8b-q4_K_M`), the longest that is a whole word of the name.
pub(crate) fn file_type_in(name: &str) -> Option<crate::model::gguf::FileType> {
    use crate::model::gguf::FileType;
    let lower = name.to_ascii_lowercase();
    let lower = lower.trim_end_matches(".gguf");
    let is_sep = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
    FileType::ALL
        .iter()
        .filter(|t| {
            let k = t.key();
            lower.match_indices(k).any(|(i, _)| {
                is_sep(lower[..i].chars().next_back())
                    && is_sep(lower[i + k.len()..].chars().next())
            })
        })
        .max_by_key(|t| t.key().len())
        .copied()
}

/// A size as printed (`14.2474`, `GiB`): its bytes, rounded to the
/// nearest, and half its last printed digit in bytes (the rounding).
pub(crate) fn size(number: &str, unit: &str) -> Option<(Bytes, u64)> {
    let number = number.trim().replace(',', "");
    let mult: u64 = match unit.trim() {
        "B" | "bytes" | "byte" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    };
    let d = Decimal::parse(&number).filter(|d| !d.negative)?;
    let doubled = d.times_floor(mult.checked_mul(2)?)?;
    let bytes = u128::from(u64::try_from(doubled.div_ceil(2)).ok()?);
    let decimals = number.split_once('.').map_or(0, |(_, f)| f.len());
    let step = u32::try_from(decimals)
        .ok()
        .and_then(|k| 10u128.checked_pow(k))?;
    // The whole bytes the printed figure can stand for: `N / step` units
    // rounded to its last digit covers ((2N ∓ 1) / 2step) units, and the
    // bound is the farther end from the rounded `bytes` (a tie printed
    // up, 8.875 MiB as 8.88, is 5,243 bytes from it, not 5,242).
    let n = d.times_floor(u64::try_from(step).ok()?)?;
    let (unit, span) = (u128::from(mult), 2 * step);
    let twice = n.checked_mul(2)?;
    let lo = match twice.checked_sub(1) {
        Some(m) => m.checked_mul(unit)?.div_ceil(span),
        None => 0,
    };
    let hi = twice.checked_add(1)?.checked_mul(unit)? / span;
    let pm = (bytes - lo.min(bytes)).max(hi.saturating_sub(bytes));
    Some((Bytes(u64::try_from(bytes).ok()?), u64::try_from(pm).ok()?))
}

/// A whole number as printed, thousands separated or not (`230,528`).
pub(crate) fn count(text: &str) -> Option<u64> {
    let t = text.trim().replace([',', '_'], "");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || t.len() > 19 {
        return None;
    }
    t.parse().ok()
}

/// GiB as the `capacity_gib` key writes them: `bytes / 2^30` in decimals,
/// exactly when it has at most four, else rounded to four.
pub(crate) fn gib_text(bytes: Bytes) -> String {
    let b = u128::from(bytes.get());
    let scaled = (b * 10_000 + (1 << 29)) >> 30;
    let (int, frac) = (scaled / 10_000, scaled % 10_000);
    let frac = format!("{frac:04}");
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_printed() {
        for (n, u, bytes, pm) in [
            ("144.00", "MiB", 144 << 20, (1 << 20) / 200),
            ("23.65", "GiB", 25_393_994_138, (1 << 30) / 200),
            ("0", "bytes", 0, 0),
            ("1,024", "KiB", 1 << 20, 512),
            ("5.123", "GB", 5_123_000_000, 500_000),
            // 9,306,112 bytes printed by `%.2f` as a tie rounded up.
            ("8.88", "MiB", 9_311_355, 5_243),
        ] {
            assert_eq!(size(n, u), Some((Bytes(bytes), pm)), "{n} {u}");
        }
        assert_eq!(size("-1", "GiB"), None);
        assert_eq!(size("1e999", "GiB"), None);
        assert_eq!(size("1", "parsecs"), None);
    }

    #[test]
    fn gib_texts() {
        for (b, t) in [
            (24 << 30, "24"),
            (25_393_994_138, "23.65"),
            (24_564 << 20, "23.9883"),
        ] {
            assert_eq!(gib_text(Bytes(b)), t);
        }
    }

    #[test]
    fn presets_and_file_types_by_name() {
        for (name, id) in [
            ("Qwen/Qwen3-8B", Some("qwen3-8b")),
            ("meta-llama/Llama-3.1-8B-Instruct", Some("llama3.1-8b")),
            ("Qwen/Qwen2.5-3B-Instruct-AWQ", Some("qwen2.5-3b")),
            ("/models/Qwen3-8B-Q4_K_M.gguf", Some("qwen3-8b")),
            ("google/gemma-2-27b-it", Some("gemma2-27b")),
            ("Qwen3-30B-A3B-Instruct-2507", Some("qwen3-30b-a3b")),
            ("Qwen/Qwen3-Coder-30B-A3B", None),
            ("nothing", None),
        ] {
            assert_eq!(preset_for(name).map(|p| p.id), id, "{name}");
        }
        for (name, t) in [
            ("Qwen3-8B-Q4_K_M.gguf", Some("q4_k_m")),
            ("unsloth/Qwen3-8B-GGUF:Q8_0", Some("q8_0")),
            ("model-f16.gguf", Some("f16")),
            ("Qwen3-8B", None),
        ] {
            assert_eq!(file_type_in(name).map(|t| t.key()), t, "{name}");
        }
    }
}
