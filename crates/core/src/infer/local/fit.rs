//! llama.cpp's `--fit`: what it changes so that each GPU keeps its margin
//! free. `common/fit.cpp: common_params_fit_impl` (`:178-789`, b10488),
//! run before the model loads (`common/common.cpp:1294-1303`), measuring
//! each placement it tries with a dry-run load; here each measurement is a
//! [`plan`](super::plan::plan), so the answer is the one llama.cpp reaches
//! from these estimates.
//!
//! 1. Measure as asked; done if every GPU keeps `free - used >= margin`.
//! 2. Short in total, `-c` not given and the model's context above
//!    `--fit-ctx`: measure at `--fit-ctx`, interpolate linearly to the
//!    memory available (less `(n_gpus + 1) × model_per_layer / (2, or 6
//!    with experts)` on several GPUs), round down to 256, at least
//!    `--fit-ctx`. One GPU: done.
//! 3. Unless `-ngl` or `-ts` were given: fill the GPUs back to front with
//!    whole layers (with experts: layers whose routed experts stay in host
//!    memory), the last GPU holding the output layer, by the method of
//!    false position on the measured memory.
//! 4. With experts and a surplus once every expert is in host memory:
//!    turn those layers back into full layers front to back, then try part
//!    of one more (its up projections, then its gate, else its attention).

use super::model::LocalModel;
use super::params::{Gpu, LlamaCpp, MAX_DEVICES};
use super::placement::Place;
use super::placement::{Partial, Placement};
use super::plan::{Buffers, Context, Plan};
use super::weights::{Fraction, ModelBytes, Weights};
use super::LocalError;

/// How `--fit` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitStatus {
    /// Step 1: the settings fit; nothing changed.
    Fits,
    /// Step 2 on one GPU: a shorter context fits.
    Context,
    /// Steps 3-4: layers placed.
    Layers,
    /// It gave up (`common_params_fit_exception`); a context it already
    /// shortened stays shortened, the rest as asked.
    Failed(FitFailure),
}

/// Why `--fit` gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitFailure {
    /// "n_gpu_layers already set by user" (`fit.cpp:377-379`).
    LayersSetByUser,
    /// "tensor_split already set by user" (`:380-389`).
    SplitSetByUser,
    /// "model_params::tensor_buft_overrides already set by user"
    /// (`fit.cpp`, before step 3): `--n-cpu-moe`, `--cpu-moe`, `-ot`.
    OverridesSetByUser,
    /// No GPU, and the host memory is short even at the least context
    /// ("unable to fit model into system memory", `:373-375`).
    HostTooSmall,
}

/// What `--fit` hands the load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitAnswer {
    /// `-c` after `--fit` (0: the model's).
    pub n_ctx: u32,
    /// `-ngl`, `-ts` and the tensor overrides after `--fit`.
    pub placement: Placement,
    pub status: FitStatus,
}

/// One GPU's share in the search (`ngl_t`, `fit.cpp:446-457`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ngl {
    n_layer: u32,
    n_part: u32,
    overflow: Option<Fraction>,
}

impl Ngl {
    const fn n_full(&self) -> u32 {
        self.n_layer.saturating_sub(self.n_part)
    }
}

/// The search's fixed inputs, and the loads measured at the last `-c`.
struct Fit<'a, 'b> {
    m: &'a LocalModel,
    w: &'a Weights<'b>,
    p: &'a LlamaCpp,
    gpus: &'a [Gpu],
    n_ctx: u32,
    hp_ngl: u32,
    seen: Option<Seen<'a>>,
}

/// The loads measured at one `-c`: its context, worked out once, and each
/// placement's buffers, so that a placement tried again (the one asked
/// for, when every layer is tried) and the one the search answers are not
/// worked out again.
struct Seen<'a> {
    n_ctx: u32,
    ctx: Context<'a>,
    loads: Vec<(Placement, Buffers)>,
}

type Mem = [i128; MAX_DEVICES];

/// One measurement (`common_get_device_memory_data_impl`, `fit.cpp:30-140`).
struct Measured {
    mem: Mem,
    host: i128,
    model: i128,
}

impl Fit<'_, '_> {
    fn nd(&self) -> usize {
        self.gpus.len()
    }

