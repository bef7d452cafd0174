//! vLLM 0.33's memory arithmetic: the budget a GPU gives the engine, what
//! the model, the model runner and the profiling run take of it, and the
//! key/value pool the rest becomes (blocks, tokens, concurrency, the fit
//! check and the longest sequence that fits).
//!
//! Source: the vLLM 0.33.0 release wheel (its `.py` files are the tagged
//! sources); each rule carries its name in `scripts/measure/vllm/NOTES.md`
//! (R1–R28) and its `file:line`. Held to published start-up logs in
//! `tests/infer_vllm.rs` (`tests/fixtures/vllm_logs.jsonl`).
//!
//! Exact where vLLM computes: the budget (R1, R2, R7), the scheduler's
//! defaults (R11), the pool (R12–R22). Estimates where vLLM measures: the
//! weights (R4: torch's allocated bytes after loading, held to the logs
//! within 1%), the profiling run's peak (R8, R9), memory outside torch, and
//! the CUDA-graph estimate (R6); each says what it counts.
//!
//! One rank of `tensor_parallel_size`: vLLM's pool is per GPU, and every
//! rank takes the same number of blocks (the minimum over ranks, R18).
//!
//! Reads `crate::model` and the inference inputs; never matches on a
//! family.

use super::ranks::{Ranks, Stage};
use super::sparse::{indexer_token_bytes, Rank, SparseCosts, SparseMla, Step, SPARSE_BLOCK};
use crate::infer::gcd;
use crate::infer::run::{Inference, MaxLen};
use crate::model::family::{EmbedScale, Mlp, Recurrence, Router};
use crate::model::{
    Architecture, FormatOptions, Holder, KvGeometry, LayerAttention, LayerKind, ModuleName,
    ParamTensor, Place, Role, WeightFormat,
};
use std::fmt;

const GIB: u128 = 1 << 30;
const MIB: u128 = 1 << 20;

/// The CUDA caching allocator hands out multiples of 512 bytes
/// (`kMinBlockSize`, `round_size` in c10 `CUDACachingAllocator.cpp`), and
/// `max_memory_allocated` counts the rounded blocks.
const GRAIN: u128 = 512;

/// `DEFAULT_VOCAB_PADDING_SIZE` (`model_executor/layers/vocab_parallel_embedding.py:36`).
const VOCAB_PAD: u128 = 64;

/// The length vLLM assumes when the config names none
/// (`config/model.py:2586-2596`).
const DEFAULT_LEN: u32 = 2048;

/// CUDA memory outside torch that appears after vLLM's baseline snapshot
/// and so is counted in the budget: kernel modules loaded lazily by the
/// profiling run's first launches, libraries' own buffers. vLLM measures
/// it (`utils/mem_utils.py:312`, `init_free - free_after_profile`); no
/// code computes it. An allowance of the order the published single-GPU
/// log shows (0.06 GiB, v0.26); NCCL's lazily connected buffers under
/// tensor parallelism are not in it.
const NON_TORCH: u128 = 64 * MIB;

/// Where vLLM is started from (`UsageContext`): its defaults differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `vllm serve` (`OPENAI_API_SERVER`).
    Server,
    /// The `LLM` class (`LLM_CLASS`).
    LlmClass,
}

/// Why vLLM refuses the settings at start-up, before any memory is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VllmError {
    /// "Total number of attention heads must be divisible by tensor
    /// parallel size" (`config/model.py:1557-1564`).
    HeadsNotDivisible {
        heads: u32,
        tensor_parallel_size: u32,
    },
    /// "max_num_batched_tokens must be greater than or equal to
    /// max_num_seqs" (`config/scheduler.py:331-336`).
    BatchedTokensBelowSeqs {
        max_num_batched_tokens: u32,
        max_num_seqs: u32,
    },
    /// More pipeline stages than layers: `get_pp_indices` would leave a
    /// stage without layers (not modelled).
    StagesAboveLayers {
        layers: u32,
        pipeline_parallel_size: u32,
    },
    /// MTP speculative decoding on a model whose drafter vramfit does not
    /// size, or over pipeline stages (the drafter keeps its own embedding
    /// there, `v1/worker/gpu/spec_decode/eagle/utils.py:59-62`).
    MtpNotModelled,
    /// Pipeline stages on a model whose layers differ (Gemma 4: vLLM's
    /// `Gemma4Model` builds its embeddings and per-layer embeddings on
    /// every stage, and the stages' layer kinds differ): not modelled.
    StagesOfVaryingLayers,
    /// fp8 experts whose width on a rank is off the 128-wide scale blocks
    /// with no finer block of at least 32 to refine to
    /// (`fused_moe/oracle/fp8.py: refine_fp8_moe_block_shape`, then
    /// `quantization/utils/fp8_utils.py: validate_fp8_block_shape_moe`
    /// raises).
    Fp8ExpertBlocks { width: u32 },
    /// R34: sparse attention on a GPU with no sparse latent kernel (every
    /// sparse backend's `supports_compute_capability`: 9.x, 10.x, 12.x).
    NoSparseKernel { major: u8, minor: u8 },
    /// R34: sparse attention with a block size its indexer does not take
    /// (64 tokens only, `v1/attention/backends/mla/indexer.py:286`).
    SparseBlock { block_size: u32 },
    /// R34: consumer Blackwell's sparse kernel with an `fp8_e5m2` cache
    /// ([`SparseMla::supported`]).
    SparseCacheDtype,
}

impl fmt::Display for VllmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VllmError::HeadsNotDivisible {
                heads,
                tensor_parallel_size,
            } => write!(
                f,
                "vLLM needs tensor_parallel_size ({tensor_parallel_size}) to divide the attention heads ({heads})"
            ),
            VllmError::BatchedTokensBelowSeqs {
                max_num_batched_tokens,
                max_num_seqs,
            } => write!(
                f,
                "vLLM needs max_num_batched_tokens ({max_num_batched_tokens}) to be at least max_num_seqs ({max_num_seqs})"
            ),
            VllmError::StagesAboveLayers {
                layers,
                pipeline_parallel_size,
            } => write!(
                f,
                "pipeline_parallel_size ({pipeline_parallel_size}) is more than the model's {layers} layers: a stage would hold none"
            ),
            VllmError::StagesOfVaryingLayers => write!(
                f,
                "vLLM over pipeline stages is not modelled yet for a model whose layers differ (Gemma 4: global and sliding layers, layers reusing keys and values, per-layer embeddings); one stage is (with tensor_parallel_size for more GPUs)"
            ),
            VllmError::Fp8ExpertBlocks { width } => write!(
                f,
                "vLLM 0.33 cannot split these fp8 experts: each GPU's expert width ({width}) is not a multiple of the 128-wide scale blocks, and no finer block of 32 or more divides it and the hidden size (vLLM raises \"The output_size of gate's and up's weight = {width} is not divisible by weight quantization block_n = 128\"): pick a tensor_parallel_size that leaves whole blocks, or enable_expert_parallel"
            ),
            VllmError::NoSparseKernel { major, minor } => write!(
                f,
                "vLLM 0.33 has no sparse attention kernel for this GPU (compute capability {major}.{minor}): DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) runs on Hopper and Blackwell only"
            ),
            VllmError::SparseBlock { block_size } => write!(
                f,
                "DeepSeek Sparse Attention's indexer takes blocks of 64 tokens only, not block_size {block_size}: leave block_size out (vLLM sets 64) or give 64"
            ),
            VllmError::SparseCacheDtype => write!(
                f,
                "vLLM 0.33's sparse attention kernel for consumer Blackwell (FLASHINFER_MLA_SPARSE_SM120) takes only its packed fp8_ds_mla cache, which kv_cache_dtype auto, fp8 or fp8_e4m3 give, not fp8_e5m2"
            ),
            VllmError::MtpNotModelled => write!(
                f,
                "vLLM's MTP speculative decoding is modelled for the Gated DeltaNet hybrids (Qwen3.5 / 3.6, Qwen3-Next: their one MTP layer as the drafter) on one pipeline stage: this model's drafter, or the drafter over pipeline stages, is not modelled yet"
            ),
        }
    }
}

impl std::error::Error for VllmError {}

/// What vLLM 0.33 does with one GPU (one rank) for one model and settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// R4: torch bytes `load_model` leaves, in vLLM's layout
    /// ([`Holder::Vllm`]), with the buffers vLLM's model keeps (the rotary
    /// cos/sin cache, the attention layers' scale scalars).
    pub weights: u128,
    /// Torch buffers the model runner allocates outside `load_model` and
    /// before profiling (the sampler's penalty counts, input buffers):
    /// counted in vLLM's "consumed" memory.
    pub runner: u128,
    /// R9: what the profiling run adds at its highest moment (the dummy
    /// batch of `max_num_batched_tokens` through the model, then the
    /// sampler on `num_reqs` rows). An estimate of a measured quantity.
    pub activation_peak: u128,
    /// Memory outside torch counted in the budget ([`NON_TORCH`]).
    pub non_torch: u128,
    /// R6: the CUDA-graph estimate subtracted from the budget (0 with
    /// `enforce_eager`). An estimate of a measured quantity.
    pub cudagraphs: u128,
    /// R11: the scheduler's limits, vLLM's defaults for the GPU when not
    /// given.
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    pub block_size: u32,
    /// R22: the length the model's config gives (its positions, else 2048).
    pub model_len: u32,
    /// R22: the length vLLM runs with (`MaxLen::Model`: `model_len`;
    /// `Auto`: the longest that fits the pool, when the pool is known). A
    /// length above `model_len` is computed as asked; vLLM refuses it unless
    /// `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set (`config/model.py:2657-2690`).
    pub max_model_len: u32,
    /// R12–R17: the pool's layout on one rank.
    pub kv: KvLayout,
    /// R18: bytes one block takes over every layer group.
    pub bytes_per_block: u128,
    /// R19: blocks one request of `max_model_len` tokens takes, summed over
    /// the groups.
    pub blocks_per_request: u128,
    /// R1, R7, R18–R21: the pool, when the GPU's total memory or the pool's
    /// size (`kv_cache_memory`) is known.
    pub pool: Option<Pool>,
    /// R25: the parallel sizes, and the pipeline stage whose GPU the plan
    /// shows (the fullest; the only one at `pipeline_parallel_size` 1).
    pub ranks: Ranks,
    pub stage: Stage,
    /// R27: the weights this GPU holds in host memory (`cpu_offload_gb`).
    pub host_weights: u128,
    /// R28: the kernel a Gated DeltaNet layer's prefill runs on this GPU.
    pub gdn_prefill: GdnPrefill,
    /// The checkpoint's encoders vLLM loads and profiles, not sized
    /// ([`crate::model::family::Spec::multimodal`]).
    pub unsized_encoders: bool,
    /// A mixture's experts are held in fp8 (vLLM's `Fp8MoEMethod`).
    pub fp8_experts: bool,
    /// The kind of the recurrent layers whose states the pool pages, if any.
    pub state_kind: Option<Recurrence>,
    /// Layers with their own head width (Gemma 4): vLLM takes
    /// FlashAttention 4 where it can (`Gemma4Config.verify_and_update_config`,
    /// `models/config.py:301-368`), whose head-256 kernel on Blackwell
    /// takes 128-token blocks (`FA4_HD256_PAGE_SIZE`), not modelled.
    pub fa4_blocks: bool,
    /// R34: the sparse latent-attention kernel and its cache format, for
    /// DeepSeek Sparse Attention.
    pub sparse: Option<SparseMla>,
}

