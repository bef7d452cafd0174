//! The GGUF header: metadata and tensor infos, read from a file's first
//! bytes (everything a model's description and its weights' bytes need
//! lies before the data section).
//!
//! Source: llama.cpp b8973 (`3142f1db`), `ggml/include/gguf.h` (the layout)
//! and `ggml/src/gguf.cpp` (`gguf_init_from_file_impl`: the checks, which
//! this reader makes too: versions 2 and 3, at most 1 GiB per string and
//! 2^30 elements per array, no array of arrays, no duplicate key or tensor
//! name, a tensor name under 64 bytes, at most 4 dimensions, a known type
//! whose block divides the row, offsets contiguous in info order with each
//! tensor padded to the alignment, `general.alignment` a u32 power of
//! two). All numbers are little-endian.
//!
//! The bytes come from a local file or a Hub file read by range requests
//! in parts: when the header runs past them the answer is
//! [`GgufError::NeedMore`] with the least length that can go further,
//! never a panic, and nothing is allocated for a count beyond what the
//! bytes given can hold.

use super::types::GgmlType;
use std::fmt;

/// `GGUF_MAX_STRING_LENGTH` and `GGUF_MAX_ARRAY_ELEMENTS`.
const MAX_STRING: u64 = 1 << 30;
const MAX_ARRAY: u64 = 1 << 30;
/// `GGML_MAX_NAME`: a tensor name is shorter.
const MAX_NAME: usize = 64;
/// `GGUF_DEFAULT_ALIGNMENT`.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// Why a header could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GgufError {
    /// The header goes on past the bytes given: read at least this many
    /// bytes from the start of the file, then try again.
    NeedMore { at_least: u64 },
    /// Not a GGUF file (its first 4 bytes are not `GGUF`).
    NotGguf,
    /// A version this reader (and llama.cpp) does not read: 1, or above 3.
    Version(u32),
    /// The file breaks a rule of the format at byte `at`.
    Invalid { at: u64, reason: String },
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::NeedMore { at_least } => {
                write!(f, "the GGUF header needs at least {at_least} bytes")
            }
            GgufError::NotGguf => f.write_str("not a GGUF file (no GGUF magic)"),
            GgufError::Version(v) => write!(
                f,
                "GGUF version {v} is not read (llama.cpp reads versions 2 and 3)"
            ),
            GgufError::Invalid { at, reason } => {
                write!(f, "not a valid GGUF header at byte {at}: {reason}")
            }
        }
    }
}

impl std::error::Error for GgufError {}

/// A metadata value's type (`enum gguf_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    Str,
    Array,
    U64,
    I64,
    F64,
}

impl ValueType {
    const ALL: [ValueType; 13] = [
        ValueType::U8,
        ValueType::I8,
        ValueType::U16,
        ValueType::I16,
        ValueType::U32,
        ValueType::I32,
        ValueType::F32,
        ValueType::Bool,
        ValueType::Str,
        ValueType::Array,
        ValueType::U64,
        ValueType::I64,
        ValueType::F64,
    ];

    /// The type of id `id` (0 u8 … 12 f64).
    pub fn from_id(id: u32) -> Option<ValueType> {
        usize::try_from(id)
            .ok()
            .and_then(|i| ValueType::ALL.get(i).copied())
    }

    /// Bytes of one value of a fixed-size type (`None`: string, array).
    pub const fn size(self) -> Option<u64> {
        match self {
            ValueType::U8 | ValueType::I8 | ValueType::Bool => Some(1),
            ValueType::U16 | ValueType::I16 => Some(2),
            ValueType::U32 | ValueType::I32 | ValueType::F32 => Some(4),
            ValueType::U64 | ValueType::I64 | ValueType::F64 => Some(8),
            ValueType::Str | ValueType::Array => None,
        }
    }
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum MetaValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    U64(u64),
    I64(i64),
    F64(f64),
    Array(MetaArray),
}

