//! DeepSpeed 0.19's ZeRO-3 (`shard=deepspeed`), in bf16 as accelerate and
//! the Trainer set it up: what `deepspeed.initialize` allocates (each
//! rank's fp32 master partition, its bf16 gradient partition, the reduce
//! bucket), the parameters too small to partition, the step's fp32
//! gradient copy, and the parameters its prefetcher keeps gathered from the
//! second step on. These terms replace ZeRO-3's "largest module" and the
//! master and gradient terms of `mixed_bf16`.
//!
//! Source: DeepSpeed 0.19.8 `runtime/zero/stage3.py`
//! (`_create_fp32_partitions`, `_setup_for_real_optimizer`: the gradient
//! partitions and `reduce_bucket_size`'s buffer, allocated whole;
//! `_prepare_fp32_grad_for_sub_group`), `partition_parameters.py`
//! (`ds_persist` under `stage3_param_persistence_threshold`),
//! `partitioned_param_coordinator.py` (prefetch up to
//! `stage3_max_live_parameters`, reuse within `stage3_max_reuse_distance`);
//! transformers 5.23 `integrations/deepspeed.py` ("auto": reduce bucket h²,
//! persistence 10·h). Measured: rank 0 of 2 on the CPU, real tensors
//! (`tests/fixtures/deepspeed_rows.jsonl`, `scripts/measure/deepspeed/NOTES.md`).

use super::Inputs;
use crate::model::Place;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::run::{DsBuckets, Shard, DS_MAX_LIVE as MAX_LIVE};

/// `reduce_bucket_size`'s default, in elements.
const REDUCE_BUCKET: u128 = 500_000_000;
/// `stage3_param_persistence_threshold`'s default, in elements.
const PERSISTENCE: u128 = 100_000;
/// `stage3_prefetch_bucket_size`'s default, in elements.
const PREFETCH_BUCKET: u128 = 50_000_000;

/// The parameters by how DeepSpeed holds them: below the persistence
/// threshold (whole on every rank, never released), and the others
/// (partitioned, gathered when used).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Bytes of the persistent parameters.
    pub persistent: u128,
    /// Elements and bytes (at their own dtype) of the partitioned ones.
    pub partitioned: u128,
    pub partitioned_bytes: u128,
    /// Elements of the largest partitioned parameter.
    pub largest: u128,
    /// Elements of the flat buffers of the buckets prefetched ahead of
    /// the first fetch ([`Prefetch`]).
    pub flat_ahead: u128,
}

/// The second step's prefetch from its first fetch (the model itself,
/// which has no parameters of its own), in parameter order: each fetch pops one bucket of at least `stage3_prefetch_bucket_size`
/// elements (the last parameter may pass it) until `MAX_LIVE` are gathered.
/// A bucket of several parameters is gathered into one flat buffer, then
/// each parameter copied out of it (`torch.cat`); the buffer lives until
/// the bucket's last parameter is used (`AllGatherCoalescedHandle`).
struct Prefetch {
    bucket_size: u128,
    live: u128,
    bucket: (u128, u32),
    flat: u128,
}

impl Prefetch {
    fn new(bucket_size: u128) -> Prefetch {
        Prefetch {
            bucket_size,
            live: 0,
            bucket: (0, 0),
            flat: 0,
        }
    }

    /// Pops one parameter of `elems`; whether its bucket closed.
    fn pop(&mut self, elems: u128) -> bool {
        if self.live >= MAX_LIVE {
            return false;
        }
        self.live += elems;
        self.bucket = (self.bucket.0 + elems, self.bucket.1.saturating_add(1));
        let full = self.bucket.0 >= self.bucket_size;
        if full {
            self.close();
        }
        full
    }

    fn close(&mut self) {
        if self.bucket.1 > 1 {
            self.flat += self.bucket.0;
        }
        self.bucket = (0, 0);
    }

    /// Pops the parameters of `pattern` (their elements, in order), `n`
    /// times over: as [`Prefetch::pop`] would one by one, but once a
    /// bucket has closed twice before the same place in the pattern, what
    /// follows repeats (the bucket empty, the same parameters ahead), so
    /// the whole repetitions left before `MAX_LIVE` are added at once
    /// (experts by the thousand cost a few buckets, not one step each).
    fn pop_repeated(&mut self, pattern: &[u128], n: u128) {
        let k = pattern.len() as u128;
        let total = n.saturating_mul(k);
        let mut seen = [None::<(u128, u128, u128)>; 2];
        let (mut done, mut skipped) = (0u128, false);
        while done < total && self.live < MAX_LIVE {
            let closed = self.pop(pattern[(done % k) as usize]);
            done += 1;
            if !closed || skipped {
                continue;
            }
            let Some(at) = seen.get_mut((done % k) as usize) else {
                continue;
            };
            match *at {
                None => *at = Some((done, self.live, self.flat)),
                Some((done0, live0, flat0)) => {
                    let (step, grown) = (done - done0, self.live - live0);
                    let left = MAX_LIVE.saturating_sub(self.live);
                    let times = ((total - done) / step).min(left.checked_div(grown).unwrap_or(0));
                    done += times * step;
                    self.live += times * grown;
                    self.flat += times * (self.flat - flat0);
                    skipped = true;
                }
            }
        }
    }
}