impl Plan {
    /// vLLM's logged "peak activation": the transient peak and the applied
    /// CUDA-graph estimate together (R8, `v1/worker/gpu_worker.py:748`).
    pub fn logged_activation(&self) -> u128 {
        self.activation_peak + self.cudagraphs
    }

    /// Everything but the pool that the budget pays for (R7).
    pub fn non_kv(&self) -> u128 {
        self.weights + self.runner + self.activation_peak + self.non_torch + self.cudagraphs
    }

    /// Pool bytes `seqs` requests of `len` tokens take, with these
    /// settings ([`KvLayout::bytes_for`]).
    pub fn kv_bytes_for(&self, seqs: u128, len: u128) -> u128 {
        self.kv.bytes_for(seqs, len)
    }
}

/// The key/value pool on one GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// R1: `ceil(total × gpu_memory_utilization)` (`None`: the GPU is not
    /// known and the pool's size was given).
    pub requested: Option<u128>,
    /// R7: what is left for the pool (`kv_cache_memory` when given).
    pub available: u128,
    /// R18: `available // bytes_per_block` (the null block included).
    pub blocks: u128,
    /// R20: vLLM's "GPU KV cache size" (`int(concurrency × max_model_len)`,
    /// not the token slots of a hybrid model).
    pub tokens: u128,
    /// R19: blocks one request of `max_model_len` takes.
    pub blocks_per_request: u128,
    /// R20: requests of `max_model_len` at once, in thousandths, rounded
    /// down (`blocks / blocks_per_request`; [`Pool::max_concurrency`]).
    pub max_concurrency_milli: u128,
    /// R21: one request of `max_model_len` fits beside the null block.
    pub fits: bool,
    /// R21: when it does not, the longest that would (0: not one token).
    pub estimated_max_len: Option<u32>,
}

impl Pool {
    /// vLLM's "Maximum concurrency" (`v1/core/kv_cache_utils.py:1061-1094`),
    /// as the float it prints with `%.2f`.
    #[allow(clippy::cast_precision_loss)]
    pub fn max_concurrency(&self) -> f64 {
        self.blocks as f64 / self.blocks_per_request.max(1) as f64
    }
}

/// The pool's layout on one rank: the page of one layer and the groups of
/// layers that share a block table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvLayout {
    /// Tokens per block of the full-attention groups.
    pub block_size: u128,
    /// Tokens per block of the sliding-window groups: the block size, or
    /// more where their pages were raised to the full layers' (R14).
    pub sliding_block: u128,
    /// R14: bytes of one layer's block.
    pub layer_page: u128,
    /// R17: groups of full-attention and of sliding-window layers.
    pub full_groups: u128,
    pub sliding_groups: u128,
    /// R17: layers of the widest group (padding included).
    pub layers_per_group: u128,
    /// R28: groups of recurrent layers (0: none), a block one
    /// request's convolution and recurrent state padded to the attention
    /// page, and the blocks a request takes in each.
    pub state_groups: u128,
    pub state_blocks: u128,
    /// One recurrent layer's state for one request before it is padded to
    /// the attention page (`MambaSpec.real_page_size_bytes`; 0: none): what
    /// vLLM's "Padding mamba page size by x%" is counted against.
    pub state_bytes: u128,
    /// The sliding window, tokens (0: none).
    pub window: u128,
    /// The window is a chunk (`Spec::chunked`: Llama 4's
    /// `ChunkedLocalAttentionSpec`).
    pub chunked: bool,
    /// R19: tokens scheduled but not yet freed (`2 × max_num_batched_tokens`).
    pub in_flight: u128,
}

impl KvLayout {
    /// The layout of `a` with these settings, `mnbt` tokens per step, on
    /// the pipeline stage with the most layers.
    pub fn of(a: &Architecture, inf: &Inference, mnbt: u32, cc: Option<(u8, u8)>) -> KvLayout {
        let pp = inf.vllm.pipeline_parallel_size.get();
        let widest = (0..pp)
            .map(|r| Stage::of(a.layers, r, pp))
            .max_by_key(|s| (s.layers(), u32::MAX - s.rank))
            .unwrap_or(Stage::whole(a.layers));
        KvLayout::of_stage(a, inf, (mnbt, cc), widest)
    }

    /// The layout of `a` on one pipeline stage (R26): the groups are the
    /// whole model's, projected onto the stage's layers
    /// (`_project_kv_cache_groups_to_worker`,
    /// `v1/core/kv_cache_planning.py:1504-1508`), so a block holds the
    /// stage's share of each group's layers (taken in proportion: vLLM
    /// takes them by index); in-flight tokens `(pp + 1) ×
    /// max_num_batched_tokens` (`config/vllm.py:588-609`). The GPU's
    /// compute capability `cc` picks the kernels that shape the pages
    /// ([`GdnPrefill`], [`SparseMla`]; `None`: not known).
    pub fn of_stage(
        a: &Architecture,
        inf: &Inference,
        (mnbt, cc): (u32, Option<(u8, u8)>),
        stage: Stage,
    ) -> KvLayout {
        let g = KvGeometry::of(a);
        let prefill = GdnPrefill::of(cc, a.linear_k_dim);
        let sparse = SparseMla::pick(a, inf, cc);
        let tp = u128::from(inf.vllm.tensor_parallel_size.get());
        let bs = match sparse {
            Some(_) => u128::from(SPARSE_BLOCK),
            None => u128::from(inf.vllm.block_size.get()),
        };
        let dt = u128::from(inf.kv_dtype.bytes(model_dtype(inf)));
        // R12, R13, R14 (`config/model.py:1663-1683`,
        // `v1/kv_cache_interface.py:584-602`): a head slot per key/value
        // head kept on this rank (at least one: replicas below tp), key and
        // value each `head_dim`; latent attention one slot of
        // `kv_lora_rank + rope_dim` (`head_size_v = 0`, `:743`), on every
        // rank.
        let slots = |kv_heads: u64, head_dim: u64| {
            (u128::from(kv_heads) / tp).max(1) * 2 * u128::from(head_dim)
        };
        let (per_token, can_slide) = match g.layer {
            LayerAttention::Heads {
                kv_heads, head_dim, ..
            } => (slots(kv_heads, head_dim), true),
            LayerAttention::Latent(_) => (u128::from(g.latent_width()), false),
        };
        // Gemma 4's global layers: their own head width and key/value
        // heads, keys as values stored as both (`head_size_v = head_size`).
        let full_token = if a.family.spec().global_attention {
            let gh = a.global_heads();
            slots(u64::from(gh.kv_heads), u64::from(gh.head_dim))
        } else {
            per_token
        };
        let (cached, cached_sliding) = cached_layers(a, &g);
        // Nemotron-H's MLPs alone hold no cache.
        let layers = cached.saturating_sub(u128::from(a.ffn_layers)).max(1);
        // MTP: the drafter's attention layers, alike the target's full
        // ones (`is_draft` is not compared), join their bucket
        // (`v1/kv_cache_interface.py:215`, `v1/worker/gpu/attn_utils.py:138-155`).
        let draft = if inf.vllm.num_speculative_tokens.get() > 0 {
            u128::from(a.mtp_layers())
        } else {
            0
        };
        let state = StatePage::of(a, inf, prefill);
        let linear = state.map_or(0, |st| st.layers).min(layers);
        let sliding = if can_slide && g.window > 0 {
            cached_sliding.min(layers - linear)
        } else {
            0
        };
        // A hybrid's layers are full attention and Gated DeltaNet (no
        // family has windows beside them): the second kind is the states.
        let (full_groups, other_groups, layers_per_group) =
            groups(layers - sliding - linear + draft, sliding + linear);
        let (sliding_groups, state_groups) = if linear > 0 {
            (0, other_groups)
        } else {
            (other_groups, 0)
        };
        let (block_size, state_blocks) = match state {
            Some(st) if linear > 0 => st.layout(bs, per_token * dt, inf.vllm.enable_prefix_caching),
            Some(_) | None => (bs, 0),
        };
        let full = layers - sliding - linear + draft;
        // R34: a sparse layer's page holds its latent in the kernel's
        // format and its indexer's keys: one group, each layer its own
        // page, no padding (`scripts/measure/families/dsa/NOTES_vllm.md` §3).
        let full_bytes = match sparse {
            Some(k) => {
                k.latent_token_bytes(a, u128::from(model_dtype(inf))) + indexer_token_bytes(a)
            }
            None => full_token * dt,
        };
        let (block_size, sliding_block, layer_page) = unify_pages(
            (block_size, full_bytes, full > 0),
            (bs, per_token * dt, sliding > 0),
        );
        let all = (u128::from(a.layers) + draft).max(1);
        let share = (layers_per_group * (u128::from(stage.layers()) + draft)).div_ceil(all);
        let pp = inf.vllm.pipeline_parallel_size.get();
        KvLayout {
            block_size,
            sliding_block,
            layer_page,
            full_groups,
            sliding_groups,
            layers_per_group: share.min(layers_per_group),
            state_groups,
            state_blocks,
            state_bytes: state.filter(|_| linear > 0).map_or(0, |st| st.bytes),
            window: u128::from(g.window),
            chunked: a.family.spec().chunked,
            in_flight: max_in_flight(mnbt, pp),
        }
    }

    /// R18: bytes one block takes, the widest group's pages
    /// (`v1/core/kv_cache_planning.py:574-605`).
    pub fn bytes_per_block(&self) -> u128 {
        self.layer_page * self.layers_per_group
    }

