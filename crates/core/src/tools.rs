//! What the page asks of its tools worker: reading a `config.json` and
//! writing the estimate as JSON. Both need a JSON library the page itself
//! does not carry (ARCHITECTURE.md, "the page stays small"): the page sends
//! a [`ToolRequest`] as [`crate::wire`] text, the worker answers with
//! [`answer`], and the page reads the [`ToolReply`]. Pure and tested
//! natively, like the rest of the core.
//!
//! Imports the importer, the codec and the estimates: it is what the
//! tools worker runs, never the page itself.

use crate::explain::group;
use crate::import;
use crate::model::hf_config::Reading;
use crate::model::presets::PRESETS;
use crate::query::{self, RawQuery};
use crate::wire::{Reader, Writer};
use crate::Estimates;

/// A request to the tools worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolRequest {
    /// Read a `config.json` text.
    Import { text: String, reading: Reading },
    /// The estimate of the page's query (as typed) as a JSON document,
    /// the same as `vramfit --json`.
    Export { query: String },
    /// Read a pasted command, config, log or message (`crate::paste`)
    /// on top of the page's query (as typed).
    Paste { text: String, query: String },
}

/// The worker's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolReply {
    /// The worker's wasm is loaded and listening (sent once, first).
    Ready,
    /// The config was read: set these keys after removing the model's
    /// ([`crate::query::model_keys`]); `summary` says what was imported.
    Imported {
        summary: String,
        changes: Vec<(String, String)>,
    },
    /// The config was not read, and why; `offer_llama` when reading it as
    /// a Llama-like decoder is a choice to offer.
    Refused { why: String, offer_llama: bool },
    /// The estimate as pretty-printed JSON.
    Exported { json: String },
    /// No estimate to export, and why.
    NotExported { why: String },
    /// The request could not be read (a page and a worker from different
    /// builds): said rather than left unanswered.
    Unreadable,
}

/// What an import came to, as the page acts on it: one reading of the
/// worker's reply, whoever asked (a pasted config, the Hub).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportOutcome {
    /// Set these keys after removing the model's ([`query::apply_import`]).
    Imported {
        summary: String,
        changes: Vec<(String, String)>,
    },
    /// The config was read and refused, and why.
    Refused { why: String, offer_llama: bool },
    /// The worker failed or answered something else.
    WorkerFailed(String),
}

impl ImportOutcome {
    /// The outcome of the worker's `reply` to an import (or the error of
    /// asking it).
    pub fn of(reply: Result<ToolReply, String>) -> ImportOutcome {
        match reply {
            Ok(ToolReply::Imported { summary, changes }) => {
                ImportOutcome::Imported { summary, changes }
            }
            Ok(ToolReply::Refused { why, offer_llama }) => {
                ImportOutcome::Refused { why, offer_llama }
            }
            Ok(
                ToolReply::Ready
                | ToolReply::Exported { .. }
                | ToolReply::NotExported { .. }
                | ToolReply::Unreadable,
            ) => ImportOutcome::WorkerFailed(
                "the import worker answered another question: reload the page".into(),
            ),
            Err(why) => ImportOutcome::WorkerFailed(why),
        }
    }
}

/// The worker's whole job: one reply per request.
pub fn answer(request: &ToolRequest) -> ToolReply {
    match request {
        ToolRequest::Import { text, reading } => import(text, *reading),
        ToolRequest::Export { query } => export(query),
        ToolRequest::Paste { text, query } => paste_reply(text, query),
    }
}

/// Sets a paste's `changes` in the form: the model's keys first removed
/// when the paste names a model (as an import does), then each key.
pub fn apply_changes(form: &mut RawQuery, changes: &[(String, String)]) {
    if changes.iter().any(|(k, _)| k == query::Key::Model.text()) {
        for k in query::model_keys() {
            form.remove(k);
        }
    }
    for (k, v) in changes {
        form.set(k, v);
    }
}

/// A paste read on top of the page's `query`, as an import's reply (the
/// page applies it as one: the model's keys replaced by the changes, so a
/// paste that names no model carries the form's own model keys), and its
/// text: what was read and from where, each measured figure beside the
/// estimate of the query the page will then hold, what was not read. The
/// lines are written here so that the page only shows them.
fn paste_reply(text: &str, query: &str) -> ToolReply {
    if is_model_config(text) {
        return import(text, Reading::AsItSays);
    }
    paste_read(crate::paste::read(text), query)
}

/// A Hugging Face `config.json` (a JSON object naming its `model_type`,
/// its `architectures` or a nested `text_config`): imported as the model,
/// as the config box always did; any other JSON is a training config.
fn is_model_config(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{')
        && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t).is_ok_and(|m| {
            ["model_type", "architectures", "text_config"]
                .iter()
                .any(|k| m.contains_key(*k))
        })
}

