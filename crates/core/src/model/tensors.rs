//! The parameter tensors of a model, walked in `model.parameters()` order
//! from the family's [`Spec`](super::Spec) and the [`Architecture`]'s
//! numbers: the parameter count, the tensor count, the largest tensor and
//! module, the buffers. Training (optimizer state, LoRA's adapters) and
//! inference (weights in a format) read this one walk.

use super::arch::{Architecture, LayerHeads, LayerKind};
use super::family::{
    AttnBias, Blocks, EmbedScale, Layout, Mlp, Moe, Norm, NormPlace, Positions, QkNorm, Qkv,
    Recurrence, Router, Shared, TpPlan, ALTUP_STREAMS, LAUREL_RANK,
};
use super::module::{Module, ModuleKind, ModuleName, Proj};

/// What a parameter is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Embedding,
    /// A learned position table.
    PositionTable,
    Norm,
    Attention,
    Mlp,
    /// The output projection (never a LoRA target).
    Head,
    /// An MoE router's weight (a parameter, not a linear layer).
    Router,
    /// Stacked experts (3-D parameters, not linear layers).
    Expert,
    /// DeepSeek Sparse Attention's lightning indexer: its projections and
    /// its key norm (`DeepseekV32Indexer`), which no LoRA target names and
    /// the engines keep whole or in their own types.
    Indexer,
}

/// One parameter tensor (a module's weight, with its bias when it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamTensor {
    /// The module's name in transformers, e.g. `q_proj`.
    pub name: &'static str,
    /// Experts stacked in one 3-D parameter, or `per_expert` modules (1
    /// otherwise).
    pub stack: u64,
    /// The `stack` experts are one `nn.Linear` each (transformers 4's
    /// layout, [`ExpertLayout::Linears`]), not one 3-D parameter.
    pub per_expert: bool,
    /// Output features (or a vector's length).
    pub rows: u64,
    /// Input features; 1 for a vector.
    pub cols: u64,
    /// The module also has a bias of `rows` elements (a tensor of its own).
    pub bias: bool,
    pub role: Role,
    /// The projections it computes: LoRA's targets (empty: not a linear
    /// layer LoRA adapts).
    pub proj: Proj,
    /// The module it is the weight of, for the ones LoRA can adapt.
    pub module: Option<ModuleName>,
    /// The checkpoint stores it in fp32 whatever the model's dtype (the
    /// Gated DeltaNet's `A_log`): an engine that casts with exceptions
    /// may keep it so ([`crate::model::family::Linear::mlx_a_log_fp32`]).
    pub fp32_stored: bool,
    /// A convolution's kernel (`nn.Conv1d`, the Gated DeltaNet's
    /// `conv1d`): not a matrix mlx-lm quantizes (no `to_quantized`).
    pub conv: bool,
    /// A Gated DeltaNet layer's own tensor (its projections, convolution,
    /// decay and gated norm), which its full-attention layers do not have.
    pub recurrent: bool,
    /// A separate q, k, v or o projection's layer heads (`None`: another
    /// tensor): Gemma 4's global layers have their own head width and
    /// key/value heads, which an engine splitting by heads reads here.
    pub heads: Option<LayerHeads>,
}

impl ParamTensor {
    const fn new(name: &'static str, rows: u64, cols: u64, role: Role) -> Self {
        ParamTensor {
            name,
            stack: 1,
            per_expert: false,
            rows,
            cols,
            bias: false,
            role,
            proj: Proj::NONE,
            module: None,
            fp32_stored: false,
            conv: false,
            recurrent: false,
            heads: None,
        }
    }

    /// The weight of a module (an `nn.Linear`, the DeltaNet's projections
    /// too). bitsandbytes replaces every `nn.Linear` of the decoder layers
    /// (measured: Qwen3.6's DeltaNet projections quantized in nf4 and int8,
    /// `infer_transformers.jsonl` rows tagged `quant:hybrid`).
    pub fn is_linear(&self) -> bool {
        self.module.is_some()
    }

    /// A recurrent mixer's projection that vramfit names no module for
    /// (Mamba-2's and LFM2's `in_proj` and `out_proj`): an `nn.Linear`
    /// all the same, which bitsandbytes replaces (measured: the
    /// `quant:mamba2` rows of `infer_transformers.jsonl`) and vLLM
    /// quantizes (R32).
    pub fn recurrent_projection(&self) -> bool {
        self.recurrent && !self.conv && self.role == Role::Attention && self.cols > 1
    }

    /// The module LoRA would adapt, if it is one.
    pub fn module(&self) -> Option<Module> {
        self.module.map(|n| Module::new(n, self.proj))
    }

    /// The weight of linear module `m` (`out × inp`).
    fn linear(m: Module, out: u64, inp: u64, bias: bool) -> Self {
        let role = match m.name.kind() {
            ModuleKind::Attention => Role::Attention,
            ModuleKind::Mlp | ModuleKind::Gate | ModuleKind::Router => Role::Mlp,
            ModuleKind::Expert | ModuleKind::ExpertLinear => Role::Expert,
        };
        ParamTensor {
            name: m.name.text(),
            stack: 1,
            per_expert: false,
            rows: out,
            cols: inp,
            bias,
            role,
            proj: m.proj,
            module: Some(m.name),
            fp32_stored: false,
            conv: false,
            recurrent: false,
            heads: None,
        }
    }

    /// Elements of the weight.
    pub fn weight_elems(&self) -> u128 {
        u128::from(self.stack) * u128::from(self.rows) * u128::from(self.cols)
    }

    /// Elements of the weight and its bias.
    pub fn elems(&self) -> u128 {
        self.weight_elems()
            + if self.bias {
                u128::from(self.stack) * u128::from(self.rows)
            } else {
                0
            }
    }

    /// Tensors: the weight, and the bias (of each expert's module).
    pub fn tensors(&self) -> u128 {
        self.modules() * (1 + u128::from(self.bias))
    }

    /// Modules this entry stands for: `stack` per-expert linears, or one.
    pub fn modules(&self) -> u128 {
        if self.per_expert {
            u128::from(self.stack)
        } else {
            1
        }
    }

    /// Elements of one weight tensor (one expert's, for per-expert
    /// linears).
    pub fn tensor_elems(&self) -> u128 {
        if self.per_expert {
            u128::from(self.rows) * u128::from(self.cols)
        } else {
            self.weight_elems()
        }
    }

