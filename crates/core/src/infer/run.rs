//! What an inference run does: the engine, the weights' format, the
//! sequences and their lengths, the key/value cache's dtype, and the
//! engine's own knobs as it names them. Every value here has passed the
//! codec's checks: the estimator takes it without re-validating.

use super::local::{builds, FileName, ReadFile};
use crate::choice::{bounded, choice_enum};
use crate::inputs::{Attn, Batch, Capacity, Overhead};
use crate::lora::{Adapter, AdapterType, LoraRank, Targets};
use crate::model::gguf::{FileType, GgmlType};
use crate::model::{Architecture, FormatOptions, WeightFormat};
use crate::regex::Regex;
use crate::text::ShortText;
use crate::units::Bytes;
use serde::Serialize;

choice_enum! {
    /// The program that runs the model.
    pub enum Engine {
        /// Hugging Face transformers, `model.generate()` with its default
        /// dynamic cache (transformers 5.23, torch 2.15).
        Transformers = "transformers", "transformers generate (5.23)",
        /// vLLM's server or `LLM` class (vLLM 0.33): a pool of key/value
        /// blocks sized from the GPU's memory.
        Vllm = "vllm", "vLLM (0.33)",
        /// llama.cpp's llama-server (build b10488) on a GGUF file: layers
        /// on the GPU or in host memory, `--fit` on by default.
        Llamacpp = "llamacpp", "llama.cpp (b10488)",
        /// Ollama (fb30760, on llama.cpp b10488): its defaults on top of
        /// llama-server.
        Ollama = "ollama", "Ollama (fb30760)",
        /// mlx-lm's `generate` on Apple silicon (mlx-lm d78bf58e, after
        /// 0.31.3).
        Mlx = "mlx", "MLX (mlx-lm 0.31)",
    }
}

/// A key/value cache type, as `--cache-type-k` / `--cache-type-v` name it
/// (`common/arg.cpp: kv_cache_types`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheType {
    F32,
    F16,
    Bf16,
    Q8_0,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Iq4Nl,
}

impl CacheType {
    /// Every type `--cache-type-k` accepts.
    pub const ALL: [CacheType; 9] = [
        CacheType::F32,
        CacheType::F16,
        CacheType::Bf16,
        CacheType::Q8_0,
        CacheType::Q4_0,
        CacheType::Q4_1,
        CacheType::Q5_0,
        CacheType::Q5_1,
        CacheType::Iq4Nl,
    ];

    /// The ggml type it stores (`model::gguf`'s table, the one source of
    /// every type's block).
    pub const fn ggml(self) -> GgmlType {
        match self {
            CacheType::F32 => GgmlType::F32,
            CacheType::F16 => GgmlType::F16,
            CacheType::Bf16 => GgmlType::Bf16,
            CacheType::Q8_0 => GgmlType::Q8_0,
            CacheType::Q4_0 => GgmlType::Q4_0,
            CacheType::Q4_1 => GgmlType::Q4_1,
            CacheType::Q5_0 => GgmlType::Q5_0,
            CacheType::Q5_1 => GgmlType::Q5_1,
            CacheType::Iq4Nl => GgmlType::Iq4Nl,
        }
    }

    /// (elements per block, bytes per block) of its ggml type.
    pub const fn block(self) -> (u64, u64) {
        let t = self.ggml();
        (t.block(), t.block_bytes())
    }

    /// `ggml_is_quantized`: a block of more than one element.
    pub const fn is_quantized(self) -> bool {
        self.block().0 > 1
    }