    /// R19: blocks one request of `len` tokens takes over the groups
    /// (`v1/kv_cache_interface.py:643-648` full attention, `cdiv(len, bs)`;
    /// `:914-956` a sliding window, `cdiv(min(window - 1 + in_flight,
    /// len), bs) + 1`; `:861-888` a chunk, `cdiv(min(chunk + in_flight,
    /// len), bs)`).
    pub fn blocks_per_request(&self, len: u128) -> u128 {
        let bs = self.block_size.max(1);
        let full = self.full_groups * len.div_ceil(bs);
        let sb = self.sliding_block.max(1);
        let sliding = self.sliding_groups
            * if self.chunked {
                (self.window + self.in_flight).min(len).div_ceil(sb)
            } else {
                let kept = (self.window.saturating_sub(1) + self.in_flight).min(len);
                kept.div_ceil(sb) + 1
            };
        full + sliding + self.state_groups * self.state_blocks
    }

    /// R21: bytes one request of `len` tokens needs
    /// (`v1/core/kv_cache_planning.py:1253-1285`).
    pub fn needed(&self, len: u128) -> u128 {
        self.bytes_per_block() * self.blocks_per_request(len)
    }

    /// Pool bytes `seqs` requests of `len` tokens take: their blocks and
    /// the null block the pool keeps (`v1/core/block_pool.py:929`).
    pub fn bytes_for(&self, seqs: u128, len: u128) -> u128 {
        (seqs * self.blocks_per_request(len) + 1) * self.bytes_per_block()
    }

    /// R21/R22: the longest length in `1..=upto` whose request needs at
    /// most `memory` bytes, by vLLM's binary search (0: not even one token;
    /// `v1/core/kv_cache_planning.py:1288-1334`).
    pub fn longest_within(&self, memory: u128, upto: u32) -> u32 {
        if self.needed(1) > memory {
            return 0;
        }
        let (mut lo, mut hi, mut best) = (1u64, u64::from(upto), 1u64);
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            if self.needed(u128::from(mid)) <= memory {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        u32::try_from(best).unwrap_or(upto)
    }

    /// R18–R21: the pool `available` bytes make for requests of `len`.
    pub fn pool(&self, requested: Option<u128>, available: u128, len: u32) -> Pool {
        let bpb = self.bytes_per_block().max(1);
        let per_request = self.blocks_per_request(u128::from(len)).max(1);
        let blocks = available / bpb;
        // The fit checks plan against the blocks left beside the null
        // block, and refuse a pool of none (`kv_cache_planning.py:50-87`,
        // `:1536-1543`).
        let usable = available.saturating_sub(bpb);
        let fits = available > bpb && self.needed(u128::from(len)) <= usable;
        Pool {
            requested,
            available,
            blocks,
            tokens: vllm_tokens(blocks, per_request, len),
            blocks_per_request: per_request,
            max_concurrency_milli: blocks * 1000 / per_request,
            fits,
            estimated_max_len: (!fits).then(|| self.longest_within(usable, len)),
        }
    }
}

impl KvLayout {
    /// R18: a worker's pool `p` cut to `blocks`, the fewest over the
    /// workers (`v1/core/kv_cache_planning.py:1583-1596`), its tokens and
    /// concurrency counted from them.
    pub fn cut(&self, p: Pool, blocks: u128, len: u32) -> Pool {
        let blocks = blocks.min(p.blocks);
        Pool {
            blocks,
            tokens: vllm_tokens(blocks, p.blocks_per_request, len),
            max_concurrency_milli: blocks * 1000 / p.blocks_per_request.max(1),
            ..p
        }
    }
}

/// Which kernel runs a Gated DeltaNet layer's prefill
/// (`_resolve_gdn_prefill_backend`,
/// `model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py:148-270`):
/// FlashInfer's on Hopper (compute capability 9.0), and on Blackwell
/// (10.x, 12.x) with key heads of 128 and CUDA 13 (the runtime vLLM 0.33's
/// torch 2.14 wheels are built for, inferred); Triton's (FLA) otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GdnPrefill {
    /// Emits the state mid-prefill (`FLASHINFER_GDN_CHECKPOINT_ALIGNMENT`,
    /// 64 tokens, `v1/attention/backends/gdn_attn.py:34`): each state
    /// group keeps one more block per request (`num_prefill_checkpoint_blocks
    /// = 1`, `qwen_gdn_linear_attn.py:739-750`), and the blocks are
    /// multiples of 64 tokens.
    FlashInfer,
    Triton,
}

impl GdnPrefill {
    /// Under prefix caching, the token alignment of the blocks and the
    /// checkpoint blocks a request keeps ([`StatePage::checkpoint`]).
    const fn checkpoint(self) -> (u128, u128) {
        match self {
            GdnPrefill::FlashInfer => (64, 1),
            GdnPrefill::Triton => (1, 0),
        }
    }

    /// The kernel on a GPU of CUDA compute capability `cc` (`None`: not a
    /// known CUDA GPU, taken as Triton's) for key heads of `head_k_dim`.
    pub fn of(cc: Option<(u8, u8)>, head_k_dim: u32) -> GdnPrefill {
        match cc {
            Some((9, 0)) => GdnPrefill::FlashInfer,
            Some((10 | 12, _)) if head_k_dim == 128 => GdnPrefill::FlashInfer,
            Some(_) | None => GdnPrefill::Triton,
        }
    }
}

/// R28: one recurrent layer's state per request, as vLLM pages it (Gated
/// DeltaNet; R32 Mamba-2; R33 LFM2's short convolutions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StatePage {
    /// Recurrent layers.
    layers: u128,
    /// Bytes of one request's convolution and recurrent state on one rank.
    bytes: u128,
    /// MTP's draft tokens: as many more state blocks a request
    /// (`MambaSpec.num_speculative_blocks`, `layers/mamba/abstract.py:72-91`).
    speculative: u128,
    /// Under prefix caching (`mamba_cache_mode` `align`): the token
    /// alignment of the state's prefill checkpoints, which the blocks are
    /// made multiples of, and the checkpoint blocks a request keeps beside
    /// its two (`MambaSpec.num_prefill_checkpoint_blocks`).
    checkpoint: (u128, u128),
}

/// The smallest kernel block vLLM's CUDA attention backends take
/// (FlashAttention `MultipleOf(16)`, FlashInfer 16, 32 or 64:
/// `v1/attention/backends/flash_attn.py:357-367`, `flashinfer.py:585-603`).
const KERNEL_BLOCK: u128 = 16;

impl StatePage {
    /// R28: `MambaSpec.page_size_bytes` of a Gated DeltaNet layer
    /// (`v1/kv_cache_interface.py:1094-1130`) with its shapes
    /// (`gated_delta_net_state_shape`, `mamba/mamba_utils.py:272-293`):
    /// the convolution's last `kernel − 1` inputs over `2·Hk·Dk + Hv·Dv`
    /// channels in the model's dtype (`mamba_cache_dtype` auto), and
    /// `Hv × Dv × Dk` of recurrent state in `mamba_ssm_cache_dtype`, whose
    /// `auto` is the config's `mamba_ssm_dtype` (fp32 on Qwen3.5 / 3.6,
    /// `Qwen3_5ForConditionalGenerationConfig`) or else the convolution
    /// state's (Qwen3-Next, `_mamba_state_dtype`), each split over the
    /// tensor parallel ranks. `None` without such layers.
    ///
    /// R32: a Mamba-2 layer's (`MambaStateShapeCalculator.mamba2_state_shape`,
    /// `mamba/mamba_utils.py:186-211`) is the same arithmetic over `H·P +
    /// 2·G·N` convolution channels and `H × P × N` of state, the groups
    /// raised to `tp` when `tp` does not divide them
    /// (`extra_groups_for_head_shards`: each rank keeps its heads' group);
    /// its checkpoint is a block a request at any token
    /// (`MambaMixer2.get_kv_cache_spec`, `mamba/mamba_mixer2.py:1108-1118`).
    /// R33: LFM2's short convolution keeps its convolution's inputs alone.
    /// `None` without recurrent layers (KDA's are refused before vLLM's
    /// estimate).
    fn of(a: &Architecture, inf: &Inference, prefill: GdnPrefill) -> Option<StatePage> {
        let rule = a.family.spec().linear?;
        let tp = u128::from(inf.vllm.tensor_parallel_size.get());
        let v = &inf.vllm;
        let dt = v
            .mamba_cache_dtype
            .bytes()
            .unwrap_or_else(|| u128::from(model_dtype(inf)));
        let k_dim = u128::from(a.linear_k_dim);
        let value = u128::from(a.linear_v_heads) * u128::from(a.linear_v_dim);
        let conv_over = |groups: u32| 2 * u128::from(groups) * k_dim + value;
        let (conv, checkpoint) = match rule.kind {
            Recurrence::Mamba2 => (
                conv_over(mamba2_groups(a, inf.vllm.tensor_parallel_size.get())),
                (1, 1),
            ),
            // R33: LFM2's gated short convolution (`ShortConv`,
            // `mamba/short_conv.py`; `short_conv_state_shape`,
            // `mamba_utils.py:249-258`): its `conv_dim` (the hidden size)
            // channels, no recurrent state, no checkpoint.
            Recurrence::ShortConv => (u128::from(a.hidden), (1, 0)),
            Recurrence::GatedDeltaNet | Recurrence::Kda => {
                (conv_over(a.linear_k_heads), prefill.checkpoint())
            }
        };
        // MTP: `conv_kernel_size - 1 + num_spec` steps
        // (`layers/mamba/mamba_utils.py:272-293`).
        let spec = u128::from(v.num_speculative_tokens.get());
        let steps = u128::from(a.linear_conv.saturating_sub(1)) + spec;
        let heads = u128::from(a.linear_v_heads).div_ceil(tp);
        let config = if rule.ssm_fp32 { 4 } else { dt };
        let ssm = v.mamba_ssm_cache_dtype.bytes().unwrap_or(config);
        let bytes =
            steps * conv.div_ceil(tp) * dt + heads * u128::from(a.linear_v_dim) * k_dim * ssm;
        Some(StatePage {
            layers: u128::from(a.linear_layers),
            bytes,
            speculative: spec,
            checkpoint,
        })
    }

    /// R28: the block size and a request's blocks per state group, for a
    /// configured `block_size` of `bs` and `token` bytes of one token's
    /// keys and values in one layer (`Platform._align_hybrid_block_size`,
    /// `platforms/interface.py:940-1125`): the block raised to the
    /// smallest multiple of the kernel alignment whose attention page holds
    /// the state, the state padded to that page (`mamba_page_size_padded`).
    /// Prefix caching (on by default for hybrids, `config/model.py:2276-2278`)
    /// sets `mamba_cache_mode` to `align` (`models/config.py:762-778`): a
    /// request holds 2 state blocks per group and the layer's checkpoint
    /// blocks (FlashInfer's DeltaNet prefill, Mamba-2's), 1 without it
    /// (`MambaSpec.max_memory_usage_bytes`,
    /// `kv_cache_interface.py:1136-1142`).
    fn layout(self, bs: u128, token: u128, cached: bool) -> (u128, u128) {
        let (align, checkpoints) = self.checkpoint;
        let (align, blocks) = if cached {
            (align, 2 + checkpoints)
        } else {
            (1, 1)
        };
        let kernel = crate::infer::lcm(bs.max(KERNEL_BLOCK), align);
        let raised = kernel * self.bytes.div_ceil(kernel * token.max(1));
        let raised = raised.div_ceil(KERNEL_BLOCK) * KERNEL_BLOCK;
        (bs.max(raised), blocks + self.speculative)
    }
}

