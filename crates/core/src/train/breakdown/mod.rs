//! The terms of a training estimate, before they are laid out in phases:
//! one builder per seam (parameters, gradients and offload, optimizer,
//! activations, weight copies, logits and the head, recompute), each adding
//! its terms from the shared [`Inputs`].

mod activations;
mod copies;
mod cuda;
mod deepspeed;
mod fsdp;
mod grads;
mod logits;
mod params;
mod pipeline;
mod recompute;

use super::ledger::{self, Ctx, Mixer, Saved};
use super::lora::{lora_count, LoraCount};
use super::optim;
use super::run::Lora;
use super::run::{Ckpt, Dtype, Offload, Quant, Targets};
use super::stack::Transformers;
use crate::error::EstimateError;
use crate::model::family::{Recurrence, TpPlan};
use crate::model::{Architecture, Ends, KvGeometry, LayerKind, ParamStats};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::train::run::Run;
use crate::train::run::Stage;
pub(crate) use params::Quantized;
pub(crate) use pipeline::{beside, kind_terms, rank_wide, Units};

/// Everything the phases are built from: the value of every term, and what
/// one layer saves (for the explanation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakdown {
    pub terms: Terms,
    /// What one layer saves (the second and later layers).
    pub layer: Saved,
    /// What the embedding and head save.
    pub outer: Saved,
    /// Parameter count (the whole model's, on every GPU) and trainable
    /// parameters (this GPU's).
    pub params: u128,
    pub trainable: u128,
    /// Gradient checkpointing is on (a recompute moment exists).
    pub recompute: bool,
    /// Layer 0 is recomputed with terms of its own (its kind or its
    /// ledger differs from the last layer's); otherwise it shares theirs.
    pub first_own: bool,
    /// The head trains under autocast: its gradient is made in bf16, then
    /// cast to fp32.
    pub amp_head: bool,
    /// A trained head tied to the embedding: its gradient waits, unsummed,
    /// until the embedding's arrives at the end of backward.
    pub tied_head: bool,
    /// Terms that live in host memory, never on the GPU (offload).
    pub host: TermSet,
    /// GPU terms that can page out to host memory (bitsandbytes' paged
    /// optimizer state).
    pub pageable: TermSet,
    /// A pipeline stage's output and input sizes (zero without one).
    pub pipe: Units,
}

/// What every builder reads: the run, the model and the numbers derived
/// from them once.
pub(crate) struct Inputs<'a> {
    pub s: &'a Run<'a>,
    pub a: Architecture,
    pub c: Ctx,
    pub stats: ParamStats,
    /// Hidden width, vocabulary, layers, batch and sequence.
    pub h: u128,
    pub v: u128,
    pub l: u128,
    pub bt: u128,
    pub seq: u128,
    pub gpus: u32,
    pub zero: u8,
    pub lora: Option<Lora>,
    pub lc: LoraCount,
    /// Bytes per stored parameter.
    pub pb: u128,
    pub q: Quantized,
    /// What trains: its elements, the bytes of its gradients and of its
    /// optimizer state, its tensors and its largest tensor.
    pub trainable: u128,
    pub grad_bytes: u128,
    pub state_dtype: u128,
    pub tensors: u128,
    pub largest: u128,
    pub layers: Box<Layers>,
    /// How the layers attend (sliding windows for the masks).
    pub geometry: KvGeometry,
    /// The checkpointing that runs (see [`Ctx::ckpt_of`]).
    pub ckpt: Ckpt,
    /// The whole model's parameters (`stats` are this GPU's share under
    /// tensor parallelism).
    pub whole_params: u128,
    /// Elements of the embedding's gradient beyond this GPU's vocabulary
    /// slice (tensor parallelism, see [`tp_share`]).
    pub tp_embed_grad: u128,
    /// The tensors outside the layers this GPU holds (a pipeline stage
    /// holds the embedding on the first rank, the head on the last).
    pub ends: Ends,
}