    /// Elements of one module: its weight and bias.
    pub fn module_elems(&self) -> u128 {
        if self.per_expert {
            self.tensor_elems() + if self.bias { u128::from(self.rows) } else { 0 }
        } else {
            self.elems()
        }
    }

    /// The width of LoRA's rank dimension on each module of this entry,
    /// for rank `r`: peft's `ParamWrapper` gives a stacked parameter `r ×
    /// experts` (and twice that for a projection fused from two: experts'
    /// `gate_up_proj`); a linear layer (each per-expert one too) gets `r`.
    pub fn lora_rank(&self, r: u64) -> u128 {
        if self.role != Role::Expert || self.per_expert {
            return u128::from(r);
        }
        u128::from(r) * u128::from(self.proj.count().max(1)) * u128::from(self.stack)
    }

    /// LoRA's adapter parameters on this entry at rank `r`: `A` (rank ×
    /// in) and `B` (out × rank) on each of its modules.
    pub fn lora_params(&self, r: u64) -> u128 {
        self.modules() * self.lora_rank(r) * (u128::from(self.cols) + u128::from(self.rows))
    }
}

/// One decoder layer's build where a family's layers differ (Gemma 4):
/// its attention heads, whether it projects keys and values of its own,
/// its MLP width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LayerClass {
    heads: LayerHeads,
    own_kv: bool,
    ffn: u64,
}

/// How a mixture of experts' routed experts are held: stacked in 3-D
/// parameters (transformers 5), or one `nn.Linear` per expert and
/// projection (transformers 4, where the family describes it:
/// [`super::family::Legacy::expert_linears`]; stacked otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpertLayout {
    Stacked,
    Linears,
}

/// Which of the tensors outside the layers a part of the model holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    /// The embeddings, before the layers.
    pub before: bool,
    /// The final norm and the head, after them.
    pub after: bool,
}

impl Ends {
    /// The whole model.
    pub const BOTH: Ends = Ends {
        before: true,
        after: true,
    };

    /// Whether a tensor at `at` is held.
    pub fn holds(self, at: Place) -> bool {
        match at {
            Place::Before => self.before,
            Place::After => self.after,
            Place::Layers { .. } => true,
        }
    }
}

/// Where a tensor sits: outside the layers, or in every layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Before the layers (embeddings).
    Before,
    /// In each of `count` layers.
    Layers { count: u64 },
    /// After the layers (final norm, head).
    After,
}

impl Place {
    /// How many copies of the tensor exist.
    pub fn copies(self) -> u128 {
        match self {
            Place::Before | Place::After => 1,
            Place::Layers { count } => u128::from(count),
        }
    }
}

impl Architecture {
    /// Visits every parameter tensor in `model.parameters()` order, with
    /// where it sits.
    ///
    /// Source: the `__init__` of each family's modules in transformers 5.23
    /// (GPT-2: `wte`, `wpe`, each `GPT2Block`'s `ln_1`, `c_attn`, `c_proj`,
    /// `ln_2`, `c_fc`, `c_proj`, then `ln_f`; the others: `embed_tokens`,
    /// each layer's attention, MLP (or router, experts and shared expert)
    /// and norms, then `norm` and an untied `lm_head`). Experts are 3-D
    /// parameters (transformers 5 stacks them: `gate_up_proj` [E, 2f, h],
    /// `down_proj` [E, h, f]). A family whose layers differ (Gemma 4: its
    /// global and sliding layers, those reusing keys and values) has its
    /// layers visited by build, each build once with its count, not in
    /// layer order; its per-layer embedding's table, projection and norm
    /// come after the final norm, as `Gemma4TextModel` registers them.
    pub fn for_each_tensor(&self, mut f: impl FnMut(Place, &ParamTensor)) {
        self.walk_tensors(ExpertLayout::Stacked, &mut f);
    }

    /// As [`Architecture::for_each_tensor`], with the routed experts held
    /// as `experts` says (transformers 4's per-expert linears where the
    /// family describes them).
    pub fn for_each_tensor_as(
        &self,
        experts: ExpertLayout,
        mut f: impl FnMut(Place, &ParamTensor),
    ) {
        self.walk_tensors(experts, &mut f);
    }

    /// The one body of [`Architecture::for_each_tensor`], behind a `dyn`
    /// callback so the page's wasm holds it once rather than once per
    /// caller.
    fn walk_tensors(&self, experts: ExpertLayout, f: &mut dyn FnMut(Place, &ParamTensor)) {
        if self.family.spec().blocks == Blocks::Single {
            // Its own walk, so that the common one stays as small as it
            // was (and inlined where it was).
            return self.walk_single(experts, f);
        }
        if experts == ExpertLayout::Linears {
            // transformers 4 has no stacked experts for peft to convert
            // ([`Family::module_v4`]).
            let family = self.family;
            let plain = |t: &ParamTensor| ParamTensor {
                proj: t.module.map_or(t.proj, |m| family.module_v4(m).proj),
                ..*t
            };
            return self.walk_layout(experts, &mut |at, t| f(at, &plain(t)));
        }
        self.walk_layout(experts, f);
    }

    fn walk_layout(&self, experts: ExpertLayout, f: &mut dyn FnMut(Place, &ParamTensor)) {
        let spec = self.spec();
        let (h, v) = (u64::from(self.hidden), u64::from(self.vocab));
        let norm = |name, width| ParamTensor {
            bias: spec.norm == Norm::LayerNorm,
            ..ParamTensor::new(name, width, 1, Role::Norm)
        };

        f(
            Place::Before,
            &ParamTensor::new("embed_tokens", v, h, Role::Embedding),
        );
        if spec.positions == Positions::Learned {
            f(
                Place::Before,
                &ParamTensor::new(
                    "position_embeddings",
                    u64::from(self.positions),
                    h,
                    Role::PositionTable,
                ),
            );
        }
        let mut lo = 0u32;
        for (kind, count) in self.layer_kinds() {
            let hi = lo.saturating_add(u32::try_from(count).unwrap_or(u32::MAX));
            if count > 0 {
                for (class, n) in self.classes_in(lo, hi) {
                    if n == 0 {
                        continue;
                    }
                    let linear = if class == self.class_at(lo) {
                        u64::from(self.linear_in(lo, hi))
                    } else {
                        0
                    };
                    self.layer_tensors(kind, (n - linear, linear), class, experts, f);
                }
            }
            lo = hi;
        }
        f(Place::After, &norm("norm", h));
        self.per_layer_embedding_tensors(f);
        self.altup_projection_tensors(f);
        if !self.tied {
            f(Place::After, &ParamTensor::new("lm_head", v, h, Role::Head));
        }
    }

