//! Commands as published: each program's flags, one table per program,
//! each flag to the query key that says the same thing.
//!
//! - llama.cpp: `common/arg.cpp` (the flags and their aliases at b10488,
//!   the build vramfit models): `llama-server`, `llama-cli`, `llama-bench`.
//! - vLLM: `vllm/engine/arg_utils.py` (`EngineArgs.add_cli_args`; its
//!   `FlexibleArgumentParser` takes `--max_model_len` for
//!   `--max-model-len`): `vllm serve MODEL`, or
//!   `python -m vllm.entrypoints.openai.api_server --model MODEL`.
//! - Ollama: `ollama run MODEL[:TAG]`, and `ollama serve` with its
//!   environment (`envconfig/config.go`: `OLLAMA_NUM_PARALLEL`,
//!   `OLLAMA_FLASH_ATTENTION`, `OLLAMA_KV_CACHE_TYPE`,
//!   `OLLAMA_CONTEXT_LENGTH`; `cmd/cmd.go` lists them for `serve`, and
//!   for `run` only `OLLAMA_HOST`, `OLLAMA_EDITOR`, `OLLAMA_NOHISTORY`:
//!   set before `ollama run` they reach the client, not the server, and
//!   are listed as not applied).
//! - mlx-lm: `mlx_lm/generate.py`'s arguments.
//! - `docker run` (or `podman run`) of vLLM's `vllm/vllm-openai` image,
//!   llama.cpp's `llama.cpp:server*` images or Ollama's `ollama/ollama`
//!   (whose command is `serve`: its `Dockerfile`): Docker's options passed over,
//!   `-e` / `--env` read as the environment, the image's arguments as its
//!   engine's; `docker exec [options] CONTAINER` before one of the
//!   commands above.
//! - Training: `accelerate launch` (`accelerate/commands/launch.py`),
//!   `torchrun`, `deepspeed`, `trl sft`, `python script.py`: the
//!   launcher's own flags, then the script's `--name value` arguments read
//!   as a config's fields (`super::config`).

use super::yaml::{Entry, Value};
use super::{file_type_in, gib_text, preset_for, shell, Collector};
use crate::query::Key;
use crate::units::Bytes;

/// What a flag sets.
#[derive(Clone, Copy)]
enum To {
    /// Its value, as the key takes it.
    Key(Key),
    /// Its value, rewritten (or refused: `None`).
    Map(Key, fn(&str) -> Option<String>),
    /// No value: the key is set to this.
    Switch(Key, &'static str),
    /// A value when the next word is one of `map`'s, else a switch.
    Optional(Key, &'static str, fn(&str) -> Option<String>),
    /// Each occurrence's value joined by commas.
    Append(Key),
    /// The model: a path, a file name or a Hub id.
    Model,
    /// A Hugging Face repository (`owner/name[:quant]`) of GGUF files.
    HfRepo,
    /// vLLM's `--dtype`: the weights' dtype unless a quantization says.
    Dtype,
    /// A setting that changes memory vramfit does not size: its value
    /// taken, and listed as unknown with what it costs.
    Unsized(&'static str),
}

struct Flag {
    names: &'static [&'static str],
    to: To,
}

const fn flag(names: &'static [&'static str], to: To) -> Flag {
    Flag { names, to }
}

fn lower(v: &str) -> Option<String> {
    Some(v.to_ascii_lowercase())
}

fn on_off(v: &str) -> Option<String> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "enabled" => Some("on".into()),
        "off" | "0" | "false" | "disabled" => Some("off".into()),
        "auto" => Some("auto".into()),
        _ => None,
    }
}

fn bool_of(v: &str) -> Option<String> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Some("true".into()),
        "off" | "0" | "false" | "no" => Some("false".into()),
        _ => None,
    }
}

/// `-ngl all` / `auto` / `999`: every layer (the key left out says so).
fn layers(v: &str) -> Option<String> {
    match v {
        "all" | "auto" => None,
        n if n.len() >= 3 && n.bytes().all(|b| b == b'9') => None,
        n => Some(n.to_string()),
    }
}

fn split_list(v: &str) -> Option<String> {
    Some(v.replace('/', ","))
}

/// llama.cpp's flags (`common/arg.cpp`).
/// llama.cpp b10488's LoRA adapter (`llama_adapter_lora_init_impl`:
/// each pair in the buffer of the weight it adapts; measured,
/// `scripts/measure/llamacpp/lora/NOTES.md`).
const LORA_UNSIZED: &str = "a LoRA adapter, not counted until its rank is given: set lora_r (and lora_targets, lora_type: convert_lora_to_gguf writes f32 unless told) to hold it beside the weights it adapts, on their device; --fit does not count it";

