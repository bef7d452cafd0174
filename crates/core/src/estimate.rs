//! The accurate estimator: live tensor bytes at every phase of the first two
//! training iterations, from the architecture, the ledger of saved tensors
//! and the optimizer's own allocations.
//!
//! The step is the Hugging Face Trainer's: `loss = model(ids, labels=ids).loss;
//! loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)`, with the
//! output object dropped right after `.loss` unless `keep_outputs`.
//! Every byte is a [`Term`] (named factors); each phase's peak and end are
//! sets of terms. Held to the measured ground truth (`tests/ground_truth.rs`).

use crate::arch::{Architecture, Lora, ParamTensor};
use crate::families::Mlp;
use crate::ledger::{self, Ctx, Mode, Saved};
use crate::report::{Estimate, Method, Moment, Phase, PhaseReport, Running};
use crate::scenario::{Ckpt, Dtype, Offload, Optimizer, Quant, Scenario};
use crate::terms::{Term, TermId as T, TermSet, Terms, Unit as U};
use crate::units::Bytes;
use crate::EstimateError;

/// The adapters LoRA adds, counted from the parameter tensors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoraCount {
    /// Adapter parameters: r × (in + out) per adapted module.
    pub params: u128,
    /// Adapter tensors: A and B per adapted module.
    pub tensors: u128,
    /// Elements of the largest adapter (r × max(in, out)).
    pub largest: u128,
    /// Adafactor's factored elements: (r + in) + (out + r) per module.
    pub factored: u128,
}

/// Counts LoRA's adapters on `a`.
///
/// Source: peft 0.21 `LoraLayer.update_layer`: `lora_A = nn.Linear(in, r)`,
/// `lora_B = nn.Linear(r, out)`, both without bias; `ParamWrapper` (a 3-D
/// experts parameter) the same with `r × experts` (see
/// [`ParamTensor::lora_rank`]).
pub fn lora_count(a: &Architecture, lora: &Lora) -> LoraCount {
    let mut c = LoraCount::default();
    a.for_each_tensor(|at, t| {
        if t.module().is_some_and(|m| lora.adapts(m)) {
            let (i, o) = (u128::from(t.cols), u128::from(t.rows));
            let r = t.lora_rank(lora.r);
            let n = at.copies();
            c.params += n * r * (i + o);
            c.tensors += 2 * n;
            c.largest = c.largest.max(r * i.max(o));
            c.factored += n * (i + o + 2 * r);
            if lora.dora {
                // DoRA's magnitude: one fp32 vector of the output width
                // (`lora_magnitude_vector`).
                c.params += n * o;
                c.tensors += n;
                c.factored += n * o;
            }
        }
    });
    c
}

/// Adafactor's factored second moments for one tensor: rows + cols for a
/// matrix, the whole vector otherwise.
///
/// Source: transformers' `Adafactor` state init (`exp_avg_sq_row`,
/// `exp_avg_sq_col` for ≥ 2-D, `exp_avg_sq` otherwise, all fp32, and a
/// 0-dim fp32 `RMS`); matches the ground truth's Adafactor rows exactly.
fn factored_elems(t: &ParamTensor) -> u128 {
    let s = u128::from(t.stack);
    if t.cols > 1 {
        // [.., rows, cols]: the row means keep every dimension but the
        // last, the column means every one but the second to last.
        s * (u128::from(t.rows) + u128::from(t.cols))
    } else {
        s * u128::from(t.rows)
    }
}

/// Elements of the fp32 temporaries while Adafactor updates one tensor of
/// `elems` elements with `factored` row + column elements: `copies`
/// full-size tensors (`grad ** 2 + eps` next to the approximated update;
/// for half weights also fp32 copies of the weight and the gradient), the
/// row and column factors, and a 0-dim RMS.
fn adafactor_temps(copies: u128, elems: u128, factored: u128) -> u128 {
    copies * elems + factored + 1
}

/// Adafactor over the full model: (factored elements, tensors) in total,
/// and at the moment of the first step's peak.
///
/// The first `step()` creates state tensor by tensor, in parameter order;
/// updating a tensor holds full-size fp32 temporaries (`copies` of it) and
/// its row and column means. The peak is the largest over the tensors of
/// the state created so far plus that tensor's temporaries; for a repeated
/// layer the last copy has the most state before it.
struct Adafactor {
    total: (u128, u128),
    at_peak: (u128, u128),
    /// The tensor updated at the first step's peak: (elements, factored).
    peak_tensor: (u128, u128),
    /// The largest tensor (the steady state's peak): (elements, factored).
    largest: (u128, u128),
}

fn adafactor(a: &Architecture, copies: u128) -> Adafactor {
    let mut total = (0u128, 0u128);
    a.for_each_tensor(|at, t| {
        let n = at.copies();
        total.0 += n * factored_elems(t);
        total.1 += n * t.tensors();
        if t.bias {
            total.0 += n * u128::from(t.rows);
        }
    });
    let mut so_far = (0u128, 0u128);
    let mut best = (0u128, (0u128, 0u128), (0u128, 0u128));
    let mut largest = (0u128, 0u128);
    a.for_each_tensor(|at, t| {
        let n = at.copies();
        let f = factored_elems(t);
        // Earlier copies of this tensor (earlier layers) come first.
        let before = (so_far.0 + (n - 1) * f, so_far.1 + (n - 1));
        let here = (before.0 + f, before.1 + 1);
        let elems = t.weight_elems();
        let peak = 4 * (here.0 + here.1) + 4 * adafactor_temps(copies, elems, f);
        if peak > best.0 {
            best = (peak, here, (elems, f));
        }
        if elems > largest.0 {
            largest = (elems, f);
        }
        so_far.0 += n * f;
        so_far.1 += n * t.tensors();
        if t.bias {
            so_far.0 += n * u128::from(t.rows);
        }
    });
    Adafactor {
        total,
        at_peak: best.1,
        peak_tensor: best.2,
        largest,
    }
}

/// Model-state bytes per GPU under ZeRO: stage 1 partitions the optimizer
/// state, 2 also the gradients, 3 also the parameters.
///
/// Source: Rajbhandari et al. 2019, "ZeRO", §5 and Figure 1:
/// (2 + 2 + K)Ψ baseline, 2Ψ + 2Ψ + KΨ/N_d, 2Ψ + (2 + K)Ψ/N_d,
/// (2 + 2 + K)Ψ/N_d.
pub fn zero_partition(whole: u128, gpus: u128, partitioned: bool) -> u128 {
    if partitioned {
        whole.div_ceil(gpus)
    } else {
        whole
    }
}

