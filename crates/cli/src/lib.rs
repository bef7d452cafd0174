//! `vramfit '<query string>'`: the page's query string in, the same estimate
//! out, as JSON (or a table with `--text`). Exit code 2 on bad input.
//!
//! The whole command is [`run`]: arguments in, exit code and output out, so
//! it is tested (and fuzzed) in-process; `main` only prints.

#[cfg(feature = "probe")]
mod probe_cmd;

use std::ffi::OsString;
use vramfit_core::model::hf_config::Reading;
use vramfit_core::query::{self, RawQuery, FIELDS};
use vramfit_core::solve::Verdict;
use vramfit_core::{compare, import, paste};
use vramfit_core::{Estimate, Estimates, Scenario};

const USAGE: &str = "\
usage: vramfit [--text] [--check] [--config FILE [--as-llama] | --gguf FILE] '<query string>'
       vramfit [--text] [--check] --from FILE|- ['<query string>']
       vramfit probe [--ceiling-gib N] [--json]   (built with --features probe)

Estimates the GPU memory of a training run, or of running a model
(task=infer). The query string is the part of a vramfit page link after
'?', e.g.

  vramfit 'model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=4&seq=2048'
  vramfit 'params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048'   (seed formula only)
  vramfit 'task=infer&model=llama3.1-8b&weights=nf4&prompt=8192&new=512'
  vramfit 'task=infer&engine=vllm&model=qwen3-8b&ctx=32768&gpu=l4-24'
  vramfit --config config.json 'batch=4&seq=4096'   (a Hugging Face config.json; query keys override)
  vramfit --gguf Qwen3-8B-Q4_K_M.gguf 'task=infer&engine=llamacpp&ctx=32768'   (a GGUF file's header)

Prints the estimate as JSON; --text prints a table. --as-llama reads a
config.json of a family vramfit does not know as a Llama-like decoder, by
your choice (the result says so). --gguf reads a GGUF file's header (its
first megabytes, never the weights): the model, and the exact bytes of its
tensors, which the link then carries (`file`, `file_bytes`).

--from reads what you have in hand (- reads stdin): a llama-server,
llama-cli, llama-bench, vllm serve, ollama run, mlx_lm.generate,
accelerate launch or torchrun command; a TRL, transformers, Axolotl,
LLaMA-Factory, DeepSpeed or accelerate config (YAML or JSON) or a
torchtitan training config (TOML); a llama.cpp, Ollama, vLLM or mlx-lm
start-up log; nvidia-smi's table; or PyTorch's out-of-memory message. The
JSON then starts with `read` (the query string it reads to; the query
given is applied on top), `unknown` (what it did not read, verbatim),
`measured` (each figure it found, named as the estimate's field, beside
the estimate's: `weights_bytes`, `kv_cache_bytes`,
`peak_allocated_bytes`, ...), then the estimate. A GPU capacity the paste
printed replaces the GPU's. At most 4 MiB are read.

--check: exit code 1 when the run does not fit the GPU (0 when it fits;
2 on bad input).

  vramfit --from server.log 'model=qwen3-8b'
  vramfit --from oom.txt --check 'model=llama3.1-8b&batch=8&seq=4096'

Exit code 2 on bad input.

keys:";

enum Format {
    Json,
    Text,
}