    fn margin(&self) -> i128 {
        i128::try_from(self.p.fit_target).unwrap_or(i128::MAX)
    }

    fn target(&self, d: usize) -> i128 {
        to_i(self.gpus[d].free) - self.margin()
    }

    /// `set_ngl_tensor_split_tbo` (`fit.cpp:462-501`): `-ngl` the sum,
    /// `-ts` the layers per GPU, partial layers after each GPU's full ones.
    fn placement(&self, ngl: &[Ngl; MAX_DEVICES], next: &[bool; MAX_DEVICES]) -> Placement {
        let nd = self.nd();
        let total: u32 = ngl[..nd].iter().map(|n| n.n_layer).sum();
        let mut split = self.p.tensor_split;
        if nd > 1 {
            // `tensor_split[id] = ngl_per_device[id].n_layer` (a float).
            #[allow(clippy::cast_precision_loss)]
            for (s, n) in split.iter_mut().zip(&ngl[..nd]) {
                *s = n.n_layer as f32;
            }
        }
        let mut placement = Placement::layers(total, split);
        // Layer indices saturate rather than wrap (llama.cpp's are ints):
        // a search over several GPUs can ask for more layers than exist.
        let mut il0 = self.hp_ngl.saturating_add(1).saturating_sub(total);
        for d in 0..nd {
            il0 = il0.saturating_add(ngl[d].n_full());
            let hi = il0.saturating_add(ngl[d].n_part);
            placement.partial[d] = Partial {
                lo: il0,
                hi,
                first: ngl[d].overflow.unwrap_or(Fraction::Moe),
                first_to_next: next[d],
            };
            il0 = hi;
        }
        placement
    }

    /// The buffers of the load at `-c n_ctx` placed as `placement` says,
    /// and its context.
    fn load(
        &mut self,
        n_ctx: u32,
        placement: &Placement,
    ) -> Result<(&Context<'_>, &Buffers), LocalError> {
        if self.seen.as_ref().is_some_and(|s| s.n_ctx != n_ctx) {
            self.seen = None;
        }
        let seen = match self.seen {
            Some(ref mut seen) => seen,
            None => self.seen.insert(Seen {
                n_ctx,
                ctx: Context::new(self.m, self.w, self.p, self.gpus, n_ctx)?,
                loads: Vec::with_capacity(8),
            }),
        };
        let nd = self.gpus.len();
        let i = match seen
            .loads
            .iter()
            .position(|(p, _)| p.loads_like(placement, nd))
        {
            Some(i) => i,
            None => {
                let b = seen.ctx.buffers(self.w, placement);
                seen.loads.push((*placement, b));
                seen.loads.len() - 1
            }
        };
        Ok((&seen.ctx, &seen.loads[i].1))
    }

    /// Model, context and compute bytes per GPU, on the host, and the
    /// GPUs' model bytes together.
    fn measure_with(&mut self, n_ctx: u32, placement: &Placement) -> Result<Measured, LocalError> {
        let nd = self.nd();
        let (_, b) = self.load(n_ctx, placement)?;
        let mut mem = [0i128; MAX_DEVICES];
        let mut model = 0;
        for (d, x) in mem.iter_mut().enumerate().take(nd) {
            let g = b.device(Place::Gpu(d));
            *x = to_i(g.total());
            model += to_i(g.weights);
        }
        Ok(Measured {
            mem,
            host: to_i(b.device(Place::Host).total()),
            model,
        })
    }

    fn measure(
        &mut self,
        ngl: &[Ngl; MAX_DEVICES],
        next: &[bool; MAX_DEVICES],
    ) -> Result<Mem, LocalError> {
        Ok(self
            .measure_with(self.n_ctx, &self.placement(ngl, next))?
            .mem)
    }
}

fn to_i(x: u128) -> i128 {
    i128::try_from(x).unwrap_or(i128::MAX)
}

/// The false-position step (`fit.cpp:606-608`): `uint32_t step =
/// int64_t(delta) * (target - mem) / (high - mem)`, which wraps when
/// negative, then clamped to `1..=delta-1`.
fn step(delta: u32, target: i128, low: i128, high: i128) -> u32 {
    let den = (high - low).max(1);
    let raw = i128::from(delta) * (target - low) / den;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let wrapped = (raw as i64) as u32;
    wrapped.max(1).min(delta.saturating_sub(1))
}

