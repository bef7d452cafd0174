//! One description per model family. Everything vramfit knows about how a
//! family is built lives in its [`Spec`]: the parameter tensors (and so the
//! parameter count, the tensor count, the largest tensor, LoRA's adapters,
//! Adafactor's state and the optimizer's temporaries) and what its layers
//! save for backward (the ledger reads the same spec).
//!
//! Adding a family: add its variant to [`Family`] (the `model_type` name
//! transformers uses) and its arm in [`Family::spec`] (the compiler points at
//! every other place that must learn it: the importer's field names in
//! `hf_config.rs`), its presets with their published parameter counts, and
//! measured rows in the test fixtures (ARCHITECTURE.md, "Adding a model
//! family").

use crate::choice::choice_enum;
use crate::model::module::ModuleName;

choice_enum! {
    /// A model family: transformers' `model_type`.
    pub enum Family {
        /// GPT-2: learned positions, LayerNorm with bias, fused qkv `Conv1D`
        /// with biases, Python `gelu_new` MLP, dropout 0.1.
        Gpt2 = "gpt2", "GPT-2",
        /// StarCoder, SantaCoder: GPT-2's layout with multi-query attention
        /// and a fused tanh GELU.
        GptBigcode = "gpt_bigcode", "GPTBigCode (StarCoder)",
        /// GPT-NeoX and Pythia: attention and MLP side by side on the same
        /// input (parallel residual), LayerNorms with bias, one fused
        /// `query_key_value` with biases, rotary positions on a quarter of
        /// each head, a plain GELU MLP, untied embeddings.
        GptNeox = "gpt_neox", "GPT-NeoX / Pythia",
        /// Llama: RMSNorm, RoPE, q/k/v/o without bias, gated SiLU MLP, GQA.
        Llama = "llama", "Llama",
        /// Mistral: Llama with sliding-window attention (the same memory:
        /// SDPA keeps no scores and eager masks full scores).
        Mistral = "mistral", "Mistral",
        /// Ministral 3 and Devstral 2 (the text model of `mistral3`):
        /// Mistral's layers with Llama 4's attention temperature (the
        /// query scaled by a factor per position after RoPE).
        Ministral3 = "ministral3", "Ministral 3 / Devstral 2",
        /// SmolLM3: Llama's layers, rotary positions on three layers in
        /// four (`no_rope_layers`), embeddings tied.
        SmolLm3 = "smollm3", "SmolLM3",
        /// Qwen2 / Qwen2.5: Llama with biases on q, k and v.
        Qwen2 = "qwen2", "Qwen2",
        /// Qwen3: Llama with an RMSNorm of each query and key head.
        Qwen3 = "qwen3", "Qwen3",
        /// Phi-3 / Phi-4: Llama with fused `qkv_proj` and `gate_up_proj`.
        Phi3 = "phi3", "Phi-3",
        /// Gemma: GeGLU, (1 + w) RMSNorm in fp32, a scaled embedding.
        Gemma = "gemma", "Gemma",
        /// Gemma 2: Gemma with norms around both sub-layers, attention and
        /// final-logit softcapping (eager attention).
        Gemma2 = "gemma2", "Gemma 2",
        /// Gemma 3 (text): Gemma 2's layout with per-head q/k norms, local
        /// and global RoPE, no softcapping.
        Gemma3Text = "gemma3_text", "Gemma 3",
        /// OLMo 2: norms after each sub-layer, q/k norms over all heads.
        Olmo2 = "olmo2", "OLMo 2",
        /// Mixtral: Mistral with top-k routed experts in every layer.
        Mixtral = "mixtral", "Mixtral (MoE)",
        /// Qwen1.5/Qwen2-MoE: routed experts plus a gated shared expert,
        /// q/k/v biases.
        Qwen2Moe = "qwen2_moe", "Qwen2-MoE",
        /// Qwen3-MoE: Qwen3's attention with routed experts.
        Qwen3Moe = "qwen3_moe", "Qwen3-MoE",
        /// DeepSeek-V2: multi-head latent attention, shared and routed
        /// experts, the first layers dense.
        DeepseekV2 = "deepseek_v2", "DeepSeek-V2",
        /// DeepSeek-V3 (Moonlight, Kimi): DeepSeek-V2 with sigmoid grouped
        /// routing.
        DeepseekV3 = "deepseek_v3", "DeepSeek-V3",
        /// gpt-oss: experts with biases and a clamped SwiGLU, attention
        /// sinks, eager attention.
        GptOss = "gpt_oss", "gpt-oss (MoE)",
        /// Qwen3-Next: Gated DeltaNet layers (fused `in_proj_qkvz` and
        /// `in_proj_ba`) with a gated full-attention layer every fourth,
        /// routed experts and a gated shared expert in every layer.
        Qwen3Next = "qwen3_next", "Qwen3-Next (hybrid MoE)",
        /// Qwen3.5 / Qwen3.6 dense (the text model of `qwen3_5`): Qwen3-Next's
        /// hybrid layers with four separate DeltaNet input projections and a
        /// dense MLP.
        Qwen35Text = "qwen3_5_text", "Qwen3.5 / 3.6 (hybrid)",
        /// Qwen3.5 / Qwen3.6 MoE (the text model of `qwen3_5_moe`).
        Qwen35MoeText = "qwen3_5_moe_text", "Qwen3.5 / 3.6 MoE (hybrid)",
        /// Gemma 4 (the text model of `gemma4`): Gemma 3's layout with five
        /// sliding layers to a global one whose heads are wider and may be
        /// fewer with keys as values, the last layers reusing earlier
        /// layers' keys and values, per-layer embeddings, and (26B-A4B)
        /// experts beside the dense MLP.
        Gemma4Text = "gemma4_text", "Gemma 4",
        /// Gemma 4 12B (the text model of `gemma4_unified`): Gemma 4's
        /// layers without per-layer embeddings or experts.
        Gemma4UnifiedText = "gemma4_unified_text", "Gemma 4 (unified, 12B)",
        /// Gemma 3n (the text model of `gemma3n`, E2B and E4B): Gemma 4's
        /// per-layer embeddings and key/value sharing on Gemma 3's heads,
        /// with AltUp's four residual streams and a low-rank Laurel branch
        /// in every layer.
        Gemma3nText = "gemma3n_text", "Gemma 3n",
        /// GLM-4.5 / 4.6 / 4.7 and GLM-4.5-Air: grouped-query attention
        /// with q/k/v biases, rotary positions on half of each head, an
        /// optional RMSNorm of each query and key head (`use_qk_norm`), and
        /// DeepSeek-V3's experts (sigmoid routing, a shared expert, the
        /// first layers dense).
        Glm4Moe = "glm4_moe", "GLM-4.5 / 4.6 (MoE)",
        /// GLM-4.7-Flash: DeepSeek-V3's multi-head latent attention with
        /// GLM-4.5's experts (an fp32 correction bias), the first layer
        /// dense (`mlp_layer_types`).
        Glm4MoeLite = "glm4_moe_lite", "GLM-4.7-Flash (MLA MoE)",
        /// DeepSeek-V3.2: GLM-4.7-Flash's layers (DeepSeek-V3's latent
        /// attention, experts with an fp32 correction bias, the first layers
        /// dense) with DeepSeek Sparse Attention's lightning indexer in every
        /// layer: its own small projections and a key cache of one
        /// `index_head_dim` vector per token.
        DeepseekV32 = "deepseek_v32", "DeepSeek-V3.2 (sparse attention)",
        /// GLM-5 / 5.1: DeepSeek-V3.2's layers at GLM's widths (GLM-5.2's
        /// layers that reuse the previous layer's indexer, `indexer_types`
        /// "shared", are not modelled: refused).
        GlmMoeDsa = "glm_moe_dsa", "GLM-5 (sparse attention)",
        /// Mistral Small 4 (the text model of its `mistral3` checkpoint) and
        /// Mistral Large 3: DeepSeek-V3's latent attention with Llama 4's
        /// query temperature, and DeepSeek-V3's experts behind a softmax
        /// router in the model's dtype without a correction bias.
        Mistral4 = "mistral4", "Mistral Small 4 / Large 3 (MLA MoE)",
        /// OLMo 3: OLMo 2's layers with a sliding window on three layers
        /// in four and a rotary table per kind of layer.
        Olmo3 = "olmo3", "OLMo 3",
        /// MiniMax-M2: grouped-query attention with RMSNorms over the whole
        /// q and k projections and rotary positions on part of each head,
        /// routed experts in every layer behind a sigmoid router with a
        /// correction bias, no shared expert.
        MinimaxM2 = "minimax_m2", "MiniMax-M2 (MoE)",
        /// Llama 4 Scout and Maverick (the text model of `llama4`):
        /// Llama's attention with local chunks of `attention_chunk_size`
        /// tokens on three layers in four, a top-1 sigmoid router over
        /// routed experts and a shared expert in every layer (Scout) or
        /// every other, a dense MLP between (Maverick).
        Llama4Text = "llama4_text", "Llama 4",
        /// LFM2 (Liquid AI): gated short convolutions in most layers, a
        /// state of `L_cache - 1` steps and no key/value cache, GQA with
        /// per-head q/k norms in the others (`full_attn_idxs`), a SwiGLU
        /// MLP, embeddings tied.
        Lfm2 = "lfm2", "LFM2 (hybrid)",
        /// LFM2-MoE (LFM2-8B-A1B): LFM2's layers with routed experts
        /// behind a sigmoid router and an fp32 expert bias after the first
        /// `num_dense_layers` dense ones.
        Lfm2Moe = "lfm2_moe", "LFM2-MoE (hybrid MoE)",
        /// Granite 4.0-H (IBM): Mamba-2 layers with a few attention layers
        /// between them (`layer_types`), no position embedding, a shared
        /// MLP in every layer and, in the MoE models, routed experts beside
        /// it; embeddings tied.
        GraniteMoeHybrid = "granitemoehybrid", "Granite 4.0-H (hybrid)",
        /// Nemotron-H (NVIDIA: Nemotron-H, Nemotron Nano 2, Nemotron 3
        /// Nano): each layer one thing (`hybrid_override_pattern`): a
        /// Mamba-2 mixer, attention without position embedding, a
        /// squared-ReLU MLP without a gate, or experts of that kind.
        NemotronH = "nemotron_h", "Nemotron-H (hybrid)",
        /// Kimi Linear (Moonshot AI, 48B-A3B): Kimi Delta Attention layers
        /// (a gated delta rule behind short convolutions on q, k and v)
        /// with DeepSeek-V3's latent attention in every fourth and the
        /// last, and DeepSeek-V3's experts after a dense first layer.
        KimiLinear = "kimi_linear", "Kimi Linear (hybrid MoE)",
    }
}

/// How positions enter the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Positions {
    /// A learned table of `positions` rows added to the embedding (GPT-2):
    /// a sequence cannot be longer than the table.
    Learned,
    /// Rotary embeddings: `positions` is the trained context length (0 if
    /// unknown); longer sequences run (with rope scaling).
    Rotary,
}

/// How a layer's modules are named and registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `GPT2Block`: `ln_1`, `attn` (`c_attn`, `c_proj`), `ln_2`, `mlp`
    /// (`c_fc`, `c_proj`); `heads × head_dim = hidden`.
    Gpt2,
    /// `LlamaDecoderLayer`: `self_attn`, `mlp`, then the norms.
    Llama,
    /// `GPTNeoXLayer`: `input_layernorm`, `post_attention_layernorm`,
    /// `attention` (`query_key_value`, `dense`), `mlp` (`dense_h_to_4h`,
    /// `dense_4h_to_h`), with `use_parallel_residual`: attention and the
    /// MLP both read the layer's input, `x + attn(ln1(x)) + mlp(ln2(x))`.
    NeoX,
}

impl Layout {
    /// A fused attention's modules: the q/k/v projection and the output.
    pub const fn fused_attention(self) -> (ModuleName, ModuleName) {
        match self {
            Layout::Gpt2 => (ModuleName::CAttn, ModuleName::CProjAttn),
            Layout::Llama => (ModuleName::QkvProj, ModuleName::OProj),
            Layout::NeoX => (ModuleName::QueryKeyValue, ModuleName::Dense),
        }
    }

    /// A plain (ungated) MLP's modules: up to the inner width, and down.
    pub const fn plain_mlp(self) -> (ModuleName, ModuleName) {
        match self {
            Layout::Gpt2 | Layout::Llama => (ModuleName::CFc, ModuleName::CProjMlp),
            Layout::NeoX => (ModuleName::DenseHTo4h, ModuleName::Dense4hToH),
        }
    }
}