struct Args {
    format: Format,
    query: String,
    config: Option<String>,
    gguf: Option<String>,
    from: Option<String>,
    check: bool,
    reading: Reading,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut format = Format::Json;
    let mut query = None;
    let mut config = None;
    let mut gguf = None;
    let mut from = None;
    let mut check = false;
    let mut reading = Reading::AsItSays;
    let mut args = args;
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--text" => format = Format::Text,
            "--json" => format = Format::Json,
            "--as-llama" => reading = Reading::AsLlama,
            "--check" => check = true,
            "--from" => match args.next() {
                Some(path) if from.is_none() => from = Some(path),
                Some(_) => return Err("--from is given more than once".into()),
                None => return Err("--from needs a file (or - for stdin)".into()),
            },
            "--config" => match args.next() {
                Some(path) if config.is_none() => config = Some(path),
                Some(_) => return Err("--config is given more than once".into()),
                None => return Err("--config needs a file".into()),
            },
            "--gguf" => match args.next() {
                Some(path) if gguf.is_none() => gguf = Some(path),
                Some(_) => return Err("--gguf is given more than once".into()),
                None => return Err("--gguf needs a file".into()),
            },
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s if query.is_none() => query = Some(s.to_string()),
            _ => {
                return Err(
                    "expected one query string (quote it: '&' splits shell commands)".into(),
                )
            }
        }
    }
    if reading == Reading::AsLlama && config.is_none() {
        return Err("--as-llama reads a config.json: give --config FILE".into());
    }
    if config.is_some() && gguf.is_some() {
        return Err("--config and --gguf both describe the model: give one".into());
    }
    if from.is_some() && (config.is_some() || gguf.is_some()) {
        return Err("--from reads its own settings: give --config or --gguf without it, or the model in the query".into());
    }
    Ok(Some(Args {
        format,
        query: query.unwrap_or_default(),
        config,
        gguf,
        from,
        check,
        reading,
    }))
}

fn usage() -> String {
    let mut s = USAGE.to_string();
    for f in FIELDS {
        s.push_str(&format!("\n  {:<13} {}", f.key, f.help));
    }
    s
}

/// An inference engine's figures, one per line, named as the page names
/// them (the engine's words).
fn served(e: &Estimate, s: &Scenario, out: &mut String) {
    let Some(v) = &e.served else {
        return;
    };
    out.push_str(&format!("engine: {}\n", v.engine));
    let words = s.infer.engine.spec().words;
    let bytes = [
        (words.weights, Some(v.weights_bytes)),
        (words.kv_cache, Some(v.kv_cache_bytes)),
        ("activation peak (profiling run)", v.activation_peak_bytes),
        ("non-torch memory", v.non_torch_bytes),
        ("CUDA graphs", v.cudagraph_bytes),
        ("requested (utilization × total)", v.requested_bytes),
        ("LoRA adapter (--lora, every device)", v.lora_bytes),
    ];
    for (name, b) in bytes {
        if let Some(b) = b {
            out.push_str(&format!(
                "  {name:<40} {:>18} {:>10.3} GiB\n",
                b.get(),
                b.gib()
            ));
        }
    }
    if let Some(g) = &v.gpu_shown {
        out.push_str(&format!("  the GPU shown: {g}\n"));
    }
    if let (Some(blocks), Some(tokens)) = (v.kv_blocks, v.kv_tokens) {
        out.push_str(&format!("  KV blocks {blocks}, tokens {tokens}\n"));
    }
    if let Some(n) = v.n_gpu_layers {
        out.push_str(&format!("  layers on the GPU (-ngl): {n}\n"));
    }
    if let Some(n) = v.n_ctx {
        out.push_str(&format!("  context (n_ctx): {n} tokens\n"));
    }
    if let Some(f) = v.fit {
        out.push_str(&format!("  --fit: {f}\n"));
    }
    if let Some(ps) = &v.ollama_ps {
        out.push_str(&format!(
            "  ollama ps: SIZE {}, PROCESSOR {}, CONTEXT {} (size {} bytes, size_vram {})\n",
            ps.size_text(),
            ps.processor(),
            ps.context,
            ps.size.get(),
            ps.size_vram.get()
        ));
        if ps.kv_unlisted.get() > 0 {
            out.push_str(&format!(
                "  ollama ps leaves out {} bytes ({}) of key/value cache: Ollama keeps one KV buffer line a device, the sliding-window cache's\n",
                ps.kv_unlisted.get(),
                ps.kv_unlisted
            ));
        }
        if ps.lora_unlisted.get() > 0 {
            out.push_str(&format!(
                "  ollama ps leaves out {} bytes ({}) of LoRA adapter: its line is not one of the buffer lines Ollama sums\n",
                ps.lora_unlisted.get(),
                ps.lora_unlisted
            ));
        }
    }
    for g in &v.gpus {
        out.push_str(&format!(
            "  GPU {}: {} layers{}, weights {} + cache {} + compute {}{} = {} bytes ({}){}\n",
            g.gpu,
            g.layers,
            if g.output_layer {
                " and the output"
            } else {
                ""
            },
            g.weights_bytes.get(),
            g.kv_cache_bytes.get(),
            g.compute_bytes.get(),
            if g.lora_bytes.get() > 0 {
                format!(" + LoRA {}", g.lora_bytes.get())
            } else {
                String::new()
            },
            g.total_bytes.get(),
            g.total_bytes,
            if g.phases {
                ", the fullest: the phases above"
            } else {
                ""
            }
        ));
    }
    host(e, out);
    if let (Some(c), Some(len)) = (v.max_concurrency, v.max_model_len) {
        out.push_str(&format!(
            "  maximum concurrency for {len} tokens per request: {:.2}x\n",
            c.0 as f64 / 100.0
        ));
    }
    for c in &e.caveats {
        out.push_str(&format!("not modelled: {c}\n"));
    }
}

