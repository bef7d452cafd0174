//! The vLLM engine as an estimate: its budget on the GPU, what the model,
//! the runner and the profiling run take of it, and the key/value pool the
//! rest becomes (`plan`: the arithmetic, rule by rule).
//!
//! vLLM takes `gpu_memory_utilization` of the GPU whatever the model
//! needs, and fills what is left with the pool. So the estimate's phases
//! say what vLLM holds (load, the profiling run, serving with its whole
//! pool), and what must fit ([`Estimate::needed_bytes`]) is what vLLM's
//! start-up check asks of that budget: everything but the pool, and the
//! blocks of one request of `max_model_len` with the null block (R21).

pub mod plan;
pub mod ranks;
pub mod sparse;

pub use plan::*;

use super::run::{Engine, Inference};
use crate::error::EstimateError;
use crate::inputs::Overhead;
use crate::model::family::Recurrence;
use crate::model::Architecture;
use crate::report::{Drivers, Estimate, Method, Phase, PhaseReport, Served, Tally};
use crate::report::{Hundredths, Moment};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::units::Bytes;

const LOAD: TermSet = TermSet::of(&[T::VllmWeights, T::VllmRunner]);
const PROFILE: TermSet = LOAD.with(T::VllmActivation).with(T::VllmNonTorch);
const BUDGET: TermSet = PROFILE.with(T::VllmGraphs);

/// The terms of a plan; the key/value term is the pool, or, when the pool
/// cannot hold one request, the blocks one request needs.
fn terms(p: &Plan, kv: KvTerm) -> Terms {
    let mut t = Terms::default();
    let bytes = |b: u128| Term::of(&[(b, U::Bytes)]);
    t.set(T::VllmWeights, bytes(p.weights));
    t.set(T::VllmRunner, bytes(p.runner));
    t.set(T::VllmActivation, bytes(p.activation_peak));
    t.set(T::VllmNonTorch, bytes(p.non_torch));
    t.set(T::VllmGraphs, bytes(p.cudagraphs));
    t.set(T::VllmHostWeights, bytes(p.host_weights));
    let blocks = |n: u128| Term::of(&[(n, U::Blocks), (p.bytes_per_block, U::BytesEach)]);
    t.set(T::VllmPool, blocks(kv.pool_blocks));
    t.set(T::VllmKvNeeded, blocks(p.blocks_per_request + 1));
    t
}

/// The pool's blocks, and whether they hold one request.
#[derive(Clone, Copy)]
struct KvTerm {
    pool_blocks: u128,
    fits: bool,
}

/// Live bytes by component of a set of terms.
fn tally(terms: &Terms, set: TermSet) -> Tally {
    let mut out = Tally::new();
    for id in set.iter() {
        out.add(id.component(), terms.bytes(id));
    }
    out
}

/// What drives vLLM's profiling run, sampler and key/value blocks.
const DRIVERS: Drivers = Drivers {
    activations: "max_num_batched_tokens",
    logits: "max_num_seqs × vocabulary",
    kv_cache: "max_model_len",
};

fn bytes(b: u128) -> Result<Bytes, EstimateError> {
    u64::try_from(b)
        .map(Bytes)
        .map_err(|_| EstimateError::TooLarge {
            field: "max_model_len",
        })
}

/// The estimate of vLLM serving `a` with `inf` on a GPU of `capacity`
/// and CUDA compute capability `cc` (`None`: not known).
pub fn estimate(
    a: &Architecture,
    inf: &Inference,
    overhead: &Overhead,
    (capacity, cc): (Bytes, Option<(u8, u8)>),
) -> Result<Estimate, EstimateError> {
    let total = u128::from(capacity.get());
    let p = plan_on(a, inf, Some(total), cc).map_err(|e| EstimateError::Engine(e.to_string()))?;
    let pool = p
        .pool
        .unwrap_or_else(|| p.kv.pool(None, 0, p.max_model_len));
    let kv = KvTerm {
        pool_blocks: pool.blocks,
        fits: pool.fits,
    };
    let terms = terms(&p, kv);
    let serve = BUDGET.with(if kv.fits {
        T::VllmPool
    } else {
        T::VllmKvNeeded
    });
    let ctx_mib = overhead.context(Engine::Vllm.spec().context_mib);
    let ctx = u128::from(ctx_mib) << 20;
    let raw = [
        (Phase::Load, Moment::End, LOAD),
        (Phase::Profile, Moment::Middle, PROFILE),
        (Phase::Serve, Moment::End, serve),
    ];
    let mut phases = Vec::with_capacity(raw.len());
    for (phase, at, set) in raw {
        let c = tally(&terms, set).components(ctx, &DRIVERS)?;
        let mut r = PhaseReport::new(1, phase, at, c, c);
        r.terms = set;
        r.end_terms = set;
        phases.push(r);
    }
    let params = crate::report::param_count(a.params())?;
    let needed = p.non_kv() + (p.blocks_per_request + 1) * p.bytes_per_block;
    let mut e = Estimate::from_phases(Method::Vramfit, params, 0, phases, terms);
    e.overhead = crate::report::OverheadRule::ContextOutsideBudget {
        ctx_mib,
        engine: "vLLM",
    };
    e.needed_bytes = Some(bytes(needed)?);
    e.host_bytes = bytes(p.host_weights)?;
    e.host_terms = TermSet::of(&[T::VllmHostWeights]);
    e.budget_share = Some(inf.vllm.gpu_memory_utilization.get());
    e.served = Some(Box::new(served(&p, &pool)?));
    e.caveats = caveats(&p, &pool, inf, total, ctx);
    Ok(e)
}