    /// The name llama.cpp prints and takes (`ggml_type_name`).
    pub const fn name(self) -> &'static str {
        self.ggml().name()
    }

    /// `(name, label)` of every type, for a select box.
    pub const OPTIONS: &'static [(&'static str, &'static str)] = &[
        ("f32", "f32"),
        ("f16", "f16 (the default)"),
        ("bf16", "bf16"),
        ("q8_0", "q8_0 (34 bytes per 32 values)"),
        ("q4_0", "q4_0 (18 bytes per 32)"),
        ("q4_1", "q4_1"),
        ("q5_0", "q5_0"),
        ("q5_1", "q5_1"),
        ("iq4_nl", "iq4_nl"),
    ];

    /// Every name, for a message.
    pub fn names_joined() -> String {
        CacheType::ALL.map(CacheType::name).join(", ")
    }

    /// The type of a name (`None`: not a cache type).
    pub fn from_name(s: &str) -> Option<CacheType> {
        CacheType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// `ggml_row_size(type, n) = n / blck · type_size` (`ggml.c:1338`);
    /// `None` when the block does not divide `n` (ggml asserts it does).
    pub fn row_size(self, n: u64) -> Option<u128> {
        let (blck, size) = self.block();
        n.is_multiple_of(blck)
            .then(|| u128::from(n / blck) * u128::from(size))
    }
}

choice_enum! {
    /// An MLX model's weights: as converted by `mlx_lm.convert`, 16-bit or
    /// quantized (`-q --q-bits N`: N-bit weights with a scale and a bias
    /// per group of `q-group-size` in the model's dtype).
    pub enum MlxWeights {
        Bf16 = "bf16", "bf16",
        Fp16 = "fp16", "fp16",
        Q8 = "8bit", "8-bit",
        Q6 = "6bit", "6-bit",
        Q4 = "4bit", "4-bit",
        Q3 = "3bit", "3-bit",
        Q2 = "2bit", "2-bit",
        Mxfp8 = "mxfp8", "MXFP8 (8-bit floats, a shared scale per 32)",
        Mxfp4 = "mxfp4", "MXFP4 (4-bit floats, a shared scale per 32)",
        Nvfp4 = "nvfp4", "NVFP4 (4-bit floats, a scale per 16)",
    }
}

/// How `mlx_lm.convert -q` stores a quantized matrix: bits per weight,
/// the group (`None`: `q_group_size`), and per group either a scale and a
/// bias in the model's dtype (`affine`) or one 8-bit scale (the
/// microscaling modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlxQuant {
    pub bits: u32,
    pub group: Option<u32>,
    pub affine: bool,
}

impl MlxWeights {
    /// Its quantization (`None`: 16-bit). The microscaling modes take
    /// their mode's group and bits (`--q-mode`, `mlx_lm/utils.py:
    /// quantize_model`, `defaults_for_mode`: mxfp4 32 and 4, nvfp4 16 and
    /// 4, mxfp8 32 and 8), which `mx.quantize` requires; their scales are
    /// `uint8`, without biases. Measured: mlx-cpu 0.32.4
    /// (`scripts/measure/mlx/modes.py`, `modes_rows.jsonl`).
    pub const fn quant(self) -> Option<MlxQuant> {
        let (bits, group) = match self {
            MlxWeights::Bf16 | MlxWeights::Fp16 => return None,
            MlxWeights::Q8 => (8, None),
            MlxWeights::Q6 => (6, None),
            MlxWeights::Q4 => (4, None),
            MlxWeights::Q3 => (3, None),
            MlxWeights::Q2 => (2, None),
            MlxWeights::Mxfp8 => (8, Some(32)),
            MlxWeights::Mxfp4 => (4, Some(32)),
            MlxWeights::Nvfp4 => (4, Some(16)),
        };
        Some(MlxQuant {
            bits,
            group,
            affine: group.is_none(),
        })
    }
}

choice_enum! {
    /// llama.cpp's `-fa` (and Ollama's `OLLAMA_FLASH_ATTENTION`).
    pub enum Flash {
        Auto = "auto", "auto (on where the GPU has the kernel)",
        On = "on", "on",
        Off = "off", "off",
    }
}

bounded!(
    /// Layers placed on the GPU (llama.cpp's `-ngl`, Ollama's `num_gpu`).
    Layers(u32),
    0,
    16_384
);

bounded!(
    /// MLX's `kv_bits`: bits of a quantized cache (`mx.quantize` takes 2 to 8).
    KvBits(u32),
    2,
    8
);

