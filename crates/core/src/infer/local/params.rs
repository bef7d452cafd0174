//! llama.cpp's knobs as it names them ([`LlamaCpp`]), the devices it
//! runs on ([`Gpu`]), and what it makes of the knobs before allocating
//! anything ([`Resolved`]: the context padded to 256, the sequences and
//! their streams, the batches, the sliding-window cache's cells).
//!
//! Rules of llama.cpp b10488 (`9d77fa17`); where an earlier build differs
//! in a way a published log shows, the build number (`git rev-list
//! --count`, as llama.cpp numbers its builds) selects the rule, with the
//! change that moved it.

use super::ggml::{pad, CacheType, GIB};
use super::model::LocalModel;
use super::LocalError;

/// The llama.cpp build these rules are read from (Ollama's pin at its
/// HEAD `fb30760`, `LLAMA_CPP_VERSION`).
pub const BUILD: u32 = 10488;

/// `GGML_CUDA_MAX_DEVICES`: the most GPUs a report holds.
pub const MAX_DEVICES: usize = 16;

/// Builds whose change moves memory (`scripts/measure/llamacpp/NOTES.md`,
/// §0): the first build with the change.
pub mod builds {
    /// The oldest build vramfit estimates: the oldest start-up log it is
    /// held to (`crates/core/tests/fixtures/llamacpp_logs.jsonl`).
    pub const OLDEST: u32 = 4400;
    /// #11397: `-ot PATTERN=DEVICE`, tensor overrides.
    pub const OVERRIDE_TENSOR: u32 = 5028;
    /// #13194: a sliding-window cache of its own (`--swa-full` to keep
    /// the whole context); before, sliding layers held every cell.
    pub const SWA_CACHE: u32 = 5429;
    /// #14363: one cache stream per sequence unless `--kv-unified`;
    /// before, every sequence shared one.
    pub const KV_STREAMS: u32 = 5913;
    /// #15077: `--n-cpu-moe N` (`--cpu-moe`, #15012 in b6051).
    pub const N_CPU_MOE: u32 = 6089;
    /// #15293: llama-server keeps context checkpoints of a sliding-window
    /// cache in host memory (`--swa-checkpoints`).
    pub const SWA_CHECKPOINTS: u32 = 6173;
    /// #15434: flash attention `auto` and all layers on the GPU by default.
    pub const FA_AUTO: u32 = 6325;
    /// #16382: context checkpoints of a hybrid's recurrent state too
    /// (`--ctx-checkpoints`; 32 a slot by default in b10488's
    /// `common/common.h`).
    pub const RS_CHECKPOINTS: u32 = 6685;
    /// #16391: llama-server's prompt cache in host memory (`--cache-ram`,
    /// 8192 MiB by default).
    pub const PROMPT_CACHE: u32 = 6724;
    /// #16812: the KV size no longer padded (256 with FA, 32 without).
    pub const PAD_REMOVED: u32 = 6868;
    /// #16736: llama-server's automatic 4 slots with a unified cache.
    pub const SERVER_AUTO_PARALLEL: u32 = 6925;
    /// #17046: `n_ctx` and `n_ctx_seq` padded to 256 again.
    pub const PAD_256: u32 = 6975;
    /// #16653: `--fit`, on by default.
    pub const FIT: u32 = 7407;
    /// #18148: `-ngl k` offloads the output layer first.
    pub const OUTPUT_FIRST: u32 = 7467;
    /// #19067: latent attention keeps no V tensor.
    pub const MLA_K_ONLY: u32 = 7832;
    /// A sequence's saved state begins with a magic number and the
    /// sequence id (`llama_context::state_seq_get_size`, `io_magic`): in
    /// b9029 and later, not in b9016 (the builds between are not in the
    /// fetched copy).
    pub const STATE_MAGIC: u32 = 9029;
    /// #23764: the KQ mask made in F16 when flash attention is on.
    pub const MASK_F16: u32 = 9410;
    /// #23861: llama-server reserves logits for `n_parallel × (1 +
    /// n_draft)` outputs.
    pub const SERVER_OUTPUTS: u32 = 9460;
    /// #23907: CUDA's flash-attention op reserves f16 copies of a
    /// quantized K/V in the compute buffer.
    pub const CUDA_FA_DEQUANT: u32 = 9489;
}

