//! The tensors `convert_hf_to_gguf.py` writes for a model, read from the
//! parameter-tensor walk ([`Architecture::for_each_tensor`]): each
//! transformers tensor becomes its GGUF tensor (or two: a fused experts'
//! `gate_up_proj`, DeepSeek's `kv_b_proj`), with its ggml shape and the
//! float type the converter gives it. `llama-quantize` then picks each
//! one's type (`quant.rs`).
//!
//! Source: llama.cpp b8973 (`3142f1db`) `convert_hf_to_gguf.py`
//! (`ModelBase.prepare_tensors`: 1-D tensors, `*_norm.weight`, the MoE
//! router `ffn_gate_inp`, position embeddings and every `.bias` are forced
//! to F32; `LlamaModel`, `Qwen2Model`, `Qwen2MoeModel`, `Gemma*Model`,
//! `Phi3MiniModel`, `GptOssModel`, `DeepseekV2Model`, `GPT2Model`,
//! `StarCoderModel`, `Olmo2Model`), and `gguf-py/gguf/tensor_mapping.py`
//! for the names. The names matter only through `tensor_get_category`
//! (`src/llama-quant.cpp`), which reads substrings of them, and the order
//! `llama-quantize` visits tensors in (`weight_name_comparer`: by layer,
//! then by name).

use super::super::arch::{Architecture, LayerKind};
use super::super::family::{Blocks, Family, Qkv, Recurrence, Router};
use super::super::module::{Module, ModuleName};
use super::super::tensors::{ParamTensor, Place, Role};

/// What `llama-quantize` calls a tensor (`tensor_get_category`, first
/// match by substring of its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    Output,
    TokenEmbd,
    AttnQkv,
    AttnKvB,
    AttnV,
    AttnK,
    AttnQ,
    AttnOutput,
    FfnUp,
    FfnGate,
    FfnDown,
    Other,
}

impl Category {
    /// `tensor_get_category` on a tensor's name without its `blk.N.`
    /// prefix (`outside`: a tensor outside the layers, where `output` and
    /// `token_embd` are matched by whole name). A `const fn`: every name
    /// this layout writes is a constant ([`Name`]), categorised when the
    /// program is compiled.
    const fn of(name: &str, outside: bool) -> Category {
        if outside && same(name, "output.weight") {
            return Category::Output;
        }
        // `tensor_name_match_token_embd` (b10488): Gemma 4's per-layer
        // table is typed as the token embedding.
        if outside && (same(name, "token_embd.weight") || same(name, "per_layer_token_embd.weight"))
        {
            return Category::TokenEmbd;
        }
        const BY_SUBSTRING: [(&str, Category); 9] = [
            ("attn_qkv.weight", Category::AttnQkv),
            ("attn_kv_b.weight", Category::AttnKvB),
            ("attn_v.weight", Category::AttnV),
            ("attn_k.weight", Category::AttnK),
            ("attn_q.weight", Category::AttnQ),
            ("attn_output.weight", Category::AttnOutput),
            ("ffn_up", Category::FfnUp),
            ("ffn_gate", Category::FfnGate),
            ("ffn_down", Category::FfnDown),
        ];
        let mut i = 0;
        while i < BY_SUBSTRING.len() {
            if contains(name, BY_SUBSTRING[i].0) {
                return BY_SUBSTRING[i].1;
            }
            i += 1;
        }
        Category::Other
    }
}

/// Whether `a` and `b` are the same string (`==` in a `const fn`).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `needle` occurs in `name` (`str::contains` in a `const fn`).
const fn contains(name: &str, needle: &str) -> bool {
    let (hay, n) = (name.as_bytes(), needle.as_bytes());
    let mut at = 0;
    while at + n.len() <= hay.len() {
        let mut i = 0;
        while i < n.len() && hay[at + i] == n[i] {
            i += 1;
        }
        if i == n.len() {
            return true;
        }
        at += 1;
    }
    false
}

/// A GGUF tensor's name and its category.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Name {
    pub text: &'static str,
    pub cat: Category,
}

impl Name {
    /// A tensor in a layer (and the F32 tensors outside them, which no
    /// rule reads by category).
    pub const fn layer(text: &'static str) -> Name {
        Name {
            text,
            cat: Category::of(text, false),
        }
    }

    /// A weight outside the layers.
    pub const fn outside(text: &'static str) -> Name {
        Name {
            text,
            cat: Category::of(text, true),
        }
    }
}

/// A tensor's [`Name`] in a layer, categorised at compile time.
macro_rules! name {
    ($text:literal) => {
        const { Name::layer($text) }
    };
}

/// The type a tensor has in the converted file, before `llama-quantize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// A weight at the converter's `--outtype`.
    Weight,
    /// Forced to F32 by the converter; never quantized (norms, biases, the
    /// router, position tables, rope factors).
    F32,
    /// Repacked as MXFP4 blocks, not converted (gpt-oss's experts:
    /// `GptOssModel.repack_mxfp4`).
    Mxfp4,
    /// A weight at the converter's `--outtype` that `llama-quantize` never
    /// quantizes (Gemma 4's `per_layer_model_proj`: "these are not too
    /// big so keep them as it is", `src/llama-quant.cpp`
    /// `tensor_allows_quantization`).
    Kept,
    /// Forced to F32 by the converter, but a weight `llama-quantize`
    /// quantizes (DeepSeek Sparse Attention's `indexer.proj`:
    /// `conversion/base.py:967` keeps it F32, Q4_K_M gives it Q4_K;
    /// measured, `scripts/measure/families/dsa/llamacpp/NOTES.md`).
    F32Weight,
}

/// One GGUF tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Its name without `blk.N.`.
    pub name: &'static str,
    pub cat: Category,
    /// ggml shape: `ne[0]` is the row (the transformers tensor's last
    /// dimension), `ne[2]` the experts of a 3-D tensor.
    pub ne: [u64; 3],
    pub src: Src,
    /// The transformers module whose weight it is, which a LoRA adapter
    /// may adapt ([`Slot::lora`]).
    pub lora: Option<LoraSource>,
}

/// The module a GGUF weight comes from, as `convert_lora_to_gguf.py`
/// pairs an adapter with it: its `lora_A` and `lora_B` mapped to the
/// tensor's name (`LoraModel.modify_tensors`, llama.cpp b10488), `lora_B`
/// split by rows where the converter splits the weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoraSource {
    pub module: Module,
    /// The tensor is the module's weight as it is, or a split of its rows
    /// (`ne[0]` is the module's input width): the adapter's A is the
    /// module's, its B those rows. `false`: the converter reshapes or
    /// transposes it (DeepSeek's `kv_b_proj`), which vramfit does not
    /// follow for an adapter.
    pub whole: bool,
}

impl Slot {
    /// `ggml_n_dims`: trailing dimensions of 1 do not count.
    pub fn n_dims(&self) -> usize {
        self.ne.iter().rposition(|&d| d > 1).map_or(1, |i| i + 1)
    }

    /// `tensor_allows_quantization` for the names this layout writes: 2-D
    /// or 3-D, and not one the converter forces to F32 (which are the ones
    /// the function excludes by name: `_norm.weight`, `ffn_gate_inp`,
    /// `position_embd`, and every name not ending in `weight`).
    pub fn quantizable(&self) -> bool {
        !matches!(self.src, Src::F32 | Src::Kept) && self.n_dims() >= 2
    }
}

