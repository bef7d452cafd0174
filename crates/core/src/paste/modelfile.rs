//! An Ollama Modelfile (`FROM`, `PARAMETER`, `ADAPTER`, ...), the
//! `/set parameter NAME VALUE` lines of an `ollama run` session and the
//! body of an API request (`/api/generate`, `/api/chat`): the model and the
//! options Ollama sizes its runner by.
//!
//! Source: Ollama fb30760 `parser/parser.go` (the instructions, case
//! insensitive, `#` comments, `"""` multi-line values), `api/types.go`
//! (`Options` and `Runner`: which parameters exist), `cmd/interactive.go`
//! (`/set parameter`).

use super::yaml::Entry;
use super::{command, shell, Collector};
use crate::query::Key;

/// What a Modelfile instruction or session parameter is to vramfit.
enum Param {
    /// Read into this key.
    Read(Key),
    /// Changes memory, not modelled: said why.
    NotRead(&'static str),
    /// Sampling and prompt settings: no effect on memory.
    NoEffect,
}

/// Ollama's options by name (`api/types.go`, `Options` and `Runner`).
fn param(name: &str) -> Option<Param> {
    Some(match name {
        "num_ctx" => Param::Read(Key::Ctx),
        "num_gpu" => Param::Read(Key::NumGpu),
        "num_batch" => {
            Param::NotRead("the batch llama-server is started with (not modelled for Ollama)")
        }
        "use_mmap" => Param::NotRead("how the weights are read into host memory (not modelled)"),
        "main_gpu" => Param::NotRead("the GPU of a one-GPU split (not modelled for Ollama)"),
        "num_thread" | "num_keep" | "seed" | "num_predict" | "top_k" | "top_p" | "min_p"
        | "typical_p" | "repeat_last_n" | "temperature" | "repeat_penalty" | "presence_penalty"
        | "frequency_penalty" | "stop" | "think" => Param::NoEffect,
        _ => return None,
    })
}

/// Whether `text` is a Modelfile: an instruction line `FROM MODEL`.
pub(crate) fn is_modelfile(text: &str) -> bool {
    text.lines()
        .any(|l| instruction(l).is_some_and(|(i, v)| i == "from" && !v.is_empty()))
}

/// A line's instruction (lower case) and its value, if it starts with one.
fn instruction(line: &str) -> Option<(String, &str)> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let lower = word.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "from"
            | "parameter"
            | "adapter"
            | "template"
            | "system"
            | "license"
            | "message"
            | "requires"
    )
    .then_some((lower, rest.trim()))
}

