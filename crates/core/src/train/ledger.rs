//! What a training forward pass keeps alive for backward, tensor by tensor.
//!
//! A tiny symbolic autograd: each tensor has a width per token (or per token
//! per key position, for attention scores), a dtype size and a
//! requires-grad flag; each op marks what it saves for backward following
//! PyTorch's derivative formulas (`tools/autograd/derivatives.yaml`: `mul`
//! saves `other` only when `self` needs a gradient, a frozen `linear` keeps
//! no input, ...) and the Hugging Face modeling code it mirrors. A tensor
//! saved by several ops counts once.
//!
//! Source of truth: the measured `activation_bytes_end_fwd` of every row of
//! the ground truth (`tests/fixtures/pytorch_training_memory.jsonl`), which
//! this ledger reproduces to within the loss's few scalar bytes; the rules
//! below are the mechanism behind those numbers, so they extend to sizes
//! and options the file does not hold.

use crate::inputs::Attn;
use crate::model::family::{
    Act, AttnBias, Dispatch, ExpertLinears, Layout, Mlp, Moe, Norm, NormPlace, Positions, QkNorm,
    Qkv, Recurrence, RopeStyle, Router, Shared, Spec,
};
use crate::model::LayerKind;
use crate::model::{Architecture, KvGeometry, Latent, LayerAttention, ModuleName as M};
use crate::train::run::Ckpt;
use crate::train::run::Dtype;
use crate::train::run::Lora;
use crate::train::run::Quant;
use crate::train::run::Training;
use crate::train::stack::StackSpec;

/// Number formats of the forward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Everything fp32.
    Fp32,
    /// Weights and activations in bf16/fp16.
    Half,
    /// fp32 weights; matmuls in bf16 under `torch.autocast`.
    Amp,
}

impl Mode {
    pub fn of(dtype: Dtype) -> Mode {
        match dtype {
            Dtype::Fp32 => Mode::Fp32,
            Dtype::Bf16 | Dtype::Fp16 | Dtype::MixedBf16 | Dtype::Bf16Autocast => Mode::Half,
            Dtype::AmpBf16 | Dtype::AmpFp16 => Mode::Amp,
        }
    }

    /// The mode a run computes in. Over a quantized base the unquantized
    /// weights are loaded in half precision; `prepare_model_for_kbit_training`
    /// upcasts them to fp32, and the fp32 embedding output then makes the
    /// whole residual stream fp32 (so every activation is, but for autocast).
    ///
    /// Source: peft 0.21 `utils/other.py` (`prepare_model_for_kbit_training`);
    /// measured in `tests/fixtures/quant_rows.jsonl` (per layer, kbit prep
    /// keeps the activations of an fp32 model, without it those of a bf16
    /// model, byte for byte).
    pub fn of_run(t: &Training) -> Mode {
        match (t.quant, t.kbit_prep, t.dtype) {
            (Quant::None, _, d) => Mode::of(d),
            (_, true, d) if d.autocast() || d.autocast_half() => Mode::Amp,
            (_, true, _) | (_, false, Dtype::Fp32) => Mode::Fp32,
            (_, false, _) => Mode::Half,
        }
    }

    /// Bytes per element of matmul outputs.
    pub fn act(self) -> u64 {
        match self {
            Mode::Fp32 => 4,
            Mode::Half | Mode::Amp => 2,
        }
    }

    /// Bytes per element of the weights.
    pub fn param(self) -> u64 {
        match self {
            Mode::Half => 2,
            Mode::Fp32 | Mode::Amp => 4,
        }
    }

    /// Bytes per element of the residual stream (fp32 under autocast: the
    /// embedding and the residual adds stay fp32).
    pub fn residual(self) -> u64 {
        match self {
            Mode::Half => 2,
            Mode::Fp32 | Mode::Amp => 4,
        }
    }
}

/// Where a saved tensor belongs, for the per-layer breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The residual stream between sub-layers.
    Residual,
    /// Norm inputs, normalised values and outputs.
    Norm,
    /// q, k, v, the attention output and its logsumexp.
    Attention,
    /// Attention scores and probabilities (batch × heads × seq²).
    Scores,
    /// MLP intermediates.
    Mlp,
    /// Dropout masks.
    Dropout,
    /// Autocast's bf16 copies of activations fed to matmuls.
    Casts,
    /// LoRA adapter inputs and rank-r intermediates.
    Lora,
    /// An MoE router's probabilities and choices.
    Router,
    /// Routed experts' inputs, intermediates and bookkeeping.
    Experts,
    /// A recurrent mixer's projections, convolution, gates and norms (a
    /// Gated DeltaNet's, LFM2's short convolution's).
    Recurrent,
}

impl Part {
    pub const ALL: [Part; 11] = [
        Part::Residual,
        Part::Norm,
        Part::Attention,
        Part::Scores,
        Part::Mlp,
        Part::Dropout,
        Part::Casts,
        Part::Lora,
        Part::Router,
        Part::Experts,
        Part::Recurrent,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Part::Residual => "residual stream",
            Part::Norm => "norms",
            Part::Attention => "attention (q, k, v, output)",
            Part::Scores => "attention scores (seq²)",
            Part::Mlp => "MLP",
            Part::Dropout => "dropout masks",
            Part::Casts => "autocast input copies",
            Part::Lora => "LoRA adapters",
            Part::Router => "router",
            Part::Experts => "routed experts",
            Part::Recurrent => "recurrent mixer",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Saved bytes of one layer (or of the parts outside the layers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Bytes per token, by [`Part`].
    pub per_token: [u64; Part::ALL.len()],
    /// Bytes per token per key position (multiply by tokens × seq).
    pub per_token_key: u64,
    /// Copies of trainable weights saved for backward (autocast), bytes.
    pub weight_copies: u64,
    /// Weight-derived tensors saved for backward that autocast does not
    /// cache (its cache only takes leaf tensors that require grad): bf16
    /// copies of frozen weights (LoRA), explicit fp32 casts (DeepSeek's
    /// router), Gemma's `1 + w`. Gradient checkpointing drops them with the
    /// layer. Bytes.
    pub weight_copies_uncached: u64,
    /// Weight copies that only live until autocast exits (cached casts
    /// nothing saved: biases, frozen-input adapters).
    pub weight_copies_transient: u64,
    /// Of `weight_copies_uncached`, the adapted down experts' merged weight:
    /// made only when the experts' forward reaches their down projection
    /// (see [`expert_lora_merges`]). Bytes.
    pub down_merge: u64,
    /// Of `weight_copies_uncached`, the frozen weights' bf16 copies that
    /// autocast makes for each matmul, and the largest of them: a
    /// checkpointed forward saves none, so each lives only through its own
    /// matmul. Bytes.
    pub frozen_casts: u64,
    pub frozen_cast_max: u64,
    /// Bytes per token held beyond checkpointing's reach (int8's `ctx.A`).
    pub escaping: u64,
    /// DoRA's largest transient in the layer (bytes, not per token).
    pub dora_transient: u64,
    /// Bytes per token the layer's backward holds beyond what it saved at
    /// its MLP's (or experts') gradients (see [`mlp`], [`moe`]).
    pub backward_mlp: u64,
    /// Bytes per token a MoE layer's backward holds beyond what it saved as
    /// it enters the experts (see [`moe`]).
    pub backward_entry: u64,
    /// Bytes per token DeepSeek-V2's sorted loop holds beyond what is left
    /// saved at its last expert's backward (see [`sorted_back`]).
    pub backward_last: u64,
    /// Bytes per token transformers 4's expert loop holds at its last
    /// expert's down projection beyond what it saves, with gradients and
    /// under checkpointing's no-grad forward (see [`moe_loop`]); Llama 4's
    /// block at its shared expert (see [`moe_dense`]).
    pub loop_forward: u64,
    pub loop_forward_nograd: u64,
    /// Bytes per token more it saves when SDPA gets a mask (see
    /// [`attention`]).
    pub masked_kv: u64,
    /// Bytes per token per key position its attention holds beyond what it
    /// saves, at once, in forward and in backward (eager with sinks, the
    /// math kernel: see [`attention`], [`latent_attention`]).
    pub scores_fwd_extra: u64,
    pub scores_bwd_extra: u64,
    /// Bytes per element of the (S, S) mask the math kernel makes in
    /// forward (0: none).
    pub scores_mask: u64,
    /// A Gated DeltaNet's chunked rule: bytes per chunk of [`CHUNK`]
    /// positions of one sequence (its padded fp32 tensors and the state
    /// entering the chunk), bytes per sequence (the convolution's `K − 1`
    /// extra steps) and bytes once per layer (the chunk mask, the decay's
    /// `exp(A)`). See [`delta_net`].
    pub per_chunk: u64,
    pub per_sequence: u64,
    pub per_layer: u64,
    /// Bytes per position of the sequence, once for the whole batch (a
    /// factor broadcast over the sequences: Ministral 3's query scale,
    /// `Spec::query_scale`).
    pub per_position: u64,
    /// Of `per_chunk`, what a sequence of one chunk does not keep.
    pub one_chunk_less: u64,
    /// What every sequence keeps less than its chunks say (autocast: see
    /// [`chunked_rule`]).
    pub sequence_less: u64,
    /// Bytes per token at the layer's highest moment inside a LoRA
    /// adapter's forward (see [`Ledger::linear_of`]): what the layer has
    /// saved by then, the base output and the adapter's output with its
    /// scaled copy. 0 without LoRA.
    pub lora_forward: u64,
}

/// transformers' `torch_chunk_gated_delta_rule` pads each sequence to a
/// multiple of its `chunk_size` (64, the default every caller keeps).
pub const CHUNK: u128 = 64;

impl Saved {
    pub fn token_bytes(&self) -> u64 {
        self.per_token.iter().sum()
    }

    /// Bytes per sequence of `seq` tokens beyond the per-token ones (a
    /// Gated DeltaNet's chunks and convolution steps).
    pub fn sequence_bytes(&self, seq: u128) -> u128 {
        let chunks = seq.div_ceil(CHUNK);
        let less = if chunks == 1 { self.one_chunk_less } else { 0 };
        (chunks * u128::from(self.per_chunk) + u128::from(self.per_sequence))
            .saturating_sub(u128::from(less) + u128::from(self.sequence_less))
    }

    /// Bytes for `tokens` tokens of sequence length `seq`.
    pub fn bytes(&self, tokens: u128, seq: u128) -> u128 {
        let sequences = tokens.checked_div(seq).unwrap_or(0);
        tokens * u128::from(self.token_bytes())
            + tokens * seq * u128::from(self.per_token_key)
            + sequences * self.sequence_bytes(seq)
            + seq * u128::from(self.per_position)
            + u128::from(self.per_layer)
    }
}

/// One tensor of the ledger: 16 bytes, so a layer's ledger is cheap to
/// set up (the estimate runs on every keystroke).
#[derive(Clone, Copy, Debug)]
struct T {
    /// Elements per token.
    width: u64,
    /// Elements per token per key position (attention scores: heads).
    keyed: u32,
    /// Bytes per element.
    dt: u8,
    rg: bool,
    saved: bool,
    part: Part,
}

/// Room for the tensors one layer creates (at most 113 over every family,
/// precision and option: Gemma 4 26B-A4B's layer, its dense MLP and its
/// experts; see the test below). Each ledger fills the whole array once,
/// so it is no larger than that and the test's margin.
const MAX_TENSORS: usize = 128;
// `Ledger::held` is a bitmask over tensor ids.
const _: () = assert!(MAX_TENSORS <= 128);

/// The forward ledger of one layer (or the outer parts). A fixed array:
/// the estimate runs on every keystroke and allocates nothing here.
struct Ledger<'a> {
    c: &'a Ctx,
    ts: [T; MAX_TENSORS],
    len: usize,
    weight_copies: u64,
    weight_copies_uncached: u64,
    weight_copies_transient: u64,
    down_merge: u64,
    frozen_casts: u64,
    frozen_cast_max: u64,
    /// Tensors int8 layers hold as `ctx.A` (by id), and their bytes per
    /// token.
    held: u128,
    escaping: u64,
    /// DoRA's largest transient in this layer, bytes.
    dora_transient: u64,
    /// The backward's moments beyond the saved tensors, bytes per token.
    backward_mlp: u64,
    backward_entry: u64,
    backward_last: u64,
    loop_forward: u64,
    loop_forward_nograd: u64,
    masked_kv: u64,
    scores_fwd_extra: u64,
    scores_bwd_extra: u64,
    scores_mask: u64,
    per_chunk: u64,
    per_sequence: u64,
    per_layer: u64,
    per_position: u64,
    one_chunk_less: u64,
    sequence_less: u64,
    lora_forward: u64,
    /// Bytes per token saved so far (what [`Ledger::saved_bytes`] would
    /// sum from the start, kept as tensors are saved).
    saved_now: u64,
    /// Tensors alive at a linear layer's call beside what is saved (by
    /// id): the residual stream and the MLP's input around the MLP.
    alive: u128,
    /// Bytes per token alive at the next linear layer's call not yet in
    /// the ledger (a gated MLP's activation at up_proj's).
    pending: u64,
}

const EMPTY: T = T {
    width: 0,
    dt: 0,
    keyed: 0,
    rg: false,
    saved: false,
    part: Part::Residual,
};

type Id = usize;

/// What the ops need to know about the run.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub arch: Architecture,
    pub spec: &'static Spec,
    /// How the layers attend: the widths attention computes on.
    pub geometry: KvGeometry,
    pub mode: Mode,
    /// Base weights train (full fine-tuning); false under LoRA.
    pub full: bool,
    /// LoRA's adapters (none in full fine-tuning), and whether its dropout
    /// is on.
    pub lora: Option<Lora>,
    pub lora_dropout: bool,
    /// peft's DoRA on the adapted layers.
    pub dora: bool,
    /// The base's linear weights are quantized (bitsandbytes): no autocast
    /// copies of them; their dequantized copies are transient.
    pub quant: Quant,
    pub cuda: bool,
    pub attn: Attn,
    /// Half weights under autocast (`bf16_autocast`): CUDA's autocast runs
    /// LayerNorm in fp32.
    pub autocast_half: bool,
    /// What the transformers release does.
    pub stack: StackSpec,
    /// The head is bf16 over an fp32-prepared base (TRL's recast): no
    /// autocast copy of it.
    pub head_half: bool,
    /// Keys and values copied by the cache's concatenation and saved
    /// ([`crate::model::family::Spec::cache_copies`]).
    pub cache_copies: bool,
    /// Dropout on attention probabilities.
    pub p_attn: bool,
    /// Dropout after attention and MLP (GPT-2's resid_pdrop).
    pub p_resid: bool,
    /// Dropout on the embeddings (GPT-2's embd_pdrop).
    pub p_embd: bool,
    /// The routed experts are transformers 4's per-expert linears
    /// ([`moe_loop`]), named so.
    pub expert_linears: Option<ExpertLinears>,
    /// transformers 4 loops over stacked experts one at a time
    /// ([`crate::model::family::Legacy::experts_looped`]).
    pub experts_looped: bool,
    /// The layer reuses an earlier layer's keys and values (Gemma 4's
    /// last layers): no key or value projection of its own.
    pub kv_shared: bool,
    /// The layer's keys are its values (Gemma 4's global layers with
    /// `attention_k_eq_v`): no value projection.
    pub k_as_v: bool,
    /// The layer takes no RoPE (Llama 4's full layers: `Architecture::nope_at`).
    pub nope: bool,
}