/// The normalisation layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// `nn.LayerNorm` with weight and bias.
    LayerNorm,
    /// RMSNorm (`x.float()`, `pow(2).mean`, `rsqrt`, `weight * x.to(dtype)`).
    Rms,
    /// RMSNorm that multiplies by the weight in fp32, then casts:
    /// `(weight * x).to(dtype)` (OLMo 2, gpt-oss): the fp32 normalised
    /// input is what the weight's gradient keeps.
    RmsCastAfter,
    /// Gemma's RMSNorm: normalised in fp32, times `(1 + weight.float())`.
    RmsPlusOne,
    /// Gemma 4's RMSNorm: normalised in fp32 by `pow(mean + eps, -0.5)`,
    /// times `weight.float()`, cast back (`Gemma4RMSNorm.forward`,
    /// transformers 5.23); its value norm has no weight.
    RmsScaled,
    /// Nemotron-H's RMSNorm: normalised in fp32 by `rsqrt`, times
    /// `weight.to(float32)` (a copy in a half model), cast back
    /// (`NemotronHRMSNorm.forward`, transformers 5.23).
    RmsWeightFp32,
}

/// Where a layer's norms sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormPlace {
    /// Before attention and before the MLP (Llama, GPT-2).
    Pre,
    /// Before and after each (Gemma 2 and 3: four per layer).
    Sandwich,
    /// After each, on the residual branch (OLMo 2).
    Post,
}

/// How q, k and v are projected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qkv {
    /// `q_proj`, `k_proj`, `v_proj`.
    Separate,
    /// One linear to q, k and v (Phi-3's `qkv_proj`, GPT-2's `c_attn`).
    Fused,
    /// DeepSeek's multi-head latent attention: q (optionally through a
    /// low-rank `q_a_proj`/`q_b_proj`), a compressed kv of `kv_lora_rank`
    /// plus a shared rotary key, expanded by `kv_b_proj`.
    Latent,
}

/// Which attention projections carry a bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttnBias {
    None,
    /// q, k and v (Qwen2).
    Qkv,
    /// q, k, v and the output projection (GPT-2, gpt-oss).
    All,
}

/// How transformers 5.23's tensor parallelism splits the family
/// (`base_model_tp_plan` and the `*ForCausalLM`'s `_tp_plan`, applied by
/// `distributed/tensor_parallel.py: apply_tensor_parallelism`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpPlan {
    /// No plan: `DistributedConfig(tp_size > 1)` raises "has no
    /// `tp_plan`" (GPT-2, GPTBigCode).
    None,
    /// Heads split: q, k, v, gate and up `colwise` (each GPU computes its
    /// heads and its slice of the MLP), o and down `rowwise` (summed by an
    /// all-reduce), the embedding `embedding_rowwise` and the head
    /// `colwise_gather_output` (by vocabulary); norms replicated.
    Heads,
    /// q, k and v split but their outputs gathered (`colwise_gather_output`,
    /// `rowwise_split_input`): every GPU runs attention on all heads (OLMo 2
    /// and 3, Phi-3, MiniMax-M2).
    GatheredHeads,
    /// Latent attention's own styles (`mla_kv_a_proj`; DeepSeek).
    Latent,
    /// The head alone (gpt-oss: its experts have an expert-parallel plan).
    HeadOnly,
}

/// RMSNorms on the queries and keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QkNorm {
    None,
    /// Over each head (`head_dim`; Qwen3, Gemma 3).
    PerHead,
    /// Over all heads together (`heads × head_dim`; OLMo 2).
    Whole,
    /// Over each head, after RoPE, without a weight, in fp32
    /// (`x.float()`, `pow`, `mean`, `rsqrt`, the product, `type_as`), on
    /// the rotated layers only (Llama 4's `use_qk_norm`: transformers 5.23
    /// `Llama4TextL2Norm`, `Llama4TextAttention.__init__`).
    L2,
}

/// What `kv_heads` may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvHeads {
    /// Any divisor of `heads` (grouped-query attention).
    Grouped,
    /// Equal to `heads` (GPT-2).
    Same,
    /// 1 (`multi_query`) or `heads` (GPTBigCode).
    OneOrSame,
}

/// The MLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mlp {
    /// `down(act(gate(x)) * up(x))`, separate gate and up.
    Gated,
    /// As `Gated` with one `gate_up_proj` (Phi-3).
    GatedFused,
    /// `c_proj(act(c_fc(x)))` with biases (GPT-2, GPTBigCode).
    Plain,
    /// `down(act(up(x)))` without gate or biases (Nemotron-H's `relu2`:
    /// transformers 5.23 `NemotronHMLP`, `mlp_bias` false).
    Up,
}

/// What a decoder layer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// Attention (or a recurrent mixer) and then an MLP (or the experts),
    /// every layer.
    Joint,
    /// One of them per layer, behind one norm (Nemotron-H's
    /// `NemotronHBlock`: `norm`, then the `mixer` its `layers_block_type`
    /// names): the architecture's `ffn_layers` are MLPs alone, its
    /// `linear_layers` recurrent mixers alone, the rest attention alone.
    Single,
}

/// Which activation the MLP applies, as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// One kernel (SiLU, `gelu_pytorch_tanh`): saves its input.
    Fused,
    /// transformers' `NewGELUActivation` in Python: `pow`, `tanh` and two
    /// products, each saving tensors.
    GeluNew,
}

/// How the embedding is scaled by √hidden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbedScale {
    None,
    /// A scalar made in every forward (Gemma).
    PerForward,
    /// A 0-dim buffer of the model's dtype (Gemma 2 and 3).
    Buffer,
}

/// The router of a mixture of experts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Router {
    /// `softmax(linear(x))` in fp32, top-k (Mixtral, Qwen-MoE).
    Softmax,
    /// DeepSeek-V2: the logits in fp32 (input and weight cast), softmax.
    SoftmaxFp32,
    /// DeepSeek-V3: fp32 logits, sigmoid, a correction bias (a buffer),
    /// group-limited top-k.
    SigmoidGrouped,
    /// gpt-oss: `linear` with a bias, top-k, softmax over the k.
    TopKSoftmax,
    /// Granite 4.0-H: `linear` (no bias) in the input's dtype, an fp32
    /// copy of the logits (kept to the block's end), top-k, softmax over
    /// the k, cast back to the input's dtype. Source: transformers 5.23
    /// `GraniteMoeHybridTopKRouter.forward`.
    TopKSoftmaxCast,
    /// Gemma 4: the input RMS-normalised without a weight, times a learned
    /// `scale` (h) and `h^-1/2`, `proj` (no bias), softmax in fp32, top-k
    /// renormalised, times a learned `per_expert_scale` (E).
    /// Source: transformers 5.23 `Gemma4TextRouter`.
    Scaled,
    /// MiniMax-M2: `F.linear` of the input (cast to the router's dtype)
    /// with a router parameter, an fp32 sigmoid, a correction bias (a
    /// buffer of the model's dtype) for the choice only, top-k,
    /// renormalised. Source: transformers 5.23 `MiniMaxM2TopKRouter`,
    /// `MiniMaxM2SparseMoeBlock`; held to the harness's MiniMax-M2 rows
    /// (`families.jsonl`).
    SigmoidBias,
    /// Llama 4: `linear` (no bias) in the input's dtype, top-k of the
    /// logits scattered into a `-inf` copy, `sigmoid` in fp32 cast back to
    /// the logits' dtype: a score per expert, zero off the top k.
    /// Source: transformers 5.23 `Llama4Router.forward`.
    TopKSigmoid,
    /// Mistral 4: `F.linear` in the input's dtype (no bias), softmax in the
    /// logits' dtype (fp32 under autocast), DeepSeek-V3's group-limited
    /// choice on a masked copy, the chosen scores gathered and
    /// renormalised in place (`/=`), times `routed_scaling_factor`; no
    /// correction bias. Source: transformers 5.23 `Mistral4TopkRouter`.
    SoftmaxGrouped,
}

/// A mixture-of-experts layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moe {
    pub router: Router,
    /// The experts carry biases (gpt-oss).
    pub expert_bias: bool,
    /// The experts' activation: gated SiLU, or gpt-oss's clamped SwiGLU
    /// on interleaved gate/up.
    pub clamped_swiglu: bool,
    /// Whether the family has a shared expert (an MLP of `shared_experts ×
    /// moe_ffn` every token goes through), and how it joins.
    pub shared: Shared,
    /// The router is registered before the experts (Mixtral, Qwen2-MoE,
    /// gpt-oss) or after them (Qwen3-MoE, DeepSeek): parameter order.
    pub router_first: bool,
    /// The top-k probabilities are renormalised to sum to 1 (Mixtral,
    /// Qwen3-MoE): a clone and the sum are kept.
    pub normalize_top_k: bool,
    /// The routing weights are cast back to the logits' dtype (Qwen-MoE);
    /// otherwise they stay fp32.
    pub weights_in_logits_dtype: bool,
    /// peft 0.21 maps LoRA's MLP targets onto the fused experts for this
    /// family (`utils/transformers_weight_conversion.py`: the names that
    /// matched transformers 4's per-expert linears become
    /// `target_parameters` of the 3-D `gate_up_proj`, at twice the rank,
    /// and `down_proj`; "all-linear" adds the router): gate, up and down
    /// then name the experts, and the family's dense MLPs and shared
    /// experts are not adapted. Without it only linear layers are.
    pub peft_experts: bool,
    /// transformers computes the load-balancing loss when asked
    /// (`output_router_logits`, `load_balancing_loss_func`), keeping every
    /// MoE layer's router logits: Mixtral, Qwen-MoE, gpt-oss; DeepSeek's
    /// models have none (measured: nothing more is kept).
    pub aux_loss: bool,
    /// A dense MLP of `ffn` runs beside the experts in every MoE layer, on
    /// the same input, each output normalised before they are added
    /// (Gemma 4 26B-A4B: `mlp`, then `router` and `experts` with three more
    /// norms, `Gemma4TextDecoderLayer.__init__`).
    pub dense_beside: bool,
    /// The router's projection is an `nn.Linear` of its own, which peft's
    /// all-linear adapts like any linear layer (Gemma 4's
    /// `Gemma4TextRouter.proj`); elsewhere a router parameter, reached only
    /// through peft's experts conversion.
    pub router_linear: bool,
    /// The family's models may have no experts at all (Gemma 4's
    /// `enable_moe_block`): with `experts` 0 every layer is dense.
    pub optional: bool,
    /// mlx-lm quantizes the router (and a shared expert's gate) at 8 bits
    /// in groups of 64, affine, whatever the model's bits or mode (Gemma 4:
    /// `gemma4_text.py` `quant_predicate`, `router.proj`; Qwen3-Next and
    /// Qwen3.5-MoE: `mlp.gate`, `shared_expert_gate`; Qwen3-MoE:
    /// `mlp.gate`; gpt-oss: `router`). Measured: `mlx_modes_rows.jsonl`.
    pub mlx_router_8bit: bool,
    /// The sigmoid router's `e_score_correction_bias` is made fp32
    /// whatever the model's dtype (GLM-4.5: `nn.Buffer(torch.zeros(n,
    /// dtype=torch.float32))`, transformers 5.23 `Glm4MoeTopkRouter`);
    /// DeepSeek-V3's follows the dtype the model is built in
    /// (`torch.zeros(n)`, `DeepseekV3TopkRouter`).
    pub correction_fp32: bool,
    /// mlx-lm keeps the router's expert bias (a parameter there) in fp32
    /// when it casts the weights (LFM2-MoE: `cast_predicate` leaves
    /// `expert_bias` out, `lfm2_moe.py`); measured,
    /// `scripts/measure/mlx/lfm2moe_rows.jsonl`; the correction bias of
    /// mlx-lm's `MoEGate`, DeepSeek-V3's, GLM-4.5's and their kin's,
    /// `mlx_dsa_rows.jsonl`). Other families' MLX bias is not modelled.
    pub mlx_expert_bias_fp32: bool,
    /// mlx-lm's router is a bare weight array, not an `nn.Linear`, so
    /// `quantize_model` never quantizes it: it stays in the model's dtype
    /// (Nemotron-H: `NemotronHTopkRouter`'s `weight`, mlx-lm `nemotron_h.py`;
    /// measured, `scripts/measure/mlx/nemotron_h_rows.jsonl`).
    pub mlx_router_plain: bool,
    /// The shared expert runs before the router, its output alive through
    /// the routed experts (Qwen3.5-MoE and Qwen3-Next:
    /// `Qwen3_5MoeSparseMoeBlock.forward`, `Qwen3NextSparseMoeBlock.forward`);
    /// otherwise after them (Qwen2-MoE, DeepSeek).
    pub shared_first: bool,
    /// transformers runs every token through every expert, its input
    /// scaled by the expert's score (zero off the top k): `hidden_states
    /// .repeat(num_experts, 1)` and one `bmm` over the stacked experts
    /// (Llama 4: transformers 5.23 `Llama4TextMoe.forward`,
    /// `Llama4TextExperts.forward`), activations `num_experts` times a
    /// dense MLP's. Training and `generate` are modelled from their
    /// measurement (`scripts/measure/families/llama4/dense/`,
    /// `.../llama4/generate/`).
    pub dense_dispatch: bool,
    /// The shared expert runs in the decoder layer, after the MoE block
    /// has returned (Granite 4.0-H: `GraniteMoeHybridDecoderLayer.forward`
    /// adds `shared_mlp`'s output to `moe_hidden_states`): the router's
    /// tensors are gone before it, and the routed output, a local of the
    /// layer, lives to the layer's end. Otherwise the block runs it.
    pub shared_in_layer: bool,
    /// Experts only on every `moe_step`-th layer, a dense MLP of `ffn` on
    /// the others (Llama 4 Maverick's `interleave_moe_layer_step` 2:
    /// transformers 5.23 `Llama4TextConfig.__post_init__`, `moe_layers =
    /// range(step - 1, layers, step)`; llama.cpp b10488 `llama4.cpp`,
    /// `(i + 1) % n_moe_layer_step == 0`).
    pub interleaved: bool,
}