/// What stays in host memory beside the GPU (offloaded optimizer state,
/// layers llama.cpp keeps on the CPU), term by term.
fn host(e: &Estimate, out: &mut String) {
    if e.host_bytes.get() == 0 {
        return;
    }
    out.push_str(&format!(
        "host memory: {} bytes ({}) beside the GPU's\n",
        e.host_bytes.get(),
        e.host_bytes
    ));
    for id in e.host_terms.iter() {
        out.push_str(&format!(
            "  {}\n",
            vramfit_core::explain::term_text(id, e.terms.get(id))
        ));
    }
}

fn table(e: &Estimate, s: &Scenario, out: &mut String) {
    if e.served.is_some() {
        return infer_table(e, s, out);
    }
    out.push_str(&format!(
        "{:<4} {:<5} {:<15} {:>18} {:>10} {:>18} {:>10}\n",
        "iter", "micro", "phase", "peak bytes", "peak GiB", "end bytes", "end GiB"
    ));
    for p in &e.phases {
        out.push_str(&format!(
            "{:<4} {:<5} {:<15} {:>18} {:>10.3} {:>18} {:>10.3}\n",
            p.iteration,
            p.micro_step,
            p.phase.key(),
            p.peak_bytes.get(),
            p.peak_bytes.gib(),
            p.end_bytes.get(),
            p.end_bytes.gib(),
        ));
    }
    out.push_str(&format!(
        "peak: {} bytes ({}) in {} of iteration {}; allocated {} bytes\n",
        e.peak_total_bytes.get(),
        e.peak_total_bytes,
        e.peak_phase.key(),
        e.peak_iteration,
        e.peak_allocated_bytes.get(),
    ));
    if let Some(p) = e.peak() {
        for (c, b) in p.components.iter() {
            out.push_str(&format!(
                "  {:<26} {:>18} {:>10.3} GiB\n",
                c.label(),
                b.get(),
                b.gib()
            ));
        }
    }
    for r in &e.ranks {
        let ends = match (r.first, r.last) {
            (true, true) => ", the embedding, the head and the loss",
            (true, false) => ", the embedding",
            (false, true) => ", the head and the loss",
            (false, false) => "",
        };
        out.push_str(&format!(
            "  pipeline rank {:<3} {:>3} layers{ends}: peak {} bytes ({}) in {} of iteration {}\n",
            r.rank,
            r.layers,
            r.peak_total_bytes.get(),
            r.peak_total_bytes,
            r.peak_phase.key(),
            r.peak_iteration,
        ));
    }
    host(e, out);
    if e.pageable_bytes.get() > 0 {
        out.push_str(&format!(
            "pageable: {} bytes ({}) of optimizer state can page out to host memory when the GPU runs short\n",
            e.pageable_bytes.get(),
            e.pageable_bytes
        ));
    }
    for c in &e.caveats {
        out.push_str(&format!("not modelled: {c}\n"));
    }
}

