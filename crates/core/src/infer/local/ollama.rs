//! Ollama on top of llama-server (Ollama HEAD `fb30760`, 2026-08-21,
//! which runs every GGUF model through the upstream `llama-server` of
//! llama.cpp b10488 since PR #16031): the defaults it adds, and the
//! llama-server command line it starts.
//!
//! - `num_ctx`: the request's or the Modelfile's, else
//!   `OLLAMA_CONTEXT_LENGTH`, else a default by the GPUs' total memory
//!   less `OLLAMA_GPU_OVERHEAD` each: 262144 from 47 GiB, 32768 from 23
//!   GiB, else 4096 (`server/routes.go:2040-2058`, `:131-133`); at least 4
//!   (`server/sched.go: getRunner`, `:170-172`); at most the model's
//!   context (`llm/server.go:108-113`).
//! - `OLLAMA_NUM_PARALLEL`: 1 by default, at least 1
//!   (`envconfig/config.go:275`, `server/sched.go:497`).
//! - llama-server gets `-c num_ctx × np -np np` and no `-kvu`: `np` split
//!   streams of `num_ctx` each (`llm/llama_server.go:369-377`); `-b` and
//!   `-ub` `num_batch` when set (`:581-594`); `--cache-type-k/v` from
//!   `OLLAMA_KV_CACHE_TYPE` (`:391-394`); `--flash-attn` on/off when
//!   `OLLAMA_FLASH_ATTENTION` is set, else `auto` when every GPU supports
//!   it (`:596-621`); `-ngl` only when `num_gpu` is set, so llama-server's
//!   `--fit` places the layers (`:398-406`).
//! - `num_batch` left to Ollama (`numBatchAuto`): 512, or for a longer
//!   context 1024 (above 4096) or 2048 (above 32768) while the predicted
//!   memory leaves room (`server/sched.go:797-913`).
//!
//! - The architectures Ollama runs one request at a time, whatever
//!   `OLLAMA_NUM_PARALLEL` says ([`ONE_AT_A_TIME`]).
//!
//! Not modelled: a vision projector's fit margin, the scheduler's eviction.

use super::ggml::{CacheType, GIB, MIB};
use super::model::LocalModel;
use super::params::{Backend, FlashAttn, Frontend, Gpu, LlamaCpp};
use super::plan::{DeviceBytes, Plan};
use super::weights::{ModelBytes, Weights};
use super::{llama_cpp_with, LocalError, Report};

/// The GGUF architectures Ollama loads with one parallel request, "model
/// architecture does not currently support parallel requests"
/// (`server/sched.go:503-507`, fb30760): of vramfit's families, the Gated
/// DeltaNet hybrids (`qwen35`, `qwen35moe`, `qwen3next`).
pub const ONE_AT_A_TIME: [&str; 11] = [
    "mllama",
    "qwen3vl",
    "qwen3vlmoe",
    "qwen35",
    "qwen35moe",
    "qwen3next",
    "lfm2",
    "lfm2moe",
    "nemotron_h",
    "nemotron_h_moe",
    "nemotron_h_omni",
];

/// The parallel requests Ollama runs a model of GGUF `architecture` with,
/// asked for `asked` (`OLLAMA_NUM_PARALLEL`, at least 1).
pub fn parallel_for(architecture: &str, asked: u32) -> u32 {
    if ONE_AT_A_TIME.contains(&architecture) {
        1
    } else {
        asked.max(1)
    }
}

