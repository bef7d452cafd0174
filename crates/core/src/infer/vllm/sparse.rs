//! R34: DeepSeek Sparse Attention on vLLM 0.33 (DeepSeek-V3.2, GLM-5):
//! the sparse latent-attention kernel the GPU gets and the cache format it
//! keeps, the indexer's keys paged beside the latent, the top-k buffers the
//! model builds, and the workspaces and transients of the profiling run.
//!
//! Source: the vLLM 0.33.0 release wheel, read in
//! `scripts/measure/families/dsa/NOTES_vllm.md` (cache specs, grouping,
//! block size) and `scripts/measure/vllm/NOTES.md` R34 (buffers, profiling
//! run). The pool's arithmetic is held to published GLM-5.1 start-up logs
//! (`tests/fixtures/vllm_dsa_logs.jsonl`).

use super::plan::{grain, VllmError};
use crate::infer::run::{Inference, KvDtype};
use crate::model::{Architecture, KvGeometry, LayerAttention};

/// The workspace manager's alignment of each tensor it hands out
/// (`v1/worker/workspace.py`, `get_simultaneous`: `round_up(actual, 256)`).
const WORKSPACE_ALIGN: u128 = 256;

/// `VLLM_SPARSE_INDEXER_MAX_LOGITS_MB` (512, `envs.py:62`): the indexer's
/// dummy logits block in the profiling run, MiB.
const MAX_LOGITS: u128 = 512 << 20;

/// `RADIX_TOPK_WORKSPACE_SIZE` (`model_executor/layers/indexer_topk.py:15`).
const RADIX_TOPK: u128 = 1 << 20;

/// Indexer keys are quantized to fp8 in blocks of this many values, one
/// fp32 scale each (`DeepseekV32Indexer.__init__`: `quant_block_size`).
const QUANT_BLOCK: u128 = 128;

/// The block size every sparse-attention layer takes: the indexer's
/// backend takes 64 tokens only (`v1/attention/backends/mla/indexer.py:286`),
/// the latent's kernels multiples of 64 or 32, so vLLM sets 64 when the
/// block size was not given (`platforms/interface.py:700-781`,
/// `_preferred_block_size_for_backends`).
pub const SPARSE_BLOCK: u32 = 64;

/// Bytes of one token's indexer key in one layer's cache: `index_head_dim`
/// fp8 values and an fp32 scale per 128 (`DeepseekV32Indexer.__init__`,
/// `models/deepseek_v32/attention.py:90-100`: `head_dim + head_dim //
/// quant_block_size * 4` of uint8; 132 for DeepSeek-V3.2 and GLM-5),
/// replicated on every tensor-parallel rank (`max_tp_shards=1`).
pub fn indexer_token_bytes(a: &Architecture) -> u128 {
    let d = u128::from(a.index_head_dim);
    d + d / QUANT_BLOCK * 4
}

/// The sparse latent-attention kernel vLLM 0.33 picks on a GPU, and with it
/// the latent's cache format (`platforms/cuda.py:96-155`,
/// `_get_backend_priorities`; dense latent kernels refuse sparse layers,
/// `v1/attention/backend.py:321-323`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseMla {
    /// `FLASH_ATTN_MLA_SPARSE` (Hopper, a 16-bit cache): the latent in the
    /// model's dtype, no workspace reserved.
    FlashAttn,
    /// `FLASH_ATTN_MLA_SPARSE_FA4` (datacenter Blackwell, a 16-bit cache,
    /// at most 16 query heads a rank).
    FlashAttn4,
    /// `FLASHMLA_SPARSE` with a 16-bit cache (datacenter Blackwell, more
    /// than 16 heads a rank): reserves its query buffer at construction.
    FlashMla,
    /// `FLASHMLA_SPARSE` with an fp8 cache, which it keeps as
    /// `fp8_ds_mla` (`mla_attention.py:359-369`): 656 bytes a token for
    /// DeepSeek's latent (512 fp8 values, 4 fp32 scales, 64 16-bit rotary
    /// values; `flashmla_sparse.py:79-87`). Hopper's fp8 cache, and
    /// Blackwell's `fp8_e5m2`, which FlashInfer's kernel does not take.
    FlashMlaFp8,
    /// `FLASHINFER_MLA_SPARSE` (datacenter Blackwell, an fp8 cache): the
    /// latent in plain fp8, one byte a value.
    FlashInferFp8,
    /// `FLASHINFER_MLA_SPARSE_SM120` (consumer Blackwell): `fp8_ds_mla`
    /// whether the cache was asked in fp8 or left `auto`
    /// (`mla_attention.py:370-375`).
    FlashInferSm120,
}