/// Parameters of one tensor of a place: its weight and bias, each module's
/// in turn (`n` modules: the experts of a per-expert layout), or LoRA's
/// `A` and `B` (fp32) of each module.
#[derive(Clone, Copy)]
struct Params {
    /// Elements and bytes each, of the pair.
    pair: [(u128, u128); 2],
    n: u128,
}

impl Held {
    /// `n` parameters of `elems` at `bytes_each`.
    fn add(&mut self, elems: u128, bytes_each: u128, threshold: u128, n: u128) {
        if elems == 0 || n == 0 {
            return;
        }
        if elems < threshold {
            self.persistent += n * elems * bytes_each;
        } else {
            self.partitioned += n * elems;
            self.partitioned_bytes += n * elems * bytes_each;
            self.largest = self.largest.max(elems);
        }
    }
}

/// `stage3_param_persistence_threshold` and `stage3_prefetch_bucket_size`,
/// in elements.
fn sizes(x: &Inputs) -> (u128, u128) {
    match x.s.parallel.ds_buckets {
        DsBuckets::Default => (PERSISTENCE, PREFETCH_BUCKET),
        DsBuckets::Auto => (10 * x.h, x.h * x.h * 9 / 10),
    }
}

/// Each place's parameters, in `model.parameters()` order (places repeat
/// by layer).
fn params(x: &Inputs) -> Vec<(Place, Params)> {
    let mut places: Vec<(Place, Params)> = Vec::new();
    x.a.for_each_tensor_as(x.s.train.expert_layout(), |place: Place, t| {
        let n = t.modules();
        // A bias is a parameter of its own (each expert's).
        let bias = (t.elems() - t.weight_elems()) / n;
        places.push((
            place,
            Params {
                pair: [(t.tensor_elems(), x.pb), (bias, x.pb)],
                n,
            },
        ));
        if let Some(lo) = x.lora.filter(|lo| t.module().is_some_and(|m| lo.adapts(m))) {
            let r = t.lora_rank(lo.r);
            let pair = [(r * u128::from(t.cols), 4), (r * u128::from(t.rows), 4)];
            places.push((place, Params { pair, n }));
        }
    });
    places
}

/// Each parameter (weights, biases, LoRA's `A` and `B` in fp32), layer by
/// layer in `model.parameters()` order, sorted by the persistence
/// threshold, and the second step's prefetch over them: sums taken per
/// kind of parameter, the prefetch walked until `MAX_LIVE`.
pub(crate) fn held(x: &Inputs) -> Held {
    let (threshold, bucket_size) = sizes(x);
    let mut held = Held::default();
    let mut prefetch = Prefetch::new(bucket_size);
    for run in params(x).chunk_by(|a, b| a.0 == b.0) {
        let copies = run[0].0.copies();
        for (_, p) in run {
            for (elems, bytes_each) in p.pair {
                held.add(elems, bytes_each, threshold, p.n * copies);
            }
        }
        // Only the partitioned parameters are fetched: a place of
        // persistent ones alone is not walked.
        let pops = |p: &Params| {
            p.pair
                .map(|(e, _)| e)
                .map(|e| (e >= threshold).then_some(e))
        };
        if run.iter().all(|(_, p)| pops(p) == [None, None]) {
            continue;
        }
        for _ in 0..copies {
            if prefetch.live >= MAX_LIVE {
                break;
            }
            for (_, p) in run {
                match pops(p) {
                    [Some(a), Some(b)] => prefetch.pop_repeated(&[a, b], p.n),
                    [Some(e), None] | [None, Some(e)] => prefetch.pop_repeated(&[e], p.n),
                    [None, None] => {}
                }
            }
        }
    }
    prefetch.close();
    held.flat_ahead = prefetch.flat;
    held
}