/// One GPU's share of the model under tensor parallelism, as transformers
/// 5.23 splits a [`crate::model::family::TpPlan::Heads`] family: its heads
/// (q, k, v `colwise`, o `rowwise`), its slice of the MLP (gate and up
/// `colwise`, down `rowwise`) and of the vocabulary (the embedding
/// `embedding_rowwise`, the head `colwise_gather_output`), of each routed
/// expert (`moe_tp_experts`: the stacked gate and up `packed_colwise`, down
/// `rowwise`) and of the Gated DeltaNet's projections' rows
/// ([`Architecture::gathered_tp`]); norms whole.
/// DTensor's `Shard` cuts as `torch.chunk` does: rank 0 holds ⌈n / tp⌉.
/// Its activations are those of the same model with `heads / tp` heads and
/// `ffn / tp` MLP width, to the byte (measured:
/// `scripts/measure/parallel/`, Llama-3.1-8B at tp 2 against the
/// one-GPU harness on that shape), but for the logits: the head's slices
/// are gathered, so the loss sees the whole vocabulary.
/// Source: transformers 5.23 `distributed/tensor_parallel.py`
/// (`ColwiseParallel`, `RowwiseParallel`, `EmbeddingParallel`).
pub(crate) fn tp_share(a: &Architecture, tp: u32) -> Architecture {
    if tp <= 1 {
        return *a;
    }
    // A plan that gathers attention's outputs splits its weights alone
    // (`Architecture::gathered_tp`): every GPU runs every head.
    let gathered = a.family.spec().tp == TpPlan::GatheredHeads;
    let heads_tp = if gathered { 1 } else { tp };
    Architecture {
        heads: a.heads / heads_tp,
        kv_heads: a.kv_heads / heads_tp,
        ffn: a.ffn.div_ceil(tp),
        moe_ffn: a.moe_ffn.div_ceil(tp),
        vocab: a.vocab.div_ceil(tp),
        gathered_tp: tp,
        ..*a
    }
}

/// The parameters, as created at init.
pub(crate) const PARAMS: TermSet = TermSet::of(&[
    T::Weights,
    T::WeightsRecast,
    T::QuantWeights,
    T::QuantState,
    T::Buffers,
    T::LoraAdapters,
    T::ZeroGathered,
    T::DsPersistent,
    T::DsMaster,
    T::DsGradPartition,
    T::DsReduceBucket,
]);
/// The optimizer state once complete.
pub(crate) const STATE: TermSet = TermSet::of(&[
    T::Moments,
    T::StepCounters,
    T::Absmax,
    T::Factored,
    T::RmsScalars,
    T::Master,
]);
/// The optimizer state at the first step's peak (Adafactor's is partial).
pub(crate) const STATE_FIRST_STEP: TermSet = TermSet::of(&[
    T::Moments,
    T::StepCounters,
    T::Absmax,
    T::FactoredSoFar,
    T::RmsSoFar,
    T::Master,
]);
/// What the layers and the loop keep for backward.
pub(crate) const SAVED: TermSet = TermSet::of(&[
    T::Labels,
    T::LayerFirst,
    T::ScoresFirst,
    T::Layers,
    T::Scores,
    T::MoeLayers,
    T::MoeScores,
    T::GlobalLayers,
    T::GlobalScores,
    T::SharedLayers,
    T::SharedScores,
    T::SharedGlobalLayers,
    T::SharedGlobalScores,
    T::LinearLayers,
    T::LinearSequences,
    T::LinearSequencesFirst,
    T::SlidingMasks,
    T::CausalMasks,
    T::MaskedKv,
    T::RouterLogits,
    T::CkptInputs,
    T::CkptSharedKv,
    T::CkptInFlight,
    T::QuantInputs,
    T::Outer,
    T::OuterEmbedding,
    T::PositionTables,
]);
/// What one micro-batch's forward leaves for its backward (forward's end
/// less what was there at its start): a pipeline rank holds this for each
/// micro-batch waiting for its backward (`pipeline.rs`).
pub(crate) fn left_for_backward(terms: &Terms) -> u128 {
    SAVED
        .union(TermSet::of(&[
            T::CopiesSaved,
            T::LogSoftmax,
            T::LogitsKept,
            T::LogitsSoftcap,
            T::PipeStageOutput,
        ]))
        .iter()
        .map(|id| terms.bytes(id))
        .sum()
}

