//! The ggml tensor types a GGUF file can hold: each type's id, name, block
//! size (elements per block) and bytes per block, as data.
//!
//! Source: llama.cpp b8973 (`3142f1db`), `ggml/include/ggml.h` (`enum
//! ggml_type`: the ids), `ggml/src/ggml.c` (`type_traits[]`: `.type_name`,
//! `.blck_size`, `.type_size = sizeof(block_*)`) and
//! `ggml/src/ggml-common.h` (the `static_assert(sizeof(block_*) == …)` that
//! fix each block's bytes; `QK_K = 256`, `K_SCALE_SIZE = 12`). `Q2_0` (id
//! 42) is ggml HEAD `d99724f2` (2026-08-21), after b8973: read so that a
//! newer file's header parses. Ids 4, 5, 31–33 and 36–38 are removed types
//! (`blck_size` 0): a file naming them is refused, as `gguf.cpp` does.

/// A ggml tensor type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GgmlType {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q8_1,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    Q8K,
    Iq2Xxs,
    Iq2Xs,
    Iq3Xxs,
    Iq1S,
    Iq4Nl,
    Iq3S,
    Iq2S,
    Iq4Xs,
    I8,
    I16,
    I32,
    I64,
    F64,
    Iq1M,
    Bf16,
    Tq1_0,
    Tq2_0,
    Mxfp4,
    Nvfp4,
    Q1_0,
    Q2_0,
}

