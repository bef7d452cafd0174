//! Engines' logs and PyTorch's messages, line by line: the settings a run
//! printed (as query keys) and the figures it measured (named as the
//! estimate's JSON fields). Each line format with where it is printed:
//!
//! - llama.cpp (`src/llama-context.cpp`, `src/llama-kv-cache.cpp`,
//!   `src/llama-model.cpp`, `tools/server/server.cpp` at b10488; older
//!   builds' `llama_new_context_with_model` / `llama_kv_cache_init` /
//!   `llm_load_tensors` names too): `build: N`, `n_ctx = N`,
//!   `n_seq_max`, `n_batch`, `n_ubatch`, `flash_attn`, `kv_unified`,
//!   `offloaded X/Y layers to GPU`, `<device> model|KV|compute|output|RS
//!   buffer size = X MiB`, the cache's `size = X MiB (...), K (f16): ...`
//!   or `KV self size = ...`, `type_k = 'q8_0'`, the file's
//!   `general.name` and `file type`; a LoRA adapter's `<device> LoRA
//!   buffer size = X MiB` (`src/llama-adapter.cpp`,
//!   `llama_adapter_lora_init_impl`; `llama_lora_adapter_init_internal`
//!   in mid-2024 builds), whose rank and projections the log does not
//!   print. A device's compute buffer is the last one printed: llama-server
//!   reserves its graphs again at warm-up once an adapter is applied, and
//!   the allocator keeps the larger buffer, which the second line prints.
//!   Ollama's server log carries the same lines.
//! - vLLM (`vllm/v1/worker/gpu_model_runner.py`, `gpu_worker.py`,
//!   `v1/core/kv_cache_utils.py`; V0's `worker/worker.py`): `Model loading
//!   took X GiB`, `Available KV cache memory: X GiB`, `GPU KV cache size:
//!   N tokens`, `Maximum concurrency for N tokens per request`, `Chunked
//!   prefill is enabled with max_num_batched_tokens=N`, `Memory
//!   profiling results: total_gpu_memory=...`, `Free memory on device
//!   (free/total GiB) ... Actual usage is X GiB for weight, ...`, the
//!   `max seq len (N), (X GiB KV cache is needed, ... available KV cache
//!   memory (Y GiB)` error, `# GPU blocks: N`.
//! - PyTorch's out-of-memory message (`c10/cuda/CUDACachingAllocator.cpp`,
//!   torch 2.1 on, `capacty` as 2.1 spelt it, and the older `(GPU 0; X
//!   total capacity; Y already allocated; ...)` form).
//! - mlx-lm (`mlx_lm/generate.py`): `Peak memory: X GB` (`1e9` bytes).
//! - `torch.cuda.memory_summary()` (`torch/cuda/memory.py`): the
//!   `Allocated memory` and `GPU reserved memory` rows' peaks, which
//!   `_format_size` floors to their unit (`KiB` since torch 2.0, binary
//!   `KB` before).
//! - nvidia-smi's table: `used MiB / total MiB` of one GPU.
//! - `ollama ps`'s table (`cmd/cmd.go`, `ListRunningHandler`, at
//!   fb30760; the CONTEXT column since v0.9.7): the first loaded model,
//!   its context and its SIZE split by PROCESSOR.

use super::{count, file_type_in, preset_for, size, Bound, Collector, Figure};
use crate::clip::{clip, QUOTE};
use crate::query::Key;
use crate::units::Bytes;

/// Buffers and caches summed over a llama.cpp log's lines.
#[derive(Default)]
struct Llama {
    seen: bool,
    auto_parallel: bool,
    model_bytes: (u64, u64, Option<String>),
    kv_sizes: (u64, u64, Option<String>),
    kv_buffers: (u64, u64, Option<String>),
    lora_bytes: (u64, u64, Option<String>),
    /// Each GPU's buffers.
    devices: Vec<Device>,
}

/// One GPU's buffers in a llama.cpp log.
struct Device {
    name: String,
    /// Its model, KV, output, RS and LoRA buffers, summed, and their
    /// rounding.
    held: (u64, u64),
    /// Its compute buffer as last printed.
    compute: Option<(u64, u64)>,
    lora: bool,
}

impl Device {
    fn bytes(&self) -> (u64, u64) {
        let (c, cpm) = self.compute.unwrap_or((0, 0));
        (
            self.held.0.saturating_add(c),
            self.held.1.saturating_add(cpm),
        )
    }
}