/// What the converter does for a family (the GGUF `general.architecture`
/// and the few choices the [`Spec`](super::super::Spec) does not say,
/// because they are the converter's, not the model's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Converter {
    /// `general.architecture`.
    pub arch: &'static str,
    /// Its `general.architecture` when the model has experts, if another
    /// (Nemotron-H's `nemotron_h_moe`: `NemotronHModel.__init__` switches
    /// `model_arch` when the config has `n_routed_experts` layers,
    /// llama.cpp b10488 `conversion/nemotron.py`).
    pub moe_arch: Option<&'static str>,
    /// F32 tables written from `rope_scaling`: Llama 3.1's `rope_freqs`
    /// (`LlamaModel.generate_extra_tensors`), Phi-3's
    /// `rope_factors_long`/`_short` (`Phi3MiniModel.generate_extra_tensors`).
    pub rope_tables: &'static [Name],
    /// The experts arrive as MXFP4 blocks (gpt-oss).
    pub experts_mxfp4: bool,
    /// The experts' `gate_up_proj` is written whole as `ffn_gate_up_exps`
    /// (Gemma 4: `tensor_mapping.py` maps `experts.gate_up_proj` to
    /// `FFN_GATE_UP_EXP`), not split.
    pub experts_fused: bool,
    /// `lm_head.weight` is skipped: no `output.weight`, ever (Gemma).
    pub always_tied: bool,
    /// How `load_hparams` (`src/llama-model.cpp`) gives this architecture
    /// `LLM_TYPE_70B`, which one rule of `llama-quantize` reads.
    pub type_70b: Type70b,
    /// The checkpoint's MTP (NextN) layers are blocks of the file past
    /// `num_hidden_layers` that llama.cpp counts in `n_layer_all`: it
    /// loads their tensors `TENSOR_SKIP` (no memory), but gives them a
    /// key/value cache and places them as layers. vramfit's llama.cpp
    /// model has no such layer yet. Source: llama.cpp b10488
    /// `src/models/glm4-moe.cpp` `load_arch_tensors`, `src/llama-model.cpp`
    /// `create_memory` (no layer filter for `glm4moe`), `llama_kv_cache`
    /// (`n_layer = hparams.n_layer_all`); measured on a 2 + 1 NextN layer
    /// glm4moe file: "3 layers" in the cache, the NextN layer's 17
    /// tensors "unused" (`scripts/measure/families/NOTES.md`).
    pub nextn_cached: bool,
    /// The MTP blocks the converter appends after the layers by default
    /// (`skip_mtp = False`; `num_nextn_predict_layers`, 1 in DeepSeek-V3.2's
    /// and GLM-5.1's published configs: a file read takes its header's
    /// count), which llama.cpp b10488 creates `TENSOR_SKIP` unless
    /// `--spec-type draft-mtp` (`conversion/deepseek.py` `DeepseekV32Model`,
    /// `conversion/glm.py` `GlmMoeDsaModel`; `src/models/deepseek32.cpp:61-62`):
    /// no memory but their `exp_probs_b.bias`, so a predicted file leaves
    /// them out, as a file read does; but `llama-quantize` counts them as
    /// layers (`n_ffn_down = n_layer_all`, `init_quantize_state_counters`),
    /// which moves the layers whose `ffn_down` gets more bits (measured:
    /// `scripts/measure/families/dsa/llamacpp/`).
    pub mtp_blocks: u8,
    /// What the loader reads that the header does not say (0: the header
    /// says it): the window, this many tokens whatever
    /// `attention.sliding_window` says unless it is 0, and the shared
    /// experts of each MoE layer, each of the experts' width, with no
    /// `expert_shared_count` written (llama.cpp b10488
    /// `src/models/llama4.cpp`: `n_swa = 8192`, chunked, in
    /// `load_arch_hparams`; one `ffn_*_shexp` of `n_ff_exp` in
    /// `load_arch_tensors`).
    pub implied_window: u32,
    pub implied_shared: u32,
    /// The layers with a key/value cache of their own, counted from the
    /// first, whatever the header's `attention.shared_kv_layers` says (0:
    /// the layers less the shared ones): Gemma 3n's 20 (llama.cpp b10488
    /// `src/models/gemma3n.cpp:9`, `hparams.n_layer_kv_from_start = 20`;
    /// the E2B's 30 − 10 and the E4B's 35 − 15).
    pub kv_from_start: u32,
    /// The per-layer embedding table is written with `vocab_size` rows,
    /// the rows past `vocab_size_per_layer_input` zeros (Gemma 3n:
    /// `Gemma3NModel.modify_tensors` pads 262,144 to 262,400,
    /// `conversion/gemma.py:570-590`).
    pub ple_rows_vocab: bool,
}

/// When `llama_model::load_hparams` calls a model 70B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type70b {
    Never,
    /// `LLM_ARCH_LLAMA`: 80 layers with GQA, unless 8 experts.
    LlamaGqa80,
    /// `LLM_ARCH_QWEN2`: 80 layers.
    Layers80,
}

/// A converter that writes `arch` and does nothing a [`Converter`] field
/// names.
const fn plain(arch: &'static str) -> Converter {
    Converter {
        arch,
        moe_arch: None,
        rope_tables: &[],
        experts_mxfp4: false,
        experts_fused: false,
        always_tied: false,
        type_70b: Type70b::Never,
        nextn_cached: false,
        mtp_blocks: 0,
        implied_window: 0,
        implied_shared: 0,
        kv_from_start: 0,
        ple_rows_vocab: false,
    }
}

/// Gemma's converters: `lm_head` never written.
const fn gemma(arch: &'static str) -> Converter {
    Converter {
        always_tied: true,
        ..plain(arch)
    }
}

