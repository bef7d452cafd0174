//! CUDA's own allocations that go through PyTorch's caching allocator, so
//! that `torch.cuda.max_memory_allocated()` counts them: cuBLAS's (and
//! cuBLASLt's) workspaces. CUDA only: the measured rows (CPU, fake
//! tensors) hold none, and `tests/ground_truth.rs` leaves them out.

use super::Inputs;
use crate::model::family::{AttnBias, Mlp};
use crate::terms::{Term, TermId as T, Unit as U};

/// The default cuBLAS workspace: `:4096:2:16:8`, 4096 KiB twice and 16 KiB
/// eight times.
const WORKSPACE: u128 = 4096 * 1024 * 2 + 16 * 1024 * 8;
/// On the architectures the torch gives more: `:4096:8`.
const WORKSPACE_LARGE: u128 = 4096 * 1024 * 8;

/// The workspaces of the forward's and the backward's threads (the
/// backward's is allocated at its first matmul; counted from the first
/// forward, so that iteration 2 stays iteration 1 plus the optimizer
/// state), by the chosen GPU's compute capability and the release's
/// torch ([`crate::train::stack::Blas`]); with a linear bias, cuBLASLt's
/// 1 MiB for the forward's thread where the torch keeps it. A GPU CUDA
/// does not run (AMD, Intel, Apple) gets none; a typed or probed capacity
/// the default size.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    if !x.s.train.cuda_like {
        return;
    }
    let blas = x.c.stack.blas;
    let gpu = x.s.view.capacity.gpu();
    let size = match gpu.map(|g| g.cuda_capability()) {
        Some(None) => return,
        Some(Some((major, _))) if blas.large_majors.contains(&major) => WORKSPACE_LARGE,
        Some(Some(_)) | None => WORKSPACE,
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