/// A pipeline rank's part of the model: its stage's decoder layers (the
/// codec takes only families whose layers are alike, so the layers'
/// sliding windows follow the count).
fn stage_share(a: &Architecture, stage: Option<&Stage>) -> Architecture {
    match stage {
        None => *a,
        Some(st) => Architecture {
            layers: st.layers,
            sliding_layers: a.sliding_layers.min(st.layers),
            // A hybrid's stages are whole periods of its pattern (the
            // pipeline's check): each has the pattern's DeltaNet layers,
            // in the pattern's places.
            linear_layers: a
                .family
                .spec()
                .linear
                .map_or(0, |rule| rule.count(st.layers)),
            ..*a
        },
    }
}

/// Classes of layer: index `moe + 2 · mixer`, the mixer attention (0), a
/// Gated DeltaNet (1), Gemma 4's global attention with its own heads or
/// Llama 4's attention without RoPE (2),
/// Gemma 4's attention reusing an earlier layer's keys and values (3),
/// global and reusing them (4).
pub(crate) const CLASSES: usize = 10;

/// What the layers save, by class of layer ([`CLASSES`]).
pub(crate) struct Layers {
    /// Each class's ledger and its number of layers. A class with no
    /// layers (the MoE class of a dense model) has an empty ledger.
    pub ledgers: [(Saved, u128); CLASSES],
    /// The class of layer 0.
    pub first_kind: usize,
    /// Layer 0's ledger: it differs only when its input needs no gradient
    /// (the frozen embedding under LoRA).
    pub layer0: Saved,
    pub layer0_differs: bool,

    /// The embedding and the head.
    pub outer: ledger::Outer,
    /// The class backward recomputes under checkpointing: the largest.
    pub largest: Saved,
    pub largest_kind: usize,
    /// Under checkpointing, bytes per token Gemma 4's layers whose keys
    /// and values later layers reuse leave from their recompute to the
    /// end of backward ([`ledger::kv_retained`]).
    pub kv_retained: u128,
}

/// Whether the layers' classes are found layer by layer: where they
/// differ in more than kind and mixer (Gemma 4, Llama 4's layers without
/// RoPE).
fn by_layer(a: &Architecture) -> bool {
    let spec = a.family.spec();
    spec.varies_by_layer() || spec.nope_full
}

/// Layer `l`'s class ([`CLASSES`]).
fn class_of(a: &Architecture, l: u32) -> usize {
    let mixer = match (a.linear_at(l), a.global_at(l), a.kv_shared_at(l)) {
        (true, _, _) => 1,
        // Llama 4's layers without RoPE stand with Gemma 4's global ones.
        (false, false, false) if a.nope_at(l) => 2,
        (false, false, false) => 0,
        (false, true, false) => 2,
        (false, false, true) => 3,
        (false, true, true) => 4,
    };
    usize::from(a.kind_of(l) == LayerKind::Moe) + 2 * mixer
}

/// [`Layers::kv_retained`]: for each kind of attention (global or
/// sliding) the layers reusing keys and values read, the last earlier
/// layer of that kind (not layer 0, whose backward is the last).
fn kv_retained(c: &Ctx, a: &Architecture) -> u128 {
    a.kv_store_layers()
        .into_iter()
        .flatten()
        .filter(|&l| l > 0)
        .map(|l| u128::from(ledger::kv_retained(&c.at_layer(l))))
        .sum()
}

/// The layers of each class, and one of each (the first): by the counts
/// of each kind where the layers are alike but for their kind and mixer,
/// layer by layer where they differ (Gemma 4).
fn classes(a: &Architecture) -> [(u128, u32); CLASSES] {
    let mut out = [(0u128, 0u32); CLASSES];
    if by_layer(a) {
        for l in (0..a.layers).rev() {
            let k = class_of(a, l);
            out[k] = (out[k].0 + 1, l);
        }
        return out;
    }
    let [(_, n_dense), (_, n_moe)] = a.layer_kinds();
    let linear = a.linear_by_kind().map(u128::from);
    let counts = [
        u128::from(n_dense) - linear[0],
        u128::from(n_moe) - linear[1],
        linear[0],
        linear[1],
    ];
    for (k, n) in counts.into_iter().enumerate() {
        out[k].0 = n;
    }
    out
}

