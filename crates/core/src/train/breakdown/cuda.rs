//! CUDA's own allocations that go through PyTorch's caching allocator, so
//! that `torch.cuda.max_memory_allocated()` counts them: cuBLAS's (and
//! cuBLASLt's) workspaces. CUDA only: the measured rows (CPU, fake
//! tensors) hold none, and `tests/ground_truth.rs` leaves them out.

use super::Inputs;
use crate::model::family::{AttnBias, Mlp};
use crate::terms::{Term, TermId as T, Unit as U};

/// The workspaces of the forward's and the backward's threads (the
/// backward's is allocated at its first matmul; counted from the first
/// forward, so that iteration 2 stays iteration 1 plus the optimizer
/// state), by the chosen GPU's compute capability and the release's
/// torch ([`crate::cublas::Blas`]); with a linear bias, cuBLASLt's
/// 1 MiB for the forward's thread where the torch keeps it. A GPU CUDA
/// does not run (AMD, Intel, Apple) gets none; a typed or probed capacity
/// the default size.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    if !x.s.train.cuda_like {
        return;
    }
    let blas = x.c.stack.blas;
    let gpu = x.s.view.capacity.gpu().map(|g| g.cuda_capability());
    let Some(size) = blas.workspace(gpu) else {
        return;
    };
    let spec = x.c.spec;
    let biased = spec.attn_bias != AttnBias::None || spec.mlp == Mlp::Plain;
    let lt = if blas.lt_persistent && biased {
        1 << 20
    } else {
        0
    };
    put(T::CublasWorkspaces, Term::of(&[(2 * size + lt, U::Bytes)]));
}