impl SparseMla {
    /// The kernel for `a` with `inf` on a GPU of compute capability `cc`
    /// (`None`: not known, taken as Hopper); `None` without an indexer.
    /// GLM-5 asks for an fp8 cache on datacenter Blackwell when the cache
    /// is `auto` (`GlmMoeDsaForCausalLM.verify_and_update_config`,
    /// `model_executor/models/config.py:89-101`). A GPU without a sparse
    /// kernel is refused by [`SparseMla::supported`].
    pub fn pick(a: &Architecture, inf: &Inference, cc: Option<(u8, u8)>) -> Option<SparseMla> {
        let spec = a.family.spec();
        if !spec.indexer {
            return None;
        }
        let asked = inf.kv_dtype;
        let fp8 = asked != KvDtype::Auto;
        let heads = u64::from(a.heads) / u64::from(inf.vllm.tensor_parallel_size.get()).max(1);
        Some(match cc {
            None | Some((9, _)) if fp8 => SparseMla::FlashMlaFp8,
            None | Some((9, _)) => SparseMla::FlashAttn,
            Some((10, _)) if asked == KvDtype::Fp8E5m2 => SparseMla::FlashMlaFp8,
            Some((10, _)) if fp8 || spec.vllm_blackwell_fp8_cache => SparseMla::FlashInferFp8,
            Some((10, _)) if heads <= 16 => SparseMla::FlashAttn4,
            Some((10, _)) => SparseMla::FlashMla,
            Some(_) => SparseMla::FlashInferSm120,
        })
    }

    /// vLLM 0.33's sparse kernels run on Hopper (9.x), datacenter
    /// Blackwell (10.x) and consumer Blackwell (12.x) only
    /// (`supports_compute_capability` of each sparse backend): elsewhere
    /// it finds no backend and refuses. Consumer Blackwell's kernel takes
    /// `fp8_ds_mla` alone, which `fp8_e5m2` does not become
    /// (`flashinfer_mla_sparse_sm120.py:64-68` raises).
    pub fn supported(cc: Option<(u8, u8)>, kv: KvDtype) -> Result<(), VllmError> {
        match cc {
            Some((12, _)) if kv == KvDtype::Fp8E5m2 => Err(VllmError::SparseCacheDtype),
            None | Some((9 | 10 | 12, _)) => Ok(()),
            Some((major, minor)) => Err(VllmError::NoSparseKernel { major, minor }),
        }
    }

    /// Bytes of one token's latent in one layer's cache (`mla_attention.py:
    /// 1371-1400`: `state_content_bytes` 656 for `fp8_ds_mla`, else
    /// `kv_lora_rank + rope_dim` values of the cache's dtype, `dt` bytes
    /// for `auto`).
    pub fn latent_token_bytes(self, a: &Architecture, dt: u128) -> u128 {
        let width = u128::from(KvGeometry::of(a).latent_width());
        let (kv_lora, rope) = latent_dims(a);
        match self {
            SparseMla::FlashAttn | SparseMla::FlashAttn4 | SparseMla::FlashMla => width * dt,
            SparseMla::FlashInferFp8 => width,
            SparseMla::FlashMlaFp8 | SparseMla::FlashInferSm120 => {
                kv_lora + kv_lora / QUANT_BLOCK * 4 + 2 * rope
            }
        }
    }

    /// The cache format, in words.
    pub const fn words(self) -> &'static str {
        match self {
            SparseMla::FlashAttn => {
                "FlashAttention's sparse kernel (FLASH_ATTN_MLA_SPARSE), the latent in 16 bits"
            }
            SparseMla::FlashAttn4 => {
                "FlashAttention 4's sparse kernel (FLASH_ATTN_MLA_SPARSE_FA4), the latent in 16 bits"
            }
            SparseMla::FlashMla => "FlashMLA's sparse kernel (FLASHMLA_SPARSE), the latent in 16 bits",
            SparseMla::FlashMlaFp8 => {
                "FlashMLA's sparse kernel (FLASHMLA_SPARSE), the latent as fp8_ds_mla (fp8 with fp32 scales, the rotary part in 16 bits)"
            }
            SparseMla::FlashInferFp8 => {
                "FlashInfer's sparse kernel (FLASHINFER_MLA_SPARSE), the latent in fp8"
            }
            SparseMla::FlashInferSm120 => {
                "FlashInfer's sparse kernel for consumer Blackwell (FLASHINFER_MLA_SPARSE_SM120), the latent as fp8_ds_mla"
            }
        }
    }
}