/// The layers with a key/value cache of their own and how many of them
/// slide: Gemma 4's last `num_kv_shared_layers` read an earlier layer's
/// cache (`kv_sharing_target_layer_name`, `models/gemma4.py`
/// `Gemma4Attention.__init__`) and have no spec
/// (`v1/worker/gpu/attn_utils.py:138-155`, `get_kv_cache_spec`).
fn cached_layers(a: &Architecture, g: &KvGeometry) -> (u128, u128) {
    match a.first_kv_shared() {
        Some(first) => {
            let sliding = (0..first).filter(|&l| a.slides(l)).count();
            (u128::from(first), sliding as u128)
        }
        None => (u128::from(g.layers), u128::from(g.sliding_layers)),
    }
}

/// R14: `(full block, sliding block, page)` for the full-attention and
/// sliding-window layers, each `(tokens per block, bytes per token, has
/// layers)`: pages of two sizes are made one by raising the smaller
/// page's block by the ratio when it divides the larger, else padding it
/// to the larger (`unify_kv_cache_spec_page_size`,
/// `v1/core/kv_cache_planning.py:346-408`; the layout vLLM resolves for
/// mixed page sizes, `LBNHC`, is not block-outermost, so the packed
/// grouping of `:914-1041` does not apply).
fn unify_pages(
    (full_block, full_token, has_full): (u128, u128, bool),
    (slide_block, slide_token, has_sliding): (u128, u128, bool),
) -> (u128, u128, u128) {
    let (full_page, slide_page) = (full_block * full_token, slide_block * slide_token);
    let raised = |block: u128, page: u128, to: u128| match page {
        0 => block,
        p if to.is_multiple_of(p) => block * (to / p),
        _ => block,
    };
    match (has_full, has_sliding) {
        (true, true) if full_page >= slide_page => (
            full_block,
            raised(slide_block, slide_page, full_page),
            full_page,
        ),
        (true, true) => (
            raised(full_block, full_page, slide_page),
            slide_block,
            slide_page,
        ),
        (false, true) => (full_block, slide_block, slide_page),
        (true, false) | (false, false) => (full_block, slide_block, full_page),
    }
}

/// R17: (full groups, sliding groups, layers of the widest group) for
/// `full` and `sliding` layers of one page size
/// (`v1/core/kv_cache_planning.py:1113-1200`, `:416-556`): one group when
/// every layer is alike; else groups of the smaller count's size (the
/// larger's when it is under 1.5 times the smaller), each kind split into
/// `cdiv(n, size)` groups taking `layers[i::groups]`.
fn groups(full: u128, sliding: u128) -> (u128, u128, u128) {
    if full == 0 || sliding == 0 {
        return (u128::from(full > 0), u128::from(full == 0), full + sliding);
    }
    let (small, large) = (full.min(sliding), full.max(sliding));
    let size = if 2 * large < 3 * small { large } else { small };
    let (fg, sg) = (full.div_ceil(size), sliding.div_ceil(size));
    (fg, sg, full.div_ceil(fg).max(sliding.div_ceil(sg)))
}

/// R19: `max_in_flight_tokens = max_concurrent_batches × mnbt`,
/// `pipeline_parallel_size + 1` batches with the V2 runner's async
/// scheduling (`config/vllm.py:588-609`).
fn max_in_flight(mnbt: u32, pp: u32) -> u128 {
    (u128::from(pp) + 1) * u128::from(mnbt)
}

/// R20: `int(max_concurrency × max_model_len)` in floating point, as vLLM
/// computes it (`v1/core/kv_cache_utils.py:1120-1125`).
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn vllm_tokens(blocks: u128, per_request: u128, len: u32) -> u128 {
    let c = blocks as f64 / per_request as f64;
    (c * f64::from(len)) as u128
}

/// R1: `math.ceil(total_memory × gpu_memory_utilization)` in floating
/// point, as vLLM computes it (`v1/worker/utils.py:724-726`).
pub fn requested(total: u128, share: crate::infer::run::Share) -> u128 {
    crate::units::share_ceil(total, share.get())
}

/// R11: vLLM's default `(max_num_batched_tokens, max_num_seqs)` for a
/// device of `total` bytes (`engine/arg_utils.py:2940-3039`); an unknown
/// device takes the smallest tier, as vLLM does when it cannot read one.
/// Not told apart: an A100 or GB10 of 70 GiB or more, which vLLM keeps on
/// the smallest tier.
pub fn batch_defaults(total: Option<u128>, entry: Entry) -> (u32, u32) {
    let total = total.unwrap_or(0);
    let (server, llm, seqs) = if total >= 160 * GIB {
        (16384, 16384, 1024)
    } else if total >= 70 * GIB {
        (8192, 16384, 1024)
    } else {
        (2048, 8192, 256)
    };
    match entry {
        Entry::Server => (server, seqs),
        Entry::LlmClass => (llm, seqs),
    }
}

/// R22: the length the config gives (`max_position_embeddings`, else
/// 2048; `transformers_utils/model_arch_config_convertor.py:374-401`,
/// `config/model.py:2586-2596`). The RoPE scaling factor vLLM multiplies
/// some lengths by (`:2600-2635`) is not in the model's description.
pub fn model_len(a: &Architecture) -> u32 {
    if a.positions > 0 {
        a.positions
    } else {
        DEFAULT_LEN
    }
}

/// R11: `(max_num_batched_tokens, max_num_seqs)`, given or defaulted for
/// the server (`engine/arg_utils.py:3151-3224`: a default batch is at most
/// `max_num_seqs × max_model_len`).
fn batch(inf: &Inference, gpu: Option<u128>, len: u32) -> (u32, u32) {
    let (default_tokens, default_seqs) = batch_defaults(gpu, Entry::Server);
    let seqs = inf.vllm.max_num_seqs.map_or(default_seqs, |c| c.get());
    let tokens = match inf.vllm.max_num_batched_tokens {
        Some(c) => c.get(),
        None => {
            let cap = u64::from(seqs) * u64::from(len);
            u32::try_from(cap.min(u64::from(default_tokens))).unwrap_or(default_tokens)
        }
    };
    (tokens, seqs)
}

/// R11: the batch, and vLLM's check between its two numbers.
fn scheduler(inf: &Inference, gpu: Option<u128>, len: u32) -> Result<(u32, u32), VllmError> {
    let (tokens, seqs) = batch(inf, gpu, len);
    if tokens < seqs {
        return Err(VllmError::BatchedTokensBelowSeqs {
            max_num_batched_tokens: tokens,
            max_num_seqs: seqs,
        });
    }
    Ok((tokens, seqs))
}

/// Bytes per element of the model's dtype: the format's, or for a
/// quantized format its 16-bit compute dtype (bf16 or fp16).
fn model_dtype(inf: &Inference) -> u64 {
    match inf.weights.plain_bytes() {
        0 => 2,
        b => b,
    }
}

/// What vLLM 0.33 does with one GPU for `a` and `inf`; `gpu_total` is the
/// device's total memory (`None`: not known, no pool unless
/// `kv_cache_memory` is given). With pipeline stages, the fullest stage's
/// GPU (R26).
pub fn plan(a: &Architecture, inf: &Inference, gpu_total: Option<u128>) -> Result<Plan, VllmError> {
    plan_on(a, inf, gpu_total, None)
}

/// [`plan`] on a GPU of CUDA compute capability `cc` (`None`: unknown),
/// which picks the Gated DeltaNet prefill kernel ([`GdnPrefill`]).
pub fn plan_on(
    a: &Architecture,
    inf: &Inference,
    gpu_total: Option<u128>,
    cc: Option<(u8, u8)>,
) -> Result<Plan, VllmError> {
    let v = &inf.vllm;
    let prefill = GdnPrefill::of(cc, a.linear_k_dim);
    let sparse = SparseMla::pick(a, inf, cc);
    let ranks = Ranks::of(v);
    if !a.heads.is_multiple_of(ranks.tp) {
        return Err(VllmError::HeadsNotDivisible {
            heads: a.heads,
            tensor_parallel_size: ranks.tp,
        });
    }
    if v.num_speculative_tokens.get() > 0 && (a.mtp_layers() == 0 || ranks.pp > 1) {
        return Err(VllmError::MtpNotModelled);
    }
    if ranks.pp > 1 && a.family.spec().varies_by_layer() {
        return Err(VllmError::StagesOfVaryingLayers);
    }
    if inf.weights == WeightFormat::Fp8 && a.experts > 0 {
        fp8_expert_block(a, ranks)?;
    }
    if a.family.spec().indexer {
        SparseMla::supported(cc, inf.kv_dtype)?;
        let block_size = v.block_size.get();
        if block_size != 16 && block_size != SPARSE_BLOCK {
            return Err(VllmError::SparseBlock { block_size });
        }
    }
    if ranks.pp > a.layers.max(1) {
        return Err(VllmError::StagesAboveLayers {
            layers: a.layers,
            pipeline_parallel_size: ranks.pp,
        });
    }
    let model_len = model_len(a);
    let asked = match inf.ctx {
        MaxLen::Tokens(t) => t.get(),
        MaxLen::Model | MaxLen::Auto => model_len,
    };
    let (mnbt, seqs) = scheduler(inf, gpu_total, asked)?;
    let parts = Parts::of(a, inf);
    let requested = gpu_total.map(|t| requested(t, v.gpu_memory_utilization));
    let stages = (0..ranks.pp).map(|r| {
        let stage = Stage::of(a.layers, r, ranks.pp);
        let costs = Costs::of(a, inf, (mnbt, seqs, asked), (&parts, sparse), stage);
        let kv = KvLayout::of_stage(a, inf, (mnbt, cc), stage);
        let available = v
            .kv_cache_memory
            .map(|b| u128::from(b.get()))
            .or_else(|| requested.map(|r| r.saturating_sub(costs.total())));
        (stage, costs, kv, available)
    });
    let (stage, costs, kv, pool, max_model_len) = fullest(stages, inf.ctx, asked, requested)
        .ok_or(VllmError::StagesAboveLayers {
            layers: a.layers,
            pipeline_parallel_size: ranks.pp,
        })?;
    Ok(Plan {
        weights: costs.weights,
        runner: costs.runner,
        activation_peak: costs.activation,
        non_torch: NON_TORCH,
        cudagraphs: costs.cudagraphs,
        max_num_seqs: seqs,
        max_num_batched_tokens: mnbt,
        block_size: u32::try_from(kv.block_size).unwrap_or(u32::MAX),
        model_len,
        max_model_len,
        kv,
        bytes_per_block: kv.bytes_per_block(),
        blocks_per_request: kv.blocks_per_request(u128::from(max_model_len)),
        pool,
        ranks,
        stage,
        host_weights: costs.host,
        gdn_prefill: prefill,
        unsized_encoders: a.family.spec().multimodal,
        fp8_experts: inf.weights == WeightFormat::Fp8 && a.experts > 0,
        state_kind: a.family.spec().linear.map(|l| l.kind),
        fa4_blocks: a.family.spec().global_attention,
        sparse,
    })
}