    /// A family whose layers are one thing each ([`Blocks::Single`]:
    /// Nemotron-H, `NemotronHModel.__init__`): the embeddings, the layers
    /// ([`Architecture::single_layers`]), the final norm (`norm_f`), the
    /// head. Such a family has no learned positions or per-layer
    /// embeddings.
    #[inline(never)]
    fn walk_single(&self, experts: ExpertLayout, f: &mut dyn FnMut(Place, &ParamTensor)) {
        let (h, v) = (u64::from(self.hidden), u64::from(self.vocab));
        f(
            Place::Before,
            &ParamTensor::new("embed_tokens", v, h, Role::Embedding),
        );
        self.single_layers(experts, f);
        f(Place::After, &self.norm("norm", h));
        if !self.tied {
            f(Place::After, &ParamTensor::new("lm_head", v, h, Role::Head));
        }
    }

    /// The layers of a family whose layers are one thing each
    /// ([`Blocks::Single`]), each behind its norm (Nemotron-H's
    /// `NemotronHBlock`: `norm`, then `mixer`): the recurrent layers, the
    /// attention layers, then the MLPs (`NemotronHMLP`) or the experts
    /// alone.
    fn single_layers(&self, experts: ExpertLayout, f: &mut dyn FnMut(Place, &ParamTensor)) {
        let (linear, ffn) = (self.linear_layers, self.ffn_layers);
        let full = self.attention_layers();
        let h = u64::from(self.hidden);
        if linear > 0 {
            let at = Place::Layers {
                count: u64::from(linear),
            };
            f(at, &self.norm("norm", h));
            self.recurrent_tensors(&mut |t| f(at, &t));
        }
        if full > 0 {
            let at = Place::Layers {
                count: u64::from(full),
            };
            f(at, &self.norm("norm", h));
            let class = self.class_at(self.layers.saturating_sub(1));
            self.full_attention_tensors(class, &mut |t| f(at, &t));
        }
        if ffn > 0 {
            let at = Place::Layers {
                count: u64::from(ffn),
            };
            f(at, &self.norm("norm", h));
            match self.moe() {
                // Nemotron 3's MoE layers (`NemotronHMoE`: experts, router,
                // shared expert).
                Some(moe) => self.moe_tensors(moe, experts, &mut |t| f(at, &t)),
                None => {
                    for t in self.mlp_tensors(u64::from(self.ffn)).into_iter().flatten() {
                        f(at, &t);
                    }
                }
            }
        }
    }

    /// The per-layer embeddings' model-level tensors, registered after the
    /// final norm: the table `vocab_size_per_layer_input × (layers · p)`,
    /// the projection `h → layers · p` and its norm over `p`.
    /// Source: transformers 5.23 `Gemma4TextModel.__init__`
    /// (`embed_tokens_per_layer`, `per_layer_model_projection`,
    /// `per_layer_projection_norm`).
    fn per_layer_embedding_tensors(&self, f: &mut dyn FnMut(Place, &ParamTensor)) {
        if !self.family.spec().per_layer_embeddings || self.ple_dim == 0 {
            return;
        }
        let (h, p) = (u64::from(self.hidden), u64::from(self.ple_dim));
        let all = u64::from(self.layers) * p;
        let table = u64::from(self.ple_vocab);
        f(
            Place::After,
            &ParamTensor::new("embed_tokens_per_layer", table, all, Role::Embedding),
        );
        f(
            Place::After,
            &ParamTensor::linear(
                self.family.module(ModuleName::PerLayerModelProjection),
                all,
                h,
                false,
            ),
        );
        f(Place::After, &self.norm("per_layer_projection_norm", p));
    }

    /// AltUp's model-level projections (Gemma 3n), registered after the
    /// per-layer embeddings': three `h → h` linears each way between the
    /// one stream and the four (`altup_projections`,
    /// `altup_unembed_projections`, `nn.ModuleList`s; transformers 5.23
    /// `Gemma3nTextModel.__init__`), as stacks of three.
    fn altup_projection_tensors(&self, f: &mut dyn FnMut(Place, &ParamTensor)) {
        if !self.family.spec().altup {
            return;
        }
        let h = u64::from(self.hidden);
        for name in ["altup_projections", "altup_unembed_projections"] {
            let t = ParamTensor {
                stack: u64::from(ALTUP_STREAMS - 1),
                ..ParamTensor::new(name, h, h, Role::Mlp)
            };
            f(Place::After, &t);
        }
    }

