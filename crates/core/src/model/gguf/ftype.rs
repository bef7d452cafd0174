//! llama.cpp's file types (`llama_ftype`, `LLAMA_FTYPE_MOSTLY_*`): the
//! mixtures `llama-quantize` writes, each with its id (the GGUF key
//! `general.file_type`) and its default tensor type.
//!
//! Source: llama.cpp b8973 (`3142f1db`), `include/llama.h` (`enum
//! llama_ftype`: the ids) and `src/llama-quant.cpp`
//! (`llama_ftype_get_default_type`, `tensor_requires_imatrix`). Id 39
//! (`NVFP4`) has no default type at b8973, so `llama-quantize` cannot
//! write it (NVFP4 files come from ModelOpt checkpoints through the
//! converter): it is not a choice here, and a header naming it keeps the
//! raw id.

use super::types::GgmlType;
use crate::choice::choice_enum;

choice_enum! {
    /// A `llama-quantize` file type, by its lower-case name (`q4_k_m`),
    /// in order of size, largest first.
    pub enum FileType {
        F32 = "f32", "F32",
        Bf16 = "bf16", "BF16",
        F16 = "f16", "F16",
        Q8_0 = "q8_0", "Q8_0",
        Q6K = "q6_k", "Q6_K",
        Q5KM = "q5_k_m", "Q5_K_M",
        Q5KS = "q5_k_s", "Q5_K_S",
        Q5_1 = "q5_1", "Q5_1",
        Q5_0 = "q5_0", "Q5_0",
        Q4KM = "q4_k_m", "Q4_K_M",
        Q4KS = "q4_k_s", "Q4_K_S",
        Q4_1 = "q4_1", "Q4_1",
        Q4_0 = "q4_0", "Q4_0",
        Iq4Xs = "iq4_xs", "IQ4_XS",
        Iq4Nl = "iq4_nl", "IQ4_NL",
        Mxfp4Moe = "mxfp4_moe", "MXFP4_MOE",
        Q3KL = "q3_k_l", "Q3_K_L",
        Q3KM = "q3_k_m", "Q3_K_M",
        Q3KS = "q3_k_s", "Q3_K_S",
        Iq3M = "iq3_m", "IQ3_M",
        Iq3S = "iq3_s", "IQ3_S",
        Iq3Xs = "iq3_xs", "IQ3_XS",
        Iq3Xxs = "iq3_xxs", "IQ3_XXS",
        Q2K = "q2_k", "Q2_K",
        Q2KS = "q2_k_s", "Q2_K_S",
        Iq2M = "iq2_m", "IQ2_M",
        Iq2S = "iq2_s", "IQ2_S",
        Iq2Xs = "iq2_xs", "IQ2_XS",
        Iq2Xxs = "iq2_xxs", "IQ2_XXS",
        Iq1M = "iq1_m", "IQ1_M",
        Iq1S = "iq1_s", "IQ1_S",
        Tq2_0 = "tq2_0", "TQ2_0",
        Tq1_0 = "tq1_0", "TQ1_0",
        Q1_0 = "q1_0", "Q1_0",
    }
}