/// One stage's GPU: its stage, costs, pool layout and available bytes.
type StageGpu = (Stage, Costs, KvLayout, Option<u128>);

/// R18, R22, R26 over the stages: the length (`auto`: the shortest of each
/// worker's longest, `_auto_fit_max_model_len`,
/// `v1/core/kv_cache_planning.py:1337-1410`), each worker's blocks, then
/// every worker's pool cut to the fewest blocks (`:1583-1596`); vLLM
/// refuses when any worker cannot hold one request (`:1549-1558`). The
/// GPU shown is the fullest: the most bytes in use once the pool is cut.
fn fullest(
    stages: impl Iterator<Item = StageGpu> + Clone,
    ctx: MaxLen,
    asked: u32,
    requested: Option<u128>,
) -> Option<(Stage, Costs, KvLayout, Option<Pool>, u32)> {
    let len = match ctx {
        MaxLen::Auto => stages
            .clone()
            .filter_map(|(_, _, kv, av)| {
                let memory = av?.saturating_sub(kv.bytes_per_block());
                Some(kv.longest_within(memory, asked))
            })
            .min()
            .filter(|&fit| fit > 0)
            .unwrap_or(asked),
        MaxLen::Model | MaxLen::Tokens(_) => asked,
    };
    let pools = stages.map(|(stage, costs, kv, av)| {
        let pool = av.map(|av| kv.pool(requested, av, len));
        (stage, costs, kv, pool)
    });
    let fewest = pools
        .clone()
        .filter_map(|(_, _, _, p)| p.map(|p| p.blocks))
        .min();
    let fits = pools.clone().all(|(_, _, _, p)| p.is_none_or(|p| p.fits));
    let estimated = pools
        .clone()
        .filter_map(|(_, _, _, p)| p.and_then(|p| p.estimated_max_len))
        .min();
    let in_use = |(_, c, kv, _): &(Stage, Costs, KvLayout, Option<Pool>)| {
        c.total() + fewest.unwrap_or(0) * kv.bytes_per_block()
    };
    let mut best: Option<(Stage, Costs, KvLayout, Option<Pool>)> = None;
    for s in pools {
        if best.as_ref().is_none_or(|b| in_use(&s) > in_use(b)) {
            best = Some(s);
        }
    }
    let (stage, costs, kv, pool) = best?;
    let pool = pool.map(|p| Pool {
        fits,
        estimated_max_len: if fits { None } else { estimated },
        ..kv.cut(p, fewest.unwrap_or(p.blocks), len)
    });
    Some((stage, costs, kv, pool, len))
}

/// Pool bytes `seqs` concurrent requests of `len` tokens need, the null
/// block included, with the scheduler's batch as `inf` gives it (or vLLM's
/// default for an unknown GPU, `len` as `max_model_len`): for answers
/// without a GPU and for solvers. [`Plan::kv_bytes_for`] uses the plan's.
pub fn kv_bytes_for(a: &Architecture, inf: &Inference, seqs: u128, len: u128) -> u128 {
    let (mnbt, _) = batch(inf, None, u32::try_from(len).unwrap_or(u32::MAX));
    KvLayout::of(a, inf, mnbt, None).bytes_for(seqs, len)
}

/// What the budget pays for besides the pool, on one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Costs {
    weights: u128,
    runner: u128,
    activation: u128,
    cudagraphs: u128,
    /// Weights in host memory (R27), not in the budget.
    host: u128,
}

impl Costs {
    /// One GPU of `stage`, `(max_num_batched_tokens, max_num_seqs)` per
    /// step: its weights less what `cpu_offload_gb` holds in host memory;
    /// the runner's buffers, with the intermediate tensors a stage after
    /// the first receives (`v1/worker/gpu/model_runner.py:542-551`:
    /// `make_empty_intermediate_tensors` of `max_num_tokens`, the hidden
    /// states and the residual); the forward's peak, and the sampler on
    /// the last stage only, the one that computes logits.
    fn of(
        a: &Architecture,
        inf: &Inference,
        (mnbt, seqs, len): (u32, u32, u32),
        (parts, sparse): (&Parts, Option<SparseMla>),
        stage: Stage,
    ) -> Costs {
        let d = Dims::of(a, inf);
        let (t, s) = (u128::from(mnbt), u128::from(seqs));
        let per_token = d.forward_per_token(a);
        let sampler = if stage.last {
            d.sampler(t, t.min(s))
        } else {
            0
        };
        // R34: the indexer's moment, and the shared workspace it grows,
        // alive to the sampler.
        let sc = sparse.map(|k| {
            let step = Step {
                tokens: t,
                seqs: s,
                len: u128::from(len),
            };
            let rank = Rank {
                layers: u128::from(stage.layers()),
                moe_workspace: t * d.dt * d.moe_workspace(a),
                dt: d.dt,
                rope_table: rope_table(a, d.dt),
            };
            SparseCosts::of(a, inf, (k, step), rank)
        });
        let activation = match sc {
            Some(c) => {
                let held = Dims {
                    held_workspace: true,
                    ..d
                };
                (t * held.forward_per_token(a))
                    .max(sampler)
                    .saturating_add(c.growth)
                    .max(c.indexer_moment)
            }
            None => (t * per_token).max(sampler),
        };
        let cudagraphs = if inf.vllm.enforce_eager {
            0
        } else {
            graphs(per_token, s, t)
        };
        let received = if stage.first {
            0
        } else {
            2 * grain(t * d.hidden * d.dt)
        };
        // MTP: the drafter's persistent `hidden_states` of
        // `max_num_batched_tokens` rows (`v1/worker/gpu/spec_decode/`).
        let drafter = if inf.vllm.num_speculative_tokens.get() > 0 {
            grain(t * d.hidden * d.dt)
        } else {
            0
        };
        let resident = parts.stage(a, stage);
        let host = offloaded(inf, parts.stage_layers(a, stage));
        Costs {
            weights: resident - host + sc.map_or(0, |c| c.load),
            runner: d.runner(t, s) + received + drafter,
            activation,
            cudagraphs,
            host,
        }
    }

    fn total(&self) -> u128 {
        self.weights + self.runner + self.activation + self.cudagraphs + NON_TORCH
    }
}

/// R27: the bytes `cpu_offload_gb` moves to host memory on one GPU
/// (`model_executor/offloader/uva.py:74-124`, `UVAOffloader._maybe_offload_to_cpu`:
/// the decoder layers' parameters, wrapped as `make_layers` builds them,
/// `model_executor/models/utils.py:907-917`, moved whole to pinned host
/// memory, in order, while fewer than `int(cpu_offload_gb × 2**30)` bytes
/// are moved, `model_executor/offloader/base.py:174`): at most the
/// stage's layers. The last parameter moved may pass the limit by its
/// size; counted to the limit.
fn offloaded(inf: &Inference, layers: u128) -> u128 {
    inf.vllm
        .cpu_offload
        .map_or(0, |b| u128::from(b.get()).min(layers))
}

/// The weights of one GPU before pipeline stages split them: before the
/// layers (embeddings), the layers, after them (final norm, head), and
/// the token embedding alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Parts {
    before: u128,
    layers: u128,
    after: u128,
    embedding: u128,
    /// The rotary cache, on every stage.
    rope: u128,
    /// MTP's drafter (0: off): its `fc` (`2h → h`, column-parallel, in the
    /// weights' format), three norms and its layers, each a full-attention
    /// decoder layer split as the target's (`models/qwen3_5_mtp.py:82-141`,
    /// `qwen3_5.py:132-210`); the embedding and the head are the target's
    /// (`v1/worker/gpu/spec_decode/eagle/utils.py:45-119`).
    mtp: u128,
}

impl Parts {
    /// R4 on one GPU of the tensor parallel group, every layer counted.
    fn of(a: &Architecture, inf: &Inference) -> Parts {
        let ranks = Ranks::of(&inf.vllm);
        let dt = u128::from(model_dtype(inf));
        let (format, opts) = (inf.weights, inf.format_options());
        let mut p = Parts {
            before: 0,
            layers: 0,
            after: 0,
            embedding: 0,
            rope: rope_cache(a, dt),
            mtp: 0,
        };
        // One full-attention layer's bytes, the drafter's layer.
        let mut attention_layer = 0;
        // fp8 experts on the scale grid vLLM gives them (`plan_on` has
        // refused a split it cannot make).
        let expert_opts = FormatOptions {
            fp8_block: fp8_expert_block(a, ranks).unwrap_or(128),
            ..opts
        };
        let repeated = RepeatedGroups::of(a, ranks.tp);
        a.for_each_tensor(|at, t| {
            let padded = format
                .experts_only()
                .then(|| mxfp4_experts(a, t, ranks))
                .flatten();
            let (stack, rows, cols) = padded.unwrap_or_else(|| shard(a, t, ranks));
            let rows = rows + repeated.map_or(0, |r| r.rows(t));
            // The Gated DeltaNet's projections are vLLM linear layers like
            // the others (`qwen_gdn_linear_attn.py`: `in_proj_*`,
            // `out_proj` with the model's `quant_config`), and so are the
            // Mamba-2 mixer's and the short convolution's `in_proj` and
            // `out_proj`; their convolutions are built without it
            // (`mamba_mixer2.py`, `short_conv.py`).
            let quantized = format.quantized()
                && matches!(at, Place::Layers { .. })
                && (!format.experts_only() || t.role == Role::Expert)
                && (t.is_linear() || t.recurrent_projection() || indexer_query(t))
                && !matches!(
                    t.module,
                    Some(ModuleName::Router | ModuleName::SharedExpertGate)
                );
            // `A_log` is made fp32 (`qwen_gdn_linear_attn.py:649-654`), and
            // so is the indexer's key norm.
            let element = if t.fp32_stored || indexer_norm(t) {
                4
            } else {
                dt
            };
            let weight = if quantized {
                let opts = if t.role == Role::Expert {
                    expert_opts
                } else {
                    opts
                };
                let (packed, state) = format.linear_bytes(stack, rows, cols, opts, Holder::Vllm);
                grain(packed) + grain(state) + absorbed(t, (stack, rows, cols), dt)
            } else {
                grain(stack * rows * cols * element)
            };
            let bias = if t.bias {
                grain(stack * rows * element)
            } else {
                0
            };
            let b = weight + bias;
            match at {
                Place::Before => {
                    p.before += b;
                    if t.role == Role::Embedding {
                        p.embedding += b;
                    }
                }
                Place::Layers { count } => {
                    p.layers += u128::from(count) * b;
                    if !t.recurrent {
                        attention_layer += b;
                    }
                }
                Place::After => p.after += b,
            }
        });
        p.add_buffers(a);
        let drafters = u128::from(a.mtp_layers());
        if inf.vllm.num_speculative_tokens.get() > 0 && drafters > 0 {
            let h = u128::from(a.hidden);
            let rows = h.div_ceil(u128::from(ranks.tp));
            let fc = if format.quantized() {
                let (packed, state) = format.linear_bytes(1, rows, 2 * h, opts, Holder::Vllm);
                grain(packed) + grain(state)
            } else {
                grain(rows * 2 * h * dt)
            };
            p.mtp = fc + 3 * grain(h * dt) + drafters * (attention_layer + 4 * GRAIN);
        }
        p
    }