const LLAMA: &[Flag] = &[
    flag(&["-m", "--model"], To::Model),
    flag(&["-hf", "-hfr", "--hf-repo"], To::HfRepo),
    flag(&["-hff", "--hf-file"], To::Model),
    flag(&["-c", "--ctx-size"], To::Key(Key::Ctx)),
    flag(&["--lora", "--lora-scaled"], To::Unsized(LORA_UNSIZED)),
    flag(&["-b", "--batch-size"], To::Key(Key::NBatch)),
    flag(&["-ub", "--ubatch-size"], To::Key(Key::NUbatch)),
    flag(
        &["-ngl", "--gpu-layers", "--n-gpu-layers"],
        To::Map(Key::NGpuLayers, layers),
    ),
    flag(&["-ctk", "--cache-type-k"], To::Map(Key::CacheTypeK, lower)),
    flag(&["-ctv", "--cache-type-v"], To::Map(Key::CacheTypeV, lower)),
    flag(
        &["-fa", "--flash-attn"],
        To::Optional(Key::FlashAttn, "on", on_off),
    ),
    flag(&["-np", "--parallel"], To::Key(Key::NParallel)),
    flag(
        &["-kvu", "--kv-unified"],
        To::Switch(Key::KvUnified, "true"),
    ),
    flag(
        &["-no-kvu", "--no-kv-unified"],
        To::Switch(Key::KvUnified, "false"),
    ),
    flag(&["--swa-full"], To::Switch(Key::SwaFull, "true")),
    flag(
        &["-ts", "--tensor-split"],
        To::Map(Key::TensorSplit, split_list),
    ),
    flag(&["-sm", "--split-mode"], To::Map(Key::SplitMode, lower)),
    flag(&["-mg", "--main-gpu"], To::Key(Key::MainGpu)),
    flag(
        &["-ot", "--override-tensor"],
        To::Append(Key::OverrideTensor),
    ),
    flag(&["-ncmoe", "--n-cpu-moe"], To::Key(Key::NCpuMoe)),
    flag(&["-fit", "--fit"], To::Optional(Key::Fit, "true", bool_of)),
];

fn vllm_quant(v: &str) -> Option<String> {
    Some(
        match v.to_ascii_lowercase().as_str() {
            "awq" | "awq_marlin" => "awq",
            "gptq" | "gptq_marlin" => "gptq",
            "fp8" => "fp8",
            "bitsandbytes" => "nf4",
            "mxfp4" => "mxfp4",
            _ => return None,
        }
        .into(),
    )
}

/// `--speculative-config`'s JSON (or the Python dict of a log's
/// non-default args): the draft tokens of an MTP method (`mtp` and its
/// aliases `qwen3_5_mtp`, `qwen3_next_mtp`, ...: `config/speculative.py:
/// 1246-1250`), 1 when not given (the checkpoint's one MTP layer, vLLM's
/// `n_predict`); another method (a draft model, EAGLE, n-gram) is not
/// modelled.
fn mtp_tokens(v: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(&v.replace('\'', "\"")).ok()?;
    let method = json.get("method")?.as_str()?;
    if method != "mtp" && !method.ends_with("_mtp") {
        return None;
    }
    let k = match json.get("num_speculative_tokens") {
        None => 1,
        Some(n) => n.as_u64()?,
    };
    Some(k.to_string())
}

/// `--kv-cache-memory` in bytes (`4805904446`), as the key's GiB.
fn bytes_to_gib(v: &str) -> Option<String> {
    super::count(v).map(|b| gib_text(Bytes(b)))
}

/// vLLM's engine arguments (`vllm/engine/arg_utils.py`), `_` written `-`,
/// with the abbreviations `EngineArgs.add_cli_args` gives them (`-tp`,
/// `-pp`, `-dp`, `-ep`, `-q`); its others (`-dcp`, `-pcp`, `-O`, the
/// `-dp*` cluster flags) set nothing vramfit models and are unknown.
const VLLM: &[Flag] = &[
    flag(&["--model"], To::Model),
    flag(&["--max-model-len"], To::Key(Key::Ctx)),
    flag(
        &["--gpu-memory-utilization"],
        To::Key(Key::GpuMemoryUtilization),
    ),
    flag(
        &["--tensor-parallel-size", "-tp"],
        To::Key(Key::TensorParallelSize),
    ),
    flag(
        &["--pipeline-parallel-size", "-pp"],
        To::Key(Key::PipelineParallelSize),
    ),
    flag(
        &["--data-parallel-size", "-dp"],
        To::Key(Key::DataParallelSize),
    ),
    flag(
        &["--enable-expert-parallel", "-ep"],
        To::Switch(Key::EnableExpertParallel, "true"),
    ),
    flag(
        &["--enable-prefix-caching"],
        To::Switch(Key::EnablePrefixCaching, "true"),
    ),
    flag(
        &["--no-enable-prefix-caching"],
        To::Switch(Key::EnablePrefixCaching, "false"),
    ),
    flag(
        &["--mamba-cache-dtype"],
        To::Map(Key::MambaCacheDtype, lower),
    ),
    flag(
        &["--mamba-ssm-cache-dtype"],
        To::Map(Key::MambaSsmCacheDtype, lower),
    ),
    flag(&["--kv-cache-dtype"], To::Map(Key::KvDtype, lower)),
    flag(&["--max-num-seqs"], To::Key(Key::MaxNumSeqs)),
    flag(
        &["--max-num-batched-tokens"],
        To::Key(Key::MaxNumBatchedTokens),
    ),
    flag(&["--block-size"], To::Key(Key::BlockSize)),
    flag(&["--enforce-eager"], To::Switch(Key::EnforceEager, "true")),
    flag(&["--cpu-offload-gb"], To::Key(Key::CpuOffloadGb)),
    flag(
        &["--kv-cache-memory", "--kv-cache-memory-bytes"],
        To::Map(Key::KvCacheMemory, bytes_to_gib),
    ),
    flag(&["--quantization", "-q"], To::Map(Key::Weights, vllm_quant)),
    flag(
        &["--speculative-config"],
        To::Map(Key::NumSpeculativeTokens, mtp_tokens),
    ),
    flag(&["--dtype"], To::Dtype),
];

