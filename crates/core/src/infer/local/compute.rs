//! llama.cpp's compute buffers and its output buffer.
//!
//! The compute buffer of each backend is **measured**, not computed:
//! `llama_context::sched_reserve` (`src/llama-context.cpp:585-700`,
//! b10488) builds the prompt graph of `min(n_ctx, n_ubatch)` tokens over
//! the whole cache (`init_full`, so `n_kv` is every cell), the one-token
//! graph, the prompt graph again, and keeps what ggml-alloc's greedy
//! allocator needed (`ggml_backend_sched_get_buffer_size`). Tensors are
//! freed after their last use and in-place ops reuse their parent
//! (`ggml/src/ggml-alloc.c:717-822`), so one layer is live at a time and
//! the buffer is the largest of a few stages. What follows is an
//! **estimate** of that measured quantity, stage by stage, from the graph
//! `src/llama-graph.cpp` builds (`scripts/measure/llamacpp/NOTES.md` §4;
//! `check_logs.py: estimate_compute` implements the same):
//!
//! - output: the last hidden state `4·n_embd·n_tokens` and the logits
//!   `4·n_vocab·n_outputs` on the output layer's device;
//! - attention: two hidden states, the queries, the micro-batch's K and V
//!   before they are written, the mask's device copy, and without flash
//!   attention the scores `4·n_kv·n_tokens·n_head` (F32, `soft_max` in
//!   place, `build_attn_mha`), with it the output, and on CUDA since
//!   b9489 f16 copies of a quantized K and V, every stream's cells
//!   (`fattn.cu:536-568`, `ggml_cuda_flash_attn_ext_get_alloc_size`, for
//!   the tile and MMA kernels a prompt batch runs; a V that is a view of K
//!   shares K's, `fattn-common.cuh:53-85`);
//! - MLP: two hidden states, gate, up and the GLU result (`GGML_OP_GLU`
//!   is not in place), and the mask's copy, live until the last layer.
//!
//! Graph inputs (the token embeddings gathered from the host's
//! `token_embd`, the masks) are on the CPU backend, whose buffer is the
//! first GPU's pinned host type (`llama-context.cpp:405-413`); each GPU
//! gets copies. An op whose weight is in host memory runs on the first
//! GPU when its batch is at least 32 (`op_offload`,
//! `ggml-backend.cpp:955-966`; `op_offload_min_batch_size`), which then
//! holds a copy of that weight, one at a time (a new split per offloaded
//! weight, `ggml-backend.cpp:1313-1328`). An attention run on a GPU over a
//! cache in host memory (`-nkvo`, or a host layer whose matmuls the first
//! GPU takes) copies that layer's K and V there.
//!
//! Not modelled: pipeline parallelism's four copies of the inputs
//! (several GPUs, every layer offloaded), ggml-alloc's fragmentation, a
//! family's extra tensors (q/k norms, sinks, biases), graphs that are not
//! a transformer's (a hybrid's recurrent layers).

use super::adapter::LoraShape;
use super::model::LocalModel;
use super::params::{builds, Backend, Resolved, MAX_DEVICES};
use super::placement::Place;

/// The stages' sizes on a GPU that runs them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Terms {
    /// Hidden state and logits.
    pub output: u128,
    /// One layer's attention.
    pub attention: u128,
    /// One layer's MLP.
    pub ffn: u128,
    /// The graph inputs in host memory: the gathered embeddings and the
    /// masks.
    pub inputs: u128,
}

/// Compute buffers by backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeBuffers {
    pub gpu: [u128; MAX_DEVICES],
    /// The CPU backend's buffer (`CUDA_Host` / `CPU compute buffer`).
    pub host: u128,
    pub terms: Terms,
}

/// Where the graph's work is, as the compute estimate needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Where {
    /// Repeating layers on each GPU, and in host memory.
    pub layers_on: [u32; MAX_DEVICES],
    pub host_layers: u32,
    pub n_gpus: usize,
    pub backends: [Backend; MAX_DEVICES],
    pub output: Place,
    /// The cache is in host memory (`-nkvo`).
    pub kv_on_host: bool,
    /// The largest tensor of a layer in host memory, and the output
    /// weight: what an offloaded matmul copies.
    pub largest_host_tensor: u128,
    pub output_weight: u128,
    /// One full-attention layer's K and V at the cache types (the copy an
    /// attention run away from its cache makes).
    pub layer_kv: u128,
}

/// What the graph is run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub build: u32,
    pub flash_attn: bool,
    /// K or V quantized.
    pub quantized: bool,
    pub op_offload: bool,
    /// Widest K and V row of a layer (elements).
    pub k_width: u64,
    pub v_width: u64,
    /// A LoRA adapter's matmuls in the graph (`--lora`), once the warm-up
    /// reserves it again with them.
    pub lora: Option<LoraShape>,
}