    /// The one-element buffers vLLM's Gemma models register beside their
    /// parameters, one allocator block each: the embedding's `normalizer`
    /// (`models/gemma.py`, `gemma2.py`, `gemma3.py`, `gemma4.py`); Gemma
    /// 4's `layer_scalar` in every layer, its router's `root_size` in
    /// every MoE layer, and the per-layer embeddings' three scales
    /// (`models/gemma4.py`: `Gemma4DecoderLayer`, `Gemma4Router`,
    /// `Gemma4Model.__init__`).
    fn add_buffers(&mut self, a: &Architecture) {
        let spec = a.family.spec();
        if spec.embed_scale == EmbedScale::Buffer {
            self.before += GRAIN;
        }
        if spec.layer_scalar {
            self.layers += u128::from(a.layers) * GRAIN;
        }
        if a.moe().is_some_and(|m| m.router == Router::Scaled) {
            let [_, (_, moe)] = a.layer_kinds();
            self.layers += u128::from(moe) * GRAIN;
        }
        if spec.per_layer_embeddings && a.ple_dim > 0 {
            self.after += 3 * GRAIN;
        }
    }

    /// R26: the decoder layers' bytes on `stage`, its share of the layers
    /// (a layer's bytes taken as the model's average: exact when the
    /// layers are alike; a mixture's dense first layers are spread
    /// evenly), with the attention layers' scale scalars.
    fn stage_layers(&self, a: &Architecture, stage: Stage) -> u128 {
        let n = u128::from(stage.layers());
        (self.layers * n).div_ceil(u128::from(a.layers).max(1)) + 4 * GRAIN * n
    }

    /// R26: one GPU of `stage`: its layers, the embedding on the first
    /// stage and the final norm and head on the last, the rotary cache on
    /// every one. A tied head on a last stage that is not the first holds
    /// its own copy of the embedding (`models/llama.py:376-397, 502-517`:
    /// `embed_tokens` on the first rank or, tied, the last; `lm_head` on
    /// the last, tied to it).
    fn stage(&self, a: &Architecture, stage: Stage) -> u128 {
        let before = if stage.first { self.before } else { 0 };
        let after = if stage.last { self.after } else { 0 };
        let tied = if a.tied && stage.last && !stage.first {
            self.embedding
        } else {
            0
        };
        before + self.stage_layers(a, stage) + after + tied + self.rope + self.mtp
    }
}

/// Round `b` up to the allocator's grain.
pub(super) fn grain(b: u128) -> u128 {
    b.div_ceil(GRAIN) * GRAIN
}

/// R4: the weights as `load_model` leaves them on one rank
/// (`v1/worker/gpu/model_runner.py:397-427`: `DeviceMemoryProfiler` reads
/// `max_memory_allocated` just after resetting the peak, so torch's
/// allocated bytes, transients not counted; `platforms/cuda.py:369-374`):
/// every parameter split as vLLM's parallel layers split it ([`shard`]),
/// the linear layers of the decoder in the weights' format in vLLM's layout
/// ([`Holder::Vllm`]; routers and the shared expert's gate stay
/// unquantized), the rest in the model's dtype, each tensor in allocator
/// blocks; then the rotary cos/sin cache and the attention layers' scale
/// scalars.
pub fn weights(a: &Architecture, inf: &Inference) -> u128 {
    Parts::of(a, inf).stage(a, Stage::whole(a.layers))
}

/// A tensor's `(stack, rows, cols)` on one of `tp` ranks, as vLLM's
/// parallel layers split it (`model_executor/layers/linear.py`:
/// column-parallel layers split the outputs, row-parallel ones the inputs,
/// `QKVParallelLinear` keeps `max(1, kv_heads / tp)` key/value heads;
/// `vocab_parallel_embedding.py:286-305`: the vocabulary padded to 64,
/// then split; norms, routers and latent attention's down-projections
/// replicated; the Gated DeltaNet's input projections column-parallel and
/// its `out_proj` row-parallel, `models/qwen3_next.py`; routed experts split over the tensor × data parallel ranks,
/// along their width, or whole experts with expert parallelism
/// ([`Ranks::experts_split`]); gpt-oss's expert biases counted whole
/// across the width).
fn shard(a: &Architecture, t: &ParamTensor, ranks: Ranks) -> (u128, u128, u128) {
    let tp = u128::from(ranks.tp);
    let (ep, wide) = ranks.experts_split();
    let (s, r, c) = (u128::from(t.stack), u128::from(t.rows), u128::from(t.cols));
    let hd = u128::from(a.head_dim);
    // The layer's own heads (Gemma 4's global layers are wider).
    let heads = t.heads.unwrap_or_else(|| a.attention_at(0));
    let kv = (u128::from(heads.kv_heads) / tp).max(1) * u128::from(heads.head_dim);
    let column = (s, r.div_ceil(tp), c);
    let row = (s, r, c.div_ceil(tp));
    let whole = (s, r, c);
    match t.module {
        Some(name) => match name {
            ModuleName::QProj
            | ModuleName::QBProj
            | ModuleName::KvBProj
            | ModuleName::CFc
            | ModuleName::DenseHTo4h
            | ModuleName::GateProj
            | ModuleName::UpProj
            | ModuleName::GateUpProj
            | ModuleName::W1
            | ModuleName::W3
            | ModuleName::InProjQkv
            | ModuleName::InProjZ
            | ModuleName::InProjB
            | ModuleName::InProjA
            | ModuleName::InProjQkvz
            | ModuleName::InProjBa
            // Gemma 4 (`models/gemma4.py`): `ColumnParallelLinear`.
            | ModuleName::PerLayerModelProjection => column,
            ModuleName::ExpertsGateUp | ModuleName::ExpertsUp => {
                (s.div_ceil(ep), r.div_ceil(wide), c)
            }
            ModuleName::ExpertsDown => (s.div_ceil(ep), r, c.div_ceil(wide)),
            // Keys as values (Gemma 4's global layers): `QKVParallelLinear`
            // keeps a value slot, which the loader fills from `k_proj`
            // (`models/gemma4.py`, `Gemma4Attention.__init__`,
            // `_gemma4_layer_weights_mapper`).
            ModuleName::KProj if !heads.v_proj => (s, 2 * kv, c),
            ModuleName::KProj | ModuleName::VProj => (s, kv, c),
            // GPT-NeoX's `query_key_value` is a `QKVParallelLinear`
            // (`models/gpt_neox.py`).
            ModuleName::QkvProj | ModuleName::CAttn | ModuleName::QueryKeyValue => {
                (s, u128::from(a.heads).div_ceil(tp) * hd + 2 * kv, c)
            }
            ModuleName::OProj
            | ModuleName::CProjAttn
            | ModuleName::CProjMlp
            | ModuleName::Dense
            | ModuleName::Dense4hToH
            | ModuleName::DownProj
            | ModuleName::W2
            | ModuleName::OutProj => row,
            ModuleName::QAProj
            | ModuleName::KvAProjWithMqa
            | ModuleName::SharedExpertGate
            | ModuleName::Router
            // Gemma 4's `ReplicatedLinear`s.
            | ModuleName::PerLayerInputGate
            | ModuleName::PerLayerProjection => whole,
        },
        None => match t.role {
            Role::Embedding | Role::Head => {
                (s, (r.div_ceil(VOCAB_PAD) * VOCAB_PAD).div_ceil(tp), c)
            }
            // Attention sinks, one per query head.
            Role::Attention => column,
            // gpt-oss's expert biases `[E, out]`: the rank's experts.
            Role::Expert => (s, r.div_ceil(ep), c),
            // R32: a recurrent layer's norm over every head (Mamba-2's
            // gated norm, `Mixer2RMSNormGated`: `intermediate_size / tp` a
            // rank, `mamba/mamba_mixer2.py`) is split with its heads; Gated
            // DeltaNet's, over one head, is whole.
            Role::Norm if t.recurrent && r > u128::from(a.linear_v_dim) => column,
            // The indexer's `ReplicatedLinear`s and its norm.
            Role::Norm | Role::PositionTable | Role::Mlp | Role::Router | Role::Indexer => whole,
        },
    }
}

/// R31: the scale block of a mixture's fp8 experts on one GPU (vLLM 0.33
/// `Fp8MoEMethod.__init__`, `resolve_fp8_moe_weight_block_shape` and
/// `refine_fp8_moe_block_shape`, `fused_moe/oracle/fp8.py:292-395`): the
/// checkpoint's 128 while each rank's expert width is whole blocks, else
/// the greatest common divisor of 128, that width and the hidden size when
/// it is 32 or more (Triton's kernels take the finer grid; the loader
/// upsamples the scales to it); vLLM's refusal when there is none.
fn fp8_expert_block(a: &Architecture, ranks: Ranks) -> Result<u32, VllmError> {
    let width = u128::from(a.moe_ffn).div_ceil(ranks.experts_split().1);
    if width.is_multiple_of(128) {
        return Ok(128);
    }
    let block = gcd(gcd(128, width), u128::from(a.hidden));
    u32::try_from(block)
        .ok()
        .filter(|&b| b >= 32)
        .ok_or(VllmError::Fp8ExpertBlocks {
            width: u32::try_from(width).unwrap_or(u32::MAX),
        })
}