impl Converter {
    /// The converter's class for each family (`@ModelBase.register` of
    /// its `architectures` name).
    pub const fn of(family: Family) -> Converter {
        match family {
            Family::Gpt2 => plain("gpt2"),
            Family::GptBigcode => plain("starcoder"),
            // `GPTNeoXModel` (llama.cpp `MODEL_ARCH.GPTNEOX`): fused
            // `attn_qkv`, biases, `rope.dimension_count` from `rotary_pct`.
            Family::GptNeox => plain("gptneox"),
            Family::Llama | Family::Mistral | Family::Mixtral => Converter {
                rope_tables: &[name!("rope_freqs.weight")],
                type_70b: Type70b::LlamaGqa80,
                ..plain("llama")
            },
            Family::Qwen2 => Converter {
                type_70b: Type70b::Layers80,
                ..plain("qwen2")
            },
            Family::Qwen3 => plain("qwen3"),
            // `Mistral3Model` (llama.cpp `MODEL_ARCH.MISTRAL3`, PR #17644):
            // Llama's tensors, the temperature in its metadata.
            Family::Ministral3 => plain("mistral3"),
            // `SmolLM3Model` (llama.cpp `MODEL_ARCH.SMOLLM3`): Llama's
            // tensors, the NoPE layers in its metadata.
            Family::SmolLm3 => plain("smollm3"),
            Family::Phi3 => Converter {
                rope_tables: &[
                    name!("rope_factors_long.weight"),
                    name!("rope_factors_short.weight"),
                ],
                ..plain("phi3")
            },
            Family::Gemma => gemma("gemma"),
            Family::Gemma2 => gemma("gemma2"),
            Family::Gemma3Text => gemma("gemma3"),
            // OLMo 3 converts as `olmo2` with its sliding-window pattern
            // (llama.cpp b10488 `conversion/olmo.py`, `Olmo3ForCausalLM`;
            // `src/models/olmo2.cpp` reads `n_swa` and the pattern, 4 by
            // default).
            Family::Olmo2 | Family::Olmo3 => plain("olmo2"),
            // `MiniMaxM2Model` (llama.cpp b10488 `conversion/minimax.py`):
            // the experts' w1/w2/w3 stacked, `rope.dimension_count` from
            // `rotary_dim`; the checkpoint's MTP modules are not written.
            Family::MinimaxM2 => plain("minimax-m2"),
            // `Llama4Model(LlamaModel)` (llama.cpp b10488
            // `conversion/llama.py`): the experts' `gate_up_proj` split,
            // `rope_freqs` from the llama3 rope scaling; the vision tower
            // goes to an mmproj file of its own.
            Family::Llama4Text => Converter {
                rope_tables: &[name!("rope_freqs.weight")],
                implied_window: 8192,
                implied_shared: 1,
                ..plain("llama4")
            },
            Family::Qwen2Moe => plain("qwen2moe"),
            Family::Qwen3Moe => plain("qwen3moe"),
            // GLM-4.7-Flash too (`Glm4MoeLiteModel(DeepseekV2Model)`,
            // `MODEL_ARCH.DEEPSEEK2`: its MTP layer skipped as DeepSeek's).
            Family::DeepseekV2 | Family::DeepseekV3 | Family::Glm4MoeLite => plain("deepseek2"),
            // Mistral Small 4's text model (`Mistral3Model` with a
            // `mistral4` text config, llama.cpp b10488
            // `conversion/mistral3.py`): deepseek2's tensors with the
            // routed experts' gate and up fused, no correction bias; the
            // vision tower goes to an mmproj file.
            Family::Mistral4 => Converter {
                experts_fused: true,
                ..plain("mistral4")
            },
            Family::DeepseekV32 => Converter {
                mtp_blocks: 1,
                ..plain("deepseek32")
            },
            Family::GlmMoeDsa => Converter {
                mtp_blocks: 1,
                ..plain("glm-dsa")
            },
            Family::GptOss => Converter {
                experts_mxfp4: true,
                ..plain("gpt-oss")
            },
            // `Qwen3NextModel`, `Qwen3_5TextModel`, `Qwen3_5MoeTextModel`
            // (llama.cpp b10488 `conversion/qwen.py`). The MTP block the
            // converter appends by default (`_QwenMtpMixin`: `mtp.*` as
            // layer `n_layer`, plus `nextn.eh_proj` and its norms) is left
            // out: b10488 creates its tensors `TENSOR_SKIP` unless an MTP
            // draft is asked for (`src/models/qwen35moe.cpp`
            // `load_arch_tensors`), so it takes no memory; a converted
            // file is that block larger on disk.
            Family::Qwen3Next => plain("qwen3next"),
            Family::Qwen35Text => plain("qwen35"),
            Family::Qwen35MoeText => plain("qwen35moe"),
            // `Gemma4Model` (`conversion/gemma.py`): its full-attention
            // layers' `rope_freqs` written always
            // (`generate_extra_tensors`), the experts fused.
            // `Gemma4UnifiedModel` writes the 12B as `gemma4` too.
            Family::Gemma4Text | Family::Gemma4UnifiedText => Converter {
                rope_tables: &[name!("rope_freqs.weight")],
                experts_fused: true,
                ..gemma("gemma4")
            },
            // `Gemma3NModel` (llama.cpp b10488 `conversion/gemma.py`):
            // AltUp's and Laurel's tensors, the shared layers' keys and
            // values kept, no rope table.
            Family::Gemma3nText => Converter {
                kv_from_start: 20,
                ple_rows_vocab: true,
                ..gemma("gemma3n")
            },
            // `Glm4MoeModel` (llama.cpp b10488 `conversion/glm.py`): its
            // MTP layer (`num_nextn_predict_layers`: a whole `blk.N.*`
            // with `nextn.eh_proj`, `nextn.enorm`, `nextn.hnorm`) is
            // written as a block, `nextn_cached`.
            Family::Glm4Moe => Converter {
                nextn_cached: true,
                ..plain("glm4moe")
            },
            // `LFM2Model` (llama.cpp b10488 `conversion/lfm2.py`): each
            // layer's `head_count_kv` (0 on the convolution layers), the
            // convolution squeezed to `[L_cache, h]` and kept F32
            // (`conversion/base.py`), the head tied to the embedding
            // (`src/models/lfm2.cpp` reads `output` or else `token_embd`).
            Family::Lfm2 => plain("lfm2"),
            // `LFM2MoeModel` (`conversion/lfm2.py`): LFM2's tensors with the
            // experts stacked (`ffn_*_exps`), the router `ffn_gate_inp` and
            // the expert bias `exp_probs_b`.
            Family::Lfm2Moe => plain("lfm2moe"),
            // `GraniteHybridModel` (llama.cpp b10488 `conversion/granite.py`):
            // Mamba-2's tensors on the `layer_types` layers, attention on
            // the others (their `head_count_kv`), the shared MLP as
            // `ffn_*_shexp` beside the experts or as a dense `ffn_*`.
            Family::GraniteMoeHybrid => plain("granitehybrid"),
            // `NemotronHModel` (llama.cpp b10488 `conversion/nemotron.py`):
            // each layer's `norm` as `attn_norm`, Mamba-2's tensors, the
            // attention's or the MLP's (`ffn_up`, `ffn_down`), told apart by
            // the per-layer `head_count_kv` and `feed_forward_length`.
            Family::NemotronH => Converter {
                moe_arch: Some("nemotron_h_moe"),
                ..plain("nemotron_h")
            },
            // `KimiLinearModel` (llama.cpp b10488 `conversion/kimi_linear.py`):
            // the KDA layers' tensors, the latent attention's `kv_b_proj`
            // split into `attn_k_b` and `attn_v_b`, the experts stacked;
            // each layer's `head_count_kv` (0 on the KDA layers).
            Family::KimiLinear => plain("kimi-linear"),
        }
    }
}

/// A model's GGUF tensors: outside the layers, and one layer of each kind
/// (each sorted by name, the order `llama-quantize` visits them in); a
/// hybrid's layers of each kind with a Gated DeltaNet in place of
/// attention are `dense_linear` and `moe_linear`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    pub outside: Vec<Slot>,
    pub dense: Vec<Slot>,
    pub moe: Vec<Slot>,
    pub dense_linear: Vec<Slot>,
    pub moe_linear: Vec<Slot>,
    /// Gemma 4's layers by build ([`Layout::variant`]): sliding or global,
    /// with or without the double-wide MLP; empty for other families.
    pub variants: [Vec<Slot>; 4],
}