impl Ctx {
    pub fn new(arch: &Architecture, t: &Training) -> Ctx {
        let spec = arch.spec();
        // The model's own dropout (GPT-2 0.1 everywhere; others none), or
        // the one given: on attention probabilities, and for families with
        // residual dropout (GPT-2, GPT-NeoX) on the residual branches and
        // embedding.
        let own = spec.dropout > 0;
        let (attn, other) = match t.dropout {
            Some(p) => (p.get() > 0, spec.resid_dropout && p.get() > 0),
            None => (own, own && spec.resid_dropout),
        };
        Ctx {
            arch: *arch,
            spec,
            geometry: KvGeometry::of(arch),
            mode: Mode::of_run(t),
            full: t.lora_r.is_none(),
            lora: t.lora(),
            lora_dropout: t.lora_dropout.get() > 0,
            dora: t.dora,
            quant: t.quant,
            cuda: t.cuda_like,
            attn: t.attn,
            autocast_half: t.dtype.autocast_half(),
            head_half: t.recasts_embeddings(),
            stack: t.stack(),
            cache_copies: spec.cache_copies
                && t.stack().cache_copies
                && t.use_cache
                && !Ctx::ckpt_of(t, spec).on(),
            p_attn: attn,
            p_resid: other,
            p_embd: other,
            expert_linears: spec
                .legacy
                .expert_linears
                .filter(|_| t.stack().experts_linear),
            experts_looped: spec.legacy.experts_looped && t.stack().experts_linear,
            kv_shared: false,
            k_as_v: false,
            nope: false,
        }
    }

    /// The context of Gemma 4's layer `l`, whose layers differ: a global
    /// layer's own head width and key/value heads (and keys as values), a
    /// layer reusing keys and values (and its MLP twice as wide); the
    /// others as the model. Source: transformers 5.23
    /// `Gemma4TextAttention.__init__`, `Gemma4TextMLP.__init__`.
    pub fn at_layer(&self, l: u32) -> Ctx {
        let a = self.arch;
        if self.spec.nope_full {
            return Ctx {
                nope: a.nope_at(l),
                ..*self
            };
        }
        if !self.spec.varies_by_layer() {
            return *self;
        }
        let mut arch = a;
        let mut k_as_v = false;
        if a.global_at(l) {
            let g = a.global_heads();
            arch.head_dim = g.head_dim;
            arch.kv_heads = g.kv_heads;
            k_as_v = !g.v_proj;
        }
        arch.ffn = u32::try_from(a.ffn_at(l)).unwrap_or(u32::MAX);
        Ctx {
            arch,
            geometry: KvGeometry::of(&arch),
            kv_shared: a.kv_shared_at(l),
            k_as_v,
            ..*self
        }
    }

    /// The routed experts run through DeepSeek-V2's sorted loop
    /// (transformers 4.57, [`Dispatch::Sorted`]).
    pub fn sorted_loop(&self) -> bool {
        self.expert_linears
            .is_some_and(|n| n.dispatch == Dispatch::Sorted)
    }

    /// Every token runs through every expert (Llama 4:
    /// [`crate::model::family::Moe::dense_dispatch`], [`moe_dense`]).
    pub fn dense_dispatch(&self) -> bool {
        self.spec.moe.is_some_and(|m| m.dense_dispatch)
    }

    /// The checkpointing that runs: `true` is the release's default
    /// (reentrant in 4.x), and a family whose layers ignore it in this
    /// release runs without.
    pub fn ckpt_of(t: &Training, spec: &Spec) -> Ckpt {
        if spec.legacy.ckpt_ignored && t.stack().ckpt_ignored {
            Ckpt::Off
        } else {
            t.ckpt()
        }
    }

    /// Whether LoRA adapts module `m` (as this family has it on this
    /// release: on transformers 4, with no stacked experts for peft to
    /// convert, as its name and projections say).
    fn adapts(&self, m: M) -> bool {
        let module = if self.stack.experts_linear {
            self.arch.family.module_v4(m)
        } else {
            self.arch.family.module(m)
        };
        self.lora.is_some_and(|l| l.adapts(module))
    }
}

/// One linear layer's call, as the ledger counts it.
#[derive(Clone, Copy, Debug)]
struct Lin {
    n_in: u64,
    n_out: u64,
    /// Bias elements (0: none).
    bias: u64,
    /// peft's LoRA adapts it.
    lora: bool,
    /// bitsandbytes holds its weight.
    quantized: bool,
    /// Rows per token: `k` for routed experts called on the tokens routed
    /// to each (each token reaches `k` of them), 1 otherwise.
    rows: u64,
    /// Modules the call stands for, each with its own weight and adapters
    /// (every expert of a per-expert loop), 1 otherwise.
    modules: u64,
}

impl Lin {
    const fn new(n_in: u64, n_out: u64, bias: u64) -> Lin {
        Lin {
            n_in,
            n_out,
            bias,
            lora: false,
            quantized: false,
            rows: 1,
            modules: 1,
        }
    }
}

impl<'a> Ledger<'a> {
    fn new(c: &'a Ctx) -> Self {
        Ledger {
            c,
            ts: [EMPTY; MAX_TENSORS],
            len: 0,
            weight_copies: 0,
            weight_copies_uncached: 0,
            weight_copies_transient: 0,
            down_merge: 0,
            frozen_casts: 0,
            frozen_cast_max: 0,
            held: 0,
            escaping: 0,
            dora_transient: 0,
            backward_mlp: 0,
            backward_entry: 0,
            backward_last: 0,
            loop_forward: 0,
            loop_forward_nograd: 0,
            masked_kv: 0,
            scores_fwd_extra: 0,
            scores_bwd_extra: 0,
            scores_mask: 0,
            per_chunk: 0,
            per_sequence: 0,
            per_layer: 0,
            per_position: 0,
            one_chunk_less: 0,
            sequence_less: 0,
            lora_forward: 0,
            saved_now: 0,
            alive: 0,
            pending: 0,
        }
    }

    fn push(&mut self, t: T) -> Id {
        // The layer functions create a fixed, small number of tensors (tested
        // for every family and option); a full ledger reuses its last slot
        // rather than panic.
        let id = self.len.min(MAX_TENSORS - 1);
        self.ts[id] = t;
        self.len = (self.len + 1).min(MAX_TENSORS);
        id
    }

    fn new_t(&mut self, width: u64, dt: u64, rg: bool, part: Part) -> Id {
        self.push(T {
            width,
            dt: dt as u8,
            keyed: 0,
            rg,
            saved: false,
            part,
        })
    }

    /// Attention scores: `heads` elements per token per key position.
    fn keyed(&mut self, heads: u64, dt: u64, rg: bool) -> Id {
        self.push(T {
            width: 0,
            dt: dt as u8,
            keyed: u32::try_from(heads).unwrap_or(u32::MAX),
            rg,
            saved: false,
            part: Part::Scores,
        })
    }

    fn save(&mut self, id: Id) {
        let t = &mut self.ts[id];
        if !t.saved {
            self.saved_now += t.width * u64::from(t.dt);
        }
        t.saved = true;
    }

    fn rg(&self, id: Id) -> bool {
        self.ts[id].rg
    }

    fn dt(&self, id: Id) -> u64 {
        u64::from(self.ts[id].dt)
    }

    /// Bytes per token of the tensors alive and not saved.
    fn alive_bytes(&self) -> u64 {
        let (mut bits, mut sum) = (self.alive, 0);
        while bits != 0 {
            let t = &self.ts[bits.trailing_zeros() as usize];
            if !t.saved {
                sum += t.width * u64::from(t.dt);
            }
            bits &= bits - 1;
        }
        sum
    }

    /// Bytes per token saved by the tensors made since `from` (an earlier
    /// `len`).
    fn saved_bytes(&self, from: usize) -> u64 {
        self.ts[from.min(self.len)..self.len]
            .iter()
            .filter(|t| t.saved)
            .map(|t| t.width * u64::from(t.dt))
            .sum()
    }

    fn result(&self) -> Saved {
        let mut s = Saved {
            weight_copies: self.weight_copies,
            weight_copies_uncached: self.weight_copies_uncached,
            weight_copies_transient: self.weight_copies_transient,
            down_merge: self.down_merge,
            frozen_casts: self.frozen_casts,
            frozen_cast_max: self.frozen_cast_max,
            escaping: self.escaping,
            dora_transient: self.dora_transient,
            backward_mlp: self.backward_mlp,
            backward_entry: self.backward_entry,
            backward_last: self.backward_last,
            loop_forward: self.loop_forward,
            loop_forward_nograd: self.loop_forward_nograd,
            masked_kv: self.masked_kv,
            scores_fwd_extra: self.scores_fwd_extra,
            scores_bwd_extra: self.scores_bwd_extra,
            scores_mask: self.scores_mask,
            per_chunk: self.per_chunk,
            per_sequence: self.per_sequence,
            per_layer: self.per_layer,
            per_position: self.per_position,
            one_chunk_less: self.one_chunk_less,
            sequence_less: self.sequence_less,
            lora_forward: self.lora_forward,
            ..Saved::default()
        };
        for t in self.ts[..self.len].iter().filter(|t| t.saved) {
            s.per_token[t.part.index()] += t.width * u64::from(t.dt);
            s.per_token_key += u64::from(t.keyed) * u64::from(t.dt);
        }
        s
    }

    /// `F.linear` / `addmm` of a module computing `proj` (with peft's LoRA
    /// on top when the targets include it).
    ///
    /// A trainable weight needs the input for its gradient; the input's
    /// gradient needs the weight, which under autocast is a saved bf16 copy
    /// (autocast caches copies of leaf weights that require grad until it
    /// exits; a frozen weight's copy lives only while it is saved; a bias
    /// copy is never saved). LoRA adapters are fp32 (peft's
    /// `autocast_adapter_dtype`): peft casts the input to fp32 for `lora_A`
    /// (bf16 again under autocast), which saves it with the rank-r
    /// intermediate. With `lora_dropout`, the dropped copy is what `lora_A`
    /// saves, and dropout keeps a mask when its input needs a gradient.
    ///
    /// Source: peft 0.21 `tuners/lora/layer.py` `Linear.forward`; measured
    /// rows in `tests/fixtures/lora_rows.jsonl` (targets, dropout, amp with
    /// checkpointing).
    fn linear(&mut self, x: Id, n_in: u64, n_out: u64, bias: u64, m: M) -> Id {
        let lin = Lin {
            lora: self.c.adapts(m),
            quantized: self.c.quant != Quant::None,
            ..Lin::new(n_in, n_out, bias)
        };
        self.linear_of(x, lin)
    }

    /// A linear layer LoRA never adapts here (a router's logits, whose
    /// adapter is the experts path's; the output head).
    fn linear_plain(&mut self, x: Id, n_in: u64, n_out: u64, bias: u64) -> Id {
        self.linear_of(x, Lin::new(n_in, n_out, bias))
    }

    /// Frozen weights' bf16 copies under autocast, `each` bytes a matmul:
    /// saved for backward (autocast caches only leaf tensors that require
    /// grad), or, in a checkpointed forward, freed after their matmul.
    fn frozen_cast(&mut self, bytes: u64, each: u64) {
        self.weight_copies_uncached += bytes;
        self.frozen_casts += bytes;
        self.frozen_cast_max = self.frozen_cast_max.max(each);
    }

    fn linear_of(&mut self, x: Id, lin: Lin) -> Id {
        let c = self.c;
        let w_tr = c.full;
        let x_rg = self.rg(x);
        let out_rg = x_rg || w_tr;
        // Per token: k rows for the routed experts. Weight-sized: one per
        // module the call stands for.
        let (n_in, n_out) = (lin.n_in * lin.rows, lin.n_out * lin.rows);
        let weight = lin.modules * lin.n_in * lin.n_out;
        let out = if lin.quantized {
            // A bitsandbytes layer casts its input to the compute dtype,
            // multiplies by the dequantized weight and returns the input's
            // dtype (fp32 under autocast once prepared for k-bit training);
            // it keeps nothing for backward but the packed weight.
            // Source: bitsandbytes 0.50 `Linear4bit.forward`,
            // `MatMul4Bit` (`ctx.tensors = (None, B)`).
            let dt = if c.mode == Mode::Amp {
                self.dt(x)
            } else {
                c.mode.act()
            };
            if c.quant == Quant::Int8 && x_rg {
                // LLM.int8 keeps its input as `ctx.A`, an attribute that
                // non-reentrant checkpointing cannot drop: each distinct
                // input once. Source: bitsandbytes 0.50
                // `autograd/_functions.py` (MatMul8bitLt, MatMul8bitFp);
                // measured in quant_rows.jsonl.
                self.save(x);
                if self.held & (1 << x) == 0 {
                    self.held |= 1 << x;
                    self.escaping += self.ts[x].width * self.dt(x);
                }
            }
            self.new_t(n_out, dt, out_rg || lin.lora, Part::Attention)
        } else if c.mode == Mode::Amp {
            let xc = if self.dt(x) == 2 {
                x
            } else {
                self.new_t(n_in, 2, x_rg, Part::Casts)
            };
            if w_tr {
                self.save(xc);
            }
            if x_rg && w_tr {
                self.weight_copies += 2 * weight;
            } else if x_rg {
                self.frozen_cast(2 * weight, 2 * lin.n_in * lin.n_out);
            } else if w_tr {
                self.weight_copies_transient += 2 * weight;
            }
            if w_tr {
                self.weight_copies_transient += 2 * lin.modules * lin.bias;
            }
            self.new_t(n_out, 2, out_rg || lin.lora, Part::Attention)
        } else {
            // Half weights under autocast: an fp32 input (CUDA autocast's
            // LayerNorm output) is cast to bf16 for the matmul.
            let xs = if c.autocast_half && self.dt(x) == 4 {
                self.new_t(n_in, 2, x_rg, Part::Casts)
            } else {
                x
            };
            if w_tr {
                self.save(xs);
            }
            self.new_t(n_out, c.mode.act(), out_rg || lin.lora, Part::Attention)
        };
        if lin.lora {
            let r = c.lora.map_or(0, |l| l.r);
            let (r_rows, adapters) = (r * lin.rows, lin.modules * r);
            if c.lora_dropout && x_rg {
                let mask = self.new_t(n_in, if c.cuda { 1 } else { 4 }, true, Part::Dropout);
                self.save(mask);
            }
            if c.mode == Mode::Amp || c.autocast_half {
                // Autocast casts the (dropped) input to bf16 for lora_A,
                // and the fp32 adapters to bf16, cached while it lasts
                // (leaf tensors that require grad; in checkpointing's
                // no-grad forward too). Measured: `weight_cast_fwd`, 2
                // bytes per adapter parameter, in the bf16 + autocast rows
                // of t4_rows.jsonl.
                let xa = self.new_t(n_in, 2, x_rg, Part::Lora);
                self.save(xa);
                if x_rg {
                    self.weight_copies += 2 * adapters * lin.n_in;
                } else {
                    self.weight_copies_transient += 2 * adapters * lin.n_in;
                }
                self.weight_copies += 2 * adapters * lin.n_out;
                let a = self.new_t(r_rows, 2, true, Part::Lora);
                self.save(a);
            } else {
                if self.dt(x) == 4 && !c.lora_dropout {
                    self.save(x);
                } else {
                    // The fp32 cast (or the dropped copy of it).
                    let xa = self.new_t(n_in, 4, x_rg, Part::Lora);
                    self.save(xa);
                }
                let a = self.new_t(r_rows, 4, true, Part::Lora);
                self.save(a);
            }
            // `result + lora_B(lora_A(x)) * scaling`: at the product,
            // what the layer saved so far, the base output (saved, if at
            // all, by what reads it next) and lora_B's output with its
            // scaled copy, in the adapter's dtype. Measured: the backward
            // peak of shrunk Qwen3.5 with checkpointing, at up_proj's
            // adapter in the recomputed layer (`hybrid_train_rows.jsonl`,
            // ckpt lora8 rows; scripts/measure/hybrid/NOTES.md).
            let adapter = if c.mode == Mode::Amp || c.autocast_half {
                2
            } else {
                4
            };
            let at = self.saved_now
                + self.alive_bytes()
                + self.pending
                + self.ts[out].width * self.dt(out)
                + 2 * adapter * n_out;
            self.lora_forward = self.lora_forward.max(at);
            if c.dora {
                return self.dora(x_rg, out, lin, r);
            }
        }
        out
    }