impl Layers {
    /// `first_input_grad`: layer 0's input needs a gradient (see
    /// `Inputs::first_input_grad`).
    fn new(
        c: &Ctx,
        a: &Architecture,
        (bt, seq): (u128, u128),
        first_input_grad: bool,
        ckpt: bool,
    ) -> Layers {
        let kind = |k: usize| {
            if Layers::moe(k) {
                LayerKind::Moe
            } else {
                LayerKind::Dense
            }
        };
        let mixer = |k: usize| {
            if Layers::linear(k) {
                Mixer::Recurrent
            } else {
                Mixer::Attention
            }
        };
        let mut ledgers = [(Saved::default(), 0u128); CLASSES];
        for (k, (count, layer)) in classes(a).into_iter().enumerate() {
            if count > 0 {
                ledgers[k] = (
                    ledger::layer(&c.at_layer(layer), kind(k), mixer(k), true),
                    count,
                );
            }
        }
        let first_kind = if by_layer(a) {
            class_of(a, 0)
        } else {
            usize::from(a.kind_of(0) == LayerKind::Moe) + 2 * usize::from(a.linear_at(0))
        };
        let layer0 = if first_input_grad {
            ledgers[first_kind].0
        } else {
            ledger::layer(&c.at_layer(0), kind(first_kind), mixer(first_kind), false)
        };
        let layer0_differs = layer0 != ledgers[first_kind].0;
        let (largest_kind, largest) = ledgers
            .iter()
            .enumerate()
            .filter(|(_, (_, n))| *n > 0)
            .map(|(i, (x, _))| (i, *x))
            .max_by_key(|(_, x)| x.bytes(bt * seq, seq) + u128::from(x.weight_copies))
            .unwrap_or_default();
        Layers {
            ledgers,
            first_kind,
            layer0,
            layer0_differs,
            outer: ledger::outer(c, first_input_grad),
            largest,
            largest_kind,
            kv_retained: if ckpt { kv_retained(c, a) } else { 0 },
        }
    }

    /// Whether layers of kind `kind` are MoE layers.
    pub fn moe(kind: usize) -> bool {
        kind % 2 == 1
    }

    /// Whether layers of kind `kind` are Gated DeltaNet layers.
    pub fn linear(kind: usize) -> bool {
        kind / 2 == 1
    }

    /// Whether layers of kind `kind` may slide (attention, not Gemma 4's
    /// global layers): the ones a sliding-window mask reaches.
    pub fn may_slide(kind: usize) -> bool {
        matches!(kind / 2, 0 | 3)
    }

    /// Class `kind`'s ledger and its layers but layer 0 when layer 0's
    /// differs.
    pub fn group(&self, kind: usize) -> (&Saved, u128) {
        let (saved, n) = &self.ledgers[kind];
        let less = u128::from(self.layer0_differs && kind == self.first_kind);
        (saved, n - less)
    }

    /// What masked SDPA calls save more, bytes per token over the layers
    /// a mask reaches (the repeated keys and values, [`Saved::masked_kv`]),
    /// when `masked` of them are: the largest class's for alike layers;
    /// where layers differ (Gemma 4: its sliding layers with keys and
    /// values of their own, and those reusing them), each sliding class's.
    pub fn masked_kv_bytes(&self, masked: u128, by_class: bool) -> u128 {
        if masked == 0 {
            return 0;
        }
        if !by_class {
            return masked * u128::from(self.largest.masked_kv);
        }
        self.ledgers
            .iter()
            .enumerate()
            .filter(|(k, _)| Layers::may_slide(*k))
            .map(|(_, (s, n))| n * u128::from(s.masked_kv))
            .sum()
    }

    /// What a masked SDPA call saves more in a recomputed layer of class
    /// `kind` ([`Saved::masked_kv`]; none in a global layer, which gets no
    /// mask).
    pub fn recomputed_masked_kv(&self, kind: usize) -> u64 {
        if Layers::may_slide(kind) {
            self.ledgers[kind].0.masked_kv
        } else {
            0
        }
    }

    /// Layer 0 differs from the layer recomputed last (the largest kind):
    /// its own kind, or its own ledger (under LoRA its input needs no
    /// gradient).
    pub fn first_own(&self) -> bool {
        self.first_kind != self.largest_kind || self.layer0 != self.largest
    }