/// The program around llama.cpp: it sets the defaults the knobs left
/// unset take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frontend {
    /// `llama-server` (`common_params`, plus `tools/server/server.cpp`:
    /// automatic slots).
    Server,
    /// `llama-cli` and the other `common` tools.
    Cli,
    /// An application on the C API's defaults
    /// (`llama_context_default_params`, `src/llama-context.cpp:3513`):
    /// `n_ctx` 512, `swa_full` true, no `--fit`. LM Studio's runtime,
    /// llama-cpp-python, LLamaSharp.
    Library,
}

/// `--flash-attn` (`LLAMA_FLASH_ATTN_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashAttn {
    Auto,
    On,
    Off,
}

/// A GPU backend, where its rules differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// ggml-cuda (CUDA, and ROCm through HIP): quantized rows padded,
    /// flash attention's dequantized copies in its buffer.
    Cuda,
    /// ggml-metal: free memory is the working set's (`Gpu::free` from
    /// `apple::gpu_working_set`).
    Metal,
    Vulkan,
}

/// One GPU as ggml reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpu {
    pub backend: Backend,
    /// `ggml_backend_dev_memory`'s free bytes: what `--fit` and the
    /// default layer split read.
    pub free: u128,
    /// Total bytes (Ollama's default context reads it).
    pub total: u128,
}

/// llama.cpp's context and model parameters, by their option names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LlamaCpp {
    /// The build whose rules apply ([`BUILD`]).
    pub build: u32,
    pub frontend: Frontend,
    /// `-c`: `None` not given (the frontend's default: the model's
    /// context, `--fit` may shrink it; the C API's 512); `Some(0)` the
    /// model's context, which `--fit` then keeps (`common/arg.cpp:1637-1645`).
    pub n_ctx: Option<u32>,
    /// `-np`: `None` the frontend's default (llama-server: automatic, 4
    /// slots and a unified cache; else 1).
    pub n_parallel: Option<u32>,
    /// `-b` (0: `n_ctx`), `-ub` (0: `n_batch`).
    pub n_batch: u32,
    pub n_ubatch: u32,
    /// `-ctk`, `-ctv`.
    pub cache_type_k: CacheType,
    pub cache_type_v: CacheType,
    /// `-fa`.
    pub flash_attn: FlashAttn,
    /// `-ngl` (`None`: -1, automatic: every layer, and `--fit` may lower
    /// it). Counts the output layer: `n_layer + 1` is all.
    pub n_gpu_layers: Option<u32>,
    /// `-kvu`: one stream shared by every sequence.
    pub kv_unified: bool,
    /// `--swa-full` (`None`: the frontend's default).
    pub swa_full: Option<bool>,
    /// `-nkvo`: the cache stays in host memory.
    pub no_kv_offload: bool,
    /// `--no-op-offload`.
    pub no_op_offload: bool,
    /// `-ts`: layers per GPU in proportion, as `std::stof` reads them
    /// (all 0: by free memory).
    pub tensor_split: [f32; MAX_DEVICES],
    /// `--embedding` (or a runner that reads embeddings, as Ollama's):
    /// the output buffer holds `n_embd` more floats per output.
    pub embeddings: bool,
    /// llama-server's draft tokens per step (speculative decoding).
    pub n_draft: u32,
    /// `--n-cpu-moe N` (`--cpu-moe`: every layer) and `-ot PATTERN=CPU`
    /// over the routed experts: layers `lo..hi` keep their experts in host
    /// memory (`lo == hi`: none; [`Placement::asked`]).
    ///
    /// [`Placement::asked`]: super::placement::Placement::asked
    pub host_experts: (u32, u32),
    /// Any tensor override given (`--n-cpu-moe`, `--cpu-moe`, `-ot`):
    /// `--fit` leaves the layers as asked ("tensor_buft_overrides already
    /// set by user") and pipeline parallelism stays off
    /// (`llama_model::has_tensor_overrides`, `llama-model.cpp:1070`).
    pub tensor_overrides: bool,
    /// `--fit` (`None`: the frontend's default).
    pub fit: Option<bool>,
    /// `--fit-target`: bytes to leave free on each GPU.
    pub fit_target: u128,
    /// `--fit-ctx`: the least context `--fit` sets.
    pub fit_ctx: u32,
    /// A LoRA adapter's matmuls (`--lora`): the graph the warm-up
    /// reserves again once the adapter is applied. `--fit` measures the
    /// model without it ([`super::llama_cpp_adapted`]).
    pub lora: Option<super::adapter::LoraShape>,
}