/// A type's facts: ggml id, ggml's name, elements per block, bytes per
/// block.
struct Traits(u32, &'static str, u64, u64);

impl GgmlType {
    /// Every type, in id order.
    pub const ALL: [GgmlType; 35] = [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q8_1,
        GgmlType::Q2K,
        GgmlType::Q3K,
        GgmlType::Q4K,
        GgmlType::Q5K,
        GgmlType::Q6K,
        GgmlType::Q8K,
        GgmlType::Iq2Xxs,
        GgmlType::Iq2Xs,
        GgmlType::Iq3Xxs,
        GgmlType::Iq1S,
        GgmlType::Iq4Nl,
        GgmlType::Iq3S,
        GgmlType::Iq2S,
        GgmlType::Iq4Xs,
        GgmlType::I8,
        GgmlType::I16,
        GgmlType::I32,
        GgmlType::I64,
        GgmlType::F64,
        GgmlType::Iq1M,
        GgmlType::Bf16,
        GgmlType::Tq1_0,
        GgmlType::Tq2_0,
        GgmlType::Mxfp4,
        GgmlType::Nvfp4,
        GgmlType::Q1_0,
        GgmlType::Q2_0,
    ];

    /// How many types there are.
    pub const COUNT: usize = GgmlType::ALL.len();

    /// The one table (see the module's sources): id, name, block, bytes.
    /// Each block's bytes follow its `block_*` struct in `ggml-common.h`
    /// (`ggml_half` 2 bytes): e.g. `block_q4_K` = 2 halves, 12 scale bytes
    /// and 128 nibble bytes = 144.
    const fn traits(self) -> Traits {
        match self {
            GgmlType::F32 => Traits(0, "f32", 1, 4),
            GgmlType::F16 => Traits(1, "f16", 1, 2),
            GgmlType::Q4_0 => Traits(2, "q4_0", 32, 18),
            GgmlType::Q4_1 => Traits(3, "q4_1", 32, 20),
            GgmlType::Q5_0 => Traits(6, "q5_0", 32, 22),
            GgmlType::Q5_1 => Traits(7, "q5_1", 32, 24),
            GgmlType::Q8_0 => Traits(8, "q8_0", 32, 34),
            GgmlType::Q8_1 => Traits(9, "q8_1", 32, 36),
            GgmlType::Q2K => Traits(10, "q2_K", 256, 84),
            GgmlType::Q3K => Traits(11, "q3_K", 256, 110),
            GgmlType::Q4K => Traits(12, "q4_K", 256, 144),
            GgmlType::Q5K => Traits(13, "q5_K", 256, 176),
            GgmlType::Q6K => Traits(14, "q6_K", 256, 210),
            GgmlType::Q8K => Traits(15, "q8_K", 256, 292),
            GgmlType::Iq2Xxs => Traits(16, "iq2_xxs", 256, 66),
            GgmlType::Iq2Xs => Traits(17, "iq2_xs", 256, 74),
            GgmlType::Iq3Xxs => Traits(18, "iq3_xxs", 256, 98),
            GgmlType::Iq1S => Traits(19, "iq1_s", 256, 50),
            GgmlType::Iq4Nl => Traits(20, "iq4_nl", 32, 18),
            GgmlType::Iq3S => Traits(21, "iq3_s", 256, 110),
            GgmlType::Iq2S => Traits(22, "iq2_s", 256, 82),
            GgmlType::Iq4Xs => Traits(23, "iq4_xs", 256, 136),
            GgmlType::I8 => Traits(24, "i8", 1, 1),
            GgmlType::I16 => Traits(25, "i16", 1, 2),
            GgmlType::I32 => Traits(26, "i32", 1, 4),
            GgmlType::I64 => Traits(27, "i64", 1, 8),
            GgmlType::F64 => Traits(28, "f64", 1, 8),
            GgmlType::Iq1M => Traits(29, "iq1_m", 256, 56),
            GgmlType::Bf16 => Traits(30, "bf16", 1, 2),
            GgmlType::Tq1_0 => Traits(34, "tq1_0", 256, 54),
            GgmlType::Tq2_0 => Traits(35, "tq2_0", 256, 66),
            GgmlType::Mxfp4 => Traits(39, "mxfp4", 32, 17),
            GgmlType::Nvfp4 => Traits(40, "nvfp4", 64, 36),
            GgmlType::Q1_0 => Traits(41, "q1_0", 128, 18),
            GgmlType::Q2_0 => Traits(42, "q2_0", 64, 18),
        }
    }

    /// The id a GGUF tensor info stores (`enum ggml_type`).
    pub const fn id(self) -> u32 {
        self.traits().0
    }

    /// ggml's name (`ggml_type_name`): `q4_K`, `iq2_xxs`, `bf16`.
    pub const fn name(self) -> &'static str {
        self.traits().1
    }

    /// Elements per block (`ggml_blck_size`).
    pub const fn block(self) -> u64 {
        self.traits().2
    }

    /// Bytes per block (`ggml_type_size`).
    pub const fn block_bytes(self) -> u64 {
        self.traits().3
    }

    /// The type of a ggml id; `None` for a removed or unknown id.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        GgmlType::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The type's position in [`GgmlType::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// A block type (`ggml_is_quantized`): every type but the plain floats
    /// and integers.
    pub const fn is_quantized(self) -> bool {
        match self {
            GgmlType::F32
            | GgmlType::F16
            | GgmlType::Bf16
            | GgmlType::F64
            | GgmlType::I8
            | GgmlType::I16
            | GgmlType::I32
            | GgmlType::I64 => false,
            GgmlType::Q4_0
            | GgmlType::Q4_1
            | GgmlType::Q5_0
            | GgmlType::Q5_1
            | GgmlType::Q8_0
            | GgmlType::Q8_1
            | GgmlType::Q2K
            | GgmlType::Q3K
            | GgmlType::Q4K
            | GgmlType::Q5K
            | GgmlType::Q6K
            | GgmlType::Q8K
            | GgmlType::Iq2Xxs
            | GgmlType::Iq2Xs
            | GgmlType::Iq3Xxs
            | GgmlType::Iq1S
            | GgmlType::Iq4Nl
            | GgmlType::Iq3S
            | GgmlType::Iq2S
            | GgmlType::Iq4Xs
            | GgmlType::Iq1M
            | GgmlType::Tq1_0
            | GgmlType::Tq2_0
            | GgmlType::Mxfp4
            | GgmlType::Nvfp4
            | GgmlType::Q1_0
            | GgmlType::Q2_0 => true,
        }
    }

    /// Bytes of a contiguous tensor of shape `ne` (ggml order: `ne[0]` is
    /// the row), `ggml_nbytes`: `ne0 / block · bytes · ne1 · ne2 · ne3`;
    /// `None` when `ne0` is not a whole number of blocks (no file holds
    /// such a tensor: `gguf.cpp` refuses it).
    pub fn tensor_bytes(self, ne: &[u64]) -> Option<u128> {
        let (first, rest) = ne.split_first()?;
        let (block, block_bytes) = (self.block(), self.block_bytes());
        if !first.is_multiple_of(block) {
            return None;
        }
        let row = u128::from(first / block) * u128::from(block_bytes);
        // Below 2^64 a product with a u64 cannot overflow: checked only
        // beyond.
        rest.iter().try_fold(row, |n, &d| match u64::try_from(n) {
            Ok(small) => Some(u128::from(small) * u128::from(d)),
            Err(_) => n.checked_mul(u128::from(d)),
        })
    }
}

impl std::fmt::Display for GgmlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