choice_enum! {
    /// llama.cpp's `-sm` (`common/arg.cpp`, b10488): how a model is split
    /// over several GPUs. `row` (matrices split by rows, CUDA only) and
    /// `tensor` (experimental) are not modelled.
    pub enum SplitMode {
        Layer = "layer", "layer: whole layers and their cache per GPU (the default)",
        Single = "none", "none: one GPU only (main_gpu)",
    }
}

bounded!(
    /// A llama.cpp build number (`git rev-list --count` of its commit, as
    /// its releases are named): from the oldest whose start-up vramfit is
    /// held to ([`builds::OLDEST`]).
    ///
    /// [`builds::OLDEST`]: super::local::builds::OLDEST
    LlamaBuild(u32),
    4400,
    999_999
);

bounded!(
    /// A GPU's index (`-mg`): below `llama_max_devices()`, 16.
    GpuIndex(u32),
    0,
    15
);

/// llama.cpp's `-ts`: one proportion per GPU, as `common/arg.cpp` (b10488)
/// reads them (split at `,` or `/`, each by `std::stof`; fewer entries than
/// `llama_max_devices()`, so at most 15). vramfit reads its entries as the
/// GPUs, each the `gpu` chosen; all 0 splits by free memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorSplit {
    /// `f32::to_bits` of each proportion (bits, so that the scenario
    /// compares whole).
    bits: [u32; TensorSplit::MAX],
    n: u8,
}

impl TensorSplit {
    /// The most entries llama.cpp takes (`split_arg.size() >=
    /// llama_max_devices()` is refused).
    pub const MAX: usize = 15;

    /// `None` when there is no entry or more than [`TensorSplit::MAX`], or
    /// a proportion is negative or not finite.
    pub fn new(parts: &[f32]) -> Option<TensorSplit> {
        if parts.is_empty() || parts.len() > Self::MAX {
            return None;
        }
        let mut bits = [0u32; Self::MAX];
        for (b, &p) in bits.iter_mut().zip(parts) {
            if !p.is_finite() || p < 0.0 {
                return None;
            }
            *b = p.to_bits();
        }
        let n = u8::try_from(parts.len()).ok()?;
        Some(TensorSplit { bits, n })
    }

    /// The proportions, one per GPU.
    pub fn parts(&self) -> impl Iterator<Item = f32> + '_ {
        self.bits[..usize::from(self.n)]
            .iter()
            .map(|&b| f32::from_bits(b))
    }

    /// The GPUs: one per entry.
    pub fn gpus(&self) -> usize {
        usize::from(self.n)
    }
}

impl std::fmt::Display for TensorSplit {
    /// As `-ts` takes it: `3,1`, `0.6,0.4`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, p) in self.parts().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl Serialize for TensorSplit {
    /// As a string (`"3,1"`): a float would bring serde_json's float
    /// writer into the page for this one field.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// llama-server's arguments, as llama.cpp names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LlamaArgs {
    /// `-np` (`None`: llama-server's automatic 4 slots, one cache).
    pub n_parallel: Option<Count>,
    /// `-b`, `-ub`.
    pub n_batch: Count,
    pub n_ubatch: Count,
    /// `-ctk`, `-ctv`.
    #[serde(serialize_with = "cache_type")]
    pub cache_type_k: CacheType,
    #[serde(serialize_with = "cache_type")]
    pub cache_type_v: CacheType,
    /// `-fa`.
    pub flash_attn: Flash,
    /// `-ngl` (`None`: automatic, every layer, which `--fit` may lower;
    /// counts the output layer).
    pub n_gpu_layers: Option<Layers>,
    /// `--n-cpu-moe N` (`--cpu-moe`: every layer): the routed experts of
    /// the first N layers stay in host memory (0: none).
    pub n_cpu_moe: Layers,
    /// `-kvu`: one key/value stream for every sequence.
    pub kv_unified: bool,
    /// `--swa-full`: sliding-window layers keep the whole context.
    pub swa_full: bool,
    /// `-ts` (`None`: one GPU).
    pub tensor_split: Option<TensorSplit>,
    /// `-ot` (`None`: none).
    pub override_tensor: Option<TensorOverrides>,
    /// `-sm`, `-mg`.
    pub split_mode: SplitMode,
    pub main_gpu: GpuIndex,
    /// The build whose rules apply.
    pub build: LlamaBuild,
    /// `--fit` (on by default): lowers the context and the layers on the
    /// GPU until the load fits with a margin.
    pub fit: bool,
}