/// A mixture of experts' shared expert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// None in this family.
    None,
    /// Added to the routed output (DeepSeek).
    Plain,
    /// Scaled by `sigmoid(shared_expert_gate(x))` (Qwen2-MoE; the gate is a
    /// linear h → 1).
    Gated,
}

/// How rotary position embeddings are applied (transformers 5.23's
/// `apply_rotary_pos_emb` of each family), as inference's forward pass
/// allocates them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeStyle {
    /// Learned positions: no rotary tables.
    None,
    /// `q * cos + rotate_half(q) * sin`, cos and sin in the model's dtype.
    Half,
    /// As `Half`, then the rotated and pass-through parts concatenated
    /// (Phi-3's partial rotary).
    HalfCat,
    /// cos and sin kept in fp32, so the rotated q and k are fp32 before a
    /// cast back (OLMo 2).
    HalfFp32,
    /// Half-width cos and sin applied to each half of the head, then
    /// concatenated (gpt-oss).
    Split,
    /// A complex64 `freqs_cis` table (DeepSeek-V2; Llama 4, whose
    /// `apply_rotary_emb` turns q and k together).
    Complex,
    /// Llama's cos and sin over the rotary part of a latent head (fp32,
    /// cast to the model's dtype), applied to its interleaved pairs
    /// (transformers 5.23 `DeepseekV3RotaryEmbedding`,
    /// `apply_rotary_pos_emb_interleave`: DeepSeek-V3 and the families
    /// built on its attention).
    Interleave,
    /// The first `rope_dim` channels of each head rotated as `Half`, the
    /// rest passed through, the two concatenated (`torch.cat([q_embed,
    /// q_pass])`), on separate q, k and v projections; cos and sin are
    /// `rope_dim` wide (GLM-4.5: transformers 5.23 `glm4_moe`'s
    /// `apply_rotary_pos_emb`, GPT-NeoX's, with `partial_rotary_factor`
    /// 0.5 in `Glm4MoeRotaryEmbedding.compute_default_rope_parameters`).
    PartialCat,
    /// Qwen3.5's multimodal rotary on text: `rope_dim` channels rotated
    /// and concatenated with the rest as `PartialCat`, from tables built
    /// over three position rows (`(3, B, T, rope_dim / 2)` in fp32),
    /// recomposed into one `(B, T, rope_dim)` cos and sin, cast to the
    /// model's dtype (transformers 5.23 `Qwen3_5TextRotaryEmbedding`).
    Mrope,
}

/// Which layers a config's `sliding_window` applies to, when the config
/// has no `layer_types` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sliding {
    /// The family has no sliding window (or ignores it: Qwen's
    /// `use_sliding_window: false`).
    None,
    /// Every layer (Mistral, Mixtral, Phi-3).
    All,
    /// Every other layer, from the first (Gemma 2).
    EveryOther,
    /// All but every n-th layer (`sliding_window_pattern`; Gemma 3: 6).
    AllButEvery(u32),
}

/// What a family's own modeling code did differently in transformers 4
/// (the release decides which applies: `train::stack::StackSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Legacy {
    /// The model computes its own causal-LM loss on the logits as they
    /// are (half precision), shifted by a contiguous copy, through
    /// transformers 4.48.2 (GPTBigCode: `GPTBigCodeForCausalLM.forward`).
    pub own_loss: bool,
    /// `use_cache` stays on under checkpointing and every layer returns its
    /// key/value cache, a view of its whole fused `c_attn` output, kept
    /// until the output object is dropped (GPTBigCode through 4.52.4).
    pub cache_under_ckpt: bool,
    /// The layers are plain modules that never checkpoint (GPTBigCode in
    /// 4.54 to 4.57: `gradient_checkpointing_enable()` sets a flag nothing
    /// reads).
    pub ckpt_ignored: bool,
    /// The routed experts are `nn.Linear` modules, one MLP per expert in an
    /// `nn.ModuleList` looped over in forward (Mixtral, Qwen2-MoE,
    /// Qwen3-MoE, DeepSeek-V2 and -V3 through 4.57.6); `None` for stacked
    /// experts (gpt-oss: `experts_looped`).
    pub expert_linears: Option<ExpertLinears>,
    /// The routed experts stay 3-D parameters but training loops over them
    /// one at a time, each expert's slice taken from the stacked weights,
    /// and the router is a parameter, not an `nn.Linear` (gpt-oss 4.55 to
    /// 4.57: `GptOssExperts.forward` when `self.training`).
    pub experts_looped: bool,
    /// transformers 4.48 has the model type (Qwen3, Qwen3-MoE, Gemma 3,
    /// DeepSeek-V2 and -V3 and gpt-oss came later: 4.48.1's
    /// `transformers/models/` has none of them, 4.57.6's has them all).
    pub in_448: bool,
    /// transformers 4.57 has it. Not so: `glm4_moe_lite` (vLLM's config
    /// shim: "Transformers 4.x does not ship a `Glm4MoeLiteConfig`"),
    /// `ministral3` (in the v5.0.0rc0 docs; Megatron-Bridge: "upgrade to
    /// transformers v5"), `qwen3_5` (5.2) and `gemma4` (5.5, both in
    /// `../shared/design/families-2026.md`).
    pub in_457: bool,
    /// transformers 4 has the model type, but its modeling code keeps
    /// other tensors than 5's and vramfit does not model it: refused on
    /// 4.48 and 4.57 (GPT-NeoX: 4.48.1's rows, `raw/gpt_neox_t448_rows.jsonl`
    /// in `scripts/measure/families/`, differ from 5.23's by up to 28%).
    pub v4_unmodelled: bool,
}

/// transformers 4's per-expert linear layers, as its modeling code names
/// them.
///
/// Source: transformers 4.48.1 and 4.57.6 `MixtralBlockSparseTop2MLP`
/// (`w1`, `w2`, `w3 = nn.Linear(...)`), `Qwen2MoeMLP`, 4.57.6
/// `Qwen3MoeMLP` and `DeepseekV3MLP` (`gate_proj`, `up_proj`,
/// `down_proj`), each family's sparse block (`experts =
/// nn.ModuleList(...)`, the router `gate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpertLinears {
    /// h → moe_ffn, through the activation.
    pub gate: ModuleName,
    /// moe_ffn → h.
    pub down: ModuleName,
    /// h → moe_ffn, multiplied by the activation.
    pub up: ModuleName,
    /// Registered as gate, up, down (Qwen, DeepSeek) rather than Mixtral's
    /// w1, w2, w3 (gate, down, up).
    pub up_before_down: bool,
    /// The router is an `nn.Linear` `gate` (Mixtral, Qwen-MoE), which
    /// bitsandbytes quantizes and LoRA adapts; DeepSeek's is a parameter
    /// its own forward multiplies in fp32.
    pub router_linear: bool,
    /// The routing weights are cast to the input's dtype before they scale
    /// the experts' outputs (Mixtral, Qwen-MoE); DeepSeek's stay in the
    /// router's dtype (fp32, bf16 under autocast), and so do the scaled
    /// outputs and their sum.
    pub weights_cast: bool,
    /// How the routed rows reach each expert and come back.
    pub dispatch: Dispatch,
}

/// How transformers 4's loop hands each expert its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Expert by expert, `torch.where` over a one-hot mask picks its
    /// tokens, the gathered rows go through it, are scaled by their routing
    /// weights and `index_add_`ed into the output (Mixtral, Qwen-MoE,
    /// DeepSeek-V3).
    Masked,
    /// Every routed row sorted by expert at once (`argsort`, one indexed
    /// copy), each expert run on its slice, the outputs concatenated and
    /// put back in token order (`index_put_`), then scaled in the routing
    /// weights' dtype and summed per token (DeepSeek-V2's
    /// `DeepseekV2MoE.moe`).
    Sorted,
}

impl ExpertLinears {
    /// The three in registration order.
    pub const fn in_order(self) -> [ModuleName; 3] {
        if self.up_before_down {
            [self.gate, self.up, self.down]
        } else {
            [self.gate, self.down, self.up]
        }
    }
}

/// Mixtral's per-expert MLPs on transformers 4 (`w1`, `w2`, `w3`).
const MIXTRAL_LEGACY: Legacy = Legacy {
    expert_linears: Some(ExpertLinears {
        gate: ModuleName::W1,
        down: ModuleName::W2,
        up: ModuleName::W3,
        up_before_down: false,
        router_linear: true,
        weights_cast: true,
        dispatch: Dispatch::Masked,
    }),
    ..NO_LEGACY
};

/// Qwen-MoE's per-expert MLPs on transformers 4.
const QWEN_LEGACY: Legacy = Legacy {
    expert_linears: Some(GATE_UP_DOWN),
    ..NO_LEGACY
};

/// Qwen3-MoE's, which came after transformers 4.48.
const QWEN3_MOE_LEGACY: Legacy = Legacy {
    in_448: false,
    ..QWEN_LEGACY
};

/// A model type transformers 4.48 does not have.
const AFTER_448: Legacy = Legacy {
    in_448: false,
    ..NO_LEGACY
};

/// A model type only transformers 5 has.
const ONLY_5: Legacy = Legacy {
    in_457: false,
    ..AFTER_448
};

/// Per-expert MLPs named as a dense MLP's, registered gate, up, down.
const GATE_UP_DOWN: ExpertLinears = ExpertLinears {
    gate: ModuleName::GateProj,
    down: ModuleName::DownProj,
    up: ModuleName::UpProj,
    up_before_down: true,
    router_linear: true,
    weights_cast: true,
    dispatch: Dispatch::Masked,
};

/// DeepSeek-V3's per-expert MLPs on transformers 4.57 (`DeepseekV3MoE.moe`:
/// a router parameter, routing weights and their sum in its dtype).
const DEEPSEEK_V3_LEGACY: Legacy = Legacy {
    expert_linears: Some(ExpertLinears {
        router_linear: false,
        weights_cast: false,
        ..GATE_UP_DOWN
    }),
    ..AFTER_448
};

/// DeepSeek-V2's per-expert MLPs on transformers 4.57 (`DeepseekV2MoE.moe`:
/// a router parameter, the rows sorted by expert, fp32 routing weights).
const DEEPSEEK_V2_LEGACY: Legacy = Legacy {
    expert_linears: Some(ExpertLinears {
        router_linear: false,
        weights_cast: false,
        dispatch: Dispatch::Sorted,
        ..GATE_UP_DOWN
    }),
    ..AFTER_448
};

/// gpt-oss's stacked experts, looped over in training on transformers 4.
const GPT_OSS_LEGACY: Legacy = Legacy {
    experts_looped: true,
    ..AFTER_448
};

