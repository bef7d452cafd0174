//! The accurate estimator: live tensor bytes at every phase of the first two
//! training iterations, from the architecture, the ledger of saved tensors
//! and the optimizer's own allocations.
//!
//! The step is the Hugging Face Trainer's: `loss = model(ids, labels=ids).loss;
//! loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)`, with the
//! output object dropped right after `.loss` unless `keep_outputs`.
//! Held to the measured ground truth (`tests/ground_truth.rs`): every row's
//! overall peak within 3%, each phase peak within 5%.

use crate::arch::{Architecture, Family};
use crate::ledger::{self, Ctx, Mode, Saved};
use crate::report::{Component as C, Estimate, Method, Moment, Phase, PhaseReport, Tally};
use crate::scenario::{Dtype, Optimizer, Scenario};
use crate::EstimateError;

/// Parameters LoRA adds: rank × (in + out) for every adapted linear
/// (peft's "all-linear": every `nn.Linear`/`Conv1D` but the output head).
pub fn lora_params(a: &Architecture, r: u64) -> u64 {
    let (h, f) = (u64::from(a.hidden), u64::from(a.ffn));
    let (q, kv) = (a.q_dim(), a.kv_dim());
    let per_layer = match a.family {
        // c_attn h→3h, c_proj h→h, c_fc h→f, c_proj f→h
        Family::Gpt2 => (h + 3 * h) + (h + h) + (h + f) + (f + h),
        // qkv_proj, o_proj, gate_up_proj, down_proj
        Family::Phi3 => (h + q + 2 * kv) + (q + h) + (h + 2 * f) + (f + h),
        // q, k, v, o, gate, up, down
        _ => (h + q) + 2 * (h + kv) + (q + h) + 2 * (h + f) + (f + h),
    };
    r * per_layer * u64::from(a.layers)
}

/// LoRA tensors (A and B per adapted linear).
fn lora_tensors(a: &Architecture) -> u64 {
    let per_layer = match a.family {
        Family::Gpt2 | Family::Phi3 => 4,
        _ => 7,
    };
    2 * per_layer * u64::from(a.layers)
}

/// A parameter tensor's (rows, cols); cols = 1 for vectors.
type Shape = (u64, u64);

/// Shapes of one layer's parameter tensors and of the tensors outside the
/// layers; the embedding first.
fn shapes(a: &Architecture) -> (Vec<Shape>, Vec<Shape>) {
    let (h, f, v) = (u64::from(a.hidden), u64::from(a.ffn), u64::from(a.vocab));
    let (q, kv) = (a.q_dim(), a.kv_dim());
    let mut outer = vec![(v, h), (h, 1)];
    let layer = match a.family {
        Family::Gpt2 => {
            outer.extend([(u64::from(a.positions), h), (h, 1)]);
            vec![
                (h, 1),
                (h, 1),
                (h, 3 * h),
                (3 * h, 1),
                (h, h),
                (h, 1),
                (h, 1),
                (h, 1),
                (h, f),
                (f, 1),
                (f, h),
                (h, 1),
            ]
        }
        family => {
            let mut l = vec![
                (h, 1),
                (q, h),
                (kv, h),
                (kv, h),
                (h, q),
                (h, 1),
                (f, h),
                (f, h),
                (h, f),
            ];
            if family == Family::Qwen2 {
                l.extend([(q, 1), (kv, 1), (kv, 1)]);
            }
            l
        }
    };
    if !a.tied {
        outer.push((v, h));
    }
    (layer, outer)
}

/// Adafactor's factored second moments: rows + cols per matrix, the whole
/// vector otherwise, fp32, plus its 4-byte `RMS` per tensor.
///
/// Source: transformers' `Adafactor` state init (`exp_avg_sq_row`,
/// `exp_avg_sq_col` for ≥ 2-D, `exp_avg_sq` otherwise); matches the ground
/// truth's Adafactor rows exactly.
fn adafactor_state(shape: (u64, u64)) -> u64 {
    let elems = if shape.1 > 1 {
        shape.0 + shape.1
    } else {
        shape.0
    };
    4 * elems + 4
}