/// `--fit` for `m` with weights `w` and knobs `p` on `gpus` (`host`: the
/// host's total memory, what a run without GPU is fitted to).
pub fn fit(
    m: &LocalModel,
    w: &ModelBytes<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    host: Option<u128>,
) -> Result<FitAnswer, LocalError> {
    fit_with(m, &Weights::from(w), p, gpus, host)
}

/// [`fit`] with the weights in any form.
pub fn fit_with(
    m: &LocalModel,
    w: &Weights<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    host: Option<u128>,
) -> Result<FitAnswer, LocalError> {
    search(&mut Fit::new(m, w, p, gpus), host)
}

/// [`fit_with`], and the load it answers ([`super::plan::plan`] of its
/// context and placement), measured already or worked out.
pub(super) fn fit_planned(
    m: &LocalModel,
    w: &Weights<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    host: Option<u128>,
) -> Result<(FitAnswer, Plan), LocalError> {
    let mut f = Fit::new(m, w, p, gpus);
    let answer = search(&mut f, host)?;
    let (ctx, b) = f.load(answer.n_ctx, &answer.placement)?;
    Ok((answer, ctx.plan_of(b, &answer.placement)))
}

impl<'a, 'b> Fit<'a, 'b> {
    fn new(m: &'a LocalModel, w: &'a Weights<'b>, p: &'a LlamaCpp, gpus: &'a [Gpu]) -> Self {
        Fit {
            m,
            w,
            p,
            gpus,
            n_ctx: p.n_ctx_param(),
            hp_ngl: m.cache.layers,
            seen: None,
        }
    }
}

/// Steps 1 to 4 (`common_params_fit_impl`).
fn search(f: &mut Fit, host: Option<u128>) -> Result<FitAnswer, LocalError> {
    let (p, gpus) = (f.p, f.gpus);
    let asked = Placement::asked(p, f.hp_ngl);
    let answer = |f: &Fit, status| FitAnswer {
        n_ctx: f.n_ctx,
        placement: asked,
        status,
    };
    let full = f.measure_with(f.n_ctx, &asked)?;
    let nd = f.nd();
    let (free, used): (i128, i128) = if nd == 0 {
        (to_i(host.unwrap_or(0)), full.host)
    } else {
        (
            (0..nd).map(|d| to_i(gpus[d].free)).sum(),
            full.mem[..nd].iter().sum(),
        )
    };
    let margins = f.margin() * i128::try_from(nd.max(1)).unwrap_or(1);
    let fits = if nd == 0 {
        free - used >= margins
    } else {
        (0..nd).all(|d| to_i(gpus[d].free) - full.mem[d] >= f.margin())
    };
    if fits {
        return Ok(answer(f, FitStatus::Fits));
    }
    if free - used - margins < 0 {
        if let Some(status) = shrink_context(f, full.model, free - margins, used)? {
            return Ok(answer(f, status));
        }
    }
    if nd == 0 {
        return Ok(answer(f, FitStatus::Failed(FitFailure::HostTooSmall)));
    }
    if p.n_gpu_layers.is_some() {
        return Ok(answer(f, FitStatus::Failed(FitFailure::LayersSetByUser)));
    }
    if nd > 1 && p.tensor_split[..nd].iter().any(|&s| s > 0.0) {
        return Ok(answer(f, FitStatus::Failed(FitFailure::SplitSetByUser)));
    }
    if p.tensor_overrides {
        return Ok(answer(f, FitStatus::Failed(FitFailure::OverridesSetByUser)));
    }
    let placement = place_layers(f)?;
    Ok(FitAnswer {
        n_ctx: f.n_ctx,
        placement,
        status: FitStatus::Layers,
    })
}