/// Nothing different.
pub const NO_LEGACY: Legacy = Legacy {
    own_loss: false,
    cache_under_ckpt: false,
    ckpt_ignored: false,
    expert_linears: None,
    experts_looped: false,
    in_448: true,
    in_457: true,
    v4_unmodelled: false,
};

impl Sliding {
    /// Whether layer `l` uses the window under this rule (transformers'
    /// default `layer_types`: Gemma 2 `sliding_attention` when `(l + 1) % 2`,
    /// Gemma 3 when `(l + 1) % 6`, gpt-oss from the first layer on).
    pub const fn slides(self, l: u32) -> bool {
        match self {
            Sliding::None => false,
            Sliding::All => true,
            Sliding::EveryOther => l.is_multiple_of(2),
            Sliding::AllButEvery(n) => !(l + 1).is_multiple_of(n),
        }
    }

    /// How many of `layers` layers use the window under this rule.
    pub const fn count(self, layers: u32) -> u32 {
        match self {
            Sliding::None => 0,
            Sliding::All => layers,
            Sliding::EveryOther => layers.div_ceil(2),
            Sliding::AllButEvery(n) => match layers.checked_div(n) {
                Some(full) => layers - full,
                None => layers,
            },
        }
    }
}

/// Gated DeltaNet linear-attention layers beside full-attention ones (a
/// hybrid). Which layers: all but every `full_every`-th
/// (`full_attention_interval`, transformers' default `layer_types`:
/// `"linear_attention" if (i + 1) % interval else "full_attention"`); the
/// architecture's `linear_layers` counts them.
///
/// Source: transformers 5.23 `Qwen3NextGatedDeltaNet.__init__` and
/// `Qwen3_5GatedDeltaNet.__init__` (`conv1d` depthwise over `2·Hk·Dk +
/// Hv·Dv` channels, no bias; `dt_bias` and `A_log` of `Hv`; a gated RMSNorm
/// of `Dv`; `out_proj` `Hv·Dv → h`), `Qwen3NextConfig.__post_init__`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Linear {
    /// What the recurrent layers are.
    pub kind: Recurrence,
    /// The input projections: Qwen3-Next's two fused ones (`in_proj_qkvz`
    /// `h → 2·Hk·Dk + 2·Hv·Dv`, `in_proj_ba` `h → 2·Hv`), registered first,
    /// or Qwen3.5's four (`in_proj_qkv`, `in_proj_z`, `in_proj_b`,
    /// `in_proj_a`), registered last. The same parameters either way.
    pub fused_in_proj: bool,
    /// The default `full_attention_interval`.
    pub full_every: u32,
    /// The last layer is full attention too, whatever the interval (Kimi
    /// Linear's `full_attn_layers`: 4, 8, ..., 24 and 27 of 27).
    pub last_full: bool,
    /// mlx-lm keeps `A_log` as the checkpoint stores it, fp32, when it
    /// casts the weights to the model's dtype (`cast_predicate`,
    /// `qwen3_5.py`, mlx-lm PR #902); `qwen3_next.py` casts it with the
    /// rest. Measured: `scripts/measure/mlx/hybrid_rows.jsonl`.
    pub mlx_a_log_fp32: bool,
    /// vLLM keeps the recurrent state in fp32 unless told otherwise: the
    /// published configs' `mamba_ssm_dtype` is `float32` (every Qwen3.5 /
    /// 3.6 config; Qwen3-Next's has none;
    /// `Qwen3_5ForConditionalGenerationConfig`), or vLLM's own default for
    /// the family (Nemotron-H: `NemotronHForCausalLMConfig`,
    /// `DEFAULT_MAMBA_SSM_CACHE_DTYPE`); vLLM 0.33
    /// `model_executor/models/config.py:812-840, 953-977`.
    pub ssm_fp32: bool,
    /// The multi-token-prediction layers vLLM's MTP drafter builds
    /// (`mtp_num_hidden_layers`: 1 in every Qwen3.5 / 3.6 release, the
    /// published configs; vLLM 0.33 `models/qwen3_5_mtp.py`,
    /// `qwen3_next_mtp.py`); 0: a drafter vramfit does not size.
    pub mtp_layers: u32,
    /// The tokens of one chunk of transformers' chunked scan in the
    /// prompt's forward (Mamba-2's torch fallback: `mamba_chunk_size` for
    /// Granite 4.0-H, 256 in every published config and the config's
    /// default); 0: not a chunked scan vramfit reads. A config naming
    /// another is refused.
    pub chunk: u32,
}

/// The kind of a hybrid's recurrent layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recurrence {
    /// Gated DeltaNet (Qwen3-Next, Qwen3.5 / 3.6): a causal convolution
    /// over q, k and v and a state of value heads × key dim × value dim.
    GatedDeltaNet,
    /// LFM2's gated short convolution (`Lfm2ShortConv`: `in_proj` `h → 3h`
    /// split into B, C and x, a depthwise `nn.Conv1d` of `conv_L_cache`
    /// over `B·x`, `out_proj` of `C·conv`): its state is the last `L_cache
    /// - 1` inputs of the convolution, `h` channels; no other state.
    /// Source: transformers 5.23 `models/lfm2/modeling_lfm2.py`.
    ShortConv,
    /// Mamba-2 (`BambaMixer`, Granite 4.0-H): `in_proj` `h → 2·d_inner +
    /// 2·G·N + H`, a depthwise convolution over `d_inner + 2·G·N` channels
    /// with a bias, `dt_bias`, `A_log` and `D` per head, a gated RMSNorm over
    /// `d_inner`, `out_proj`. Its state has DeltaNet's shape, read through
    /// the same numbers: heads `H` (`linear_v_heads`) × head dim `P`
    /// (`linear_v_dim`) × state `N` (`linear_k_dim`), the convolution over
    /// `H·P + 2·G·N` with `G` groups (`linear_k_heads`).
    /// Source: transformers 5.23 `models/bamba/modeling_bamba.py`
    /// (`BambaMixer.__init__`), `GraniteMoeHybridConfig`.
    Mamba2,
    /// Kimi Delta Attention (`KimiDeltaAttention`, Kimi Linear): `q_proj`,
    /// `k_proj`, `v_proj` (`h → H·D` each) behind a depthwise convolution
    /// of `short_conv_kernel_size` each (one `conv1d` over `3·H·D` in
    /// transformers), a low-rank forget gate (`f_a_proj` `h → D`, `f_b_proj`
    /// `D → H·D`, `dt_bias`, `A_log`), `b_proj` `h → H`, a low-rank output
    /// gate (`g_a_proj`, `g_b_proj`), `o_norm` over `D`, `o_proj`. Its state
    /// has the Gated DeltaNet's shape with `H` key and value heads of `D`
    /// (`linear_k_heads` = `linear_v_heads`, `linear_k_dim` =
    /// `linear_v_dim`). Source: transformers 5.23
    /// `models/kimi_linear/modeling_kimi_linear.py`; llama.cpp b10488
    /// `src/models/kimi-linear.cpp`; measured,
    /// `scripts/measure/families/kimi_linear/`.
    Kda,
}

impl Recurrence {
    /// The layers' name in the page's words.
    pub const fn layers_label(self) -> &'static str {
        match self {
            Recurrence::GatedDeltaNet => "Gated DeltaNet layers",
            Recurrence::ShortConv => "short-convolution layers",
            Recurrence::Mamba2 => "Mamba-2 layers",
            Recurrence::Kda => "KDA layers",
        }
    }

    /// llama.cpp's converter marks these layers with 0 key/value heads in a
    /// per-layer `attention.head_count_kv` (`conversion/lfm2.py`,
    /// `conversion/granite.py`); the Gated DeltaNet models' is one number
    /// (their layers follow `full_attention_interval`).
    pub const fn zero_kv_heads(self) -> bool {
        match self {
            Recurrence::ShortConv | Recurrence::Mamba2 | Recurrence::Kda => true,
            Recurrence::GatedDeltaNet => false,
        }
    }

    /// The config field that lists which layers they are.
    pub const fn order_field(self) -> &'static str {
        match self {
            Recurrence::GatedDeltaNet => "layer_types",
            Recurrence::ShortConv => "layer_types, or full_attn_idxs",
            Recurrence::Mamba2 => "layer_types",
            Recurrence::Kda => "linear_attn_config.kda_layers",
        }
    }
}

impl Linear {
    /// Gated DeltaNet's fields, for a short-convolution family: nothing of
    /// theirs applies (`full_every` 0: the layers are the config's list).
    pub const SHORT_CONV: Linear = Linear {
        kind: Recurrence::ShortConv,
        fused_in_proj: false,
        full_every: 0,
        last_full: false,
        mlx_a_log_fp32: false,
        ssm_fp32: false,
        mtp_layers: 0,
        chunk: 0,
    };

    /// Mamba-2 layers: no pattern of their own (`layer_types` lists them);
    /// Granite 4.0-H's chunk of 256 tokens.
    pub const MAMBA2: Linear = Linear {
        kind: Recurrence::Mamba2,
        chunk: 256,
        ..Linear::SHORT_CONV
    };

    /// Whether the recurrent layers are Gated DeltaNet layers.
    pub const fn delta_net(self) -> bool {
        matches!(self.kind, Recurrence::GatedDeltaNet)
    }

    /// Whether the layers' state is read through the head numbers
    /// (`linear_k_heads`, `linear_v_heads`, `linear_k_dim`,
    /// `linear_v_dim`): Gated DeltaNet's, Mamba-2's and KDA's, not LFM2's.
    pub const fn headed(self) -> bool {
        match self.kind {
            Recurrence::GatedDeltaNet | Recurrence::Mamba2 | Recurrence::Kda => true,
            Recurrence::ShortConv => false,
        }
    }

    /// Whether layer `l` of `layers` is a linear-attention layer under the
    /// family's default pattern.
    pub const fn linear_at(self, l: u32, layers: u32) -> bool {
        self.full_every == 0
            || !((l + 1).is_multiple_of(self.full_every) || (self.last_full && l + 1 == layers))
    }

    /// How many of `layers` layers are linear-attention layers under the
    /// default pattern.
    pub const fn count(self, layers: u32) -> u32 {
        match layers.checked_div(self.full_every) {
            // The last layer, full when the interval leaves it linear.
            Some(full) => {
                let last = self.last_full && !layers.is_multiple_of(self.full_every);
                layers - full - last as u32
            }
            None => layers,
        }
    }

    /// How many of the first `n` of `layers` layers are linear-attention
    /// layers under the default pattern.
    pub const fn below(self, n: u32, layers: u32) -> u32 {
        let Some(full) = n.checked_div(self.full_every) else {
            return n;
        };
        if n >= layers {
            return self.count(layers);
        }
        n - full
    }
}