/// Reads the lines of `text` that no command took.
pub(crate) fn read(text: &str, c: &mut Collector) {
    let mut llama = Llama::default();
    let mut ps = OllamaPs::default();
    let mut unread = 0usize;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let read = oom(t, c)
            || vllm(t, c)
            || llama_line(t, &mut llama, c)
            || mlx(t, c)
            || nvidia_smi(t, c)
            || memory_summary(t, c)
            || ollama_ps(t, &mut ps, c);
        if !read {
            unread += 1;
        }
    }
    llama_totals(&llama, c);
    if ps.header.is_some() && ps.rows == 0 {
        c.unknown("ollama ps's table lists no loaded model: nothing measured".into());
    }
    if unread > 0 && !c.found.is_empty() {
        c.unknown(format!(
            "{unread} other lines: no setting or figure vramfit reads"
        ));
    }
}

/// The first size after `marker`: `X UNIT` (or `XUNIT`), its bytes and
/// rounding.
fn size_after(line: &str, marker: &str) -> Option<(Bytes, u64)> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let rest = rest.trim_start_matches([' ', '(', '=', ':']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(rest.len());
    let (num, tail) = rest.split_at(end);
    let unit: String = tail
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    size(num, &unit)
}

/// The first whole number after `marker`.
fn count_after(line: &str, marker: &str) -> Option<u64> {
    let rest = line[line.find(marker)? + marker.len()..].trim_start_matches([' ', '(', '=', ':']);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(rest.len());
    count(rest[..end].trim_end_matches(','))
}

fn printed(c: &mut Collector, field: &'static str, size: Option<(Bytes, u64)>, line: &str) {
    if let Some((b, pm)) = size {
        c.measured(
            field,
            Figure::Bytes(b),
            Bound::Printed { plus_minus: pm },
            line,
        );
    }
}

/// The GPU's total as the `capacity_gib` key, from a printed GiB figure.
fn capacity(line: &str, marker: &str, c: &mut Collector) {
    capacity_in(line, line, marker, c);
}

/// [`capacity`] of a part of `line`.
fn capacity_in(part: &str, line: &str, marker: &str, c: &mut Collector) {
    let Some(rest) = part.find(marker).map(|i| &part[i + marker.len()..]) else {
        return;
    };
    let rest = rest.trim_start_matches([' ', '(', '=']);
    let end = rest
        .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
        .unwrap_or(rest.len());
    let (num, tail) = rest.split_at(end);
    if tail.trim_start().starts_with("GiB") && !num.is_empty() {
        c.set(Key::Gpu, "custom", line);
        c.set(Key::CapacityGib, num, line);
    }
}

/// PyTorch's `CUDA out of memory` message.
fn oom(line: &str, c: &mut Collector) -> bool {
    if !line.contains("CUDA out of memory") {
        return false;
    }
    c.found("PyTorch's out-of-memory message");
    let tried = size_after(line, "Tried to allocate").map_or(0, |(b, _)| b.get());
    // torch 2.1 to now; 2.1 wrote "capacty".
    for marker in ["total capacity of", "total capacty of"] {
        capacity(line, marker, c);
    }
    let allocated = size_after(line, "Of the allocated memory").or_else(|| {
        // The older form: "(GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; ...)".
        let i = line.find("already allocated")?;
        let start = line[..i].rfind(';')? + 1;
        size_after(&line[start..i], "")
    });
    if let Some((b, _)) = allocated {
        let at_least = Bytes(b.get().saturating_add(tried));
        c.measured(
            "peak_allocated_bytes",
            Figure::Bytes(at_least),
            Bound::AtLeast,
            line,
        );
    }
    if let Some((b, _)) = size_after(line, "this process has") {
        let at_least = Bytes(b.get().saturating_add(tried));
        c.measured(
            "peak_total_bytes",
            Figure::Bytes(at_least),
            Bound::AtLeast,
            line,
        );
    }
    if line.contains("total capacity;") {
        if let Some(i) = line.find("total capacity;") {
            let start = line[..i].rfind(';').map_or(0, |j| j + 1);
            let total = line[start..i].trim();
            if let Some(num) = total.strip_suffix("GiB") {
                c.set(Key::Gpu, "custom", line);
                c.set(Key::CapacityGib, num.trim(), line);
            }
        }
    }
    true
}