/// mlx-lm's `generate` arguments (`mlx_lm/generate.py`).
const MLX: &[Flag] = &[
    flag(&["--model"], To::Model),
    flag(&["--max-tokens", "-m"], To::Key(Key::New)),
    flag(&["--max-kv-size"], To::Key(Key::MaxKvSize)),
    flag(&["--kv-bits"], To::Key(Key::KvBits)),
    flag(&["--kv-group-size"], To::Key(Key::KvGroupSize)),
    flag(&["--prefill-step-size"], To::Key(Key::PrefillStepSize)),
];

/// A program vramfit reads the command of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Program {
    Llama,
    Vllm,
    /// `ollama run`: the client.
    Ollama,
    /// `ollama serve`: the server, whose environment sets how it loads.
    OllamaServe,
    Mlx,
    Train,
}

impl Program {
    fn words(self) -> &'static str {
        match self {
            Program::Llama => "a llama.cpp command",
            Program::Vllm => "a vllm serve command",
            Program::Ollama => "an ollama run command",
            Program::OllamaServe => "an ollama serve command",
            Program::Mlx => "an mlx_lm command",
            Program::Train => "a training launch command",
        }
    }

    fn engine(self) -> Option<&'static str> {
        match self {
            Program::Llama => Some("llamacpp"),
            Program::Vllm => Some("vllm"),
            Program::Ollama | Program::OllamaServe => Some("ollama"),
            Program::Mlx => Some("mlx"),
            Program::Train => None,
        }
    }

    fn flags(self) -> &'static [Flag] {
        match self {
            Program::Llama => LLAMA,
            Program::Vllm => VLLM,
            Program::Mlx => MLX,
            Program::Ollama | Program::OllamaServe | Program::Train => &[],
        }
    }
}

/// Reads every command in `text` (a line starting with a program, `$ `
/// or `# ` prompts allowed, with its `\`-continued lines); returns the
/// other lines for the log reader.
pub(crate) fn read_commands(text: &str, c: &mut Collector) -> String {
    let mut rest = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(bare) = command_start(line) else {
            rest.push_str(line);
            rest.push('\n');
            continue;
        };
        let mut command = bare.to_string();
        while command.trim_end().ends_with('\\') {
            match lines.next() {
                Some(next) => {
                    // A `\` with spaces after it still continues the
                    // line as its author meant (copied commands gain them).
                    command.truncate(command.trim_end().len());
                    command.push('\n');
                    command.push_str(next);
                }
                None => break,
            }
        }
        let words = shell::split(&command);
        if words.unclosed_quote {
            c.unknown("a quote is not closed in the command: read to its end".into());
        }
        read_command(&words.words, c);
    }
    rest
}

/// The command a line starts, after a shell prompt (`$ `, `# `, `> `,
/// `user@host:/dir# `) if it has one.
fn command_start(line: &str) -> Option<&str> {
    let bare = line.trim_start();
    let starts = |s: &str| program(&shell::split(s).words).is_some();
    if starts(bare) {
        return Some(bare);
    }
    ["$ ", "# ", "> "]
        .iter()
        .filter_map(|p| bare.find(p).map(|i| &bare[i + p.len()..]))
        .find(|rest| starts(rest))
}