/// A family's build, as transformers' modeling file writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub layout: Layout,
    pub positions: Positions,
    pub norm: Norm,
    pub norm_place: NormPlace,
    pub qkv: Qkv,
    pub attn_bias: AttnBias,
    pub qk_norm: QkNorm,
    pub kv_heads: KvHeads,
    /// Attention logits softcapped: `tanh(scores / c) × c` (Gemma 2; eager).
    pub attn_softcap: bool,
    /// Dropout on the residual branches and the embeddings as well as on
    /// the attention probabilities (GPT-2's `resid_pdrop` and `embd_pdrop`,
    /// GPT-NeoX's `hidden_dropout`), when there is any.
    pub resid_dropout: bool,
    /// A learned sink logit per head (gpt-oss; eager).
    pub sinks: bool,
    pub mlp: Mlp,
    pub act: Act,
    /// Whether a layer holds a mixer and an MLP, or one of them.
    pub blocks: Blocks,
    /// Routed experts (in the layers after `dense_layers`).
    pub moe: Option<Moe>,
    pub embed_scale: EmbedScale,
    /// Final logits softcapped (Gemma 2): logits-sized `tanh` kept.
    pub final_softcap: bool,
    /// Granite's multipliers, each a tensor op under `generate`: the
    /// embeddings times `embedding_multiplier` (the lookup freed), each
    /// residual branch times `residual_multiplier` before its add, the
    /// logits divided by `logits_scaling`. Source: transformers 5.23
    /// `GraniteMoeHybridModel.forward`, `GraniteMoeHybridDecoderLayer
    /// .forward`, `GraniteMoeHybridForCausalLM.forward`.
    pub granite_scales: bool,
    /// The head's output is cast to fp32 in the model's forward
    /// (Nemotron-H: `self.lm_head(hidden_states).float()`,
    /// `NemotronHForCausalLM.forward`): the logits `generate` holds are
    /// fp32.
    pub logits_fp32: bool,
    /// `tie_word_embeddings` when a config.json leaves it out.
    pub tied_default: bool,
    /// Dropout the published config sets (attention, residual and
    /// embedding), in ten-thousandths.
    pub dropout: u16,
    /// RoPE tables: 0 (learned positions), 1, or 2 (Gemma 3's local and
    /// global), each an `inv_freq` and `original_inv_freq` buffer.
    pub rope_tables: u8,
    /// Which layers use the config's sliding window.
    pub sliding: Sliding,
    /// The window is a chunk: a token attends to the tokens of its own
    /// block of `sliding_window` (`⌊p / w⌋·w ..= p`), not to the last `w`
    /// (Llama 4's `attention_chunk_size`: transformers 5.23
    /// `create_chunked_causal_mask`; vLLM's `ChunkedLocalAttentionSpec`;
    /// llama.cpp's `LLAMA_SWA_TYPE_CHUNKED`; mlx-lm's `ChunkedKVCache`).
    pub chunked: bool,
    /// The decoder layer keeps the attention's output in a local of its
    /// own (`attention_states`) until it returns, so it is alive through
    /// the MLP (Llama 4: transformers 5.23 `Llama4TextDecoderLayer.forward`;
    /// measured in `generate`, `scripts/measure/families/llama4/dense/`).
    pub attn_out_held: bool,
    /// What its transformers 4 modeling code did differently.
    pub legacy: Legacy,
    /// With `use_cache` on and no checkpointing, transformers 5 passes
    /// each layer's keys and values through `DynamicCache.update`
    /// (`torch.cat`), and attention saves the copies (GPTBigCode's
    /// multi-query cache; measured: +2 · kv width · 2 bytes per token and
    /// layer, `scripts/measure/t4/NOTES.md`; Mistral keeps nothing more).
    pub cache_copies: bool,
    /// How rotary positions are applied.
    pub rope: RopeStyle,
    /// How tensor parallelism splits it.
    pub tp: TpPlan,
    /// A `(positions, positions)` boolean causal-mask buffer registered at
    /// init (GPTBigCode's `bias`).
    pub mask_buffer: bool,
    /// Gated attention: `q_proj` makes twice the query width, the second
    /// half a per-head output gate (`sigmoid(gate) * attn_output`; Qwen3-Next
    /// and Qwen3.5 `*Attention.__init__`: `num_attention_heads * head_dim *
    /// 2`).
    pub attn_gate: bool,
    /// Gated DeltaNet layers beside full attention (a hybrid); `None`:
    /// every layer is full or sliding attention.
    pub linear: Option<Linear>,
    /// Full-attention ("global") layers may have heads of their own width
    /// (`global_head_dim`), their own key/value head count
    /// (`num_global_key_value_heads`, applied with `attention_k_eq_v`) and
    /// keys that are also the values (no `v_proj`); every layer has an
    /// unweighted RMSNorm on its values (`v_norm`).
    /// Source: transformers 5.23 `Gemma4TextConfig.__post_init__`
    /// (`per_layer_config`), `Gemma4TextAttention.__init__`.
    pub global_attention: bool,
    /// The last `kv_shared_layers` layers reuse the keys and values of the
    /// last earlier layer of their kind: no `k_proj`, `v_proj`, `k_norm` of
    /// their own and no cache; with `use_double_wide_mlp` their MLP is
    /// twice as wide. Source: transformers 5.23
    /// `Gemma4TextConfig.kv_sharing_modes`, `Gemma4TextAttention.__init__`
    /// ("Layers sharing kv states don't need any weight matrices"),
    /// `Gemma4TextMLP.__init__`.
    pub kv_sharing: bool,
    /// Per-layer embeddings (`hidden_size_per_layer_input` > 0): a table of
    /// `vocab_size_per_layer_input × (layers · p)` and a projection `h →
    /// layers · p` with its norm after the final norm, and in each layer a
    /// gate `h → p`, a projection `p → h` and a norm. Source: transformers
    /// 5.23 `Gemma4TextModel.__init__`, `Gemma4TextDecoderLayer.__init__`.
    pub per_layer_embeddings: bool,
    /// A one-element `layer_scalar` buffer in every layer (Gemma 4).
    pub layer_scalar: bool,
    /// The kinds of placeholder token (image, video, audio) whose masks
    /// the multimodal wrapper transformers loads for the published
    /// checkpoints builds in every forward (Gemma 4: three,
    /// `Gemma4Model.get_placeholder_mask`, and the 12B's
    /// `Gemma4UnifiedModel`); 0: none.
    pub placeholder_kinds: u8,
    /// The wrapper also builds token-type ids and, from them, a mask for
    /// every layer, full and sliding, per sequence (Gemma 4 12B:
    /// `Gemma4UnifiedModel.forward`, transformers 5.23; measured,
    /// `scripts/measure/gemma4/generate_unified_rows.jsonl`).
    pub token_type_mask: bool,
    /// The published checkpoints are multimodal (a
    /// `…ForConditionalGeneration` with a vision tower, and audio on
    /// Gemma 4's E2B and E4B), which the engines load beside the language
    /// model and vramfit does not size: vLLM their encoders (Gemma 4's
    /// `models/gemma4_mm.py`, the 12B's `gemma4_unified.py`, Ministral 3's
    /// Pixtral, `mistral3.py`, Llama 4's `mllama4.py`, Qwen3.5 / 3.6's
    /// `qwen3_5.py`), Ollama the projector of its builds (`--mmproj`,
    /// `llm/llama_server.go`), llama.cpp one passed with `--mmproj`.
    pub multimodal: bool,
    /// The q/k norms (`qk_norm`) are the config's choice, the
    /// architecture's `qk_norm` number (GLM-4.5's `use_qk_norm`: on in
    /// GLM-4.5/4.6, off in GLM-4.5-Air); otherwise every model of the
    /// family has them as `qk_norm` says.
    pub qk_norm_optional: bool,
    /// A norm without weight on each value head (Gemma 4's `v_norm`,
    /// `Gemma4TextAttention.__init__`).
    pub v_norm: bool,
    /// DeepSeek Sparse Attention's lightning indexer in the attention of
    /// every layer: `wq_b` (`q_lora_rank → index_heads · index_head_dim`),
    /// `wk` (`h → index_head_dim`), `k_norm` (a LayerNorm with bias) and
    /// `weights_proj` (`h → index_heads`; transformers keeps it fp32 only
    /// when it loads the model in fp16, `_keep_in_fp32_modules`), and a key
    /// cache of `index_head_dim` per token. Layers that reuse the previous
    /// layer's choice of tokens instead (GLM-5.2's "shared" `indexer_types`,
    /// `GlmMoeDsaAttention.__init__`: `indexer = None`) are refused by the
    /// readers. Source: transformers 5.23 `DeepseekV32Indexer.__init__`,
    /// `DeepseekV32PreTrainedModel`.
    pub indexer: bool,
    /// The indexer rotates its keys and queries as the latent's rotary part
    /// does (`indexer_rope_interleave`: GLM-5), so vLLM shares one rotary
    /// table between them; DeepSeek-V3.2's indexer rotates the halves and
    /// has a table of its own (`models/deepseek_v32/attention.py`:
    /// `indexer_rope_emb`, `get_rope` keyed on `is_neox_style`).
    pub indexer_rope_shared: bool,
    /// vLLM 0.33 gives the model an fp8 key/value cache on datacenter
    /// Blackwell when the cache is left `auto`
    /// (`GlmMoeDsaForCausalLM.verify_and_update_config`,
    /// `model_executor/models/config.py:89-101`).
    pub vllm_blackwell_fp8_cache: bool,
    /// Llama 4's attention temperature: the rotated query multiplied by
    /// `1 + β·log(1 + ⌊position / original_max_position_embeddings⌋)`, a
    /// `(1, 1, S, 1)` factor in the query's dtype that the product saves
    /// for backward, the product a new query (transformers 5.23
    /// `Ministral3Attention.forward`, `get_llama_4_attn_scale`).
    pub query_scale: bool,
    /// The full-attention layers take no RoPE (nor the q/k norm, which
    /// follows it) and scale their query by the temperature instead
    /// (`query_scale`), by scales in fp32 (`positions.float()`); the
    /// sliding (chunked) layers are the rotated ones
    /// (Llama 4's `no_rope_layers`: transformers 5.23
    /// `Llama4TextAttention.forward`, `use_rope`).
    pub nope_full: bool,
    /// Eager attention's softmax runs in the scores' dtype (no fp32 copy,
    /// no cast back; Llama 4: transformers 5.23 `eager_attention_forward`
    /// of `modeling_llama4.py`, "llama4 doesn't cast attn weights to fp32").
    pub softmax_in_dtype: bool,
    /// AltUp and Laurel (Gemma 3n): the hidden state runs as four
    /// streams, made by three `h → h` projections after the embedding and
    /// folded back by three more before the final norm
    /// (`altup_projections`, `altup_unembed_projections`); every layer
    /// predicts and corrects them (`altup`: `correct_output_scale` (h),
    /// `correction_coefs` 4 → 4, `prediction_coefs` 4 → 16,
    /// `modality_router` h → 4, `router_norm`) and adds a rank-64 branch
    /// (`laurel`: `linear_left` h → 64, `linear_right` 64 → h,
    /// `post_laurel_norm`). llama.cpp b10488 fixes the streams at 4 and the
    /// rank at 64 (`llama-hparams.h`: `n_altup`, `laurel_rank`), the
    /// converter asserts 4 (`conversion/gemma.py` `Gemma3NModel`).
    /// Source: transformers 5.23 `Gemma3nTextAltUp.__init__`,
    /// `Gemma3nTextLaurelBlock.__init__`, `Gemma3nTextModel.__init__`.
    pub altup: bool,
    /// mlx-lm loads the checkpoint's keys and values of the layers that
    /// reuse an earlier layer's (`k_proj`, `v_proj`, `k_norm`: every
    /// `Attention` has them, `sanitize` drops only the towers; mlx-lm
    /// d78bf58e `models/gemma3n.py`), which transformers leaves unloaded;
    /// measured, `scripts/measure/families/gemma3n/mlx_real.txt`.
    pub mlx_keeps_shared_kv: bool,
    /// mlx-lm has a model of this type (`mlx_lm/models/`); without one
    /// `mlx_lm.generate` cannot load the checkpoint and MLX is refused.
    pub in_mlx_lm: bool,
}

const LLAMA: Spec = Spec {
    layout: Layout::Llama,
    positions: Positions::Rotary,
    norm: Norm::Rms,
    norm_place: NormPlace::Pre,
    qkv: Qkv::Separate,
    attn_bias: AttnBias::None,
    qk_norm: QkNorm::None,
    kv_heads: KvHeads::Grouped,
    attn_softcap: false,
    resid_dropout: false,
    sinks: false,
    mlp: Mlp::Gated,
    act: Act::Fused,
    blocks: Blocks::Joint,
    moe: None,
    embed_scale: EmbedScale::None,
    final_softcap: false,
    granite_scales: false,
    logits_fp32: false,
    tied_default: false,
    dropout: 0,
    rope_tables: 1,
    sliding: Sliding::None,
    chunked: false,
    attn_out_held: false,
    legacy: NO_LEGACY,
    cache_copies: false,
    rope: RopeStyle::Half,
    tp: TpPlan::Heads,
    mask_buffer: false,
    attn_gate: false,
    linear: None,
    global_attention: false,
    kv_sharing: false,
    per_layer_embeddings: false,
    layer_scalar: false,
    placeholder_kinds: 0,
    token_type_mask: false,
    multimodal: false,
    qk_norm_optional: false,
    v_norm: false,
    query_scale: false,
    nope_full: false,
    softmax_in_dtype: false,
    indexer: false,
    indexer_rope_shared: false,
    vllm_blackwell_fp8_cache: false,
    altup: false,
    mlx_keeps_shared_kv: false,
    in_mlx_lm: true,
};