fn vllm(line: &str, c: &mut Collector) -> bool {
    let before = c.measured.len();
    let keys = c.keys.len();
    if line.contains("Model loading took") {
        printed(
            c,
            "weights_bytes",
            size_after(line, "Model loading took"),
            line,
        );
    } else if line.contains("Loading model weights took") {
        // V0 printed GiB (`/ 2**30`) as "GB".
        let g = size_after(line, "Loading model weights took");
        let gib = line.contains(" GB").then(|| {
            let rest = &line[line.find("took").map_or(0, |i| i + 4)..];
            size(rest.trim().trim_end_matches("GB").trim(), "GiB")
        });
        printed(c, "weights_bytes", gib.flatten().or(g), line);
    } else if line.contains("Available KV cache memory:") {
        printed(
            c,
            "kv_cache_bytes",
            size_after(line, "Available KV cache memory:"),
            line,
        );
    } else if line.contains("GPU KV cache size:") && line.contains("tokens") {
        if let Some(n) = count_after(line, "GPU KV cache size:") {
            c.measured(
                "kv_tokens",
                Figure::Count(n),
                Bound::Printed { plus_minus: 0 },
                line,
            );
        }
        // From 0.29 the concurrency follows on the same line.
        concurrency_len(line, c);
    } else if line.contains("GPU blocks:") {
        if let Some(n) = count_after(line, "GPU blocks:") {
            c.measured(
                "kv_blocks",
                Figure::Count(n),
                Bound::Printed { plus_minus: 0 },
                line,
            );
        }
    } else if line.contains("Chunked prefill is enabled with max_num_batched_tokens=") {
        // The scheduler's batch as this version chose it
        // (`config/scheduler.py`), which a later default may not be.
        if let Some(n) = count_after(line, "max_num_batched_tokens=") {
            if !c.has(Key::MaxNumBatchedTokens) {
                c.set(Key::MaxNumBatchedTokens, &n.to_string(), line);
            }
        }
    } else if line.contains("Maximum concurrency for") {
        concurrency_len(line, c);
    } else if line.contains("Memory profiling results:") {
        capacity(line, "total_gpu_memory=", c);
        printed(
            c,
            "non_torch_bytes",
            size_after(line, "non_torch_memory="),
            line,
        );
        printed(
            c,
            "kv_cache_bytes",
            size_after(line, "kv_cache_size="),
            line,
        );
        util(line, "gpu_memory_utilization=", c);
    } else if let Some(r) = line.split_once("Free memory on device (").map(|(_, r)| r) {
        free_memory(line, r, c);
    } else if line.contains("the current vLLM instance can use total_gpu_memory") {
        capacity(line, "total_gpu_memory (", c);
        util(line, "gpu_memory_utilization (", c);
        printed(c, "requested_bytes", size_after(line, ") = "), line);
    } else if line.contains("model weights take") {
        printed(
            c,
            "weights_bytes",
            size_after(line, "model weights take"),
            line,
        );
        printed(
            c,
            "non_torch_bytes",
            size_after(line, "non_torch_memory takes"),
            line,
        );
        printed(
            c,
            "activation_peak_bytes",
            size_after(line, "activation peak memory takes"),
            line,
        );
        printed(
            c,
            "kv_cache_bytes",
            size_after(line, "reserved for KV Cache is"),
            line,
        );
    } else if line.contains("# CUDA blocks:") {
        if let Some(n) = count_after(line, "# CUDA blocks:") {
            c.measured(
                "kv_blocks",
                Figure::Count(n),
                Bound::Printed { plus_minus: 0 },
                line,
            );
        }
    } else if line.contains("KV cache is needed") && line.contains("available KV cache memory") {
        if let Some(n) = count_after(line, "max seq len") {
            c.set(Key::Ctx, &n.to_string(), line);
        }
        printed(
            c,
            "kv_cache_bytes",
            size_after(line, "available KV cache memory"),
            line,
        );
    } else if line.contains("non-default args: {") {
        super::command::non_default_args(line, c);
    } else if line.contains("LLM engine") && line.contains("with config: ") {
        super::command::engine_config(line, c);
    } else {
        return false;
    }
    c.found("a vLLM start-up log");
    if c.measured.len() > before || c.keys.len() > keys {
        c.set(Key::Task, "infer", "a vLLM start-up log");
        if !c.has(Key::Engine) {
            c.set(Key::Engine, "vllm", "a vLLM start-up log");
        }
    }
    true
}

/// `Maximum concurrency for N tokens per request`: N is `max_model_len`,
/// unless the paste said it already.
fn concurrency_len(line: &str, c: &mut Collector) {
    if let Some(n) = count_after(line, "Maximum concurrency for") {
        if !c.has(Key::Ctx) {
            c.set(Key::Ctx, &n.to_string(), line);
        }
    }
}