/// The phases of one inference request, the peak's parts, the engine's
/// figures.
fn infer_table(e: &Estimate, s: &Scenario, out: &mut String) {
    out.push_str(&format!(
        "{:<15} {:>18} {:>10} {:>18} {:>10}\n",
        "phase", "peak bytes", "peak GiB", "end bytes", "end GiB"
    ));
    for p in &e.phases {
        out.push_str(&format!(
            "{:<15} {:>18} {:>10.3} {:>18} {:>10.3}\n",
            p.phase.key(),
            p.peak_bytes.get(),
            p.peak_bytes.gib(),
            p.end_bytes.get(),
            p.end_bytes.gib(),
        ));
    }
    out.push_str(&format!(
        "peak: {} bytes ({}) in {}; allocated {} bytes\n",
        e.peak_total_bytes.get(),
        e.peak_total_bytes,
        e.peak_phase.key(),
        e.peak_allocated_bytes.get(),
    ));
    if let Some(p) = e.peak() {
        for (c, b) in p.components.iter() {
            out.push_str(&format!(
                "  {:<26} {:>18} {:>10.3} GiB\n",
                c.label(),
                b.get(),
                b.gib()
            ));
        }
    }
    served(e, s, out);
}

fn text(all: &Estimates, s: &Scenario) -> String {
    let mut out = format!("vramfit: {}\n", query::encode(s).to_query_string());
    match s.arch {
        Some(a) => out.push_str(&format!(
            "model: {} ({} parameters; {} hidden, {} layers, {} heads, {} kv heads, {} ffn, {} vocab{})\n",
            s.preset().map_or("custom", |p| p.name),
            a.params(),
            a.hidden,
            a.layers,
            a.heads,
            a.kv_heads,
            a.ffn,
            a.vocab,
            if a.tied { ", tied" } else { "" }
        )),
        None => out.push_str(&format!("model: {} parameters (no architecture)\n", s.params())),
    }
    for (name, r) in [("vramfit", &all.vramfit), ("seed formula", &all.seed)] {
        if s.task == vramfit_core::Task::Infer && name == "seed formula" {
            continue;
        }
        out.push_str(&format!("\n== {name}\n"));
        match r {
            Ok(e) => table(e, s, &mut out),
            Err(err) => out.push_str(&format!("not available: {err}\n")),
        }
    }
    out
}

/// The arguments as text: a non-UTF-8 argument is bad input (exit 2), named
/// by its position, never a panic.
fn utf8_args(args: impl Iterator<Item = OsString>) -> Result<Vec<String>, (u8, String)> {
    args.enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                (
                    2,
                    format!(
                        "vramfit: argument {} is not valid UTF-8: {}",
                        i + 1,
                        a.to_string_lossy().chars().take(40).collect::<String>()
                    ),
                )
            })
        })
        .collect()
}

