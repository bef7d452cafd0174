//! The validated description of a training run. Every value here has passed
//! the codec's checks: the estimators take it without re-validating.

use crate::choice::choice_enum;
use serde::Serialize;

choice_enum! {
    /// How parameters, gradients and optimizer state are stored, and what
    /// precision the forward pass computes in.
    pub enum Dtype {
        /// Everything in float32.
        Fp32 = "fp32", "fp32 (full precision)",
        /// Parameters, gradients and optimizer state all bfloat16.
        Bf16 = "bf16", "pure bf16",
        /// Parameters, gradients and optimizer state all float16.
        Fp16 = "fp16", "pure fp16",
        /// fp32 master weights, gradients and state; forward and loss under
        /// `torch.autocast(bfloat16)`.
        AmpBf16 = "amp_bf16", "mixed precision (fp32 weights + bf16 autocast)",
    }
}

impl Dtype {
    /// Bytes per parameter, gradient and optimizer-state element.
    pub fn param_bytes(self) -> u64 {
        match self {
            Dtype::Fp32 | Dtype::AmpBf16 => 4,
            Dtype::Bf16 | Dtype::Fp16 => 2,
        }
    }
}

choice_enum! {
    /// The optimizer and its PyTorch implementation variant.
    pub enum Optimizer {
        /// `torch.optim.AdamW(foreach=True)`: the CUDA default.
        AdamW = "adamw", "AdamW (foreach, PyTorch default)",
        /// `torch.optim.AdamW(foreach=False)`: one tensor at a time.
        AdamWForLoop = "adamw_forloop", "AdamW (for-loop)",
        /// `torch.optim.AdamW(fused=True)`.
        AdamWFused = "adamw_fused", "AdamW (fused)",
        /// `torch.optim.SGD` without momentum.
        Sgd = "sgd", "SGD",
        /// `torch.optim.SGD(momentum=0.9)`.
        SgdMomentum = "sgd_mom", "SGD with momentum",
    }
}

/// Declares a whole-number newtype with inclusive bounds checked by `new`.
macro_rules! bounded {
    ($(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name($inner);

        impl $name {
            pub const MIN: $inner = $min;
            pub const MAX: $inner = $max;

            /// `None` outside `MIN..=MAX`.
            pub fn new(v: $inner) -> Option<Self> {
                (Self::MIN..=Self::MAX).contains(&v).then_some($name(v))
            }

            pub fn get(self) -> $inner {
                self.0
            }
        }
    };
}

bounded!(
    /// Total parameter count N: from a thousand to 100 trillion.
    ParamCount(u64),
    1_000,
    100_000_000_000_000
);
bounded!(
    /// Sequences per micro-batch.
    Batch(u32),
    1,
    65_536
);
bounded!(
    /// Tokens per sequence.
    SeqLen(u32),
    1,
    4_194_304
);

/// One training run, as the seed formula sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Scenario {
    pub params: ParamCount,
    pub dtype: Dtype,
    pub optim: Optimizer,
    pub batch: Batch,
    pub seq: SeqLen,
}

impl Default for Scenario {
    /// Qwen2.5-1.5B-sized (the seed's example), bf16, AdamW, 8 x 2048 tokens.
    fn default() -> Self {
        Scenario {
            params: ParamCount(1_543_714_304),
            dtype: Dtype::Bf16,
            optim: Optimizer::AdamW,
            batch: Batch(8),
            seq: SeqLen(2048),
        }
    }
}