impl Layout {
    /// The tensors `convert_hf_to_gguf.py` writes for `a`; `rope_tables`:
    /// the config has the `rope_scaling` that makes the converter write
    /// its rope factor tables (each `head_dim / 2` f32).
    pub fn of(a: &Architecture, rope_tables: bool) -> Layout {
        let conv = Converter::of(a.family);
        if a.family.spec().blocks == Blocks::Single {
            return singles(a, conv);
        }
        let [(_, n_dense), (_, n_moe)] = a.layer_kinds();
        let mut outside = Vec::with_capacity(8);
        let dense = if n_dense > 0 {
            layer_of_kind(a, conv, (false, false), Some(&mut outside))
        } else {
            Vec::new()
        };
        let moe = if n_moe > 0 {
            let first = dense.is_empty();
            layer_of_kind(a, conv, (true, false), first.then_some(&mut outside))
        } else {
            Vec::new()
        };
        let hybrid = a.family.spec().linear.is_some() && a.linear_layers > 0;
        let linear = |kind: bool, n: u64| {
            if hybrid && n > 0 {
                layer_of_kind(a, conv, (kind, true), None)
            } else {
                Vec::new()
            }
        };
        let (dense_linear, moe_linear) = (linear(false, n_dense), linear(true, n_moe));
        let global = a.family.spec().global_attention;
        if rope_tables || global {
            // Gemma 4's table is its global layers' (`rope_freqs` of
            // `global_head_dim / 2`, `Gemma4Model.generate_extra_tensors`).
            let head = if global {
                a.global_heads().head_dim
            } else {
                a.head_dim
            };
            for &name in conv.rope_tables {
                outside.push(f32_slot(name, [u64::from(head) / 2, 1, 1]));
            }
        }
        crate::sort::by_key(&mut outside, |s| s.name);
        Layout {
            outside,
            dense,
            moe,
            dense_linear,
            moe_linear,
            variants: variants(a, conv),
        }
    }

    /// Which of [`Layout::variants`] layer `l` is: global or sliding, and
    /// whether it reuses keys and values (its MLP double-wide).
    pub fn variant(a: &Architecture, l: u32) -> usize {
        usize::from(a.global_at(l)) * 2 + usize::from(a.kv_shared_at(l))
    }

    /// Which of [`Layout::variants`] layer `l` of a family of
    /// [`Blocks::Single`] layers is: attention (0), recurrent (1) or an MLP
    /// alone (2).
    pub fn single(a: &Architecture, l: u32) -> usize {
        if a.linear_at(l) {
            1
        } else if a.ffn_only_at(l) {
            2
        } else {
            0
        }
    }

    /// Layer `l`'s tensors.
    pub fn slots(&self, a: &Architecture, l: u32) -> &[Slot] {
        if a.family.spec().varies_by_layer() {
            return &self.variants[Layout::variant(a, l)];
        }
        if a.family.spec().blocks == Blocks::Single {
            return &self.variants[Layout::single(a, l)];
        }
        match (a.kind_of(l), a.linear_at(l)) {
            (LayerKind::Dense, false) => &self.dense,
            (LayerKind::Moe, false) => &self.moe,
            (LayerKind::Dense, true) => &self.dense_linear,
            (LayerKind::Moe, true) => &self.moe_linear,
        }
    }
}

/// One layer's tensors of `a` were all its layers of one kind (`moe`, and
/// `linear`: a Gated DeltaNet in place of attention), sorted by name: the
/// walk of such a model gives that kind's layer. With `outside`, the
/// tensors outside the layers too (the same for every kind).
fn layer_of_kind(
    a: &Architecture,
    conv: Converter,
    (moe, linear): (bool, bool),
    mut outside: Option<&mut Vec<Slot>>,
) -> Vec<Slot> {
    let dense_layers = if moe { 0 } else { a.layers };
    // Every layer linear (a count not the pattern's reads as the first
    // layers), or none.
    let linear_layers = if linear { a.layers } else { 0 };
    let mut slots = Vec::with_capacity(24);
    // Every layer of the kind: no interleaving (`moe_step`) either.
    let one_kind = Architecture {
        dense_layers,
        linear_layers,
        moe_step: 0,
        ..*a
    };
    one_kind.for_each_tensor(|at, t| match (at, outside.as_mut()) {
        (Place::Layers { .. }, _) => push(a, conv, t, moe, &mut slots),
        (Place::Before | Place::After, Some(out)) => push(a, conv, t, false, out),
        (Place::Before | Place::After, None) => {}
    });
    crate::sort::by_key(&mut slots, |s| s.name);
    slots
}

/// A family of [`Blocks::Single`] layers (Nemotron-H): its attention,
/// recurrent and MLP layers' tensors as [`Layout::variants`] 0, 1 and 2,
/// each the walk of a model whose every layer is of that kind, sorted by
/// name.
fn singles(a: &Architecture, conv: Converter) -> Layout {
    let mut outside = Vec::with_capacity(8);
    let mut variants: [Vec<Slot>; 4] = Default::default();
    for (i, slots) in variants.iter_mut().take(3).enumerate() {
        let one = Architecture {
            linear_layers: if i == 1 { a.layers } else { 0 },
            ffn_layers: if i == 2 { a.layers } else { 0 },
            ..*a
        };
        let mut out = (i == 0).then_some(&mut outside);
        // An MoE layer's shared expert is written as `ffn_*_shexp`.
        let moe = i == 2 && a.moe().is_some();
        one.for_each_tensor(|at, t| match (at, out.as_mut()) {
            (Place::Layers { .. }, _) => push(a, conv, t, moe, slots),
            (Place::Before | Place::After, Some(o)) => push(a, conv, t, false, o),
            (Place::Before | Place::After, None) => {}
        });
        crate::sort::by_key(slots, |s| s.name);
    }
    crate::sort::by_key(&mut outside, |s| s.name);
    Layout {
        outside,
        variants,
        ..Layout::default()
    }
}

/// Gemma 4's four builds of a layer as the converter writes them, sorted
/// by name: sliding (`[0]`, `[1]`) or global (`[2]`, `[3]`), the second
/// of each with its MLP double-wide when `use_double_wide_mlp` (the layers
/// that reuse keys and values). A layer that reuses keys and values still
/// has `attn_k`, `attn_v` and `attn_k_norm` in the file: the checkpoint
/// stores them (transformers drops them on load,
/// `Gemma4TextModel._keys_to_ignore_on_load_unexpected`; an E4B checkpoint
/// read by a loader without them has 126 = 18 × 7 extra tensors, k/v
/// weights, scales and biases and the key norm of the 18 shared layers)
/// and `Gemma4Model` writes every tensor it is given; llama.cpp loads them
/// (`TENSOR_NOT_REQUIRED`, `src/models/gemma4.cpp`). Each layer also has
/// the converter's `layer_output_scale` (`layer_scalar`, a persistent
/// buffer in transformers). Empty for other families.
fn variants(a: &Architecture, conv: Converter) -> [Vec<Slot>; 4] {
    let mut out: [Vec<Slot>; 4] = Default::default();
    if !a.family.spec().varies_by_layer() {
        return out;
    }
    let moe = a.moe().is_some();
    for (i, slots) in out.iter_mut().enumerate() {
        let (global, wide) = (i >= 2, i % 2 == 1);
        let one = Architecture {
            sliding_window: if global { 0 } else { a.sliding_window.max(1) },
            sliding_layers: if global { 0 } else { a.layers },
            sliding_period: 0,
            kv_shared_layers: 0,
            ..*a
        };
        *slots = layer_of_kind(&one, conv, (moe, false), None);
        if a.family.spec().layer_scalar {
            // Kept sorted by name (as `layer_of_kind` leaves them).
            let scale = f32_slot(name!("layer_output_scale.weight"), [1, 1, 1]);
            let at = slots.partition_point(|s| s.name < scale.name);
            slots.insert(at, scale);
        }
        if wide && a.double_wide > 0 {
            for s in slots.iter_mut() {
                match s.name {
                    "ffn_gate.weight" | "ffn_up.weight" => s.ne[1] *= 2,
                    "ffn_down.weight" => s.ne[0] *= 2,
                    _ => {}
                }
            }
        }
    }
    out
}

