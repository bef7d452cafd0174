//! GGUF, llama.cpp's file format, as data: the ggml tensor types
//! ([`GgmlType`]), `llama-quantize`'s file types ([`FileType`]) and its
//! per-tensor choices, so that a model's GGUF bytes are predicted before
//! any file is read ([`predict`]); and the readers of a file's first bytes
//! ([`read_gguf`], [`read_safetensors`]), which give the exact bytes of a
//! file that exists, and the [`Architecture`](super::Architecture) its
//! metadata describes ([`architecture_of`]).
//!
//! Sources: llama.cpp b8973 (`3142f1dbb9d8b492a721a9194872f7901322f622`,
//! 2026-04-29), each module citing its files and functions;
//! `scripts/measure/gguf/NOTES.md` gives the rules in prose and
//! `predict.py` the same prediction in Python, held to the same 41
//! published files (`tests/fixtures/gguf_file_sizes.jsonl`).
//!
//! Part of `model/`: imports nothing of a workload, the codec or the
//! report, and reads the model from its [`Spec`](super::Spec) and the
//! parameter-tensor walk (the family is named only where the converter's
//! own choices are: `layout.rs`'s `Converter` and the
//! architecture names read back in `describe.rs`).

mod classes;
mod describe;
mod ftype;
mod header;
mod layout;
mod predict;
mod quant;
mod runs;
mod safetensors;
mod types;

pub use classes::predict_folded;
pub use describe::{architecture_of, AdapterFile, GgufArchError, GgufModel};
pub use ftype::FileType;
pub use header::{
    read_gguf, GgufError, GgufHeader, MetaArray, MetaKv, MetaValue, TensorInfo, ValueType,
    DEFAULT_ALIGNMENT,
};
pub use layout::{adapter_tensors, AdapterAt, AdapterMisfit};
pub use predict::{
    predict, predict_each, predict_with, GgufWeights, PredictError, Recipe, TensorBytes,
};
pub use quant::{NoFallback, Rules};
pub use runs::{push_run, runs_of, Run};
pub use safetensors::{
    dtype_bits, read_safetensors, SafeTensor, SafetensorsError, SafetensorsHeader,
};
pub use types::GgmlType;

/// The GGUF `general.architecture` the converter writes for a model
/// (`llama` for Llama, Mistral and Mixtral; `nemotron_h_moe` for
/// Nemotron-H with experts).
pub fn gguf_architecture(a: &super::Architecture) -> &'static str {
    let c = layout::Converter::of(a.family);
    match c.moe_arch {
        Some(moe) if a.moe().is_some() => moe,
        Some(_) | None => c.arch,
    }
}

/// Whether llama.cpp counts a family's MTP (NextN) layers as layers with a
/// key/value cache, which vramfit does not model yet
/// (`Converter::nextn_cached`): its llama.cpp estimate is refused.
pub fn nextn_cached(family: super::Family) -> bool {
    layout::Converter::of(family).nextn_cached
}

/// Whether `family`'s converter appends MTP blocks after its layers that
/// llama.cpp does not load (`Converter::mtp_blocks`): a file read leaves
/// their tensors out.
pub fn mtp_skipped(family: super::Family) -> bool {
    layout::Converter::of(family).mtp_blocks > 0
}

/// The layers llama.cpp b10488's loader gives a key/value cache of their
/// own whatever the file says, counted from the first (0: the file says:
/// `Converter::kv_from_start`, Gemma 3n's 20).
pub fn kv_from_start(family: super::Family) -> u32 {
    layout::Converter::of(family).kv_from_start
}

/// Where `needle` first occurs in a tensor's name: a plain scan, which on
/// names of a few dozen bytes costs a tenth of `str::find`'s searcher
/// set-up (measured by instruction counts of one llama.cpp estimate).
pub fn find_in_name(name: &str, needle: &str) -> Option<usize> {
    let (hay, n) = (name.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    (0..(hay.len() + 1).saturating_sub(n.len()))
        .find(|&i| hay[i] == first && hay[i..].starts_with(n))
}

#[cfg(test)]
mod find_tests {
    use super::find_in_name;

    #[test]
    fn finds_as_str_find_does() {
        for (name, needle) in [
            ("blk.3.ffn_down.weight", "ffn_"),
            ("ffn_gate_up_exps.weight", "ffn_"),
            ("attn_q.weight", "ffn_"),
            ("ffn_", "ffn_"),
            ("ffn", "ffn_"),
            ("", "ffn_"),
            ("attn_kv_b.weight", "attn_kv_b.weight"),
            ("x", ""),
        ] {
            let expected = if needle.is_empty() {
                None
            } else {
                name.find(needle)
            };
            assert_eq!(find_in_name(name, needle), expected, "{name} {needle}");
        }
    }
}