/// [`paste_reply`] of a picked file's bytes (refused when binary, not
/// UTF-8 or over [`crate::paste::MAX_PASTE_BYTES`]).
pub fn paste_bytes_reply(bytes: &[u8], query: &str) -> ToolReply {
    match std::str::from_utf8(bytes) {
        Ok(text) if is_model_config(text) => import(text, Reading::AsItSays),
        _ => paste_read(crate::paste::read_bytes(bytes), query),
    }
}

fn paste_read(
    read: Result<crate::paste::Read, crate::paste::PasteError>,
    query: &str,
) -> ToolReply {
    let mut read = match read {
        Ok(r) => r,
        Err(e) => {
            return ToolReply::Refused {
                why: e.to_string(),
                offer_llama: false,
            }
        }
    };
    let pairs = |r: &crate::paste::Read| -> Vec<(String, String)> {
        r.keys
            .iter()
            .map(|s| (s.key.to_string(), s.value.clone()))
            .collect()
    };
    // The model's keys go when the paste names a model (as applying it
    // does); the paste's keys are set on top by `settle_on`.
    let mut base = RawQuery::parse(query);
    apply_changes(&mut base, &pairs(&read));
    for s in &read.keys {
        base.remove(s.key);
    }
    let raw = read.settle_on(&base);
    let decoded = query::decode(&raw);
    let measured: Vec<String> = match Estimates::primary_of(&decoded.scenario) {
        Ok(e) => crate::compare::compare(&read, &e)
            .iter()
            .map(crate::compare::Row::text)
            .collect(),
        Err(e) => vec![format!("no estimate to set the figures beside: {e}")],
    };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut out = format!(
        "Read {}: {} setting{}, {} figure{} measured, {} not read.",
        read.found.join(" and "),
        read.keys.len(),
        plural(read.keys.len()),
        read.measured.len(),
        plural(read.measured.len()),
        read.unknown.len()
    );
    let read_lines = read
        .keys
        .iter()
        .map(|s| format!("{}={}  ← {}", s.key, s.value, s.from));
    let sections: [(&str, Vec<String>); 3] = [
        ("Understood, now in the form:", read_lines.collect()),
        ("Measured, beside vramfit's estimate:", measured),
        ("Not read:", read.unknown.clone()),
    ];
    for (title, lines) in sections {
        if !lines.is_empty() {
            out.push_str(&format!("\n{title}"));
            for l in lines {
                out.push_str(&format!("\n  {l}"));
            }
        }
    }
    let mut changes = Vec::new();
    if !read.keys.iter().any(|s| s.key == query::Key::Model) {
        let form = RawQuery::parse(query);
        for k in query::model_keys() {
            if let Some(v) = form.get(k) {
                changes.push((k.to_string(), v.to_string()));
            }
        }
    }
    changes.extend(pairs(&read));
    ToolReply::Imported {
        summary: out,
        changes,
    }
}

/// The reply to the first `bytes` of a GGUF file named `name` (its header
/// read: the model and the file's keys, as an import's changes), or
/// `Err(at_least)`: read that many bytes from the file's start and ask
/// again. The tools worker reads the file (a picked file's slices, a Hub
/// file's ranges) and asks this.
pub fn gguf_reply(bytes: &[u8], name: &str) -> Result<ToolReply, u64> {
    let imp = match import::gguf(bytes, name) {
        Ok(imp) => imp,
        Err(import::GgufImportError::NeedMore { at_least }) => return Err(at_least),
        Err(import::GgufImportError::Refused(why)) => {
            return Ok(ToolReply::Refused {
                why: format!("{}: {why}", name_shown(name)),
                offer_llama: false,
            })
        }
    };
    let preset = PRESETS.iter().find(|p| p.arch == imp.model.arch);
    let file_type = imp
        .file_keys
        .iter()
        .find(|(k, _)| *k == query::Key::Weights)
        .map(|(_, v)| format!(" {v}"))
        .unwrap_or_default();
    let summary = format!(
        "Read {}'s header: `{}`{file_type}, {} parameters{}.",
        name_shown(name),
        imp.model.model_type,
        group(imp.model.arch.params()),
        preset
            .map(|p| format!(", the {} preset", p.name))
            .unwrap_or_default(),
    );
    let changes = imp
        .model
        .changes()
        .into_iter()
        .chain(imp.file_keys)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    Ok(ToolReply::Imported { summary, changes })
}

/// A file's name in a message: whole, as the link records it (clipped only
/// past what a link takes).
pub fn name_shown(name: &str) -> String {
    crate::clip::clip(name, crate::infer::local::read::MAX_NAME)
}

