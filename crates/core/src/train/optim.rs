//! Optimizers, each described once as data ([`OptimSpec`]): the state it
//! keeps, the temporaries its step allocates, whether bitsandbytes pages it
//! and whether DeepSpeed's CPU optimizer can run it. The terms of the state
//! and the step follow from the description ([`add_terms`]).

use super::lora::LoraCount;
use super::run::{Dtype, Optimizer, Training};
use crate::model::{Architecture, Ends, ExpertLayout, ParamTensor};
use crate::terms::{Term, TermId as T, Unit as U};

/// How the moments are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MomentDtype {
    /// In the run's state dtype (the weights', or fp32 master weights').
    State,
    /// fp32 whatever the weights are (bitsandbytes' 32-bit state,
    /// `Optimizer2State.init_state`, `optim_bits=32`).
    Fp32,
    /// bitsandbytes' 8-bit state: uint8 moments with one fp32 absmax per
    /// block of [`ABSMAX_BLOCK`] elements.
    Blockwise8bit,
}

/// Elements per fp32 absmax of bitsandbytes' 8-bit optimizer state.
pub const ABSMAX_BLOCK: u128 = 256;

/// The optimizer's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// `count` buffers the size of the trainable parameters.
    Moments { count: u8, dtype: MomentDtype },
    /// Adafactor's factored second moments (rows + columns of each matrix,
    /// fp32) and an fp32 RMS scalar per tensor.
    Factored,
}

/// What `step()` allocates beyond the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepTemps {
    None,
    /// One list the size of the trainable parameters (foreach's
    /// `exp_avg_sq_sqrt`).
    ParamSized,
    /// Two temporaries of the largest tensor (one tensor at a time).
    TwoOfLargest,
    /// Adafactor's full-size fp32 temporaries and row/column means.
    Adafactor,
}

/// One optimizer, described.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptimSpec {
    pub state: State,
    /// One 4-byte `step` tensor per parameter tensor.
    pub step_counters: bool,
    pub temps: StepTemps,
    /// bitsandbytes keeps the state in CUDA unified memory, paged to host
    /// memory when the GPU runs short.
    pub paged: bool,
    /// DeepSpeed's CPU optimizer (CPU Adam, CPU Lion) runs it when ZeRO
    /// offloads the optimizer.
    pub cpu_offload: bool,
    /// fp32 moments the CPU optimizer keeps per parameter when offloaded.
    pub host_moments: u8,
    /// One of PyTorch's AdamW implementations (the solver offers 8-bit and
    /// fused ones in its place).
    pub torch_adamw: bool,
    /// The seed article's optimizer state in multiples of N × P (seed 001:
    /// 2 for Adam, "lower" for SGD; every optimizer it does not name is
    /// taken as Adam).
    pub seed_state: u8,
}

const ADAMW: OptimSpec = OptimSpec {
    state: State::Moments {
        count: 2,
        dtype: MomentDtype::State,
    },
    step_counters: true,
    temps: StepTemps::ParamSized,
    paged: false,
    cpu_offload: true,
    host_moments: 2,
    torch_adamw: true,
    seed_state: 2,
};

const BNB_ADAMW8BIT: OptimSpec = OptimSpec {
    state: State::Moments {
        count: 2,
        dtype: MomentDtype::Blockwise8bit,
    },
    step_counters: false,
    temps: StepTemps::None,
    cpu_offload: false,
    torch_adamw: false,
    ..ADAMW
};

impl Optimizer {
    /// The optimizer's description.
    ///
    /// Sources: PyTorch `torch/optim/adamw.py` (`_multi_tensor_adamw` keeps
    /// one parameter-sized `exp_avg_sq_sqrt` list; `_single_tensor_adamw`
    /// computes `(exp_avg_sq.sqrt() / bias_correction2_sqrt)` on one tensor
    /// at a time: two temporaries of the largest tensor; `_fused_adamw`
    /// none; one 4-byte `step` per tensor) and `sgd.py` (`momentum_buffer =
    /// clone(grad)`), as measured in the ground truth (20 / 10 bytes per
    /// parameter at the step in fp32 / bf16). bitsandbytes `AdamW8bit`: two
    /// uint8 moments with one fp32 absmax per 256-element block, fused
    /// update; `PagedAdamW`: 32-bit state, paged. Lion (`lion-pytorch`):
    /// one moment; its update `exp_avg.clone().mul_(β1).add(grad, ...)`
    /// briefly holds two copies of a tensor. transformers `Adafactor`
    /// (relative step, no first moment). DeepSpeed's `DeepSpeedCPUAdam` and
    /// `DeepSpeedCPULion` for the offloaded step.
    pub const fn spec(self) -> OptimSpec {
        match self {
            Optimizer::AdamW => ADAMW,
            Optimizer::AdamWForLoop => OptimSpec {
                temps: StepTemps::TwoOfLargest,
                ..ADAMW
            },
            Optimizer::AdamWFused => OptimSpec {
                temps: StepTemps::None,
                ..ADAMW
            },
            Optimizer::AdamW8bit => BNB_ADAMW8BIT,
            Optimizer::PagedAdamW8bit => OptimSpec {
                paged: true,
                ..BNB_ADAMW8BIT
            },
            Optimizer::PagedAdamW => OptimSpec {
                state: State::Moments {
                    count: 2,
                    dtype: MomentDtype::Fp32,
                },
                paged: true,
                ..BNB_ADAMW8BIT
            },
            Optimizer::Lion => OptimSpec {
                state: State::Moments {
                    count: 1,
                    dtype: MomentDtype::State,
                },
                step_counters: false,
                temps: StepTemps::TwoOfLargest,
                host_moments: 1,
                torch_adamw: false,
                ..ADAMW
            },
            Optimizer::Adafactor => OptimSpec {
                state: State::Factored,
                step_counters: false,
                temps: StepTemps::Adafactor,
                cpu_offload: false,
                torch_adamw: false,
                ..ADAMW
            },
            Optimizer::SgdMomentum => OptimSpec {
                state: State::Moments {
                    count: 1,
                    dtype: MomentDtype::State,
                },
                step_counters: false,
                temps: StepTemps::None,
                cpu_offload: false,
                torch_adamw: false,
                seed_state: 1,
                ..ADAMW
            },
            Optimizer::Sgd => OptimSpec {
                state: State::Moments {
                    count: 0,
                    dtype: MomentDtype::State,
                },
                step_counters: false,
                temps: StepTemps::None,
                cpu_offload: false,
                torch_adamw: false,
                seed_state: 0,
                ..ADAMW
            },
        }
    }