/// Longest config.json read (a published one is a few KB).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The query keys a config.json file describes (read with the page's
/// importer), then the query's own keys on top; and the importer's notes
/// on the file.
fn with_config(
    path: &str,
    reading: Reading,
    query: &str,
) -> Result<(RawQuery, Vec<String>), (u8, String)> {
    let err = |e: String| {
        (
            2,
            format!(
                "vramfit: --config {}: {e}",
                vramfit_core::clip::clip(path, 80)
            ),
        )
    };
    let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(err(format!(
            "{} bytes: a config.json is at most {MAX_CONFIG_BYTES}",
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let imported = import::parse_as(&text, reading).map_err(|e| {
        let hint = if e.can_read_as_llama() && reading == Reading::AsItSays {
            " (add --as-llama to estimate it as a Llama-like decoder anyway)"
        } else {
            ""
        };
        err(format!("{e}{hint}"))
    })?;
    let mut raw = RawQuery::default();
    for (k, v) in imported.changes() {
        raw.set(k, &v);
    }
    for (k, v) in RawQuery::parse(query).pairs() {
        raw.set(k, v);
    }
    Ok((raw, imported.notes))
}

/// Most bytes of a GGUF file read for its header (a header with a large
/// vocabulary is a few MB).
const MAX_GGUF_HEADER: u64 = 64 << 20;

/// The query keys a GGUF file's header describes (the model, the file and
/// its bytes), then the query's own keys on top. Reads 1 MiB from the
/// start, then as much as the header turns out to need.
fn with_gguf(path: &str, query: &str) -> Result<RawQuery, (u8, String)> {
    use std::io::Read;
    let err = |e: String| {
        (
            2,
            format!(
                "vramfit: --gguf {}: {e}",
                vramfit_core::clip::clip(path, 80)
            ),
        )
    };
    let name = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    let mut want: u64 = 1 << 20;
    loop {
        let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let mut bytes = Vec::new();
        file.take(want)
            .read_to_end(&mut bytes)
            .map_err(|e| err(e.to_string()))?;
        match vramfit_core::tools::gguf_reply(&bytes, &name) {
            Ok(vramfit_core::tools::ToolReply::Imported { changes, .. }) => {
                let mut raw = RawQuery::default();
                for (k, v) in &changes {
                    raw.set(k, v);
                }
                for (k, v) in RawQuery::parse(query).pairs() {
                    raw.set(k, v);
                }
                return Ok(raw);
            }
            Ok(vramfit_core::tools::ToolReply::Refused { why, .. }) => return Err(err(why)),
            Ok(other) => return Err(err(format!("unexpected reply {other:?}"))),
            Err(at_least) if at_least > MAX_GGUF_HEADER => {
                return Err(err(format!(
                    "its header needs {at_least} bytes; vramfit reads at most {MAX_GGUF_HEADER}"
                )))
            }
            Err(at_least) if at_least <= bytes.len() as u64 => {
                return Err(err(format!(
                    "the file ends at {} bytes, inside its header",
                    bytes.len()
                )))
            }
            Err(at_least) => want = at_least.max(want.saturating_mul(2)).min(MAX_GGUF_HEADER),
        }
    }
}

/// What one run of the command printed, and its exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub code: u8,
    pub stdout: String,
    pub stderr: String,
}

/// Reads `--from`'s file (or stdin for `-`), at most
/// [`paste::MAX_PASTE_BYTES`], and what it says.
fn read_from(path: &str, stdin: &mut dyn std::io::Read) -> Result<paste::Read, (u8, String)> {
    use std::io::Read;
    let err = |e: String| {
        (
            2,
            format!(
                "vramfit: --from {}: {e}",
                vramfit_core::clip::clip(path, 80)
            ),
        )
    };
    let limit = paste::MAX_PASTE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if path == "-" {
        stdin
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| err(e.to_string()))?;
    } else {
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if meta.len() > paste::MAX_PASTE_BYTES as u64 {
            return Err(err(paste::PasteError::TooLarge {
                bytes: usize::try_from(meta.len()).unwrap_or(usize::MAX),
            }
            .to_string()));
        }
        let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| err(e.to_string()))?;
    }
    paste::read_bytes(&bytes).map_err(|e| err(e.to_string()))
}

/// The lines `--text` prints before the estimate for `--from`.
fn from_text(read: &paste::Read, rows: &[compare::Row]) -> String {
    let mut out = format!("read: {} ({})\n", read.query(), read.found.join(", "));
    for s in &read.keys {
        out.push_str(&format!("  {}={}  from {}\n", s.key, s.value, s.from));
    }
    for u in &read.unknown {
        out.push_str(&format!("not read: {u}\n"));
    }
    for r in rows {
        out.push_str(&format!("measured {}\n", r.text()));
    }
    out
}