/// Gemma 4's tensors the walk names that no other family has, as
/// `Gemma4Model` (`conversion/gemma.py`, `modify_tensors`,
/// `filter_tensors`) and `tensor_mapping.py` write them; `false` when `t`
/// is not one.
fn gemma4(t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    let (rows, cols) = (t.rows, t.cols);
    match t.name {
        "embed_tokens_per_layer" => out.push(weight(
            const { Name::outside("per_layer_token_embd.weight") },
            [cols, rows, 1],
        )),
        "per_layer_model_projection" => out.push(Slot {
            src: Src::Kept,
            ..weight(name!("per_layer_model_proj.weight"), [cols, rows, 1])
        }),
        "per_layer_input_gate" => out.push(weight(name!("inp_gate.weight"), [cols, rows, 1])),
        "per_layer_projection" => out.push(weight(name!("proj.weight"), [cols, rows, 1])),
        // `router.scale` → `ffn_gate_inp.scale`; `per_expert_scale` →
        // `ffn_down_exps.scale` (`Gemma4Model.modify_tensors`).
        "router.scale" => out.push(f32_slot(name!("ffn_gate_inp.scale"), [rows, 1, 1])),
        "router.per_expert_scale" => out.push(f32_slot(name!("ffn_down_exps.scale"), [rows, 1, 1])),
        _ => return false,
    }
    true
}

/// Gemma 3n's tensors the walk names that no other family has, as
/// `Gemma3NModel` (`conversion/gemma.py:485-628`) and `tensor_mapping.py`
/// write them; `false` when `t` is not one. AltUp's and Laurel's matrices
/// are written at `--outtype` and never quantized (`llama-quant.cpp`:
/// names with `altup` or `laurel`), their vectors F32; the two model-level
/// projections stacked into one 3-D tensor each; the per-layer table
/// padded to the vocabulary's rows ([`Converter::ple_rows_vocab`]).
/// Measured: `scripts/measure/families/gemma3n/quantize_summary.txt`.
fn gemma3n(a: &Architecture, conv: Converter, t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    /// The walk's name and the converter's: vectors F32, matrices kept.
    const NAMES: [(&str, Name); 10] = [
        ("altup_projections", name!("altup_proj.weight")),
        (
            "altup_unembed_projections",
            name!("altup_unembd_proj.weight"),
        ),
        (
            "altup.correct_output_scale",
            name!("altup_correct_scale.weight"),
        ),
        ("altup.correction_coefs", name!("altup_correct_coef.weight")),
        ("altup.prediction_coefs", name!("altup_predict_coef.weight")),
        ("altup.modality_router", name!("altup_router.weight")),
        ("altup.router_norm", name!("altup_router_norm.weight")),
        ("laurel.linear_left", name!("laurel_l.weight")),
        ("laurel.linear_right", name!("laurel_r.weight")),
        ("laurel.post_laurel_norm", name!("laurel_post_norm.weight")),
    ];
    let (rows, cols) = (t.rows, t.cols);
    if t.name == "embed_tokens_per_layer" && conv.ple_rows_vocab {
        let ne = [cols, u64::from(a.vocab).max(rows), 1];
        out.push(weight(
            const { Name::outside("per_layer_token_embd.weight") },
            ne,
        ));
        return true;
    }
    let Some(&(_, name)) = NAMES.iter().find(|(hf, _)| *hf == t.name) else {
        return false;
    };
    out.push(if cols == 1 {
        f32_slot(name, [rows, 1, 1])
    } else {
        Slot {
            src: Src::Kept,
            ..weight(name, [cols, rows, t.stack])
        }
    });
    true
}

fn weight(name: Name, ne: [u64; 3]) -> Slot {
    Slot {
        name: name.text,
        cat: name.cat,
        ne,
        src: Src::Weight,
        lora: None,
    }
}

fn f32_slot(name: Name, ne: [u64; 3]) -> Slot {
    Slot {
        name: name.text,
        cat: name.cat,
        ne,
        src: Src::F32,
        lora: None,
    }
}

/// A Gated DeltaNet's tensors as the converter writes them, or `false`
/// when `t` is not one of them.
///
/// Source: llama.cpp b10488 `conversion/qwen.py`
/// (`Qwen3NextModel.modify_tensors`: `A_log` → `ssm_a` = −exp, no
/// `.weight`; `dt_bias` → `ssm_dt.bias`; `conv1d` squeezed to `[k, conv]`;
/// `in_proj_qkvz` split into `attn_qkv` and `attn_gate`),
/// `gguf-py/gguf/tensor_mapping.py` (`in_proj_qkv` → `attn_qkv`,
/// `in_proj_z` → `attn_gate`, `in_proj_b` → `ssm_beta`, `in_proj_a` →
/// `ssm_alpha`, `in_proj_ba` → `ssm_ba`, `norm` → `ssm_norm`, `out_proj` →
/// `ssm_out`), `conversion/base.py` `prepare_tensors` (1-D tensors, a name
/// not ending in `.weight`, and `SSM_CONV1D` forced to F32). The V-head
/// reordering of `_LinearAttentionVReorderBase` changes no shape.
fn delta_net(a: &Architecture, t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    let (conv, value) = a.linear_widths();
    let h = u64::from(a.hidden);
    match t.name {
        "conv1d" => out.push(f32_slot(name!("ssm_conv1d.weight"), [t.cols, t.rows, 1])),
        "in_proj_qkvz" => {
            out.push(weight(name!("attn_qkv.weight"), [h, conv, 1]));
            out.push(weight(name!("attn_gate.weight"), [h, value, 1]));
        }
        "in_proj_qkv" => out.push(weight(name!("attn_qkv.weight"), [h, conv, 1])),
        "in_proj_z" => out.push(weight(name!("attn_gate.weight"), [h, value, 1])),
        "in_proj_ba" => out.push(weight(name!("ssm_ba.weight"), [h, t.rows, 1])),
        "in_proj_b" => out.push(weight(name!("ssm_beta.weight"), [h, t.rows, 1])),
        "in_proj_a" => out.push(weight(name!("ssm_alpha.weight"), [h, t.rows, 1])),
        "dt_bias" => out.push(f32_slot(name!("ssm_dt.bias"), [t.rows, 1, 1])),
        "A_log" => out.push(f32_slot(name!("ssm_a"), [t.rows, 1, 1])),
        "linear_attn.norm" => out.push(f32_slot(name!("ssm_norm.weight"), [t.rows, 1, 1])),
        "out_proj" => out.push(weight(name!("ssm_out.weight"), [value, h, 1])),
        _ => return false,
    }
    true
}

/// LFM2's short convolution as the converter writes it, or `false` when
/// `t` is not one of its tensors: `conv` squeezed to `[L_cache, h]` and
/// kept F32, `in_proj` and `out_proj` as weights.
///
/// Source: llama.cpp b10488 `conversion/lfm2.py`
/// (`LFM2Model.modify_tensors`), `conversion/base.py` (`SHORTCONV_CONV`
/// forced to F32), `gguf-py/gguf/constants.py` (`blk.N.shortconv.conv`,
/// `.in_proj`, `.out_proj`); `src/llama-quant.cpp` never quantizes
/// `shortconv.conv.weight`.
fn short_conv(t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    match t.name {
        "conv" => out.push(f32_slot(
            name!("shortconv.conv.weight"),
            [t.cols, t.rows, 1],
        )),
        "in_proj" => out.push(weight(
            name!("shortconv.in_proj.weight"),
            [t.cols, t.rows, 1],
        )),
        "out_proj" => out.push(weight(
            name!("shortconv.out_proj.weight"),
            [t.cols, t.rows, 1],
        )),
        _ => return false,
    }
    true
}