/// `(kv_lora_rank, rope_dim)` of a latent-attention model (0, 0 else).
fn latent_dims(a: &Architecture) -> (u128, u128) {
    match KvGeometry::of(a).layer {
        LayerAttention::Latent(m) => (u128::from(m.kv_lora_rank), u128::from(m.rope_dim)),
        LayerAttention::Heads { .. } => (0, 0),
    }
}

/// The step a sparse model is sized for: tokens and sequences a step, and
/// the length its workspaces are sized by (`max_model_len` as vLLM
/// resolves it before the pool is fitted: the model's under `auto`).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub tokens: u128,
    pub seqs: u128,
    pub len: u128,
}

impl Step {
    /// `sparse_mla_prefill_workspace_factor`: 5 up to 256K tokens, else 2
    /// (`config/vllm.py:1866-1874`).
    fn factor(self) -> u128 {
        if self.len <= 256 * 1024 {
            5
        } else {
            2
        }
    }

    /// Rows of the indexer's prefill key gather: `max_model_len × (576·2 //
    /// 132) × factor` (`get_max_prefill_buffer_size`,
    /// `v1/attention/backends/mla/indexer.py:916-927`).
    fn gather_rows(self) -> u128 {
        self.len * (576 * 2 / 132) * self.factor()
    }
}

/// Bytes the workspace manager hands out for `shapes` at once
/// (`get_simultaneous`: each aligned to 256).
fn simultaneous(shapes: &[u128]) -> u128 {
    shapes
        .iter()
        .map(|b| b.next_multiple_of(WORKSPACE_ALIGN))
        .sum()
}

/// What the rest of the plan says of the rank a sparse model runs on.
#[derive(Clone, Copy, Debug)]
pub struct Rank {
    /// The stage's layers.
    pub layers: u128,
    /// Bytes of the fused experts' workspace at `Step::tokens` (the same
    /// shared workspace, `fused_moe/modular_kernel.py:1207`; 0 without
    /// experts).
    pub moe_workspace: u128,
    /// Bytes per element of the model's dtype.
    pub dt: u128,
    /// Bytes of one rotary cos/sin table as the latent's.
    pub rope_table: u128,
}

/// What sparse attention adds to one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseCosts {
    /// Built with the model, so in vLLM's "model loading" figure: the
    /// shared top-k indices (`max_num_batched_tokens × index_topk` int32,
    /// `models/deepseek_v32/nvidia/model.py:192-197`), each layer's
    /// physical top-k and valid counts (`min(max_num_batched_tokens,
    /// max_num_seqs × (1 + speculative tokens)) + 1` rows,
    /// `v1/attention/backends/mla/index_group.py:363-411`: every layer has
    /// its indexer), the indexer's own rotary table where its rotation is
    /// not the latent's (`indexer_rope_interleave` off: `get_rope` keys on
    /// `is_neox_style`), and the workspace FlashMLA's sparse kernel
    /// reserves in its constructor ([`SparseCosts::reserved`]).
    pub load: u128,
    /// The profiling run's highest moment beside the pool, above the
    /// loaded model ([`SparseCosts::of`]).
    pub indexer_moment: u128,
    /// The shared workspace's growth in the profiling run, alive to its end.
    pub growth: u128,
}