impl FileType {
    /// The `llama_ftype` id (`general.file_type`) and the default tensor
    /// type (`llama_ftype_get_default_type`). Note the three whose default
    /// is another mixture's type: IQ2_S → IQ2_XS, IQ2_M → IQ2_S,
    /// IQ3_XS → IQ3_S.
    const fn facts(self) -> (u32, GgmlType) {
        match self {
            FileType::F32 => (0, GgmlType::F32),
            FileType::F16 => (1, GgmlType::F16),
            FileType::Q4_0 => (2, GgmlType::Q4_0),
            FileType::Q4_1 => (3, GgmlType::Q4_1),
            FileType::Q8_0 => (7, GgmlType::Q8_0),
            FileType::Q5_0 => (8, GgmlType::Q5_0),
            FileType::Q5_1 => (9, GgmlType::Q5_1),
            FileType::Q2K => (10, GgmlType::Q2K),
            FileType::Q3KS => (11, GgmlType::Q3K),
            FileType::Q3KM => (12, GgmlType::Q3K),
            FileType::Q3KL => (13, GgmlType::Q3K),
            FileType::Q4KS => (14, GgmlType::Q4K),
            FileType::Q4KM => (15, GgmlType::Q4K),
            FileType::Q5KS => (16, GgmlType::Q5K),
            FileType::Q5KM => (17, GgmlType::Q5K),
            FileType::Q6K => (18, GgmlType::Q6K),
            FileType::Iq2Xxs => (19, GgmlType::Iq2Xxs),
            FileType::Iq2Xs => (20, GgmlType::Iq2Xs),
            FileType::Q2KS => (21, GgmlType::Q2K),
            FileType::Iq3Xs => (22, GgmlType::Iq3S),
            FileType::Iq3Xxs => (23, GgmlType::Iq3Xxs),
            FileType::Iq1S => (24, GgmlType::Iq1S),
            FileType::Iq4Nl => (25, GgmlType::Iq4Nl),
            FileType::Iq3S => (26, GgmlType::Iq3S),
            FileType::Iq3M => (27, GgmlType::Iq3S),
            FileType::Iq2S => (28, GgmlType::Iq2Xs),
            FileType::Iq2M => (29, GgmlType::Iq2S),
            FileType::Iq4Xs => (30, GgmlType::Iq4Xs),
            FileType::Iq1M => (31, GgmlType::Iq1M),
            FileType::Bf16 => (32, GgmlType::Bf16),
            FileType::Tq1_0 => (36, GgmlType::Tq1_0),
            FileType::Tq2_0 => (37, GgmlType::Tq2_0),
            FileType::Mxfp4Moe => (38, GgmlType::Mxfp4),
            FileType::Q1_0 => (40, GgmlType::Q1_0),
        }
    }

    /// The id `general.file_type` holds.
    pub const fn id(self) -> u32 {
        self.facts().0
    }

    /// The type every quantizable tensor starts from.
    pub const fn default_type(self) -> GgmlType {
        self.facts().1
    }

    /// The file type of a `general.file_type` id (`None`: not one
    /// `llama-quantize` writes at b8973).
    pub fn from_id(id: u32) -> Option<FileType> {
        FileType::ALL.iter().copied().find(|f| f.id() == id)
    }

    /// Whether `llama-quantize` refuses to write it without an importance
    /// matrix: some tensor takes IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S or
    /// IQ3_XXS, or it is Q2_K_S (`tensor_requires_imatrix`; IQ3_XS sends
    /// attn_q and attn_k to IQ3_XXS).
    pub const fn requires_imatrix(self) -> bool {
        match self {
            FileType::Iq1S
            | FileType::Iq1M
            | FileType::Iq2Xxs
            | FileType::Iq2Xs
            | FileType::Iq2S
            | FileType::Iq2M
            | FileType::Iq3Xxs
            | FileType::Iq3Xs
            | FileType::Q2KS => true,
            FileType::F32
            | FileType::Bf16
            | FileType::F16
            | FileType::Q8_0
            | FileType::Q6K
            | FileType::Q5KM
            | FileType::Q5KS
            | FileType::Q5_1
            | FileType::Q5_0
            | FileType::Q4KM
            | FileType::Q4KS
            | FileType::Q4_1
            | FileType::Q4_0
            | FileType::Iq4Xs
            | FileType::Iq4Nl
            | FileType::Mxfp4Moe
            | FileType::Q3KL
            | FileType::Q3KM
            | FileType::Q3KS
            | FileType::Iq3M
            | FileType::Iq3S
            | FileType::Q2K
            | FileType::Tq2_0
            | FileType::Tq1_0
            | FileType::Q1_0 => false,
        }
    }

    /// The IQ1/IQ2 mixtures, which share one branch of
    /// `llama_tensor_get_type_impl`.
    pub(crate) const fn is_iq2_family(self) -> bool {
        matches!(
            self,
            FileType::Iq2Xxs
                | FileType::Iq2Xs
                | FileType::Iq1S
                | FileType::Iq2S
                | FileType::Iq2M
                | FileType::Iq1M
        )
    }
}
