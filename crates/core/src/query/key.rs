//! Every query key, typed: the codec's fields are keyed by it, and every
//! other place that names a key (the solver's changes, the importer's keys,
//! the form's rules, the page) uses it, so a misspelt key does not compile.

use crate::model::ArchNum;
use std::fmt;

/// Declares the keys that are not architecture numbers, each with its
/// text; the architecture numbers are [`Key::Arch`].
macro_rules! keys {
    ($( $(#[$m:meta])* $variant:ident = $text:literal, )+) => {
        /// A query key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key {
            $( $(#[$m])* $variant, )+
            /// An architecture number (`hidden`, `layers`, ...).
            Arch(ArchNum),
        }

        impl Key {
            /// The keys that are not architecture numbers.
            const NAMED: &'static [Key] = &[$(Key::$variant),+];

            /// Every key: the named ones, then each architecture number.
            pub fn all() -> impl Iterator<Item = Key> {
                Key::NAMED
                    .iter()
                    .copied()
                    .chain(ArchNum::ALL.iter().map(|n| Key::Arch(*n)))
            }

            /// The key as written in a query string.
            pub const fn text(self) -> &'static str {
                match self {
                    $( Key::$variant => $text, )+
                    Key::Arch(n) => n.key(),
                }
            }

            /// The key a query string names, if it is one.
            pub fn from_text(text: &str) -> Option<Key> {
                match text {
                    $( $text => Some(Key::$variant), )+
                    other => ArchNum::from_key(other).map(Key::Arch),
                }
            }
        }
    };
}

keys! {
    Task = "task",
    Model = "model",
    Params = "params",
    LikeLlama = "like_llama",
    Hub = "hub",
    Multimodal = "multimodal",
    Family = "family",
    Tied = "tied",
    Dtype = "dtype",
    Optim = "optim",
    Batch = "batch",
    Seq = "seq",
    GradAccum = "grad_accum",
    GradCkpt = "grad_ckpt",
    Attn = "attn",
    LoraR = "lora_r",
    LoraTargets = "lora_targets",
    LoraDropout = "lora_dropout",
    Dora = "dora",
    LoraType = "lora_type",
    Quant = "quant",
    DoubleQuant = "double_quant",
    BnbCompute = "bnb_compute",
    KbitPrep = "kbit_prep",
    KeepOutputs = "keep_outputs",
    AuxLoss = "aux_loss",
    Dropout = "dropout",
    CudaLike = "cuda_like",
    UseCache = "use_cache",
    Transformers = "transformers",
    Trainer = "trainer",
    Engine = "engine",
    Weights = "weights",
    GroupSize = "group_size",
    Prompt = "prompt",
    New = "new",
    MinNew = "min_new",
    Ctx = "ctx",
    KvDtype = "kv_dtype",
    GpuMemoryUtilization = "gpu_memory_utilization",
    MaxNumSeqs = "max_num_seqs",
    MaxNumBatchedTokens = "max_num_batched_tokens",
    BlockSize = "block_size",
    EnforceEager = "enforce_eager",
    TensorParallelSize = "tensor_parallel_size",
    KvCacheMemory = "kv_cache_memory",
    PipelineParallelSize = "pipeline_parallel_size",
    DataParallelSize = "data_parallel_size",
    EnableExpertParallel = "enable_expert_parallel",
    EnablePrefixCaching = "enable_prefix_caching",
    MambaCacheDtype = "mamba_cache_dtype",
    MambaSsmCacheDtype = "mamba_ssm_cache_dtype",
    NumSpeculativeTokens = "num_speculative_tokens",
    CpuOffloadGb = "cpu_offload_gb",
    NParallel = "n_parallel",
    NBatch = "n_batch",
    NUbatch = "n_ubatch",
    CacheTypeK = "cache_type_k",
    CacheTypeV = "cache_type_v",
    FlashAttn = "flash_attn",
    NGpuLayers = "n_gpu_layers",
    NCpuMoe = "n_cpu_moe",
    KvUnified = "kv_unified",
    SwaFull = "swa_full",
    TensorSplit = "tensor_split",
    OverrideTensor = "override_tensor",
    SplitMode = "split_mode",
    MainGpu = "main_gpu",
    LlamaBuild = "build",
    Fit = "fit",
    NumParallel = "num_parallel",
    NumGpu = "num_gpu",
    KvCacheType = "kv_cache_type",
    FlashAttention = "flash_attention",
    KvBits = "kv_bits",
    KvGroupSize = "kv_group_size",
    PrefillStepSize = "prefill_step_size",
    MaxKvSize = "max_kv_size",
    QGroupSize = "q_group_size",
    File = "file",
    FileBytes = "file_bytes",
    Gpus = "gpus",
    Tp = "tp",
    Pp = "pp",
    PpSchedule = "pp_schedule",
    Vpp = "vpp",
    PpSplit = "pp_split",
    PpFirstLess = "pp_first_less",
    PpLastLess = "pp_last_less",
    MicroBatches = "micro_batches",
    Zero = "zero",
    Offload = "offload",
    Shard = "shard",
    BackwardPrefetch = "backward_prefetch",
    DsBuckets = "ds_buckets",
    CtxMib = "ctx_mib",
    ReservePct = "reserve_pct",
    ExpandableSegments = "expandable_segments",
    Gpu = "gpu",
    CapacityGib = "capacity_gib",
    ProbeBytes = "probe_bytes",
    ProbeAdapter = "probe_adapter",
    Unit = "unit",
    Iters = "iters",
    Leak = "leak",
    LeakMib = "leak_mib",
    DatasetMib = "dataset_mib",
}

impl Key {
    /// The codec's field for this key (every key has one: tested).
    pub fn field(self) -> Option<&'static super::Field> {
        super::FIELDS.iter().find(|f| f.key == self)
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        self.text()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}