/// The program a command runs, and where its own arguments start.
fn program(words: &[String]) -> Option<(Program, usize)> {
    let mut i = 0;
    // Environment assignments and wrappers before the program.
    while let Some(w) = words.get(i) {
        let is_env = w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        });
        if is_env || matches!(w.as_str(), "sudo" | "env" | "nohup" | "time" | "exec") {
            i += 1;
        } else {
            break;
        }
    }
    let base = |w: &str| {
        w.rsplit(['/', '\\'])
            .next()
            .unwrap_or(w)
            .trim_end_matches(".exe")
            .to_string()
    };
    let w0 = base(words.get(i)?);
    let w1 = words.get(i + 1).map(String::as_str);
    let w2 = words.get(i + 2).map(String::as_str);
    match (w0.as_str(), w1, w2) {
        ("llama-server" | "llama-cli" | "llama-bench" | "llama-run" | "llama-mtmd-cli", _, _) => {
            Some((Program::Llama, i + 1))
        }
        ("vllm", Some("serve"), _) => Some((Program::Vllm, i + 2)),
        ("python" | "python3", Some("-m"), Some(m)) if m.starts_with("vllm.entrypoints") => {
            Some((Program::Vllm, i + 3))
        }
        ("ollama", Some("run"), _) => Some((Program::Ollama, i + 2)),
        ("ollama", Some("serve"), _) => Some((Program::OllamaServe, i + 2)),
        ("mlx_lm.generate" | "mlx_lm.server" | "mlx_lm.chat", _, _) => Some((Program::Mlx, i + 1)),
        ("python" | "python3", Some("-m"), Some(m)) if m.starts_with("mlx_lm") => {
            let skip = usize::from(matches!(
                words.get(i + 3).map(String::as_str),
                Some("generate" | "server" | "chat")
            ));
            Some((Program::Mlx, i + 3 + skip))
        }
        ("accelerate", Some("launch"), _) => Some((Program::Train, i + 2)),
        ("torchrun" | "deepspeed", _, _) => Some((Program::Train, i + 1)),
        ("trl", Some("sft" | "dpo" | "grpo" | "kto" | "reward"), _) => {
            Some((Program::Train, i + 2))
        }
        ("python" | "python3", Some(script), _) if script.ends_with(".py") => {
            Some((Program::Train, i + 1))
        }
        ("docker" | "podman", Some("run"), _) => docker_image(words, i + 2),
        // `docker exec -it ollama ollama run llama3.1:8b` (Ollama's Docker
        // instructions): the program after the container's name.
        ("docker" | "podman", Some("exec"), _) => {
            let name = docker_options(words, i + 2);
            let (prog, start) = program(words.get(name + 1..)?)?;
            Some((prog, name + 1 + start))
        }
        _ => None,
    }
}

/// `docker run`'s options that take a value as the next word (Docker's
/// `docker run --help`).
const DOCKER_VALUED: &[&str] = &[
    "-v",
    "--volume",
    "-p",
    "--publish",
    "-e",
    "--env",
    "--env-file",
    "--name",
    "--runtime",
    "--ipc",
    "--gpus",
    "--shm-size",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "--entrypoint",
    "--device",
    "--ulimit",
    "--mount",
    "-u",
    "--user",
    "--restart",
    "-l",
    "--label",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "--pull",
    "-h",
    "--hostname",
    "--add-host",
    "--cap-add",
];

/// The engine a `docker run` starts, by its image, and where the engine's
/// own arguments start (after the image): vLLM's `vllm/vllm-openai`
/// (whose entrypoint serves the model as `vllm serve` does: vLLM's
/// "Using Docker" documentation) and llama.cpp's `llama.cpp:server*`
/// images (`llama-server`: llama.cpp's `docs/docker.md`).
fn docker_image(words: &[String], from: usize) -> Option<(Program, usize)> {
    let j = docker_options(words, from);
    let image = words.get(j)?.to_ascii_lowercase();
    let prog = if image.contains("vllm/vllm-openai") {
        Program::Vllm
    } else if image.contains("llama.cpp:server") {
        Program::Llama
    } else if image.starts_with("ollama/ollama") || image.contains("/ollama/ollama") {
        Program::OllamaServe
    } else {
        return None;
    };
    Some((prog, j + 1))
}

/// Where Docker's options starting at `from` end: the image's (`run`) or
/// the container's (`exec`) place.
fn docker_options(words: &[String], from: usize) -> usize {
    let mut j = from;
    while let Some(w) = words.get(j).filter(|w| w.starts_with('-')) {
        j += if !w.contains('=') && DOCKER_VALUED.contains(&w.as_str()) {
            2
        } else {
            1
        };
    }
    j
}

/// The environment a command sets before its program: the assignments
/// before it, and `docker run`'s or `docker exec`'s `-e` / `--env` values
/// (Docker's other options are not the program's environment).
fn env_words(before: &[String]) -> Vec<&str> {
    let docker = before
        .iter()
        .position(|w| matches!(w.as_str(), "docker" | "podman"));
    let Some(at) = docker else {
        return before.iter().map(String::as_str).collect();
    };
    let mut out: Vec<&str> = before[..at].iter().map(String::as_str).collect();
    let mut words = before[at..].iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "-e" | "--env" => out.extend(words.next().map(String::as_str)),
            w => out.extend(w.strip_prefix("--env=")),
        }
    }
    out
}