impl MetaValue {
    /// A whole number of any integer type, if it is one and not negative.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            MetaValue::U8(v) => Some(v.into()),
            MetaValue::U16(v) => Some(v.into()),
            MetaValue::U32(v) => Some(v.into()),
            MetaValue::U64(v) => Some(v),
            MetaValue::I8(v) => u64::try_from(v).ok(),
            MetaValue::I16(v) => u64::try_from(v).ok(),
            MetaValue::I32(v) => u64::try_from(v).ok(),
            MetaValue::I64(v) => u64::try_from(v).ok(),
            MetaValue::F32(_)
            | MetaValue::F64(_)
            | MetaValue::Bool(_)
            | MetaValue::Str(_)
            | MetaValue::Array(_) => None,
        }
    }

    /// The array of an array value.
    pub fn as_array(&self) -> Option<&MetaArray> {
        match self {
            MetaValue::Array(a) => Some(a),
            MetaValue::U8(_)
            | MetaValue::I8(_)
            | MetaValue::U16(_)
            | MetaValue::I16(_)
            | MetaValue::U32(_)
            | MetaValue::I32(_)
            | MetaValue::F32(_)
            | MetaValue::Bool(_)
            | MetaValue::Str(_)
            | MetaValue::U64(_)
            | MetaValue::I64(_)
            | MetaValue::F64(_) => None,
        }
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            MetaValue::Str(s) => Some(s),
            MetaValue::U8(_)
            | MetaValue::I8(_)
            | MetaValue::U16(_)
            | MetaValue::I16(_)
            | MetaValue::U32(_)
            | MetaValue::I32(_)
            | MetaValue::F32(_)
            | MetaValue::Bool(_)
            | MetaValue::U64(_)
            | MetaValue::I64(_)
            | MetaValue::F64(_)
            | MetaValue::Array(_) => None,
        }
    }
}

/// An array value: its elements' type and count, and where they lie in
/// the file. Numbers and booleans are kept (as many bytes as the file
/// spends on them); strings are not (a tokenizer's vocabulary is most of
/// a header): [`MetaArray::strings`] reads them from the bytes again.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaArray {
    pub elem: ValueType,
    pub len: u64,
    /// File offset of the first element.
    pub at: u64,
    /// File offset just past the last element.
    pub end: u64,
    /// The elements, unless they are strings.
    pub values: Vec<MetaValue>,
}

impl MetaArray {
    /// The strings of a string array, from the file's bytes (at least up
    /// to [`MetaArray::end`]).
    pub fn strings(&self, bytes: &[u8]) -> Result<Vec<String>, GgufError> {
        if self.elem != ValueType::Str {
            return Ok(Vec::new());
        }
        let mut r = Reader::at(bytes, self.at);
        let mut out = Vec::new();
        for _ in 0..self.len {
            out.push(r.string()?);
        }
        Ok(out)
    }
}

/// One metadata key and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct MetaKv {
    pub key: String,
    pub value: MetaValue,
}

/// One tensor's info.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub ty: GgmlType,
    /// Dimensions (1 to 4; 0 for a scalar).
    pub n_dims: u32,
    /// ggml shape, `ne[0]` the row; dimensions past `n_dims` are 1.
    pub ne: [u64; 4],
    /// Offset in the data section.
    pub offset: u64,
    /// `ggml_nbytes`: `ne0 / block · bytes per block · ne1 · ne2 · ne3`.
    pub bytes: u64,
}

impl TensorInfo {
    /// The shape as stored (`n_dims` entries).
    pub fn shape(&self) -> &[u64] {
        let n = usize::try_from(self.n_dims).unwrap_or(4).min(4);
        &self.ne[..n]
    }
}

/// A GGUF file's header.
#[derive(Clone, Debug, PartialEq)]
pub struct GgufHeader {
    /// 2 or 3.
    pub version: u32,
    /// `general.alignment`, or 32.
    pub alignment: u64,
    /// Where the tensor infos end: the header's bytes.
    pub header_len: u64,
    /// Where the data section starts: `header_len` rounded up to the
    /// alignment.
    pub data_offset: u64,
    /// In file order.
    pub metadata: Vec<MetaKv>,
    /// In file order.
    pub tensors: Vec<TensorInfo>,
}

impl GgufHeader {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&MetaValue> {
        self.metadata
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| &kv.value)
    }

    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// Every tensor's bytes (what llama.cpp loads).
    pub fn tensor_bytes(&self) -> u128 {
        self.tensors.iter().map(|t| u128::from(t.bytes)).sum()
    }

    /// The whole file: the data section ends with the last tensor, padded.
    pub fn file_size(&self) -> u128 {
        let a = u128::from(self.alignment.max(1));
        let data: u128 = self
            .tensors
            .iter()
            .map(|t| u128::from(t.bytes).div_ceil(a) * a)
            .sum();
        u128::from(self.data_offset) + data
    }
}