/// A Mamba-2 mixer's tensors as the converter writes them, or `false`
/// when `t` is not one of them: `in_proj` → `ssm_in`, `conv1d` squeezed to
/// `[k, C]` and its bias, both F32, `dt_bias` → `ssm_dt.bias`, `A_log` →
/// `ssm_a` (−exp) and `D` → `ssm_d` (`[1, H]`, F32), the gated norm
/// reshaped to `[d_inner / G, G]` (F32), `out_proj` → `ssm_out`.
///
/// Source: llama.cpp b10488 `conversion/mamba.py` (`Mamba2Model.modify_tensors`),
/// `conversion/granite.py` (`GraniteHybridModel`), `conversion/base.py`
/// (`SSM_CONV1D` forced to F32).
fn mamba2(a: &Architecture, t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    let (conv, inner) = a.linear_widths();
    let h = u64::from(a.hidden);
    let groups = u64::from(a.linear_k_heads.max(1));
    match t.name {
        "conv1d" => {
            out.push(f32_slot(name!("ssm_conv1d.weight"), [t.cols, t.rows, 1]));
            out.push(f32_slot(name!("ssm_conv1d.bias"), [conv, 1, 1]));
        }
        "in_proj" => out.push(weight(name!("ssm_in.weight"), [h, t.rows, 1])),
        "dt_bias" => out.push(f32_slot(name!("ssm_dt.bias"), [t.rows, 1, 1])),
        "A_log" => out.push(f32_slot(name!("ssm_a"), [1, t.rows, 1])),
        "D" => out.push(f32_slot(name!("ssm_d"), [1, t.rows, 1])),
        "mamba.norm" => out.push(f32_slot(
            name!("ssm_norm.weight"),
            [inner / groups, groups, 1],
        )),
        "out_proj" => out.push(weight(name!("ssm_out.weight"), [inner, h, 1])),
        _ => return false,
    }
    true
}

/// A Kimi Delta Attention layer's tensors as the converter writes them, or
/// `false` when `t` is not one of them: q, k and v as `attn_q`, `attn_k`,
/// `attn_v`, the convolution split in three F32 kernels of `[K, 1, H·D]`
/// (`ssm_conv1d_q`, `_k`, `_v`), `A_log` as `ssm_a` (`[1, H]`, F32),
/// `dt_bias` as `ssm_dt.bias`, the gates' low ranks `ssm_f_a`, `ssm_f_b`,
/// `ssm_g_a`, `ssm_g_b`, `b_proj` as `ssm_beta`, `o_norm` as `ssm_norm`,
/// `o_proj` as `attn_output`. Source: llama.cpp b10488
/// `conversion/kimi_linear.py` (`modify_tensors`), `conversion/base.py`
/// (the KDA kernels F32), `src/models/kimi-linear.cpp`
/// (`load_arch_tensors`); measured,
/// `scripts/measure/families/kimi_linear/llamacpp/raw/*-tensors.txt`.
fn kda(a: &Architecture, t: &ParamTensor, out: &mut Vec<Slot>) -> bool {
    /// The walk's name and the converter's: matrices at `--outtype`,
    /// vectors F32.
    const NAMES: [(&str, Name); 11] = [
        ("kda.q_proj", name!("attn_q.weight")),
        ("kda.k_proj", name!("attn_k.weight")),
        ("kda.v_proj", name!("attn_v.weight")),
        ("kda.dt_bias", name!("ssm_dt.bias")),
        ("kda.f_a_proj", name!("ssm_f_a.weight")),
        ("kda.f_b_proj", name!("ssm_f_b.weight")),
        ("kda.b_proj", name!("ssm_beta.weight")),
        ("kda.g_a_proj", name!("ssm_g_a.weight")),
        ("kda.g_b_proj", name!("ssm_g_b.weight")),
        ("kda.o_norm", name!("ssm_norm.weight")),
        ("kda.o_proj", name!("attn_output.weight")),
    ];
    let (_, inner) = a.linear_widths();
    match t.name {
        "kda.conv1d" => {
            for name in [
                name!("ssm_conv1d_q.weight"),
                name!("ssm_conv1d_k.weight"),
                name!("ssm_conv1d_v.weight"),
            ] {
                out.push(f32_slot(name, [t.cols, 1, inner]));
            }
        }
        "kda.A_log" => out.push(f32_slot(name!("ssm_a"), [1, t.rows, 1])),
        _ => {
            let Some(&(_, name)) = NAMES.iter().find(|(hf, _)| *hf == t.name) else {
                return false;
            };
            out.push(if t.cols == 1 {
                f32_slot(name, [t.rows, 1, 1])
            } else {
                weight(name, [t.cols, t.rows, 1])
            });
        }
    }
    true
}

/// The GGUF tensors of one transformers tensor `t` (`moe_layer`: it sits
/// in an MoE layer, where a dense MLP's names are the shared expert's).
fn push(a: &Architecture, conv: Converter, t: &ParamTensor, moe_layer: bool, out: &mut Vec<Slot>) {
    let from = out.len();
    push_slots(a, conv, t, moe_layer, out);
    let Some(module) = t.module() else { return };
    // The weights made of `t` (its bias, if any, is a vector).
    let made = || out[from..].iter().filter(|s| s.n_dims() >= 2);
    let whole = made().all(|s| s.ne[0] == t.cols)
        && made().map(|s| s.ne[1] * s.ne[2]).sum::<u64>() == t.rows * t.stack;
    for s in out[from..].iter_mut().filter(|s| s.n_dims() >= 2) {
        s.lora = Some(LoraSource { module, whole });
    }
}

/// The GGUF tensors `t` becomes, appended to `out`.
fn push_slots(
    a: &Architecture,
    conv: Converter,
    t: &ParamTensor,
    moe_layer: bool,
    out: &mut Vec<Slot>,
) {
    let (rows, cols) = (t.rows, t.cols);
    let recurrent = t.recurrent
        && match a.family.spec().linear.map(|l| l.kind) {
            Some(Recurrence::ShortConv) => short_conv(t, out),
            Some(Recurrence::Mamba2) => mamba2(a, t, out),
            Some(Recurrence::Kda) => kda(a, t, out),
            Some(Recurrence::GatedDeltaNet) | None => delta_net(a, t, out),
        };
    if recurrent || gemma3n(a, conv, t, out) || gemma4(t, out) {
        return;
    }
    match t.role {
        Role::Embedding => out.push(weight(
            const { Name::outside("token_embd.weight") },
            [cols, rows, 1],
        )),
        Role::PositionTable => out.push(f32_slot(name!("position_embd.weight"), [cols, rows, 1])),
        Role::Head if conv.always_tied => {}
        Role::Head => out.push(weight(
            const { Name::outside("output.weight") },
            [cols, rows, 1],
        )),
        Role::Norm => {
            let (w, b) = norm_names(t.name);
            out.push(f32_slot(w, [rows, 1, 1]));
            if t.bias {
                out.push(f32_slot(b, [rows, 1, 1]));
            }
        }
        // Gemma 4's dense MLP beside the experts keeps its own names
        // (`mlp.gate_proj` → `ffn_gate`), not a shared expert's.
        Role::Attention | Role::Mlp => {
            let shexp = moe_layer && !a.family.spec().moe.is_some_and(|m| m.dense_beside);
            linear(a, t, shexp, out)
        }
        Role::Router => {
            out.push(f32_slot(name!("ffn_gate_inp.weight"), [cols, rows, 1]));
            if t.bias {
                out.push(f32_slot(name!("ffn_gate_inp.bias"), [rows, 1, 1]));
            }
            // DeepSeek-V3's `e_score_correction_bias` (a buffer in
            // transformers) is the tensor `exp_probs_b.bias`.
            // MiniMax-M2's too (`src/models/minimax-m2.cpp`).
            if matches!(
                a.family.spec().moe.map(|m| m.router),
                Some(Router::SigmoidGrouped | Router::SigmoidBias)
            ) {
                out.push(f32_slot(name!("exp_probs_b.bias"), [rows, 1, 1]));
            }
        }
        Role::Expert => experts(conv, t, out),
        Role::Indexer => indexer(t, out),
    }
}