    /// peft's DoRA on top of a LoRA layer (`use_dora=True`): the magnitude
    /// scales the base output and the adapter's by `m / ‖W + s·BA‖` per
    /// output row.
    ///
    /// Saved: lora_B's fp32 output, the base result (with dropout, peft
    /// computes it again as `F.linear(dropout(x), W)` in fp32, which also
    /// keeps an fp32 copy of the weight), and three fp32 row vectors (the
    /// norm, `m / norm`, `m / norm − 1`), constants of the layer. Transient,
    /// per layer at its largest: an identity of the input's width, the
    /// `K × r` and `K × N` products that make `BA`, the fp32 weight, its sum
    /// with `s·BA` and the product (`4K² + 4Kr + 16NK` bytes).
    ///
    /// Source: peft 0.21 `tuners/lora/dora.py` (`DoraLinearLayer.forward`,
    /// `get_weight_norm`), `variants.py`; measured on llama-20m
    /// (quant_rows.jsonl, A-dora-bf16*).
    /// Returns the layer's output: base plus DoRA's, a new tensor (the base
    /// output it saves is another).
    fn dora(&mut self, x_rg: bool, out: Id, lin: Lin, r: u64) -> Id {
        let c = self.c;
        let (n_in, n_out, rows, modules) = (lin.n_in, lin.n_out, lin.rows, lin.modules);
        let b = self.new_t(n_out * rows, 4, true, Part::Lora);
        self.save(b);
        if c.lora_dropout {
            let base = self.new_t(n_out * rows, 4, true, Part::Lora);
            self.save(base);
            self.weight_copies_uncached = self
                .weight_copies_uncached
                .saturating_add((4 * n_in).saturating_mul(n_out).saturating_mul(modules));
        } else if x_rg {
            self.save(out);
        }
        self.weight_copies_uncached += if x_rg { 12 } else { 8 } * n_out * modules;
        // Weight-sized: the codec's widths keep a product of two of them
        // within u64 only just, so these saturate (an estimate that large
        // is refused as too large when it is converted to bytes).
        let transient = (4 * n_in)
            .saturating_mul(n_in)
            .saturating_add((4 * n_in).saturating_mul(r))
            .saturating_add((16 * n_in).saturating_mul(n_out));
        self.dora_transient = self.dora_transient.max(transient);
        let (dt, rg) = (self.dt(out), self.rg(out));
        self.new_t(n_out * rows, dt, rg, Part::Lora)
    }

    /// The family's norm over `width` elements of `x`, normalised in
    /// `groups` rows per token (1, or the heads of a q/k norm).
    ///
    /// RMSNorms: `x.float()` (a copy of a half input), `pow(2).mean`,
    /// `rsqrt` (fp32, one per row), then Llama's `weight * x.to(dtype)`,
    /// OLMo 2's `(weight * x).to(dtype)` or Gemma's `x * (1 + w.float())`
    /// then `.type_as(x)`. What is saved: the fp32 input and the rsqrt when
    /// the input needs a gradient; the normalised input (in the dtype the
    /// weight multiplies) when the weight trains; Gemma's `1 + w` (fp32, a
    /// per-layer constant). `nn.LayerNorm` (GPT-2): the native kernel saves
    /// the input and the fp32 mean and rstd (CUDA's accumulate type).
    ///
    /// Source: each family's `*RMSNorm.forward` in transformers 5.23; the
    /// per-layer traces of the measured rows.
    fn norm(&mut self, x: Id, width: u64, groups: u64) -> Id {
        let c = self.c;
        let x_rg = self.rg(x);
        let w_tr = c.full;
        let out_rg = x_rg || w_tr;
        let in_dt = self.dt(x);
        let param = c.mode.param();
        match c.spec.norm {
            Norm::LayerNorm => {
                let rg = x_rg || w_tr;
                // CUDA's autocast runs `layer_norm` in fp32 (an fp32 policy
                // kernel; CPU autocast has none): a half input is copied to
                // fp32, which is what is saved, with fp32 copies of the
                // weight and bias, and the output is fp32. Source: torch
                // `aten::layer_norm` dispatch (AutocastCUDA); measured on
                // starcoderbase-1b with the CUDA policy emulated
                // (t4_rows.jsonl): 2·B·S·h + 8·h bytes more per LayerNorm.
                let fp32 = c.cuda && c.autocast_half && in_dt == 2;
                if rg {
                    let kept = if fp32 {
                        self.weight_copies_uncached += 8 * width;
                        self.new_t(width, 4, x_rg, Part::Norm)
                    } else {
                        x
                    };
                    self.save(kept);
                    let stats = self.new_t(2 * groups, 4, true, Part::Norm);
                    self.save(stats);
                }
                let dt = if c.mode == Mode::Half && !fp32 { 2 } else { 4 };
                self.new_t(width, dt, rg, Part::Norm)
            }
            // Nemotron-H's stands with OLMo 2's unmeasured: training
            // refuses its Mamba-2 layers before a step is estimated.
            Norm::Rms
            | Norm::RmsCastAfter
            | Norm::RmsPlusOne
            | Norm::RmsScaled
            | Norm::RmsWeightFp32 => {
                let xf = if in_dt == 4 {
                    x
                } else {
                    self.new_t(width, 4, x_rg, Part::Norm)
                };
                if x_rg {
                    self.save(xf);
                    let r = self.new_t(groups, 4, true, Part::Norm);
                    self.save(r);
                    if c.spec.norm == Norm::RmsScaled {
                        // `pow(mean + eps, -0.5)` keeps its base beside
                        // the result the product keeps.
                        let base = self.new_t(groups, 4, true, Part::Norm);
                        self.save(base);
                    }
                }
                let (hs_dt, out_dt) = match c.spec.norm {
                    // hs.to(input dtype), times the weight.
                    Norm::Rms => (in_dt, in_dt.max(param)),
                    // fp32 hs times the weight, cast to the input dtype.
                    Norm::RmsCastAfter
                    | Norm::RmsPlusOne
                    | Norm::RmsScaled
                    | Norm::RmsWeightFp32 => (4, in_dt),
                    Norm::LayerNorm => (4, 4),
                };
                let hs = self.new_t(width, hs_dt, x_rg, Part::Norm);
                if w_tr {
                    self.save(hs);
                }
                if matches!(c.spec.norm, Norm::RmsPlusOne | Norm::RmsScaled) && x_rg {
                    // (1 + weight.float()), Gemma 4's weight.float(): saved
                    // for the input's gradient.
                    self.weight_copies_uncached += 4 * (width / groups.max(1));
                }
                self.new_t(width, out_dt, out_rg, Part::Norm)
            }
        }
    }

    /// Gemma 4's value norm, `Gemma4RMSNorm(with_scale=False)`: the fp32
    /// copy it squares and multiplies, the mean's `pow(-0.5)` base and
    /// result, the product cast back.
    fn norm_unweighted(&mut self, x: Id, width: u64, groups: u64) -> Id {
        let (x_rg, in_dt) = (self.rg(x), self.dt(x));
        let xf = if in_dt == 4 {
            x
        } else {
            self.new_t(width, 4, x_rg, Part::Norm)
        };
        if x_rg {
            self.save(xf);
            for _ in 0..2 {
                let r = self.new_t(groups, 4, true, Part::Norm);
                self.save(r);
            }
        }
        self.new_t(width, in_dt, x_rg, Part::Norm)
    }

    /// Dropout on attention probabilities (eager or math attention): the
    /// mask (1 byte on CUDA, the probabilities' dtype on CPU) and the
    /// dropped probabilities, saved by the matmul with v.
    fn probs_dropout(&mut self, heads: u64, dt: u64, rg: bool) {
        if self.c.p_attn {
            let m = self.keyed(heads, if self.c.cuda { 1 } else { dt }, rg);
            let d = self.keyed(heads, dt, rg);
            self.save(m);
            self.save(d);
        }
    }

    /// `nn.Dropout` with p > 0: CUDA's fused kernel saves a 1-byte mask; the
    /// CPU kernel saves a mask of the input's dtype.
    fn dropout(&mut self, x: Id, n: u64, on: bool) -> Id {
        if !on {
            return x;
        }
        let (rg, dt) = (self.rg(x), self.dt(x));
        if rg {
            let m = self.new_t(n, if self.c.cuda { 1 } else { dt }, true, Part::Dropout);
            self.save(m);
        }
        self.new_t(n, dt, rg, Part::Residual)
    }
}

/// What mixes a layer's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mixer {
    /// Attention (full, sliding, latent), as the family builds it.
    Attention,
    /// The family's recurrent mixer ([`delta_net`], [`short_conv`]).
    Recurrent,
}

/// One decoder layer's saved tensors, given its kind (dense or MoE), its
/// token mixer and whether its input needs a gradient (not for layer 0
/// when the embedding is frozen, under LoRA).
pub fn layer(c: &Ctx, kind: LayerKind, mixer: Mixer, input_rg: bool) -> Saved {
    let mut l = Ledger::new(c);
    let h = u64::from(c.arch.hidden);
    let x = l.new_t(h, c.mode.residual(), input_rg, Part::Residual);
    match c.spec.layout {
        Layout::Gpt2 => gpt2_layer(&mut l, x),
        Layout::Llama => decoder_layer(&mut l, x, kind, mixer),
        Layout::NeoX => neox_layer(&mut l, x),
    }
    l.result()
}

/// The bytes attention keeps q, k and v in: the compute dtype (autocast
/// casts them to bf16 for SDPA or the eager matmuls).
fn attn_dt(c: &Ctx) -> u64 {
    c.mode.act()
}

/// Attention after the projections (and RoPE): SDPA or eager, with the
/// family's softcapping or sinks. Returns the tensor `o_proj` reads.
///
/// SDPA (flash / memory-efficient, with or without dropout on CUDA) saves
/// q, k, v, its output and an fp32 logsumexp per head (transformers passes
/// `enable_gqa`, so k and v are not repeated). Eager repeats k and v to all
/// heads and keeps the fp32 softmax and its cast to the compute dtype,
/// plus dropout's mask and output when p > 0; Gemma 2's softcapping adds
/// the `tanh` of the scores; gpt-oss softmaxes the scores with one sink
/// column in the scores' dtype (fp32 under autocast, where the fp32 sinks
/// promote it) and keeps the row max's indices.
fn attention(l: &mut Ledger, q: Id, k: Id, v: Id, q_contiguous: bool) -> Id {
    let c = l.c;
    let g = c.geometry;
    let (qd, nh) = (g.q_width(), g.heads());
    let rg = l.rg(q);
    // Under autocast, fp32 q, k and v (a quantized base's layers return
    // their fp32 input's dtype) are cast to bf16 for the kernel, which
    // keeps the casts.
    let (q, k, v) = if c.mode == Mode::Amp && l.dt(q) == 4 {
        let (qd, kd) = (g.q_width(), g.k_width());
        (
            l.new_t(qd, 2, rg, Part::Casts),
            l.new_t(kd, 2, rg, Part::Casts),
            l.new_t(kd, 2, rg, Part::Casts),
        )
    } else {
        (q, k, v)
    };
    let ab = l.dt(q);
    match c.attn {
        Attn::Sdpa | Attn::FlashAttention2 => {
            // transformers 4.48's SDPA repeats grouped keys and values to
            // every head (`repeat_kv`: copies) and makes the query
            // contiguous; flash-attn and later SDPA keep them as they are.
            // Source: 4.48.1 `integrations/sdpa_attention.py`; measured:
            // SDPA − flash-attn = 4·B·S·(heads − kv heads)·head_dim bytes
            // per layer (t4_rows.jsonl, Mistral-7B).
            let (k, v) = if c.attn == Attn::Sdpa && c.stack.sdpa_repeats_kv && l.ts[k].width < qd {
                (
                    l.new_t(qd, ab, rg, Part::Attention),
                    l.new_t(qd, ab, rg, Part::Attention),
                )
            } else {
                (k, v)
            };
            let o = l.new_t(qd, ab, rg, Part::Attention);
            let lse = l.new_t(nh, 4, rg, Part::Attention);
            if rg {
                for id in [q, k, v, o, lse] {
                    l.save(id);
                }
            }
            // Transformers 5's SDPA passes `enable_gqa` only without a mask
            // (`use_gqa_in_sdpa`): with one (a reached sliding window)
            // `repeat_kv` copies keys and values to every head and SDPA saves
            // the copies; one key/value head's repeat is a view, which only
            // autocast's cast of the key materialises. Measured: long_rows
            // (Mistral 7B: 2 · (32 − 8) · 128 · 2 bytes per token and layer;
            // Gemma 3 1B under autocast: (4 − 1) · 256 · 2;
            // `scripts/measure/long/NOTES.md` §4.2).
            if c.attn == Attn::Sdpa && !c.stack.sdpa_repeats_kv && rg {
                let kd = l.ts[k].width;
                // Keys and values another layer saved (Gemma 4's layers
                // reusing them, of no bytes here): the copies are all new.
                let own = if l.ts[k].dt == 0 { 0 } else { kd };
                l.masked_kv = match (kd < qd, kd * nh == qd) {
                    (false, _) => 0,
                    (true, true) if c.mode == Mode::Amp => (qd - own) * 2,
                    (true, true) => 0,
                    (true, false) => 2 * (qd - own) * ab,
                };
            }
            if q_contiguous {
                o
            } else {
                // A query sliced out of a fused projection: the output's
                // layout needs a contiguous copy for o_proj.
                l.new_t(qd, ab, rg, Part::Attention)
            }
        }
        Attn::Eager => {
            let kr = l.new_t(qd, ab, rg, Part::Attention);
            let vr = l.new_t(qd, ab, rg, Part::Attention);
            if rg {
                for id in [q, kr, vr] {
                    l.save(id);
                }
                if c.spec.sinks {
                    // softmax over scores and the sink, in the scores' dtype
                    // (promoted to fp32 by the fp32 sinks under autocast).
                    let pd = if c.mode == Mode::Amp { 4 } else { ab };
                    let p = l.keyed(nh, pd, true);
                    let sink = l.new_t(nh, pd, true, Part::Scores);
                    let max_idx = l.new_t(nh, 8, true, Part::Scores);
                    for id in [p, sink, max_idx] {
                        l.save(id);
                    }
                    if pd != ab {
                        let p16 = l.keyed(nh, ab, true);
                        l.save(p16);
                    }
                    // Forward holds the masked scores and their
                    // concatenation with the sink minus its max beside the
                    // probabilities (saved above); backward holds the
                    // softmax's gradient and the max's (`new_zeros`,
                    // `scatter`) together. Source: transformers 5.23
                    // `models/gpt_oss/modeling_gpt_oss.py`
                    // (`eager_attention_forward`); traced at 16k tokens
                    // (`scripts/measure/long/NOTES.md` §9).
                    l.scores_fwd_extra = 2 * pd * nh;
                    l.scores_bwd_extra = 2 * pd * nh;
                } else {
                    if c.spec.attn_softcap {
                        let t = l.keyed(nh, ab, true);
                        l.save(t);
                    }
                    // Llama 4 softmaxes in the scores' dtype; autocast
                    // still runs softmax in fp32.
                    if !c.spec.softmax_in_dtype || c.mode == Mode::Amp || ab == 4 {
                        let p32 = l.keyed(nh, 4, true);
                        l.save(p32);
                    }
                    if ab == 2 {
                        let p = l.keyed(nh, 2, true);
                        l.save(p);
                    }
                }
                l.probs_dropout(nh, ab, rg);
            }
            // transpose(1, 2).contiguous(): saved by o_proj.
            l.new_t(qd, ab, rg, Part::Attention)
        }
    }
}