/// Reads a GGUF header from the first bytes of a file (see the module's
/// doc for the checks, and [`GgufError::NeedMore`]).
pub fn read_gguf(bytes: &[u8]) -> Result<GgufHeader, GgufError> {
    let mut r = Reader::at(bytes, 0);
    if r.take(4)? != b"GGUF" {
        return Err(GgufError::NotGguf);
    }
    let version = r.u32()?;
    // A big-endian file reads as 0x0003_0000 here.
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version(version));
    }
    let n_tensors = r.count("the tensor count")?;
    let n_kv = r.count("the key count")?;
    // A key takes at least 13 bytes (length, type, one byte), a tensor
    // info 24: no count beyond what the bytes can hold is allocated.
    let mut metadata = Vec::with_capacity(r.capacity(n_kv, 13));
    for _ in 0..n_kv {
        metadata.push(r.kv()?);
    }
    no_duplicates(metadata.iter().map(|kv| kv.key.as_str()), "key")?;
    let alignment = alignment(&metadata)?;
    let mut tensors = Vec::with_capacity(r.capacity(n_tensors, 24));
    let mut expected = 0u64;
    for _ in 0..n_tensors {
        let at = r.pos;
        let t = r.tensor_info()?;
        if t.offset != expected {
            return Err(invalid(
                at,
                format!(
                    "tensor {} has offset {}, expected {expected}",
                    t.name, t.offset
                ),
            ));
        }
        expected = pad(t.bytes, alignment)
            .and_then(|p| expected.checked_add(p))
            .ok_or_else(|| invalid(at, "the data section exceeds 2^64 bytes".into()))?;
        tensors.push(t);
    }
    no_duplicates(tensors.iter().map(|t| t.name.as_str()), "tensor name")?;
    let header_len = r.pos;
    let data_offset = pad(header_len, alignment)
        .ok_or_else(|| invalid(header_len, "the header exceeds 2^64 bytes".into()))?;
    Ok(GgufHeader {
        version,
        alignment,
        header_len,
        data_offset,
        metadata,
        tensors,
    })
}

fn invalid(at: u64, reason: String) -> GgufError {
    GgufError::Invalid { at, reason }
}

/// `n` rounded up to a multiple of `a` (a power of two).
fn pad(n: u64, a: u64) -> Option<u64> {
    n.checked_next_multiple_of(a)
}

/// `general.alignment`: a u32 power of two when present, else 32.
fn alignment(metadata: &[MetaKv]) -> Result<u64, GgufError> {
    match metadata.iter().find(|kv| kv.key == "general.alignment") {
        None => Ok(DEFAULT_ALIGNMENT),
        Some(MetaKv {
            value: MetaValue::U32(a),
            ..
        }) if a.is_power_of_two() => Ok(u64::from(*a)),
        Some(_) => Err(invalid(
            0,
            "general.alignment must be a u32 power of two".into(),
        )),
    }
}

/// Refuses a repeated name (sorted, so a header of a million keys is
/// checked in n log n).
fn no_duplicates<'a>(
    names: impl Iterator<Item = &'a str>,
    what: &'static str,
) -> Result<(), GgufError> {
    let mut v: Vec<&str> = names.collect();
    v.sort_unstable();
    match v.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(invalid(0, format!("duplicate {what} {:?}", clip(w[0])))),
        None => Ok(()),
    }
}

fn clip(s: &str) -> String {
    crate::clip::clip(s, crate::clip::QUOTE)
}

/// A cursor over the bytes given, in file offsets.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: u64,
}

impl<'a> Reader<'a> {
    fn at(bytes: &'a [u8], pos: u64) -> Self {
        Reader { bytes, pos }
    }