/// Step 2 (`fit.cpp:290-371`); `Some` when it settles the fit (one GPU,
/// the interpolated context).
fn shrink_context(
    f: &mut Fit,
    model: i128,
    available: i128,
    used_full: i128,
) -> Result<Option<FitStatus>, LocalError> {
    let (train, min) = (f.m.n_ctx_train, f.p.fit_min_ctx());
    if f.n_ctx != 0 || train <= min {
        return Ok(None);
    }
    let nd = f.nd();
    let mut target = available;
    if nd > 1 {
        let ngl =
            f.p.n_gpu_layers
                .unwrap_or(f.hp_ngl + 1)
                .min(f.hp_ngl)
                .max(1);
        let per_layer = model / i128::from(ngl);
        let waste = if f.m.n_expert == 0 { 2 } else { 6 };
        target -= i128::try_from(nd + 1).unwrap_or(0) * per_layer / waste;
    }
    f.n_ctx = min;
    let asked = Placement::asked(f.p, f.hp_ngl);
    let at_min = f.measure_with(min, &asked)?;
    let used_min: i128 = if nd == 0 {
        at_min.host
    } else {
        at_min.mem[..nd].iter().sum()
    };
    if target > used_min {
        let span = i128::from(train - min);
        let grown = span * (target - used_min) / (used_full - used_min).max(1);
        let n = i128::from(min) + grown;
        let n = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        f.n_ctx = (n - n % 256).max(min);
        if nd <= 1 {
            return Ok(Some(FitStatus::Context));
        }
    }
    Ok(None)
}

/// Steps 3 and 4 (`fit.cpp:402-789`).
fn place_layers(f: &mut Fit) -> Result<Placement, LocalError> {
    let nd = f.nd();
    let moe = f.m.n_expert > 0;
    let mut next = [false; MAX_DEVICES];
    let surplus_cpu_moe = if moe {
        let mut all = [Ngl::default(); MAX_DEVICES];
        all[nd - 1] = Ngl {
            n_layer: f.hp_ngl + 1,
            n_part: f.hp_ngl + 1,
            overflow: None,
        };
        let mut pl = f.placement(&all, &next);
        pl.split = f.p.tensor_split;
        let mem = f.measure_with(f.n_ctx, &pl)?.mem;
        (0..nd).map(|d| f.target(d) - mem[d]).sum::<i128>()
    } else {
        0
    };
    let mut ngl = [Ngl::default(); MAX_DEVICES];
    let mut mem = f.measure(&ngl, &next)?;
    for id in (0..nd).rev() {
        fill_back(f, id, &mut ngl, &mut mem, &next)?;
    }
    if moe && surplus_cpu_moe > 0 {
        convert_front(f, &mut ngl, &mut mem, &mut next)?;
    }
    Ok(f.placement(&ngl, &next))
}

/// Step 3 for GPU `id` (`fit.cpp:587-640`).
fn fill_back(
    f: &mut Fit,
    id: usize,
    ngl: &mut [Ngl; MAX_DEVICES],
    mem: &mut Mem,
    next: &[bool; MAX_DEVICES],
) -> Result<(), LocalError> {
    let nd = f.nd();
    let moe = f.m.n_expert > 0;
    let assigned: u32 = ngl[id + 1..nd].iter().map(|n| n.n_layer).sum();
    let mut high = *ngl;
    high[id].n_layer = (f.hp_ngl + 1).saturating_sub(assigned);
    if moe {
        high[id].n_part = if id < nd - 1 {
            high[id].n_layer
        } else {
            high[id].n_layer.saturating_sub(1)
        };
    }
    if high[id].n_layer == 0 {
        return Ok(());
    }
    let mut mem_high = f.measure(&high, next)?;
    let target = f.target(id);
    if mem_high[id] <= target {
        *ngl = high;
        *mem = mem_high;
        return Ok(());
    }
    let mut delta = high[id].n_layer - ngl[id].n_layer;
    while delta > 1 {
        let s = step(delta, target, mem[id], mem_high[id]);
        let mut test = *ngl;
        test[id].n_layer += s;
        if moe {
            test[id].n_part += if id == nd - 1 && test[id].n_part == 0 {
                s - 1
            } else {
                s
            };
        }
        let mem_test = f.measure(&test, next)?;
        if mem_test[id] <= target {
            *ngl = test;
            *mem = mem_test;
        } else {
            high = test;
            mem_high = mem_test;
        }
        delta = high[id].n_layer - ngl[id].n_layer;
    }
    Ok(())
}