/// Ollama's settings, by its option and environment names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ollama {
    /// `num_ctx` (request or Modelfile; `None`: not set).
    pub num_ctx: Option<u32>,
    /// `OLLAMA_CONTEXT_LENGTH` (0: unset).
    pub context_length: u32,
    /// `OLLAMA_NUM_PARALLEL`.
    pub num_parallel: u32,
    /// `num_batch` (`None`: Ollama's automatic choice).
    pub num_batch: Option<u32>,
    /// `num_gpu` (`None`: -1, llama-server's `--fit` decides).
    pub num_gpu: Option<u32>,
    /// `OLLAMA_KV_CACHE_TYPE` (`None`: f16).
    pub kv_cache_type: Option<CacheType>,
    /// `OLLAMA_FLASH_ATTENTION` (`None`: unset).
    pub flash_attention: Option<bool>,
    /// `OLLAMA_GPU_OVERHEAD`, bytes per GPU.
    pub gpu_overhead: u128,
}

impl Ollama {
    /// Ollama's defaults.
    pub const DEFAULT: Ollama = Ollama {
        num_ctx: None,
        context_length: 0,
        num_parallel: 1,
        num_batch: None,
        num_gpu: None,
        kv_cache_type: None,
        flash_attention: None,
        gpu_overhead: 0,
    };
}

/// What Ollama chose, and the load it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OllamaReport {
    pub num_ctx: u32,
    pub num_parallel: u32,
    pub num_batch: u32,
    /// The llama-server it starts.
    pub llama_server: LlamaCpp,
    pub report: Report,
}

/// The default context by the GPUs' memory (`routes.go:2044-2057`).
pub fn default_num_ctx(gpus: &[Gpu], gpu_overhead: u128) -> u32 {
    let total: u128 = gpus
        .iter()
        .map(|g| g.total.saturating_sub(gpu_overhead))
        .sum();
    if total >= 47 * GIB {
        262_144
    } else if total >= 23 * GIB {
        32768
    } else {
        4096
    }
}

/// `num_ctx` as llama-server gets it per sequence.
pub fn num_ctx(o: &Ollama, m: &LocalModel, gpus: &[Gpu]) -> u32 {
    let asked = match (o.num_ctx, o.context_length) {
        (Some(n), _) => n,
        (None, 0) => default_num_ctx(gpus, o.gpu_overhead),
        (None, env) => env,
    };
    let asked = asked.max(4);
    if m.n_ctx_train > 0 {
        asked.min(m.n_ctx_train)
    } else {
        asked
    }
}

/// `LlamaServerFlashAttention` (`llm/llama_server.go:596-611`), every GPU
/// taken to support it (`ml/device.go: FlashAttentionSupported`: CPU,
/// Metal, ROCm, Vulkan, CUDA from compute 6.0 but 7.2).
pub const fn flash_attention(o: &Ollama) -> FlashAttn {
    match o.flash_attention {
        Some(true) => FlashAttn::On,
        Some(false) => FlashAttn::Off,
        None => FlashAttn::Auto,
    }
}

/// `PredictServerVRAM` (`llm/llama_server.go:2681-2700`): the file, and an
/// f16 cache of `2 × layers × kv_heads × (n_embd / n_head) × ctx × 2`,
/// `kv_heads` the fewest of any layer (`HeadCountKVMin`).
pub fn predicted_vram(m: &LocalModel, file_bytes: u128, ctx: u32) -> u128 {
    let kv_heads = m.n_head_kv_min.max(1);
    let head_dim = m.dims.n_embd.checked_div(m.dims.n_head).unwrap_or(0);
    let kv = 2
        * u128::from(m.cache.layers)
        * u128::from(kv_heads)
        * u128::from(head_dim)
        * u128::from(ctx)
        * 2;
    file_bytes + kv
}