/// Reads a Modelfile's instructions; returns its other lines (none are
/// expected: a log pasted below it is read as a log).
pub(crate) fn read(text: &str, c: &mut Collector) -> String {
    c.found("an Ollama Modelfile");
    c.set(Key::Task, "infer", "the Modelfile");
    c.set(Key::Engine, "ollama", "the Modelfile");
    let mut rest = String::new();
    let mut in_quotes = false;
    for line in text.lines() {
        if in_quotes {
            in_quotes = !line.contains("\"\"\"");
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((ins, value)) = instruction(t) else {
            rest.push_str(line);
            rest.push('\n');
            continue;
        };
        // A `"""` value runs to the next `"""`.
        in_quotes = value.matches("\"\"\"").count() == 1;
        match ins.as_str() {
            "from" => command::ollama_model(value, c),
            "parameter" => {
                let (name, v) = value.split_once(char::is_whitespace).unwrap_or((value, ""));
                parameter(name, v.trim(), t, c);
            }
            "adapter" => c.unknown(format!(
                "{t}: a LoRA adapter on the model, not counted until its rank is given: set lora_r (and lora_targets; Ollama converts a PEFT adapter to f16) to hold it beside the weights it adapts, on their device, as llama-server (--lora) does; Ollama's own total leaves it out (its LoRA buffer line is not among those it sums)"
            )),
            _ => {}
        }
    }
    rest
}

/// `/set parameter NAME VALUE` in an `ollama run` session.
pub(crate) fn session_line(line: &str, c: &mut Collector) -> bool {
    let t = line.trim();
    let t = t.strip_prefix(">>> ").unwrap_or(t);
    let Some(rest) = t.strip_prefix("/set parameter ") else {
        return false;
    };
    c.found("an ollama run session");
    c.set(Key::Task, "infer", "the session");
    c.set(Key::Engine, "ollama", "the session");
    let rest = rest.trim();
    let (name, v) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    parameter(name, v.trim(), t, c);
    true
}

/// Ollama's server environment as its FAQ sets it (fb30760 `docs/faq.mdx`):
/// a systemd unit's `Environment="OLLAMA_X=v"` lines under `[Service]`
/// (`systemctl edit ollama.service`; several assignments a line allowed)
/// and `launchctl setenv OLLAMA_X v` (the macOS app); each read as
/// `ollama serve`'s environment. Returns whether `line` was one.
pub(crate) fn server_env_line(line: &str, c: &mut Collector) -> bool {
    let t = line.trim();
    let t = t.strip_prefix("$ ").unwrap_or(t);
    let words: Vec<String> = if let Some(rest) = t.strip_prefix("Environment=") {
        shell::split(rest).words
    } else if let Some(rest) = t.strip_prefix("launchctl setenv ") {
        match shell::split(rest).words.as_slice() {
            [k, v] => vec![format!("{k}={v}")],
            _ => return false,
        }
    } else {
        return t == "[Service]";
    };
    if !words.iter().any(|w| w.starts_with("OLLAMA_")) {
        return false;
    }
    c.found("Ollama's server environment");
    c.set(Key::Task, "infer", "the server's environment");
    c.set(Key::Engine, "ollama", "the server's environment");
    for w in &words {
        command::ollama_server_env(w, c);
    }
    true
}

/// Whether a JSON text's entries are an Ollama API request (fb30760
/// `api/types.go`, `GenerateRequest` and `ChatRequest`): a `model` with
/// `options`, a `prompt` or `messages`.
pub(crate) fn is_api_request(entries: &[Entry]) -> bool {
    let has = |p: &str| entries.iter().any(|e| e.path == p || e.path.starts_with(p));
    entries.iter().any(|e| e.path == "model")
        && (has("options.") || has("prompt") || has("messages"))
}

/// An Ollama API request's body: its model and `options` (as a
/// Modelfile's `PARAMETER`s); the request's other fields change no memory.
pub(crate) fn read_api_request(entries: &[Entry], c: &mut Collector) {
    c.found("an Ollama API request");
    c.set(Key::Task, "infer", "the request");
    c.set(Key::Engine, "ollama", "the request");
    for e in entries {
        let value = e.value.text();
        let line = format!("{}: {value}", e.path);
        match (e.path.as_str(), e.path.strip_prefix("options.")) {
            ("model", _) => command::ollama_model(&value, c),
            (_, Some(name)) => parameter(name, &value, &line, c),
            (path, None) if REQUEST_FIELDS.iter().any(|f| path.starts_with(f)) => {}
            (_, None) => c.unknown(format!(
                "{line}: not a field of Ollama's requests vramfit knows"
            )),
        }
    }
}

/// A request's fields that change no memory (`GenerateRequest`,
/// `ChatRequest`): the text, its format and streaming, how long the model
/// stays loaded, tools and images.
const REQUEST_FIELDS: &[&str] = &[
    "prompt",
    "suffix",
    "system",
    "template",
    "context",
    "messages",
    "stream",
    "raw",
    "format",
    "keep_alive",
    "images",
    "tools",
    "think",
    "truncate",
    "shift",
    "logprobs",
    "top_logprobs",
];

/// One Ollama option: read, listed as not read, or passed over.
fn parameter(name: &str, value: &str, line: &str, c: &mut Collector) {
    match param(&name.to_ascii_lowercase()) {
        Some(Param::Read(key)) => c.set(key, value, line),
        Some(Param::NotRead(why)) => c.unknown(format!("{line}: {why}")),
        Some(Param::NoEffect) => {}
        None => c.unknown(format!("{line}: not an Ollama option vramfit knows")),
    }
}