/// Qwen3-Next and Qwen3.5: zero-centred RMSNorms (`(1 + weight)`, in fp32)
/// before each sub-layer and on each query and key head, gated full
/// attention every fourth layer, Gated DeltaNet in the others.
/// Source: transformers 5.23 `Qwen3NextRMSNorm.forward`,
/// `Qwen3NextDecoderLayer.__init__`, `Qwen3_5DecoderLayer.__init__`.
const QWEN_HYBRID: Spec = Spec {
    // Every Qwen3.5 / 3.6 release is `Qwen3_5(Moe)ForConditionalGeneration`
    // with a `vision_config` (`tests/fixtures/hf_configs/qwen3.6-*.json`).
    multimodal: true,
    norm: Norm::RmsPlusOne,
    rope: RopeStyle::Mrope,
    qk_norm: QkNorm::PerHead,
    attn_gate: true,
    linear: Some(Linear {
        kind: Recurrence::GatedDeltaNet,
        fused_in_proj: false,
        full_every: 4,
        last_full: false,
        mlx_a_log_fp32: true,
        ssm_fp32: true,
        mtp_layers: 1,
        chunk: 0,
    }),
    legacy: ONLY_5,
    ..LLAMA
};

/// Qwen3-Next's and Qwen3.5-MoE's experts: a softmax router registered
/// first, top-k renormalised (`norm_topk_prob`), the weights cast back to
/// the logits' dtype, a shared expert scaled by `sigmoid(shared_expert_gate)`.
/// Source: transformers 5.23 `Qwen3NextSparseMoeBlock`,
/// `Qwen3NextTopKRouter.forward`, `Qwen3_5MoeSparseMoeBlock`.
const QWEN_HYBRID_MOE: Moe = Moe {
    shared: Shared::Gated,
    weights_in_logits_dtype: true,
    peft_experts: false,
    // `quant_predicate` (`qwen3_next.py`, `qwen3_5.py`): `mlp.gate` and
    // `shared_expert_gate` at 8 bits in groups of 64.
    mlx_router_8bit: true,
    ..MOE
};

const GPT2: Spec = Spec {
    layout: Layout::Gpt2,
    positions: Positions::Learned,
    norm: Norm::LayerNorm,
    qkv: Qkv::Fused,
    attn_bias: AttnBias::All,
    kv_heads: KvHeads::Same,
    mlp: Mlp::Plain,
    act: Act::GeluNew,
    tied_default: true,
    dropout: 1000,
    resid_dropout: true,
    rope_tables: 0,
    rope: RopeStyle::None,
    tp: TpPlan::None,
    ..LLAMA
};

/// GPT-NeoX and Pythia. Source: transformers 5.23
/// `models/gpt_neox/modeling_gpt_neox.py` (`GPTNeoXLayer`,
/// `GPTNeoXAttention`: one `query_key_value` whose output is viewed per
/// head and chunked into q, k, v; `apply_rotary_pos_emb` on the first
/// `rotary_ndims` channels, concatenated with the rest; `GPTNeoXMLP`:
/// `nn.functional.gelu`), `configuration_gpt_neox.py` (`attention_bias`
/// true, dropouts 0, `tie_word_embeddings` false, the tensor-parallel plan
/// of heads). Measured: `scripts/measure/families/gpt_neox/`.
const GPT_NEOX: Spec = Spec {
    layout: Layout::NeoX,
    norm: Norm::LayerNorm,
    qkv: Qkv::Fused,
    attn_bias: AttnBias::All,
    kv_heads: KvHeads::Same,
    mlp: Mlp::Plain,
    rope: RopeStyle::PartialCat,
    resid_dropout: true,
    legacy: Legacy {
        v4_unmodelled: true,
        ..NO_LEGACY
    },
    ..LLAMA
};

const GEMMA: Spec = Spec {
    norm: Norm::RmsPlusOne,
    embed_scale: EmbedScale::PerForward,
    tied_default: true,
    ..LLAMA
};

const MOE: Moe = Moe {
    router: Router::Softmax,
    expert_bias: false,
    clamped_swiglu: false,
    shared: Shared::None,
    router_first: true,
    normalize_top_k: true,
    weights_in_logits_dtype: false,
    peft_experts: true,
    aux_loss: true,
    dense_beside: false,
    router_linear: false,
    optional: false,
    mlx_router_8bit: false,
    correction_fp32: false,
    mlx_expert_bias_fp32: false,
    mlx_router_plain: false,
    shared_first: false,
    dense_dispatch: false,
    interleaved: false,
    shared_in_layer: false,
};

/// gpt-oss: clamped SwiGLU experts with biases, attention sinks, every
/// other layer sliding.
const GPT_OSS: Spec = Spec {
    norm: Norm::RmsCastAfter,
    rope: RopeStyle::Split,
    attn_bias: AttnBias::All,
    sinks: true,
    moe: Some(Moe {
        router: Router::TopKSoftmax,
        expert_bias: true,
        clamped_swiglu: true,
        shared: Shared::None,
        router_first: true,
        normalize_top_k: false,
        weights_in_logits_dtype: true,
        peft_experts: false,
        aux_loss: true,
        dense_beside: false,
        router_linear: false,
        optional: false,
        // `gpt_oss.py: quant_predicate` (`router`).
        mlx_router_8bit: true,
        correction_fp32: false,
        mlx_expert_bias_fp32: false,
        mlx_router_plain: false,
        shared_first: false,
        dense_dispatch: false,
        interleaved: false,
        shared_in_layer: false,
    }),
    sliding: Sliding::EveryOther,
    legacy: GPT_OSS_LEGACY,
    tp: TpPlan::HeadOnly,
    ..LLAMA
};

/// Qwen3-Next: the hybrid with fused DeltaNet input projections and
/// experts in every layer. transformers 4.57's Qwen3-Next loops over
/// per-expert MLPs (`Qwen3NextSparseMoeBlock.experts = nn.ModuleList`, as
/// Qwen3-MoE's).
const QWEN3_NEXT: Spec = Spec {
    // `Qwen3NextForCausalLM`: a text model.
    multimodal: false,
    // One row of positions (`Qwen3NextRotaryEmbedding`).
    rope: RopeStyle::Half,
    moe: Some(Moe {
        shared_first: true,
        // transformers 5.23 converts `qwen3_next` as `qwen2_moe`
        // (`conversion_mapping._MODEL_TO_CONVERSION_PATTERN`), whose
        // experts peft 0.21 maps LoRA's targets onto; `qwen3_5_moe_text`
        // is converted as `qwen3_5_text`, which it does not. Measured: the
        // LoRA rows' adapters (`hybrid_train_rows.jsonl`).
        peft_experts: true,
        ..QWEN_HYBRID_MOE
    }),
    legacy: QWEN3_MOE_LEGACY,
    linear: Some(Linear {
        kind: Recurrence::GatedDeltaNet,
        fused_in_proj: true,
        full_every: 4,
        last_full: false,
        mlx_a_log_fp32: false,
        ssm_fp32: false,
        // vLLM's `Qwen3NextMultiTokenPredictor` builds
        // `num_nextn_predict_layers` (absent from the published config: 1)
        // full-attention layers behind the same `fc` and norms
        // (`models/qwen3_next_mtp.py:47-135`).
        mtp_layers: 1,
        chunk: 0,
    }),
    ..QWEN_HYBRID
};

/// Qwen3.5-MoE. No transformers 4 release has `qwen3_5_moe` (it came in
/// 5.2): Qwen3-Next's 4.57 loop stands for it, and nothing reads it while
/// training these hybrids on transformers 4 is refused.
const QWEN35_MOE: Spec = Spec {
    moe: Some(Moe {
        shared_first: true,
        ..QWEN_HYBRID_MOE
    }),
    legacy: Legacy {
        in_457: false,
        ..QWEN3_MOE_LEGACY
    },
    ..QWEN_HYBRID
};

/// Gemma 4: Gemma 3's sandwich norms, per-head q/k norms, GeGLU and
/// scaled embedding, final-logit softcapping (30), sliding layers five to
/// one (`layer_types`; E2B four to one), local and global RoPE tables,
/// and what [`Spec::global_attention`], [`Spec::kv_sharing`] and
/// [`Spec::per_layer_embeddings`] describe. The 26B-A4B's experts sit
/// beside the dense MLP with Gemma 4's own router. No transformers 4
/// release has `gemma4` (it came in 5.5): Qwen3-MoE's 4.57 loop stands for
/// its experts, and nothing reads it while training Gemma 4 is refused.
/// Source: transformers 5.23 `models/gemma4/modeling_gemma4.py`
/// (`Gemma4TextModel`, `Gemma4TextDecoderLayer`, `Gemma4TextRouter`,
/// `Gemma4TextExperts`).
const GEMMA4: Spec = Spec {
    norm: Norm::RmsScaled,
    norm_place: NormPlace::Sandwich,
    qk_norm: QkNorm::PerHead,
    embed_scale: EmbedScale::Buffer,
    final_softcap: true,
    rope_tables: 2,
    sliding: Sliding::AllButEvery(6),
    moe: Some(Moe {
        router: Router::Scaled,
        router_first: true,
        weights_in_logits_dtype: false,
        peft_experts: false,
        aux_loss: false,
        dense_beside: true,
        router_linear: true,
        optional: true,
        mlx_router_8bit: true,
        ..MOE
    }),
    legacy: Legacy {
        in_457: false,
        ..QWEN3_MOE_LEGACY
    },
    global_attention: true,
    kv_sharing: true,
    per_layer_embeddings: true,
    layer_scalar: true,
    placeholder_kinds: 3,
    multimodal: true,
    v_norm: true,
    ..GEMMA
};

impl Spec {
    /// The recurrent layers are LFM2's short convolutions
    /// ([`Recurrence::ShortConv`]).
    pub const fn short_conv(self) -> bool {
        match self.linear {
            Some(l) => matches!(l.kind, Recurrence::ShortConv),
            None => false,
        }
    }

    /// The recurrent layers are Mamba-2's ([`Recurrence::Mamba2`]).
    pub const fn mamba2(self) -> bool {
        match self.linear {
            Some(l) => matches!(l.kind, Recurrence::Mamba2),
            None => false,
        }
    }

    /// Whether the family's layers differ in their attention, their keys
    /// and values or their inputs ([`Spec::global_attention`],
    /// [`Spec::kv_sharing`], [`Spec::per_layer_embeddings`]: Gemma 4): a
    /// workload that has not written its rules for them refuses it.
    pub const fn varies_by_layer(self) -> bool {
        self.global_attention || self.kv_sharing || self.per_layer_embeddings
    }
}

/// OLMo 2: norms after each sub-layer, q/k norms over all heads, fp32
/// rotary tables.
const OLMO2: Spec = Spec {
    norm: Norm::RmsCastAfter,
    rope: RopeStyle::HalfFp32,
    norm_place: NormPlace::Post,
    qk_norm: QkNorm::Whole,
    tp: TpPlan::GatheredHeads,
    ..LLAMA
};

/// GLM-4.5 / 4.6: attention as Cohere's (q/k/v biases, an optional
/// per-head q/k norm) with GPT-NeoX's partial rotary, DeepSeek-V3's
/// mixture of experts (`Glm4MoeMoE`: experts, the router parameter
/// `gate` with its fp32 sigmoid and correction bias, `shared_experts`),
/// the first `first_k_dense_replace` layers dense. transformers 4.57's
/// `Glm4MoeMoE` looped over per-expert MLPs as DeepSeek-V3's did.
/// Source: transformers 5.23 `models/glm4_moe/modular_glm4_moe.py`
/// (`Glm4MoeAttention(CohereAttention)`, the imports from
/// `deepseek_v3` and `gpt_neox`), `modeling_glm4_moe.py`.
const GLM4_MOE: Spec = Spec {
    attn_bias: AttnBias::Qkv,
    qk_norm: QkNorm::PerHead,
    qk_norm_optional: true,
    rope: RopeStyle::PartialCat,
    moe: Some(Moe {
        router: Router::SigmoidGrouped,
        shared: Shared::Plain,
        router_first: false,
        aux_loss: false,
        correction_fp32: true,
        // mlx-lm's `MoEGate` (`glm4_moe.py:176-177, 399-402`, and
        // GLM-4.7-Flash's, DeepSeek-V3.2's and GLM-5's alike): the router
        // a bare array, the correction bias a parameter kept fp32
        // (measured on DeepSeek-V3.2's and GLM-5.1's,
        // `tests/fixtures/mlx_dsa_rows.jsonl`).
        mlx_expert_bias_fp32: true,
        mlx_router_plain: true,
        ..MOE
    }),
    legacy: Legacy {
        in_448: false,
        ..DEEPSEEK_V3_LEGACY
    },
    ..LLAMA
};