fn read_command(words: &[String], c: &mut Collector) {
    let Some((prog, start)) = program(words) else {
        return;
    };
    c.found(prog.words());
    for w in env_words(&words[..start]) {
        env(w, prog, c);
    }
    if let Some(engine) = prog.engine() {
        c.set(Key::Task, "infer", "the command");
        c.set(Key::Engine, engine, prog.words());
    } else {
        c.set(Key::Task, "train", "the command");
    }
    match prog {
        Program::Train => return train(&words[start..], c),
        Program::Ollama => {
            if let Some(m) = words.get(start) {
                model(m, prog, c);
            }
            for w in words.iter().skip(start + 1) {
                c.unknown(format!(
                    "{w}: ollama run's prompt or flag (no effect on memory)"
                ));
            }
            return;
        }
        Program::OllamaServe => {
            // The image's command (`serve`) or `ollama serve`'s flags.
            for w in words.iter().skip(start) {
                if w != "serve" {
                    c.unknown(format!(
                        "{w}: an argument of ollama serve vramfit does not read"
                    ));
                }
            }
            return;
        }
        Program::Llama | Program::Vllm | Program::Mlx => {}
    }
    flags(&words[start..], prog, c);
}

/// `--flag value`, `--flag=value` and switches by the program's table;
/// a word that is no flag's value is the model (vLLM) or unknown.
fn flags(words: &[String], prog: Program, c: &mut Collector) {
    let mut appended: Vec<(Key, String)> = Vec::new();
    c.quantized |= words.iter().any(|w| {
        let name = w.split('=').next().unwrap_or(w).replace('_', "-");
        name == "--quantization" || name == "-q"
    }) && prog == Program::Vllm;
    let mut i = 0;
    while let Some(word) = words.get(i) {
        i += 1;
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) if n.starts_with('-') => (n.to_string(), Some(v.to_string())),
            _ => (word.clone(), None),
        };
        if !name.starts_with('-') || is_number(&name) {
            if prog == Program::Vllm && i == 1 {
                model(word, prog, c);
            } else {
                c.unknown(format!("{word}: an argument vramfit does not read"));
            }
            continue;
        }
        let norm = if prog == Program::Vllm {
            name.replace('_', "-")
        } else {
            name.clone()
        };
        let Some(f) = prog
            .flags()
            .iter()
            .find(|f| f.names.contains(&norm.as_str()))
        else {
            // An unknown flag: its value, if the next word is one, with it.
            let value = inline.or_else(|| {
                takes_next(words.get(i)).then(|| {
                    i += 1;
                    words[i - 1].clone()
                })
            });
            let shown = value.map_or(name.clone(), |v| format!("{name} {v}"));
            c.unknown(format!(
                "{shown}: not read (no memory setting vramfit models)"
            ));
            continue;
        };
        let value = |i: &mut usize| {
            inline.clone().or_else(|| {
                let v = words.get(*i).cloned();
                *i += 1;
                v
            })
        };
        match f.to {
            To::Switch(k, v) => c.set(k, v, &name),
            To::Optional(k, default, map) => {
                let next = inline.clone().or_else(|| words.get(i).cloned());
                match next.as_deref().and_then(map) {
                    Some(v) => {
                        if inline.is_none() {
                            i += 1;
                        }
                        c.set(k, &v, &format!("{name} {}", next.unwrap_or_default()));
                    }
                    None => c.set(k, default, &name),
                }
            }
            To::Unsized(why) => {
                let shown = value(&mut i).map_or(name.clone(), |v| format!("{name} {v}"));
                c.unknown(format!("{shown}: {why}"));
            }
            to
            @ (To::Key(_) | To::Map(..) | To::Append(_) | To::Model | To::HfRepo | To::Dtype) => {
                let Some(v) = value(&mut i) else {
                    c.unknown(format!("{name}: no value after it"));
                    continue;
                };
                valued(to, &name, &v, prog, c, &mut appended);
            }
        }
    }
    for (k, v) in appended {
        c.set(k, &v, k.text());
    }
}

fn valued(
    to: To,
    name: &str,
    v: &str,
    prog: Program,
    c: &mut Collector,
    appended: &mut Vec<(Key, String)>,
) {
    let from = format!("{name} {v}");
    match to {
        To::Key(k) => c.set(k, v, &from),
        To::Map(k, map) => match map(v) {
            Some(m) => c.set(k, &m, &from),
            None if k == Key::NGpuLayers => {}
            None => c.unknown(format!("{from}: not a value vramfit models for {k}")),
        },
        To::Append(k) => match appended.iter_mut().find(|(a, _)| *a == k) {
            Some((_, s)) => {
                s.push(',');
                s.push_str(v);
            }
            None => appended.push((k, v.to_string())),
        },
        To::Model => model(v, prog, c),
        To::HfRepo => {
            let (repo, quant) = v.split_once(':').unwrap_or((v, ""));
            let repo = repo.trim_end_matches("-GGUF").trim_end_matches("-gguf");
            model(repo, prog, c);
            if let Some(t) = file_type_in(quant) {
                c.set(Key::Weights, t.key(), &from);
            }
        }
        To::Dtype => {
            let w = match v {
                "bfloat16" => "bf16",
                "float16" | "half" => "fp16",
                "float32" | "float" => "fp32",
                "auto" => return,
                _ => return c.unknown(format!("{from}: not a dtype vramfit models")),
            };
            // `--dtype` is the activations' and unquantized weights'
            // dtype: the weights' only when nothing says they are
            // quantized (a `--quantization` flag anywhere, or the name).
            if c.has(Key::Weights) || c.quantized {
                c.unknown(format!(
                    "{from}: the quantized weights' compute dtype (not read)"
                ));
            } else {
                c.set(Key::Weights, w, &from);
            }
        }
        To::Switch(..) | To::Optional(..) | To::Unsized(_) => {}
    }
}