/// A llama-server buffer of `bytes` as Ollama reads it back from the log
/// (`memoryParsingWriter.Write`, `llm/llama_server.go:2772-2819`):
/// printed as `%8.2f MiB` of `size / 1024.0 / 1024.0` (`llama-model.cpp`
/// `load_tensors`, `llama-kv-cache.cpp`, `llama-context.cpp`; rounded half
/// to even on the exact quotient), parsed by `strconv.ParseFloat` and
/// scaled back by `uint64(mib * 1024 * 1024)`, truncated. In integers: `n`
/// hundredths of a MiB, then ⌊n · 2^20 / 100⌋ (the parsed double is within
/// far less than the 1/25 byte between that quotient and an integer, and
/// is exact where the quotient is one: `n / 100` is then a quarter).
pub fn logged(bytes: u128) -> u128 {
    const HALF: u128 = 1 << 19;
    let scaled = bytes * 100;
    let (n, rest) = (scaled >> 20, scaled & ((1 << 20) - 1));
    let n = if rest > HALF || (rest == HALF && n % 2 == 1) {
        n + 1
    } else {
        n
    };
    n * (1 << 20) / 100
}

/// `size` and `size_vram` of `ollama ps` for the load `plan` of a model of
/// `n_layer` layers (`MemorySize`, `updateRunnerMemoryLocked`,
/// `llm/llama_server.go:2637-2676, 2821-2852`): every buffer llama-server
/// printed ([`logged`]: model, KV, RS and compute on each device, the
/// output buffer), those on GPUs for `size_vram`. Ollama keeps one figure
/// per (function, device, kind) of buffer, the last printed: a model with
/// full-attention and sliding-window layers prints a `KV buffer` line for
/// each cache on a device (`llama_kv_cache`, the sliding-window one last,
/// `llama-kv-cache-iswa.cpp`), so only the sliding-window cache's is
/// counted, the other's left out. When every layer and the
/// output are on GPUs (`offloaded N/N layers`) with none overflowing to the
/// host (`--fit`'s trace line, printed at Ollama's `--log-verbosity 4`),
/// `size` is `size_vram`: the host's buffers (the token embeddings'
/// mapped range, the host compute and output buffers) are left out.
/// `overflowing`: `--fit` left part of a layer in host memory.
///
/// Not modelled: the trim of a partial offload's mapped range to the file's
/// size (`CPU_Mapped` is a file range: where it spans tensors on GPUs,
/// Ollama counts the file's bytes, header included, for the weights).
pub fn ps_bytes(plan: &Plan, overflowing: bool, n_layer: u32) -> PsBytes {
    let buffers = |d: &DeviceBytes| -> u128 {
        [d.weights, kv_listed(d), d.recurrent, d.compute]
            .into_iter()
            .map(logged)
            .sum()
    };
    let gpus = || plan.gpus.iter().take(plan.n_gpus);
    let vram: u128 = gpus().map(buffers).sum();
    let host = buffers(&plan.host) + logged(plan.output_buffer);
    let whole = plan.n_gpu_layers > n_layer && !overflowing;
    let unlisted = |d: &DeviceBytes| d.kv - kv_listed(d);
    PsBytes {
        size: if whole { vram } else { vram + host },
        size_vram: vram,
        kv_unlisted: gpus().map(unlisted).sum::<u128>()
            + if whole { 0 } else { unlisted(&plan.host) },
        lora_unlisted: gpus().map(|d| d.lora).sum::<u128>()
            + if whole { 0 } else { plan.host.lora },
    }
}

/// The key/value bytes of device `d` whose line Ollama keeps: the
/// sliding-window cache's where the device has one (printed last).
fn kv_listed(d: &DeviceBytes) -> u128 {
    if d.kv_swa > 0 {
        d.kv_swa
    } else {
        d.kv
    }
}

/// What [`ps_bytes`] finds: `size`, `size_vram`, and the key/value bytes
/// allocated but not in them (the full-attention cache's buffers whose
/// line the sliding-window cache's replaced), of the devices `size`
/// counts, and the adapter's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsBytes {
    pub size: u128,
    pub size_vram: u128,
    pub kv_unlisted: u128,
    /// A LoRA adapter's buffers on the devices `size` counts: llama-server
    /// prints them (`LoRA buffer size`), but not in a line Ollama's
    /// `bufferSizeRegex` matches (its kinds: model, KV, compute, output,
    /// RS; `llm/llama_server.go`, fb30760).
    pub lora_unlisted: u128,
}