/// `GGML_OP_OFFLOAD_MIN_BATCH`: the least batch the GPU backends take an
/// op on a host weight for (`ggml-cuda.cu:5327-5331`, Metal and Vulkan
/// alike).
pub const OP_OFFLOAD_MIN_BATCH: u32 = 32;

/// The stage sizes for a backend: `mask` bytes per mask element there,
/// `dequant` whether flash attention keeps f16 copies of a quantized cache.
fn stages(m: &LocalModel, r: &Resolved, s: &Settings, mask: u128, dequant: bool) -> Terms {
    let d = &m.dims;
    let ub = u128::from(r.n_tokens);
    let n_kv = u128::from(r.n_ctx_seq);
    let n_kv_swa = u128::from(r.swa_cells);
    let hidden = 4 * u128::from(d.n_embd) * ub;
    let masks = mask * ub * (n_kv + n_kv_swa);
    let q = 4 * u128::from(d.q) * ub;
    let kv_in = 4 * u128::from(s.k_width + s.v_width) * ub;
    let core = if s.flash_attn {
        let copies = if dequant && s.quantized {
            2 * n_kv * u128::from(r.n_stream) * u128::from(s.k_width + s.v_width)
        } else {
            0
        };
        4 * u128::from(d.attn_out) * ub + copies
    } else {
        4 * n_kv * ub * u128::from(d.n_head)
    };
    // DeepSeek Sparse Attention: the lightning indexer's f32 scores over
    // every cell and the top-k mask made from them, applied as a mask over
    // every cell (`llama-graph.cpp:2954-2986`): 8 bytes a cell and token
    // with flash attention, about 16 without (measured on b10488's CPU
    // build, 4 096 to 32 768 cells, micro-batches of 128 to 1 024, 1 to 4
    // streams: `scripts/measure/families/dsa/llamacpp/NOTES.md`).
    let indexer = match (m.cache.indexer, s.flash_attn) {
        (0, _) => 0,
        (_, true) => 8 * n_kv * ub,
        (_, false) => 16 * n_kv * ub,
    };
    let logits = 4 * u128::from(d.n_vocab) * u128::from(r.n_outputs);
    let t = Terms {
        output: hidden + logits,
        attention: 2 * hidden + q + kv_in + masks + core + indexer,
        ffn: 2 * hidden + 12 * u128::from(d.ffn) * ub + masks,
        inputs: hidden + masks,
    };
    match s.lora {
        None => t,
        Some(l) => with_lora(
            t,
            l,
            &Live {
                base: 2 * hidden + masks,
                hidden,
                q,
                ffn: 4 * u128::from(d.ffn) * ub,
                ax: 4 * u128::from(l.rank) * ub,
                logits,
                ax_out: 4 * u128::from(l.rank) * u128::from(r.n_outputs),
                flash: s.flash_attn,
            },
        ),
    }
}

/// What is live around an adapted matmul: the stage's hidden states and
/// masks (`base`), one hidden state, the queries, one MLP activation, and
/// the adapter's `ax` (`{r, n_tokens}` f32); at the output layer the
/// logits and its `ax` (`{r, n_outputs}`).
struct Live {
    base: u128,
    hidden: u128,
    q: u128,
    ffn: u128,
    ax: u128,
    logits: u128,
    ax_out: u128,
    flash: bool,
}

/// The stages with an adapter's matmuls (`build_lora_mm`: `ax = A·x`,
/// then `B·ax` the size of the result, added into it). Measured on
/// b10488's CPU build with ggml-alloc's trace at the peak
/// (`scripts/measure/llamacpp/lora/NOTES.md` (b), `raw/adbg`):
/// - attention with flash attention peaks at the query projection, its
///   result and its rotated copy live: `B·ax` takes the copy's place and
///   `ax` comes on top (+`r·n_tokens·4`, exact); without it the scores
///   are the peak and the projection's moment is smaller;
/// - the MLP runs the gate first (`swiglu`'s first source): its result,
///   `ax` and `B·ax` before the up projection exists, which passes the
///   stage's three activations when `r` is wider than the MLP
///   (+`(r − n_ff)·n_tokens·4`, exact); the up projection's `B·ax` takes
///   the GLU's place and its `ax` a hole one hidden state wide, left by
///   the attention (0 measured up to that width); the down projection's
///   moment is the GLU, its result, `B·ax` and `ax`;
/// - the output layer (`lm_head`, measured on a base of 32 768 tokens
///   asked for 64 outputs, where the logits are the peak): `B·ax`, as
///   wide as the logits, comes on top of the stage (the hidden states
///   stay live), and `ax` too with flash attention; without it `ax` takes
///   a hole the scores left (+logits, exact to the printed MiB).
fn with_lora(t: Terms, l: LoraShape, v: &Live) -> Terms {
    let mut out = t;
    if l.attn {
        out.attention = if v.flash {
            t.attention + v.ax
        } else {
            t.attention.max(v.base + 2 * v.q + v.ax)
        };
    }
    if l.gate {
        out.ffn = out.ffn.max(v.base + 2 * v.ffn + v.ax);
    }
    if l.up {
        out.ffn = out
            .ffn
            .max(v.base + 3 * v.ffn + v.ax.saturating_sub(v.hidden));
    }
    if l.down {
        out.ffn = out.ffn.max(v.base + v.ffn + 2 * v.hidden + v.ax);
    }
    if l.head {
        let ax = if v.flash { v.ax_out } else { 0 };
        out.output = t.output + v.logits + ax;
    }
    out
}