fn import(text: &str, reading: Reading) -> ToolReply {
    match import::parse_as(text, reading) {
        Ok(imp) => {
            let preset = PRESETS.iter().find(|p| p.arch == imp.arch);
            let mut summary = format!(
                "Imported `{}`: {} parameters{}{}.",
                imp.model_type,
                group(imp.arch.params()),
                preset
                    .map(|p| format!(", the {} preset", p.name))
                    .unwrap_or_default(),
                if imp.assumed.is_some() {
                    ", estimated as a Llama-like decoder (your choice)"
                } else {
                    ""
                }
            );
            for note in &imp.notes {
                summary.push_str(&format!(" Note: {note}."));
            }
            let changes = imp
                .changes()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            ToolReply::Imported { summary, changes }
        }
        Err(e) => ToolReply::Refused {
            why: e.to_string(),
            offer_llama: e.can_read_as_llama(),
        },
    }
}

/// The document `vramfit --json` prints for `query`, with the notes the
/// decoder made (a query with errors is estimated as the page shows it:
/// each wrong field at its default).
fn export(query: &str) -> ToolReply {
    let decoded = query::decode(&RawQuery::parse(query));
    let all = Estimates::new(&decoded.scenario);
    match all.document(&decoded.scenario) {
        Ok(mut doc) => {
            doc.notes
                .extend(decoded.notes.iter().map(ToString::to_string));
            ToolReply::Exported {
                json: doc.to_json(),
            }
        }
        Err(e) => ToolReply::NotExported { why: e.to_string() },
    }
}

fn reading_key(r: Reading) -> &'static str {
    match r {
        Reading::AsItSays => "as-it-says",
        Reading::AsLlama => "as-llama",
    }
}

impl ToolRequest {
    pub fn encode(&self) -> String {
        match self {
            ToolRequest::Import { text, reading } => Writer::new()
                .text("import")
                .text(reading_key(*reading))
                .text(text),
            ToolRequest::Export { query } => Writer::new().text("export").text(query),
            ToolRequest::Paste { text, query } => {
                Writer::new().text("paste").text(query).text(text)
            }
        }
        .finish()
    }

    /// `None` for anything that is not a request.
    pub fn decode(message: &str) -> Option<ToolRequest> {
        let mut r = Reader::new(message);
        let request = match r.text()? {
            "import" => {
                let reading = match r.text()? {
                    "as-it-says" => Reading::AsItSays,
                    "as-llama" => Reading::AsLlama,
                    _ => return None,
                };
                let text = r.text()?.to_string();
                ToolRequest::Import { text, reading }
            }
            "export" => ToolRequest::Export {
                query: r.text()?.to_string(),
            },
            "paste" => {
                let query = r.text()?.to_string();
                let text = r.text()?.to_string();
                ToolRequest::Paste { text, query }
            }
            _ => return None,
        };
        r.done(request)
    }
}

impl ToolReply {
    pub fn encode(&self) -> String {
        match self {
            ToolReply::Ready => Writer::new().text("ready"),
            ToolReply::Imported { summary, changes } => {
                let mut w = Writer::new()
                    .text("imported")
                    .text(summary)
                    .num(changes.len());
                for (k, v) in changes {
                    w = w.text(k).text(v);
                }
                w
            }
            ToolReply::Refused { why, offer_llama } => {
                Writer::new().text("refused").text(why).num(offer_llama)
            }
            ToolReply::Exported { json } => Writer::new().text("exported").text(json),
            ToolReply::NotExported { why } => Writer::new().text("not-exported").text(why),
            ToolReply::Unreadable => Writer::new().text("unreadable"),
        }
        .finish()
    }

    /// `None` for anything that is not a reply.
    pub fn decode(message: &str) -> Option<ToolReply> {
        let mut r = Reader::new(message);
        let reply = match r.text()? {
            "ready" => ToolReply::Ready,
            "imported" => {
                let summary = r.text()?.to_string();
                let n: usize = r.num()?;
                // Each change is at least two empty fields ("0:0:").
                if n > message.len() / 4 {
                    return None;
                }
                let mut changes = Vec::with_capacity(n);
                for _ in 0..n {
                    changes.push((r.text()?.to_string(), r.text()?.to_string()));
                }
                ToolReply::Imported { summary, changes }
            }
            "refused" => ToolReply::Refused {
                why: r.text()?.to_string(),
                offer_llama: r.num()?,
            },
            "exported" => ToolReply::Exported {
                json: r.text()?.to_string(),
            },
            "not-exported" => ToolReply::NotExported {
                why: r.text()?.to_string(),
            },
            "unreadable" => ToolReply::Unreadable,
            _ => return None,
        };
        r.done(reply)
    }
}