/// DeepSeek Sparse Attention's indexer as the converter writes it:
/// `wq_b`, `wk` and `weights_proj` as weights, `k_norm`'s weight and bias
/// F32.
fn indexer(t: &ParamTensor, out: &mut Vec<Slot>) {
    let ne = [t.cols, t.rows, 1];
    match t.name {
        "indexer.wq_b" => out.push(weight(name!("indexer.attn_q_b.weight"), ne)),
        "indexer.wk" => out.push(weight(name!("indexer.attn_k.weight"), ne)),
        "indexer.weights_proj" => out.push(Slot {
            src: Src::F32Weight,
            ..weight(name!("indexer.proj.weight"), ne)
        }),
        // `indexer.k_norm`, the walk's one other indexer tensor
        // (`Architecture::indexer_tensors`).
        _ => {
            out.push(f32_slot(name!("indexer.k_norm.weight"), [t.rows, 1, 1]));
            out.push(f32_slot(name!("indexer.k_norm.bias"), [t.rows, 1, 1]));
        }
    }
}

/// A norm's GGUF names (weight, bias), by its transformers name
/// (`tensor_mapping.py`). Only its bytes matter: a norm is F32 and never
/// quantized.
fn norm_names(hf: &str) -> (Name, Name) {
    const NAMES: [(&str, Name, Name); 15] = [
        // Gemma 4 (`tensor_mapping.py`).
        (
            "post_per_layer_input_norm",
            name!("post_norm.weight"),
            name!("post_norm.bias"),
        ),
        (
            "per_layer_projection_norm",
            name!("per_layer_proj_norm.weight"),
            name!("per_layer_proj_norm.bias"),
        ),
        (
            "post_feedforward_layernorm_1",
            name!("post_ffw_norm_1.weight"),
            name!("post_ffw_norm_1.bias"),
        ),
        (
            "post_feedforward_layernorm_2",
            name!("post_ffw_norm_2.weight"),
            name!("post_ffw_norm_2.bias"),
        ),
        (
            "pre_feedforward_layernorm_2",
            name!("pre_ffw_norm_2.weight"),
            name!("pre_ffw_norm_2.bias"),
        ),
        (
            "input_layernorm",
            name!("attn_norm.weight"),
            name!("attn_norm.bias"),
        ),
        ("ln_1", name!("attn_norm.weight"), name!("attn_norm.bias")),
        (
            "post_attention_layernorm",
            name!("post_attention_norm.weight"),
            name!("post_attention_norm.bias"),
        ),
        (
            "pre_feedforward_layernorm",
            name!("ffn_norm.weight"),
            name!("ffn_norm.bias"),
        ),
        ("ln_2", name!("ffn_norm.weight"), name!("ffn_norm.bias")),
        (
            "post_feedforward_layernorm",
            name!("post_ffw_norm.weight"),
            name!("post_ffw_norm.bias"),
        ),
        (
            "q_norm",
            name!("attn_q_norm.weight"),
            name!("attn_q_norm.bias"),
        ),
        (
            "k_norm",
            name!("attn_k_norm.weight"),
            name!("attn_k_norm.bias"),
        ),
        (
            "q_a_layernorm",
            name!("attn_q_a_norm.weight"),
            name!("attn_q_a_norm.bias"),
        ),
        (
            "kv_a_layernorm",
            name!("attn_kv_a_norm.weight"),
            name!("attn_kv_a_norm.bias"),
        ),
    ];
    NAMES.iter().find(|(n, _, _)| *n == hf).map_or(
        (name!("output_norm.weight"), name!("output_norm.bias")),
        |&(_, w, b)| (w, b),
    )
}

/// A linear layer's GGUF names (weight, bias); `shared`: the shared
/// expert's MLP (`_shexp`). `None` for the modules that are not one linear
/// tensor (DeepSeek's `kv_b_proj`, Qwen2-MoE's shared-expert gate, the
/// router and the experts) and the Gated DeltaNet's, which [`delta_net`]
/// names.
fn linear_names(m: ModuleName, shared: bool) -> Option<(Name, Name)> {
    let pick = |dense: (Name, Name), shexp| Some(if shared { shexp } else { dense });
    match m {
        ModuleName::QProj => Some((name!("attn_q.weight"), name!("attn_q.bias"))),
        ModuleName::KProj => Some((name!("attn_k.weight"), name!("attn_k.bias"))),
        ModuleName::VProj => Some((name!("attn_v.weight"), name!("attn_v.bias"))),
        ModuleName::OProj | ModuleName::CProjAttn | ModuleName::Dense => {
            Some((name!("attn_output.weight"), name!("attn_output.bias")))
        }
        ModuleName::QkvProj | ModuleName::CAttn | ModuleName::QueryKeyValue => {
            Some((name!("attn_qkv.weight"), name!("attn_qkv.bias")))
        }
        ModuleName::QAProj => Some((name!("attn_q_a.weight"), name!("attn_q_a.bias"))),
        ModuleName::QBProj => Some((name!("attn_q_b.weight"), name!("attn_q_b.bias"))),
        ModuleName::KvAProjWithMqa => {
            Some((name!("attn_kv_a_mqa.weight"), name!("attn_kv_a_mqa.bias")))
        }
        ModuleName::GateProj => pick(
            (name!("ffn_gate.weight"), name!("ffn_gate.bias")),
            (name!("ffn_gate_shexp.weight"), name!("ffn_gate_shexp.bias")),
        ),
        // Phi-3's fused `gate_up_proj` is written whole as `ffn_up`
        // [h, 2·ffn] (`Phi3MiniModel`), GPT-2's `c_fc` as `ffn_up`.
        ModuleName::UpProj | ModuleName::GateUpProj | ModuleName::CFc | ModuleName::DenseHTo4h => pick(
            (name!("ffn_up.weight"), name!("ffn_up.bias")),
            (name!("ffn_up_shexp.weight"), name!("ffn_up_shexp.bias")),
        ),
        ModuleName::DownProj | ModuleName::CProjMlp | ModuleName::Dense4hToH => pick(
            (name!("ffn_down.weight"), name!("ffn_down.bias")),
            (name!("ffn_down_shexp.weight"), name!("ffn_down_shexp.bias")),
        ),
        ModuleName::KvBProj
        | ModuleName::SharedExpertGate
        | ModuleName::Router
        | ModuleName::ExpertsGateUp
        | ModuleName::ExpertsUp
        | ModuleName::ExpertsDown
        | ModuleName::W1
        | ModuleName::W2
        | ModuleName::W3
        | ModuleName::InProjQkv
        | ModuleName::InProjZ
        | ModuleName::InProjB
        | ModuleName::InProjA
        | ModuleName::OutProj
        | ModuleName::InProjQkvz
        | ModuleName::InProjBa
        // Gemma 4's, named by [`gemma4`].
        | ModuleName::PerLayerInputGate
        | ModuleName::PerLayerProjection
        | ModuleName::PerLayerModelProjection => None,
    }
}