/// llama.cpp's `-ot PATTERN=CPU,...` as typed (`common/arg.cpp:
/// parse_tensor_buffer_overrides`, b10488: split at `,`, then at the first
/// `=`; a tensor takes the first pattern that `std::regex_search` finds in
/// its name, `llama_model_loader::create_tensor`), and the run of layers
/// whose routed experts it moves to host memory for the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TensorOverrides {
    pub text: ShortText,
    /// Layers `lo..hi` (none: `lo == hi`).
    pub host_experts: (u32, u32),
}

/// A layer's tensors as llama.cpp names them: the routed experts', and
/// the others a layer may have (`src/llama-arch.cpp`, b10488).
const EXPERT_TENSORS: [&str; 3] = ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"];
const OTHER_TENSORS: [&str; 13] = [
    "attn_norm",
    "attn_q",
    "attn_k",
    "attn_v",
    "attn_output",
    "ffn_norm",
    "ffn_gate_inp",
    "ffn_gate_shexp",
    "ffn_up_shexp",
    "ffn_down_shexp",
    "ffn_gate",
    "ffn_up",
    "ffn_down",
];

impl TensorOverrides {
    /// The `PATTERN=DEVICE` pairs of `text`, each pattern read; only the
    /// CPU as the device (moving tensors to another GPU is not modelled).
    pub fn patterns(text: &str) -> Result<Vec<Regex>, String> {
        let mut out = Vec::new();
        for pair in text.split(',') {
            let Some((pattern, device)) = pair.split_once('=') else {
                return Err(format!("not PATTERN=CPU (`{pair}` has no `=`)"));
            };
            if device != "CPU" {
                return Err(format!(
                    "not modelled for `{device}`: vramfit models tensors moved to the CPU (PATTERN=CPU)"
                ));
            }
            out.push(
                Regex::new(pattern)
                    .map_err(|e| format!("not a pattern vramfit reads: `{pattern}` has {e}"))?,
            );
        }
        Ok(out)
    }

    /// The layers of a model of `layers` layers whose routed experts the
    /// patterns move to the CPU: every expert tensor of a layer and none
    /// of its others, over one run of layers; the output layer never. A
    /// model without experts has no expert tensor to move.
    pub fn host_experts(text: &str, layers: u32, experts: bool) -> Result<(u32, u32), String> {
        let patterns = Self::patterns(text)?;
        let too_complex = std::cell::Cell::new(false);
        let hits = |name: &str| {
            !too_complex.get()
                && patterns.iter().any(|r| {
                    r.search(name).unwrap_or_else(|| {
                        too_complex.set(true);
                        false
                    })
                })
        };
        if ["output.weight", "output_norm.weight"]
            .iter()
            .any(|n| hits(n))
        {
            return Err(
                "it moves the output layer, which vramfit does not model (n_gpu_layers places it)"
                    .into(),
            );
        }
        let mut run: Option<(u32, u32)> = None;
        for il in 0..layers {
            let name = |t: &str| format!("blk.{il}.{t}.weight");
            if too_complex.get() {
                break;
            }
            if OTHER_TENSORS.iter().any(|t| hits(&name(t))) {
                return Err(format!("it moves tensors of layer {il} other than its routed experts: keep whole layers in host memory with n_gpu_layers"));
            }
            let n = EXPERT_TENSORS.iter().filter(|t| hits(&name(t))).count();
            if n == 0 || !experts {
                continue;
            }
            if n < EXPERT_TENSORS.len() {
                return Err(format!("it moves only some of layer {il}'s expert tensors, which vramfit does not model"));
            }
            run = match run {
                None => Some((il, il + 1)),
                Some((lo, hi)) if hi == il => Some((lo, il + 1)),
                Some(_) => {
                    return Err("its layers are not one run, which vramfit does not model".into())
                }
            };
        }
        if too_complex.get() {
            return Err(format!(
                "a pattern that backtracks past {} steps on a tensor's name: write it more simply",
                crate::regex::MAX_STEPS
            ));
        }
        Ok(run.unwrap_or((0, 0)))
    }
}