/// R34: vLLM's sparse-attention indexer (`DeepseekV32Indexer.__init__`,
/// `models/deepseek_v32/attention.py:71-87`) builds `wq_b` with the
/// checkpoint's quantization; `wk` and `weights_proj` are one unquantized
/// `MergedColumnParallelLinear` (`quant_config=None`), and `k_norm` a
/// LayerNorm in fp32 (its weight and bias).
fn indexer_query(t: &ParamTensor) -> bool {
    t.role == Role::Indexer && t.name == "indexer.wq_b"
}

/// R34: the indexer's key norm, its one vector ([`indexer_query`]).
fn indexer_norm(t: &ParamTensor) -> bool {
    t.role == Role::Indexer && t.cols == 1
}

/// R32: the groups a Mamba-2 layer's tensors and state are split as over
/// `tp` ranks (`MambaStateShapeCalculator.extra_groups_for_head_shards`,
/// `mamba/mamba_utils.py:261-269`): its own when `tp` divides them, else
/// `tp`, each rank keeping the group its heads read.
fn mamba2_groups(a: &Architecture, tp: u32) -> u32 {
    let groups = a.linear_k_heads;
    if groups == 0 || groups.is_multiple_of(tp) {
        groups
    } else {
        tp
    }
}

/// R32: the rows a rank's Mamba-2 `in_proj` and convolution hold for the
/// groups repeated on it when `tp` does not divide them
/// (`MambaMixer2.__init__`, `mamba/mamba_mixer2.py`: the `x`, `B`, `C`
/// shards of both take `n_groups + extra_groups_for_head_shards` groups of
/// the state size, `tp` in all, each rank its share): `2 × (tp − G) × N /
/// tp` more than their even split.
#[derive(Clone, Copy, Debug)]
struct RepeatedGroups {
    /// The convolution's channels and `in_proj`'s outputs, unsplit.
    conv: u64,
    in_proj: u64,
    /// The rows a rank holds beyond its even share of either.
    extra: u128,
}

impl RepeatedGroups {
    /// `None` but for a Mamba-2 model whose groups `tp` does not divide.
    fn of(a: &Architecture, tp: u32) -> Option<RepeatedGroups> {
        let mamba2 = a
            .family
            .spec()
            .linear
            .is_some_and(|l| l.kind == Recurrence::Mamba2);
        let (groups, held) = (a.linear_k_heads, mamba2_groups(a, tp));
        if !mamba2 || held == groups {
            return None;
        }
        let (conv, inner) = a.linear_widths();
        let extra = 2 * u128::from(held.saturating_sub(groups)) * u128::from(a.linear_k_dim);
        Some(RepeatedGroups {
            conv,
            in_proj: inner + conv + u64::from(a.linear_v_heads),
            extra: extra / u128::from(tp),
        })
    }

    /// The extra rows of tensor `t`: its convolution's and `in_proj`'s, 0
    /// for any other.
    fn rows(self, t: &ParamTensor) -> u128 {
        let holds =
            (t.conv && t.rows == self.conv) || (t.recurrent_projection() && t.rows == self.in_proj);
        if t.recurrent && holds {
            self.extra
        } else {
            0
        }
    }
}

/// Latent attention's `kv_b_proj` in a quantized format: vLLM keeps it and
/// beside it a dequantized copy in the model's dtype, `W_UK_T` and `W_UV`
/// views of one buffer of the rank's `kv_b_proj` size
/// (`layers/attention/mla_attention.py:408-423, 1345-1349`:
/// `get_and_maybe_dequant_weights`, which returns an unquantized weight
/// itself and a quantized one's dequantization,
/// `quantization/utils/quant_utils.py:513-572`;
/// `scripts/measure/vllm/fp8_block/NOTES.md` §5). 0 for other tensors.
fn absorbed(t: &ParamTensor, (stack, rows, cols): (u128, u128, u128), dt: u128) -> u128 {
    if t.module == Some(ModuleName::KvBProj) {
        grain(stack * rows * cols * dt)
    } else {
        0
    }
}

/// An MXFP4 mixture's stacked experts on one GPU, as vLLM creates them:
/// the rank's experts and intermediate width ([`Ranks::experts_split`]),
/// then both
/// widths rounded up for the MoE kernel
/// (`model_executor/layers/quantization/mxfp4.py:183-198`,
/// `maybe_roundup_sizes`; `fused_moe/oracle/mxfp4.py:837-917`,
/// `mxfp4_round_up_hidden_size_and_intermediate_size`): the intermediate
/// to 128 and the hidden size to 256, the rounding of Marlin (Ampere, Ada,
/// consumer Blackwell) and FlashInfer's TRT-LLM kernels (datacenter
/// Blackwell); Hopper's Triton kernel rounds the intermediate to 64 only
/// and keeps the hidden size, holding a little less. `None`: not a stacked
/// expert weight.
fn mxfp4_experts(a: &Architecture, t: &ParamTensor, ranks: Ranks) -> Option<(u128, u128, u128)> {
    let (ep, wide) = ranks.experts_split();
    let stack = u128::from(t.stack).div_ceil(ep);
    let inter = (u128::from(a.moe_ffn).div_ceil(wide)).next_multiple_of(128);
    let hidden = u128::from(a.hidden).next_multiple_of(256);
    if t.module == Some(ModuleName::ExpertsGateUp) {
        Some((stack, 2 * inter, hidden))
    } else if t.module == Some(ModuleName::ExpertsDown) {
        Some((stack, hidden, inter))
    } else {
        None
    }
}

/// The rotary cos/sin cache: `[max_position_embeddings, rotary_dim]` in the
/// model's dtype, one per RoPE table the model builds
/// (`model_executor/layers/rotary_embedding/base.py:58-63, 94-103`;
/// `get_rope` shares one instance between the layers). Gemma 4's global
/// layers have their own, over their own head width: their proportional
/// RoPE rotates every channel, the unrotated ones at frequency 0
/// (`rotary_embedding/gemma4_rope.py`, `Gemma4RotaryEmbedding.__init__`:
/// `rotary_dim = head_size`).
fn rope_cache(a: &Architecture, dt: u128) -> u128 {
    let spec = a.family.spec();
    let tables = u128::from(spec.rope_tables);
    let table = |w: u128| grain(u128::from(model_len(a)) * w * dt);
    if spec.global_attention && tables > 1 {
        let global = u128::from(a.global_heads().head_dim);
        (tables - 1) * rope_table(a, dt) + table(global)
    } else {
        tables * rope_table(a, dt)
    }
}

/// One rotary table over the model's rotated width.
fn rope_table(a: &Architecture, dt: u128) -> u128 {
    let width = u128::from(KvGeometry::of(a).rotary_width());
    grain(u128::from(model_len(a)) * width * dt)
}

/// The widths one rank computes with.
#[derive(Clone, Copy, Debug)]
struct Dims {
    /// Bytes per element of the model's dtype.
    dt: u128,
    hidden: u128,
    vocab: u128,
    tp: u128,
    /// What splits a routed expert's width ([`Ranks::experts_split`]).
    expert_width: u128,
    /// The experts are fp8 with block scales: the fused kernel quantizes
    /// its inputs ([`Dims::moe_per_token`]).
    fp8_experts: bool,
    /// R34: the experts' workspace is counted with the shared workspace
    /// ([`SparseCosts`]), not in the layer's moment.
    held_workspace: bool,
}

impl Dims {
    fn of(a: &Architecture, inf: &Inference) -> Dims {
        let ranks = Ranks::of(&inf.vllm);
        Dims {
            dt: u128::from(model_dtype(inf)),
            hidden: u128::from(a.hidden),
            vocab: u128::from(a.vocab),
            tp: u128::from(ranks.tp),
            expert_width: ranks.experts_split().1,
            fp8_experts: inf.weights == WeightFormat::Fp8,
            held_workspace: false,
        }
    }

    /// R9: bytes per token at the dummy forward's highest moment
    /// (`v1/worker/gpu/model_runner.py:1022-1040`, attention skipped,
    /// `:1036`): the hidden state and the residual, and the widest
    /// section's outputs alive at once: attention's projections and output
    /// buffer, a dense MLP's gate/up and activation, or an MoE layer's
    /// router logits, top-k weights and ids and the fused experts'
    /// workspaces (`model_executor/layers/fused_moe/experts/triton_moe.py:251-254`:
    /// `(M, topk, max(N/2, K))` and `(M, topk, max(N, K))`, and the output).
    fn forward_per_token(&self, a: &Architecture) -> u128 {
        let (dt, h, tp) = (self.dt, self.hidden, self.tp);
        let g = KvGeometry::of(a);
        let attention = match g.layer {
            LayerAttention::Heads {
                heads,
                kv_heads,
                head_dim,
                ..
            } => {
                let q = u128::from(heads).div_ceil(tp);
                let width = |kv_heads: u128, hd: u128| (2 * q + 2 * (kv_heads / tp).max(1)) * hd;
                let global = a.global_heads();
                let global = if a.family.spec().global_attention {
                    width(global.kv_heads.into(), global.head_dim.into())
                } else {
                    0
                };
                width(kv_heads.into(), head_dim.into()).max(global)
            }
            LayerAttention::Latent(m) => {
                let hr = u128::from(m.heads).div_ceil(tp);
                let (qk, rope, v) = (
                    u128::from(m.qk_head_dim),
                    u128::from(m.rope_dim),
                    u128::from(m.v_head_dim),
                );
                hr * qk + u128::from(g.latent_width()) + hr * (qk - rope.min(qk) + 2 * v)
            }
        };
        // Gated attention's q_proj makes the gate beside the queries
        // (`Qwen3NextAttention`: `q_proj` of `2 × heads × head_dim`).
        let gate = if a.family.spec().attn_gate {
            u128::from(g.q_width()).div_ceil(self.tp)
        } else {
            0
        };
        let mut widest = dt * (attention + gate).max(self.recurrent(a));
        for (kind, n) in a.layer_kinds() {
            if n == 0 {
                continue;
            }
            let bytes = match kind {
                LayerKind::Dense => dt * mlp_width(a, widest_ffn(a).div_ceil(tp)),
                LayerKind::Moe => self.moe_per_token(a),
            };
            widest = widest.max(bytes);
        }
        2 * dt * h + widest + self.per_layer_inputs(a)
    }