/// vLLM's start-up log figures.
fn served(p: &Plan, pool: &Pool) -> Result<Served, EstimateError> {
    Ok(Served {
        engine: Engine::Vllm.label().into(),
        weights_bytes: bytes(p.weights)?,
        kv_cache_bytes: bytes(pool.blocks * p.bytes_per_block)?,
        activation_peak_bytes: Some(bytes(p.logged_activation())?),
        non_torch_bytes: Some(bytes(p.non_torch)?),
        cudagraph_bytes: Some(bytes(p.cudagraphs)?),
        requested_bytes: pool.requested.map(bytes).transpose()?,
        kv_blocks: u64::try_from(pool.blocks).ok(),
        kv_tokens: u64::try_from(pool.tokens).ok(),
        max_concurrency: u64::try_from(pool.max_concurrency_milli / 10)
            .ok()
            .map(Hundredths),
        max_model_len: Some(p.max_model_len),
        gpu_count: (p.ranks.gpus() > 1)
            .then(|| u64::try_from(p.ranks.gpus()).ok())
            .flatten(),
        gpu_shown: (p.ranks.gpus() > 1).then(|| gpu_words(p)),
        ..Served::default()
    })
}

/// Which of the deployment's GPUs the phases show, in words: one of
/// `tp × pp × dp`; with stages, the fullest stage's.
fn gpu_words(p: &Plan) -> String {
    let (r, s) = (p.ranks, p.stage);
    let mut out = format!(
        "one of {} GPUs (tensor {} × pipeline {} × data {})",
        r.gpus(),
        r.tp,
        r.pp,
        r.dp
    );
    if r.pp > 1 {
        let holds = match (s.first, s.last) {
            (true, true) => ", the embedding and the head",
            (true, false) => ", the embedding",
            (false, true) => ", the final norm and the head",
            (false, false) => "",
        };
        out.push_str(&format!(
            ": pipeline stage {} (layers {} to {}{holds}), the fullest; every stage's pool has the fewest blocks over the stages",
            s.rank + 1,
            s.start,
            s.end.saturating_sub(1)
        ));
    }
    if r.dp > 1 {
        out.push_str("; each data parallel replica's GPUs hold the same");
    }
    out
}