/// Everything the phases are built from: the value of every term, and what
/// one layer saves (for the explanation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakdown {
    pub terms: Terms,
    /// What one layer saves (the second and later layers).
    pub layer: Saved,
    /// What the embedding and head save.
    pub outer: Saved,
    /// Parameter count and trainable parameters.
    pub params: u128,
    pub trainable: u128,
    /// Gradient checkpointing is on (a recompute moment exists).
    pub recompute: bool,
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
}

/// The accurate estimate.
pub fn estimate(s: &Scenario) -> Result<Estimate, EstimateError> {
    let b = breakdown(s)?;
    let phases = build_phases(&b, s.train.grad_accum.get() > 1, &s.overhead)?;
    let too_large = EstimateError::TooLarge {
        field: "the model size",
    };
    let params = u64::try_from(b.params).map_err(|_| too_large.clone())?;
    let trainable = u64::try_from(b.trainable).map_err(|_| too_large)?;
    let sum = |set: TermSet| {
        set.iter()
            .fold(0u128, |acc, id| acc.saturating_add(b.terms.bytes(id)))
    };
    let bytes = |set: TermSet| {
        u64::try_from(sum(set))
            .map(Bytes)
            .map_err(|_| EstimateError::TooLarge {
                field: "the model size",
            })
    };
    let (host_bytes, pageable_bytes) = (bytes(b.host)?, bytes(b.pageable)?);
    let host_terms = TermSet::of(
        &b.host
            .iter()
            .filter(|id| b.terms.bytes(*id) > 0)
            .collect::<Vec<_>>(),
    );
    let mut e = Estimate::from_phases(Method::Vramfit, params, trainable, phases, b.terms);
    e.host_bytes = host_bytes;
    e.pageable_bytes = pageable_bytes;
    e.host_terms = host_terms;
    Ok(e)
}

/// DoRA's largest per-layer transient over the layer kinds (0 without
/// DoRA).
fn kinds_transient(c: &Ctx, a: &Architecture) -> u128 {
    if !c.dora {
        return 0;
    }
    a.layer_kinds()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, _)| u128::from(ledger::layer(c, kind, true).dora_transient))
        .max()
        .unwrap_or(0)
}

/// A quantized base's linear weights (bitsandbytes): what they hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Quantized {
    /// Weight elements quantized.
    elems: u128,
    /// Their packed bytes.
    packed: u128,
    /// Quantization constants, bytes.
    state: u128,
    /// Elements of the largest quantized weight.
    largest: u128,
    /// Bytes per element of its dequantized copies (both, in backward,
    /// when the load and compute dtypes differ).
    dequant_bytes: u128,
    /// Bytes per element of the compute dtype.
    compute: u128,
}

/// The base's linear layers under bitsandbytes: each decoder layer's
/// `nn.Linear` weights (not the embedding, the output head, norms or
/// biases, which transformers leaves unquantized).
///
/// Source: bitsandbytes 0.50 `nn/modules.py` (`Params4bit`, `Int8Params`),
/// `functional.py` (`quantize_4bit`: blocks of 64, fp32 absmax; double
/// quantization: absmax as uint8 in blocks of 256 with an fp32 nested
/// absmax, an fp32 offset and a 256-entry fp32 code per weight; the 4-bit
/// code table, 16 fp32), transformers' `quantizers/base.py` (what is left
/// unquantized); measured in `tests/fixtures/quant_rows.jsonl` (static
/// bytes exact). The dequantized copy exists only around its matmul: in
/// the compute dtype (4-bit), or, for int8's backward, in the stream's
/// dtype (`CB.to(A.dtype)`).
fn quantized(a: &Architecture, t: &crate::scenario::Training) -> Quantized {
    let four_bit = match t.quant {
        Quant::None => return Quantized::default(),
        Quant::Nf4 | Quant::Fp4 => true,
        Quant::Int8 => false,
    };
    // The compute dtype (bnb_4bit_compute_dtype) and the load dtype the
    // weights were quantized from: backward dequantizes in the load dtype,
    // then casts to the compute dtype, both alive at once when they differ
    // (`MatMul4Bit.backward`: `dequantize_4bit(B).to(grad.dtype)`).
    let compute = if t.compute_fp32 || t.dtype == Dtype::Fp32 {
        4
    } else {
        2
    };
    let load = if t.dtype == Dtype::Fp32 { 4 } else { 2 };
    let mut q = Quantized {
        compute: if four_bit {
            compute
        } else {
            u128::from(Mode::of_run(t).residual())
        },
        dequant_bytes: if four_bit {
            if compute == load {
                compute
            } else {
                compute + load
            }
        } else {
            u128::from(Mode::of_run(t).residual())
        },
        ..Quantized::default()
    };
    a.for_each_tensor(|at, tensor| {
        if !matches!(at, crate::arch::Place::Layers { .. }) || tensor.module.is_none() {
            return;
        }
        let n = at.copies();
        let (rows, cols) = (u128::from(tensor.rows), u128::from(tensor.cols));
        let elems = u128::from(tensor.stack) * rows * cols;
        let (packed, state) = if four_bit {
            let nb = elems.div_ceil(64);
            let state = if t.double_quant {
                nb + 4 * nb.div_ceil(256) + 4 + 1024 + 64
            } else {
                4 * nb + 64
            };
            (elems.div_ceil(2), state)
        } else {
            (elems, 4 * rows)
        };
        q.elems += n * elems;
        q.packed += n * packed;
        q.state += n * state;
        q.largest = q.largest.max(elems);
    });
    q
}

/// `B × S × …` factors of a per-token quantity.
fn per_token(b: u128, s: u128, rest: &[(u128, U)]) -> Term {
    rest.iter().fold(
        Term::ZERO.times(b, U::Batch).times(s, U::Seq),
        |t, &(v, u)| t.times(v, u),
    )
}