    /// `f` summed over every layer.
    fn sum(&self, f: impl Fn(&Saved) -> u128) -> u128 {
        (0..CLASSES)
            .map(|k| {
                let (x, n) = self.group(k);
                n * f(x)
            })
            .sum::<u128>()
            + if self.layer0_differs {
                f(&self.layer0)
            } else {
                0
            }
    }
}

impl<'a> Inputs<'a> {
    fn new(s: &'a Run<'a>) -> Result<Inputs<'a>, EstimateError> {
        let whole = *s.arch.ok_or(EstimateError::NeedsArchitecture)?;
        let t = &s.train;
        let tp = s.parallel.tp.get();
        let a = stage_share(&tp_share(&whole, tp), s.stage);
        // The forward sees the whole vocabulary once the head's slices are
        // gathered.
        let c = Ctx::new(
            &Architecture {
                vocab: whole.vocab,
                ..a
            },
            t,
        );
        let ends = s.stage.map_or(Ends::BOTH, |st| Ends {
            before: st.first,
            after: st.last,
        });
        let stats = a.stats_of_part(t.expert_layout(), ends);
        let whole_params = if tp > 1 || s.stage.is_some() {
            whole.stats_as(t.expert_layout()).params
        } else {
            stats.params
        };
        // The embedding's backward (`embedding_dense_backward`) makes a
        // gradient of the whole vocabulary, which the sharded gradient
        // keeps as its storage (measured: +(V − ⌈V / tp⌉) · h · 2 bytes in
        // bf16 from the end of backward to `zero_grad`). Where FSDP2
        // shards the gradients, its reduce-scatter makes a new, sharded
        // one and the whole one goes (measured at tp 2 × fsdp 2).
        let tp_embed_grad = if tp > 1 && c.full && s.parallel.zero.get() < 2 {
            u128::from(whole.vocab - a.vocab) * u128::from(a.hidden)
        } else {
            0
        };
        let lora = t.lora();
        let lc = lora
            .map(|x| lora_count(&a, &x, t.expert_layout()))
            .unwrap_or_default();
        let pb = u128::from(t.dtype.param_bytes());
        // A pipeline stage runs one micro-batch at a time.
        let batch = s.stage.map_or(t.batch.get(), |st| st.micro_batch);
        let (bt, seq) = (u128::from(batch), u128::from(t.seq.get()));
        // What trains, and in which dtype its gradients and state are.
        let (trainable, grad_bytes, state_dtype, tensors, largest) = match lora {
            None => (
                stats.params,
                pb,
                if t.dtype == Dtype::MixedBf16 { 4 } else { pb },
                stats.tensors,
                stats.largest_tensor,
            ),
            // Adapters are fp32 (peft's autocast_adapter_dtype).
            Some(_) => (lc.params, 4, 4, lc.tensors, lc.largest),
        };
        let ckpt = Ctx::ckpt_of(t, c.spec);
        let layers = Box::new(Layers::new(
            &c,
            &a,
            (bt, seq),
            Inputs::first_input_grad(&c, ckpt),
            ckpt.on(),
        ));
        Ok(Inputs {
            ckpt,
            s,
            q: params::quantized(&a, t),
            h: u128::from(a.hidden),
            v: u128::from(whole.vocab),
            l: u128::from(a.layers),
            bt,
            seq,
            gpus: s.parallel.data_ranks(),
            zero: s.parallel.zero.get(),
            a,
            c,
            stats,
            lora,
            lc,
            pb,
            trainable,
            grad_bytes,
            state_dtype,
            tensors,
            largest,
            layers,
            geometry: KvGeometry::of(&a),
            whole_params,
            tp_embed_grad,
            ends,
        })
    }

    /// Layer 0's input needs a gradient: in full fine-tuning (the
    /// embedding trains), under reentrant checkpointing (which trains
    /// nothing inside otherwise: TRL and peft call
    /// `enable_input_require_grads`), and under transformers 5's
    /// checkpointing, which always does. Otherwise (LoRA) layer 0 saves
    /// less.
    fn first_input_grad(c: &Ctx, ckpt: Ckpt) -> bool {
        c.full || ckpt == Ckpt::Reentrant || (ckpt.on() && c.stack.ckpt_input_grads)
    }

    /// `B × S × …` factors of a per-token quantity (at most three more:
    /// a term has five, checked in debug builds).
    pub fn per_token(&self, rest: &[(u128, U)]) -> Term {
        debug_assert!(rest.len() <= 3, "{rest:?}");
        let mut f = [(0, U::Copies); 5];
        f[0] = (self.bt, U::Batch);
        f[1] = (self.seq, U::Seq);
        let n = rest.len().min(3);
        f[2..2 + n].copy_from_slice(&rest[..n]);
        Term::of(&f[..2 + n])
    }

    /// Bytes per element of the residual stream.
    pub fn residual(&self) -> u128 {
        u128::from(self.c.mode.residual())
    }

    /// Bytes per unquantized stored weight: the load dtype (half but for
    /// fp32 runs), or fp32 once prepared for k-bit training.
    pub fn plain_bytes(&self) -> u128 {
        let t = &self.s.train;
        match (t.quant, t.kbit_prep, t.dtype) {
            (Quant::None, _, _) => self.pb,
            (_, true, _) | (_, false, Dtype::Fp32) => 4,
            (_, false, _) => 2,
        }
    }

    /// Bytes per element of matmul outputs (the compute dtype).
    pub fn act(&self) -> u128 {
        u128::from(self.c.mode.act())
    }
}