/// DeepSpeed's terms (none under another sharding).
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    if x.s.parallel.shard != Shard::Deepspeed {
        return;
    }
    let (gpus, pb, trainable) = (x.gpus, x.pb, x.trainable);
    // The optimizer's fp32 master partition and the bf16 gradient
    // partition exist from `deepspeed.initialize` (for LoRA's fp32
    // adapters too): not `mixed_bf16`'s master and gradient terms.
    put(T::Master, Term::ZERO);
    put(T::Grads, Term::ZERO);
    put(T::GradsButFirst, Term::ZERO);
    put(
        T::DsMaster,
        Term::of(&[(trainable, U::Params), (4, U::BytesEach)]).split(gpus, true),
    );
    put(
        T::DsGradPartition,
        Term::of(&[(trainable, U::Params), (pb, U::BytesEach)]).split(gpus, true),
    );
    let bucket = match x.s.parallel.ds_buckets {
        DsBuckets::Default => REDUCE_BUCKET,
        DsBuckets::Auto => x.h * x.h,
    };
    put(
        T::DsReduceBucket,
        Term::of(&[(bucket, U::Elements), (pb, U::BytesEach)]),
    );
    // Gradients are reduced a bucket at a time: the bucket's gradients are
    // concatenated for the reduce-scatter (`__avg_scatter_grads`). When
    // every gradient fits in one bucket, that is all of them, at the end
    // of backward (measured); the reduces of a fuller model happen during
    // backward, counted at its end too.
    put(
        T::DsReduceCat,
        Term::of(&[(bucket.min(trainable), U::Elements), (pb, U::BytesEach)]),
    );
    // The step converts each sub-group's gradient partition to fp32 for
    // the optimizer, freed after it.
    put(
        T::DsStepGrads,
        Term::of(&[(trainable, U::Params), (4, U::BytesEach)]).split(gpus, true),
    );
    let held = held(x);
    put(T::DsPersistent, Term::of(&[(held.persistent, U::Bytes)]));
    // In the first step each module is gathered while it runs, and
    // released after: the largest parameter (the head, or stacked
    // experts) at its forward and backward.
    put(
        T::DsModule,
        Term::of(&[(held.largest, U::Elements), (pb, U::BytesEach)]),
    );
    put(
        T::DsFlatAhead,
        Term::of(&[(held.flat_ahead, U::Elements), (pb, U::BytesEach)]),
    );
    // From the second step the trace is known: the prefetcher gathers ahead
    // at every module's fetch until `MAX_LIVE` elements are gathered (the
    // last parameter may pass it), and a gathered parameter is released
    // only at its use: a model under the cap stays gathered whole through
    // forward and backward. Above it, the cap plus that one parameter (an
    // upper bound: the set depends on the module order).
    let gathered = if held.partitioned <= MAX_LIVE {
        Term::of(&[(held.partitioned_bytes, U::Bytes)])
    } else {
        Term::of(&[(MAX_LIVE + held.largest, U::Elements), (pb, U::BytesEach)])
    };
    put(T::DsGathered, gathered);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::presets::PRESETS;
    use crate::model::Architecture;
    use crate::scenario::Scenario;
    use crate::train::run::{LoraRank, Transformers};

    /// The walk one parameter at a time, as DeepSpeed fetches them: what
    /// [`held`] must give at any size, by sums and repetitions.
    fn one_by_one(x: &Inputs) -> Held {
        let (threshold, bucket_size) = sizes(x);
        let mut held = Held::default();
        let mut prefetch = Prefetch::new(bucket_size);
        let places = params(x);
        for run in places.chunk_by(|a, b| a.0 == b.0) {
            for _ in 0..run[0].0.copies() {
                for (_, p) in run {
                    for _ in 0..p.n {
                        for (elems, bytes_each) in p.pair {
                            held.add(elems, bytes_each, threshold, 1);
                            if elems >= threshold {
                                prefetch.pop(elems);
                            }
                        }
                    }
                }
            }
        }
        prefetch.close();
        held.flat_ahead = prefetch.flat;
        held
    }

    /// Every preset, and each shrunk to a narrow width with many experts
    /// (where a bucket holds many parameters and the prefetch crosses
    /// `MAX_LIVE` inside a layer), with DeepSpeed's default buckets and
    /// transformers' "auto", stacked and per-expert layouts, with and
    /// without LoRA: the same sums and the same prefetch.
    #[test]
    fn held_equals_the_walk_one_parameter_at_a_time() {
        let mut checked = 0;
        // Widths (hidden, expert MLP, dense MLP): experts past a bucket
        // each, several to a bucket ("auto": 0.9·h² elements), and past
        // the persistence threshold with their biases too (gpt-oss).
        let narrow = [(64, 96, 192), (64, 16, 48), (64, 50_000, 192)];
        for p in PRESETS {
            let shrunk = narrow.map(|(hidden, moe_ffn, ffn)| Architecture {
                hidden,
                heads: 4,
                kv_heads: p.arch.kv_heads.min(4),
                head_dim: 16,
                ffn,
                moe_ffn: if p.arch.experts > 0 { moe_ffn } else { 0 },
                experts: if p.arch.experts > 0 { 600 } else { 0 },
                vocab: 1000,
                ..p.arch
            });
            let all = std::iter::once(p.arch).chain(shrunk);
            for a in all.filter(|a| a.validate().is_ok()) {
                for buckets in [DsBuckets::Default, DsBuckets::Auto] {
                    for transformers in [Transformers::V5, Transformers::V457] {
                        for lora in [None, LoraRank::new(16)] {
                            let mut s = Scenario {
                                arch: Some(a),
                                ..Scenario::default()
                            };
                            s.parallel.shard = Shard::Deepspeed;
                            s.parallel.ds_buckets = buckets;
                            s.train.transformers = transformers;
                            s.train.lora_r = lora;
                            let run = s.train_run();
                            let Ok(x) = Inputs::new(&run) else {
                                continue;
                            };
                            assert_eq!(held(&x), one_by_one(&x), "{} {a:?} {s:?}", p.id);
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 200, "{checked}");
    }
}