fn estimate(
    argv: Vec<String>,
    stderr: &mut String,
    stdin: &mut dyn std::io::Read,
) -> Result<(u8, String), (u8, String)> {
    let args = match parse_args(argv.into_iter()) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok((0, usage() + "\n")),
        Err(e) => return Err((2, format!("vramfit: {e}\n\n{}", usage()))),
    };
    let mut pasted = None;
    let (raw, file_notes) = match (&args.config, &args.gguf, &args.from) {
        (Some(path), _, _) => with_config(path, args.reading, &args.query)?,
        (None, Some(path), _) => (with_gguf(path, &args.query)?, Vec::new()),
        (None, None, Some(path)) => {
            let mut read = read_from(path, stdin)?;
            let raw = read.settle(&RawQuery::parse(&args.query));
            pasted = Some(read);
            (raw, Vec::new())
        }
        (None, None, None) => (RawQuery::parse(&args.query), Vec::new()),
    };
    let decoded = query::decode(&raw);
    if !decoded.notices.is_empty() {
        // Every problem, up to ten: a query of 64 unknown keys is one
        // mistake, not 64 screens.
        const SHOWN: usize = 10;
        let n = decoded.notices.len();
        let mut lines: Vec<String> = decoded
            .notices
            .iter()
            .take(SHOWN)
            .map(|n| format!("vramfit: {n}"))
            .collect();
        if n > SHOWN {
            lines.push(format!("vramfit: … and {} more", n - SHOWN));
        }
        return Err((2, lines.join("\n")));
    }
    let scenario = decoded.scenario;
    let notes: Vec<String> = file_notes
        .into_iter()
        .chain(decoded.notes.iter().map(ToString::to_string))
        .collect();
    for n in &notes {
        stderr.push_str(&format!("vramfit: note: {n}\n"));
    }
    let all = Estimates::new(&scenario);
    let code = match (args.check, all.primary()) {
        (false, _) => 0,
        (true, Ok(e)) => {
            let v = Verdict::of(e, scenario.view.capacity.bytes());
            stderr.push_str(&format!("vramfit: {}\n", v.summary(scenario.view.unit)));
            u8::from(!v.fits())
        }
        // `--from`'s JSON says what was read, and why there is no estimate.
        (true, Err(_)) if pasted.is_some() && matches!(args.format, Format::Json) => 2,
        (true, Err(e)) => return Err((2, format!("vramfit: {e}"))),
    };
    let rows = match (&pasted, all.primary()) {
        (Some(read), Ok(e)) => compare::compare(read, e),
        _ => Vec::new(),
    };
    let out = match args.format {
        Format::Text => {
            let head = pasted
                .as_ref()
                .map_or_else(String::new, |r| from_text(r, &rows) + "\n");
            head + &text(&all, &scenario)
        }
        Format::Json => {
            let mut doc = match (all.document(&scenario), &pasted) {
                (Ok(doc), _) => doc,
                // What was read is still said, with why there is no
                // estimate (exit code 2, as without --from).
                (Err(e), Some(read)) => {
                    stderr.push_str(&format!("vramfit: {e}\n"));
                    let doc = compare::PastedDocument::without_estimate(read, e.to_string());
                    return Ok((2, doc.to_json() + "\n"));
                }
                (Err(e), None) => return Err((2, format!("vramfit: {e}"))),
            };
            doc.notes.extend(notes);
            match &pasted {
                Some(read) => compare::PastedDocument::new(read, rows, doc).to_json() + "\n",
                None => doc.to_json() + "\n",
            }
        }
    };
    Ok((code, out))
}

/// The whole command: `args` without the program name (`--from -` reads
/// the process's stdin).
pub fn run(args: impl Iterator<Item = OsString>) -> Outcome {
    run_with_stdin(args, &mut std::io::stdin().lock())
}

/// [`run`] with `stdin` for `--from -`.
pub fn run_with_stdin(
    args: impl Iterator<Item = OsString>,
    stdin: &mut dyn std::io::Read,
) -> Outcome {
    let mut stderr = String::new();
    let result = utf8_args(args).and_then(|argv| match argv.first().map(String::as_str) {
        #[cfg(feature = "probe")]
        Some("probe") => probe_cmd::run(&argv[1..]).map(|s| (0, s)),
        #[cfg(not(feature = "probe"))]
        Some("probe") => Err((
            2,
            "vramfit: this build has no probe; build it with `cargo build -p vramfit-cli --features probe`"
                .to_string(),
        )),
        _ => estimate(argv, &mut stderr, stdin),
    });
    match result {
        Ok((code, stdout)) => Outcome {
            code,
            stdout,
            stderr,
        },
        Err((code, msg)) => Outcome {
            code,
            stdout: String::new(),
            stderr: stderr + &msg + "\n",
        },
    }
}