/// Gemma 4 12B: transformers 5.23 `Gemma4UnifiedTextDecoderLayer.__init__`:
/// the attention, MLP, four norms and `layer_scalar` of Gemma 4, no
/// per-layer input and no MoE block (`Gemma4UnifiedTextConfig` has neither
/// field); `Gemma4UnifiedModel.forward` builds the same placeholder masks,
/// then token-type ids and a mask per layer kind.
const GEMMA4_UNIFIED: Spec = Spec {
    moe: None,
    per_layer_embeddings: false,
    token_type_mask: true,
    legacy: ONLY_5,
    ..GEMMA4
};

/// AltUp's streams and Laurel's rank ([`Spec::altup`]): llama.cpp b10488
/// fixes them (`llama-hparams.h`: `n_altup = 4`, `laurel_rank = 64`, not
/// read from the file), so a config with others is refused.
pub const ALTUP_STREAMS: u32 = 4;
pub const LAUREL_RANK: u32 = 64;

/// Gemma 3n: Gemma 4's per-layer embeddings and key/value sharing (the
/// last `num_kv_shared_layers` reuse layer 18's or 19's keys and values in
/// the E2B and E4B), every layer of Gemma 3's heads (no global width, no
/// `layer_scalar`), four sliding layers to a global one (`layer_types`),
/// a dense MLP (no experts), and [`Spec::altup`]. transformers 4.53 added
/// `gemma3n`; training, transformers' `generate` and vLLM are refused
/// (AltUp's streams are not measured), so no 4.x rule is read.
/// Source: transformers 5.23 `models/gemma3n/modeling_gemma3n.py`
/// (`Gemma3nTextModel`, `Gemma3nTextDecoderLayer`, `Gemma3nTextAttention`);
/// measured, `scripts/measure/families/gemma3n/`.
const GEMMA3N: Spec = Spec {
    sliding: Sliding::AllButEvery(5),
    moe: None,
    global_attention: false,
    layer_scalar: false,
    altup: true,
    mlx_keeps_shared_kv: true,
    legacy: ONLY_5,
    ..GEMMA4
};

/// OLMo 3: `Olmo3Config.__post_init__`'s default `layer_types`
/// ("sliding_attention" unless `(i + 1) % 4 == 0`), and
/// `Olmo3RotaryEmbedding` (Gemma 3's: an `inv_freq` pair and a cos/sin per
/// layer type, fp32 as OLMo 2's). Source: transformers 5.23
/// `models/olmo3/modular_olmo3.py`.
const OLMO3: Spec = Spec {
    sliding: Sliding::AllButEvery(4),
    rope_tables: 2,
    legacy: AFTER_448,
    ..OLMO2
};

/// GLM-4.7-Flash: `Glm4MoeLiteAttention(DeepseekV3Attention)`, GLM-4.5's
/// MLP, router, experts and MoE block (`Glm4MoeLiteMoE(Glm4MoeMoE)`).
/// Source: transformers 5.23 `models/glm4_moe_lite/modular_glm4_moe_lite.py`.
const GLM4_MOE_LITE: Spec = Spec {
    qkv: Qkv::Latent,
    tp: TpPlan::Latent,
    rope: RopeStyle::Interleave,
    moe: GLM4_MOE.moe,
    legacy: Legacy {
        in_457: false,
        ..GLM4_MOE.legacy
    },
    ..LLAMA
};

/// DeepSeek-V3.2 and GLM-5: `DeepseekV32DecoderLayer(Glm4MoeLiteDecoderLayer)`
/// with `DeepseekV32Attention(AXK1Attention)`, DeepSeek-V3's latent
/// attention (always through the query's low rank) and an indexer. No
/// transformers 4 release has either type (`deepseek_v32` came in 5.11).
/// Source: transformers 5.23 `models/deepseek_v32/modular_deepseek_v32.py`,
/// `models/glm_moe_dsa/modular_glm_moe_dsa.py`.
const DSA: Spec = Spec {
    indexer: true,
    legacy: ONLY_5,
    ..GLM4_MOE_LITE
};

/// GLM-5: DeepSeek-V3.2's sparse attention, its indexer rotated as the
/// latent is (`indexer_rope_interleave` in every published config), and an
/// fp8 cache on vLLM on datacenter Blackwell. Source: as [`DSA`]; vLLM 0.33
/// `GlmMoeDsaForCausalLM`.
const GLM_DSA: Spec = Spec {
    indexer_rope_shared: true,
    vllm_blackwell_fp8_cache: true,
    ..DSA
};

/// Mistral 4: `Mistral4Attention(DeepseekV3Attention)` with Ministral 3's
/// query temperature after the rotary embedding (`get_llama_4_attn_scale`),
/// `Mistral4MoE(DeepseekV3MoE)` behind its own router; the decoder, model
/// and head DeepSeek-V3's. peft 0.21 has no experts conversion for it:
/// LoRA adapts the attention, the dense MLPs and the shared expert only
/// (measured: `scripts/measure/families/mistral4/transformers/`). No
/// transformers 4 release has the type. Source: transformers 5.23
/// `models/mistral4/modular_mistral4.py`.
const MISTRAL4: Spec = Spec {
    qkv: Qkv::Latent,
    tp: TpPlan::Latent,
    rope: RopeStyle::Interleave,
    query_scale: true,
    moe: Some(Moe {
        router: Router::SoftmaxGrouped,
        shared: Shared::Plain,
        router_first: false,
        aux_loss: false,
        peft_experts: false,
        ..MOE
    }),
    legacy: ONLY_5,
    multimodal: true,
    // mlx-lm d78bf58e has no `mistral4.py` (its pull request #1075 was
    // closed unmerged).
    in_mlx_lm: false,
    ..LLAMA
};

/// Ministral 3: `Ministral3Attention(MistralAttention)` with the query's
/// temperature; the decoder, model and head Mistral's. No transformers 4
/// release has the type. Source: transformers 5.23
/// `models/ministral3/modular_ministral3.py`.
const MINISTRAL3: Spec = Spec {
    sliding: Sliding::All,
    query_scale: true,
    legacy: ONLY_5,
    multimodal: true,
    ..LLAMA
};

/// SmolLM3: `SmolLM3Attention` skips RoPE on every fourth layer
/// (`no_rope_layers`), where attention saves the projections' outputs
/// (views of the same size) in place of the rotated copies: Llama's bytes
/// in every phase, measured against the same numbers as a `llama` config
/// (`scripts/measure/families/smollm3/`, training and `generate`).
/// transformers 4.53 added it (the model card: "available in transformers
/// v4.53.0"); its 4.57 estimate is Llama's, not measured there.
/// Source: transformers 5.23 `models/smollm3/modular_smollm3.py`.
const SMOLLM3: Spec = Spec {
    tied_default: true,
    legacy: AFTER_448,
    ..LLAMA
};

/// MiniMax-M2: Mixtral's decoder and experts (`MiniMaxM2SparseMoeBlock`:
/// `gate`, `experts`, then the `e_score_correction_bias` buffer), FlexOlmo's
/// attention (q/k RMSNorms over all heads, always built whatever
/// `use_qk_norm` says) without biases, GLM-4.5's partial rotary
/// (`rotary_dim`). transformers 4.57 has no `minimax_m2`: Mixtral's loop
/// stands for it (not measured: no transformers 4 release runs it).
/// Source: transformers 5.23 `models/minimax_m2/modular_minimax_m2.py`.
const MINIMAX_M2: Spec = Spec {
    qk_norm: QkNorm::Whole,
    rope: RopeStyle::PartialCat,
    moe: Some(Moe {
        router: Router::SigmoidBias,
        ..MOE
    }),
    legacy: Legacy {
        in_448: false,
        ..MIXTRAL_LEGACY
    },
    tp: TpPlan::GatheredHeads,
    ..LLAMA
};

/// LFM2: Llama's attention with an RMSNorm of each query and key head
/// (`q_layernorm`, `k_layernorm`) on the layers `full_attn_idxs` names, a
/// gated short convolution on the others; RMSNorms before each sub-layer
/// (`operator_norm`, `ffn_norm`) and after the last (`embedding_norm`); a
/// SwiGLU MLP (`w1`, `w3`, `w2`) of the adjusted `block_ff_dim`; embeddings
/// tied. Source: transformers 5.23 `models/lfm2/` (`Lfm2DecoderLayer`,
/// `Lfm2Attention`, `Lfm2ShortConv`, `Lfm2MLP`, `Lfm2Config`).
const LFM2: Spec = Spec {
    qk_norm: QkNorm::PerHead,
    tied_default: true,
    linear: Some(Linear::SHORT_CONV),
    legacy: AFTER_448,
    ..LLAMA
};

/// LFM2-MoE: LFM2's layers; in those from `num_dense_layers` on, a
/// `Lfm2MoeSparseMoeBlock` of a router (`gate.weight`, registered first),
/// stacked experts (`gate_up_proj`, `down_proj`) and an fp32
/// `expert_bias` buffer: `sigmoid` of the logits, the bias added for the
/// choice only, top-k renormalised; the dense MLP of `intermediate_size`
/// unadjusted. Source: transformers 5.23 `models/lfm2_moe/`
/// (`Lfm2MoeDecoderLayer`, `Lfm2MoeSparseMoeBlock`, `Lfm2MoeTopKRouter`,
/// `Lfm2MoeMLP`).
const LFM2_MOE: Spec = Spec {
    moe: Some(Moe {
        router: Router::SigmoidBias,
        // The sigmoid of the logits, gathered and renormalised, in their
        // dtype (`Lfm2MoeSparseMoeBlock.route_tokens_to_experts`).
        weights_in_logits_dtype: true,
        correction_fp32: true,
        // `quant_predicate` (`lfm2_moe.py`): `feed_forward.gate` at 8 bits
        // in groups of 64.
        mlx_router_8bit: true,
        mlx_expert_bias_fp32: true,
        ..MOE
    }),
    // transformers 4.57.6 has `lfm2` but not `lfm2_moe` (its wheel).
    legacy: ONLY_5,
    ..LFM2
};

/// Granite 4.0-H: in every layer an RMSNorm, a Mamba-2 mixer or Llama's
/// attention without position embedding (`position_embedding_type`
/// "nope": no rotary table), an RMSNorm, then a shared SwiGLU MLP
/// (`shared_mlp`: `input_linear` `h → 2·S`, `output_linear`) and, when the
/// model has experts, routed experts beside it (`block_sparse_moe`: a
/// router `layer` `h → E`, top-k of the softmax, stacked `input_linear`
/// and `output_linear`), added to its output. A dense model's MLP is the
/// shared one (`ffn`); a mixture's shared MLP is counted in expert widths
/// (`shared_experts`). Source: transformers 5.23
/// `models/granitemoehybrid/modular_granitemoehybrid.py`
/// (`GraniteMoeHybridDecoderLayer`), `granitemoeshared` (`GraniteMoeSharedMLP`,
/// `GraniteMoeSharedMoE`), `GraniteMoeHybridConfig`.
const GRANITE_HYBRID: Spec = Spec {
    rope: RopeStyle::None,
    rope_tables: 0,
    linear: Some(Linear::MAMBA2),
    granite_scales: true,
    // One `input_linear` (`h → 2·S`), chunked into gate and up
    // (`GraniteMoeHybridMLP.forward`); llama.cpp's converter splits it.
    mlp: Mlp::GatedFused,
    moe: Some(Moe {
        router: Router::TopKSoftmaxCast,
        shared: Shared::Plain,
        shared_in_layer: true,
        peft_experts: false,
        optional: true,
        // `quant_predicate` (mlx-lm `granitemoehybrid.py`): `router.layer`
        // at 8 bits in groups of 64.
        mlx_router_8bit: true,
        ..MOE
    }),
    // transformers 4.57 has `granitemoehybrid` (4.48 does not); its
    // training is refused on every release (the Mamba-2 layers' backward
    // is not measured) and `generate` is 5.23's, so its 4.x experts are
    // not described.
    legacy: AFTER_448,
    ..LLAMA
};

