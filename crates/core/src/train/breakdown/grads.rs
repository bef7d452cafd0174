//! Gradients, on the GPU and, when ZeRO offloads the optimizer, the state
//! DeepSpeed's CPU optimizer keeps in host memory; DDP's bucket copy.

use super::Inputs;
use crate::terms::{Term, TermId as T, TermSet, Unit as U};
use crate::train::run::Offload;

/// The gradient terms; returns the terms that live in host memory.
///
/// Gradients are partitioned from ZeRO stage 2; DDP (no ZeRO, several
/// GPUs) keeps a flat bucket copy (`gradient_as_bucket_view=False`, the
/// default). Offloading the optimizer (ZeRO-Offload): each gradient is
/// reduced in a bucket and copied to the host's fp32 partition, so the GPU
/// holds about two buckets (the one filling, the one being copied).
/// Source: DeepSpeed `stage_1_and_2.py` (`cpu_offload`: `param.grad = None`
/// after the copy; `reduce_bucket_size`, which the HF Trainer's "auto" sets
/// to hidden²). Not measured here.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) -> TermSet {
    let (trainable, grad_bytes, gpus, zero) = (x.trainable, x.grad_bytes, x.gpus, x.zero);
    let offload = x.s.parallel.offload;
    let grads_on_gpu = match offload {
        Offload::None => Term::of(&[
            (trainable + x.tp_embed_grad, U::Params),
            (grad_bytes, U::BytesEach),
        ])
        .split(gpus, zero >= 2),
        Offload::Optimizer | Offload::Params => Term::of(&[
            (2, U::Copies),
            ((x.h * x.h).min(trainable), U::Elements),
            (grad_bytes, U::BytesEach),
        ]),
    };
    put(T::Grads, grads_on_gpu);
    let host = offloaded(x, put);
    put(
        T::GradsButFirst,
        match offload {
            Offload::None => Term::of(&[
                (trainable.saturating_sub(first_layer(x)), U::Params),
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
    host
}

/// What DeepSpeed's CPU optimizer keeps in host memory: fp32 master
/// weights (unless the weights are fp32 already), fp32 moments and fp32
/// gradients, each GPU's partition; with `offload_param` the weights too
/// (the GPU gathers a module at a time, `ZeroGathered`).
///
/// Source: ZeRO-Offload (Ren et al. 2021, §4: 12 bytes per parameter of
/// fp32 state plus the gradients on the CPU).
fn offloaded(x: &Inputs, put: &mut impl FnMut(T, Term)) -> TermSet {
    let offload = x.s.parallel.offload;
    if offload == Offload::None {
        return TermSet::EMPTY;
    }
    let (trainable, gpus) = (x.trainable, x.gpus);
    let host_share = |bytes_each: u128| {
        Term::of(&[(trainable, U::Params), (bytes_each, U::BytesEach)]).split(gpus, true)
    };
    if x.grad_bytes < 4 {
        put(T::HostMaster, host_share(4));
    }
    let moments = u128::from(x.s.train.optim.spec().host_moments);
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
    let host = TermSet::of(&[T::HostMaster, T::HostMoments, T::HostGrads]);
    match offload {
        Offload::Params => host.with(T::Weights),
        Offload::None | Offload::Optimizer => host,
    }
}

/// What layer 0's backward meets already made: every gradient but its own
/// and the embedding's (a tied head's gradient waits, unsummed, in
/// `HeadGrad`).
fn first_layer(x: &Inputs) -> u128 {
    let mut n = 0u128;
    x.a.for_each_first_layer_tensor(x.s.train.expert_layout(), |t| {
        n += match x.lora {
            None => t.elems(),
            Some(lo) => {
                if t.module().is_some_and(|m| lo.adapts(m)) {
                    t.lora_params(lo.r)
                        + if lo.dora {
                            t.modules() * u128::from(t.rows)
                        } else {
                            0
                        }
                } else {
                    0
                }
            }
        }
    });
    n + if x.lora.is_none() {
        x.stats.embedding
    } else {
        0
    }
}
