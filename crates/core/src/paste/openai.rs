//! A request to an OpenAI-compatible server (`/v1/chat/completions`,
//! `/v1/completions`), alone or in the `curl` that sends it: vLLM,
//! llama-server and Ollama all serve that API. The URL's port names the
//! server when it is one's default (vLLM 8000, llama-server 8080, Ollama
//! 11434); the body names the model. Nothing else in a request sizes
//! memory: each server allocates at start-up (vLLM's pool of blocks,
//! llama.cpp's `n_ctx`, Ollama's runner), and a request's `max_tokens`,
//! `n` or sampling settings only use what is there.
//!
//! Source: vLLM's `vllm serve` (`--port`, 8000 by default: its "Server
//! Arguments" documentation) and its OpenAI-compatible server's request
//! fields; llama.cpp b10488 `common/common.h` (`port = 8080`) and
//! `tools/server/` (one model unless it runs as a router of several);
//! Ollama's OpenAI compatibility on its own port, 11434.

use super::yaml::Entry;
use super::{command, Collector};
use crate::query::Key;

/// The server a request's URL names by its default port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Server {
    Vllm,
    /// llama.cpp's llama-server.
    LlamaCpp,
    Ollama,
}

impl Server {
    fn of_port(port: &str) -> Option<Server> {
        match port {
            "8000" => Some(Server::Vllm),
            "8080" => Some(Server::LlamaCpp),
            "11434" => Some(Server::Ollama),
            _ => None,
        }
    }

    /// The engine key and how the request says so.
    const fn engine(self) -> (&'static str, &'static str) {
        match self {
            Server::Vllm => ("vllm", "port 8000, vllm serve's default"),
            Server::LlamaCpp => ("llamacpp", "port 8080, llama-server's default"),
            Server::Ollama => ("ollama", "port 11434, Ollama's"),
        }
    }
}

/// The API a `curl` sends its body to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    /// Ollama's own (`/api/generate`, `/api/chat`).
    Ollama,
    /// The OpenAI-compatible one, on the server the port names (if it is
    /// one's default).
    OpenAi(Option<Server>),
}

/// The OpenAI-compatible endpoints.
const PATHS: [&str; 2] = ["/v1/chat/completions", "/v1/completions"];

/// Which API a URL is, if one vramfit reads.
fn api_of(url: &str) -> Option<Api> {
    if url.contains("/api/generate") || url.contains("/api/chat") {
        return Some(Api::Ollama);
    }
    let at = PATHS.iter().find_map(|p| url.find(p))?;
    let host = url[..at].rsplit("//").next().unwrap_or_default();
    let port = host.rsplit_once(':').map(|(_, p)| p);
    Some(Api::OpenAi(port.and_then(Server::of_port)))
}

/// The JSON body of a `curl` (its `-d`, `--data` or `--data-raw`) to an
/// API vramfit reads, the way the servers' docs write requests, and which
/// API it goes to; `None` for any other text.
pub(crate) fn curl(text: &str) -> Option<(String, Api)> {
    let start = text.lines().position(|l| {
        let t = l.trim_start().trim_start_matches("$ ");
        t.starts_with("curl ")
    })?;
    let words = super::shell::split(&text.lines().skip(start).collect::<Vec<_>>().join("\n")).words;
    let api = words.iter().find_map(|w| api_of(w))?;
    let at = words
        .iter()
        .position(|w| matches!(w.as_str(), "-d" | "--data" | "--data-raw"))?;
    Some((words.get(at + 1)?.clone(), api))
}

/// Fields only the OpenAI API has at the top of a request (Ollama's own
/// API keeps sampling settings in `options`): a body without a URL that
/// has one is read as an OpenAI-compatible request.
const OPENAI_ONLY: &[&str] = &[
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "stream_options",
    "response_format",
    "seed",
    "logit_bias",
    "tool_choice",
    "user",
];

/// A request's fields that change no memory: the text, how many tokens
/// and sequences it asks for, sampling, streaming, tools, structured
/// output; vLLM's and llama-server's own sampling and caching fields.
const NO_EFFECT: &[&str] = &[
    "messages",
    "prompt",
    "suffix",
    "echo",
    "stream",
    "tools",
    "parallel_tool_calls",
    "logprobs",
    "top_logprobs",
    "best_of",
    "top_k",
    "min_p",
    "min_tokens",
    "repetition_penalty",
    "ignore_eos",
    "stop_token_ids",
    "skip_special_tokens",
    "chat_template_kwargs",
    "add_generation_prompt",
    "structured_outputs",
    "guided_json",
    "reasoning_effort",
    "priority",
    "cache_prompt",
    "n_predict",
    "n_probs",
    "id_slot",
    "grammar",
    "json_schema",
];

/// Whether a JSON body without a URL is an OpenAI-compatible request: a
/// `model`, `messages` or a `prompt`, no Ollama `options`, and a field
/// only that API has at the top.
pub(crate) fn is_request(entries: &[Entry]) -> bool {
    let has = |p: &str| entries.iter().any(|e| top(&e.path) == p);
    has("model")
        && (has("messages") || has("prompt"))
        && !has("options")
        && OPENAI_ONLY.iter().any(|f| has(f))
}

/// The top-level field an entry's path starts with (`messages[].role`:
/// `messages`).
fn top(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

/// An OpenAI-compatible request: the engine its port names, the model its
/// body names (a Hub id for vLLM, Ollama's name for Ollama; llama-server
/// serves the model it started with, so a name there is not read).
pub(crate) fn read(entries: &[Entry], server: Option<Server>, c: &mut Collector) {
    c.found("an OpenAI-compatible request");
    c.set(Key::Task, "infer", "the request");
    match server {
        Some(s) => {
            let (engine, why) = s.engine();
            c.set(Key::Engine, engine, why);
        }
        None => c.unknown(
            "the server: not named by a default port (vLLM 8000, llama-server 8080, Ollama 11434); estimated with engine= as given (or its default)".into(),
        ),
    }
    for e in entries {
        let value = e.value.text();
        let field = top(&e.path);
        match (field, server) {
            ("model", Some(Server::LlamaCpp)) => c.unknown(format!(
                "model: {value}: llama-server serves the model it was started with (-m), not the one a request names (but as a router of several)"
            )),
            ("model", Some(Server::Ollama)) => command::ollama_model(&value, c),
            ("model", Some(Server::Vllm) | None) => command::hub_model(&value, c),
            (f, _) if OPENAI_ONLY.contains(&f) || NO_EFFECT.contains(&f) => {}
            (_, _) => c.unknown(format!(
                "{}: {value}: not a field of OpenAI-compatible requests vramfit knows",
                e.path
            )),
        }
    }
}