/// The terms of the estimate, before they are laid out in phases.
pub fn breakdown(s: &Scenario) -> Result<Breakdown, EstimateError> {
    let a = s.arch.ok_or(EstimateError::NeedsArchitecture)?;
    let t = &s.train;
    let c = Ctx::new(&a, t);
    let stats = a.stats();
    let n = stats.params;
    let l = u128::from(a.layers);
    let (h, v) = (u128::from(a.hidden), u128::from(a.vocab));
    let (bt, seq) = (u128::from(t.batch.get()), u128::from(t.seq.get()));
    let gpus = s.parallel.gpus.get();
    let zero = s.parallel.zero.get();
    let lora = t.lora();
    let lc = lora.map(|x| lora_count(&a, &x)).unwrap_or_default();
    let mut terms = Terms::default();
    let mut put = |id: T, term: Term| terms.set(id, term);

    // Parameters.
    let pb = u128::from(t.dtype.param_bytes());
    let on3 = zero >= 3;
    let q = quantized(&a, t);
    // Unquantized weights: in the load dtype (half but for fp32 runs), or
    // fp32 once prepared for k-bit training.
    let plain_bytes = match (t.quant, t.kbit_prep, t.dtype) {
        (Quant::None, _, _) => pb,
        (_, true, _) | (_, false, Dtype::Fp32) => 4,
        (_, false, _) => 2,
    };
    put(
        T::Weights,
        Term::of(&[(n - q.elems, U::Params), (plain_bytes, U::BytesEach)]).split(gpus, on3),
    );
    put(
        T::QuantWeights,
        Term::of(&[(q.packed, U::Bytes)]).split(gpus, on3),
    );
    put(
        T::QuantState,
        Term::of(&[(q.state, U::Bytes)]).split(gpus, on3),
    );
    put(
        T::Dequantized,
        Term::of(&[(q.largest, U::Elements), (q.dequant_bytes, U::BytesEach)]),
    );
    // DoRA's per-layer transient (see `ledger::Ledger::dora`), the largest
    // of the layer kinds'.
    let dora_transient = kinds_transient(&c, &a);
    put(T::DoraTransient, Term::of(&[(dora_transient, U::Bytes)]));
    // In forward, 4-bit weights are dequantized to the compute dtype (the
    // CUDA fallback past the fused kernel's few tokens, as on the CPU);
    // LLM.int8 on CUDA multiplies in int8 (`MatMul8bitLt`: no dequantized
    // weight), on the CPU dequantizes to the input's dtype (`MatMul8bitFp`).
    let int8_cuda = t.quant == Quant::Int8 && t.cuda_like;
    put(
        T::DequantizedFwd,
        Term::of(&[
            (if int8_cuda { 0 } else { q.largest }, U::Elements),
            (q.compute, U::BytesEach),
        ]),
    );
    put(
        T::Buffers,
        Term::of(&[(u128::from(a.buffer_bytes(t.dtype.param_bytes())), U::Bytes)]).split(gpus, on3),
    );
    put(
        T::LoraAdapters,
        Term::of(&[(lc.params, U::Params), (4, U::BytesEach)]).split(gpus, on3),
    );

    // What trains, and in which dtype its gradients and state are.
    let (trainable, grad_bytes, state_dtype, tensors, largest) = match lora {
        None => (
            n,
            pb,
            if t.dtype == Dtype::MixedBf16 { 4 } else { pb },
            stats.tensors,
            stats.largest_tensor,
        ),
        // Adapters are fp32 (peft's autocast_adapter_dtype).
        Some(_) => (lc.params, 4, 4, lc.tensors, lc.largest),
    };
    if on3 {
        // The largest module is gathered whole, with its gradient.
        put(
            T::ZeroGathered,
            Term::of(&[
                (stats.largest_module, U::Params),
                (pb + grad_bytes, U::BytesEach),
            ]),
        );
    }

    // Gradients: partitioned from stage 2; DDP (no ZeRO, several GPUs) keeps
    // a flat bucket copy (gradient_as_bucket_view=False, the default).
    // Offloading the optimizer (ZeRO-Offload): each gradient is reduced in
    // a bucket and copied to the host's fp32 partition, so the GPU holds
    // about two buckets (the one filling, the one being copied). Source:
    // DeepSpeed `stage_1_and_2.py` (`cpu_offload`: `param.grad = None` after
    // the copy; `reduce_bucket_size`, which the HF Trainer's "auto" sets to
    // hidden²). Not measured here.
    let offload = s.parallel.offload;
    let grads_on_gpu = match offload {
        Offload::None => {
            Term::of(&[(trainable, U::Params), (grad_bytes, U::BytesEach)]).split(gpus, zero >= 2)
        }
        Offload::Optimizer | Offload::Params => Term::of(&[
            (2, U::Copies),
            ((h * h).min(trainable), U::Elements),
            (grad_bytes, U::BytesEach),
        ]),
    };
    put(T::Grads, grads_on_gpu);
    let host_share = |bytes_each: u128| {
        Term::of(&[(trainable, U::Params), (bytes_each, U::BytesEach)]).split(gpus, true)
    };
    let mut host = TermSet::EMPTY;
    if offload != Offload::None {
        // DeepSpeed's CPU optimizer: fp32 master weights (unless the
        // weights are fp32 already), fp32 moments and fp32 gradients, each
        // GPU's partition. Source: ZeRO-Offload (Ren et al. 2021, §4: 12
        // bytes per parameter of fp32 state plus the gradients on the CPU).
        let moments = match t.optim {
            Optimizer::Lion => 1,
            Optimizer::AdamW
            | Optimizer::AdamWForLoop
            | Optimizer::AdamWFused
            | Optimizer::AdamW8bit
            | Optimizer::PagedAdamW
            | Optimizer::PagedAdamW8bit
            | Optimizer::Adafactor
            | Optimizer::SgdMomentum
            | Optimizer::Sgd => 2,
        };
        if grad_bytes < 4 {
            put(T::HostMaster, host_share(4));
        }
        put(
            T::HostMoments,
            Term::of(&[
                (moments, U::Copies),
                (trainable, U::Params),
                (4, U::BytesEach),
            ])
            .split(gpus, true),
        );
        put(T::HostGrads, host_share(4));
        host = TermSet::of(&[T::HostMaster, T::HostMoments, T::HostGrads]);
    }
    if offload == Offload::Params {
        // ZeRO-3 `offload_param`: the weights live in host memory; the GPU
        // gathers a module at a time (`ZeroGathered`).
        host = host.with(T::Weights);
    }
    // What layer 0's backward meets already made: every gradient but its
    // own and the embedding's (a tied head's gradient waits, unsummed, in
    // `HeadGrad`).
    let first_layer = {
        let mut n = 0u128;
        a.for_each_first_layer_tensor(|t| {
            n += match lora {
                None => t.elems(),
                Some(lo) => {
                    if t.module().is_some_and(|m| lo.adapts(m)) {
                        t.lora_rank(lo.r) * (u128::from(t.cols) + u128::from(t.rows))
                            + if lo.dora { u128::from(t.rows) } else { 0 }
                    } else {
                        0
                    }
                }
            }
        });
        n + if lora.is_none() { stats.embedding } else { 0 }
    };
    put(
        T::GradsButFirst,
        match offload {
            Offload::None => Term::of(&[
                (trainable.saturating_sub(first_layer), U::Params),
                (grad_bytes, U::BytesEach),
            ])
            .split(gpus, zero >= 2),
            // Copied to host bucket by bucket, as above.
            Offload::Optimizer | Offload::Params => grads_on_gpu,
        },
    );
    if gpus > 1 && zero == 0 {
        put(
            T::DdpBuckets,
            Term::of(&[(trainable, U::Params), (grad_bytes, U::BytesEach)]),
        );
    }

    optimizer_terms(
        s,
        &a,
        &lc,
        trainable,
        tensors,
        largest,
        state_dtype,
        &mut put,
    );
    if offload != Offload::None {
        // The step runs on the CPU: the GPU makes no state of its own.
        for id in [
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
        ] {
            put(id, Term::ZERO);
        }
    }

    // Activations, per kind of layer (dense, MoE). Layer 0 (of the first
    // kind) differs only when its input needs no gradient (the frozen
    // embedding under LoRA).
    let kinds = a.layer_kinds();
    // A kind with no layers (the MoE kind of a dense model) adds nothing:
    // every use below weighs a ledger by its count.
    let ledgers = kinds.map(|(kind, count)| {
        let saved = if count > 0 {
            ledger::layer(&c, kind, true)
        } else {
            ledger::Saved::default()
        };
        (saved, u128::from(count))
    });
    let first_kind = if kinds[0].1 > 0 { 0 } else { 1 };
    let layer0 = if c.full {
        ledgers[first_kind].0
    } else {
        ledger::layer(&c, kinds[first_kind].0, false)
    };
    let layer0_differs = layer0 != ledgers[first_kind].0;
    // (ledger, count) of each kind, without layer 0 when it differs.
    let mut groups = ledgers;
    if layer0_differs {
        groups[first_kind].1 -= 1;
    }
    let outer = ledger::outer(&c);
    let res = u128::from(c.mode.residual());
    let key = |x: &Saved| u128::from(x.per_token_key);
    let tok = |x: &Saved| u128::from(x.token_bytes());
    if t.grad_ckpt.on() {
        // Non-reentrant checkpointing keeps each layer's input; everything
        // inside is dropped, including the layer's saved weight copies
        // (still cached by autocast until it exits).
        put(
            T::CkptInputs,
            per_token(
                bt,
                seq,
                &[(l, U::Layers), (h, U::Elements), (res, U::BytesEach)],
            ),
        );
        // Reentrant checkpointing runs the forward without grad: nothing
        // is held; then the recomputed layer's output lives through its
        // backward (measured in quant_rows.jsonl: T·h·stream bytes).
        if t.grad_ckpt == Ckpt::Reentrant {
            put(
                T::RecomputeOutput,
                per_token(bt, seq, &[(h, U::Elements), (res, U::BytesEach)]),
            );
        } else {
            put(
                T::QuantInputs,
                per_token(
                    bt,
                    seq,
                    &[
                        (l, U::Layers),
                        (u128::from(ledgers[first_kind].0.escaping), U::BytesEach),
                    ],
                ),
            );
        }
        if t.grad_ckpt == Ckpt::Offload {
            // `save_on_cpu`: each kept input is copied to host memory when
            // saved and back when backward needs it, one at a time.
            // Source: torch.autograd.graph.save_on_cpu (PyTorch 2.x).
            put(
                T::CkptInFlight,
                per_token(bt, seq, &[(h, U::Elements), (res, U::BytesEach)]),
            );
        }
    } else {
        if layer0_differs {
            put(
                T::LayerFirst,
                per_token(bt, seq, &[(tok(&layer0), U::BytesEach)]),
            );
            put(
                T::ScoresFirst,
                per_token(
                    bt,
                    seq,
                    &[(seq, U::KeyPositions), (key(&layer0), U::BytesEach)],
                ),
            );
        }
        for ((x, n), (ids, scores)) in groups
            .iter()
            .zip([(T::Layers, T::Scores), (T::MoeLayers, T::MoeScores)])
        {
            put(
                ids,
                per_token(bt, seq, &[(*n, U::Layers), (tok(x), U::BytesEach)]),
            );
            put(
                scores,
                per_token(
                    bt,
                    seq,
                    &[
                        (*n, U::Layers),
                        (seq, U::KeyPositions),
                        (key(x), U::BytesEach),
                    ],
                ),
            );
        }
    }
    // Sliding-window layers under SDPA: once the sequence reaches the
    // window transformers passes a mask instead of `is_causal`, and each
    // such layer's SDPA keeps its own copy in the compute dtype (b × s²).
    // Source: masking_utils `_ignore_causal_mask_sdpa` (transformers 5.23);
    // measured on Gemma 3 (30 B × b × s² for 15 sliding layers in bf16).
    let masked = t.attn == crate::scenario::Attn::Sdpa
        && a.sliding_window > 0
        && t.seq.get() >= a.sliding_window;
    let masks = if masked {
        u128::from(a.sliding_layers)
    } else {
        0
    };
    let mask_dt = u128::from(c.mode.act());
    if !t.grad_ckpt.on() {
        put(
            T::SlidingMasks,
            per_token(
                bt,
                seq,
                &[
                    (masks, U::Layers),
                    (seq, U::KeyPositions),
                    (mask_dt, U::BytesEach),
                ],
            ),
        );
    }
    // The load-balancing loss (`output_router_logits`): the model's output
    // keeps every MoE layer's router logits (tokens × experts, in the
    // router's dtype) until the loss is done with them, through backward.
    // Source: transformers 5.23 `load_balancing_loss_func` and
    // `MoeCausalLMOutputWithPast.router_logits`; measured on tiny Mixtral
    // and Qwen3-MoE configs (bf16, amp, fp32: L·B·S·E·bytes, plus 4·E bytes
    // of per-expert fp32 means left out here).
    if t.aux_loss {
        put(
            T::RouterLogits,
            per_token(
                bt,
                seq,
                &[
                    (u128::from(a.layer_kinds()[1].1), U::Layers),
                    (u128::from(a.experts), U::Experts),
                    (u128::from(c.mode.act()), U::BytesEach),
                ],
            ),
        );
    }
    // Autocast caches the bf16 copies of trainable weights until it exits;
    // copies of frozen weights live only while autograd saves them, so
    // checkpointing drops them with the layer.
    let wc = |x: &Saved| u128::from(x.weight_copies);
    let wcf = |x: &Saved| u128::from(x.weight_copies_uncached);
    let wct = |x: &Saved| u128::from(x.weight_copies_transient);
    let per_layers = |f: &dyn Fn(&Saved) -> u128| {
        groups.iter().map(|(x, n)| n * f(x)).sum::<u128>()
            + if layer0_differs { f(&layer0) } else { 0 }
    };
    let (saved_copies, transient_copies) = if t.grad_ckpt.on() {
        (0, per_layers(&wc) + per_layers(&wct))
    } else {
        (per_layers(&wc) + per_layers(&wcf), per_layers(&wct))
    };
    // The layer backward recomputes under checkpointing: the largest kind.
    let layer = ledgers
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(x, _)| *x)
        .max_by_key(|x| x.bytes(bt * seq, seq) + u128::from(x.weight_copies))
        .unwrap_or_default();
    let copies = |bytes: u128| Term::of(&[(bytes / 2, U::Elements), (2, U::BytesEach)]);
    put(
        T::CopiesSaved,
        copies(saved_copies + wc(&outer.saved) + wcf(&outer.saved)),
    );
    put(
        T::CopiesTransient,
        copies(transient_copies + wct(&outer.saved)),
    );
    put(
        T::Outer,
        per_token(bt, seq, &[(tok(&outer.saved), U::BytesEach)]),
    );
    put(
        T::PositionTables,
        Term::of(&[
            (seq, U::Seq),
            (u128::from(outer.per_position), U::BytesEach),
        ]),
    );
    put(T::Labels, per_token(bt, seq, &[(8, U::BytesEach)]));
    put(T::Inputs, per_token(bt, seq, &[(16, U::BytesEach)]));
    // While the loss is computed: the labels padded by one position, and
    // the last hidden state when nothing saved it.
    put(
        T::PaddedLabels,
        Term::of(&[(bt, U::Batch), (seq + 1, U::Seq), (8, U::BytesEach)]),
    );
    put(
        T::LastHidden,
        per_token(
            bt,
            seq,
            &[(u128::from(outer.final_hidden_transient), U::BytesEach)],
        ),
    );

    // Logits: HF computes them in the compute dtype, upcasts to fp32, and
    // cross-entropy saves an fp32 log-softmax.
    let al = u128::from(c.mode.act());
    let logits = |copies: u128, bytes: u128| {
        let mut f = vec![
            (bt, U::Batch),
            (seq, U::Seq),
            (v, U::Vocab),
            (bytes, U::BytesEach),
        ];
        if copies != 1 {
            f.insert(0, (copies, U::Copies));
        }
        Term::of(&f)
    };
    put(T::LogitsOut, logits(1, al));
    if al == 2 {
        put(T::LogitsUpcast, logits(1, 4));
    }
    put(T::LogSoftmax, logits(1, 4));
    if a.family.spec().final_softcap {
        // Gemma 2: logits / c, tanh (kept for backward), × c.
        put(T::LogitsSoftcap, logits(1, al));
    }
    if t.keep_outputs {
        put(T::LogitsKept, logits(1, al));
    }
    // nll_loss's gradient and log_softmax's gradient next to the saved
    // log-softmax: three fp32 copies at once.
    put(T::LogitsGrads, logits(2, 4));
    put(T::LogitsGradOut, logits(1, al));

    // The head's backward: the gradient of the hidden state, and of the head
    // weight (and, under autocast, of its bf16 copy).
    put(
        T::GradHidden,
        per_token(bt, seq, &[(h, U::Elements), (al, U::BytesEach)]),
    );
    if c.full {
        put(
            T::HeadGrad,
            Term::of(&[(v * h, U::Params), (grad_bytes, U::BytesEach)]),
        );
        if c.mode == Mode::Amp {
            put(
                T::HeadGradCopy,
                Term::of(&[(v * h, U::Params), (2, U::BytesEach)]),
            );
        }
    }
    // The end of backward: the embedding's gradient. Tied, it meets the
    // head's gradient (out-of-place sum: two more V×h); untied, the gradient
    // of the embedding output is still alive.
    if c.full && a.tied {
        put(
            T::TiedGradSum,
            Term::of(&[
                (2, U::Copies),
                (v * h, U::Params),
                (grad_bytes, U::BytesEach),
            ]),
        );
    } else {
        put(
            T::EmbeddingGrad,
            per_token(bt, seq, &[(h, U::Elements), (res, U::BytesEach)]),
        );
    }
    if t.grad_ckpt.on() {
        // Backward recomputes one layer's forward at a time.
        put(
            T::Recompute,
            per_token(bt, seq, &[(tok(&layer), U::BytesEach)]),
        );
        // The forward under checkpointing saves nothing: a gated MLP's
        // highest moment holds the attention block's output and its norm
        // (h each), act(gate), up and their product (f each); an MoE
        // layer's, the k routed copies of the token (h) with the experts'
        // gate_up, act and product (4·moe_ffn), besides the two h. GPT-2's
        // MLP keeps its whole recompute term (its GELU's temporaries).
        // Source: LlamaDecoderLayer / LlamaMLP.forward (Python references);
        // measured with vocabularies too small for the logits to dominate
        // (llama-20m, tiny Mixtral and Qwen3-MoE at vocab 64) and on
        // quantized Mistral layers (`quant_rows.jsonl`).
        let (act, resid) = (u128::from(c.mode.act()), u128::from(c.mode.residual()));
        // Under autocast grouped_mm runs the experts in fp32.
        let expert = if c.mode == Mode::Amp { 4 } else { act };
        let (f, moe_f, k) = (
            u128::from(a.ffn),
            u128::from(a.moe_ffn),
            u128::from(a.experts_per_token),
        );
        let per_tok = match (a.layer_kinds()[1].1 > 0, a.family.spec().mlp) {
            (true, _) => 2 * h * resid + k * (h + 4 * moe_f) * expert,
            (false, Mlp::Gated | Mlp::GatedFused) => 2 * h * resid + 3 * f * act,
            (false, Mlp::Plain) => 0,
        };
        if per_tok > 0 {
            put(
                T::LayerForward,
                per_token(bt, seq, &[(per_tok, U::BytesEach)]),
            );
        }
        // A quantized gated MLP peaks at up_proj's matmul instead: the two
        // h, act(gate) (f), the input cast to the compute dtype (h) and the
        // matmul's output (f) in it, beside the dequantized weight.
        // Measured on Mistral-7B layers (quant_rows.jsonl, M-qlora).
        if q.elems > 0 && a.layer_kinds()[1].1 == 0 {
            // LLM.int8 on CUDA instead: the input in fp16 and int8 (3 bytes
            // per element), an int32 product and its fp16 dequantization
            // (6 per output). Source: bitsandbytes 0.50
            // `backends/cuda/ops.py` (int8_vectorwise_quant, int8_linear_matmul,
            // int8_mm_dequant); not measured (no GPU).
            let io = if int8_cuda {
                3 * h + 6 * f
            } else {
                (h + f) * q.compute
            };
            put(
                T::LayerForwardQuant,
                per_token(bt, seq, &[((2 * h + f) * resid + io, U::BytesEach)]),
            );
        }
        put(
            T::RecomputeScores,
            per_token(
                bt,
                seq,
                &[(seq, U::KeyPositions), (key(&layer), U::BytesEach)],
            ),
        );
        put(T::RecomputeCopies, copies(wc(&layer) + wcf(&layer)));
        put(
            T::RecomputeMask,
            per_token(
                bt,
                seq,
                &[
                    (masks.min(1), U::Layers),
                    (seq, U::KeyPositions),
                    (mask_dt, U::BytesEach),
                ],
            ),
        );
    }
    // LoRA on fused experts (peft's ParamWrapper): backward through a
    // merged weight makes its full-size gradient before reducing it to the
    // adapters' (down_proj first, the first the layer's backward meets).
    if let (Some(moe), Some(lo)) = (a.family.spec().moe, lora) {
        let (e, hh, mf) = (
            u128::from(a.experts),
            u128::from(a.hidden),
            u128::from(a.moe_ffn),
        );
        let merged = if !moe.peft_experts || a.layer_kinds()[1].1 == 0 {
            0
        } else if lo.adapts(a.family.module(crate::arch::ModuleName::ExpertsDown)) {
            e * hh * mf
        } else if lo.adapts(a.family.module(crate::arch::ModuleName::ExpertsGateUp)) {
            e * 2 * mf * hh
        } else {
            0
        };
        put(
            T::MergedGrad,
            Term::of(&[(merged, U::Elements), (pb, U::BytesEach)]),
        );
    }
    put(
        T::Dataset,
        Term::of(&[(u128::from(s.view.dataset_mib) << 20, U::Bytes)]),
    );

    if t.grad_ckpt == Ckpt::Offload {
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
        terms,
        layer,
        outer: outer.saved,
        params: n + lc.params,
        trainable,
        recompute: t.grad_ckpt.on(),
        amp_head: c.full && c.mode == Mode::Amp,
        tied_head: c.full && a.tied,
    })
}