/// Multi-head latent attention (DeepSeek): q (through `q_a_proj`, its norm
/// and `q_b_proj` when `q_lora_rank` is set), the compressed kv and a
/// shared rotary key from `kv_a_proj_with_mqa`, its norm, `kv_b_proj` to
/// every head's key and value, keys assembled in a new tensor.
///
/// With CUDA's kernels SDPA's memory-efficient path takes the unequal
/// head widths (q/k `head_dim`, v `v_head_dim`) and saves q, k, v, the
/// output and the logsumexp. PyTorch's CPU flash kernel does not: the math
/// path runs instead, upcasting to fp32 and keeping q and kᵀ (scaled), v
/// and the probabilities (`cuda_like = false`, as the measured rows ran).
/// Returns the tensor `o_proj` reads.
fn latent_attention(l: &mut Ledger, n1: Id, m: Latent) -> Id {
    let c = l.c;
    let h = u64::from(c.arch.hidden);
    let (nh, ql, kvl, rope) = (m.heads, m.q_lora_rank, m.kv_lora_rank, m.rope_dim);
    let (qk, vd) = (m.qk_head_dim, m.v_head_dim);
    let q = if ql > 0 {
        let qa = l.linear(n1, h, ql, 0, M::QAProj);
        let qn = l.norm(qa, ql, 1);
        l.linear(qn, ql, nh * qk, 0, M::QBProj)
    } else {
        l.linear(n1, h, nh * qk, 0, M::QProj)
    };
    let ckv = l.linear(n1, h, kvl + rope, 0, M::KvAProjWithMqa);
    // The norm reads the compressed slice (a view of ckv).
    let kvn = l.norm(ckv, kvl, 1);
    let kv = l.linear(kvn, kvl, nh * (qk - rope + vd), 0, M::KvBProj);
    let rg = l.rg(q) || l.rg(kv);
    let ab = attn_dt(c);
    if c.spec.query_scale && rg {
        // Mistral 4's temperature on the assembled query: the product
        // saves the (1, 1, S, 1) factor, and is the query attention keeps
        // (`Mistral4Attention.forward`).
        l.per_position += ab;
    }
    if matches!(c.attn, Attn::Sdpa | Attn::FlashAttention2) && c.cuda {
        // q and k assembled (cat, new_empty + copy), v a view of kv.
        let qs = l.new_t(nh * qk, ab, rg, Part::Attention);
        let ks = l.new_t(nh * qk, ab, rg, Part::Attention);
        let o = l.new_t(nh * vd, ab, rg, Part::Attention);
        let lse = l.new_t(nh, 4, rg, Part::Attention);
        if rg {
            for id in [qs, ks, kv, o, lse] {
                l.save(id);
            }
        }
        // transpose + reshape of (b, h, s, d): a copy for o_proj.
        return l.new_t(nh * vd, ab, rg, Part::Attention);
    }
    if rg {
        let (sd, p_dt) = match c.attn {
            // The math path upcasts to fp32 (flash-attn has no CPU kernel:
            // the codec refuses it without CUDA).
            Attn::Sdpa | Attn::FlashAttention2 => (4, 4),
            Attn::Eager => (ab, 4),
        };
        let qs = l.new_t(nh * qk, sd, true, Part::Attention);
        let ks = l.new_t(nh * qk, sd, true, Part::Attention);
        let vs = l.new_t(nh * vd, sd, true, Part::Attention);
        let p = l.keyed(nh, p_dt, true);
        for id in [qs, ks, vs, p] {
            l.save(id);
        }
        if c.attn == Attn::Eager && ab == 2 {
            let p16 = l.keyed(nh, 2, true);
            l.save(p16);
        }
        if c.attn != Attn::Eager {
            // The math kernel: forward holds the fp32 scores (`bmm`) and
            // them plus the mask at once, with the mask made fp32 (`where`,
            // one (S, S)); backward the softmax's output
            // again (`_safe_softmax`), the probabilities' gradient (`bmm`)
            // and the softmax's (`_softmax_backward_data`) where one is
            // saved. Source: torch `_scaled_dot_product_attention_math`;
            // traced on DeepSeek-V2-Lite at 16k tokens
            // (`scripts/measure/long/NOTES.md` §9).
            l.scores_fwd_extra = 4 * nh;
            l.scores_bwd_extra = 2 * 4 * nh;
            l.scores_mask = 4;
        }
        l.probs_dropout(nh, ab, rg);
    }
    l.new_t(nh * vd, ab, rg, Part::Attention)
}

/// Attention over heads (multi-head, grouped-query, multi-query): the q,
/// k and v projections (or one fused projection), the family's q/k norms,
/// RoPE, attention and `o_proj`.
fn head_attention(l: &mut Ledger, n1: Id, heads: u64, kv_heads: u64) -> Id {
    let c = l.c;
    let spec = c.spec;
    let h = u64::from(c.arch.hidden);
    let (qd, kvd) = (c.geometry.q_width(), c.geometry.k_width());
    if spec.v_norm {
        return value_normed_attention(l, n1, heads, kv_heads);
    }
    let bias = spec.attn_bias != AttnBias::None;
    let b = |n: u64| if bias { n } else { 0 };
    let (qkv_module, o_module) = match spec.qkv {
        Qkv::Fused => spec.layout.fused_attention(),
        Qkv::Separate | Qkv::Latent => (M::QkvProj, M::OProj),
    };
    let (q, k, v) = match spec.qkv {
        Qkv::Fused => {
            // q, k, v are slices of one output; v's view keeps the whole
            // storage alive.
            let qkv = l.linear(n1, h, qd + 2 * kvd, b(qd + 2 * kvd), qkv_module);
            (qkv, qkv, qkv)
        }
        Qkv::Separate | Qkv::Latent => {
            // Gated attention's q_proj makes the gate beside the query.
            let q_out = if spec.attn_gate { 2 * qd } else { qd };
            let q = l.linear(n1, h, q_out, b(q_out), M::QProj);
            let k = l.linear(n1, h, kvd, b(kvd), M::KProj);
            let v = l.linear(n1, h, kvd, b(kvd), M::VProj);
            (q, k, v)
        }
    };
    let (q, k) = match spec.qk_norm {
        // Llama 4's comes after RoPE (below).
        QkNorm::None | QkNorm::L2 => (q, k),
        QkNorm::PerHead => (l.norm(q, qd, heads), l.norm(k, kvd, kv_heads)),
        QkNorm::Whole => (l.norm(q, qd, 1), l.norm(k, kvd, 1)),
    };
    // RoPE: q * cos + rotate_half(q) * sin saves only cos and sin; the
    // rotated q and k are new tensors (Llama 4's complex product the same:
    // `apply_rotary_emb` saves only `freqs_cis`).
    let ab = attn_dt(c);
    let qe = l.new_t(qd, ab, l.rg(q), Part::Attention);
    let ke = l.new_t(kvd, ab, l.rg(k), Part::Attention);
    let (qe, ke) = if spec.qk_norm == QkNorm::L2 && !c.nope {
        (l2_norm(l, qe, qd, heads), l2_norm(l, ke, kvd, kv_heads))
    } else {
        (qe, ke)
    };
    // The query's temperature: the product saves the (1, 1, S, 1) factor
    // (the rotated query, not needed by it, goes). Llama 4 scales only its
    // layers without RoPE, by fp32 scales (`positions.float()`, the
    // product in fp32, cast back: transformers 5.23
    // `Llama4TextAttention.forward`; measured,
    // `scripts/measure/families/llama4/attn/NOTES.md`).
    let qe = if spec.query_scale && (!spec.nope_full || c.nope) {
        l.per_position += if spec.nope_full { 4 } else { ab };
        l.new_t(qd, ab, l.rg(qe), Part::Attention)
    } else {
        qe
    };
    let o = attention(l, qe, ke, v, spec.qkv != Qkv::Fused);
    let o = if spec.attn_gate {
        output_gate(l, o, qd)
    } else {
        o
    };
    let o_bias = if spec.attn_bias == AttnBias::All {
        h
    } else {
        0
    };
    l.linear(o, qd, h, o_bias, o_module)
}

/// `Llama4TextL2Norm` on the rotated `x` (`width` a token, `rows` heads):
/// `x.float()` (in fp32 `x` itself), which `pow` and the product save, and
/// `rsqrt`'s output (fp32, one a head), which the product saves; the
/// normed copy in `x`'s dtype (transformers 5.23 `modeling_llama4.py`;
/// measured: 4·T·(H + K)·(d + 1) bytes a rotated layer beyond Llama's,
/// `scripts/measure/families/llama4/attn/NOTES.md`).
fn l2_norm(l: &mut Ledger, x: Id, width: u64, rows: u64) -> Id {
    let rg = l.rg(x);
    let dt = l.dt(x);
    let xf = if dt == 4 {
        x
    } else {
        l.new_t(width, 4, rg, Part::Attention)
    };
    let r = l.new_t(rows, 4, rg, Part::Attention);
    if rg {
        l.save(xf);
        l.save(r);
    }
    l.new_t(width, dt, rg, Part::Attention)
}

/// Gemma 4's attention (`Gemma4TextAttention.forward`, transformers
/// 5.23): `q_proj`, `q_norm`, RoPE; `k_proj` and `v_proj` (keys as values:
/// `k_proj`'s output is both), `k_norm`, RoPE, the value norm without
/// weight. A layer reusing keys and values (`Ctx::kv_shared`) attends to
/// an earlier layer's, which that layer's attention already saved: they
/// are counted there (placeholders of no bytes here, of their width for
/// the repeat a mask makes).
fn value_normed_attention(l: &mut Ledger, n1: Id, heads: u64, kv_heads: u64) -> Id {
    let c = l.c;
    let h = u64::from(c.arch.hidden);
    let (qd, kvd) = (c.geometry.q_width(), c.geometry.k_width());
    let ab = attn_dt(c);
    let q = l.linear(n1, h, qd, 0, M::QProj);
    let q = l.norm(q, qd, heads);
    let qe = l.new_t(qd, ab, l.rg(q), Part::Attention);
    let (ke, v) = if c.kv_shared {
        let rg = l.rg(qe);
        (
            l.new_t(kvd, 0, rg, Part::Attention),
            l.new_t(kvd, 0, rg, Part::Attention),
        )
    } else {
        let k = l.linear(n1, h, kvd, 0, M::KProj);
        let v = if c.k_as_v {
            k
        } else {
            l.linear(n1, h, kvd, 0, M::VProj)
        };
        let kn = l.norm(k, kvd, kv_heads);
        let ke = l.new_t(kvd, ab, l.rg(kn), Part::Attention);
        (ke, l.norm_unweighted(v, kvd, kv_heads))
    };
    let o = attention(l, qe, ke, v, true);
    l.linear(o, qd, h, 0, M::OProj)
}

/// Gated attention's output gate, `attn_output * sigmoid(gate)`: the gate
/// a contiguous copy of q_proj's second half, the sigmoid kept for its own
/// backward and the product's, the attention output kept for the
/// product's; the product is o_proj's input. The gate's copy stays alive
/// to the end of the forward in the measurements (the difference of one
/// and two gated full-attention layers, to the byte, at 64, 100 and 200
/// tokens: `scripts/measure/hybrid/NOTES.md`). Source: transformers 5.23
/// `Qwen3_5Attention.forward`.
fn output_gate(l: &mut Ledger, o: Id, qd: u64) -> Id {
    let (rg, dt) = (l.rg(o), l.dt(o));
    let gate = l.new_t(qd, dt, rg, Part::Attention);
    let sig = l.new_t(qd, dt, rg, Part::Attention);
    if rg {
        l.save(gate);
        l.save(sig);
        l.save(o);
    }
    l.new_t(qd, dt, rg, Part::Attention)
}

/// A Gated DeltaNet layer as transformers 5.23 runs it without
/// flash-linear-attention and causal-conv1d: its four input projections,
/// the depthwise causal convolution with SiLU, `beta = sigmoid(b)`, the
/// decay `g = −exp(A_log) · softplus(a + dt_bias)` in fp32, the chunked
/// delta rule in fp32 over sequences padded to [`CHUNK`] positions, the
/// gated RMSNorm and `out_proj`. Returns `out_proj`'s output.
///
/// Kept for backward, per token: the convolution's input, `beta`, the
/// decay's sum and softplus, q and k repeated to the value heads as fp32
/// copies with their L2 norms' rsqrt; per sequence the convolution's
/// output over `S + K − 1` steps (SiLU keeps it whole); per padded
/// position, in fp32, q, k, v and beta padded, `k·beta`, five chunk
/// squares (the pairwise decay, `k_beta @ kᵀ`, the UT system, `q @ kᵀ`,
/// the intra-chunk attention), three decay exponentials, the two
/// triangular solves, q and k decayed and each chunk's `v_new`: `4·Hv·(6·Dk
/// + 3·Dv + 5·64 + 4)` (`Dk` one time fewer in a sequence of one chunk);
/// per chunk the state it reads (`Hv·Dk·Dv`) and its
/// decay (`Hv`), fp32; per layer the chunk's boolean mask (64²) and
/// `exp(A)` with its negation.
///
/// Source: transformers 5.23 `models/qwen3_5/modeling_qwen3_5.py`
/// (`Qwen3_5GatedDeltaNet.forward`, `causal_conv1d_fn`,
/// `torch_chunk_gated_delta_rule`, `l2norm`); derived op by op from the
/// allocation lists of `scripts/measure/hybrid/` (one and two DeltaNet
/// layers at 64, 100 and 200 tokens) and held to them.
fn delta_net(l: &mut Ledger, n1: Id) -> Id {
    let c = l.c;
    let a = c.arch;
    let h = u64::from(a.hidden);
    let (hv, dk, dv) = (
        u64::from(a.linear_v_heads),
        u64::from(a.linear_k_dim),
        u64::from(a.linear_v_dim),
    );
    let (conv, value) = a.linear_widths();
    let fused = c.spec.linear.is_some_and(|r| r.fused_in_proj);
    let (qkv, z) = if fused {
        // Qwen3-Next: one projection for q, k, v and z, one for b and a,
        // split by key head, regrouped (`fix_query_key_value_ordering`)
        // and concatenated again: the convolution's input and z are
        // copies of the projection's slices, which nothing keeps.
        let qkvz = l.linear(n1, h, conv + value, 0, M::InProjQkvz);
        l.linear(n1, h, 2 * hv, 0, M::InProjBa);
        let (rg, dt) = (l.rg(qkvz), l.dt(qkvz));
        (
            l.new_t(conv, dt, rg, Part::Recurrent),
            l.new_t(value, dt, rg, Part::Recurrent),
        )
    } else {
        let qkv = l.linear(n1, h, conv, 0, M::InProjQkv);
        let z = l.linear(n1, h, value, 0, M::InProjZ);
        l.linear(n1, h, hv, 0, M::InProjB);
        l.linear(n1, h, hv, 0, M::InProjA);
        (qkv, z)
    };
    let (rg, ad) = (l.rg(qkv), l.dt(qkv));
    if rg {
        l.save(qkv);
        let conv_out = l.new_t(conv, ad, true, Part::Recurrent);
        l.save(conv_out);
        l.per_sequence += conv * ad * u64::from(a.linear_conv).saturating_sub(1);
        let beta = l.new_t(hv, ad, true, Part::Recurrent);
        l.save(beta);
        for width in [hv, hv, 2 * hv * dk, 2 * hv] {
            let t = l.new_t(width, 4, true, Part::Recurrent);
            l.save(t);
        }
        l.per_layer += CHUNK as u64 * CHUNK as u64 + 2 * 4 * hv;
        chunked_rule(l, (hv, dk, dv));
    }
    let out = gated_norm(l, z, (hv, value), ad, rg);
    l.linear(out, value, h, 0, M::OutProj)
}

/// The family's recurrent mixer. Returns its output projection's output.
fn recurrent(l: &mut Ledger, n1: Id) -> Id {
    match l.c.spec.linear.map(|r| r.kind) {
        Some(Recurrence::GatedDeltaNet) => delta_net(l, n1),
        Some(Recurrence::ShortConv) => short_conv(l, n1),
        // Refused before the ledger (`breakdown::recurrence_unmeasured`),
        // and a family without recurrent layers has no such layer: the
        // mixer adds nothing.
        Some(Recurrence::Mamba2 | Recurrence::Kda) | None => n1,
    }
}