/// vLLM's `non-default args: {'max_model_len': 32768, ...}` line
/// (`entrypoints/utils.py`, `log_non_default_args`): the engine
/// arguments it was started with, read as flags.
pub(crate) fn non_default_args(line: &str, c: &mut Collector) {
    let Some(open) = line.find('{') else {
        return;
    };
    let body = line[open + 1..].trim_end();
    let body = body.strip_suffix('}').unwrap_or(body);
    let mut words = Vec::new();
    for item in top_level(body) {
        let Some((k, v)) = item.split_once(':') else {
            continue;
        };
        let k = k.trim().trim_matches(QUOTES);
        let v = v.trim().trim_matches(QUOTES);
        if k == "model_tag" {
            continue;
        }
        // A switch turned off, where vLLM has its `--no-` form.
        let off = format!("--no-{}", k.replace('_', "-"));
        let negated = VLLM.iter().any(|f| f.names.contains(&off.as_str()));
        match v {
            "True" => words.push(format!("--{k}")),
            "False" if negated => words.push(off),
            "False" | "None" => c.unknown(format!("{k}: {v} (non-default args)")),
            _ => {
                words.push(format!("--{k}"));
                words.push(v.to_string());
            }
        }
    }
    flags(&words, Program::Vllm, c);
}

/// The quotes a Python repr's strings open with: `'` and `"` (the second
/// written as an escape, which line-counting tools that take a `"` for a
/// string's start read correctly).
const QUOTES: [char; 2] = ['\'', '\x22'];

/// The comma-separated items of a Python repr at its top level (commas
/// inside brackets, parentheses or quotes kept).
fn top_level(body: &str) -> Vec<&str> {
    let (mut items, mut depth, mut quote, mut start) = (Vec::new(), 0i32, None, 0);
    for (i, ch) in body.char_indices() {
        match (quote, ch) {
            (Some(q), ch) if ch == q => quote = None,
            (Some(_), _) => {}
            (None, ch) if QUOTES.contains(&ch) => quote = Some(ch),
            (None, '{' | '[' | '(') => depth += 1,
            (None, '}' | ']' | ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            (None, _) => {}
        }
    }
    items.push(&body[start..]);
    items
}

/// vLLM's `Initializing a V1 LLM engine (vX) with config: model='…',
/// speculative_config=SpeculativeConfig(method='mtp', …,
/// num_spec_tokens=K), …, max_seq_len=N, …` (`v1/engine/core.py`), which
/// a log has where its non-default args are cut: the settings vramfit has
/// keys for, read as their flags; the config's other fields (dozens, most
/// at their defaults) counted once as not read.
pub(crate) fn engine_config(line: &str, c: &mut Collector) {
    let Some((_, body)) = line.split_once("with config: ") else {
        return;
    };
    let (mut words, mut other) = (Vec::new(), 0);
    for item in top_level(body) {
        let Some((k, v)) = item.split_once('=') else {
            other += 1;
            continue;
        };
        let (k, v) = (k.trim(), v.trim().trim_matches(QUOTES));
        let flag = match (k, v) {
            ("model", _) => "--model",
            ("max_seq_len", _) => "--max-model-len",
            ("tensor_parallel_size", _) => "--tensor-parallel-size",
            ("pipeline_parallel_size", _) => "--pipeline-parallel-size",
            ("data_parallel_size", _) => "--data-parallel-size",
            ("kv_cache_dtype", "auto") | ("quantization", "None") => continue,
            ("kv_cache_dtype", _) => "--kv-cache-dtype",
            ("quantization", _) => "--quantization",
            ("enable_prefix_caching", "True") => {
                words.push("--enable-prefix-caching".to_string());
                continue;
            }
            ("enable_prefix_caching", _) => {
                words.push("--no-enable-prefix-caching".to_string());
                continue;
            }
            ("speculative_config", "None") => continue,
            ("speculative_config", spec) => {
                match speculative_json(spec) {
                    Some(json) => words.extend(["--speculative-config".to_string(), json]),
                    None => c.unknown(format!(
                        "speculative_config={spec}: its method or draft tokens are not in the line (not read)"
                    )),
                }
                continue;
            }
            _ => {
                other += 1;
                continue;
            }
        };
        words.push(flag.to_string());
        words.push(v.to_string());
    }
    flags(&words, Program::Vllm, c);
    if other > 0 {
        c.unknown(format!(
            "{other} other fields of vLLM's engine config (not read)"
        ));
    }
}

/// `SpeculativeConfig(method='mtp', model='…', num_spec_tokens=3)` as the
/// `--speculative-config` JSON [`mtp_tokens`] reads; `None` when the
/// method or the resolved draft tokens are missing (a cut line: never
/// read as the CLI's default of one).
fn speculative_json(repr: &str) -> Option<String> {
    let inner = repr
        .trim_start_matches("SpeculativeConfig(")
        .trim_end_matches(')');
    let (mut method, mut tokens) = (None, None);
    for item in top_level(inner) {
        let Some((k, v)) = item.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim().trim_matches(QUOTES));
        match k {
            "method" => method = Some(v),
            "num_spec_tokens" if is_number(v) => tokens = Some(v),
            _ => {}
        }
    }
    Some(format!(
        "{{\"method\":\"{}\",\"num_speculative_tokens\":{}}}",
        method?, tokens?
    ))
}