/// Optimizer state and the step's temporaries.
///
/// Sources: PyTorch `torch/optim/adamw.py` (`_multi_tensor_adamw` keeps one
/// parameter-sized `exp_avg_sq_sqrt` list; `_single_tensor_adamw` computes
/// `(exp_avg_sq.sqrt() / bias_correction2_sqrt)` on one tensor at a time:
/// two temporaries of the largest tensor; `_fused_adamw` none; one 4-byte
/// `step` per tensor) and `sgd.py` (`momentum_buffer = clone(grad)`), as
/// measured in the ground truth (20 / 10 bytes per parameter at the step in
/// fp32 / bf16). bitsandbytes `AdamW8bit`: two uint8 moments with one fp32
/// absmax per 256-element block, fused update. Lion (`lion-pytorch`): one
/// moment; its update `exp_avg.clone().mul_(β1).add(grad, ...)` briefly
/// holds two copies of a tensor. transformers `Adafactor` (relative step,
/// no first moment): `grad ** 2 + eps`, the approximated update and
/// `-update` are full-size fp32 temporaries (two at once), plus fp32 copies
/// of a half-precision parameter and its gradient, and the row and column
/// means of the update. DeepSpeed-style `mixed_bf16`: fp32 master weights
/// and fp32 gradients with the optimizer.
#[allow(clippy::too_many_arguments)]
fn optimizer_terms(
    s: &Scenario,
    a: &Architecture,
    lc: &LoraCount,
    elems: u128,
    tensors: u128,
    largest: u128,
    sb: u128,
    put: &mut impl FnMut(T, Term),
) {
    let t = &s.train;
    let (gpus, on) = (s.parallel.gpus.get(), s.parallel.zero.get() >= 1);
    let lora = t.lora_r.is_some();
    let mut set = |id: T, f: &[(u128, U)]| put(id, Term::of(f).split(gpus, on));
    let moments = |k: u128| [(k, U::Copies), (elems, U::Params), (sb, U::BytesEach)];
    let largest2 = [(2, U::Copies), (largest, U::Elements), (sb, U::BytesEach)];
    // The step's temporaries (the same in every step but Adafactor's).
    let mut temps = |f: &[(u128, U)]| {
        set(T::Temps, f);
        set(T::TempsFirstStep, f);
    };
    match t.optim {
        Optimizer::AdamW => temps(&[(elems, U::Params), (sb, U::BytesEach)]),
        Optimizer::AdamWForLoop | Optimizer::Lion => temps(&largest2),
        Optimizer::AdamWFused
        | Optimizer::AdamW8bit
        | Optimizer::PagedAdamW
        | Optimizer::PagedAdamW8bit
        | Optimizer::Adafactor
        | Optimizer::SgdMomentum
        | Optimizer::Sgd => {}
    }
    match t.optim {
        Optimizer::AdamW | Optimizer::AdamWForLoop | Optimizer::AdamWFused => {
            set(T::Moments, &moments(2));
            set(T::StepCounters, &[(tensors, U::Tensors), (4, U::BytesEach)]);
        }
        // bitsandbytes' 32-bit state is fp32 whatever the parameter's dtype
        // (`Optimizer2State.init_state`, `optim_bits=32`).
        Optimizer::PagedAdamW => {
            set(
                T::Moments,
                &[(2, U::Copies), (elems, U::Params), (4, U::BytesEach)],
            );
        }
        Optimizer::AdamW8bit | Optimizer::PagedAdamW8bit => {
            set(
                T::Moments,
                &[(2, U::Copies), (elems, U::Params), (1, U::BytesEach)],
            );
            set(
                T::Absmax,
                &[
                    (2, U::Copies),
                    (elems.div_ceil(256), U::Elements),
                    (4, U::BytesEach),
                ],
            );
        }
        Optimizer::Lion | Optimizer::SgdMomentum => set(T::Moments, &moments(1)),
        Optimizer::Sgd => {}
        Optimizer::Adafactor => {
            // fp32 update and its negation; for half weights also fp32
            // copies of the weight and its gradient.
            let copies = if t.dtype.param_bytes() == 2 && !lora {
                4
            } else {
                2
            };
            let (total, at_peak, peak_tensor, big) = if lora {
                // Adapters: all of similar size; the state is whole by the
                // last ones.
                let f = (lc.factored, lc.tensors);
                let big = (lc.largest, 0);
                (f, f, big, big)
            } else {
                let af = adafactor(a, copies);
                (af.total, af.at_peak, af.peak_tensor, af.largest)
            };
            set(T::Factored, &[(total.0, U::Elements), (4, U::BytesEach)]);
            set(T::RmsScalars, &[(total.1, U::Tensors), (4, U::BytesEach)]);
            set(
                T::FactoredSoFar,
                &[(at_peak.0, U::Elements), (4, U::BytesEach)],
            );
            set(T::RmsSoFar, &[(at_peak.1, U::Tensors), (4, U::BytesEach)]);
            let temps = |(e, f)| {
                [
                    (adafactor_temps(copies, e, f), U::Elements),
                    (4, U::BytesEach),
                ]
            };
            set(T::Temps, &temps(big));
            set(T::TempsFirstStep, &temps(peak_tensor));
        }
    }
    if t.dtype == Dtype::MixedBf16 && !lora {
        // fp32 master weights and fp32 gradients live with the optimizer
        // (LoRA's adapters are fp32 already).
        set(T::Master, &[(elems, U::Params), (8, U::BytesEach)]);
    }
}