    /// AltUp's and Laurel's tensors in a layer (Gemma 3n,
    /// [`crate::model::family::Spec::altup`]), in registration order:
    /// `altup.correct_output_scale` (a vector), `correction_coefs` (4 →
    /// 4), `prediction_coefs` (4 → 16), `modality_router` (h → 4),
    /// `router_norm`; `laurel.linear_left` (h → 64), `linear_right` (64 →
    /// h), `post_laurel_norm`. Source: transformers 5.23
    /// `Gemma3nTextAltUp.__init__`, `Gemma3nTextLaurelBlock.__init__`.
    fn altup_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let (n, r) = (u64::from(ALTUP_STREAMS), u64::from(LAUREL_RANK));
        put(ParamTensor::new(
            "altup.correct_output_scale",
            h,
            1,
            Role::Norm,
        ));
        put(ParamTensor::new("altup.correction_coefs", n, n, Role::Mlp));
        put(ParamTensor::new(
            "altup.prediction_coefs",
            n * n,
            n,
            Role::Mlp,
        ));
        put(ParamTensor::new("altup.modality_router", n, h, Role::Mlp));
        put(self.norm("altup.router_norm", h));
        put(ParamTensor::new("laurel.linear_left", r, h, Role::Mlp));
        put(ParamTensor::new("laurel.linear_right", h, r, Role::Mlp));
        put(self.norm("laurel.post_laurel_norm", h));
    }

    /// Layer `l`'s build: its attention heads, whether it has keys and
    /// values of its own, its MLP width.
    fn class_at(&self, l: u32) -> LayerClass {
        LayerClass {
            heads: self.attention_at(l),
            own_kv: !self.kv_shared_at(l),
            ffn: self.ffn_at(l),
        }
    }

    /// The layers `lo..hi` by build: one build for a family whose layers
    /// are all alike; Gemma 4's sliding and global layers, with and
    /// without keys of their own, counted layer by layer.
    fn classes_in(&self, lo: u32, hi: u32) -> [(LayerClass, u64); 4] {
        let first = self.class_at(lo);
        let mut out = [(first, 0u64); 4];
        let spec = self.family.spec();
        if !spec.global_attention && !spec.kv_sharing {
            out[0].1 = u64::from(hi.saturating_sub(lo));
            return out;
        }
        let mut used = 0;
        for l in lo..hi {
            let c = self.class_at(l);
            match out[..used].iter().position(|(k, _)| *k == c) {
                Some(i) => out[i].1 += 1,
                None if used < out.len() => {
                    out[used] = (c, 1);
                    used += 1;
                }
                // Four builds at most: sliding or global, shared or not.
                None => {}
            }
        }
        out
    }

    /// A norm's weight (and bias, for LayerNorm) over `width`.
    fn norm(&self, name: &'static str, width: u64) -> ParamTensor {
        ParamTensor {
            bias: self.family.spec().norm == Norm::LayerNorm,
            ..ParamTensor::new(name, width, 1, Role::Norm)
        }
    }

    /// The weight of linear module `name` as this family has it.
    fn lin(&self, name: ModuleName, out: u64, inp: u64, bias: bool) -> ParamTensor {
        ParamTensor::linear(self.family.module(name), out, inp, bias)
    }

    /// The decoder layers of one kind: `full` with attention and `linear`
    /// with a Gated DeltaNet in its place (the attention's tensors in the
    /// first, the DeltaNet's in the others, the rest in all).
    fn layer_tensors(
        &self,
        kind: LayerKind,
        (full, linear): (u64, u64),
        class: LayerClass,
        experts: ExpertLayout,
        f: &mut dyn FnMut(Place, &ParamTensor),
    ) {
        let spec = self.spec();
        let h = u64::from(self.hidden);
        let at = Place::Layers {
            count: full + linear,
        };
        let gpt2 = spec.layout == Layout::Gpt2;
        if spec.blocks == Blocks::Single {
            // One norm, then the mixer alone.
            f(at, &self.norm("norm", h));
        }
        match spec.layout {
            Layout::Gpt2 => f(at, &self.norm("ln_1", h)),
            // `GPTNeoXLayer.__init__` registers both norms first.
            Layout::NeoX => {
                f(at, &self.norm("input_layernorm", h));
                f(at, &self.norm("post_attention_layernorm", h));
            }
            Layout::Llama => {}
        }
        if linear > 0 {
            self.recurrent_tensors(&mut |t| f(Place::Layers { count: linear }, &t));
        }
        if full > 0 {
            let mut put = |t: ParamTensor| f(Place::Layers { count: full }, &t);
            self.full_attention_tensors(class, &mut put);
        }
        let mut put = |t: ParamTensor| f(at, &t);
        if spec.blocks == Blocks::Single {
            return;
        }
        if gpt2 {
            put(self.norm("ln_2", h));
        }
        // The MLP, or the experts (with Gemma 4's dense MLP beside them).
        match (kind, spec.moe) {
            (LayerKind::Moe, Some(moe)) => {
                if moe.dense_beside {
                    for t in self.mlp_tensors(class.ffn).into_iter().flatten() {
                        put(t);
                    }
                }
                self.moe_tensors(moe, experts, &mut put);
            }
            (LayerKind::Dense, _) | (LayerKind::Moe, None) => {
                for t in self.mlp_tensors(class.ffn).into_iter().flatten() {
                    put(t);
                }
            }
        }
        self.layer_extras(kind, &mut put);
        match spec.norm_place {
            NormPlace::Pre if spec.layout != Layout::Llama => {}
            NormPlace::Pre => {
                put(self.norm("input_layernorm", h));
                put(self.norm("post_attention_layernorm", h));
            }
            NormPlace::Sandwich => {
                put(self.norm("input_layernorm", h));
                put(self.norm("post_attention_layernorm", h));
                put(self.norm("pre_feedforward_layernorm", h));
                put(self.norm("post_feedforward_layernorm", h));
            }
            NormPlace::Post => {
                put(self.norm("post_attention_layernorm", h));
                put(self.norm("post_feedforward_layernorm", h));
            }
        }
    }

    /// A recurrent layer's mixer, of the family's kind.
    fn recurrent_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        match self.family.spec().linear.map(|l| l.kind) {
            Some(Recurrence::ShortConv) => self.short_conv_tensors(put),
            Some(Recurrence::Mamba2) => self.mamba2_tensors(put),
            Some(Recurrence::Kda) => self.kda_tensors(put),
            Some(Recurrence::GatedDeltaNet) | None => self.delta_net_tensors(put),
        }
    }

    /// What a Gemma 4 layer registers after its norms: the per-layer
    /// embedding's gate `h → p`, projection `p → h` and norm, then an MoE
    /// layer's three more norms (after the dense MLP, after the experts,
    /// before the experts). Source: transformers 5.23
    /// `Gemma4TextDecoderLayer.__init__` (`per_layer_input_gate`,
    /// `per_layer_projection`, `post_per_layer_input_norm`,
    /// `post_feedforward_layernorm_1`, `post_feedforward_layernorm_2`,
    /// `pre_feedforward_layernorm_2`).
    fn layer_extras(&self, kind: LayerKind, put: &mut dyn FnMut(ParamTensor)) {
        let spec = self.family.spec();
        let h = u64::from(self.hidden);
        if spec.altup {
            self.altup_tensors(put);
        }
        if spec.per_layer_embeddings && self.ple_dim > 0 {
            let p = u64::from(self.ple_dim);
            let m = |name| self.family.module(name);
            put(ParamTensor::linear(
                m(ModuleName::PerLayerInputGate),
                p,
                h,
                false,
            ));
            put(ParamTensor::linear(
                m(ModuleName::PerLayerProjection),
                h,
                p,
                false,
            ));
            put(self.norm("post_per_layer_input_norm", h));
        }
        if kind == LayerKind::Moe && spec.moe.is_some_and(|m| m.dense_beside) {
            put(self.norm("post_feedforward_layernorm_1", h));
            put(self.norm("post_feedforward_layernorm_2", h));
            put(self.norm("pre_feedforward_layernorm_2", h));
        }
    }

    /// A Gated DeltaNet's tensors (`linear_attn`), in registration order.
    /// Its projections are `nn.Linear`s computing none of the seven
    /// projections: peft's "all-linear" adapts them, as their own names do.
    ///
    /// Source: transformers 5.23 `Qwen3NextGatedDeltaNet.__init__`
    /// (`conv1d`, `in_proj_qkvz`, `in_proj_ba`, `dt_bias`, `A_log`, `norm`,
    /// `out_proj`) and `Qwen3_5GatedDeltaNet.__init__` (`conv1d`, `dt_bias`,
    /// `A_log`, `norm`, `out_proj`, `in_proj_qkv`, `in_proj_z`,
    /// `in_proj_b`, `in_proj_a`); the adapters measured in
    /// `hybrid_train_rows.jsonl` (LoRA rows: trainable parameters).
    fn delta_net_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let Some(rule) = self.family.spec().linear else {
            return;
        };
        let mut put = |t: ParamTensor| {
            put(ParamTensor {
                recurrent: true,
                ..t
            })
        };
        let h = u64::from(self.hidden);
        let (conv, value) = self.linear_widths();
        let hv = u64::from(self.linear_v_heads);
        let vec = |name, n| ParamTensor::new(name, n, 1, Role::Attention);
        // This GPU's rows of a projection under tensor parallelism
        // (`torch.chunk`: rank 0 holds ⌈out / tp⌉).
        let tp = u64::from(self.gathered_tp.max(1));
        let proj = |name, out: u64, inp| {
            ParamTensor::linear(self.family.module(name), out.div_ceil(tp), inp, false)
        };
        // `nn.Conv1d(conv, conv, k, groups=conv, bias=False)`: [conv, 1, k].
        put(ParamTensor {
            conv: true,
            ..ParamTensor::new("conv1d", conv, u64::from(self.linear_conv), Role::Attention)
        });
        if rule.fused_in_proj {
            put(proj(ModuleName::InProjQkvz, conv + value, h));
            put(proj(ModuleName::InProjBa, 2 * hv, h));
        }
        put(vec("dt_bias", hv));
        put(ParamTensor {
            fp32_stored: true,
            ..vec("A_log", hv)
        });
        put(ParamTensor::new(
            "linear_attn.norm",
            u64::from(self.linear_v_dim),
            1,
            Role::Norm,
        ));
        put(proj(ModuleName::OutProj, h, value));
        if !rule.fused_in_proj {
            put(proj(ModuleName::InProjQkv, conv, h));
            put(proj(ModuleName::InProjZ, value, h));
            put(proj(ModuleName::InProjB, hv, h));
            put(proj(ModuleName::InProjA, hv, h));
        }
    }

    /// LFM2's short convolution (`conv`), in registration order: the
    /// depthwise `nn.Conv1d(h, h, L_cache, groups=h)` (`[h, 1, L_cache]`),
    /// `in_proj` `h → 3h`, `out_proj` `h → h`; without biases (the config
    /// reader refuses `conv_bias`).
    ///
    /// Source: transformers 5.23 `Lfm2ShortConv.__init__`.
    fn short_conv_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let mut put = |t: ParamTensor| {
            put(ParamTensor {
                recurrent: true,
                ..t
            })
        };
        put(ParamTensor {
            conv: true,
            ..ParamTensor::new("conv", h, u64::from(self.linear_conv), Role::Attention)
        });
        put(ParamTensor::new("in_proj", 3 * h, h, Role::Attention));
        put(ParamTensor::new("out_proj", h, h, Role::Attention));
    }

    /// A Mamba-2 mixer (`mamba`), in registration order: the depthwise
    /// `nn.Conv1d(C, C, k, groups=C, bias=True)` over `C = d_inner + 2·G·N`
    /// channels (`[C, 1, k]` and its bias), `in_proj` `h → d_inner + C + H`,
    /// `dt_bias`, `A_log`, the gated norm over `d_inner`, `D`, `out_proj`
    /// `d_inner → h`; the projections without biases (the config reader
    /// refuses `mamba_proj_bias`).
    ///
    /// Source: transformers 5.23 `BambaMixer.__init__` (`models/bamba/`),
    /// which `GraniteMoeHybridMambaLayer` is.
    fn mamba2_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let (conv, inner) = self.linear_widths();
        let heads = u64::from(self.linear_v_heads);
        let mut put = |t: ParamTensor| {
            put(ParamTensor {
                recurrent: true,
                ..t
            })
        };
        let vec = |name, n| ParamTensor::new(name, n, 1, Role::Attention);
        put(ParamTensor {
            conv: true,
            bias: true,
            ..ParamTensor::new("conv1d", conv, u64::from(self.linear_conv), Role::Attention)
        });
        put(ParamTensor::new(
            "in_proj",
            inner + conv + heads,
            h,
            Role::Attention,
        ));
        put(vec("dt_bias", heads));
        // Kept fp32 where the family's MLX says (Nemotron-H's
        // `cast_predicate`); Granite's is cast with the rest.
        put(ParamTensor {
            fp32_stored: true,
            ..vec("A_log", heads)
        });
        put(ParamTensor::new("mamba.norm", inner, 1, Role::Norm));
        put(vec("D", heads));
        put(ParamTensor::new("out_proj", h, inner, Role::Attention));
    }

    /// A Kimi Delta Attention layer's tensors (`self_attn`), in
    /// registration order: `q_proj`, `k_proj`, `v_proj` (`h → H·D`), the
    /// convolution over the three (`3·H·D` channels, no bias), the forget
    /// gate's `dt_bias` (`H·D`) and `A_log` (`H`), both stored fp32, its
    /// `f_a_proj` (`h → D`) and `f_b_proj` (`D → H·D`), `b_proj` (`h → H`),
    /// the output gate's `g_a_proj` and `g_b_proj`, `o_norm` (`D`),
    /// `o_proj`. Source: transformers 5.23 `KimiDeltaAttention.__init__`
    /// (counted: `scripts/measure/families/kimi_linear/transformers/params.json`).
    fn kda_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let (conv, inner) = self.linear_widths();
        let (heads, d) = (u64::from(self.linear_v_heads), u64::from(self.linear_v_dim));
        let mut put = |t: ParamTensor| {
            put(ParamTensor {
                recurrent: true,
                ..t
            })
        };
        let lin = |name, out, inp| ParamTensor::new(name, out, inp, Role::Attention);
        for name in ["kda.q_proj", "kda.k_proj", "kda.v_proj"] {
            put(lin(name, inner, h));
        }
        put(ParamTensor {
            conv: true,
            ..lin("kda.conv1d", conv, u64::from(self.linear_conv))
        });
        for (name, n) in [("kda.dt_bias", inner), ("kda.A_log", heads)] {
            put(ParamTensor {
                fp32_stored: true,
                ..lin(name, n, 1)
            });
        }
        put(lin("kda.f_a_proj", d, h));
        put(lin("kda.f_b_proj", inner, d));
        put(lin("kda.b_proj", heads, h));
        put(lin("kda.g_a_proj", d, h));
        put(lin("kda.g_b_proj", inner, d));
        put(ParamTensor::new("kda.o_norm", d, 1, Role::Norm));
        put(lin("kda.o_proj", h, inner));
    }

    /// A full-attention layer's own tensors: the projections, the q/k
    /// norms, the sinks.
    fn full_attention_tensors(&self, class: LayerClass, put: &mut dyn FnMut(ParamTensor)) {
        let spec = self.spec();
        self.attention_tensors(class, put);
        match spec.qk_norm {
            // Llama 4's L2 norm has no weight.
            QkNorm::None | QkNorm::L2 => {}
            QkNorm::PerHead => {
                // A layer reusing keys has no key norm (Gemma 4); a value
                // norm without a weight has no parameter.
                let hd = u64::from(class.heads.head_dim);
                put(self.norm("q_norm", hd));
                if class.own_kv {
                    put(self.norm("k_norm", hd));
                }
            }
            QkNorm::Whole => {
                put(self.norm("q_norm", self.q_dim()));
                put(self.norm("k_norm", self.kv_dim()));
            }
        }
        if spec.sinks {
            put(ParamTensor::new(
                "sinks",
                u64::from(self.heads),
                1,
                Role::Attention,
            ));
        }
    }

    /// A layer's attention projections, in registration order.
    /// Gemma 4's layers differ ([`LayerClass`]): a global layer's heads
    /// are wider (and its keys may be its values: no `v_proj`), a layer
    /// reusing keys and values has neither `k_proj` nor `v_proj`.
    fn attention_tensors(&self, class: LayerClass, put: &mut dyn FnMut(ParamTensor)) {
        let spec = self.spec();
        let h = u64::from(self.hidden);
        let (q, kv, o) = (self.q_dim(), self.kv_dim(), self.o_dim());
        let qkv_bias = spec.attn_bias != AttnBias::None;
        let o_bias = spec.attn_bias == AttnBias::All;
        match spec.qkv {
            Qkv::Separate => {
                let (q, kv) = (class.heads.q(self.heads), class.heads.kv());
                // Under a plan that gathers attention's outputs, this GPU's
                // rows of q, k and v and columns of o (`torch.chunk`).
                let tp = match spec.tp {
                    TpPlan::GatheredHeads => u64::from(self.gathered_tp.max(1)),
                    TpPlan::None | TpPlan::Heads | TpPlan::Latent | TpPlan::HeadOnly => 1,
                };
                let (q, kv) = (q.div_ceil(tp), kv.div_ceil(tp));
                // Gated attention's q_proj also makes the gate.
                let q_out = if spec.attn_gate { 2 * q } else { q };
                let mut put = |t: ParamTensor| {
                    put(ParamTensor {
                        heads: Some(class.heads),
                        ..t
                    })
                };
                put(self.lin(ModuleName::QProj, q_out, h, qkv_bias));
                if class.own_kv {
                    put(self.lin(ModuleName::KProj, kv, h, qkv_bias));
                    if class.heads.v_proj {
                        put(self.lin(ModuleName::VProj, kv, h, qkv_bias));
                    }
                }
                put(self.lin(ModuleName::OProj, h, q, o_bias));
            }
            Qkv::Fused => {
                let (fused, out) = spec.layout.fused_attention();
                let (fused, out) = (
                    self.lin(fused, q + 2 * kv, h, qkv_bias),
                    self.lin(out, h, o, o_bias),
                );
                match spec.layout {
                    Layout::Gpt2 | Layout::NeoX => {
                        put(fused);
                        put(out);
                    }
                    // Phi3Attention registers o_proj before qkv_proj.
                    Layout::Llama => {
                        put(out);
                        put(fused);
                    }
                }
            }
            Qkv::Latent => self.latent_tensors(put),
        }
    }

    /// DeepSeek's latent attention: q (through a low rank when
    /// `q_lora_rank` is set), the compressed key/value with its norm, its
    /// expansion to every head, and the output.
    fn latent_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let q = self.q_dim();
        let (ql, kvl, rope) = (
            u64::from(self.q_lora_rank),
            u64::from(self.kv_lora_rank),
            u64::from(self.rope_dim),
        );
        let hd = u64::from(self.head_dim);
        let nope_v = u64::from(self.heads) * (hd - rope + u64::from(self.v_head_dim));
        if ql > 0 {
            put(self.lin(ModuleName::QAProj, ql, h, false));
            put(self.norm("q_a_layernorm", ql));
            put(self.lin(ModuleName::QBProj, q, ql, false));
        } else {
            put(self.lin(ModuleName::QProj, q, h, false));
        }
        put(self.lin(ModuleName::KvAProjWithMqa, kvl + rope, h, false));
        put(self.norm("kv_a_layernorm", kvl));
        put(self.lin(ModuleName::KvBProj, nope_v, kvl, false));
        put(self.lin(ModuleName::OProj, h, self.o_dim(), false));
        if self.spec().indexer {
            self.indexer_tensors(put);
        }
    }

    /// DeepSeek Sparse Attention's lightning indexer, registered after the
    /// attention's own projections (`DeepseekV32Attention.__init__`:
    /// `self.indexer` last): `wq_b` from the query's low rank, `wk` and
    /// `weights_proj` from the hidden state, `k_norm` a LayerNorm with
    /// bias. Source: transformers 5.23 `DeepseekV32Indexer.__init__`.
    fn indexer_tensors(&self, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let (heads, dim) = (u64::from(self.index_heads), u64::from(self.index_head_dim));
        let t = |name, rows, cols| ParamTensor::new(name, rows, cols, Role::Indexer);
        put(t("indexer.wq_b", heads * dim, u64::from(self.q_lora_rank)));
        put(t("indexer.wk", dim, h));
        put(ParamTensor {
            bias: true,
            ..ParamTensor::new("indexer.k_norm", dim, 1, Role::Indexer)
        });
        put(t("indexer.weights_proj", heads, h));
    }

    /// A mixture of experts' router, stacked experts (with gpt-oss's
    /// biases) and shared expert, in registration order.
    fn moe_tensors(&self, moe: Moe, layout: ExpertLayout, put: &mut dyn FnMut(ParamTensor)) {
        let h = u64::from(self.hidden);
        let (e, mf) = (u64::from(self.experts), u64::from(self.moe_ffn));
        let router = ParamTensor {
            bias: moe.router == Router::TopKSoftmax,
            proj: self.family.module(ModuleName::Router).proj,
            module: Some(ModuleName::Router),
            ..ParamTensor::new(ModuleName::Router.text(), e, h, Role::Router)
        };
        if moe.router == Router::Scaled {
            // `Gemma4TextRouter`: `scale` (h) and `per_expert_scale` (E)
            // before its `proj`, which is registered first of the layer's
            // MoE modules.
            put(ParamTensor::new("router.scale", h, 1, Role::Router));
            put(ParamTensor::new(
                "router.per_expert_scale",
                e,
                1,
                Role::Router,
            ));
        }
        let stacked = |name: ModuleName, rows, cols| ParamTensor {
            stack: e,
            proj: self.family.module(name).proj,
            module: Some(name),
            ..ParamTensor::new(name.text(), rows, cols, Role::Expert)
        };
        // The experts are built as the family's MLP: gated, or (Nemotron-H's
        // `NemotronHExperts`) an `up_proj` alone.
        let up = match self.spec().mlp {
            Mlp::Up => stacked(ModuleName::ExpertsUp, mf, h),
            Mlp::Gated | Mlp::GatedFused | Mlp::Plain => {
                stacked(ModuleName::ExpertsGateUp, 2 * mf, h)
            }
        };
        let experts = [up, stacked(ModuleName::ExpertsDown, h, mf)];
        // 2-D biases [E, out] (gpt-oss), tensors of their own.
        let biases = [
            ParamTensor::new("experts.gate_up_proj_bias", e, 2 * mf, Role::Expert),
            ParamTensor::new("experts.down_proj_bias", e, h, Role::Expert),
        ];
        if moe.router_first {
            put(router);
        }
        let linears = match layout {
            ExpertLayout::Stacked => None,
            ExpertLayout::Linears => self.family.spec().legacy.expert_linears,
        };
        if let Some(names) = linears {
            // transformers 4: `experts.{i}.w1`, `w2`, `w3` (or `gate_proj`,
            // `up_proj`, `down_proj`), each an `nn.Linear`.
            for name in names.in_order() {
                let (rows, cols) = if name == names.down { (h, mf) } else { (mf, h) };
                put(ParamTensor {
                    stack: e,
                    per_expert: true,
                    ..self.lin(name, rows, cols, false)
                });
            }
        }
        for (w, b) in experts
            .into_iter()
            .zip(biases)
            .filter(|_| linears.is_none())
        {
            put(w);
            if moe.expert_bias {
                put(b);
            }
        }
        if !moe.router_first {
            put(router);
        }
        let sf = u64::from(self.shared_experts) * mf;
        if sf > 0 {
            for t in self.mlp_tensors(sf).into_iter().flatten() {
                put(t);
            }
            if moe.shared == Shared::Gated {
                put(self.lin(ModuleName::SharedExpertGate, 1, h, false));
            }
        }
    }

    /// A dense MLP's tensors, of width `f`: gate, up and down (or fused
    /// gate_up), or GPT-2's c_fc and c_proj with biases. Under peft's
    /// experts conversion these linears are not LoRA targets.
    fn mlp_tensors(&self, f: u64) -> [Option<ParamTensor>; 3] {
        let spec = self.spec();
        let h = u64::from(self.hidden);
        match spec.mlp {
            Mlp::Gated => [
                Some(self.lin(ModuleName::GateProj, f, h, false)),
                Some(self.lin(ModuleName::UpProj, f, h, false)),
                Some(self.lin(ModuleName::DownProj, h, f, false)),
            ],
            Mlp::GatedFused => [
                Some(self.lin(ModuleName::GateUpProj, 2 * f, h, false)),
                Some(self.lin(ModuleName::DownProj, h, f, false)),
                None,
            ],
            Mlp::Up => [
                Some(self.lin(ModuleName::UpProj, f, h, false)),
                Some(self.lin(ModuleName::DownProj, h, f, false)),
                None,
            ],
            Mlp::Plain => {
                let (up, down) = spec.layout.plain_mlp();
                [
                    Some(self.lin(up, f, h, true)),
                    Some(self.lin(down, h, f, true)),
                    None,
                ]
            }
        }
    }

    /// Visits the tensors of layer 0 (the last layer backward reaches),
    /// with the experts held as `experts` says.
    pub fn for_each_first_layer_tensor(
        &self,
        experts: ExpertLayout,
        mut f: impl FnMut(&ParamTensor),
    ) {
        let kind = self
            .layer_kinds()
            .into_iter()
            .find(|(_, n)| *n > 0)
            .map_or(LayerKind::Dense, |(k, _)| k);
        let linear = u64::from(self.linear_at(0));
        self.layer_tensors(
            kind,
            (1 - linear, linear),
            self.class_at(0),
            experts,
            &mut |_, t: &ParamTensor| f(t),
        );
    }

    /// Parameters of one layer of each kind (dense, MoE) and mixer (full
    /// attention, Gated DeltaNet): `[kind][mixer]`, 0 for a pair the model
    /// does not have. What FSDP gathers for one decoder layer.
    pub fn layer_params(&self) -> [[u128; 2]; 2] {
        let linear = self.linear_by_kind();
        let mut lo = 0u32;
        let mut out = [[0u128; 2]; 2];
        for (k, (kind, count)) in self.layer_kinds().into_iter().enumerate() {
            let n = u32::try_from(count).unwrap_or(u32::MAX);
            let class = self.class_at(lo);
            let full = n.saturating_sub(linear[k]);
            for (m, (present, one)) in [(full > 0, (1, 0)), (linear[k] > 0, (0, 1))]
                .into_iter()
                .enumerate()
            {
                if present {
                    let mut p = 0u128;
                    self.layer_tensors(kind, one, class, ExpertLayout::Stacked, &mut |_, t| {
                        p += t.elems();
                    });
                    out[k][m] = p;
                }
            }
            lo = lo.saturating_add(n);
        }
        out
    }

    /// Elements of the tensors outside the layers that backward reaches
    /// last: the token embedding (and a learned position table).
    pub fn embedding_params(&self) -> u128 {
        let mut n = 0;
        self.for_each_tensor(|at, t| {
            if at == Place::Before {
                n += t.elems();
            }
        });
        n
    }

    /// The counts an estimate needs, in one walk over the tensors (the
    /// single-purpose methods below each walk them again).
    pub fn stats(&self) -> ParamStats {
        self.stats_as(ExpertLayout::Stacked)
    }

    /// As [`Architecture::stats`], with the experts held as `experts` says
    /// (per-expert linears: more, smaller tensors).
    pub fn stats_as(&self, experts: ExpertLayout) -> ParamStats {
        self.stats_of_part(experts, Ends::BOTH)
    }

    /// [`Architecture::stats_as`] of a part of the model: its layers, and
    /// the tensors before them (embeddings) and after them (final norm,
    /// head) only where `ends` says it holds them (a pipeline stage).
    pub fn stats_of_part(&self, experts: ExpertLayout, ends: Ends) -> ParamStats {
        let mut st = ParamStats::default();
        self.for_each_tensor_as(experts, |at, t| {
            if !ends.holds(at) {
                return;
            }
            let copies = at.copies();
            st.params += copies * t.elems();
            st.tensors += copies * t.tensors();
            st.largest_tensor = st.largest_tensor.max(t.tensor_elems());
            st.largest_module = st.largest_module.max(t.module_elems());
            if at == Place::Before {
                st.embedding += t.elems();
            }
        });
        st
    }

    /// Total parameter count N (tied weights counted once).
    pub fn params(&self) -> u128 {
        let mut n = 0u128;
        self.for_each_tensor(|at, t| n += at.copies() * t.elems());
        n
    }

    /// Parameters a token goes through: the experts it is routed to, not
    /// all of them (MoE's "active" parameters; N for a dense model).
    pub fn active_params(&self) -> u128 {
        let mut n = 0u128;
        let (e, k) = (u128::from(self.experts), u128::from(self.experts_per_token));
        self.for_each_tensor(|at, t| {
            let all = at.copies() * t.elems();
            n += if t.role == Role::Expert && e > 0 {
                all / e * k
            } else {
                all
            };
        });
        n
    }

    /// Number of parameter tensors (each gets one optimizer step counter).
    pub fn param_tensors(&self) -> u128 {
        let mut n = 0u128;
        self.for_each_tensor(|at, t| n += at.copies() * t.tensors());
        n
    }

    /// Elements of the largest single parameter tensor.
    pub fn largest_tensor(&self) -> u128 {
        let mut m = 0u128;
        self.for_each_tensor(|_, t| m = m.max(t.tensor_elems()));
        m
    }

    /// Parameters of the largest single module: its weight and bias
    /// (DeepSpeed's "largest layer").
    pub fn largest_module(&self) -> u128 {
        let mut m = 0u128;
        self.for_each_tensor(|_, t| m = m.max(t.module_elems()));
        m
    }

    /// Bytes of non-parameter buffers, for weights of `param_bytes`: RoPE's
    /// `inv_freq` and `original_inv_freq` (fp32, half the rotary width
    /// each, per RoPE table), Gemma 2/3/4's 0-dim `embed_scale`s, Gemma
    /// 4's `layer_scalar`s, and
    /// DeepSeek-V3's per-layer router `e_score_correction_bias` (GLM-4.5's
    /// in fp32, `Moe::correction_fp32`).
    ///
    /// Source: measured `buffers` in the ground truth (256 bytes at head_dim
    /// 64, 512 at 128; GLM-4.5's tiny rows 160 bytes: rotary 32 of 64, four
    /// fp32 biases in each of two MoE layers).
    pub fn buffer_bytes(&self, param_bytes: u64) -> u64 {
        let spec = self.spec();
        let rotary = crate::model::attention::KvGeometry::of(self).rotary_width();
        // Gemma 4's full-attention table spans its global layers' heads
        // (`full_attention_inv_freq` of `global_head_dim / 2`).
        let global = if spec.global_attention && spec.rope_tables > 1 {
            u64::from(self.global_heads().head_dim)
        } else {
            rotary
        };
        let rope = u64::from(spec.rope_tables.saturating_sub(1)) * 4 * rotary
            + u64::from(spec.rope_tables.min(1)) * 4 * global;
        // Gemma 4's per-layer table has its own 0-dim `embed_scale`.
        let tables = 1 + u64::from(spec.per_layer_embeddings && self.ple_dim > 0);
        let scale = match spec.embed_scale {
            EmbedScale::Buffer => tables * param_bytes,
            EmbedScale::None | EmbedScale::PerForward => 0,
        };
        // Gemma 4's one-element `layer_scalar` in each layer.
        let scalars = if spec.layer_scalar {
            u64::from(self.layers) * param_bytes
        } else {
            0
        };
        let correction = match spec.moe.map(|m| (m.router, m.correction_fp32)) {
            // MiniMax-M2's bias is the MoE block's buffer, in the model's
            // dtype (`torch.zeros(num_local_experts)`).
            Some((Router::SigmoidGrouped | Router::SigmoidBias, fp32)) => {
                let each = if fp32 { 4 } else { param_bytes };
                self.layer_kinds()[1].1 * u64::from(self.experts) * each
            }
            Some((
                Router::Softmax
                | Router::SoftmaxFp32
                | Router::TopKSoftmax
                | Router::TopKSoftmaxCast
                | Router::TopKSigmoid
                | Router::Scaled
                | Router::SoftmaxGrouped,
                _,
            ))
            | None => 0,
        };
        // GPTBigCode registers `bias = tril(ones(n, n, bool))` over its
        // positions (`GPTBigCodeModel.__init__`), one byte each.
        let mask = if spec.mask_buffer {
            u64::from(self.positions) * u64::from(self.positions)
        } else {
            0
        };
        rope + scale + scalars + correction + mask
    }
}

/// What [`Architecture::stats`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamStats {
    /// N, tied weights once ([`Architecture::params`]).
    pub params: u128,
    /// Parameter tensors ([`Architecture::param_tensors`]).
    pub tensors: u128,
    /// [`Architecture::largest_tensor`].
    pub largest_tensor: u128,
    /// [`Architecture::largest_module`].
    pub largest_module: u128,
    /// [`Architecture::embedding_params`].
    pub embedding: u128,
}