/// vLLM's `Free memory on device (free/total GiB) on startup. Desired GPU
/// memory utilization is (u, X GiB). Actual usage is X GiB for weight, X
/// GiB for peak activation, X GiB for non-torch memory, and X GiB for
/// CUDAGraph memory.` (`v1/worker/gpu_worker.py`).
fn free_memory(line: &str, r: &str, c: &mut Collector) {
    if let Some((_, total)) = r.split_once('/') {
        capacity_in(total, line, "", c);
    }
    util(line, "utilization is (", c);
    if let Some((_, r)) = line.split_once("utilization is (") {
        if let Some((_, requested)) = r.split_once(", ") {
            printed(c, "requested_bytes", size_after(requested, ""), line);
        }
    }
    for (marker, field) in [
        (" for weight", "weights_bytes"),
        (" for peak activation", "activation_peak_bytes"),
        (" for non-torch memory", "non_torch_bytes"),
        (" for CUDAGraph memory", "cudagraph_bytes"),
    ] {
        let Some(i) = line.find(marker) else {
            continue;
        };
        let mut words = line[..i].split_whitespace().rev();
        if let (Some(unit), Some(num)) = (words.next(), words.next()) {
            printed(c, field, size(num, unit), line);
        }
    }
}

fn util(line: &str, marker: &str, c: &mut Collector) {
    if let Some(i) = line.find(marker) {
        let rest = &line[i + marker.len()..];
        let end = rest
            .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
            .unwrap_or(rest.len());
        if end > 0 {
            c.set(Key::GpuMemoryUtilization, &rest[..end], line);
        }
    }
}

const LLAMA_PREFIXES: &[&str] = &[
    "llama_adapter_lora_init_impl:",
    "llama_lora_adapter_init_internal:",
    "llama_context:",
    "llama_new_context_with_model:",
    "llama_init_from_model:",
    "llama_kv_cache",
    "load_tensors:",
    "llm_load_tensors:",
    "print_info:",
    "llm_load_print_meta:",
    "llama_model_loader:",
    "sched_reserve:",
    "main:",
    "build:",
    "srv ",
    "common_init_from_params:",
];

/// One llama.cpp line.
fn llama_line(line: &str, l: &mut Llama, c: &mut Collector) -> bool {
    // A prefix starts the line or follows a frontend's own (`[llama
    // Info]: `, Ollama's `time=... msg=`), never inside a word.
    let starts = |i: usize| i == 0 || line[..i].ends_with([' ', ']', ':', ')', '"', '\t']);
    let Some(at) = LLAMA_PREFIXES
        .iter()
        .filter_map(|p| line.find(p))
        .filter(|&i| starts(i))
        .min()
    else {
        return false;
    };
    let t = &line[at..];
    let (prefix, rest) = t.split_once(':').unwrap_or(("", t));
    let rest = rest.trim();
    l.seen = true;
    c.found("a llama.cpp start-up log");
    c.set(Key::Task, "infer", "a llama.cpp start-up log");
    if !c.has(Key::Engine) {
        c.set(Key::Engine, "llamacpp", "a llama.cpp start-up log");
    }
    if prefix == "build" || prefix == "build_info" || rest.starts_with("build = ") {
        let rest = rest.trim_start_matches('b');
        if let Some(n) = count_after(
            rest,
            if rest.starts_with("build = ") {
                "build ="
            } else {
                ""
            },
        ) {
            c.set(Key::LlamaBuild, &format!("b{n}"), t);
        }
        return true;
    }
    if rest.contains("buffer size =") {
        buffer(rest, t, l);
        return true;
    }
    if prefix.starts_with("llama_adapter_lora") || prefix.starts_with("llama_lora_adapter") {
        // The adapter's own keys (`- kv N: adapter.lora.alpha ...`), its
        // path and tensor count: nothing of the model's, nothing sized.
        return true;
    }
    if let Some(i) = rest.find("offloaded ") {
        let frac = rest[i + 10..].split_whitespace().next().unwrap_or("");
        if let Some((on, of)) = frac
            .split_once('/')
            .and_then(|(a, b)| Some((count(a)?, count(b)?)))
        {
            if on < of {
                c.set(Key::NGpuLayers, &on.to_string(), t);
            }
        }
        return true;
    }
    if rest.starts_with("size = ") || rest.starts_with("KV self size") {
        let marker = if rest.starts_with("size = ") {
            "size ="
        } else {
            "KV self size"
        };
        if let Some((b, pm)) = size_after(rest, marker) {
            l.kv_sizes.0 = l.kv_sizes.0.saturating_add(b.get());
            l.kv_sizes.1 = l.kv_sizes.1.saturating_add(pm);
            l.kv_sizes.2.get_or_insert_with(|| t.to_string());
        }
        cache_types(rest, "K (", "V (", t, c);
        return true;
    }
    if rest.contains("type_k = '") {
        cache_types(rest, "type_k = '", "type_v = '", t, c);
        return true;
    }
    if rest.starts_with("setting n_parallel =") || rest.starts_with("n_parallel is set to auto") {
        l.auto_parallel = true;
        return true;
    }
    if rest.contains("using full-size SWA cache") {
        c.set(Key::SwaFull, "true", t);
        return true;
    }
    model_line(rest, t, c) || setting(prefix, rest, t, l, c)
}