    /// Gemma 4's per-layer inputs, alive through the forward: the table's
    /// rows for the tokens and their sum with the embeddings' projection,
    /// `layers × hidden_size_per_layer_input` each
    /// (`models/gemma4.py`: `get_per_layer_inputs`,
    /// `project_per_layer_inputs`, `_run_decoder_layers`); 0 without.
    fn per_layer_inputs(&self, a: &Architecture) -> u128 {
        if !a.family.spec().per_layer_embeddings {
            return 0;
        }
        2 * self.dt * u128::from(a.layers) * u128::from(a.ple_dim)
    }

    /// A recurrent layer's elements per token beside the hidden state and
    /// residual, on one rank (0 without such layers). A Gated DeltaNet's
    /// (`qwen_gdn_linear_attn.py`): the input projections' outputs
    /// (`in_proj_qkvz`, `in_proj_ba`), the convolution's output over its
    /// channels and the kernel's output. R32 a Mamba-2 mixer's
    /// (`mamba/mamba_mixer2.py`, `MambaMixer2.forward`): `in_proj`'s output
    /// (gate, convolution input and `dt`), the convolution's output, the
    /// scan's output and the gated norm's. Neither kernel's own workspace is
    /// in it.
    fn recurrent(&self, a: &Architecture) -> u128 {
        let Some(rule) = a.family.spec().linear.filter(|_| a.linear_layers > 0) else {
            return 0;
        };
        let (conv, value) = a.linear_widths();
        let (conv, value) = (u128::from(conv), u128::from(value));
        let hv = u128::from(a.linear_v_heads);
        let per_token = match rule.kind {
            Recurrence::Mamba2 => (value + conv + hv) + conv + 2 * value,
            // R33: `in_proj`'s `3h` (B, C, x), `B·x`, the convolution's
            // output and `C·conv` (`ShortConv.forward_cuda`).
            Recurrence::ShortConv => 6 * u128::from(a.hidden),
            Recurrence::GatedDeltaNet | Recurrence::Kda => conv + value + 2 * hv + conv + value,
        };
        per_token.div_ceil(self.tp)
    }

    /// An MoE layer's bytes per token beside the hidden state and residual:
    /// the shared expert's MLP first, then (its output kept) the router's
    /// logits, fp32 top-k weights and int32 ids, the experts' workspaces
    /// and output; routed experts split along their width over the tensor
    /// × data parallel ranks (whole under expert parallelism), the shared
    /// expert over the tensor parallel ones. fp8 experts take their inputs
    /// quantized, one fp8 byte a value and an fp32 scale a 128 values, kept
    /// through the second GEMM: the layer's input and the activation
    /// between the GEMMs (`fused_moe/experts/triton_moe.py:500-560`,
    /// `moe_kernel_quantize_input` and `silu_and_mul_per_block_quant`;
    /// Triton is vLLM 0.33's kernel for block fp8 on Hopper under tensor
    /// parallelism, `fused_moe/oracle/fp8.py:122-132`).
    fn moe_per_token(&self, a: &Architecture) -> u128 {
        let (dt, h) = (self.dt, self.hidden);
        let k = u128::from(a.experts_per_token);
        let width = u128::from(a.moe_ffn).div_ceil(self.expert_width);
        let shared = u128::from(a.shared_experts) * u128::from(a.moe_ffn).div_ceil(self.tp);
        let workspace = if self.held_workspace {
            0
        } else {
            self.moe_workspace(a)
        };
        let routed = u128::from(a.experts) + workspace + h + if shared > 0 { h } else { 0 };
        let shared_mlp = if shared > 0 { mlp_width(a, shared) } else { 0 };
        // Gemma 4's dense MLP beside the experts runs first; its normed
        // output and the experts' normed input stay alive beside them
        // (`Gemma4DecoderLayer.forward`: `hidden_states_1`, `_2`).
        let (beside, dense) = match a.moe() {
            Some(m) if m.dense_beside => (2 * h, mlp_width(a, widest_ffn(a).div_ceil(self.tp))),
            Some(_) | None => (0, 0),
        };
        let quantized = if self.fp8_experts {
            h + 4 * h.div_ceil(128) + k * (width + 4 * width.div_ceil(128))
        } else {
            0
        };
        (dt * (routed + beside) + quantized)
            .max(dt * shared_mlp)
            .max(dt * dense)
            + 8 * k
    }

    /// The fused experts' workspaces a token, elements of the model's
    /// dtype: `(M, topk, max(N/2, K))` and `(M, topk, max(N, K))` (0
    /// without experts; `fused_moe/experts/triton_moe.py:251-254`), which
    /// the kernel takes from the shared workspace
    /// (`fused_moe/modular_kernel.py:1207`).
    fn moe_workspace(&self, a: &Architecture) -> u128 {
        if a.experts == 0 {
            return 0;
        }
        let (k, h) = (u128::from(a.experts_per_token), self.hidden);
        let width = u128::from(a.moe_ffn).div_ceil(self.expert_width);
        k * (width.max(h) + (2 * width).max(h))
    }

    /// R9: the sampler after the forward (`v1/worker/gpu/model_runner.py:993-1014`),
    /// the forward's hidden states still alive (`:1050`): the rows of the
    /// `reqs` requests, their logits in the model's dtype, and the
    /// warm-up pass's fp32 copy of them (`v1/worker/gpu/sample/sampler.py:242`).
    fn sampler(&self, tokens: u128, reqs: u128) -> u128 {
        let (dt, h, v) = (self.dt, self.hidden, self.vocab);
        tokens * h * dt + reqs * h * dt + reqs * v * (dt + 4)
    }

    /// Torch buffers the V2 model runner allocates before profiling: the
    /// penalties' `output_bin_counts` `[max_num_seqs, vocab]` and
    /// `prompt_bin_mask` `[max_num_seqs, vocab / 32]`, int32
    /// (`v1/worker/gpu/sample/penalties.py:43-50`), the structured-output
    /// bitmask `[max_num_seqs, vocab / 32]` int32
    /// (`v1/worker/gpu/structured_outputs.py:60-65`), and the input ids,
    /// positions and padding flags of `max_num_batched_tokens`
    /// (`v1/worker/gpu/input_batch.py:29-31`).
    fn runner(&self, tokens: u128, seqs: u128) -> u128 {
        let v = self.vocab;
        grain(4 * seqs * v) + 2 * grain(4 * seqs * v.div_ceil(32)) + grain(13 * tokens)
    }
}

/// The widest dense MLP: `ffn`, or twice it on Gemma 4's layers reusing
/// keys and values with `use_double_wide_mlp` ([`Architecture::ffn_at`]).
fn widest_ffn(a: &Architecture) -> u128 {
    u128::from(a.ffn_at(a.layers.saturating_sub(1)).max(u64::from(a.ffn)))
}

/// A dense MLP's width per token beside the hidden state: gate and up (or
/// GPT-2's `c_fc`, Nemotron-H's `up_proj`) and the activation's output.
fn mlp_width(a: &Architecture, f: u128) -> u128 {
    match a.family.spec().mlp {
        Mlp::Gated | Mlp::GatedFused => 3 * f,
        Mlp::Plain | Mlp::Up => 2 * f,
    }
}

/// R6: the CUDA-graph estimate (`v1/worker/gpu/cudagraph_utils.py:922-1039`):
/// the first, largest capture holds the forward's activations for the
/// largest captured batch; every further graph costs what capturing it
/// measures, of which vramfit takes the code's floor, 1 MiB
/// (`_MIN_PER_GRAPH_BYTES`): a lower bound. Graphs: one piecewise graph
/// per capture size, one full graph per size up to `max_num_seqs`
/// (`FULL_AND_PIECEWISE`, `config/vllm.py:311`); sizes 1, 2, 4, multiples
/// of 8 below 256 and of 16 from 256, up to `min(2 × max_num_seqs, 512,
/// max_num_batched_tokens)`, with `max_num_batched_tokens` and
/// `max_num_seqs` when they fit (`config/vllm.py:2452-2605`).
fn graphs(per_token: u128, seqs: u128, mnbt: u128) -> u128 {
    let cap = (2 * seqs).min(512).min(mnbt);
    let piecewise = capture_sizes(cap, seqs, mnbt);
    let full = capture_sizes(cap.min(seqs), seqs, mnbt);
    per_token * cap + MIB * (piecewise + full).saturating_sub(1)
}

/// Whether `s` is one of vLLM's capture sizes before the two added ones:
/// 1, 2, 4, multiples of 8 below 256 and of 16 from 256.
fn stepped_size(s: u128) -> bool {
    matches!(s, 1 | 2 | 4)
        || (s.is_multiple_of(8) && (8..256).contains(&s))
        || (s >= 256 && (s - 256).is_multiple_of(16))
}

/// How many capture sizes are at most `n`: the stepped ones counted by
/// their steps, then `max_num_batched_tokens` and `max_num_seqs` when they
/// are not among them (each size once).
fn capture_sizes(n: u128, seqs: u128, mnbt: u128) -> u128 {
    let powers = [1, 2, 4].iter().filter(|&&s| s <= n).count() as u128;
    let eights = n.min(255) / 8;
    let sixteens = if n >= 256 { (n - 256) / 16 + 1 } else { 0 };
    let added = |s: u128| (1..=n).contains(&s) && !stepped_size(s);
    powers + eights + sixteens + u128::from(added(mnbt)) + u128::from(added(seqs) && seqs != mnbt)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capture sizes counted by their steps are the sizes listed one
    /// by one, as vLLM lists them.
    #[test]
    fn capture_sizes_count_the_listed_sizes() {
        let listed = |s: u128, seqs: u128, mnbt: u128| {
            matches!(s, 1 | 2 | 4)
                || (s.is_multiple_of(8) && s < 256)
                || (s >= 256 && (s - 256).is_multiple_of(16))
                || s == mnbt
                || s == seqs
        };
        let values = (0..=600).chain([1024, 2048, 8192, 1 << 40]);
        for seqs in values
            .clone()
            .step_by(7)
            .chain([0, 1, 2, 3, 4, 8, 255, 256, 257, 512])
        {
            for mnbt in values
                .clone()
                .step_by(5)
                .chain([0, 1, 3, 256, 272, 300, 513])
            {
                let cap = (2 * seqs).min(512).min(mnbt);
                let (mut piecewise, mut full) = (0u128, 0u128);
                for s in (1..=cap).filter(|&s| listed(s, seqs, mnbt)) {
                    piecewise += 1;
                    full += u128::from(s <= seqs);
                }
                assert_eq!(capture_sizes(cap, seqs, mnbt), piecewise, "{seqs} {mnbt}");
                assert_eq!(
                    capture_sizes(cap.min(seqs), seqs, mnbt),
                    full,
                    "{seqs} {mnbt}"
                );
            }
        }
    }
}