/// The terms of the estimate, before they are laid out in phases.
pub fn breakdown(s: &Run) -> Result<Breakdown, EstimateError> {
    if let Some(why) = s.arch.and_then(recurrence_unmeasured) {
        return Err(EstimateError::NotModelled(why));
    }
    if let Some(why) = s.arch.and_then(|a| hybrid_unmeasured(s, a)) {
        return Err(EstimateError::NotModelled(why));
    }
    if let Some(why) = s.arch.and_then(|a| gemma4_unmeasured(s, a)) {
        return Err(EstimateError::NotModelled(why));
    }
    if let Some(why) = s.arch.and_then(|a| dense_dispatch_unmeasured(s, a)) {
        return Err(EstimateError::NotModelled(why));
    }
    if s.arch.is_some_and(|a| a.family.spec().indexer) {
        return Err(EstimateError::NotModelled(INDEXER_NOT_MODELLED));
    }
    if s.arch.is_some_and(|a| a.family.spec().altup) {
        return Err(EstimateError::NotModelled(ALTUP_NOT_MODELLED));
    }
    let x = Inputs::new(s)?;
    let t = &s.train;
    let mut terms = Terms::default();
    let mut put = |id: T, term: Term| terms.set(id, term);
    params::add(&x, &mut put);
    let mut host = grads::add(&x, &mut put);
    let sizes = optim::Sizes {
        train: s.train,
        a: &x.a,
        ends: x.ends,
        gpus: x.gpus,
        zero: x.zero,
        trainable: x.trainable,
        state_dtype: x.state_dtype,
        largest: x.largest,
        tensors: x.tensors,
        lora: x.lora.is_some(),
        lc: x.lc,
    };
    optim::add_terms(&sizes, &mut put);
    if s.parallel.offload != Offload::None {
        // The step runs on the CPU: the GPU makes no state of its own.
        for id in OPTIMIZER_ON_GPU {
            put(id, Term::ZERO);
        }
    }
    activations::add(&x, &mut put);
    copies::add(&x, &mut put);
    logits::add(&x, &mut put);
    recompute::add(&x, &mut put);
    fsdp::add(&x, &mut put);
    deepspeed::add(&x, &mut put);
    cuda::add(&x, &mut put);
    let pipe = s
        .stage
        .map(|st| pipeline::add(&x, st, &mut terms))
        .unwrap_or_default();
    let mut put = |id: T, term: Term| terms.set(id, term);
    put(
        T::Dataset,
        Term::of(&[(u128::from(s.view.dataset_mib) << 20, U::Bytes)]),
    );
    if x.ckpt == Ckpt::Offload {
        host = host.with(T::CkptInputs);
    }
    let pageable = if t.optim.paged() {
        TermSet::of(&[T::Moments, T::Absmax])
    } else {
        TermSet::EMPTY
    };
    Ok(Breakdown {
        host,
        pageable,
        pipe,
        terms,
        layer: x.layers.largest,
        outer: x.layers.outer.saved,
        params: x.whole_params + x.lc.params,
        trainable: x.trainable,
        recompute: x.ckpt.on(),
        first_own: x.layers.first_own(),
        amp_head: x.c.full && x.c.mode == ledger::Mode::Amp,
        tied_head: x.c.full && x.a.tied,
    })
}