/// The file's name and type (`general.name`, `file type`, the path).
fn model_line(rest: &str, t: &str, c: &mut Collector) -> bool {
    if let Some(i) = rest.find("tensors from ") {
        let path = rest[i + 13..].split(" (").next().unwrap_or("").trim();
        match preset_for(path) {
            Some(p) => c.set(Key::Model, p.id, t),
            None => c.model_missed(path),
        }
        if let Some(ft) = file_type_in(path) {
            c.set(Key::Weights, ft.key(), t);
        }
        return true;
    }
    if rest.contains("general.name") && !c.has(Key::Model) {
        let name = rest
            .rsplit(" = ")
            .next()
            .unwrap_or("")
            .trim()
            .replace(' ', "-");
        if let Some(p) = preset_for(&name) {
            c.set(Key::Model, p.id, t);
        }
        return true;
    }
    if rest.starts_with("file type") || rest.starts_with("model ftype") {
        let ty = rest
            .rsplit(" = ")
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let key = ty
            .replace(" - medium", "_m")
            .replace(" - small", "_s")
            .replace(" - large", "_l")
            .replace(' ', "");
        if let Some(ft) = file_type_in(&key) {
            if !c.has(Key::Weights) {
                c.set(Key::Weights, ft.key(), t);
            }
        }
        return true;
    }
    false
}

/// `name = value` settings of the context; the model's own description
/// lines (`print_info`, the loader's keys) are read as understood.
fn setting(prefix: &str, rest: &str, t: &str, l: &Llama, c: &mut Collector) -> bool {
    let Some((name, value)) = rest.split_once(" = ").map(|(n, v)| (n.trim(), v.trim())) else {
        return matches!(
            prefix,
            "print_info" | "llm_load_print_meta" | "llama_model_loader"
        );
    };
    let key = match name {
        "n_ctx" => Some((Key::Ctx, value.to_string())),
        "n_batch" => Some((Key::NBatch, value.to_string())),
        "n_ubatch" => Some((Key::NUbatch, value.to_string())),
        "n_seq_max" if !l.auto_parallel => Some((Key::NParallel, value.to_string())),
        "kv_unified" => Some((Key::KvUnified, value.to_string())),
        "flash_attn" => match value {
            "0" | "disabled" | "false" => Some((Key::FlashAttn, "off".into())),
            "1" | "enabled" | "true" => Some((Key::FlashAttn, "on".into())),
            "auto" => Some((Key::FlashAttn, "auto".into())),
            _ => None,
        },
        _ => None,
    };
    match key {
        Some((k, v)) => c.set(k, &v, t),
        None if matches!(
            prefix,
            "print_info" | "llm_load_print_meta" | "llama_model_loader"
        ) => {}
        // Read as understood: nothing in them sets a key.
        None if UNDERSTOOD.iter().any(|u| name.contains(u)) => {}
        None => c.unknown(format!("{}: not read", clip(t, 120))),
    }
    true
}

/// llama.cpp's `name = value` lines that set nothing vramfit reads
/// beyond what other lines say (the context's derived sizes, the graph's
/// nodes, the caches' geometry).
const UNDERSTOOD: &[&str] = &[
    "n_seq_max",
    "n_ctx_per_seq",
    "n_ctx_seq",
    "graph nodes",
    "graph splits",
    "causal_attn",
    "n_embd_k_gqa",
    "attn_rot_k",
    "KV cache, size",
    "freq_base",
    "freq_scale",
    "n_ctx_train",
    "pooling_type",
    "attn_type",
    "offload_kqv",
    "n_ctx_orig",
];

fn cache_types(rest: &str, k: &str, v: &str, t: &str, c: &mut Collector) {
    let ty = |m: &str| {
        let i = rest.find(m)? + m.len();
        let end = rest[i..].find(['\'', ')'])?;
        Some(rest[i..i + end].to_ascii_lowercase())
    };
    if let Some(x) = ty(k) {
        c.set(Key::CacheTypeK, &x, t);
    }
    if let Some(x) = ty(v) {
        c.set(Key::CacheTypeV, &x, t);
    }
}