    /// The next `n` bytes, or how many the file must have to hold them.
    fn take(&mut self, n: u64) -> Result<&'a [u8], GgufError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| invalid(self.pos, "a length beyond 2^64".into()))?;
        let slice = usize::try_from(self.pos)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| self.bytes.get(s..e));
        match slice {
            Some(s) => {
                self.pos = end;
                Ok(s)
            }
            None => Err(GgufError::NeedMore { at_least: end }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let s = self.take(N as u64)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// An `i64` count that must not be negative (`gguf.cpp` reads the
    /// tensor and key counts as `int64_t`).
    fn count(&mut self, what: &str) -> Result<u64, GgufError> {
        let at = self.pos;
        let n = i64::from_le_bytes(self.array()?);
        u64::try_from(n).map_err(|_| invalid(at, format!("{what} is negative ({n})")))
    }

    /// Room to reserve for `n` items of at least `min` bytes each: no
    /// more than the bytes left can hold.
    fn capacity(&self, n: u64, min: u64) -> usize {
        let left = (self.bytes.len() as u64).saturating_sub(self.pos);
        usize::try_from(n.min(left / min)).unwrap_or(0)
    }

    /// A string: a u64 byte length, then UTF-8 bytes (read leniently, as
    /// `gguf.cpp` keeps any bytes).
    fn string(&mut self) -> Result<String, GgufError> {
        let bytes = self.string_bytes()?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    fn string_bytes(&mut self) -> Result<&'a [u8], GgufError> {
        let at = self.pos;
        let n = self.u64()?;
        if n > MAX_STRING {
            return Err(invalid(at, format!("a string of {n} bytes (at most 2^30)")));
        }
        self.take(n)
    }

    fn value_type(&mut self) -> Result<ValueType, GgufError> {
        let at = self.pos;
        let id = self.u32()?;
        ValueType::from_id(id).ok_or_else(|| invalid(at, format!("value type {id}")))
    }

    /// One key and its value.
    fn kv(&mut self) -> Result<MetaKv, GgufError> {
        let key = self.string()?;
        let ty = self.value_type()?;
        let value = match ty {
            ValueType::Array => MetaValue::Array(self.meta_array()?),
            other => self.scalar(other)?,
        };
        Ok(MetaKv { key, value })
    }

    /// One value of a type other than array.
    fn scalar(&mut self, ty: ValueType) -> Result<MetaValue, GgufError> {
        Ok(match ty {
            ValueType::U8 => MetaValue::U8(u8::from_le_bytes(self.array()?)),
            ValueType::I8 => MetaValue::I8(i8::from_le_bytes(self.array()?)),
            ValueType::U16 => MetaValue::U16(u16::from_le_bytes(self.array()?)),
            ValueType::I16 => MetaValue::I16(i16::from_le_bytes(self.array()?)),
            ValueType::U32 => MetaValue::U32(self.u32()?),
            ValueType::I32 => MetaValue::I32(i32::from_le_bytes(self.array()?)),
            ValueType::F32 => MetaValue::F32(f32::from_le_bytes(self.array()?)),
            ValueType::Bool => MetaValue::Bool(self.array::<1>()? != [0]),
            ValueType::Str => MetaValue::Str(self.string()?),
            ValueType::U64 => MetaValue::U64(self.u64()?),
            ValueType::I64 => MetaValue::I64(i64::from_le_bytes(self.array()?)),
            ValueType::F64 => MetaValue::F64(f64::from_le_bytes(self.array()?)),
            ValueType::Array => {
                return Err(invalid(self.pos, "an array of arrays".into()));
            }
        })
    }

    /// An array: element type, count, elements (strings skipped over,
    /// numbers kept).
    fn meta_array(&mut self) -> Result<MetaArray, GgufError> {
        let at_type = self.pos;
        let elem = self.value_type()?;
        let len = self.u64()?;
        if len > MAX_ARRAY {
            return Err(invalid(
                at_type,
                format!("an array of {len} elements (at most 2^30)"),
            ));
        }
        let at = self.pos;
        let values = match elem.size() {
            Some(size) => {
                // Check the whole array is there before reading any of it.
                let mut all = Reader::at(self.take(len * size)?, 0);
                let mut v = Vec::with_capacity(all.capacity(len, size));
                for _ in 0..len {
                    v.push(all.scalar(elem)?);
                }
                v
            }
            None if elem == ValueType::Str => {
                for _ in 0..len {
                    self.string_bytes()?;
                }
                Vec::new()
            }
            None => return Err(invalid(at_type, "an array of arrays".into())),
        };
        Ok(MetaArray {
            elem,
            len,
            at,
            end: self.pos,
            values,
        })
    }

    /// One tensor info: name, dimensions, shape, type, offset.
    fn tensor_info(&mut self) -> Result<TensorInfo, GgufError> {
        let at = self.pos;
        let name = self.string()?;
        if name.len() >= MAX_NAME {
            return Err(invalid(
                at,
                format!("tensor name {:?} is 64 bytes or more", clip(&name)),
            ));
        }
        let n_dims = self.u32()?;
        if n_dims > 4 {
            return Err(invalid(
                at,
                format!("tensor {name} has {n_dims} dimensions (at most 4)"),
            ));
        }
        let mut ne = [1u64; 4];
        for d in ne.iter_mut().take(n_dims as usize) {
            let n = i64::from_le_bytes(self.array()?);
            *d = u64::try_from(n)
                .map_err(|_| invalid(at, format!("tensor {name} has a negative dimension")))?;
        }
        let id = self.u32()?;
        let offset = self.u64()?;
        let bad = |why: String| invalid(at, format!("tensor {name}: {why}"));
        let ty = GgmlType::from_id(id).ok_or_else(|| bad(format!("unknown ggml type {id}")))?;
        let elems = ne
            .iter()
            .try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)))
            .filter(|&n| n < i64::MAX as u128);
        if elems.is_none() {
            return Err(bad("more than 2^63 elements".into()));
        }
        let bytes = ty
            .tensor_bytes(&ne)
            .ok_or_else(|| bad(format!("rows of {} are not whole {ty} blocks", ne[0])))?;
        let bytes = u64::try_from(bytes).map_err(|_| bad("more than 2^64 bytes".into()))?;
        Ok(TensorInfo {
            name,
            ty,
            n_dims,
            ne,
            offset,
            bytes,
        })
    }
}