/// What vramfit does not size of a hybrid's training, by its kind of
/// recurrent layer, or `None`.
fn hybrid_unmeasured(s: &Run, a: &Architecture) -> Option<&'static str> {
    match a.family.spec().linear?.kind {
        Recurrence::GatedDeltaNet => delta_net_unmeasured(s, a),
        Recurrence::ShortConv => short_conv_unmeasured(s),
        // Refused whole by `recurrence_unmeasured`.
        Recurrence::Mamba2 | Recurrence::Kda => None,
    }
}

/// What vramfit does not size of a Gated DeltaNet hybrid's training (it
/// models Qwen3.5's and Qwen3-Next's layers in bf16 and fp32, with or
/// without autocast, full fine-tuning, LoRA and QLoRA, as transformers'
/// torch fallbacks run them: `scripts/measure/hybrid/`), or `None`.
fn delta_net_unmeasured(s: &Run, a: &Architecture) -> Option<&'static str> {
    let t = &s.train;
    Some(if !on_v5(t.transformers) {
        "training a Gated DeltaNet hybrid on transformers 4 is not modelled: Qwen3.5 came in 5.2, and the rows are 5.23's"
    } else if a.linear_by_kind().iter().all(|&n| n > 0) {
        "Gated DeltaNet layers both dense and MoE in one model are not modelled"
    } else {
        return None;
    })
}

/// What vramfit does not size of LFM2's and LFM2-MoE's training (it
/// models full fine-tuning on one GPU or under DDP, in bf16 and fp32,
/// with or without autocast and checkpointing, as transformers 5.23's
/// torch fallback runs the short convolution:
/// `scripts/measure/families/lfm2/train/`), or `None`.
fn short_conv_unmeasured(s: &Run) -> Option<&'static str> {
    let t = &s.train;
    Some(if !on_v5(t.transformers) {
        "training LFM2 on transformers 4 is not measured yet (transformers 5.23 is)"
    } else if t.lora().is_some() || t.quant != Quant::None {
        "LoRA and QLoRA on LFM2 are not measured yet (peft's all-linear adapts the short convolution's in_proj and out_proj); full fine-tuning is"
    } else if sharded_or_split(s) {
        "training LFM2 sharded (ZeRO, FSDP) or split (tensor or pipeline parallelism) over several GPUs is not measured yet; one GPU and data parallelism (DDP) are"
    } else {
        return None;
    })
}

/// Whether the release is transformers 5 (the hybrids' and Gemma 4's
/// first).
fn on_v5(t: Transformers) -> bool {
    match t {
        Transformers::V5 => true,
        Transformers::V457 | Transformers::V448 => false,
    }
}

const MAMBA2_NOT_MODELLED: &str = "training a Mamba-2 hybrid (Granite 4.0-H, Nemotron-H: BambaMixer's and NemotronHMamba2Mixer's layers, whose kernels differ with mamba_ssm installed or not) is not measured yet, so not modelled; its inference on transformers, vLLM, llama.cpp, Ollama and MLX is";

/// The refusal of training for a kind of recurrent layer the ledger has
/// no rules for (Gated DeltaNet's and the short convolution's are measured).
fn recurrence_unmeasured(a: &Architecture) -> Option<&'static str> {
    match a.family.spec().linear?.kind {
        Recurrence::GatedDeltaNet | Recurrence::ShortConv => None,
        Recurrence::Mamba2 => Some(MAMBA2_NOT_MODELLED),
        Recurrence::Kda => Some(KDA_NOT_MODELLED),
    }
}

const KDA_NOT_MODELLED: &str = "training Kimi Linear is not measured yet, so not modelled; its inference on llama.cpp, Ollama and MLX is";

/// The refusal of training Gemma 3n: AltUp's four streams of the hidden
/// state through every layer, and what its layers save, are not measured.
const ALTUP_NOT_MODELLED: &str = "training Gemma 3n (AltUp's four streams, Laurel) is not measured yet, so not modelled; its inference on llama.cpp, Ollama and MLX is";