/// The parameters, as created at init.
const PARAMS: TermSet = TermSet::of(&[
    T::Weights,
    T::QuantWeights,
    T::QuantState,
    T::Buffers,
    T::LoraAdapters,
    T::ZeroGathered,
]);
/// The optimizer state once complete.
const STATE: TermSet = TermSet::of(&[
    T::Moments,
    T::StepCounters,
    T::Absmax,
    T::Factored,
    T::RmsScalars,
    T::Master,
]);
/// The optimizer state at the first step's peak (Adafactor's is partial).
const STATE_FIRST_STEP: TermSet = TermSet::of(&[
    T::Moments,
    T::StepCounters,
    T::Absmax,
    T::FactoredSoFar,
    T::RmsSoFar,
    T::Master,
]);
/// What the layers and the loop keep for backward.
const SAVED: TermSet = TermSet::of(&[
    T::Labels,
    T::LayerFirst,
    T::ScoresFirst,
    T::Layers,
    T::Scores,
    T::MoeLayers,
    T::MoeScores,
    T::SlidingMasks,
    T::RouterLogits,
    T::CkptInputs,
    T::CkptInFlight,
    T::QuantInputs,
    T::Outer,
    T::PositionTables,
]);

/// The phases of init and two iterations (each with a later micro-step
/// when gradients accumulate).
fn build_phases(
    p: &Breakdown,
    accumulate: bool,
    overhead: &crate::scenario::Overhead,
) -> Result<Vec<PhaseReport>, EstimateError> {
    let ctx = u128::from(overhead.cuda_ctx_mib) << 20;
    let pct = u128::from(overhead.reserve_pct);
    let terms = &p.terms;
    // What the GPU holds of a moment: everything but the host's terms.
    let gpu = |set: TermSet| set.without(p.host);
    let running = std::cell::RefCell::new(Running::new(terms));
    let total = |set: TermSet| running.borrow_mut().total(gpu(set));
    // Every iteration holds the parameters, the state so far, DDP's buckets
    // (allocated when it wraps the model), the inputs and retained data.
    let base = |state: TermSet| {
        PARAMS
            .union(state)
            .union(TermSet::of(&[T::DdpBuckets, T::Inputs, T::Dataset]))
    };
    // (iteration, micro step, phase, peak-at, peak, end)
    let mut raw: Vec<(u32, u32, Phase, Moment, TermSet, TermSet)> = Vec::with_capacity(13);
    raw.push((0, 1, Phase::Init, Moment::End, PARAMS, PARAMS));
    for iteration in [1u32, 2] {
        let state = if iteration == 1 {
            TermSet::EMPTY
        } else {
            STATE
        };
        let micro_steps: &[u32] = if accumulate { &[1, 2] } else { &[1] };
        for &micro in micro_steps {
            // Gradients from earlier micro-steps stay.
            let start = if micro > 1 {
                base(state).with(T::Grads)
            } else {
                base(state)
            };
            let end_fwd = start.union(SAVED).union(TermSet::of(&[
                T::CopiesSaved,
                T::LogSoftmax,
                T::LogitsKept,
                T::LogitsSoftcap,
            ]));
            // The loss: logits, their fp32 upcast and the log-softmax at once.
            let peak_fwd = end_fwd
                .without(TermSet::of(&[T::LogitsKept]))
                .union(TermSet::of(&[
                    T::PaddedLabels,
                    T::LastHidden,
                    T::CopiesTransient,
                    T::LogitsOut,
                    T::LogitsUpcast,
                ]));
            // Under checkpointing, the last layer's own forward: everything
            // it creates lives until it ends (merged weights included).
            let peak_fwd = if p.recompute {
                let around = start.union(SAVED).union(TermSet::of(&[
                    T::CopiesTransient,
                    T::RecomputeScores,
                    T::RecomputeCopies,
                    T::RecomputeMask,
                ]));
                let mlp = if terms.bytes(T::LayerForward) > 0 {
                    around.with(T::LayerForward)
                } else {
                    around.with(T::Recompute)
                };
                let matmul = around.union(TermSet::of(&[T::LayerForwardQuant, T::DequantizedFwd]));
                let dora = around.with(T::DoraTransient);
                [mlp, matmul, dora].into_iter().fold(peak_fwd, |best, x| {
                    if total(x) > total(best) {
                        x
                    } else {
                        best
                    }
                })
            } else {
                // The last layer's forward: DoRA's transient on top of what
                // every layer saved.
                let layer = start.union(SAVED).union(TermSet::of(&[
                    T::CopiesSaved,
                    T::CopiesTransient,
                    T::DoraTransient,
                ]));
                if total(layer) > total(peak_fwd) {
                    layer
                } else {
                    peak_fwd
                }
            };
            let logits_moment = end_fwd.with(T::LogitsGrads);
            // The head's backward: its matmul makes the weight's gradient
            // (of the bf16 copy under autocast) while the logits' gradient
            // is alive; under autocast the copy's gradient then becomes the
            // fp32 one, once the logits' gradient is freed.
            let head = start.union(SAVED).union(TermSet::of(&[
                T::GradHidden,
                T::CopiesSaved,
                T::LogitsKept,
            ]));
            let head_moment = if p.amp_head {
                head.union(TermSet::of(&[T::LogitsGradOut, T::HeadGradCopy]))
            } else {
                head.union(TermSet::of(&[T::LogitsGradOut, T::HeadGrad]))
            };
            let head_cast = head.union(TermSet::of(&[T::HeadGradCopy, T::HeadGrad]));
            let grads_end = start.with(T::Grads);
            let end_moment = grads_end.union(TermSet::of(&[T::TiedGradSum, T::EmbeddingGrad]));
            // Under checkpointing, layer 0's recompute: every other layer's
            // gradients are made by then (with accumulation, all of them
            // from earlier micro-steps are in `start`).
            let recompute_first = p.recompute.then(|| {
                let made = if micro > 1 {
                    TermSet::EMPTY
                } else {
                    TermSet::of(&[T::GradsButFirst])
                };
                (
                    Moment::End,
                    start
                        .union(SAVED)
                        .union(made)
                        .union(TermSet::of(&[
                            T::Recompute,
                            T::RecomputeScores,
                            T::RecomputeCopies,
                            T::RecomputeMask,
                            T::GradHidden,
                        ]))
                        .union(if p.tied_head {
                            TermSet::of(&[T::HeadGrad])
                        } else {
                            TermSet::EMPTY
                        }),
                )
            });
            let recompute = p.recompute.then(|| {
                (
                    Moment::Middle,
                    start.union(SAVED).union(TermSet::of(&[
                        T::Recompute,
                        T::RecomputeOutput,
                        T::RecomputeScores,
                        T::RecomputeCopies,
                        T::RecomputeMask,
                        T::GradHidden,
                        T::HeadGrad,
                        T::HeadGradCopy,
                        T::MergedGrad,
                        T::Dequantized,
                        T::DoraTransient,
                    ])),
                )
            });
            // The last layer's backward, once the head's is done: every
            // saved tensor, the hidden state's gradient and the layer's
            // transient gradients (a merged LoRA expert weight's).
            let layer_moment = (
                Moment::Start,
                start.union(SAVED).union(TermSet::of(&[
                    T::CopiesSaved,
                    T::GradHidden,
                    T::MergedGrad,
                    T::Dequantized,
                    T::DoraTransient,
                ])),
            );
            // The highest of the moments that can hold backward's peak (the
            // first of equals, in time order).
            let (at, peak_bwd, _) = [
                Some((Moment::Start, head_moment)),
                p.amp_head.then_some((Moment::Start, head_cast)),
                Some(layer_moment),
                Some((Moment::End, end_moment)),
                recompute,
                recompute_first,
            ]
            .into_iter()
            .flatten()
            .fold(
                (Moment::Start, logits_moment, total(logits_moment)),
                |best, (m, x)| {
                    let bytes = total(x);
                    if bytes > best.2 {
                        (m, x, bytes)
                    } else {
                        best
                    }
                },
            );
            raw.push((
                iteration,
                micro,
                Phase::Forward,
                Moment::End,
                peak_fwd,
                end_fwd,
            ));
            raw.push((iteration, micro, Phase::Backward, at, peak_bwd, grads_end));
        }
        let after = base(STATE).with(T::Grads);
        let step_peak = if iteration == 1 {
            base(STATE_FIRST_STEP).union(TermSet::of(&[T::Grads, T::TempsFirstStep]))
        } else {
            base(STATE).union(TermSet::of(&[T::Grads, T::Temps]))
        };
        raw.push((
            iteration,
            1,
            Phase::OptimizerStep,
            Moment::Middle,
            step_peak,
            after,
        ));
        raw.push((
            iteration,
            1,
            Phase::ZeroGrad,
            Moment::Start,
            after,
            base(STATE),
        ));
    }
    // Overhead: the CUDA context from the start, and the allocator's reserve
    // on top of the highest allocation so far (reserved memory is not given
    // back without empty_cache()).
    let mut high = 0u128;
    let mut out = Vec::with_capacity(raw.len());
    for (iteration, micro, phase, at, peak, end) in raw {
        let (peak, end) = (gpu(peak), gpu(end));
        let mut running = running.borrow_mut();
        let peak_tally = *running.tally(peak);
        high = high.max(peak_tally.total());
        let over = ctx + high * pct / 100;
        let mut report = PhaseReport::new(
            iteration,
            phase,
            at,
            peak_tally.components(over)?,
            running.tally(end).components(over)?,
        );
        report.micro_step = micro;
        report.terms = peak;
        report.end_terms = end;
        out.push(report);
    }
    Ok(out)
}