/// An option llama.cpp gained at a build (found with `git log -S` on
/// `common/arg.cpp`, numbered by `git rev-list --count`): whether the
/// arguments set it, and how it goes back to its default.
#[derive(Clone, Copy)]
pub struct Since {
    pub first: u32,
    /// The option and the change that brought it.
    pub what: &'static str,
    pub set: fn(&LlamaArgs) -> bool,
    pub reset: fn(&mut LlamaArgs),
}

impl Since {
    pub const N_CPU_MOE: Since = Since {
        first: builds::N_CPU_MOE,
        what: "--n-cpu-moe (#15077)",
        set: |l| l.n_cpu_moe.get() > 0,
        reset: |l| l.n_cpu_moe = Layers(0),
    };
    pub const KV_UNIFIED: Since = Since {
        first: builds::KV_STREAMS,
        what: "--kv-unified (#14363; before it every sequence shared one cache)",
        set: |l| l.kv_unified,
        reset: |l| l.kv_unified = false,
    };
    pub const OVERRIDE_TENSOR: Since = Since {
        first: builds::OVERRIDE_TENSOR,
        what: "-ot (#11397)",
        set: |l| l.override_tensor.is_some(),
        reset: |l| l.override_tensor = None,
    };
    pub const SWA_FULL: Since = Since {
        first: builds::SWA_CACHE,
        what: "--swa-full (#13194; before it sliding layers kept the whole context)",
        set: |l| l.swa_full,
        reset: |l| l.swa_full = false,
    };
}

impl LlamaArgs {
    /// The GPUs the machine has: one per `-ts` entry, else one.
    pub fn gpus(&self) -> usize {
        self.tensor_split.map_or(1, |t| t.gpus())
    }
}

impl Default for LlamaArgs {
    /// llama.cpp b10488's defaults (`common/common.h`).
    fn default() -> Self {
        LlamaArgs {
            n_parallel: None,
            n_batch: Count(2048),
            n_ubatch: Count(512),
            cache_type_k: CacheType::F16,
            cache_type_v: CacheType::F16,
            flash_attn: Flash::Auto,
            n_gpu_layers: None,
            n_cpu_moe: Layers(0),
            kv_unified: false,
            swa_full: false,
            tensor_split: None,
            override_tensor: None,
            split_mode: SplitMode::Layer,
            main_gpu: GpuIndex(0),
            build: LlamaBuild(super::local::BUILD),
            fit: true,
        }
    }
}

/// Ollama's settings, as Ollama names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OllamaArgs {
    /// `OLLAMA_NUM_PARALLEL`.
    pub num_parallel: Count,
    /// `num_gpu` (`None`: llama-server's `--fit` decides).
    pub num_gpu: Option<Layers>,
    /// `OLLAMA_KV_CACHE_TYPE`.
    #[serde(serialize_with = "cache_type")]
    pub kv_cache_type: CacheType,
    /// `OLLAMA_FLASH_ATTENTION` (`None`: unset).
    pub flash_attention: Option<bool>,
}

impl Default for OllamaArgs {
    fn default() -> Self {
        OllamaArgs {
            num_parallel: Count(1),
            num_gpu: None,
            kv_cache_type: CacheType::F16,
            flash_attention: None,
        }
    }
}

/// mlx-lm's `generate` arguments, as mlx-lm names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MlxArgs {
    /// `kv_bits` (`None`: an unquantized cache), `kv_group_size`.
    pub kv_bits: Option<KvBits>,
    pub kv_group_size: Count,
    /// `prefill_step_size`.
    pub prefill_step_size: Count,
    /// `max_kv_size` (`None`: no rotating cache).
    pub max_kv_size: Option<Count>,
    /// The quantized weights' group (`mlx_lm.convert --q-group-size`).
    pub q_group_size: Count,
}