/// The refusal of training DeepSeek Sparse Attention: transformers 5.23
/// runs the indexer under `no_grad` (nothing saved for backward), but its
/// scores are `[B, S, index_heads, T]` in fp32 at every layer, and the
/// top-k mask `[B, 1, S, T]` joins attention's: not measured.
const INDEXER_NOT_MODELLED: &str = "training DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5: the lightning indexer's fp32 scores over every cached token, and its top-k mask) is not measured yet, so not modelled; its inference on vLLM, llama.cpp, Ollama and MLX is";

/// What training a model whose experts transformers runs densely
/// (`Moe::dense_dispatch`: Llama 4) has not been held to: measured in
/// full fine-tuning (bf16, fp32 and autocast, with and without
/// non-reentrant checkpointing) and LoRA on named modules (bf16 and
/// autocast), one GPU
/// (`scripts/measure/families/llama4/dense/`).
fn dense_dispatch_unmeasured(s: &Run, a: &Architecture) -> Option<&'static str> {
    if !a.moe().is_some_and(|m| m.dense_dispatch) {
        return None;
    }
    let t = &s.train;
    Some(if !on_v5(t.transformers) {
        "training Llama 4 on transformers 4 is not measured yet (transformers 5.23 is)"
    } else if t.quant != Quant::None {
        "Llama 4 on a quantized base is not measured yet"
    } else if t.lora().is_some_and(|l| l.targets == Targets::ALL) {
        "peft 0.21 cannot put LoRA on all of Llama 4's linear layers: its router is an nn.Linear that returns a tuple, and peft's wrapper fails on it"
    } else if matches!(t.ckpt(), Ckpt::Offload | Ckpt::Reentrant) {
        "Llama 4 with offloaded or reentrant checkpointing is not measured yet (non-reentrant checkpointing is)"
    } else if sharded_or_split(s) {
        "training Llama 4 sharded (ZeRO, FSDP) or split (tensor or pipeline parallelism) over several GPUs is not measured yet; data parallelism (DDP) is estimated"
    } else {
        return None;
    })
}

/// The run is sharded (ZeRO, FSDP) or split (a pipeline stage, tensor or
/// pipeline parallelism) over several GPUs; plain data parallelism (DDP)
/// is neither.
fn sharded_or_split(s: &Run) -> bool {
    s.stage.is_some()
        || s.parallel.zero.get() > 0
        || s.parallel.tp.get() > 1
        || s.parallel.pp.get() > 1
}

/// What training Gemma 4 has not been held to (its layers differ:
/// `scripts/measure/gemma4/` measured full fine-tuning and LoRA on one
/// GPU, transformers 5.23, bf16, fp32 and autocast, SDPA and eager,
/// without checkpointing and with non-reentrant checkpointing; LoRA with
/// reentrant checkpointing; QLoRA on bitsandbytes 0.50 with either).
fn gemma4_unmeasured(s: &Run, a: &Architecture) -> Option<&'static str> {
    let spec = a.family.spec();
    if !spec.varies_by_layer() {
        return None;
    }
    let t = &s.train;
    Some(if !on_v5(t.transformers) {
        "training Gemma 4 on transformers 4 is not modelled: Gemma 4 came in transformers 5"
    } else if t.ckpt() == Ckpt::Offload || (t.ckpt() == Ckpt::Reentrant && t.lora_r.is_none()) {
        "Gemma 4 with offloaded checkpointing, or with reentrant checkpointing in full fine-tuning, is not measured yet (non-reentrant checkpointing is, and reentrant under LoRA and QLoRA)"
    } else if sharded_or_split(s) {
        // Plain data parallelism (DDP) adds only its gradient buckets,
        // which do not depend on the layers.
        "training Gemma 4 sharded (ZeRO, FSDP) or split (tensor or pipeline parallelism) over several GPUs is not measured yet; data parallelism (DDP) is estimated"
    } else {
        return None;
    })
}

/// The optimizer's own terms on the GPU (none when DeepSpeed's CPU
/// optimizer runs the step).
const OPTIMIZER_ON_GPU: [T; 10] = [
    T::Moments,
    T::StepCounters,
    T::Absmax,
    T::Factored,
    T::RmsScalars,
    T::FactoredSoFar,
    T::RmsSoFar,
    T::Master,
    T::Temps,
    T::TempsFirstStep,
];