impl LlamaCpp {
    /// The defaults of `frontend` at [`BUILD`] (`common/common.h:442-578`:
    /// batch 2048, micro-batch 512, f16 cache, flash attention `auto`,
    /// `-ngl` automatic, `--fit` on with 1024 MiB per device and 4096
    /// tokens at least).
    pub const fn defaults(frontend: Frontend) -> LlamaCpp {
        LlamaCpp {
            build: BUILD,
            frontend,
            n_ctx: None,
            n_parallel: None,
            n_batch: 2048,
            n_ubatch: 512,
            cache_type_k: CacheType::F16,
            cache_type_v: CacheType::F16,
            flash_attn: FlashAttn::Auto,
            n_gpu_layers: None,
            kv_unified: false,
            swa_full: None,
            no_kv_offload: false,
            no_op_offload: false,
            tensor_split: [0.0; MAX_DEVICES],
            embeddings: false,
            n_draft: 0,
            host_experts: (0, 0),
            tensor_overrides: false,
            fit: None,
            fit_target: GIB,
            fit_ctx: 4096,
            lora: None,
        }
    }

    /// Whether `--fit` runs: the frontend's default, and only in builds
    /// that have it.
    pub const fn fits(&self) -> bool {
        let default = match self.frontend {
            Frontend::Server | Frontend::Cli => true,
            Frontend::Library => false,
        };
        let on = match self.fit {
            Some(f) => f,
            None => default,
        };
        on && self.build >= builds::FIT
    }

    /// `swa_full`: `common_params` false (`common/common.h:562`), the C
    /// API true (`llama-context.cpp:3547`).
    /// Before #13194 (b5429) there was no sliding-window cache: sliding
    /// layers kept the whole context.
    pub const fn swa_full(&self) -> bool {
        if self.build < builds::SWA_CACHE {
            return true;
        }
        match (self.swa_full, self.frontend) {
            (Some(s), _) => s,
            (None, Frontend::Library) => true,
            (None, Frontend::Server | Frontend::Cli) => false,
        }
    }

    /// The `-c` the context is built with: 0 for the model's.
    pub const fn n_ctx_param(&self) -> u32 {
        match (self.n_ctx, self.frontend) {
            (Some(c), _) => c,
            (None, Frontend::Library) => 512,
            (None, Frontend::Server | Frontend::Cli) => 0,
        }
    }

    /// The least context `--fit` may set: `u32::MAX` (never shrink) when
    /// `-c 0` asked for the model's (`common/arg.cpp:1641-1644`).
    pub const fn fit_min_ctx(&self) -> u32 {
        match self.n_ctx {
            Some(0) => u32::MAX,
            Some(_) | None => self.fit_ctx,
        }
    }