/// Bytes per mask element on a GPU (the F16 cast, or the F32 copy
/// without flash attention) and in host memory (F32 until b9410, F16 with
/// flash attention since, `build_attn_inp_kq_mask`, `llama-graph.cpp:28-45`).
const fn mask_bytes(s: &Settings, host: bool) -> u128 {
    match (s.flash_attn, host) {
        (false, _) => 4,
        (true, false) => 2,
        (true, true) => {
            if s.build >= builds::MASK_F16 {
                2
            } else {
                4
            }
        }
    }
}

/// The stages of a context, wherever its layers are placed: on the host,
/// and on a GPU that keeps flash attention's f16 copies of a quantized
/// cache (CUDA since b9489) or one that does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stages {
    pub host: Terms,
    pub dequant: Terms,
    pub plain: Terms,
}

impl Stages {
    /// The stages of `m` in the context `r` run with `s`.
    pub fn of(m: &LocalModel, r: &Resolved, s: &Settings) -> Stages {
        let dev_mask = mask_bytes(s, false);
        Stages {
            host: stages(m, r, s, mask_bytes(s, true), false),
            dequant: stages(m, r, s, dev_mask, true),
            plain: stages(m, r, s, dev_mask, false),
        }
    }
}

/// The compute buffers: the largest stage each backend runs (`st`: the
/// context's stages, [`Stages::of`]).
pub fn buffers(st: &Stages, r: &Resolved, s: &Settings, w: &Where) -> ComputeBuffers {
    let host_terms = st.host;
    let offload = s.op_offload && r.n_tokens >= OP_OFFLOAD_MIN_BATCH && w.n_gpus > 0;
    let mut gpu = [0u128; MAX_DEVICES];
    for (d, slot) in gpu.iter_mut().enumerate().take(w.n_gpus) {
        let cuda = matches!(w.backends[d], Backend::Cuda);
        let t = if cuda && s.build >= builds::CUDA_FA_DEQUANT {
            st.dequant
        } else {
            st.plain
        };
        let kv_copy = if w.kv_on_host { w.layer_kv } else { 0 };
        let mut c = 0;
        if w.layers_on[d] > 0 {
            c = c.max((t.attention + kv_copy).max(t.ffn));
        }
        if w.output == Place::Gpu(d) {
            c = c.max(t.output);
        }
        if d == 0 && offload && w.host_layers > 0 {
            let layer = (t.attention + w.layer_kv).max(t.ffn);
            c = c.max(layer + w.largest_host_tensor);
        }
        if d == 0 && offload && w.output == Place::Host {
            c = c.max(t.output + w.output_weight);
        }
        *slot = c;
    }
    ComputeBuffers {
        gpu,
        host: host_buffer(&host_terms, w, offload),
        terms: host_terms,
    }
}

/// The CPU backend's buffer: the inputs, and the stages the CPU runs
/// itself (its layers when nothing is offloaded, attention over a cache in
/// host memory, the output layer in host memory without offload).
fn host_buffer(t: &Terms, w: &Where, offload: bool) -> u128 {
    let mut c = t.inputs;
    if w.n_gpus == 0 {
        return c.max(t.attention).max(t.ffn).max(t.output);
    }
    if w.host_layers > 0 && !offload {
        c = c.max(t.attention).max(t.ffn);
    }
    if w.output == Place::Host && !offload {
        c = c.max(t.output);
    }
    c
}

/// `llama_context::output_reserve` (`src/llama-context.cpp:2032-2088`):
/// host memory of `(n_vocab + n_embd·[embeddings]) × max(n_outputs,
/// n_seq_max) × 4` bytes, reserved at construction for `n_seq_max`
/// outputs (`:374`); it grows when a batch asks for more outputs.
pub fn output_buffer(m: &LocalModel, r: &Resolved, embeddings: bool) -> u128 {
    let per = u128::from(m.dims.n_vocab)
        + if embeddings {
            u128::from(m.dims.n_embd)
        } else {
            0
        };
    per * u128::from(r.n_seq_max) * 4
}