/// LFM2's gated short convolution (`Lfm2ShortConv.forward` without a
/// cache): `in_proj` `h → 3h` split into B, C and x, `B·x`, the depthwise
/// `F.conv1d` of `causal_conv1d_fn` padded by `L − 1` on both sides and
/// cut to the sequence, `C·conv`, a contiguous copy of it for `out_proj`.
/// Returns `out_proj`'s output.
///
/// Kept for backward, per token in `in_proj`'s output dtype: that output
/// (`3h`: B and x for `B·x`, C for `C·conv`), the convolution's input
/// (`h`) and output (`h`, whose storage spans `S + L − 1` steps: `(L − 1)·h`
/// more per sequence), and `out_proj`'s contiguous input (`h`). Under
/// autocast `causal_conv1d_fn` casts `B·x` to the fp32 weight's dtype and
/// the convolution back to bf16, which keeps the bf16 copy instead of
/// `B·x`: the same bytes.
///
/// Source: transformers 5.23 `models/lfm2/modeling_lfm2.py`
/// (`Lfm2ShortConv.forward`, `causal_conv1d_fn`); held to the shrunk
/// configs' rows of `scripts/measure/families/lfm2/train/` (one and two
/// convolution layers: their difference, to the byte).
fn short_conv(l: &mut Ledger, n1: Id) -> Id {
    let c = l.c;
    let h = u64::from(c.arch.hidden);
    let bcx = l.linear_plain(n1, h, 3 * h, 0);
    let (rg, dt) = (l.rg(bcx), l.dt(bcx));
    let bx = l.new_t(h, dt, rg, Part::Recurrent);
    let conv = l.new_t(h, dt, rg, Part::Recurrent);
    if rg {
        l.save(bcx);
        l.save(bx);
        l.save(conv);
        l.per_sequence += h * dt * u64::from(c.arch.linear_conv).saturating_sub(1);
    }
    l.new_t(h, dt, rg, Part::Recurrent);
    let y = l.new_t(h, dt, rg, Part::Recurrent);
    l.linear_plain(y, h, h, 0)
}

/// What `torch_chunk_gated_delta_rule` keeps for backward per chunk of
/// [`CHUNK`] (`C`) positions of one sequence, per sequence and at one
/// chunk, for `hv` value heads of `dk` and `dv`.
///
/// Without autocast, per head and chunk `4·(C·(6·Dk + 3·Dv + 5·C + 4) +
/// Dk·Dv + 1)`: the fp32 tensors listed at [`delta_net`], and the state
/// each chunk reads. The last chunk's state update feeds nothing (the
/// final state is not returned), so its graph node and what only it keeps
/// are freed with the rule: in a sequence of one chunk that is the decayed
/// keys, and the first chunk reads a zero state that needs no gradient,
/// so its products keep no decayed queries either (`2 · 4·C·Dk` less).
///
/// Under autocast (CUDA's and the CPU's lists agree on these ops) each
/// matmul runs in bf16 and keeps bf16 copies of its operands: `k_beta @
/// kᵀ` and `q @ kᵀ` four `C·Dk` copies and bf16 products, the loop per
/// chunk two copies of the state, the intra-chunk attention's and two of
/// `v_new` (one of each but the last chunk's, freed), and from the second
/// chunk on `k_cumdecay`'s, the queries' and the keys' slices, where the
/// fp32 intra-chunk attention, decayed queries and keys, `v_new` and the
/// last state are no longer kept: per head and chunk
/// `C·(30·Dk + 12·Dv + 14·C + 16) + 8·Dk·Dv + 4`, per sequence
/// `4·Dk·Dv + 6·C·Dk + 2·C·Dv` less, and no one-chunk exception.
///
/// Source: transformers 5.23 `torch_chunk_gated_delta_rule`; the storages
/// alive at the end of the forward, plain and under autocast, listed by
/// the harness (`scripts/measure/hybrid/NOTES.md`, `autocast_rows.jsonl`;
/// one chunk: the sweep's S ≤ 64 rows).
fn chunked_rule(l: &mut Ledger, (hv, dk, dv): (u64, u64, u64)) {
    let c = CHUNK as u64;
    if l.c.mode == Mode::Amp || l.c.autocast_half {
        l.per_chunk += hv * (c * (30 * dk + 12 * dv + 14 * c + 16) + 8 * dk * dv + 4);
        l.sequence_less += hv * (4 * dk * dv + 6 * c * dk + 2 * c * dv);
    } else {
        l.per_chunk += 4 * hv * (c * (6 * dk + 3 * dv + 5 * c + 4) + dk * dv + 1);
        l.one_chunk_less += 2 * 4 * hv * c * dk;
    }
}

/// A Gated DeltaNet layer's forward without gradients (checkpointing's
/// first forward) at its highest moment, inside the chunked rule's loop
/// at its output's sum: bytes per token, per chunk of [`CHUNK`]
/// positions of one sequence, per sequence and once.
///
/// Alive: the layer's normed input (`h` in the residual's dtype), the
/// convolution's output, z, b, a and beta in the compute dtype, the decay
/// in fp32; in the rule, per head, the padded values, beta and decay, the
/// cumulative decay, `v·beta`, `k·beta` and its decayed copy, the three
/// chunk squares (pairwise decay, the UT system, the intra-chunk
/// attention), the two solves, the output, the decayed queries and keys
/// (`4·(4·Dv + 5·Dk + 3·C + 3)` a position, 4 a chunk), the state and one
/// chunk's `v_new`, its two products and their sum (four `C·Dv` fp32
/// tensors; under autocast the products and the sum are bf16), and the
/// chunk mask once. The padded queries and keys are released once decayed.
///
/// Source: transformers 5.23 `torch_chunk_gated_delta_rule`; the storages
/// alive at the forward's peak of shrunk Qwen3.5 with checkpointing
/// (`scripts/measure/hybrid/live_at_peak.jsonl`).
fn delta_net_nograd(c: &Ctx) -> NoGrad {
    let a = c.arch;
    let (hv, dk, dv) = (
        u64::from(a.linear_v_heads),
        u64::from(a.linear_k_dim),
        u64::from(a.linear_v_dim),
    );
    let (conv, value) = a.linear_widths();
    let ad = c.mode.act();
    let ch = CHUNK as u64;
    let loop_temps = if c.mode == Mode::Amp || c.autocast_half {
        4 + 3 * 2
    } else {
        4 * 4
    };
    NoGrad {
        per_token: u64::from(a.hidden) * c.mode.residual() + (conv + value + 3 * hv) * ad + 4 * hv,
        per_chunk: 4 * hv * (ch * (4 * dv + 5 * dk + 3 * ch + 3) + 1),
        per_sequence: hv * (4 * dk * dv + loop_temps * ch * dv),
        once: ch * ch,
    }
}

/// A checkpointed recurrent layer's forward without gradients at its
/// highest moment, by the family's kind of recurrent layer (the ones
/// training refuses size nothing).
pub fn recurrent_nograd(c: &Ctx) -> NoGrad {
    match c.spec.linear.map(|r| r.kind) {
        Some(Recurrence::GatedDeltaNet) => delta_net_nograd(c),
        Some(Recurrence::ShortConv) => short_conv_nograd(c),
        Some(Recurrence::Mamba2 | Recurrence::Kda) | None => NoGrad::default(),
    }
}

/// LFM2's short convolution without gradients (checkpointing's first
/// forward) at its highest moment: bytes per token and per sequence.
///
/// Alive beside the layer's input: the normed input (`h` in the
/// residual's dtype, held by the module call's arguments until it
/// returns), `in_proj`'s output (`3h`) and the convolution's output (`h`,
/// `S + L − 1` steps), then either at `out_proj` its input and output (`2h`),
/// or at the convolution its input `B·x` (`h`) and, under autocast over
/// fp32 weights, `causal_conv1d_fn`'s fp32 copy of it and the bf16 cast the
/// convolution runs on (`4h + 2h`): whichever is more.
///
/// Source: transformers 5.23 `Lfm2ShortConv.forward`, `causal_conv1d_fn`;
/// the storages alive at `out_proj` in the shrunk configs' checkpointed
/// rows (`scripts/measure/families/lfm2/train/`).
fn short_conv_nograd(c: &Ctx) -> NoGrad {
    let a = c.arch;
    let h = u64::from(a.hidden);
    let (r, d) = (c.mode.residual(), c.mode.act());
    let casts = if c.mode == Mode::Amp { 4 + 2 } else { 0 };
    let at_conv = 5 * d + casts;
    let at_out = 6 * d;
    NoGrad {
        per_token: h * (r + at_conv.max(at_out)),
        per_chunk: 0,
        per_sequence: h * d * u64::from(a.linear_conv).saturating_sub(1),
        once: 0,
    }
}

/// [`recurrent_nograd`]'s bytes, by what they scale with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoGrad {
    pub per_token: u64,
    /// Per chunk of [`CHUNK`] positions of one sequence.
    pub per_chunk: u64,
    pub per_sequence: u64,
    pub once: u64,
}

/// `Qwen3_5RMSNormGated` over the rule's output (`Hv` rows of `Dv` a
/// token, cast back to the model's dtype, a contiguous copy) with z as
/// the gate: the fp32 input and rsqrt, the normalised input in the
/// model's dtype (the weight's product keeps it), the weighted product,
/// z in fp32 and its SiLU (the product keeps both), then the product cast
/// to the model's dtype for `out_proj`. In an fp32 model the casts are the
/// tensors themselves. Returns `out_proj`'s input.
fn gated_norm(l: &mut Ledger, z: Id, (rows, width): (u64, u64), ad: u64, rg: bool) -> Id {
    let core = l.new_t(width, ad, rg, Part::Recurrent);
    let xf = if ad == 4 {
        core
    } else {
        l.new_t(width, 4, rg, Part::Recurrent)
    };
    let r = l.new_t(rows, 4, rg, Part::Recurrent);
    let hs = l.new_t(width, 4, rg, Part::Recurrent);
    let hc = if ad == 4 {
        hs
    } else {
        l.new_t(width, ad, rg, Part::Recurrent)
    };
    // `weight * x`: an fp32 weight (autocast over fp32 weights) promotes.
    let wd = if l.c.mode == Mode::Amp { 4 } else { ad };
    let weighted = l.new_t(width, wd, rg || l.c.full, Part::Recurrent);
    let zf = if ad == 4 {
        z
    } else {
        l.new_t(width, 4, l.rg(z), Part::Recurrent)
    };
    let gate = l.new_t(width, 4, l.rg(z), Part::Recurrent);
    if rg {
        l.save(xf);
        l.save(r);
    }
    if l.c.full {
        l.save(hc);
    }
    if l.rg(weighted) || l.rg(gate) {
        l.save(weighted);
        l.save(zf);
        l.save(gate);
    }
    let product = l.new_t(width, 4, l.rg(weighted) || l.rg(gate), Part::Recurrent);
    if ad == 4 {
        product
    } else {
        l.new_t(width, ad, l.rg(product), Part::Recurrent)
    }
}

/// `LlamaDecoderLayer` and the families built like it: norm → attention →
/// (norm) → residual → norm → MLP or experts → (norm) → residual, with the
/// family's norm placement, q/k norms, fused projections and experts.
fn decoder_layer(l: &mut Ledger, x: Id, kind: LayerKind, mixer: Mixer) {
    let c = l.c;
    let a = c.arch;
    let spec = c.spec;
    let h = u64::from(a.hidden);
    let (pre, post) = match spec.norm_place {
        NormPlace::Pre => (true, false),
        NormPlace::Sandwich => (true, true),
        NormPlace::Post => (false, true),
    };
    let n1 = if pre { l.norm(x, h, 1) } else { x };
    let attn_out = match (mixer, c.geometry.layer) {
        (Mixer::Recurrent, _) => recurrent(l, n1),
        (Mixer::Attention, LayerAttention::Latent(m)) => {
            let o = latent_attention(l, n1, m);
            l.linear(o, m.heads * m.v_head_dim, h, 0, M::OProj)
        }
        (
            Mixer::Attention,
            LayerAttention::Heads {
                heads, kv_heads, ..
            },
        ) => head_attention(l, n1, heads, kv_heads),
    };
    let attn_out = if post {
        l.norm(attn_out, h, 1)
    } else {
        attn_out
    };
    let r1 = l.new_t(
        h,
        c.mode.residual(),
        l.rg(x) || l.rg(attn_out),
        Part::Residual,
    );
    let n2 = if pre { l.norm(r1, h, 1) } else { r1 };
    // The residual stream waits for the MLP's output; the MLP's input
    // lives through it.
    l.alive = (1 << r1) | (1 << n2);
    let m = match kind {
        LayerKind::Moe if spec.moe.is_some_and(|m| m.dense_beside) => {
            let m = mlp(l, n2, u64::from(a.ffn));
            experts_beside(l, r1, m)
        }
        LayerKind::Moe => moe(l, n2),
        LayerKind::Dense => mlp(l, n2, u64::from(a.ffn)),
    };
    l.alive = 0;
    let m = if post { l.norm(m, h, 1) } else { m };
    if a.ple_dim > 0 && spec.per_layer_embeddings {
        let r2 = l.new_t(h, c.mode.residual(), l.rg(r1) || l.rg(m), Part::Residual);
        per_layer_input(l, r2);
    }
    if spec.norm == Norm::RmsScaled && l.rg(x) {
        // The layer's backward opens with its last norm's: `pow`'s
        // backward over the whole layer's saved tensors, five fp32
        // temporaries and the incoming gradient times the weight, in
        // the stream's dtype. Measured: shrunk Gemma 4 E2B's layer 0
        // recomputed (`scripts/measure/gemma4/`, the storages alive at
        // the backward's peak).
        let norm_back = 5 * 4 * h + c.mode.residual() * h;
        l.backward_mlp = l.backward_mlp.max(norm_back);
    }
}

/// Bytes per token a Gemma 4 layer whose keys and values later layers
/// reuse leaves alive from its recompute to the end of backward under
/// checkpointing: the recompute writes its keys and values into
/// `shared_kv_states`, which every earlier layer's checkpoint holds, and
/// with them what their autograd graph saved (the input norm's, `k_proj`'s
/// and `v_proj`'s inputs, `k_norm`'s and the value norm's). Measured:
/// shrunk Gemma 4 E2B, the storages alive at layer 0's backward
/// (`scripts/measure/gemma4/`).
pub fn kv_retained(c: &Ctx) -> u64 {
    let mut l = Ledger::new(c);
    let h = u64::from(c.arch.hidden);
    let (kvd, kv_heads) = (c.geometry.k_width(), u64::from(c.arch.kv_heads));
    let x = l.new_t(h, c.mode.residual(), true, Part::Residual);
    let n1 = l.norm(x, h, 1);
    let k = l.linear(n1, h, kvd, 0, M::KProj);
    let v = if c.k_as_v {
        k
    } else {
        l.linear(n1, h, kvd, 0, M::VProj)
    };
    let kn = l.norm(k, kvd, kv_heads);
    let ke = l.new_t(kvd, attn_dt(c), l.rg(kn), Part::Attention);
    let vn = l.norm_unweighted(v, kvd, kv_heads);
    let kept = [ke, vn]
        .iter()
        .map(|&id| l.ts[id].width * l.dt(id))
        .sum::<u64>();
    // The layer's input (saved as it is by an fp32 norm) is its
    // checkpoint's, counted there.
    let input = if l.ts[x].saved { h * l.dt(x) } else { 0 };
    l.result().token_bytes() + kept - input
}