/// Adafactor's state in total, and the part created by the time the
/// largest tensor (the embedding, first in module order, for every LM
/// preset) is updated in the first step.
fn adafactor_states(a: &Architecture) -> (u128, u128) {
    let (layer, outer) = shapes(a);
    let sum = |v: &[(u64, u64)]| {
        v.iter()
            .map(|&x| u128::from(adafactor_state(x)))
            .sum::<u128>()
    };
    let total = u128::from(a.layers) * sum(&layer) + sum(&outer);
    let embedding = outer[0];
    let largest_elsewhere = layer
        .iter()
        .chain(&outer[1..])
        .map(|&(r, c)| r * c)
        .max()
        .unwrap_or(0);
    let at = if embedding.0 * embedding.1 >= largest_elsewhere {
        u128::from(adafactor_state(embedding))
    } else {
        total
    };
    (total, at)
}

/// Optimizer state and the step's temporaries, for `t` trainable elements.
struct OptimBytes {
    state: u128,
    /// State that exists while the largest tensor is updated in iteration 1
    /// (Adafactor creates state tensor by tensor).
    state_at_step_peak_iter1: u128,
    temps: u128,
}

/// Bytes of the optimizer for the trainable parameters.
///
/// Sources: PyTorch `torch/optim/adamw.py` (`_multi_tensor_adamw` keeps one
/// parameter-sized `exp_avg_sq_sqrt` list; `_single_tensor_adamw` computes
/// `(exp_avg_sq.sqrt() / bias_correction2_sqrt)` on one tensor at a time:
/// two temporaries of the largest tensor; `_fused_adamw` none; one 4-byte
/// `step` per tensor) and `sgd.py` (`momentum_buffer = clone(grad)`), as
/// measured in the ground truth (20 / 10 bytes per parameter at the step in
/// fp32 / bf16). bitsandbytes `AdamW8bit`: two uint8 moments with one fp32
/// absmax per 256-element block, 32-bit state for tensors under 4096
/// elements, fused update. Lion (`lion-pytorch`): one moment; its update
/// `exp_avg.clone().mul_(β1).add(grad, ...)` briefly holds two copies of a
/// tensor. transformers `Adafactor` (relative step, no first moment):
/// `grad ** 2 + eps`, the approximated update and `-update` are full-size
/// fp32 temporaries (two at once), plus fp32 copies of a half-precision
/// parameter and its gradient.
fn optimizer_bytes(
    optim: Optimizer,
    elems: u128,
    tensors: u128,
    largest: u128,
    state_bytes: u128,
    half_params: bool,
    factored: (u128, u128),
) -> OptimBytes {
    let sb = state_bytes;
    let (state, temps) = match optim {
        Optimizer::AdamW => (2 * elems * sb + 4 * tensors, elems * sb),
        Optimizer::AdamWForLoop => (2 * elems * sb + 4 * tensors, 2 * largest * sb),
        Optimizer::AdamWFused => (2 * elems * sb + 4 * tensors, 0),
        Optimizer::AdamW8bit => (2 * elems + 2 * 4 * elems.div_ceil(256), 0),
        Optimizer::Lion => (elems * sb, 2 * largest * sb),
        Optimizer::Adafactor => {
            let copies = if half_params { 4 } else { 2 };
            (factored.0, copies * largest * 4 + factored.1)
        }
        Optimizer::SgdMomentum => (elems * sb, 0),
        Optimizer::Sgd => (0, 0),
    };
    let at_peak = if optim == Optimizer::Adafactor {
        factored.1
    } else {
        state
    };
    OptimBytes {
        state,
        state_at_step_peak_iter1: at_peak,
        temps,
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

/// Everything the phases are built from, in bytes per GPU. Public so the
/// page can explain each number with the values that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breakdown {
    pub params: u128,
    pub grads: u128,
    /// DDP's gradient buckets (gradient_as_bucket_view=False).
    pub ddp_buckets: u128,
    pub state: u128,
    pub state_step_peak_iter1: u128,
    pub temps: u128,
    /// Input ids and labels, alive through the loop.
    pub inputs: u128,
    /// Saved activations at the end of forward (inputs excluded).
    pub acts: u128,
    /// Only while the loss is computed: padded labels, the last hidden state.
    pub acts_fwd_transient: u128,
    pub weight_copies: u128,
    pub weight_copies_transient: u128,
    /// Logits-sized bytes at the forward peak and at its end.
    pub logits_peak: u128,
    pub logits_end: u128,
    /// Extra bytes at the start of backward: log-softmax's gradient and the
    /// logits' gradient next to the saved log-softmax.
    pub logits_bwd: u128,
    /// The head's backward moment: (activations, logits, gradients) on top of
    /// the parameters and state.
    pub head_moment: (u128, u128, u128),
    pub end_moment_extra: u128,
    /// Gradient checkpointing's recompute: (activations, gradients).
    pub recompute: Option<(u128, u128)>,
    /// Data put on the GPU once (`dataset_mib`).
    pub retained: u128,
    /// What one layer saves (the second and later layers).
    pub layer: Saved,
    /// What the embedding and head save.
    pub outer: Saved,
    /// Trainable parameters and their gradient/state element sizes.
    pub trainable: u128,
    pub grad_bytes: u128,
    pub state_dtype: u128,
    /// Parameter tensors (one optimizer step counter each).
    pub tensors: u128,
    /// Elements of the largest trainable tensor.
    pub largest: u128,
    pub tokens: u128,
}

/// The accurate estimate.
pub fn estimate(s: &Scenario) -> Result<Estimate, EstimateError> {
    let b = breakdown(s)?;
    let phases = build_phases(&b, s.train.grad_accum.get() > 1, &s.overhead)?;
    let trainable = u64::try_from(b.trainable).unwrap_or(u64::MAX);
    let params = s.arch.map_or(0, |a| a.params())
        + s.train
            .lora_r
            .zip(s.arch)
            .map_or(0, |(r, a)| lora_params(&a, u64::from(r.get())));
    Ok(Estimate::from_phases(
        Method::Vramfit,
        params,
        trainable,
        phases,
    ))
}

/// The terms of the estimate, before they are laid out in phases.
pub fn breakdown(s: &Scenario) -> Result<Breakdown, EstimateError> {
    let a = s.arch.ok_or(EstimateError::NeedsArchitecture)?;
    let t = &s.train;
    let c = Ctx::new(&a, t);
    let n = u128::from(a.params());
    let l = u128::from(a.layers);
    let (h, v) = (u128::from(a.hidden), u128::from(a.vocab));
    let (b, seq) = (u128::from(t.batch.get()), u128::from(t.seq.get()));
    let tokens = b * seq;
    let gpus = u128::from(s.parallel.gpus.get());
    let zero = s.parallel.zero.get();
    let lora_r = t.lora_r.map(|r| u64::from(r.get()));
    let n_lora = u128::from(lora_r.map_or(0, |r| lora_params(&a, r)));

    // Parameters, gradients, optimizer.
    let pb = u128::from(t.dtype.param_bytes());
    let buffers = u128::from(a.buffer_bytes());
    let (trainable, grad_bytes, state_dtype, tensors, largest) = match lora_r {
        None => (
            n,
            pb,
            if t.dtype == Dtype::MixedBf16 { 4 } else { pb },
            u128::from(a.param_tensors()),
            u128::from(a.largest_tensor()),
        ),
        Some(r) => {
            let big = u128::from(r) * u128::from(a.hidden.max(a.ffn));
            (n_lora, 4, 4, u128::from(lora_tensors(&a)), big)
        }
    };
    let params_all = n * pb + buffers + n_lora * 4;
    let grads_all = trainable * grad_bytes;
    let factored = match (t.optim, lora_r) {
        (Optimizer::Adafactor, Some(r)) => {
            // Adapters are (r × in) and (out × r): rows + cols = in + out + 2r
            // per pair (n_lora / r + r per tensor), fp32, plus 4 B of RMS
            // per tensor.
            let r = u128::from(r).max(1);
            let st = 4 * (n_lora / r + r * tensors) + 4 * tensors;
            (st, st)
        }
        (Optimizer::Adafactor, None) => adafactor_states(&a),
        _ => (0, 0),
    };
    let mut ob = optimizer_bytes(
        t.optim,
        trainable,
        tensors,
        largest,
        state_dtype,
        pb == 2 && lora_r.is_none(),
        factored,
    );
    if t.dtype == Dtype::MixedBf16 && lora_r.is_none() {
        // fp32 master weights and fp32 gradients live with the optimizer
        // (LoRA's adapters are fp32 already).
        let master = trainable * 8;
        ob.state += master;
        ob.state_at_step_peak_iter1 += master;
    }

    // ZeRO / DDP, per GPU.
    let working_set = if zero >= 3 {
        u128::from(a.largest_module()) * (pb + grad_bytes)
    } else {
        0
    };
    let params = zero_partition(params_all, gpus, zero >= 3) + working_set;
    let grads = zero_partition(grads_all, gpus, zero >= 2);
    let ddp_buckets = if gpus > 1 && zero == 0 { grads_all } else { 0 };
    let state = zero_partition(ob.state, gpus, zero >= 1);
    let state_step_peak_iter1 = zero_partition(ob.state_at_step_peak_iter1, gpus, zero >= 1);
    let temps = zero_partition(ob.temps, gpus, zero >= 1);

    // Activations. Layer 0 differs only when its input needs no gradient
    // (the frozen embedding under LoRA).
    let layer = ledger::layer(&c, true);
    let layer0 = if c.full {
        layer
    } else {
        ledger::layer(&c, false)
    };
    let outer = ledger::outer(&c);
    let rest = l.saturating_sub(1);
    let layers_bytes = |x: &Saved| x.bytes(tokens, seq);
    let wc = |x: &Saved| u128::from(x.weight_copies);
    let wct = |x: &Saved| u128::from(x.weight_copies_transient);
    let (layer_acts, layer_wc, layer_wct) = if t.grad_ckpt {
        // Non-reentrant checkpointing keeps each layer's input; everything
        // inside is dropped, including the layer's saved weight copies
        // (still cached by autocast until it exits).
        let input = tokens * u128::from(c.mode.residual()) * h;
        (
            l * input,
            0,
            wc(&layer0) + rest * wc(&layer) + wct(&layer0) + rest * wct(&layer),
        )
    } else {
        (
            layers_bytes(&layer0) + rest * layers_bytes(&layer),
            wc(&layer0) + rest * wc(&layer),
            wct(&layer0) + rest * wct(&layer),
        )
    };
    let labels = 8 * tokens;
    let acts =
        layer_acts + outer.saved.bytes(tokens, seq) + seq * u128::from(outer.per_position) + labels;
    let inputs = 16 * tokens;
    let acts_fwd_transient = 8 * b * (seq + 1) + tokens * u128::from(outer.final_hidden_transient);
    let weight_copies = layer_wc + wc(&outer.saved);
    let weight_copies_transient = layer_wct + wct(&outer.saved);

    // Logits: HF computes them in the compute dtype, upcasts to fp32, and
    // cross-entropy saves an fp32 log-softmax.
    let al = u128::from(c.mode.act());
    let vt = v * tokens;
    let upcast = if al == 2 { 4 } else { 0 };
    let kept = if t.keep_outputs { al * vt } else { 0 };
    let logits_peak = (al + upcast + 4) * vt;
    let logits_end = 4 * vt + kept;
    // nll_loss's gradient and log_softmax's gradient next to the saved
    // log-softmax: three fp32 copies at once.
    let logits_bwd = 8 * vt;

    // The head's backward: grad of the logits in compute dtype, of the
    // hidden state, and of the head weight.
    let grad_hidden = tokens * h * u128::from(c.mode.act());
    let head_grad = if c.full {
        v * h * grad_bytes + if c.mode == Mode::Amp { 2 * v * h } else { 0 }
    } else {
        0
    };
    let head_moment = (acts + grad_hidden, kept + al * vt, head_grad);
    // The end of backward: the embedding's gradient. Tied, it meets the
    // head's gradient (out-of-place sum: two more V×h); untied, the gradient
    // of the embedding output is still alive.
    let end_moment_extra = if c.full && a.tied {
        2 * v * h * grad_bytes
    } else {
        tokens * h * u128::from(c.mode.residual())
    };
    let recompute = t.grad_ckpt.then(|| {
        let full = layers_bytes(&layer) + wc(&layer);
        (full + grad_hidden, head_grad)
    });

    Ok(Breakdown {
        params,
        grads,
        ddp_buckets,
        state,
        state_step_peak_iter1,
        temps,
        inputs,
        acts,
        acts_fwd_transient,
        weight_copies,
        weight_copies_transient,
        logits_peak,
        logits_end,
        logits_bwd,
        head_moment,
        end_moment_extra,
        recompute,
        retained: u128::from(s.view.dataset_mib) << 20,
        layer,
        outer: outer.saved,
        trainable,
        grad_bytes,
        state_dtype,
        tensors,
        largest,
        tokens,
    })
}

/// The phases of init and two iterations (each with a later micro-step
/// when gradients accumulate).
fn build_phases(
    p: &Breakdown,
    accumulate: bool,
    overhead: &crate::scenario::Overhead,
) -> Result<Vec<PhaseReport>, EstimateError> {
    let ctx = u128::from(overhead.cuda_ctx_mib) << 20;
    let pct = u128::from(overhead.reserve_pct);
    // DDP allocates its gradient buckets when it wraps the model.
    let base = |state: u128| {
        Tally::new()
            .set(C::Parameters, p.params)
            .set(C::OptimizerState, state)
            .set(C::Gradients, p.ddp_buckets)
            .set(C::Activations, p.inputs)
            .set(C::Retained, p.retained)
    };
    // (iteration, micro step, phase, peak-at, peak, end)
    let mut raw: Vec<(u32, u32, Phase, Moment, Tally, Tally)> = Vec::with_capacity(13);
    let init = Tally::new().set(C::Parameters, p.params);
    raw.push((
        0,
        1,
        Phase::Init,
        Moment::End,
        init,
        Tally::new().set(C::Parameters, p.params),
    ));
    for iteration in [1u32, 2] {
        let state = if iteration == 1 { 0 } else { p.state };
        let micro_steps: &[u32] = if accumulate { &[1, 2] } else { &[1] };
        for &micro in micro_steps {
            // Gradients from earlier micro-steps stay.
            let held = if micro > 1 { p.grads } else { 0 };
            let start = base(state).add(C::Gradients, held);
            let end_fwd = start
                .add(C::Activations, p.acts)
                .set(C::WeightCopies, p.weight_copies)
                .set(C::Logits, p.logits_end);
            // The loss: logits, their fp32 upcast and the log-softmax at once.
            let peak_fwd = end_fwd
                .add(C::Activations, p.acts_fwd_transient)
                .add(C::WeightCopies, p.weight_copies_transient)
                .set(C::Logits, p.logits_peak);
            let logits_moment = end_fwd.add(C::Logits, p.logits_bwd);
            let (ha, hl, hg) = p.head_moment;
            let head_moment = start
                .add(C::Activations, ha)
                .set(C::WeightCopies, p.weight_copies)
                .set(C::Logits, hl)
                .add(C::Gradients, hg);
            let grads_end = start.set(C::Gradients, p.grads + p.ddp_buckets);
            let end_moment = grads_end.add(C::Activations, p.end_moment_extra);
            let recompute = p.recompute.map(|(acts, grads)| {
                (
                    Moment::Middle,
                    start
                        .add(C::Activations, acts + p.acts)
                        .add(C::Gradients, grads),
                )
            });
            // The highest of the moments that can hold backward's peak (the
            // first of equals, in time order).
            let (at, peak_bwd) = [
                Some((Moment::Start, logits_moment)),
                Some((Moment::Start, head_moment)),
                Some((Moment::End, end_moment)),
                recompute,
            ]
            .into_iter()
            .flatten()
            .fold((Moment::Start, logits_moment), |best, (m, x)| {
                if x.total() > best.1.total() {
                    (m, x)
                } else {
                    best
                }
            });
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
        let after = base(p.state).add(C::Gradients, p.grads);
        let step_state = if iteration == 1 {
            p.state_step_peak_iter1
        } else {
            p.state
        };
        let step_peak = base(step_state)
            .add(C::Gradients, p.grads)
            .set(C::OptimizerTemporaries, p.temps);
        raw.push((
            iteration,
            1,
            Phase::OptimizerStep,
            Moment::Middle,
            step_peak,
            after,
        ));
        let zeroed = base(p.state);
        raw.push((iteration, 1, Phase::ZeroGrad, Moment::Start, after, zeroed));
    }
    // Overhead: the CUDA context from the start, and the allocator's reserve
    // on top of the highest allocation so far (reserved memory is not given
    // back without empty_cache()).
    let mut high = 0u128;
    let mut out = Vec::with_capacity(raw.len());
    for (iteration, micro, phase, at, peak, end) in raw {
        high = high.max(peak.total());
        let over = ctx + high * pct / 100;
        let mut report = PhaseReport::new(
            iteration,
            phase,
            at,
            peak.components(over)?,
            end.components(over)?,
        );
        report.micro_step = micro;
        out.push(report);
    }
    Ok(out)
}