/// `<device> <what> buffer size = X MiB`.
fn buffer(rest: &str, t: &str, l: &mut Llama) {
    let Some(i) = rest.find(" buffer size") else {
        return;
    };
    let mut words = rest[..i].split_whitespace();
    let (Some(dev), Some(what)) = (words.next(), words.next()) else {
        return;
    };
    let Some((b, pm)) = size_after(rest, "buffer size =") else {
        return;
    };
    let add = |sum: &mut (u64, u64, Option<String>)| {
        sum.0 = sum.0.saturating_add(b.get());
        sum.1 = sum.1.saturating_add(pm);
        sum.2.get_or_insert_with(|| t.to_string());
    };
    match what {
        "model" => add(&mut l.model_bytes),
        "KV" => add(&mut l.kv_buffers),
        "LoRA" => add(&mut l.lora_bytes),
        _ => {}
    }
    let host = dev.starts_with("CPU") || dev.ends_with("_Host");
    // A log of more devices than a machine has is not one: they stop
    // counting (and the search over them stays short).
    if host || (l.devices.len() >= 16 && !l.devices.iter().any(|d| d.name == dev)) {
        return;
    }
    let d = match l.devices.iter().position(|d| d.name == dev) {
        Some(i) => &mut l.devices[i],
        None => {
            l.devices.push(Device {
                name: dev.to_string(),
                held: (0, 0),
                compute: None,
                lora: false,
            });
            let last = l.devices.len() - 1;
            &mut l.devices[last]
        }
    };
    if what == "compute" {
        d.compute = Some((b.get(), pm));
    } else {
        d.held = (
            d.held.0.saturating_add(b.get()),
            d.held.1.saturating_add(pm),
        );
        d.lora |= what == "LoRA";
    }
}

/// The summed buffers as measured figures: the weights (every model
/// buffer), the cache (its `size` lines, else its buffers), and on one
/// GPU everything that GPU holds (`peak_allocated_bytes`).
fn llama_totals(l: &Llama, c: &mut Collector) {
    if !l.seen {
        return;
    }
    let mut put = |field, (b, pm, line): &(u64, u64, Option<String>), note: &str| {
        if let Some(line) = line {
            c.measured(
                field,
                Figure::Bytes(Bytes(*b)),
                Bound::Printed { plus_minus: *pm },
                &format!("{note}{line}"),
            );
        }
    };
    put(
        "weights_bytes",
        &l.model_bytes,
        "model buffers summed, from: ",
    );
    put("lora_bytes", &l.lora_bytes, "LoRA buffers summed, from: ");
    if l.kv_sizes.2.is_some() {
        put("kv_cache_bytes", &l.kv_sizes, "cache sizes summed, from: ");
    } else {
        put("kv_cache_bytes", &l.kv_buffers, "KV buffers summed, from: ");
    }
    // A GPU's whole holding needs the log's model buffers (a log cut
    // after the load would leave the weights out) and its compute buffer.
    match l.devices.as_slice() {
        [d] if d.compute.is_some() && l.model_bytes.2.is_some() => {
            let (b, pm) = d.bytes();
            c.measured(
                "peak_allocated_bytes",
                Figure::Bytes(Bytes(b)),
                Bound::Printed { plus_minus: pm },
                &format!(
                    "{}'s model, KV, {}compute and output buffers summed",
                    d.name,
                    if d.lora { "LoRA, " } else { "" }
                ),
            );
        }
        [] | [_] => {}
        many => c.unknown(format!(
            "buffers on {} GPUs ({}): compared GPU by GPU on the page's layer split, not as one peak",
            many.len(),
            clip(&many.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", "), QUOTE)
        )),
    }
}

/// mlx-lm's `Peak memory: X GB`.
fn mlx(line: &str, c: &mut Collector) -> bool {
    if !line.starts_with("Peak memory:") {
        return false;
    }
    c.found("an mlx-lm run's output");
    printed(
        c,
        "peak_allocated_bytes",
        size_after(line, "Peak memory:"),
        line,
    );
    if !c.has(Key::Engine) {
        c.set(Key::Task, "infer", line);
        c.set(Key::Engine, "mlx", line);
    }
    true
}

/// `torch.cuda.memory_summary()`'s header and two of its rows
/// (`torch/cuda/memory.py`, `memory_summary`'s `metrics_to_display`,
/// the row names torch 1.4 to now print): the peak column of `Allocated
/// memory`, the allocated peak, and of `GPU reserved memory`, the caching
/// allocator's reserved peak. `_format_size` floors each to its unit, so
/// the bytes are within one unit above it; its units are binary whatever
/// they are called (`KB` before torch 2.0). The reserved peak is
/// `peak_total_bytes` at least, as the OOM message's memory in use is:
/// the process's total adds the CUDA context to it.
fn memory_summary(line: &str, c: &mut Collector) -> bool {
    if line.contains("PyTorch CUDA memory summary") {
        c.found("torch.cuda.memory_summary()");
        return true;
    }
    let row = line.trim_start_matches('|').trim_start();
    let Some((rest, field, reserved)) = [
        ("Allocated memory", "peak_allocated_bytes", false),
        ("GPU reserved memory", "peak_total_bytes", true),
    ]
    .iter()
    .find_map(|&(name, field, reserved)| Some((row.strip_prefix(name)?, field, reserved))) else {
        return false;
    };
    let cols: Vec<&str> = rest.split('|').map(str::trim).collect();
    let Some((num, unit)) = cols.get(2).and_then(|p| p.split_once(' ')) else {
        return false;
    };
    let unit = match unit.trim() {
        "B" => "B",
        "KiB" | "KB" => "KiB",
        "MiB" | "MB" => "MiB",
        "GiB" | "GB" => "GiB",
        "TiB" | "TB" => "TiB",
        _ => return false,
    };
    let Some((b, pm)) = size(num, unit) else {
        return false;
    };
    c.found("torch.cuda.memory_summary()");
    // Floored: the peak is in [b, b + unit), held as ± one unit; the
    // reserved peak, a floor of the total's, as at least itself.
    let bound = if reserved {
        Bound::AtLeast
    } else {
        Bound::Printed {
            plus_minus: pm.saturating_mul(2).max(1),
        }
    };
    c.measured(field, Figure::Bytes(b), bound, line);
    true
}