fn is_number(w: &str) -> bool {
    let t = w.strip_prefix('-').unwrap_or(w);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// The next word is a value (not a flag) of an unknown flag.
fn takes_next(next: Option<&String>) -> bool {
    next.is_some_and(|n| !n.starts_with('-') || is_number(n))
}

/// A model path, file name, Hub id or Ollama tag: the preset it names,
/// and the file type or checkpoint format its name carries.
fn model(name: &str, prog: Program, c: &mut Collector) {
    let Some(p) = preset_for(name) else {
        c.model_missed(name);
        return;
    };
    c.set(Key::Model, p.id, name);
    let lower = name.to_ascii_lowercase();
    // A GGUF file may hold 16-bit weights: `gguf` marks the name
    // quantized (the dtype flag is then the compute dtype) without
    // saying the weights are.
    let says = [
        "fp4", "fp8", "int4", "int8", "4bit", "8bit", "awq", "gptq", "w4a16", "w8a8",
    ]
    .into_iter()
    .find(|q| lower.contains(q));
    c.quantized |= says.is_some() || lower.contains("gguf");
    let weights_before = c.has(Key::Weights);
    match prog {
        Program::Llama | Program::Ollama | Program::OllamaServe => match file_type_in(name) {
            Some(t) => c.set(Key::Weights, t.key(), name),
            // `Qwen3-8B-UD-Q4_K_XL.gguf`: a file type of its maker's.
            None => {
                if let Some(word) = gguf_type_word(&lower) {
                    c.unknown(format!(
                        "{name}: file type {word} not known; estimated with weights= as given (or its default)"
                    ));
                }
            }
        },
        Program::Mlx => {
            // A name's last word (`Qwen3-8B-4bit`, `Qwen3-8B-mxfp4`); a
            // mixed conversion (`gpt-oss-20b-MXFP4-Q8`) ends otherwise.
            let words = [
                "8bit", "6bit", "4bit", "3bit", "2bit", "bf16", "fp16", "mxfp8", "mxfp4", "nvfp4",
            ];
            for w in words {
                if lower.ends_with(&format!("-{w}")) {
                    c.set(Key::Weights, w, name);
                }
            }
        }
        Program::Vllm | Program::Train => {
            // llm-compressor's checkpoints name their scheme
            // (`Qwen3-8B-FP8-dynamic`, `Qwen3-8B-quantized.w8a8`).
            let formats = [
                ("-awq", "awq"),
                ("-gptq", "gptq"),
                ("-fp8-dynamic", "fp8_dynamic"),
                ("-fp8", "fp8"),
                ("w8a8", "w8a8"),
                ("-mxfp4", "mxfp4"),
                ("bnb-4bit", "nf4"),
            ];
            if let Some((_, w)) = formats.iter().find(|(s, _)| lower.contains(s)) {
                c.set(Key::Weights, w, name);
            }
        }
    }
    // A name that says its weights are quantized in a way none of the
    // above reads (`gemma-4-E2B-it-qat-w4a16-ct`, a compressed-tensors
    // W4A16 checkpoint) is listed: the preset's own weights would stand
    // for it silently.
    if let Some(q) = says.filter(|_| !weights_before && !c.has(Key::Weights)) {
        c.unknown(format!(
            "{name}: quantized ({q}) in a format not read from a name; estimated with the default weights unless weights= is set"
        ));
    }
}

/// A word of a model's name that reads as a GGUF file type (`q4_k_xl`,
/// `iq2_m`: `q` or `iq`, a digit, then letters, digits and `_`).
fn gguf_type_word(lower: &str) -> Option<&str> {
    lower
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .find(|w| {
            let rest = w.strip_prefix("iq").or_else(|| w.strip_prefix('q'));
            rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
}

/// A model Ollama names (`ollama ps`'s NAME column), read as `ollama run
/// MODEL` reads it.
pub(crate) fn ollama_model(name: &str, c: &mut Collector) {
    model(name, Program::Ollama, c);
}

/// A model a request names by its Hub id (to vLLM, or to a server not
/// named), read as `vllm serve MODEL` reads it.
pub(crate) fn hub_model(name: &str, c: &mut Collector) {
    model(name, Program::Vllm, c);
}

/// The server settings of Ollama's environment (`envconfig/config.go`)
/// vramfit reads.
const OLLAMA_SERVER_ENV: [&str; 4] = [
    "OLLAMA_NUM_PARALLEL",
    "OLLAMA_KV_CACHE_TYPE",
    "OLLAMA_FLASH_ATTENTION",
    "OLLAMA_CONTEXT_LENGTH",
];

/// `KEY=value` of Ollama's server environment (a systemd unit's or
/// launchctl's, `super::modelfile::server_env_line`), read as `ollama
/// serve`'s.
pub(crate) fn ollama_server_env(word: &str, c: &mut Collector) {
    env(word, Program::OllamaServe, c);
}

/// An environment assignment before the program.
fn env(word: &str, prog: Program, c: &mut Collector) {
    let Some((k, v)) = word.split_once('=') else {
        return;
    };
    if prog == Program::Ollama && OLLAMA_SERVER_ENV.contains(&k) {
        c.unknown(format!(
            "{word}: set for ollama run, the client; the server reads its own environment (ollama serve's, or the service's): not applied"
        ));
        return;
    }
    let key = match (k, prog) {
        ("OLLAMA_NUM_PARALLEL", Program::OllamaServe) => Some((Key::NumParallel, v.to_string())),
        ("OLLAMA_KV_CACHE_TYPE", Program::OllamaServe) => {
            Some((Key::KvCacheType, v.to_ascii_lowercase()))
        }
        ("OLLAMA_FLASH_ATTENTION", Program::OllamaServe) => {
            bool_of(v).map(|b| (Key::FlashAttention, b))
        }
        ("OLLAMA_CONTEXT_LENGTH", Program::OllamaServe) => Some((Key::Ctx, v.to_string())),
        ("PYTORCH_CUDA_ALLOC_CONF" | "PYTORCH_ALLOC_CONF", _)
            if v.contains("expandable_segments:True") =>
        {
            Some((Key::ExpandableSegments, "true".into()))
        }
        _ => None,
    };
    match key {
        Some((k, v)) => c.set(k, &v, word),
        None if matches!(word, "sudo" | "env" | "nohup" | "time" | "exec") => {}
        None => c.unknown(format!(
            "{word}: an environment setting vramfit does not read"
        )),
    }
}

/// A training launch: the launcher's flags, then the script's arguments
/// as a config's fields.
fn train(words: &[String], c: &mut Collector) {
    let mut i = 0;
    let mut entries = Vec::new();
    let mut script_seen = false;
    while let Some(w) = words.get(i) {
        i += 1;
        if !w.starts_with("--") {
            if !script_seen && (w.ends_with(".py") || w.ends_with(".yaml") || w.ends_with(".yml")) {
                script_seen = true;
            } else {
                c.unknown(format!("{w}: an argument vramfit does not read"));
            }
            continue;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (w.clone(), None),
        };
        let value = inline.or_else(|| {
            takes_next(words.get(i)).then(|| {
                i += 1;
                words[i - 1].clone()
            })
        });
        let field = name.trim_start_matches('-').replace('-', "_");
        let value = value.unwrap_or_else(|| "true".into());
        if !script_seen {
            // The launcher's own flags.
            match field.as_str() {
                "num_processes" | "nproc_per_node" | "num_gpus" => {
                    c.set(Key::Gpus, &value, &format!("{name} {value}"))
                }
                _ => entries.push(Entry {
                    path: field,
                    value: Value::Scalar(value),
                    line: 0,
                }),
            }
            continue;
        }
        entries.push(Entry {
            path: field,
            value: Value::Scalar(value),
            line: 0,
        });
    }
    super::config::read(&entries, "a training script's arguments", c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shell::split(s).words
    }

    #[test]
    fn programs() {
        for (cmd, found) in [
            ("llama-server -m x.gguf", Some(Program::Llama)),
            ("./build/bin/llama-cli -m x.gguf", Some(Program::Llama)),
            (
                "CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B",
                Some(Program::Vllm),
            ),
            (
                "python -m vllm.entrypoints.openai.api_server --model x",
                Some(Program::Vllm),
            ),
            (
                "OLLAMA_NUM_PARALLEL=2 ollama run qwen3:8b",
                Some(Program::Ollama),
            ),
            ("python -m mlx_lm generate --model x", Some(Program::Mlx)),
            ("accelerate launch train.py --bf16", Some(Program::Train)),
            ("vllm bench", None),
            ("ls -la", None),
        ] {
            assert!(program(&words(cmd)).map(|(p, _)| p) == found, "{cmd}");
        }
    }
}
