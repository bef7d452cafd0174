//! ggml's sizes that the local runners' memory follows: the cache types
//! and their blocks (`ggml_row_size`), `GGML_PAD`, and CUDA's row padding
//! of quantized tensors.
//!
//! Source: llama.cpp b10488 (`9d77fa17`), `ggml/src/ggml.c` and
//! `ggml/src/ggml-cuda/ggml-cuda.cu`.

pub use crate::infer::run::CacheType;

/// One mebibyte.
pub const MIB: u128 = 1 << 20;
/// One gibibyte.
pub const GIB: u128 = 1 << 30;

/// CUDA's padding of a cache type's rows (the type itself is an input:
/// `crate::infer::run`).
impl CacheType {
    /// Bytes a CUDA buffer adds to one tensor of this type, `nbytes`
    /// long, whose rows are `ne0` wide ([`cuda_extra`]).
    pub fn cuda_extra(self, nbytes: u128, ne0: u64) -> u128 {
        let (blck, size) = self.block();
        cuda_extra(nbytes, cuda_row_pad(blck, size, ne0))
    }
}

/// `GGML_PAD(x, n)`: `x` rounded up to a multiple of `n` (`n` > 0).
pub const fn pad(x: u128, n: u128) -> u128 {
    x.div_ceil(n) * n
}

/// `MATRIX_ROW_PADDING` (`ggml-cuda/common.cuh`): CUDA's quantized matrix
/// kernels read rows in multiples of 512 elements.
pub const CUDA_ROW_PADDING: u64 = 512;

/// Bytes the CUDA buffer type allocates beyond `ggml_nbytes` for one
/// tensor of a type of `blck` elements in `size` bytes per block, rows
/// `ne0` wide: a quantized tensor whose rows are not a multiple of 512
/// elements gets `ggml_row_size(type, 512 - ne0 % 512)` more
/// (`ggml_backend_cuda_buffer_type_get_alloc_size`, `ggml-cuda.cu:906-922`).
/// Unquantized types (a block of one) get none. For weights of any ggml
/// type: the GGUF reader knows each tensor's type and `ne0`.
pub fn cuda_row_pad(blck: u64, size: u64, ne0: u64) -> u128 {
    let rest = ne0 % CUDA_ROW_PADDING;
    if blck <= 1 || rest == 0 {
        return 0;
    }
    u128::from((CUDA_ROW_PADDING - rest) / blck) * u128::from(size)
}

/// The CUDA buffer type's alignment (`ggml_backend_cuda_buffer_type_get_alignment`,
/// `ggml-cuda.cu:900-902`).
pub const CUDA_ALIGNMENT: u128 = 128;

/// Bytes a CUDA buffer allocates beyond a tensor's `nbytes`: its row
/// padding, then the whole rounded up to the alignment (each tensor takes
/// `GGML_PAD(get_alloc_size, alignment)`,
/// `ggml-alloc.c: ggml_backend_alloc_ctx_tensors_from_buft_impl`, `:1183`).
pub const fn cuda_extra(nbytes: u128, row_pad: u128) -> u128 {
    pad(nbytes + row_pad, CUDA_ALIGNMENT) - nbytes
}