/// nvidia-smi's `| 15982MiB / 24576MiB |` (one GPU's row).
fn nvidia_smi(line: &str, c: &mut Collector) -> bool {
    let Some(i) = line.find("MiB /") else {
        return false;
    };
    let used: String = line[..i]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let total_text = line[i + 5..].trim_start();
    let end = total_text
        .find(|ch: char| !ch.is_ascii_digit())
        .unwrap_or(total_text.len());
    let (Some(used), Some(total)) = (count(&used), count(&total_text[..end])) else {
        return false;
    };
    if !total_text[end..].starts_with("MiB") {
        return false;
    }
    if c.found.contains(&"nvidia-smi's table") {
        c.unknown(format!(
            "{}: another GPU's row (one GPU is compared)",
            clip(line, 120)
        ));
        return true;
    }
    c.found("nvidia-smi's table");
    c.set(Key::Gpu, "custom", line);
    c.set(Key::CapacityGib, &super::gib_text(Bytes(total << 20)), line);
    c.measured(
        "peak_total_bytes",
        Figure::Bytes(Bytes(used << 20)),
        Bound::Printed {
            plus_minus: 1 << 19,
        },
        line,
    );
    true
}

/// `ollama ps`'s table as read so far.
#[derive(Default)]
struct OllamaPs {
    /// Its header, and whether that has the CONTEXT column (v0.9.7 on).
    header: Option<bool>,
    rows: usize,
}

/// What PROCESSOR says of SIZE (`ListRunningHandler`'s `procStr`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Processor {
    /// `100% GPU` (SIZE_VRAM is SIZE) or `100% CPU` (SIZE_VRAM is 0):
    /// exact.
    Whole { gpu: bool },
    /// `C%/G% CPU/GPU`: the host's share rounded (`math.Round`) to a
    /// percent, the GPU's 100 less it.
    Split { cpu: u64, gpu: u64 },
    /// `Unknown`: SIZE_VRAM above SIZE.
    Unknown,
}

/// One row of `ollama ps`.
struct PsRow<'a> {
    name: &'a str,
    size: (Bytes, u64),
    processor: Processor,
    context: Option<&'a str>,
}

const PS_FOUND: &str = "ollama ps's table";

/// The words `humanDuration` (`format/time.go`) follows a number with in
/// UNTIL: a row without a header has a CONTEXT column when the number
/// after PROCESSOR is not one of these.
const DURATION_UNITS: &[&str] = &[
    "second", "seconds", "minutes", "hours", "days", "weeks", "months", "years",
];