/// Step 4 (`fit.cpp:647-789`): dense-only layers back to full layers,
/// front to back, then part of one more layer.
fn convert_front(
    f: &mut Fit,
    ngl: &mut [Ngl; MAX_DEVICES],
    mem: &mut Mem,
    next: &mut [bool; MAX_DEVICES],
) -> Result<(), LocalError> {
    let nd = f.nd();
    let mut start = nd;
    for id in (0..nd).rev() {
        if ngl[id].n_layer == 0 {
            break;
        }
        start = id;
    }
    let mut id = 0;
    while id <= start && start < nd {
        start = convert_one(f, id, start, ngl, mem, next)?;
        start = extra_layer(f, id, start, ngl, mem, next)?;
        id += 1;
    }
    Ok(())
}

/// Step 4's conversion for GPU `id`; returns the new first GPU with
/// dense-only layers.
fn convert_one(
    f: &mut Fit,
    id: usize,
    start: usize,
    ngl: &mut [Ngl; MAX_DEVICES],
    mem: &mut Mem,
    next: &[bool; MAX_DEVICES],
) -> Result<usize, LocalError> {
    let nd = f.nd();
    let mut high = *ngl;
    for jd in start..nd {
        let n = if jd < nd - 1 {
            high[jd].n_layer
        } else {
            high[jd].n_layer.saturating_sub(1)
        };
        high[id].n_layer += n;
        high[jd].n_layer -= n;
        high[jd].n_part = 0;
    }
    let mut start = start;
    let mut mem_high = f.measure(&high, next)?;
    let target = f.target(id);
    if mem_high[id] <= target {
        *ngl = high;
        *mem = mem_high;
        return Ok(nd - 1);
    }
    let mut delta = high[id].n_full().saturating_sub(ngl[id].n_full());
    while delta > 1 {
        let s = step(delta, target, mem[id], mem_high[id]);
        let mut test = *ngl;
        let mut st = start;
        let mut done = 0;
        while st < nd {
            let n = (s - done).min(test[st].n_part);
            test[st].n_layer -= n;
            test[st].n_part -= n;
            test[id].n_layer += n;
            done += n;
            if test[st].n_part > 0 {
                break;
            }
            st += 1;
        }
        let mem_test = f.measure(&test, next)?;
        if mem_test[id] <= target {
            *ngl = test;
            *mem = mem_test;
            start = st;
        } else {
            high = test;
            mem_high = mem_test;
        }
        delta = high[id].n_full().saturating_sub(ngl[id].n_full());
    }
    Ok(start)
}

/// Step 4's "fit at least part of one more layer" (`fit.cpp:722-778`).
fn extra_layer(
    f: &mut Fit,
    id: usize,
    start: usize,
    ngl: &mut [Ngl; MAX_DEVICES],
    mem: &mut Mem,
    next: &mut [bool; MAX_DEVICES],
) -> Result<usize, LocalError> {
    let nd = f.nd();
    let least = if id < nd - 1 { 0 } else { 1 };
    if start >= nd || ngl[start].n_layer <= least {
        return Ok(start);
    }
    let mut test = *ngl;
    let mut st = start;
    test[st].n_layer = test[st].n_layer.wrapping_sub(1);
    test[st].n_part = test[st].n_part.wrapping_sub(1);
    test[id].n_layer = test[id].n_layer.wrapping_add(1);
    test[id].n_part = test[id].n_part.wrapping_add(1);
    if test[st].n_part == 0 {
        st += 1;
    }
    let mut next_test = *next;
    if id < nd - 1 {
        next_test[id] = true;
    }
    let target = f.target(id);
    let target_next = if id + 1 < nd { f.target(id + 1) } else { 0 };
    let fits = |mem: &Mem| mem[id] < target && (id + 1 == nd || mem[id + 1] < target_next);
    test[id].overflow = Some(Fraction::Up);
    let mem_up = f.measure(&test, &next_test)?;
    if fits(&mem_up) {
        *ngl = test;
        *next = next_test;
        *mem = mem_up;
        test[id].overflow = Some(Fraction::Gate);
        let mem_gate = f.measure(&test, &next_test)?;
        if fits(&mem_gate) {
            *ngl = test;
            *mem = mem_gate;
        }
        return Ok(st);
    }
    test[id].overflow = Some(Fraction::Attn);
    let mem_attn = f.measure(&test, &next_test)?;
    if fits(&mem_attn) {
        *ngl = test;
        *next = next_test;
        *mem = mem_attn;
        return Ok(st);
    }
    Ok(start)
}