impl Default for MlxArgs {
    /// mlx-lm's defaults (`generate_step`, `convert`).
    fn default() -> Self {
        MlxArgs {
            kv_bits: None,
            kv_group_size: Count(64),
            prefill_step_size: Count(2048),
            max_kv_size: None,
            q_group_size: Count(64),
        }
    }
}

fn cache_type<S: serde::Serializer>(t: &CacheType, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.name())
}

choice_enum! {
    /// The dtype of the key/value cache.
    pub enum KvDtype {
        /// The model's dtype.
        Auto = "auto", "the model's dtype",
        /// float8 (vLLM: e4m3 on CUDA), one byte per element; per-tensor
        /// scales outside the pool.
        Fp8 = "fp8", "fp8",
        /// float8 e4m3.
        Fp8E4m3 = "fp8_e4m3", "fp8 (e4m3)",
        /// float8 e5m2.
        Fp8E5m2 = "fp8_e5m2", "fp8 (e5m2)",
    }
}

choice_enum! {
    /// vLLM's dtype of a recurrent layer's state (`MambaDType`,
    /// `config/cache.py:175`).
    pub enum MambaDtype {
        /// The model's dtype (the convolution state), or for the recurrent
        /// state what the model's config says, else the convolution's.
        Auto = "auto", "auto",
        Float32 = "float32", "float32",
        Bfloat16 = "bfloat16", "bfloat16",
        Float16 = "float16", "float16",
    }
}

impl MambaDtype {
    /// Bytes per element (`None`: `auto`).
    pub fn bytes(self) -> Option<u128> {
        match self {
            MambaDtype::Auto => None,
            MambaDtype::Float32 => Some(4),
            MambaDtype::Bfloat16 | MambaDtype::Float16 => Some(2),
        }
    }
}

impl KvDtype {
    /// Bytes per element, given the model's.
    pub fn bytes(self, model: u64) -> u64 {
        match self {
            KvDtype::Auto => model,
            KvDtype::Fp8 | KvDtype::Fp8E4m3 | KvDtype::Fp8E5m2 => 1,
        }
    }
}

bounded!(
    /// Tokens of a prompt, of a generation, or of a context.
    Tokens(u32),
    1,
    4_194_304
);
bounded!(
    /// `generate`'s `min_new_tokens` (0: none).
    MinNew(u32),
    0,
    4_194_304
);
bounded!(
    /// A share of the GPU's memory in ten-thousandths (9200 = 0.92).
    Share(u16),
    1,
    10_000
);
bounded!(
    /// vLLM's `tensor_parallel_size`: GPUs the model is split over.
    TensorParallel(u32),
    1,
    1024
);
bounded!(
    /// vLLM's `pipeline_parallel_size` and `data_parallel_size`: stages the
    /// layers are split into, replicas of the whole.
    ParallelSize(u32),
    1,
    1024
);
bounded!(
    /// vLLM's `block_size`: tokens per key/value block.
    BlockSize(u32),
    1,
    65_536
);
bounded!(
    /// vLLM's `num_speculative_tokens` of an MTP `speculative_config`:
    /// tokens the drafter proposes a step (0: no speculative decoding).
    SpecTokens(u32),
    0,
    32
);
bounded!(
    /// A count of sequences or tokens an engine takes per step.
    Count(u32),
    1,
    16_777_216
);
bounded!(
    /// GPTQ / AWQ group size (0: one group over the whole input).
    GroupSize(u32),
    0,
    65_536
);

/// The longest sequence the engine is set up for (vLLM's
/// `max_model_len`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxLen {
    /// The model's trained context (its `max_position_embeddings`).
    Model,
    /// vLLM's `auto`: the longest that fits the KV cache.
    Auto,
    /// A number of tokens.
    Tokens(Tokens),
}