/// `ollama ps`: `NAME ID SIZE PROCESSOR [CONTEXT] UNTIL` (Ollama's
/// `cmd/cmd.go`, `ListRunningHandler`, at fb30760). The first row is
/// read: the model (as `ollama run` names it), `engine=ollama`, the
/// context (CONTEXT is `num_ctx`, per request), SIZE, and SIZE_VRAM
/// from PROCESSOR (SIZE times the GPU's share), set beside what vramfit
/// says `ollama ps` reports (`ollama_ps_size`, `ollama_ps_size_vram`:
/// `infer::local::ollama::ps_bytes`). Since v0.30.0 (#16031,
/// `llm/llama_server.go`, `MemorySize`) SIZE and SIZE_VRAM are
/// llama-server's printed buffers summed; before it they were Ollama's own
/// prediction of them (`llm/memory.go`), not what was allocated. Other
/// rows (other models loaded) are listed as unknown.
fn ollama_ps(line: &str, ps: &mut OllamaPs, c: &mut Collector) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["NAME", "ID", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"] => {
            ps.header = Some(true);
            c.found(PS_FOUND);
            return true;
        }
        ["NAME", "ID", "SIZE", "PROCESSOR", "UNTIL"] => {
            ps.header = Some(false);
            c.found(PS_FOUND);
            return true;
        }
        // The command itself, after a prompt: read as understood.
        [.., "ollama", "ps"] => return true,
        _ => {}
    }
    let Some(row) = ps_row(&words, ps.header) else {
        return false;
    };
    c.found(PS_FOUND);
    ps.rows += 1;
    if ps.rows > 1 {
        c.unknown(format!(
            "{}: another model loaded (the first row is read)",
            clip(line, 120)
        ));
        return true;
    }
    c.set(Key::Task, "infer", line);
    c.set(Key::Engine, "ollama", line);
    super::command::ollama_model(row.name, c);
    if let Some(n) = row.context {
        c.set(Key::Ctx, n, line);
    }
    let vram = match row.processor {
        Processor::Whole { gpu: true } => Some((row.size, 100)),
        Processor::Whole { gpu: false } => Some(((Bytes::ZERO, 0), 0)),
        Processor::Split { gpu, .. } => Some((share(row.size, gpu), gpu)),
        Processor::Unknown => {
            c.unknown(format!(
                "{}: PROCESSOR Unknown (Ollama's GPU share above its SIZE): no figure read",
                clip(line, 120)
            ));
            None
        }
    };
    let (size, plus_minus) = row.size;
    c.measured(
        "ollama_ps_size",
        Figure::Bytes(size),
        Bound::Printed { plus_minus },
        &format!("SIZE, from: {line}"),
    );
    if let Some(((b, plus_minus), pct)) = vram {
        c.measured(
            "ollama_ps_size_vram",
            Figure::Bytes(b),
            Bound::Printed { plus_minus },
            &format!("SIZE × {pct}% on the GPU, from: {line}"),
        );
    }
    true
}

/// One row's columns; `context_column`: the header's, `None` without one.
fn ps_row<'a>(w: &[&'a str], context_column: Option<bool>) -> Option<PsRow<'a>> {
    let (name, id) = (*w.first()?, *w.get(1)?);
    // ID is the digest's first 12 hex digits.
    if id.len() != 12 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let size = human_bytes(w.get(2)?, w.get(3)?)?;
    let (processor, next) = match (w.get(4).copied(), w.get(5).copied()) {
        (Some("100%"), Some("GPU")) => (Processor::Whole { gpu: true }, 6),
        (Some("100%"), Some("CPU")) => (Processor::Whole { gpu: false }, 6),
        (Some("Unknown"), _) => (Processor::Unknown, 5),
        (Some(p), Some("CPU/GPU")) => {
            let (c, g) = p.split_once('/')?;
            let cpu = count(c.strip_suffix('%')?)?;
            let gpu = count(g.strip_suffix('%')?)?;
            if cpu.checked_add(gpu) != Some(100) {
                return None;
            }
            (Processor::Split { cpu, gpu }, 6)
        }
        _ => return None,
    };
    let context = match context_column {
        Some(true) => Some(*w.get(next)?),
        Some(false) => None,
        None => w.get(next).copied().filter(|n| {
            count(n).is_some() && !w.get(next + 1).is_some_and(|u| DURATION_UNITS.contains(u))
        }),
    };
    Some(PsRow {
        name,
        size,
        processor,
        context,
    })
}

/// SIZE as `format.HumanBytes` prints it (`format/bytes.go` at fb30760):
/// decimal units; below 10 of its unit one decimal, rounded (`%.1f`), or
/// none when whole; from 10 whole, floored (`int(value)`): a whole
/// number is held as ± one unit. Older versions always printed one
/// decimal.
fn human_bytes(num: &str, unit: &str) -> Option<(Bytes, u64)> {
    if !matches!(unit, "B" | "KB" | "MB" | "GB" | "TB") {
        return None;
    }
    let (b, pm) = size(num, unit)?;
    Some(if num.contains('.') {
        (b, pm)
    } else {
        (b, pm.saturating_mul(2))
    })
}

/// `part` percent of `size` (± its rounding), the percent itself
/// rounded to the nearest: the share's bytes and how far the exact share
/// can be from them (`pm × (part + ½)/100` from SIZE's rounding, `size /
/// 200` from the percent's, and a byte for the division).
fn share((size, pm): (Bytes, u64), part: u64) -> (Bytes, u64) {
    let (s, pm, part) = (u128::from(size.get()), u128::from(pm), u128::from(part));
    let bytes = (s * part + 50) / 100;
    let err = (pm * (part + 1)).div_ceil(100) + (s + pm).div_ceil(200) + 1;
    let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    (Bytes(clamp(bytes)), clamp(err))
}