/// `automaticGenerationBatch` (`server/sched.go:822-913`) for a context of
/// `ctx` tokens over all sequences, `predicted` bytes, and `available`
/// bytes (the GPUs' free memory).
pub fn automatic_batch(
    ctx: u32,
    predicted: u128,
    available: u128,
    fa: FlashAttn,
    gpus: &[Gpu],
) -> u32 {
    let cuda = gpus.iter().any(|g| matches!(g.backend, Backend::Cuda));
    if matches!(fa, FlashAttn::Off) && cuda {
        return if ctx > 4096 && gpus.iter().any(small_cuda) {
            256
        } else {
            512
        };
    }
    let mut batch = if ctx > 32768 {
        2048
    } else if ctx > 4096 {
        1024
    } else {
        512
    };
    while batch > 512 && !batch_fits(batch, predicted, available) {
        batch = if batch > 1024 { 1024 } else { 512 };
    }
    batch
}

/// `constrainedCUDAWithoutFlashAttention` (`server/sched.go:843-857`): a
/// CUDA GPU of at most 8 GiB (its free memory, or its total when that is
/// smaller or the free is unknown).
fn small_cuda(g: &Gpu) -> bool {
    let mem = if g.free == 0 || (g.total > 0 && g.total < g.free) {
        g.total
    } else {
        g.free
    };
    matches!(g.backend, Backend::Cuda) && mem > 0 && mem <= 8 * GIB
}

/// `generationBatchFits` (`server/sched.go:870-895`).
fn batch_fits(batch: u32, predicted: u128, available: u128) -> bool {
    if predicted == 0 || available == 0 {
        return true;
    }
    let threshold = available * 80 / 100;
    if predicted > threshold {
        return false;
    }
    let (headroom, surcharge) = if batch >= 2048 {
        (60, 2 * GIB)
    } else {
        (75, 768 * MIB)
    };
    predicted <= available * headroom / 100 && surcharge <= threshold - predicted
}

/// Ollama loading `m` with weights `w` on `gpus` under `o`.
pub fn ollama(
    m: &LocalModel,
    w: &ModelBytes<'_>,
    o: &Ollama,
    gpus: &[Gpu],
    host_memory: Option<u128>,
) -> Result<OllamaReport, LocalError> {
    ollama_with(m, &Weights::from(w), o, gpus, host_memory, None)
}

/// [`ollama`] with the weights in any form.
pub fn ollama_with(
    m: &LocalModel,
    w: &Weights<'_>,
    o: &Ollama,
    gpus: &[Gpu],
    host_memory: Option<u128>,
    adapter: Option<&super::adapter::LoadedAdapter>,
) -> Result<OllamaReport, LocalError> {
    let ctx = num_ctx(o, m, gpus);
    let np = o.num_parallel.max(1);
    let fa = flash_attention(o);
    let total_ctx = ctx.saturating_mul(np);
    let num_batch = match o.num_batch {
        Some(b) => b,
        None => {
            let predicted = predicted_vram(m, w.total(m.cache.layers), total_ctx);
            let available: u128 = gpus.iter().map(|g| g.free).sum();
            automatic_batch(total_ctx, predicted, available, fa, gpus)
        }
    };
    let kv = o.kv_cache_type.unwrap_or(CacheType::F16);
    let p = LlamaCpp {
        n_ctx: Some(total_ctx),
        n_parallel: Some(np),
        n_batch: num_batch,
        n_ubatch: num_batch,
        cache_type_k: kv,
        cache_type_v: kv,
        flash_attn: fa,
        n_gpu_layers: o.num_gpu,
        ..LlamaCpp::defaults(Frontend::Server)
    };
    Ok(OllamaReport {
        num_ctx: ctx,
        num_parallel: np,
        num_batch,
        llama_server: p,
        report: llama_cpp_with(m, w, &p, gpus, host_memory, adapter)?,
    })
}