/// What the answer rests on that vLLM measures, and why it would refuse.
fn caveats(p: &Plan, pool: &Pool, inf: &Inference, total: u128, ctx: u128) -> Vec<String> {
    let mut out = vec![
        "vLLM measures its profiling run's peak, memory outside PyTorch and its CUDA graphs at start-up: vramfit estimates them from the code".to_string(),
    ];
    if let (true, Some(kind)) = (p.kv.state_groups > 0, p.state_kind) {
        let (what, kernel) = match (kind, p.gdn_prefill) {
            (Recurrence::Mamba2, _) => ("Mamba-2 hybrid", "the mixer keeps a prefill checkpoint block under prefix caching"),
            (Recurrence::ShortConv, _) => ("Short-convolution hybrid (LFM2)", "its state is the convolution's last inputs alone"),
            (Recurrence::GatedDeltaNet | Recurrence::Kda, GdnPrefill::FlashInfer) => ("Gated DeltaNet hybrid", "FlashInfer's prefill on this GPU, which keeps a checkpoint block and blocks in steps of 64 tokens under prefix caching"),
            (Recurrence::GatedDeltaNet | Recurrence::Kda, GdnPrefill::Triton) => ("Gated DeltaNet hybrid", "Triton's prefill (FLA), as on GPUs before Hopper or when the GPU is not known; FlashInfer's on Hopper and Blackwell keeps a checkpoint block more under prefix caching"),
        };
        let mode = if inf.vllm.enable_prefix_caching {
            "prefix caching's align mode, vLLM's default"
        } else {
            "prefix caching off"
        };
        let blocks = match p.kv.state_blocks {
            1 => "one block".to_string(),
            n => format!("{n} blocks"),
        };
        let block = if p.kv.block_size > u128::from(inf.vllm.block_size.get()) {
            format!(
                "vLLM raised the block to {} tokens so one attention page holds a layer's state",
                p.kv.block_size
            )
        } else {
            format!("a block of {} tokens already holds a layer's state, which vLLM pads to the attention page", p.kv.block_size)
        };
        out.push(format!(
            "{what}: every request holds {blocks} in each of {} state groups ({mode}; {kernel}), and {block}; the prefill kernels' workspaces are not counted",
            p.kv.state_groups
        ));
    }
    if p.fa4_blocks {
        let raised = if p.kv.sliding_block == p.kv.block_size {
            String::new()
        } else {
            format!(
                ", and {} for the layers with the smaller page, raised so their page holds as many bytes as the others'",
                p.kv.sliding_block.max(p.kv.block_size)
            )
        };
        out.push(format!(
            "FlashAttention 4's head-256 kernel, which vLLM 0.33 may take on Blackwell GPUs with 128-token blocks: vramfit takes the blocks of Triton's and FlashAttention's kernels before it, {} tokens{raised}",
            p.kv.sliding_block.min(p.kv.block_size)
        ));
    }
    if let Some(k) = p.sparse {
        out.push(format!(
            "DeepSeek Sparse Attention on {} (the kernel vLLM 0.33 takes on this GPU; Hopper's when the GPU is not known): each layer's block of 64 tokens holds the latent and the indexer's keys (132 bytes a token); the top-k buffers, FlashMLA's reserved workspace and the indexer's profiling workspace and dummy 512 MiB logits are counted; not counted: FlashInfer's sparse workspace on Blackwell (allocated at the first request) and the indexer's metadata buffers, sized after the pool",
            k.words()
        ));
    }
    if p.unsized_encoders {
        out.push(
            "text only: vLLM loads the checkpoint's encoders beside the language model (vision; audio on Gemma 4's E2B and E4B) and profiles them on the largest image or video unless --limit-mm-per-prompt sets every modality to 0; neither is counted: on published Gemma 4 start-ups vLLM loaded 1.1 GiB (E4B) and 1.2 GiB (31B) more than vramfit's language model, and a peak activation more than twice vramfit's text-only forward (31B, 8,192 batched tokens, the encoder profiled on video)".into(),
        );
    }
    let k = inf.vllm.num_speculative_tokens.get();
    if k > 0 {
        out.push(format!(
            "MTP speculative decoding ({k} draft tokens): the checkpoint's MTP layer is loaded as the drafter (sharing the embedding and the head) with its attention in the key/value pool, and each Gated DeltaNet state keeps {k} more convolution steps and {k} more blocks a request; the drafter's CUDA graphs and its forward in the profiling run are not sized"
        ));
    }
    if let (false, Some(len)) = (pool.fits, pool.estimated_max_len) {
        out.push(format!(
            "vLLM refuses to start: one request of {} tokens needs more key/value cache than the pool holds; the longest that fits is {len} tokens",
            p.max_model_len
        ));
    }
    if let Some(req) = pool.requested {
        if req + ctx > total {
            out.push(format!(
                "vLLM refuses to start: gpu_memory_utilization {} of the GPU is more than is free beside the CUDA context",
                f64::from(inf.vllm.gpu_memory_utilization.get()) / 10_000.0
            ));
        }
    }
    out.extend(parallel_caveats(p, inf));
    if p.max_model_len > p.model_len {
        out.push(format!(
            "max_model_len is past the model's {} positions: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set",
            p.model_len
        ));
    }
    out
}

/// What the weights' layout and their place rest on.
fn parallel_caveats(p: &Plan, inf: &Inference) -> Vec<String> {
    let mut out = Vec::new();
    if inf.weights.experts_only() {
        out.push(
            "MXFP4 experts at the widths Marlin and FlashInfer's kernels pad them to (Ampere, Ada, Blackwell); on Hopper vLLM 0.33 runs its Triton kernel, which pads less: a little less memory".into(),
        );
    }
    if p.fp8_experts {
        out.push(
            "fp8 experts as vLLM 0.33 runs them on Hopper under tensor parallelism (Triton's fused kernel: its inputs quantized per 128 values); on Blackwell FlashInfer's kernel holds the same weights with a workspace of its own, not modelled".into(),
        );
    }
    if p.host_weights > 0 {
        out.push(
            "cpu_offload_gb: those weights are read from host memory over UVA at every forward (its speed is not modelled)".into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serving phase is the whole budget when the pool holds a
    /// request, and its components sum to it.
    #[test]
    fn serving_fills_the_budget() {
        let a = crate::model::preset("qwen3-8b").map(|p| p.arch);
        let a = a.unwrap_or(Architecture::BLANK);
        let inf = Inference {
            engine: Engine::Vllm,
            ..Inference::default()
        };
        let cap = Bytes(24 << 30);
        let e = estimate(&a, &inf, &Overhead::default(), (cap, None)).map_err(|e| e.to_string());
        let e = e.unwrap_or_else(|m| panic!("{m}"));
        let serve = e.phases.last().map(|p| p.components.allocated());
        let budget = e.budget(cap);
        let pool = e
            .served
            .as_ref()
            .map(|s| s.kv_cache_bytes.get())
            .unwrap_or(0);
        // The pool is what the budget leaves, down to part of a block.
        let left = budget.get() - serve.map_or(0, |b| b.get());
        assert!(pool > 0 && left < (1 << 20), "left {left}");
        assert!(e.needed() < budget);
    }
}
