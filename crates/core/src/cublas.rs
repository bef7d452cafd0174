//! cuBLAS's workspaces, which torch allocates from its caching allocator
//! (so `max_memory_allocated` counts them): one per (handle, stream), that
//! is one for each thread that runs a matmul, kept for the process.
//!
//! Source: `aten/src/ATen/cuda/CublasHandlePool.cpp`
//! (`getChosenWorkspaceSize`, `parseChosenWorkspaceSize`: the default
//! `CUBLAS_WORKSPACE_CONFIG` `:4096:2:16:8` is 8,519,680 bytes, 32 MiB on
//! the architectures [`Blas::large_majors`] names) and `CUDABlas.cpp`
//! (cuBLASLt's workspace) in torch 2.4 and in the current tree
//! (`scripts/measure/t4/NOTES.md`, mechanism 11). Measured on an H200
//! (torch 2.11.0+cu130, `scripts/measure/device/`): the first bf16 matmul
//! holds 32 MiB beside its tensors, and `generate`'s peak is its tensors'
//! and 32 MiB (`tests/gpu_rows.rs`).

/// The default workspace: `:4096:2:16:8`, 4096 KiB twice and 16 KiB eight
/// times.
pub const WORKSPACE: u128 = 4096 * 1024 * 2 + 16 * 1024 * 8;
/// On the architectures the torch gives more: `:4096:8`.
pub const WORKSPACE_LARGE: u128 = 4096 * 1024 * 8;

/// What a torch release's cuBLAS handles allocate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blas {
    /// Compute-capability majors given 32 MiB (torch 2.4: Hopper's 9.0
    /// only; later: 9, 10 and 12).
    pub large_majors: &'static [u8],
    /// cuBLASLt keeps its own 1 MiB per thread that ran an Lt matmul (a
    /// linear layer with a bias) rather than one per call (torch 2.4,
    /// transient: not counted).
    pub lt_persistent: bool,
}

/// torch 2.4.1 (cu121), what the transformers 4.x rows ran.
pub const TORCH_2_4: Blas = Blas {
    large_majors: &[9],
    lt_persistent: false,
};

/// torch 2.15, what transformers 5 runs on here.
pub const TORCH_2_15: Blas = Blas {
    large_majors: &[9, 10, 12],
    lt_persistent: true,
};

impl Blas {
    /// One thread's workspace on the chosen GPU: `gpu` is `None` for a
    /// typed or probed capacity (the default size), `Some(None)` for a GPU
    /// CUDA does not run (AMD, Intel, Apple: none), else its compute
    /// capability.
    pub fn workspace(self, gpu: Option<Option<(u8, u8)>>) -> Option<u128> {
        match gpu {
            Some(None) => None,
            Some(Some((major, _))) if self.large_majors.contains(&major) => Some(WORKSPACE_LARGE),
            Some(Some(_)) | None => Some(WORKSPACE),
        }
    }
}