/// Gemma 4's per-layer input after the MLP's residual `r2`
/// (`Gemma4TextDecoderLayer.forward`, transformers 5.23):
/// `per_layer_input_gate`, its activation (which keeps its input), the
/// product with the layer's slice of the per-layer inputs (a view: the
/// whole tensor is the embedding's, [`outer`]; the product keeps the
/// activation when they need a gradient), `per_layer_projection`,
/// `post_per_layer_input_norm`; the residual add and `layer_scalar`'s
/// in-place product keep nothing.
fn per_layer_input(l: &mut Ledger, r2: Id) {
    let c = l.c;
    let (h, p) = (u64::from(c.arch.hidden), u64::from(c.arch.ple_dim));
    let g = l.linear(r2, h, p, 0, M::PerLayerInputGate);
    let (rg, dt) = (l.rg(g), l.dt(g));
    if rg {
        l.save(g);
    }
    let act = l.new_t(p, dt, rg, Part::Mlp);
    let inputs_rg = c.full || c.adapts(M::PerLayerModelProjection);
    if inputs_rg {
        l.save(act);
    }
    let prod = l.new_t(p, dt, rg || inputs_rg, Part::Mlp);
    let out = l.linear(prod, p, h, 0, M::PerLayerProjection);
    l.norm(out, h, 1);
}

/// A gated MLP of width `f` (`gate_proj`, `up_proj`, `down_proj`, or
/// Phi-3's fused `gate_up_proj`): act(gate) saves gate; the product saves
/// act(gate) and up; down saves the product.
fn mlp(l: &mut Ledger, x: Id, f: u64) -> Id {
    let c = l.c;
    let h = u64::from(c.arch.hidden);
    let (gate, up) = if c.spec.mlp == Mlp::GatedFused {
        let gu = l.linear(x, h, 2 * f, 0, M::GateUpProj);
        let (rg, dt) = (l.rg(gu), l.dt(gu));
        // chunk(2): both halves are views of gate_up's storage.
        if rg {
            l.save(gu);
        }
        (l.new_t(0, dt, rg, Part::Mlp), l.new_t(0, dt, rg, Part::Mlp))
    } else {
        // `down_proj(act_fn(gate_proj(x)) * up_proj(x))`: the gate and its
        // activation are alive at up_proj's call.
        let gate = l.linear(x, h, f, 0, M::GateProj);
        l.alive |= 1 << gate;
        l.pending = f * l.dt(gate);
        let up = l.linear(x, h, f, 0, M::UpProj);
        l.pending = 0;
        (gate, up)
    };
    let gb = l.dt(gate).max(l.dt(up));
    let rg = l.rg(gate) || l.rg(up);
    let act = l.new_t(f, gb, rg, Part::Mlp);
    if rg {
        for id in [gate, act, up] {
            l.ts[id].part = Part::Mlp;
            l.save(id);
        }
    }
    let prod = l.new_t(f, gb, rg, Part::Mlp);
    let out = l.linear(prod, f, h, 0, M::DownProj);
    if rg {
        // Backward: down's input gradient (f), then the product's two
        // (act(gate)'s and up's, f each) while it is alive; the product
        // itself, when down saved it, was released with down's node.
        // Measured: the recompute of layer 0 of Mistral-7B full fine-tuning
        // at 8 × 4096 (t4_rows.jsonl, 5.23.0), and its allocation trace.
        let freed = if l.ts[prod].saved { f * gb } else { 0 };
        let grads = if c.quant == Quant::None {
            3 * f * gb - freed
        } else {
            // A quantized down projection's backward peaks at its own
            // matmul instead (the dequantized weight is its moment): the
            // product's gradient and the incoming one, in the stream's
            // dtype. Measured: Mistral's layout shrunk, nf4, 1 × 8192 with
            // checkpointing (long_rows.jsonl: f·4 + h·4 per token over the
            // recomputed layer, `scripts/measure/long/NOTES.md` §10).
            (f + h) * c.mode.residual()
        };
        l.backward_mlp = l.backward_mlp.max(grads);
    }
    out
}

/// A mixture-of-experts block: the router and the routed experts (as the
/// release runs them: [`moe_grouped`], [`moe_loop`]), then the shared
/// expert, scaled by its sigmoid gate where the family has one.
fn moe(l: &mut Ledger, x: Id) -> Id {
    let c = l.c;
    let a = c.arch;
    let Some(spec) = c.spec.moe else {
        return mlp(l, x, u64::from(a.ffn));
    };
    let (h, e, k, f) = (
        u64::from(a.hidden),
        u64::from(a.experts),
        u64::from(a.experts_per_token),
        u64::from(a.moe_ffn),
    );
    let routed = match c.expert_linears {
        Some(names) => moe_loop(l, x, spec, names, (h, e, k, f)),
        None if spec.dense_dispatch => moe_dense(l, x, spec, (h, e, k, f)),
        None => moe_grouped(l, (x, x), spec, (h, e, k, f)),
    };
    // The routed experts' backward moments, then the shared expert's.
    let (entry, experts, last) = (l.backward_entry, l.backward_mlp, l.backward_last);
    l.backward_mlp = 0;
    let shared = shared_expert(l, x, spec, (h, f));
    let legacy = c.expert_linears.is_some();
    if legacy && !l.ts[x].saved {
        // The block's input (the norm's output) is alive through the loop
        // whether or not anything saves it.
        l.loop_forward += h * l.dt(x);
    }
    // transformers 4 runs the shared expert after the routed ones, so it is
    // differentiated first: by the routed experts' backward its saved
    // tensors are gone and its input's gradient (h) is made.
    let grad_in = h * l.dt(x);
    let after = |b: u64| match shared {
        Some((_, later)) if legacy && b > 0 => (b + grad_in).saturating_sub(later),
        _ => b,
    };
    l.backward_entry = after(entry);
    l.backward_last = after(last);
    l.backward_mlp = l.backward_mlp.max(after(experts));
    shared.map_or(routed, |(out, _)| out)
}

/// Llama 4's experts, every token through every one (transformers 5.23
/// `Llama4TextMoe.forward`, `Llama4TextExperts.forward`): the router, the
/// input repeated once per expert, its product with the scores (their
/// transposed copy kept), the stacked `gate_up` bmm, SiLU, the product and
/// the `down` bmm, summed over the experts. Saved per token in full
/// fine-tuning: the repeat, the scores' copy, the scaled input, gate_up,
/// SiLU's output and the product, `E·(2h + 4I) + E` elements in the
/// input's dtype; with the experts frozen (LoRA) not the scaled input or
/// the product. Under autocast the repeat and the scaled input stay in
/// fp32 (the scores, the router's logits, are bf16), each `bmm` saves a
/// bf16 copy of its input (the scaled input's; the fp32 product itself is
/// not kept) and of the stacked weights it reads, cached while autocast
/// lasts, and gate_up, SiLU and the product are bf16. Measured:
/// `scripts/measure/families/llama4/dense/` (bf16, fp32 and autocast;
/// LoRA on named modules).
fn moe_dense(l: &mut Ledger, x: Id, spec: Moe, (h, e, k, f): (u64, u64, u64, u64)) -> Id {
    let xd = l.dt(x);
    let w_tr = l.c.full;
    let x_rg = l.rg(x);
    let rg = x_rg || w_tr;
    let scores = router(l, x, spec, false, (h, e, k));
    let amp = l.c.mode == Mode::Amp;
    // The bmms' dtype: autocast's bf16, else the input's.
    let md = if amp { 2 } else { xd };
    // The scaled input and the product are the `bmm`s' inputs, kept for
    // the stacked weights' gradients only (peft adapts no expert here).
    // Under autocast the fp32 product with the scores is not kept, its
    // bf16 copy for the bmm is (none without autocast).
    let copy = if amp { e * h } else { 0 };
    for (width, dt, kept) in [
        (e * h, xd, true),
        (e, scores, true),
        (e * h, xd, w_tr && !amp),
        (copy, md, w_tr),
        (2 * e * f, md, true),
        (e * f, md, true),
        (e * f, md, w_tr),
    ] {
        if width == 0 {
            continue;
        }
        let t = l.new_t(width, dt, rg, Part::Experts);
        if rg && kept {
            l.save(t);
        }
    }
    // The block's locals `routed_in` (the scaled input, when nothing saves
    // it) and `routed_out` (the down bmm's output) live through the shared
    // expert, beside the router's logits and scores.
    let unsaved_in = if w_tr { 0 } else { e * h * md };
    l.loop_forward = l.loop_forward.max(unsaved_in + e * h * md + 2 * e * scores);
    if w_tr && !amp {
        // Backward's moment, at the `sum` that makes the scores' gradient:
        // the gradients of the scaled input, of the repeat and the repeat
        // times it, of the shared expert's input (h) and the sum (E), with
        // gate_up, SiLU's output, the product, the scaled input and the
        // shared expert's four released (the weight gradients:
        // `breakdown::recompute::weight_grads`), held at zero where the
        // released outweigh the gradients (the shrunk rows: 508 bytes a
        // token high). Measured in bf16 and fp32:
        // `scripts/measure/families/llama4/dense/NOTES.md` §2. Under
        // autocast not listed: the down experts' gradient only, as other
        // MoE blocks (Scout's rows exact, the shrunk ones 3% low).
        let sf = u64::from(l.c.arch.shared_experts) * f;
        let held = (3 * e * h + h + e) * xd;
        let freed = (4 * e * f + e * h + 4 * sf) * xd;
        l.backward_mlp = l.backward_mlp.max(held.saturating_sub(freed));
    }
    if amp {
        // The stacked `gate_up_proj` (h × 2I) and `down_proj` (I × h) of
        // every expert, as `Ledger::linear_of` counts a weight's copy.
        let copies = 2 * 3 * e * h * f;
        if x_rg && w_tr {
            l.weight_copies += copies;
        } else if x_rg {
            // The larger cast is `gate_up_proj`'s.
            l.frozen_cast(copies, 2 * 2 * e * h * f);
        } else if w_tr {
            l.weight_copies_transient += copies;
        }
    }
    l.new_t(h, xd, rg, Part::Experts)
}

/// Gemma 4 26B-A4B's experts beside the dense MLP's output `m`, on the
/// residual `r1` (`Gemma4TextDecoderLayer.forward`, `Gemma4TextRouter`,
/// transformers 5.23): `m` normed; the router's weightless norm of `r1`,
/// times its `scale` (which keeps the normed input for its gradient) and
/// a constant, its projection and fp32 softmax, top-k renormalised, times
/// the gathered `per_expert_scale`; `r1` normed for the grouped experts,
/// their output normed; the sum.
fn experts_beside(l: &mut Ledger, r1: Id, m: Id) -> Id {
    let c = l.c;
    let a = c.arch;
    let Some(spec) = c.spec.moe else {
        return m;
    };
    let h = u64::from(a.hidden);
    let dims = (
        h,
        u64::from(a.experts),
        u64::from(a.experts_per_token),
        u64::from(a.moe_ffn),
    );
    let h1 = l.norm(m, h, 1);
    let rn = l.norm_unweighted(r1, h, 1);
    let (rg, dt) = (l.rg(rn) || c.full, l.dt(rn));
    if c.full {
        l.save(rn);
    }
    // `* scale`, then `* scalar_root_size`: the second product is the
    // router's input (the first, saved by nothing, is not kept).
    let scaled = l.new_t(h, dt, rg, Part::Router);
    let n3 = l.norm(r1, h, 1);
    let experts = moe_grouped(l, (n3, scaled), spec, dims);
    let h2 = l.norm(experts, h, 1);
    l.new_t(h, l.dt(h1), l.rg(h1) || l.rg(h2), Part::Mlp)
}

/// The shared expert after the routed ones (`None` without one): its MLP,
/// scaled by its sigmoid gate where the family has one.
fn shared_expert(l: &mut Ledger, x: Id, spec: Moe, (h, f): (u64, u64)) -> Option<(Id, u64)> {
    let c = l.c;
    let sf = u64::from(c.arch.shared_experts) * f;
    if sf == 0 {
        return None;
    }
    let before = l.len;
    let shared = mlp(l, x, sf);
    if spec.shared == Shared::Gated {
        // sigmoid(shared_expert_gate(x)) * shared: both kept.
        let g = l.linear(x, h, 1, 0, M::SharedExpertGate);
        let rg = l.rg(g) || l.rg(shared);
        let s = l.new_t(1, l.dt(g), rg, Part::Mlp);
        if rg {
            l.save(s);
            l.save(shared);
        }
    }
    let later = l.saved_bytes(before);
    if c.sorted_loop() {
        // The sorted loop's moment comes before the shared expert runs:
        // what that saves is not there yet.
        l.loop_forward = l.loop_forward.saturating_sub(later);
    }
    Some((l.new_t(h, l.dt(x), true, Part::Experts), later))
}

/// The router and the routed experts through transformers 5's default
/// `grouped_mm` path.
///
/// Per token the router keeps its fp32 softmax (or sigmoid) and the top-k
/// indices (int64); DeepSeek's routes an fp32 copy of the input. Per routed
/// (token, expert) pair — `k` per token, however they fall — the experts
/// keep the gathered input, the `gate_up` output, the activation and the
/// product, the `down` output (for the routing weight's gradient), the
/// sorted order, its inverse and the token index (int64) and the routing
/// weight. `grouped_mm` is not autocast: under autocast the experts run in
/// fp32 on fp32 inputs.
///
/// Source: `integrations/moe.py` (`grouped_mm_experts_forward`) and each
/// family's router in transformers 5.23; per-layer traces of the measured
/// MoE rows.
fn moe_grouped(
    l: &mut Ledger,
    (x, routed_on): (Id, Id),
    spec: Moe,
    (h, e, k, f): (u64, u64, u64, u64),
) -> Id {
    let c = l.c;
    let x_rg = l.rg(x);
    let w_tr = c.full;
    let xd = l.dt(x);
    let (gu_lora, down_lora, router_lora) = expert_lora_merges(l, spec, (h, e, f));
    let weight_dt = router(l, routed_on, spec, router_lora, (h, e, k));
    let rg_any = x_rg || w_tr;
    let idx = l.new_t(8 * k, 1, rg_any, Part::Router);
    if rg_any {
        l.save(idx);
    }
    // The routed experts, k per token, in the input's dtype (fp32 under
    // autocast: grouped_mm is not autocast).
    let ed = xd;
    let gathered = l.new_t(k * h, ed, rg_any, Part::Experts);
    let gate_up = l.new_t(k * 2 * f, ed, rg_any, Part::Experts);
    // The activation's saved tensors (SiLU's output; gpt-oss's clamped
    // gate, sigmoid, glu and up + 1), then the product down reads.
    let acts = if spec.clamped_swiglu { 4 } else { 1 };
    let act = l.new_t(k * acts * f, ed, rg_any, Part::Experts);
    let prod = l.new_t(k * f, ed, rg_any, Part::Experts);
    let down = l.new_t(k * h, ed, rg_any, Part::Experts);
    // sort order, inverse order, token index: int64 each; the weight.
    // transformers 4's loop over stacked experts (gpt-oss) instead keeps
    // `torch.where`'s token and slot indices (int64 each) and the scaled
    // output `index_add_` saves.
    let order = l.new_t(
        k * if c.experts_looped { 16 } else { 24 },
        1,
        rg_any,
        Part::Experts,
    );
    let weights = l.new_t(k, weight_dt, rg_any, Part::Experts);
    if rg_any {
        for id in [gate_up, act, down, order, weights] {
            l.save(id);
        }
        if c.experts_looped {
            let scaled = l.new_t(k * h, xd, true, Part::Experts);
            l.save(scaled);
        }
    }
    // The experts' inputs, for their (merged) weights' gradients.
    if rg_any && (w_tr || gu_lora) {
        l.save(gathered);
    }
    if rg_any && (w_tr || down_lora) {
        l.save(prod);
    }
    if rg_any {
        // Backward, entering the experts: the output's gradient made
        // contiguous per (token, expert) pair, then `index_put`'s zeros and
        // result for the inverse order (k·h each), beside every saved
        // tensor. Then at the experts' MLP: down's input gradient and the
        // two of the gate (k·f each) once the down output (k·h, saved for
        // the routing weight's gradient) and the product (when saved) are
        // released. Measured: tiny-qwen3_moe with checkpointing
        // (moe_aux_rows.jsonl), its allocation trace (transformers 5.23
        // `grouped_mm_experts_forward`).
        let prod_saved = if l.ts[prod].saved { f } else { 0 };
        let mlp = (3 * f).saturating_sub(prod_saved + h);
        // transformers 4's loop over stacked experts does this expert by
        // expert, on each one's share of the k rows (k/E on average).
        let share = |bytes: u64| {
            if c.experts_looped {
                bytes.div_ceil(e)
            } else {
                bytes
            }
        };
        l.backward_entry = l.backward_entry.max(share(3 * k * h * ed));
        l.backward_mlp = l.backward_mlp.max(share(k * mlp * ed));
    }
    l.new_t(h, xd, rg_any, Part::Experts)
}