    /// `-kvu`, and every build before #14363 (b5913), whose one cache
    /// held every sequence.
    pub const fn kv_unified(&self) -> bool {
        self.kv_unified || self.build < builds::KV_STREAMS
    }

    /// `(n_seq_max, kv_unified)`: llama-server's automatic slots are 4 in
    /// one unified stream (`tools/server/server.cpp:151-156`), whatever
    /// `-kvu` says; every other frontend runs one sequence.
    pub fn sequences(&self) -> Result<(u32, bool), LocalError> {
        match self.n_parallel {
            Some(0) => Err(LocalError::ZeroParallel),
            Some(n) => Ok((n, self.kv_unified())),
            None => match self.frontend {
                Frontend::Server if self.build >= builds::SERVER_AUTO_PARALLEL => Ok((4, true)),
                Frontend::Server | Frontend::Cli | Frontend::Library => Ok((1, self.kv_unified())),
            },
        }
    }

    /// Flash attention before placement: `on`/`off` as asked; `auto` is on
    /// with a quantized V cache ("enabling flash_attn since it is required
    /// for quantized V cache", `llama-context.cpp:3596-3600`), off before
    /// b6325, else on. Not modelled: `resolve_fused_ops`
    /// (`llama-context.cpp:536-560`) turns `auto` off when a layer's
    /// flash-attention node lands on another device "due to missing
    /// support" (a head size the GPU's kernels lack, as DeepSeek's 192/128
    /// without the MLA keys on CUDA): give `Off` then.
    pub const fn flash_attn_requested(&self) -> bool {
        match self.flash_attn {
            FlashAttn::On => true,
            FlashAttn::Off => false,
            FlashAttn::Auto => self.cache_type_v.is_quantized() || self.build >= builds::FA_AUTO,
        }
    }
}

/// What llama.cpp makes of the knobs before it allocates: the context's
/// numbers as `llama_context::llama_context` logs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// `n_ctx` after padding (all streams).
    pub n_ctx: u32,
    /// Cells per stream of the full-attention cache (`n_ctx_seq`).
    pub n_ctx_seq: u32,
    /// `n_seq_max` and the cache's streams (1 unified, else `n_seq_max`).
    pub n_seq_max: u32,
    pub n_stream: u32,
    pub kv_unified: bool,
    pub n_batch: u32,
    pub n_ubatch: u32,
    /// `n_outputs_max`: outputs one batch may ask for.
    pub n_outputs_max: u32,
    /// Cells per stream of the sliding-window cache (0: none).
    pub swa_cells: u32,
    /// Tokens and outputs of the reserved prompt graph
    /// (`sched_reserve`: `min(n_ctx, n_ubatch)`, `min(that, n_outputs_max)`).
    pub n_tokens: u32,
    pub n_outputs: u32,
}