    /// bitsandbytes' paged optimizers keep their state in CUDA unified
    /// memory: on the GPU until it runs short, then paged to host memory.
    pub fn paged(self) -> bool {
        self.spec().paged
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

/// What the optimizer's terms read: the run, the model, what trains and
/// how the state is partitioned (the breakdown derives them once).
pub(super) struct Sizes<'a> {
    pub train: &'a Training,
    pub a: &'a Architecture,
    /// The tensors outside the layers this GPU holds (a pipeline stage).
    pub ends: Ends,
    /// GPUs the state is split over, and whether ZeRO (stage >= 1) splits it.
    pub gpus: u32,
    pub zero: u8,
    /// Elements that train, bytes per element of their state, the largest
    /// trainable tensor's elements and the trainable tensors.
    pub trainable: u128,
    pub state_dtype: u128,
    pub largest: u128,
    pub tensors: u128,
    /// LoRA's adapters, when they are what trains.
    pub lora: bool,
    pub lc: LoraCount,
}

/// The optimizer's state and its step's temporaries, as terms (ZeRO
/// stage ≥ 1 partitions them), from its description. DeepSpeed-style
/// `mixed_bf16` adds fp32 master weights and fp32 gradients.
pub(super) fn add_terms(x: &Sizes, put: &mut impl FnMut(T, Term)) {
    let t = x.train;
    let spec = t.optim.spec();
    let (gpus, on) = (x.gpus, x.zero >= 1);
    let mut set = |id: T, f: &[(u128, U)]| put(id, Term::of(f).split(gpus, on));
    let (elems, sb) = (x.trainable, x.state_dtype);
    // The step's temporaries (the same in every step but Adafactor's).
    let mut temps = |f: &[(u128, U)]| {
        set(T::Temps, f);
        set(T::TempsFirstStep, f);
    };
    match spec.temps {
        StepTemps::None | StepTemps::Adafactor => {}
        StepTemps::ParamSized => temps(&[(elems, U::Params), (sb, U::BytesEach)]),
        StepTemps::TwoOfLargest => {
            temps(&[(2, U::Copies), (x.largest, U::Elements), (sb, U::BytesEach)]);
        }
    }
    match spec.state {
        State::Moments { count: 0, .. } => {}
        State::Moments { count, dtype } => {
            let bytes = match dtype {
                MomentDtype::State => sb,
                MomentDtype::Fp32 => 4,
                MomentDtype::Blockwise8bit => 1,
            };
            set(
                T::Moments,
                &[
                    (u128::from(count), U::Copies),
                    (elems, U::Params),
                    (bytes, U::BytesEach),
                ],
            );
            if dtype == MomentDtype::Blockwise8bit {
                set(
                    T::Absmax,
                    &[
                        (u128::from(count), U::Copies),
                        (elems.div_ceil(ABSMAX_BLOCK), U::Elements),
                        (4, U::BytesEach),
                    ],
                );
            }
        }
        State::Factored => adafactor_terms(x, &mut set),
    }
    if spec.step_counters {
        set(
            T::StepCounters,
            &[(x.tensors, U::Tensors), (4, U::BytesEach)],
        );
    }
    if t.dtype == Dtype::MixedBf16 && !x.lora {
        // fp32 master weights and fp32 gradients live with the optimizer
        // (LoRA's adapters are fp32 already).
        set(T::Master, &[(elems, U::Params), (8, U::BytesEach)]);
    }
}

/// Adafactor's factored state and its temporaries: fp32 update and its
/// negation; for half weights also fp32 copies of the weight and its
/// gradient.
fn adafactor_terms(x: &Sizes, set: &mut impl FnMut(T, &[(u128, U)])) {
    let t = x.train;
    let lora = x.lora;
    let copies = if t.dtype.param_bytes() == 2 && !lora {
        4
    } else {
        2
    };
    let (total, at_peak, peak_tensor, big) = if lora {
        // Adapters: all of similar size; the state is whole by the last
        // ones.
        let f = (x.lc.factored, x.lc.tensors);
        let big = (x.lc.largest, 0);
        (f, f, big, big)
    } else {
        let af = adafactor(x.a, x.ends, t.expert_layout(), copies);
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

fn adafactor(a: &Architecture, ends: Ends, experts: ExpertLayout, copies: u128) -> Adafactor {
    let mut total = (0u128, 0u128);
    a.for_each_tensor_as(experts, |at, t| {
        if !ends.holds(at) {
            return;
        }
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
    a.for_each_tensor_as(experts, |at, t| {
        if !ends.holds(at) {
            return;
        }
        let n = at.copies();
        let f = factored_elems(t);
        // Earlier copies of this tensor (earlier layers) come first.
        let before = (so_far.0 + (n - 1) * f, so_far.1 + (n - 1));
        let here = (before.0 + f, before.1 + t.tensors());
        // One tensor's temporaries (one expert's, per-expert linears).
        let elems = t.tensor_elems();
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