/// transformers 4's mixture of experts as per-expert linears (Mixtral's
/// `MixtralSparseMoeBlock`, Qwen-MoE's, 4.48.1 to 4.57.6; DeepSeek-V3's
/// `DeepseekV3MoE.moe`, 4.57.6): the router an `nn.Linear` (quantized by
/// bitsandbytes and adapted by LoRA like any linear layer), its fp32
/// softmax, the top k renormalised and cast to the input's dtype (or
/// DeepSeek's router parameter, its weights left in the router's dtype);
/// then expert by expert, on the tokens routed to it (`torch.where` over a
/// one-hot int64 mask), the gathered input through `w2(act(w1(x)) *
/// w3(x))`, `nn.Linear`s, times the routing weight, `index_add_` into the
/// output.
///
/// Summed over the experts, each tensor of the loop holds k rows per
/// token however the tokens fall, so each expert linear is counted once
/// with k rows and E modules. Saved, by each op's derivative: the gathered
/// input (by a trained linear or an adapter), SiLU's input, both factors of
/// the product, the down output and the routing weight (the scaling), the
/// scaled output (`index_add_`), and `torch.where`'s int64 token and slot
/// indices (by the index ops).
///
/// Source: transformers 4.48.1 and 4.57.6 `modeling_mixtral.py`,
/// `modeling_qwen2_moe.py`, 4.57.6 `modeling_qwen3_moe.py` and
/// `modeling_deepseek_v3.py`; measured: each shrunk, LoRA on attention and
/// on the experts, with and without checkpointing (t4_rows.jsonl).
fn moe_loop(
    l: &mut Ledger,
    x: Id,
    spec: Moe,
    names: ExpertLinears,
    (h, e, k, f): (u64, u64, u64, u64),
) -> Id {
    let c = l.c;
    let (xd, x_rg) = (l.dt(x), l.rg(x));
    let (rw_rg, router_dt) = if names.router_linear {
        let logits = l.linear(x, h, e, 0, M::Router);
        let rg = l.rg(logits);
        if rg {
            routing_probs(l, spec, (e, k));
        }
        (rg, 4)
    } else {
        // A router parameter (DeepSeek): as transformers 5 runs it; its
        // `F.linear` on fp32 copies still runs in bf16 under autocast, and
        // so do its weights.
        // DeepSeek-V2's softmax asks for fp32 (`dtype=torch.float32`).
        let dt = router(l, x, spec, false, (h, e, k));
        let autocast = c.mode == Mode::Amp || c.autocast_half;
        let half = autocast && spec.router != Router::SoftmaxFp32;
        (x_rg || c.full, if half { 2 } else { dt })
    };
    if rw_rg {
        // top-k's indices (int64).
        let top_idx = l.new_t(8 * k, 1, true, Part::Router);
        l.save(top_idx);
    }
    // The routing weights' dtype, and the scaled outputs' and their sum's.
    let wd = if names.weights_cast { xd } else { router_dt };
    // `torch.where`'s token indices (int64, saved by the gather and
    // `index_add_`; its slot indices below, by the routing weight's), or
    // the sorted rows' tokens (`indices // k`, saved by the gather).
    let tokens_saved = match names.dispatch {
        Dispatch::Masked => x_rg || rw_rg,
        Dispatch::Sorted => x_rg,
    };
    if tokens_saved {
        let tokens = l.new_t(8 * k, 1, true, Part::Experts);
        l.save(tokens);
    }
    let gathered = l.new_t(k * h, xd, x_rg, Part::Experts);
    let expert = |name: M, n_in: u64, n_out: u64| Lin {
        lora: c.adapts(name),
        quantized: c.quant != Quant::None,
        rows: k,
        modules: e,
        ..Lin::new(n_in, n_out, 0)
    };
    let g = l.linear_of(gathered, expert(names.gate, h, f));
    let gd = l.dt(g);
    if l.rg(g) {
        l.save(g);
    }
    let act = l.new_t(k * f, gd, l.rg(g), Part::Experts);
    let u = l.linear_of(gathered, expert(names.up, h, f));
    let (act_rg, u_rg) = (l.rg(act), l.rg(u));
    if u_rg {
        l.save(act);
    }
    if act_rg {
        l.save(u);
    }
    let prod = l.new_t(k * f, gd, act_rg || u_rg, Part::Experts);
    let d = l.linear_of(prod, expert(names.down, f, h));
    if names.dispatch == Dispatch::Sorted {
        return sorted_back(l, (gathered, d), rw_rg, (h, e, k, f), (xd, gd, wd));
    }
    let sd = if names.weights_cast { xd } else { gd.max(wd) };
    loop_moment(l, names, (h, e, k, f), (xd, gd, sd), l.ts[prod].saved);
    if rw_rg {
        let slots = l.new_t(8 * k, 1, true, Part::Experts);
        l.save(slots);
        l.save(d);
        if l.rg(d) {
            let w = l.new_t(k, wd, true, Part::Experts);
            l.save(w);
        }
    }
    let rg = l.rg(d) || rw_rg;
    if rg {
        // The scaled output, which `index_add_` saves (its source's
        // gradient is `grad.index_select(...).expand_as(source)`): in the
        // input's dtype, or fp32 with DeepSeek's fp32 weights.
        let scaled = l.new_t(k * h, sd, true, Part::Experts);
        l.save(scaled);
        // Backward, expert by expert: the input's gradient gathered back
        // to all tokens (`index` backward: zeros and `index_put`, h per
        // token) beside the one accumulating it, and the expert's own
        // chain on its share of the k rows (its output's and the
        // product's gradients, the activation's two, the input's),
        // k/E of them on average. Read from the code: no measured peak
        // falls here (the loss's, the final norm's or the recompute's
        // come first).
        let chain = (k * (2 * h + 3 * f) * gd).div_ceil(e);
        l.backward_mlp = l.backward_mlp.max(2 * h * xd + chain);
    }
    l.new_t(h, xd, rg, Part::Experts)
}

/// DeepSeek-V2's way back from its sorted rows (`DeepseekV2MoE.moe`, after
/// the experts): the outputs concatenated (`cat`), put back in token order
/// in a new tensor (`index_put_`, which saves the sort's int64 order), cast
/// to the routing weights' dtype (fp32), scaled in place (`mul_`: it saves
/// the weights, and a clone of the rows as they were for the weights'
/// gradient) and summed per token, then cast back.
///
/// Its highest forward moment is at the sum: the sorted input, every
/// expert's output, their concatenation, the reordered rows and their fp32
/// copy (k rows each), the sum and the one-hot counts (int64, E per token).
/// Backward enters with the sum's gradient in fp32 and the products' two
/// (k rows each); each expert's slice gradient is then a zero-filled copy
/// of all k rows (`slice_backward`), added out of place to the running sum
/// beside the experts' input gradient: from the first addition (the
/// scaling's clone released) to the last (every expert's saved tensors
/// but the sorted input, a view of which each read, released too), while
/// full fine-tuning makes each expert's weight gradients in turn; the
/// layer's moments take the higher end.
///
/// Source: transformers 4.57.6 `modeling_deepseek_v2.py`; measured:
/// shrunk DeepSeek-V2-Lite, eager attention, no checkpointing, full and
/// LoRA (t4_rows.jsonl), with the allocation trace of the LoRA row.
fn sorted_back(
    l: &mut Ledger,
    (gathered, d): (Id, Id),
    rw_rg: bool,
    (h, e, k, f): (u64, u64, u64, u64),
    (xd, gd, wd): (u64, u64, u64),
) -> Id {
    // What the experts saved after their sorted input.
    let experts_saved = l.saved_bytes(gathered + 1);
    let d_rg = l.rg(d);
    if d_rg {
        let order = l.new_t(8 * k, 1, true, Part::Experts);
        let w = l.new_t(k, wd, true, Part::Experts);
        l.save(order);
        l.save(w);
    }
    if rw_rg {
        let original = l.new_t(k * h, wd, true, Part::Experts);
        l.save(original);
    }
    let copy = if wd == gd { 0 } else { k * h * wd };
    let at_sum = 3 * k * h * gd + copy + h * wd + 8 * e;
    let sorted = if l.ts[gathered].saved { 0 } else { k * h * xd };
    l.loop_forward = sorted + at_sum;
    l.loop_forward_nograd = k * h * xd + at_sum;
    let rg = d_rg || rw_rg;
    if rg {
        let chain = (k * (2 * h + 3 * f) * gd).div_ceil(e);
        l.backward_entry = l.backward_entry.max(h * wd + 2 * k * h * wd);
        // The first addition (every saved tensor left but the scaling's
        // clone, two experts' weight gradients made) and the last (also
        // every expert's saved tensors released, all their gradients made).
        let clone = if rw_rg { k * h * wd } else { 0 };
        let add = 4 * k * h * gd;
        l.backward_mlp = l
            .backward_mlp
            .max(add.saturating_sub(clone))
            .max(2 * k * h * gd + chain);
        l.backward_last = add.saturating_sub(clone + experts_saved);
    }
    l.new_t(h, gd, rg, Part::Experts)
}

/// The expert loop's highest forward moment, at the last expert's down
/// projection, on its share of the k rows (k/E of them on average; the
/// routing decides): its gathered input, the product, the down output and, when LoRA adapts
/// it, peft's fp32 copy of the input and its dropped copy (with the
/// autocast copy lora_A reads, which a no-grad forward does not keep
/// either); beside the block's output under construction, its one-hot
/// routing mask (int64, k·E per token) and the routing weights. With
/// gradients, what it saves is counted elsewhere.
///
/// Source: transformers 4.48.1 `MixtralSparseMoeBlock.forward`, peft 0.13
/// `Linear.forward`; measured: shrunk Mixtral with a 128-token vocabulary,
/// LoRA on `w1,w2,w3`, the allocation trace at the forward's peak.
fn loop_moment(
    l: &mut Ledger,
    names: ExpertLinears,
    (h, e, k, f): (u64, u64, u64, u64),
    (xd, gd, sd): (u64, u64, u64),
    prod_saved: bool,
) {
    let c = l.c;
    let lora = c.adapts(names.down);
    let cast = if lora && gd != 4 { 4 * f } else { 0 };
    let dropped = if lora && c.lora_dropout { 4 * f } else { 0 };
    let autocast = lora && (c.mode == Mode::Amp || c.autocast_half);
    let lora_a_in = if autocast { 2 * f } else { 0 };
    let prod = if prod_saved { 0 } else { f * gd };
    // The output under construction is in the scaled outputs' dtype.
    let block = h * sd + 8 * k * e + k * sd;
    let share = |row: u64| (k * row).div_ceil(e);
    // The expert's gathered input (h), saved only by a trained linear.
    let gathered = if c.full { 0 } else { h * xd };
    l.loop_forward = block + share(gathered + prod + cast + dropped + h * gd);
    l.loop_forward_nograd = block + share(h * xd + f * gd + cast + dropped + lora_a_in + h * gd);
}

/// LoRA on the router and the experts (peft's `ParamWrapper`, through its
/// conversion for fused experts): each merged weight's bytes; whether the
/// gate/up experts, the down experts and the router are adapted.
fn expert_lora_merges(l: &mut Ledger, spec: Moe, (h, e, f): (u64, u64, u64)) -> (bool, bool, bool) {
    // The weight is merged with its
    // delta for the forward, `W + scale · B A` in the weights' dtype (the
    // fp32 adapters cast to a half base's dtype), and the merged weight,
    // which needs a gradient, is saved like a trained one's input. The
    // merge happens when the forward reads the parameter (torch's
    // parametrization): the down experts' only at their matmul, after the
    // gate/up activations are released.
    let c = l.c;
    let lora = c.lora.filter(|_| spec.peft_experts);
    let adapts = |m: M| lora.is_some_and(|l| l.adapts(c.arch.family.module(m)));
    let (gu_lora, down_lora, router_lora) = (
        adapts(M::ExpertsGateUp),
        adapts(M::ExpertsDown),
        adapts(M::Router),
    );
    let pb = c.mode.param();
    let r = lora.map_or(0, |l| l.r);
    let casts = if pb == 4 { 0 } else { pb };
    if gu_lora {
        l.weight_copies_uncached += pb * e * 2 * f * h + casts * e * 2 * r * (h + 2 * f);
    }
    if down_lora {
        l.down_merge = pb * e * h * f + casts * e * r * (h + f);
        l.weight_copies_uncached += l.down_merge;
    }
    if router_lora {
        l.weight_copies_uncached += pb * e * h + casts * r * (h + e);
    }
    (gu_lora, down_lora, router_lora)
}

/// What a softmax router saves: its fp32 probabilities
/// (`softmax(dtype=float)`) and, where the top k are renormalised
/// (`weights /= sum`), their clone and the sum.
fn routing_probs(l: &mut Ledger, spec: Moe, (e, k): (u64, u64)) {
    let probs = l.new_t(e, 4, true, Part::Router);
    l.save(probs);
    if spec.normalize_top_k {
        let top = l.new_t(k + 1, 4, true, Part::Router);
        l.save(top);
    }
}