/// Kimi Linear: Kimi Delta Attention layers ([`Recurrence::Kda`]) but on
/// every fourth layer and the last (the published `full_attn_layers`; a
/// config listing others keeps their count, said), DeepSeek-V3's latent
/// attention in the others without rotary positions (`mla_use_nope`:
/// the rotary key still cached) and without a query low rank, DeepSeek-V3's
/// sigmoid router with its correction bias, one shared expert, the first
/// `first_k_dense_replace` layers dense; untied. mlx-lm keeps `A_log`,
/// `dt_bias` and the correction bias fp32 (`cast_predicate`) and
/// quantizes the router at 8 bits (`quant_predicate`: `mlp.gate`; mlx-lm
/// d78bf58e `models/kimi_linear.py`). transformers 5.23 has `kimi_linear`;
/// training, its `generate` and vLLM are refused (not measured).
/// Source: transformers 5.23 `models/kimi_linear/modeling_kimi_linear.py`
/// (`KimiLinearDecoderLayer`, `KimiDeltaAttention`, `KimiMLAAttention`,
/// `KimiSparseMoeBlock`).
const KIMI_LINEAR: Spec = Spec {
    qkv: Qkv::Latent,
    tp: TpPlan::Latent,
    rope: RopeStyle::Complex,
    linear: Some(Linear {
        kind: Recurrence::Kda,
        full_every: 4,
        last_full: true,
        mlx_a_log_fp32: true,
        ..Linear::SHORT_CONV
    }),
    moe: Some(Moe {
        router: Router::SigmoidGrouped,
        shared: Shared::Plain,
        router_first: false,
        aux_loss: false,
        mlx_expert_bias_fp32: true,
        mlx_router_8bit: true,
        ..MOE
    }),
    legacy: ONLY_5,
    ..LLAMA
};

/// Nemotron-H: in every layer an RMSNorm (`norm`) and one mixer
/// (`layers_block_type`, from `hybrid_override_pattern`'s `M`, `*`, `-`):
/// Mamba-2 (`NemotronHMamba2Mixer`: Bamba's tensors, the convolution with
/// a bias, the projections without, `mamba_num_heads × mamba_head_dim`
/// wide), attention without position embedding (`NemotronHAttention`:
/// q, k, v, o without biases, `head_dim` of its own), or a squared-ReLU MLP
/// (`NemotronHMLP`: `up_proj`, `down_proj`); a final RMSNorm (`norm_f`);
/// the head untied; Nemotron 3's MoE layers (`E`) in place of the MLPs.
/// Source: transformers 5.23 `models/nemotron_h/modeling_nemotron_h.py`
/// (`NemotronHBlock`, `MIXER_TYPES`, `NemotronHMoE`), `NemotronHConfig`.
const NEMOTRON_H: Spec = Spec {
    norm: Norm::RmsWeightFp32,
    logits_fp32: true,
    rope: RopeStyle::None,
    rope_tables: 0,
    mlp: Mlp::Up,
    blocks: Blocks::Single,
    // Nemotron 3's `E` layers (`NemotronHMoE`): stacked experts of the
    // MLP's kind (`up_proj`, `down_proj`), then DeepSeek-V3's router
    // (`NemotronHTopkRouter`: a sigmoid, the `e_score_correction_bias`
    // buffer, group-limited top-k), then a shared expert of
    // `moe_shared_expert_intermediate_size` added to their output.
    moe: Some(Moe {
        router: Router::SigmoidGrouped,
        shared: Shared::Plain,
        router_first: false,
        peft_experts: false,
        aux_loss: false,
        optional: true,
        // `cast_predicate` keeps the correction bias fp32 (a parameter to
        // mlx-lm); the router is an array, never quantized.
        mlx_expert_bias_fp32: true,
        mlx_router_plain: true,
        ..MOE
    }),
    // mlx-lm keeps `A_log` fp32 (`cast_predicate`, `nemotron_h.py`;
    // measured: `scripts/measure/mlx/nemotron_h_rows.jsonl`).
    linear: Some(Linear {
        mlx_a_log_fp32: true,
        ssm_fp32: true,
        // `chunk_size` (`mamba_chunk_size` wins), 128 in every published
        // config and the config's default.
        chunk: 128,
        ..Linear::MAMBA2
    }),
    // transformers 4.57.6's wheel has no `nemotron_h` (it came native in
    // 5.x); training is refused anyway (the Mamba-2 layers' backward is not
    // measured).
    legacy: ONLY_5,
    ..LLAMA
};

/// Llama 4 Scout and Maverick: transformers 5.23
/// `models/llama4/modeling_llama4.py`.
/// `Llama4TextDecoderLayer`: Llama's attention (its L2 q/k norm has no
/// weight) and norms, and in every layer of `moe_layers` a
/// `Llama4TextMoe`: stacked experts (`gate_up_proj`, `down_proj`), the
/// router, then a shared expert of the experts' width, registered in that
/// order; the other layers (Maverick's every other) a dense MLP of
/// `intermediate_size_mlp`. `Llama4TextConfig.__post_init__`: `layer_types` chunked where
/// RoPE is used, full on every fourth layer (`no_rope_layer_interval` 4).
/// The published checkpoints are multimodal (`Llama4ForConditionalGeneration`,
/// a vision encoder the engines load and vramfit does not size).
const LLAMA4: Spec = Spec {
    moe: Some(Moe {
        router: Router::TopKSigmoid,
        shared: Shared::Plain,
        router_first: false,
        normalize_top_k: false,
        weights_in_logits_dtype: true,
        peft_experts: false,
        aux_loss: false,
        dense_dispatch: true,
        interleaved: true,
        ..MOE
    }),
    sliding: Sliding::AllButEvery(4),
    chunked: true,
    attn_out_held: true,
    // `Llama4TextRotaryEmbedding`: `freqs_cis = torch.polar(...)`, complex64.
    rope: RopeStyle::Complex,
    qk_norm: QkNorm::L2,
    qk_norm_optional: true,
    query_scale: true,
    nope_full: true,
    softmax_in_dtype: true,
    legacy: AFTER_448,
    multimodal: true,
    ..LLAMA
};

/// Every family's [`Spec`] by its place in [`Family::ALL`] (the declaration
/// order, so `family as usize`), built at compile time: as described, and
/// without the optional q/k norms.
static SPECS: [[Spec; 2]; Family::ALL.len()] = {
    let mut out = [[GPT2; 2]; Family::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        // `Family::ALL` is the declaration order: each family indexes its own.
        assert!(Family::ALL[i] as usize == i);
        let spec = Family::ALL[i].described();
        out[i] = [
            spec,
            Spec {
                qk_norm: if spec.qk_norm_optional {
                    QkNorm::None
                } else {
                    spec.qk_norm
                },
                ..spec
            },
        ];
        i += 1;
    }
    out
};

impl Family {
    /// The family a decoder of a `model_type` vramfit does not know is read
    /// as, by the user's choice (`like_llama`).
    pub const LLAMA_LIKE: Family = Family::Llama;

    /// The family's description, built once (`SPECS`): a reference, so
    /// reading one field copies nothing (returned by value, each read of a
    /// field built the whole `Spec`, 7% of an inference estimate's
    /// instructions).
    pub fn spec(self) -> &'static Spec {
        &SPECS[self as usize][0]
    }

    /// The description with the q/k norms a family makes optional
    /// (`Spec::qk_norm_optional`) left out: a model whose config turns
    /// them off (`Architecture::spec`).
    pub fn spec_without_qk_norm(self) -> &'static Spec {
        &SPECS[self as usize][1]
    }

    /// The family's description.
    ///
    /// Sources: transformers 5.23 `models/<model_type>/modeling_*.py`, the
    /// module tree of each `*ForCausalLM`; held to the measured rows in
    /// `tests/fixtures/`.
    pub(crate) const fn described(self) -> Spec {
        match self {
            Family::Gpt2 => GPT2,
            Family::GptBigcode => Spec {
                kv_heads: KvHeads::OneOrSame,
                act: Act::Fused,
                legacy: Legacy {
                    own_loss: true,
                    cache_under_ckpt: true,
                    ckpt_ignored: true,
                    ..NO_LEGACY
                },
                cache_copies: true,
                mask_buffer: true,
                ..GPT2
            },
            Family::Llama => LLAMA,
            Family::GptNeox => GPT_NEOX,
            Family::Mistral => Spec {
                sliding: Sliding::All,
                ..LLAMA
            },
            Family::Ministral3 => MINISTRAL3,
            Family::SmolLm3 => SMOLLM3,
            Family::Qwen2 => Spec {
                attn_bias: AttnBias::Qkv,
                ..LLAMA
            },
            Family::Qwen3 => Spec {
                qk_norm: QkNorm::PerHead,
                legacy: AFTER_448,
                ..LLAMA
            },
            Family::Phi3 => Spec {
                qkv: Qkv::Fused,
                tp: TpPlan::GatheredHeads,
                rope: RopeStyle::HalfCat,
                mlp: Mlp::GatedFused,
                sliding: Sliding::All,
                ..LLAMA
            },
            Family::Gemma => GEMMA,
            Family::Gemma2 => Spec {
                norm_place: NormPlace::Sandwich,
                attn_softcap: true,
                embed_scale: EmbedScale::Buffer,
                final_softcap: true,
                sliding: Sliding::EveryOther,
                ..GEMMA
            },
            Family::Gemma3Text => Spec {
                norm_place: NormPlace::Sandwich,
                qk_norm: QkNorm::PerHead,
                embed_scale: EmbedScale::Buffer,
                rope_tables: 2,
                sliding: Sliding::AllButEvery(6),
                legacy: AFTER_448,
                ..GEMMA
            },
            Family::Olmo2 => OLMO2,
            Family::Mixtral => Spec {
                moe: Some(MOE),
                sliding: Sliding::All,
                legacy: MIXTRAL_LEGACY,
                ..LLAMA
            },
            Family::Qwen2Moe => Spec {
                attn_bias: AttnBias::Qkv,
                moe: Some(Moe {
                    shared: Shared::Gated,
                    normalize_top_k: false,
                    weights_in_logits_dtype: true,
                    peft_experts: false,
                    ..MOE
                }),
                legacy: QWEN_LEGACY,
                ..LLAMA
            },
            Family::Qwen3Moe => Spec {
                qk_norm: QkNorm::PerHead,
                moe: Some(Moe {
                    router_first: false,
                    weights_in_logits_dtype: true,
                    // `qwen3_moe.py: quant_predicate` (`mlp.gate`).
                    mlx_router_8bit: true,
                    ..MOE
                }),
                legacy: QWEN3_MOE_LEGACY,
                ..LLAMA
            },
            Family::DeepseekV2 => Spec {
                qkv: Qkv::Latent,
                tp: TpPlan::Latent,
                rope: RopeStyle::Complex,
                moe: Some(Moe {
                    router: Router::SoftmaxFp32,
                    shared: Shared::Plain,
                    router_first: false,
                    normalize_top_k: false,
                    aux_loss: false,
                    // mlx-lm's `MoEGate.weight` is a bare array
                    // (`deepseek_v2.py:278`), as DeepSeek-V3's.
                    mlx_router_plain: true,
                    ..MOE
                }),
                legacy: DEEPSEEK_V2_LEGACY,
                ..LLAMA
            },
            Family::DeepseekV3 => Spec {
                qkv: Qkv::Latent,
                tp: TpPlan::Latent,
                rope: RopeStyle::Interleave,
                moe: Some(Moe {
                    router: Router::SigmoidGrouped,
                    shared: Shared::Plain,
                    router_first: false,
                    aux_loss: false,
                    // mlx-lm's `MoEGate` (`deepseek_v3.py:237-238,
                    // 549-551`), as DeepSeek-V3.2's (measured).
                    mlx_expert_bias_fp32: true,
                    mlx_router_plain: true,
                    ..MOE
                }),
                legacy: DEEPSEEK_V3_LEGACY,
                ..LLAMA
            },
            Family::GptOss => GPT_OSS,
            Family::Qwen3Next => QWEN3_NEXT,
            Family::Qwen35Text => QWEN_HYBRID,
            Family::Qwen35MoeText => QWEN35_MOE,
            Family::Gemma4Text => GEMMA4,
            Family::Gemma4UnifiedText => GEMMA4_UNIFIED,
            Family::Gemma3nText => GEMMA3N,
            Family::Glm4Moe => GLM4_MOE,
            Family::Glm4MoeLite => GLM4_MOE_LITE,
            Family::DeepseekV32 => DSA,
            Family::GlmMoeDsa => GLM_DSA,
            Family::Mistral4 => MISTRAL4,
            Family::MinimaxM2 => MINIMAX_M2,
            Family::Llama4Text => LLAMA4,
            Family::Olmo3 => OLMO3,
            Family::Lfm2 => LFM2,
            Family::GraniteMoeHybrid => GRANITE_HYBRID,
            Family::NemotronH => NEMOTRON_H,
            Family::KimiLinear => KIMI_LINEAR,
            Family::Lfm2Moe => LFM2_MOE,
        }
    }
}