impl SparseCosts {
    /// R34 on one rank `r`.
    ///
    /// The profiling run (`sparse_attn_indexer`,
    /// `model_executor/layers/sparse_attn_indexer.py:481-510`, at each
    /// layer's attention): the workspace grown to the indexer's key gather
    /// (`gather_rows` of 128 fp8 values and 4 scale bytes) and the radix
    /// top-k's 1 MiB, or kept at the size an earlier layer's experts or the
    /// constructor left (`v1/worker/workspace.py`: one buffer, grown and
    /// never shrunk, the old one freed first); then the dummy 512 MiB logits
    /// block and, over several GPUs, the row-shard exchange's `2 ×
    /// max_num_batched_tokens × index_topk` int32 (`indexer.py:246-263`),
    /// beside the layer's live tensors ([`live_per_token`]).
    pub fn of(
        a: &Architecture,
        inf: &Inference,
        (kernel, step): (SparseMla, Step),
        r: Rank,
    ) -> SparseCosts {
        let topk = u128::from(a.index_topk);
        let spec = u128::from(inf.vllm.num_speculative_tokens.get());
        let rows = step.tokens.min(step.seqs * (1 + spec)) + 1;
        let per_layer = grain(rows * topk * 4) + grain(rows * 4);
        let rope = if a.family.spec().indexer_rope_shared {
            0
        } else {
            r.rope_table
        };
        let reserved = reserved(a, inf, (kernel, step));
        let gather = simultaneous(&[
            step.gather_rows() * u128::from(a.index_head_dim),
            step.gather_rows() * 4,
            RADIX_TOPK,
        ]);
        let growth = gather.max(r.moe_workspace).saturating_sub(reserved);
        let tp = u128::from(inf.vllm.tensor_parallel_size.get());
        let exchange = if tp > 1 {
            grain(2 * step.tokens * topk * 4)
        } else {
            0
        };
        SparseCosts {
            load: grain(step.tokens * topk * 4) + r.layers * per_layer + rope + reserved,
            indexer_moment: step.tokens * live_per_token(a, tp, r.dt)
                + growth
                + MAX_LOGITS
                + exchange,
            growth,
        }
    }
}

/// The workspace FlashMLA's sparse kernel reserves in its constructor
/// (`flashmla_sparse.py:766-832`): the concatenated queries of
/// `max_num_batched_tokens` rows over the rank's heads (padded to 64 for a
/// 16-bit cache), and with `fp8_ds_mla` the prefill gather of
/// `max_model_len × factor` rows of 576 values and three more query
/// buffers (`get_prefill_workspace_size`), all 16-bit. The other kernels
/// reserve nothing there.
fn reserved(a: &Architecture, inf: &Inference, (kernel, step): (SparseMla, Step)) -> u128 {
    let heads = u128::from(a.heads) / u128::from(inf.vllm.tensor_parallel_size.get()).max(1);
    let padded = heads.next_multiple_of(64);
    let (kv_lora, rope) = latent_dims(a);
    let width = kv_lora + rope;
    let t = step.tokens;
    match kernel {
        SparseMla::FlashMla => simultaneous(&[2 * t * padded * width]),
        SparseMla::FlashMlaFp8 => simultaneous(&[
            2 * t * heads * width,
            2 * step.len * step.factor() * width,
            2 * t * padded * width,
            2 * t * padded * kv_lora,
            2 * t * heads * kv_lora,
        ]),
        SparseMla::FlashAttn
        | SparseMla::FlashAttn4
        | SparseMla::FlashInferFp8
        | SparseMla::FlashInferSm120 => 0,
    }
}

/// Bytes per token alive at the indexer in the profiling run, on one rank
/// (`DeepseekV32Attention.forward`, `models/deepseek_v32/attention.py:
/// 300-470`): the hidden state and the residual; the fused A-projection's
/// output (query and key/value latents and the rotary key); the indexer's
/// key and weights (`wk_weights_proj`); the attention's output buffer; the
/// normed latent, key/value and rotary key written out
/// (`fused_norm_rope`); the query (`q_b_proj`) and its absorbed no-rotary
/// part (`W_UK_T`); the indexer's query (`wq_b`) and its fp8 copy with
/// fp32 head weights, and the rotated query's rotary part (`fused_q`).
fn live_per_token(a: &Architecture, tp: u128, dt: u128) -> u128 {
    let LayerAttention::Latent(m) = KvGeometry::of(a).layer else {
        return 0;
    };
    let heads = u128::from(m.heads).div_ceil(tp.max(1));
    let (ql, kvl, rope) = (
        u128::from(m.q_lora_rank),
        u128::from(m.kv_lora_rank),
        u128::from(m.rope_dim),
    );
    let (ih, id) = (u128::from(a.index_heads), u128::from(a.index_head_dim));
    let h = u128::from(a.hidden);
    let elements = 2 * h
        + (ql + kvl + rope)
        + (id + ih)
        + heads * u128::from(m.v_head_dim)
        + (ql + kvl + rope)
        + heads * u128::from(m.qk_head_dim)
        + heads * kvl
        + ih * id
        + heads * rope;
    elements * dt + ih * id + 4 * ih
}
