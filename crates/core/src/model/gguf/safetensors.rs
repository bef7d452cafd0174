//! The safetensors header: an 8-byte little-endian length N, then N bytes
//! of JSON naming every tensor's dtype, shape and byte range in the data
//! that follows.
//!
//! Source: huggingface/safetensors `safetensors/src/tensor.rs`
//! (`Metadata::validate`: offsets contiguous from 0 in offset order, each
//! range `elements × bits / 8` bytes; `MAX_HEADER_SIZE` 100,000,000; the
//! `Dtype` list and `bitsize`). As with GGUF, the answer for bytes that end
//! too soon is [`SafetensorsError::NeedMore`], and nothing is allocated
//! for the length before that many bytes are there.

use serde_json::{Map, Value};
use std::fmt;

/// `MAX_HEADER_SIZE`: larger headers are refused.
const MAX_HEADER: u64 = 100_000_000;

/// Why a safetensors header could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SafetensorsError {
    /// The header goes on past the bytes given: read at least this many
    /// bytes from the start of the file.
    NeedMore { at_least: u64 },
    /// Not a valid header, and why.
    Invalid(String),
}

impl fmt::Display for SafetensorsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SafetensorsError::NeedMore { at_least } => {
                write!(f, "the safetensors header needs at least {at_least} bytes")
            }
            SafetensorsError::Invalid(why) => write!(f, "not a valid safetensors header: {why}"),
        }
    }
}

impl std::error::Error for SafetensorsError {}

/// One tensor of a safetensors file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafeTensor {
    pub name: String,
    /// As written: `BF16`, `F8_E4M3`, `U8` …
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Its bytes, relative to the data section (`data_offsets`).
    pub begin: u64,
    pub end: u64,
}

impl SafeTensor {
    pub fn bytes(&self) -> u64 {
        self.end.saturating_sub(self.begin)
    }
}

/// A safetensors file's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafetensorsHeader {
    /// N, the JSON's length.
    pub header_len: u64,
    /// `8 + N`: where the tensors' bytes start.
    pub data_offset: u64,
    /// `__metadata__`, by key.
    pub metadata: Vec<(String, String)>,
    /// By offset.
    pub tensors: Vec<SafeTensor>,
}

impl SafetensorsHeader {
    /// Every tensor's bytes.
    pub fn tensor_bytes(&self) -> u128 {
        self.tensors.iter().map(|t| u128::from(t.bytes())).sum()
    }
}

/// Bits per element of a safetensors dtype (`Dtype::bitsize`).
pub fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "C64" | "F64" | "I64" | "U64" => 64,
        _ => return None,
    })
}

/// Reads a safetensors header from the first bytes of a file.
pub fn read_safetensors(bytes: &[u8]) -> Result<SafetensorsHeader, SafetensorsError> {
    let invalid = SafetensorsError::Invalid;
    let Some(len) = bytes.get(..8) else {
        return Err(SafetensorsError::NeedMore { at_least: 8 });
    };
    let mut n = [0u8; 8];
    n.copy_from_slice(len);
    let header_len = u64::from_le_bytes(n);
    if header_len > MAX_HEADER {
        return Err(invalid(format!(
            "a header of {header_len} bytes (at most {MAX_HEADER})"
        )));
    }
    let data_offset = 8 + header_len;
    let json = usize::try_from(data_offset)
        .ok()
        .and_then(|end| bytes.get(8..end))
        .ok_or(SafetensorsError::NeedMore {
            at_least: data_offset,
        })?;
    let map: Map<String, Value> =
        serde_json::from_slice(json).map_err(|e| invalid(format!("JSON: {e}")))?;
    let mut metadata = Vec::new();
    let mut tensors = Vec::with_capacity(map.len());
    for (name, v) in &map {
        if name == "__metadata__" {
            metadata = meta(v)?;
        } else {
            tensors.push(tensor(name, v)?);
        }
    }
    tensors.sort_by_key(|t| (t.begin, t.end));
    let mut expected = 0;
    for t in &tensors {
        if t.begin != expected {
            return Err(invalid(format!(
                "tensor {} starts at {}, expected {expected}",
                clip(&t.name),
                t.begin
            )));
        }
        expected = t.end;
    }
    Ok(SafetensorsHeader {
        header_len,
        data_offset,
        metadata,
        tensors,
    })
}

fn clip(s: &str) -> String {
    crate::clip::clip(s, crate::clip::QUOTE)
}

/// `__metadata__`: text values only.
fn meta(v: &Value) -> Result<Vec<(String, String)>, SafetensorsError> {
    let Value::Object(m) = v else {
        return Err(SafetensorsError::Invalid(
            "__metadata__ is not an object".into(),
        ));
    };
    m.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            _ => Err(SafetensorsError::Invalid(format!(
                "__metadata__ {} is not text",
                clip(k)
            ))),
        })
        .collect()
}

/// One tensor entry: dtype, shape, data_offsets, and its byte count held
/// to its shape.
fn tensor(name: &str, v: &Value) -> Result<SafeTensor, SafetensorsError> {
    let bad = |why: &str| SafetensorsError::Invalid(format!("tensor {}: {why}", clip(name)));
    let dtype = v["dtype"].as_str().ok_or_else(|| bad("no dtype"))?;
    let bits = dtype_bits(dtype).ok_or_else(|| bad("an unknown dtype"))?;
    let uints =
        |key: &str| -> Option<Vec<u64>> { v[key].as_array()?.iter().map(Value::as_u64).collect() };
    let shape = uints("shape").ok_or_else(|| bad("no shape of whole numbers"))?;
    let offsets = uints("data_offsets").ok_or_else(|| bad("no data_offsets"))?;
    let &[begin, end] = offsets.as_slice() else {
        return Err(bad("data_offsets is not [begin, end]"));
    };
    let elems = shape
        .iter()
        .try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)))
        .ok_or_else(|| bad("too many elements"))?;
    let size_bits = elems
        .checked_mul(u128::from(bits))
        .ok_or_else(|| bad("too many elements"))?;
    let size = end
        .checked_sub(begin)
        .ok_or_else(|| bad("ends before it begins"))?;
    if !size_bits.is_multiple_of(8) || size_bits / 8 != u128::from(size) {
        return Err(bad("its bytes do not match its shape and dtype"));
    }
    Ok(SafeTensor {
        name: name.to_owned(),
        dtype: dtype.to_owned(),
        shape,
        begin,
        end,
    })
}