/// vLLM's engine arguments, as vLLM names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Vllm {
    /// `gpu_memory_utilization`: the share of the GPU's total memory the
    /// engine may take.
    pub gpu_memory_utilization: Share,
    /// `max_num_seqs` (`None`: vLLM's default for the GPU).
    pub max_num_seqs: Option<Count>,
    /// `max_num_batched_tokens` (`None`: vLLM's default for the GPU).
    pub max_num_batched_tokens: Option<Count>,
    pub block_size: BlockSize,
    /// `enforce_eager`: no CUDA graphs.
    pub enforce_eager: bool,
    pub tensor_parallel_size: TensorParallel,
    /// `kv_cache_memory_bytes`: the pool's size given, instead of what the
    /// profile leaves.
    pub kv_cache_memory: Option<Bytes>,
    /// `pipeline_parallel_size`: stages the layers are split into, one GPU
    /// group each.
    pub pipeline_parallel_size: ParallelSize,
    /// `data_parallel_size`: replicas of the model (a mixture's routed
    /// experts are split over every replica's GPUs).
    pub data_parallel_size: ParallelSize,
    /// `enable_expert_parallel`: a mixture's experts placed whole, split
    /// over the tensor × data parallel GPUs, instead of each sharded.
    pub enable_expert_parallel: bool,
    /// `cpu_offload_gb` (GiB, per GPU): weights held in host memory and
    /// read over UVA.
    pub cpu_offload: Option<Bytes>,
    /// `enable_prefix_caching` (on by default for a hybrid,
    /// `config/model.py:2276-2278`): a Gated DeltaNet hybrid's states in
    /// `align` mode, two blocks a request (R28).
    pub enable_prefix_caching: bool,
    /// `mamba_cache_dtype`, `mamba_ssm_cache_dtype`: a Gated DeltaNet
    /// layer's convolution and recurrent state dtypes (R28).
    pub mamba_cache_dtype: MambaDtype,
    pub mamba_ssm_cache_dtype: MambaDtype,
    /// `speculative_config` `{"method": "mtp", "num_speculative_tokens":
    /// K}`: the checkpoint's MTP layers as the drafter (0: off).
    pub num_speculative_tokens: SpecTokens,
}

impl Default for Vllm {
    /// vLLM 0.33's defaults (`config/cache.py`: utilization 0.92, block
    /// size 16).
    fn default() -> Self {
        Vllm {
            gpu_memory_utilization: Share(9200),
            max_num_seqs: None,
            max_num_batched_tokens: None,
            block_size: BlockSize(16),
            enforce_eager: false,
            tensor_parallel_size: TensorParallel(1),
            kv_cache_memory: None,
            pipeline_parallel_size: ParallelSize(1),
            data_parallel_size: ParallelSize(1),
            enable_expert_parallel: false,
            cpu_offload: None,
            enable_prefix_caching: true,
            mamba_cache_dtype: MambaDtype::Auto,
            mamba_ssm_cache_dtype: MambaDtype::Auto,
            num_speculative_tokens: SpecTokens(0),
        }
    }
}

/// What an inference estimate reads, as the scenario hands it over
/// (`Scenario::infer_run`): the model's architecture (an estimate needs
/// one), the run, the memory beside its tensors and the GPU it is held to
/// (an Apple GPU's unified memory, vLLM's share of the capacity).
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    pub arch: Option<&'a Architecture>,
    pub infer: &'a Inference,
    pub overhead: &'a Overhead,
    pub capacity: &'a Capacity,
}