/// An attention or MLP tensor: a linear layer with its bias, DeepSeek's
/// `kv_b_proj` split in two, Qwen2-MoE's shared-expert gate (an F32
/// vector), gpt-oss's sinks (an F32 vector).
fn linear(a: &Architecture, t: &ParamTensor, moe_layer: bool, out: &mut Vec<Slot>) {
    let (rows, cols) = (t.rows, t.cols);
    let Some(m) = t.module else {
        out.push(f32_slot(name!("attn_sinks.weight"), [rows, 1, 1]));
        return;
    };
    if let Some((w, b)) = linear_names(m, moe_layer) {
        out.push(weight(w, [cols, rows, 1]));
        if t.bias {
            out.push(f32_slot(b, [rows, 1, 1]));
        }
        return;
    }
    if m == ModuleName::KvBProj && a.family.spec().qkv == Qkv::Latent {
        // `DeepseekV2Model.modify_tensors` (build ≥ 5137, PR #12801):
        // k_b [nope, kv_lora, heads] (transposed), v_b [kv_lora, v, heads].
        let nope = u64::from(a.head_dim.saturating_sub(a.rope_dim));
        let heads = u64::from(a.heads);
        out.push(weight(name!("attn_k_b.weight"), [nope, cols, heads]));
        out.push(weight(
            name!("attn_v_b.weight"),
            [cols, u64::from(a.v_head_dim), heads],
        ));
        return;
    }
    // Qwen2-MoE's `shared_expert_gate` [1, h]: `ffn_gate_inp_shexp`,
    // forced to F32, one row.
    out.push(f32_slot(
        name!("ffn_gate_inp_shexp.weight"),
        [cols, rows, 1],
    ));
}

/// Stacked experts: the fused `gate_up_proj` written as `ffn_gate_exps`
/// and `ffn_up_exps` [h, moe_ffn, experts] (`Qwen2MoeModel` splits it,
/// gpt-oss de-interleaves it), `down_proj` as `ffn_down_exps`; gpt-oss's
/// expert biases as F32 `ffn_*_exps.bias` [out, experts].
fn experts(conv: Converter, t: &ParamTensor, out: &mut Vec<Slot>) {
    let (rows, cols, e) = (t.rows, t.cols, t.stack);
    let src = if conv.experts_mxfp4 {
        Src::Mxfp4
    } else {
        Src::Weight
    };
    let stacked = |name, ne| Slot {
        src,
        ..weight(name, ne)
    };
    match t.module {
        Some(ModuleName::ExpertsGateUp) if conv.experts_fused => {
            out.push(stacked(name!("ffn_gate_up_exps.weight"), [cols, rows, e]));
        }
        Some(ModuleName::ExpertsGateUp) => {
            out.push(stacked(name!("ffn_gate_exps.weight"), [cols, rows / 2, e]));
            out.push(stacked(name!("ffn_up_exps.weight"), [cols, rows / 2, e]));
        }
        Some(ModuleName::ExpertsUp) => {
            out.push(stacked(name!("ffn_up_exps.weight"), [cols, rows, e]))
        }
        Some(ModuleName::ExpertsDown) => {
            out.push(stacked(name!("ffn_down_exps.weight"), [cols, rows, e]))
        }
        // The biases: [experts, out] in transformers.
        None if t.name.contains("gate_up") => {
            out.push(f32_slot(name!("ffn_gate_exps.bias"), [cols / 2, rows, 1]));
            out.push(f32_slot(name!("ffn_up_exps.bias"), [cols / 2, rows, 1]));
        }
        None => out.push(f32_slot(name!("ffn_down_exps.bias"), [cols, rows, 1])),
        Some(other) => out.push(weight(Name::layer(other.text()), [cols, rows, e])),
    }
}

/// Why a LoRA adapter's tensors cannot be laid out for a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterMisfit {
    /// The converter reshapes the module's weight (DeepSeek's
    /// `kv_b_proj` into `attn_k_b` and `attn_v_b`), and vramfit does not
    /// follow what it makes of an adapter on it.
    Reshaped(ModuleName),
    /// The routed experts' stacked weights: peft adapts them as one
    /// parameter (`ParamWrapper`, rank × experts), which vramfit does not
    /// follow into a GGUF adapter.
    Experts(ModuleName),
    /// An adapter on `lm_head` of a model whose output layer is its
    /// embeddings: the converter refuses it.
    Tied,
}

impl std::fmt::Display for AdapterMisfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdapterMisfit::Reshaped(m) => write!(
                f,
                "the converter reshapes `{}` into other tensors: an adapter on it is not sized (name the other modules in lora_targets)",
                m.text()
            ),
            AdapterMisfit::Experts(m) => write!(
                f,
                "`{}` is the routed experts: an adapter on them is not sized for a GGUF runner (lora_targets=attn, or the modules outside the experts, leaves them out)",
                m.text()
            ),
            AdapterMisfit::Tied => f.write_str(
                "the model ties its output layer to its embeddings: convert_lora_to_gguf refuses an adapter on lm_head (\"lm_head is present in adapter, but is ignored in base model\")",
            ),
        }
    }
}

/// Where an adapter's pair sits: beside a layer's weight or the output
/// layer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterAt {
    Layer(u32),
    Output,
}

/// The tensors of a LoRA adapter for `a`, as `convert_lora_to_gguf.py`
/// (llama.cpp b10488) writes them: for each layer `l` and each weight of
/// the layer whose module `adapts` selects, `each(Layer(l), name, ne)`
/// with the weight's name (without `blk.N.`) and ggml shape, and with
/// `head` the output layer's (`output.weight`, absent when tied to the
/// embeddings); the adapter's `lora_a` is `{ne[0], r}` and its `lora_b`
/// `{r, ne[1]}`. Never the embeddings (no target names them).
pub fn adapter_tensors(
    a: &Architecture,
    (adapts, head): (&dyn Fn(Module) -> bool, bool),
    each: &mut dyn FnMut(AdapterAt, &'static str, [u64; 3]),
) -> Result<(), AdapterMisfit> {
    let layout = Layout::of(a, false);
    for l in 0..a.layers {
        for s in layout.slots(a, l) {
            let Some(src) = s.lora.filter(|src| adapts(src.module)) else {
                continue;
            };
            if !src.whole {
                return Err(AdapterMisfit::Reshaped(src.module.name));
            }
            if s.ne[2] > 1 {
                return Err(AdapterMisfit::Experts(src.module.name));
            }
            each(AdapterAt::Layer(l), s.name, s.ne);
        }
    }
    if head {
        let output = layout.outside.iter().find(|s| s.name == "output.weight");
        let Some(s) = output else {
            return Err(AdapterMisfit::Tied);
        };
        each(AdapterAt::Output, s.name, s.ne);
    }
    Ok(())
}