/// The context's numbers for `-c n_ctx_param` (0: the model's).
///
/// `llama_context::llama_context` (`src/llama-context.cpp`): `n_ctx = 0`
/// takes `n_ctx_train` (`:131`); `n_batch = min(n_ctx, n_batch)` (causal,
/// before padding, `:245`), `n_ubatch = min(n_batch, n_ubatch)` (`:247`),
/// `n_outputs_max = n_batch` unless set (`:249`); `n_ctx =
/// GGML_PAD(n_ctx, 256)` (`:288`); split streams hold `n_ctx_seq =
/// GGML_PAD(n_ctx / n_seq_max, 256)` each and `n_ctx` becomes `n_ctx_seq ×
/// n_seq_max` (`:290-301`). The sliding-window cache
/// (`src/llama-kv-cache-iswa.cpp:73-81`) holds `GGML_PAD(min(n_ctx_seq,
/// n_swa × (unified ? n_seq_max : 1) + n_ubatch), 256)` cells, or
/// `n_ctx_seq` with `swa_full`. llama-server sets `n_outputs_max =
/// min(n_batch, n_parallel × (1 + n_draft))`
/// (`tools/server/server-context.cpp:42-54, :955`).
pub fn resolve(m: &LocalModel, p: &LlamaCpp, n_ctx_param: u32) -> Result<Resolved, LocalError> {
    let (n_seq_max, kv_unified) = p.sequences()?;
    let asked = if n_ctx_param == 0 {
        m.n_ctx_train
    } else {
        n_ctx_param
    };
    if asked == 0 {
        return Err(LocalError::NoTrainedContext);
    }
    let n_batch = match p.n_batch {
        0 => asked,
        b => asked.min(b),
    };
    let n_ubatch = match p.n_ubatch {
        0 => n_batch,
        u => n_batch.min(u),
    };
    let n_outputs_max = match p.frontend {
        Frontend::Server if p.build >= builds::SERVER_OUTPUTS && !p.embeddings => {
            let per_seq = u64::from(p.n_draft) + 1;
            let total = (u64::from(n_seq_max) * per_seq).clamp(1, u64::from(n_batch));
            u32::try_from(total).unwrap_or(n_batch)
        }
        Frontend::Server | Frontend::Cli | Frontend::Library => n_batch,
    };
    let (n_ctx, n_ctx_seq, n_stream) = cells(p, asked, n_seq_max, kv_unified)?;
    let swa_cells = if m.cache.has_swa() {
        swa_cells(m, p, n_ctx_seq, n_seq_max, kv_unified, n_ubatch)?
    } else {
        0
    };
    let n_tokens = n_ctx.min(n_ubatch);
    Ok(Resolved {
        n_ctx,
        n_ctx_seq,
        n_seq_max,
        n_stream,
        kv_unified,
        n_batch,
        n_ubatch,
        n_outputs_max,
        swa_cells,
        n_tokens,
        n_outputs: n_tokens.min(n_outputs_max),
    })
}

/// `(n_ctx, n_ctx_seq, n_stream)` by build: since b6975 as [`resolve`]
/// says; b6868-b6974 unpadded; before b6868 the cache size padded to 256
/// with flash attention and 32 without (`llama_kv_cache::get_padding`).
fn cells(
    p: &LlamaCpp,
    n_ctx: u32,
    n_seq_max: u32,
    unified: bool,
) -> Result<(u32, u32, u32), LocalError> {
    let too_large = LocalError::TooLarge { what: "n_ctx" };
    let n_stream = if unified { 1 } else { n_seq_max };
    let step: u128 = if p.build >= builds::PAD_256 {
        256
    } else if p.build >= builds::PAD_REMOVED {
        1
    } else if p.flash_attn_requested() {
        256
    } else {
        32
    };
    let padded = pad(u128::from(n_ctx), step);
    let seq = if unified {
        padded
    } else if p.build >= builds::PAD_256 {
        pad(padded / u128::from(n_seq_max), 256)
    } else {
        padded / u128::from(n_seq_max)
    };
    if seq == 0 {
        return Err(LocalError::ZeroContext);
    }
    let total = if unified {
        seq
    } else {
        seq * u128::from(n_seq_max)
    };
    let n_ctx = u32::try_from(total).map_err(|_| too_large)?;
    let seq = u32::try_from(seq).map_err(|_| too_large)?;
    Ok((n_ctx, seq, n_stream))
}

fn swa_cells(
    m: &LocalModel,
    p: &LlamaCpp,
    n_ctx_seq: u32,
    n_seq_max: u32,
    unified: bool,
    n_ubatch: u32,
) -> Result<u32, LocalError> {
    if p.swa_full() {
        return Ok(n_ctx_seq);
    }
    let seqs = if unified { u128::from(n_seq_max) } else { 1 };
    let want = u128::from(m.cache.window) * seqs + u128::from(n_ubatch);
    let cells = pad(want.min(u128::from(n_ctx_seq)), 256);
    u32::try_from(cells).map_err(|_| LocalError::TooLarge { what: "n_ctx" })
}