/// One inference run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Inference {
    pub engine: Engine,
    /// The format the weights are in.
    pub weights: WeightFormat,
    /// GPTQ / AWQ group size.
    pub group_size: GroupSize,
    /// bitsandbytes' nested quantization (`bnb_4bit_use_double_quant`).
    pub double_quant: bool,
    /// `bnb_4bit_compute_dtype` is fp32 rather than bf16.
    pub compute_fp32: bool,
    /// Sequences generated at once (transformers' batch).
    pub batch: Batch,
    /// Prompt tokens per sequence (transformers).
    pub prompt: Tokens,
    /// New tokens per sequence: `generate`'s `max_new_tokens`.
    pub new: Tokens,
    /// `generate`'s `min_new_tokens`.
    pub min_new: MinNew,
    /// The longest sequence (vLLM's `max_model_len`).
    pub ctx: MaxLen,
    pub kv_dtype: KvDtype,
    /// The attention implementation (transformers).
    pub attn: Attn,
    pub vllm: Vllm,
    /// The GGUF file type (llama.cpp, Ollama).
    #[serde(serialize_with = "file_type")]
    pub gguf: FileType,
    /// The MLX weights.
    pub mlx_weights: MlxWeights,
    pub llama: LlamaArgs,
    pub ollama: OllamaArgs,
    pub mlx: MlxArgs,
    /// The GGUF file read (llama.cpp, Ollama): its name, as the link
    /// records it.
    #[serde(serialize_with = "text")]
    pub file: Option<FileName>,
    /// The read file's bytes, which replace the prediction for `gguf`.
    #[serde(serialize_with = "text")]
    pub file_bytes: Option<ReadFile>,
    /// A LoRA adapter loaded beside the model (llama.cpp, Ollama).
    pub lora: LoraArgs,
}

/// A LoRA adapter as a link describes it: the rank it was trained at
/// (`None`: no adapter), its targets, its GGUF type (`None`: the engine's
/// [`super::engine::EngineSpec::adapter_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoraArgs {
    pub r: Option<LoraRank>,
    pub targets: Targets,
    pub ty: Option<AdapterType>,
}

impl Default for LoraArgs {
    fn default() -> Self {
        LoraArgs {
            r: None,
            targets: Targets::ALL,
            ty: None,
        }
    }
}

fn text<T: std::fmt::Display, S: serde::Serializer>(
    t: &Option<T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.collect_str(t),
        None => s.serialize_none(),
    }
}

fn file_type<S: serde::Serializer>(t: &FileType, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.key())
}

impl Inference {
    /// The adapter the engine loads, its type resolved (`None`: none, or
    /// an engine vramfit does not size adapters for).
    pub fn adapter(&self) -> Option<Adapter> {
        let ty = self.lora.ty.or(self.engine.spec().adapter_type)?;
        self.lora.r.map(|r| Adapter {
            r,
            targets: self.lora.targets,
            ty,
        })
    }

    /// The format's options.
    pub fn format_options(&self) -> FormatOptions {
        FormatOptions {
            double_quant: self.double_quant,
            group: self.group_size.get(),
            ..FormatOptions::default()
        }
    }
}

impl Inference {
    /// Whether llama.cpp's `--fit` places the layers: llama-server's `fit`
    /// (on by default) with the placement left to it (`common/fit.cpp` of
    /// b10488 gives up where `-ngl`, `-ts` or tensor overrides, `--n-cpu-moe`
    /// or `-ot`, are set), and under Ollama while `num_gpu` is left out (an
    /// engine's unread arguments stay at their defaults).
    pub fn fits_layers(&self) -> bool {
        let l = &self.llama;
        l.fit
            && l.n_gpu_layers.is_none()
            && l.tensor_split.is_none()
            && l.n_cpu_moe.get() == 0
            && l.override_tensor.is_none()
            && self.ollama.num_gpu.is_none()
    }
}

impl Default for Inference {
    fn default() -> Self {
        Inference {
            engine: super::engine::DEFAULT_ENGINE,
            weights: WeightFormat::Bf16,
            group_size: GroupSize(128),
            double_quant: false,
            compute_fp32: false,
            batch: Batch::ONE,
            prompt: Tokens(1024),
            new: Tokens(256),
            min_new: MinNew(0),
            ctx: MaxLen::Model,
            kv_dtype: KvDtype::Auto,
            attn: Attn::Sdpa,
            vllm: Vllm::default(),
            gguf: FileType::Q4KM,
            mlx_weights: MlxWeights::Q4,
            llama: LlamaArgs::default(),
            ollama: OllamaArgs::default(),
            mlx: MlxArgs::default(),
            file: None,
            file_bytes: None,
            lora: LoraArgs::default(),
        }
    }
}