/// The router's forward, what it saves, and the dtype of the weights it
/// gives the experts.
fn router(l: &mut Ledger, x: Id, spec: Moe, router_lora: bool, (h, e, k): (u64, u64, u64)) -> u64 {
    let (x_rg, w_tr) = (l.rg(x), l.c.full);
    match spec.router {
        // Gemma 4's router: the plain softmax's, its projection an
        // `nn.Linear` LoRA may adapt (`Moe::router_linear`). Granite
        // 4.0-H's stands here unmeasured: training refuses its Mamba-2
        // layers before a step is estimated.
        Router::Softmax | Router::Scaled | Router::TopKSoftmaxCast => {
            let logits = if spec.router_linear {
                l.linear(x, h, e, 0, M::Router)
            } else {
                l.linear_plain(x, h, e, 0)
            };
            if router_lora && x_rg {
                l.save(x);
            }
            if l.rg(logits) {
                routing_probs(l, spec, (e, k));
            }
            if spec.weights_in_logits_dtype {
                l.dt(logits)
            } else {
                4
            }
        }
        Router::SigmoidBias => {
            // MiniMax-M2: `F.linear` in the input's dtype (the input saved
            // for the weight's gradient, as any linear), `sigmoid(logits
            // .float())` saves its fp32 result; the bias only picks; the
            // gathered weights are renormalised in place (`/=`): a clone
            // and the denominator. Source: transformers 5.23
            // `MiniMaxM2TopKRouter.forward`.
            let logits = l.linear_plain(x, h, e, 0);
            if router_lora && x_rg {
                l.save(x);
            }
            if l.rg(logits) {
                let probs = l.new_t(e, 4, true, Part::Router);
                l.save(probs);
                let top = l.new_t(k + 1, 4, true, Part::Router);
                l.save(top);
            }
            4
        }
        Router::SoftmaxFp32 | Router::SigmoidGrouped => {
            // F.linear(x.float(), W.float()): an fp32 copy of the input
            // (saved for the weight's gradient) and of the weight (for the
            // input's). An adapted router's weight needs a gradient too
            // (peft's `ParamWrapper`): Moonlight's all-linear LoRA rows
            // without checkpointing were T.h.4 bytes low per MoE layer
            // (trace of a 3-layer Moonlight, transformers 5.23: `_to_copy
            // (T, h) float32` alive from the forward to the layer's backward).
            // Under autocast `F.linear` casts both copies to bf16 and saves
            // those (traced: shrunk DeepSeek-V2, transformers 4.57.6,
            // `_to_copy (T, h) bfloat16` kept with full fine-tuning).
            let c = l.c;
            let dt = if c.mode == Mode::Amp || c.autocast_half {
                2
            } else {
                4
            };
            let xf = l.new_t(h, dt, x_rg, Part::Router);
            if w_tr || router_lora {
                l.save(xf);
            }
            if x_rg {
                l.weight_copies_uncached += dt * e * h;
            }
            let rg = x_rg || w_tr;
            if rg {
                let probs = l.new_t(e, 4, true, Part::Router);
                l.save(probs);
                if spec.router == Router::SigmoidGrouped {
                    // gathered weights normalised in place: a clone, and the
                    // denominator.
                    let top = l.new_t(k + 1, 4, true, Part::Router);
                    l.save(top);
                }
            }
            4
        }
        Router::SoftmaxGrouped => {
            // Mistral 4: the logits in the input's dtype (the input saved
            // for the weight's gradient, as any linear), `softmax` saves its
            // output (fp32 under autocast, which runs softmax in fp32); the
            // group scores and the masked copy only pick; the gathered
            // weights renormalised in place (`/=`): a clone and the
            // denominator. Source: transformers 5.23
            // `Mistral4TopkRouter.forward`.
            let logits = l.linear_plain(x, h, e, 0);
            if router_lora && x_rg {
                l.save(x);
            }
            let dt = if l.c.mode == Mode::Amp {
                4
            } else {
                l.dt(logits)
            };
            if l.rg(logits) {
                let probs = l.new_t(e, dt, true, Part::Router);
                l.save(probs);
                let top = l.new_t(k + 1, dt, true, Part::Router);
                l.save(top);
            }
            dt
        }
        Router::TopKSigmoid => {
            // Llama 4: the logits in the input's dtype, `topk` and the
            // `scatter_` into a `-inf` copy (both keep the int64 indices),
            // `sigmoid(scores.float())` keeps its fp32 output, cast back to
            // the logits' dtype. Source: transformers 5.23
            // `Llama4Router.forward`. Measured:
            // `scripts/measure/families/llama4/dense/`.
            let logits = l.linear_plain(x, h, e, 0);
            if router_lora && x_rg {
                l.save(x);
            }
            let dt = l.dt(logits);
            if l.rg(logits) {
                let idx = l.new_t(k, 8, false, Part::Router);
                l.save(idx);
                let probs = l.new_t(e, 4, true, Part::Router);
                l.save(probs);
            }
            dt
        }
        Router::TopKSoftmax => {
            let logits = l.linear_plain(x, h, e, e);
            let dt = l.dt(logits);
            if l.rg(logits) {
                // softmax over the k top logits, in their dtype.
                let p = l.new_t(k, dt, true, Part::Router);
                l.save(p);
            }
            dt
        }
    }
}

/// `GPT2Block` and `GPTBigCodeBlock`: LayerNorm → `c_attn` (addmm, h → q +
/// 2 kv) → attention → `c_proj` → dropout → residual → LayerNorm → `c_fc` →
/// activation → `c_proj` → dropout → residual.
fn gpt2_layer(l: &mut Ledger, x: Id) {
    let c = l.c;
    let a = c.arch;
    let (h, f, nh) = (u64::from(a.hidden), u64::from(a.ffn), u64::from(a.heads));
    let g = c.geometry;
    let qkv_w = g.q_width() + g.k_width() + g.v_width();
    let n1 = l.norm(x, h, 1);
    let qkv = l.linear(n1, h, qkv_w, qkv_w, M::CAttn);
    let rg = l.rg(qkv);
    let ab = l.dt(qkv);
    // SDPA keeps its fused kernel (no mask, RNG state only) with dropout on
    // CUDA; on CPU dropout sends it to the math path, which upcasts half
    // inputs to fp32 and materialises probabilities, mask and output.
    let fused = c.attn != Attn::Eager && (c.cuda || !c.p_attn);
    let o = if fused {
        let o = l.new_t(h, ab, rg, Part::Attention);
        let lse = l.new_t(nh, 4, rg, Part::Attention);
        if rg {
            l.save(qkv);
            l.save(o);
            l.save(lse);
            if c.cache_copies {
                let kv = l.new_t(g.k_width() + g.v_width(), ab, rg, Part::Attention);
                l.save(kv);
            }
        }
        o
    } else {
        let upcast = c.attn == Attn::Sdpa && ab == 2;
        let pb = if upcast { 4 } else { ab };
        if rg {
            let kept = if upcast {
                l.new_t(qkv_w, 4, rg, Part::Attention)
            } else {
                qkv
            };
            l.save(kept);
            let p = l.keyed(nh, pb, rg);
            l.save(p);
            l.probs_dropout(nh, pb, rg);
        }
        l.new_t(h, ab, rg, Part::Attention)
    };
    let proj = l.linear(o, h, h, h, M::CProjAttn);
    let d1 = l.dropout(proj, h, c.p_resid);
    let r1 = l.new_t(h, c.mode.residual(), l.rg(x) || l.rg(d1), Part::Residual);
    let n2 = l.norm(r1, h, 1);
    let m = plain_mlp(l, n2, (h, f));
    l.dropout(m, h, c.p_resid);
}

/// A plain MLP with biases (GPT-2's `c_fc`, the activation, `c_proj`;
/// GPT-NeoX's `dense_h_to_4h`, `gelu`, `dense_4h_to_h`): the up
/// projection's output is what the activation saves, and its output what
/// the down projection saves.
fn plain_mlp(l: &mut Ledger, x: Id, (h, f): (u64, u64)) -> Id {
    let c = l.c;
    let (up, down) = c.spec.layout.plain_mlp();
    let fc = l.linear(x, h, f, f, up);
    let (rg, gb) = (l.rg(fc), l.dt(fc));
    if rg {
        l.ts[fc].part = Part::Mlp;
        l.save(fc);
        if c.spec.act == Act::GeluNew {
            // gelu_new in Python: pow saves x, tanh saves its output, and
            // (0.5 * x) * (1 + tanh(...)) saves both factors.
            for _ in 0..3 {
                let t = l.new_t(f, gb, true, Part::Mlp);
                l.save(t);
            }
        }
    }
    let g = l.new_t(f, gb, rg, Part::Mlp);
    l.linear(g, f, h, h, down)
}

/// A GPT-NeoX layer with `use_parallel_residual` (transformers 5.23
/// `GPTNeoXLayer.forward`): attention on `input_layernorm(x)`, the MLP on
/// `post_attention_layernorm(x)`, `mlp + attn + x`. Both norms save `x`
/// itself (one storage); the attention's output waits through the MLP for
/// the sum, which saves nothing.
fn neox_layer(l: &mut Ledger, x: Id) {
    let c = l.c;
    let a = c.arch;
    let (h, f) = (u64::from(a.hidden), u64::from(a.ffn));
    let n1 = l.norm(x, h, 1);
    let attn = head_attention(l, n1, u64::from(a.heads), u64::from(a.kv_heads));
    let attn = l.dropout(attn, h, c.p_resid);
    let n2 = l.norm(x, h, 1);
    l.alive = (1 << attn) | (1 << n2);
    let m = plain_mlp(l, n2, (h, f));
    l.alive = 0;
    l.dropout(m, h, c.p_resid);
}

/// The parts outside the layers: embedding, final norm and the output
/// head's input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outer {
    /// Saved per token (embedding dropout mask, final norm, head input).
    pub saved: Saved,
    /// Of `saved`, bytes per token the embedding saves (its dropout mask):
    /// alive until the end of backward, where the rest goes with the head's
    /// backward.
    pub embedding: u64,
    /// Bytes per token of the final hidden state when nothing saves it: it
    /// is still alive while the loss is computed (the forward peak).
    pub final_hidden_transient: u64,
    /// Bytes per sequence position saved once (RoPE's cos/sin for position
    /// ids of batch 1; GPT-2's int64 position ids).
    pub per_position: u64,
    /// The embeddings are saved here (Gemma 4's per-layer inputs project
    /// them): layer 0's checkpointed input is that same tensor.
    pub embeddings_saved: bool,
    /// Gemma 4's per-layer inputs need a gradient.
    pub ple_grad: bool,
}

/// Gemma 4's per-layer inputs, made once from the embeddings `emb`
/// (`get_per_layer_inputs`, `project_per_layer_inputs`, transformers
/// 5.23): the per-layer table's lookup scaled, the embeddings'
/// projection scaled and normed over each layer's slice, their sum
/// scaled: `layers × p` a token, which every layer's product keeps a view
/// of to the end of backward. Returns whether they need a gradient.
fn per_layer_inputs(l: &mut Ledger, emb: Id) -> bool {
    let c = l.c;
    let a = c.arch;
    let (h, p) = (u64::from(a.hidden), u64::from(a.ple_dim));
    let w = u64::from(a.layers) * p;
    let res = c.mode.residual();
    l.new_t(w, res, c.full, Part::Residual);
    let identity = l.new_t(w, res, c.full, Part::Residual);
    let proj = l.linear(emb, h, w, 0, M::PerLayerModelProjection);
    let scaled = l.new_t(w, l.dt(proj), l.rg(proj), Part::Residual);
    let normed = l.norm(scaled, w, u64::from(a.layers));
    let rg = l.rg(identity) || l.rg(normed);
    l.new_t(w, l.dt(normed), rg, Part::Residual);
    let inputs = l.new_t(w, l.dt(normed), rg, Part::Residual);
    if rg {
        l.save(inputs);
    }
    rg
}

/// The embedding and the head: what they save. `input_grad`: the token
/// embedding's output requires a gradient (layer 0's input does, see
/// `Inputs::first_input_grad`).
pub fn outer(c: &Ctx, input_grad: bool) -> Outer {
    let a = c.arch;
    let spec = c.spec;
    let h = u64::from(a.hidden);
    let mut l = Ledger::new(c);
    let mut per_position = 0;
    let last = match spec.positions {
        Positions::Learned => {
            // wte(ids) + wpe(pos): the sum, then embd dropout; wpe's backward
            // keeps the int64 position ids.
            if input_grad && !c.full {
                // `enable_input_require_grads` (LoRA with checkpointing) makes
                // wte's output a leaf that requires a gradient: its
                // AccumulateGrad node keeps it until backward is through, and
                // the sum's dropout now saves its mask
                // (scripts/measure/long/NOTES.md section 6: GPT-2 and
                // StarCoder rows were T.h.3 bytes low).
                let wte = l.new_t(h, c.mode.residual(), true, Part::Residual);
                l.save(wte);
            }
            let sum = l.new_t(h, c.mode.residual(), c.full || input_grad, Part::Residual);
            l.dropout(sum, h, c.p_embd);
            if c.full {
                per_position += 8;
            }
            l.new_t(h, c.mode.residual(), true, Part::Residual)
        }
        Positions::Rotary => {
            // cos and sin of shape (1, seq, rotary width) per RoPE table:
            // fp32 unless pure half. Gemma 4's full-attention table spans
            // its global layers' heads.
            let rotary = c.geometry.rotary_width();
            let global = if spec.global_attention && spec.rope_tables > 1 {
                u64::from(a.global_heads().head_dim)
            } else {
                rotary
            };
            let widths = u64::from(spec.rope_tables.saturating_sub(1)) * rotary
                + u64::from(spec.rope_tables.min(1)) * global;
            // DeepSeek-V2's and Llama 4's one complex64 table
            // (`freqs_cis`, `torch.polar`): 8 bytes each of width / 2 in
            // every dtype (measured: `scripts/measure/families/llama4/attn/
            // NOTES.md`; tiny DeepSeek-V2 under autocast, forward +0.02% →
            // exact in `families.jsonl`).
            // Only attention layers keep them: a model of recurrent layers
            // alone frees them when its forward returns (the shrunk LFM2
            // and Qwen3.5 configs without attention,
            // `scripts/measure/families/lfm2/train/`).
            let kept = u64::from(a.linear_layers < a.layers);
            per_position += kept
                * if spec.rope == RopeStyle::Complex {
                    4 * widths
                } else {
                    2 * widths * if c.mode == Mode::Half { 2 } else { 4 }
                };
            // GPT-NeoX's `emb_dropout` (`hidden_dropout`) keeps its mask
            // when the embeddings need a gradient. Measured: Pythia-1B at
            // 3 layers with dropout 0.1 (`families.jsonl`), the forward
            // B·S·h bytes low without it.
            if c.p_embd {
                let emb = l.new_t(h, c.mode.residual(), c.full || input_grad, Part::Residual);
                l.dropout(emb, h, true);
            }
            l.new_t(h, c.mode.residual(), true, Part::Residual)
        }
    };
    let ple_grad = spec.per_layer_embeddings && a.ple_dim > 0 && per_layer_inputs(&mut l, last);
    let embeddings_saved = l.ts[last].saved;
    let embedding = l.result().token_bytes();
    let n = l.norm(last, h, 1);
    // The last layer's output is the final norm's input: count it here.
    l.ts[last].part = Part::Residual;
    let copies = l.weight_copies_uncached;
    l.linear_plain(n, h, u64::from(a.vocab), 0);
    if c.head_half {
        // A bf16 head under autocast is used as it is.
        l.weight_copies_uncached = copies;
    }
    let final_hidden_transient = if l.ts[n].saved {
        0
    } else {
        l.ts[n].width * l.dt(n)
    };
    Outer {
        saved: l.result(),
        embedding,
        final_hidden_transient,
        per_position,
        embeddings_saved,
        ple_grad,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::presets::PRESETS;
    use crate::train::run::LoraRank;
    use crate::train::run::Prob;
    use crate::train::run::Training;
    use crate::train::run::Transformers;

    /// Every family, precision and option fits the fixed ledger with room
    /// to spare, so `push` never has to reuse its last slot.
    #[test]
    fn ledgers_never_fill_up() {
        let mut most = 0;
        for p in PRESETS {
            let mixers: &[Mixer] = if p.arch.family.spec().linear.is_some() {
                &[Mixer::Attention, Mixer::Recurrent]
            } else {
                &[Mixer::Attention]
            };
            for dtype in Dtype::ALL {
                for attn in Attn::ALL {
                    for (lora, tf) in [None, LoraRank::new(8)]
                        .into_iter()
                        .flat_map(|l| Transformers::ALL.iter().map(move |tf| (l, *tf)))
                    {
                        for cuda in [true, false] {
                            let t = Training {
                                dtype: *dtype,
                                attn: *attn,
                                lora_r: lora,
                                lora_dropout: Prob::new(500).expect("0.05 is a probability"),
                                transformers: tf,
                                cuda_like: cuda,
                                dropout: Prob::new(1000),
                                ..Training::default()
                            };
                            // Every layer's own context (Gemma 4's differ).
                            let base = Ctx::new(&p.arch, &t);
                            for (rg, &mixer, layer) in [true, false]
                                .into_iter()
                                .flat_map(|rg| mixers.iter().map(move |m| (rg, m)))
                                .flat_map(|(rg, m)| (0..p.arch.layers).map(move |l| (rg, m, l)))
                            {
                                let c = base.at_layer(layer);
                                // An MoE layer where the model has experts
                                // (Gemma 4's are optional).
                                let kinds = [LayerKind::Dense, LayerKind::Moe];
                                for kind in kinds
                                    .into_iter()
                                    .filter(|k| *k == LayerKind::Dense || p.arch.moe().is_some())
                                {
                                    let mut l = Ledger::new(&c);
                                    let x = l.new_t(1, 4, rg, Part::Residual);
                                    match p.arch.family.spec().layout {
                                        Layout::Gpt2 => gpt2_layer(&mut l, x),
                                        Layout::Llama => decoder_layer(&mut l, x, kind, mixer),
                                        Layout::NeoX => neox_layer(&mut l, x),
                                    }
                                    most = most.max(l.len);
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(
            most + 12 <= MAX_TENSORS,
            "a layer used {most} of {MAX_TENSORS} slots"
        );
    }
}
