//! The model as llama.cpp caches and computes it: which layers keep a
//! key/value cache and how wide its rows are, which of them slide, the
//! recurrent state of a hybrid, and the widths the compute graph holds.
//!
//! Built from the [`Architecture`] ([`LocalModel::of`], reading its
//! [`KvGeometry`] and its family's `Spec`, never the family), or written
//! out for a model vramfit has no family for (a hybrid, a layout with two
//! head sizes): every field is public.

use crate::model::family::{Recurrence, Sliding};
use crate::model::{Architecture, KvGeometry, LayerAttention, LayerHeads, LayerKind};

/// A set of a model's layers, as a rule on the layer index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// No layer.
    None,
    /// Every layer.
    All,
    /// Layer `il` when `il % n < n - 1`: llama.cpp's
    /// `llama_hparams::set_swa_pattern(n)` (`src/llama-hparams.cpp`; 0:
    /// every layer): Gemma 2 and gpt-oss `n = 2`, Gemma 3 `n = 6`.
    AllButEvery(u32),
    /// Layer `il` when `il % n == n - 1` (every n-th layer from the n-th:
    /// the full-attention layers of a hybrid with `full_attention_interval
    /// = n`; 0: none).
    Every(u32),
    /// The first `n` layers.
    First(u32),
    /// The layers from the `n`-th on (those [`Pattern::First`] leaves).
    From(u32),
    /// [`Pattern::Every`]`(n)` and layer `last` (Kimi Linear's
    /// full-attention layers: every fourth and the last).
    EveryAndLast(u32, u32),
    /// The layers [`Pattern::EveryAndLast`] leaves.
    AllButEveryAndLast(u32, u32),
}

impl Pattern {
    /// Whether layer `il` is in the set.
    pub const fn picks(self, il: u32) -> bool {
        match self {
            Pattern::None => false,
            Pattern::All => true,
            Pattern::AllButEvery(0) => true,
            Pattern::AllButEvery(n) => il % n < n - 1,
            Pattern::Every(0) => false,
            Pattern::Every(n) => il % n == n - 1,
            Pattern::First(n) => il < n,
            Pattern::From(n) => il >= n,
            Pattern::EveryAndLast(n, last) => il == last || (n > 0 && il % n == n - 1),
            Pattern::AllButEveryAndLast(n, last) => il != last && (n == 0 || il % n < n - 1),
        }
    }

    /// How many of the layers `0..hi` are in the set (closed form).
    pub const fn below(self, hi: u32) -> u32 {
        match self {
            Pattern::None | Pattern::Every(0) => 0,
            Pattern::All | Pattern::AllButEvery(0) => hi,
            Pattern::AllButEvery(n) => (hi / n) * (n - 1) + min(hi % n, n - 1),
            Pattern::Every(n) => hi / n,
            Pattern::First(n) => min(hi, n),
            Pattern::From(n) => hi - min(hi, n),
            Pattern::EveryAndLast(n, last) => every_and_last(n, last, hi),
            Pattern::AllButEveryAndLast(n, last) => hi - every_and_last(n, last, hi),
        }
    }

    /// How many of the layers `lo..hi` are in the set.
    pub const fn count(self, lo: u32, hi: u32) -> u32 {
        if hi <= lo {
            0
        } else {
            self.below(hi) - self.below(lo)
        }
    }
}

/// How many of the layers `0..hi` are every `n`-th layer (from the
/// `n`-th) or layer `last`.
const fn every_and_last(n: u32, last: u32, hi: u32) -> u32 {
    let every = match hi.checked_div(n) {
        Some(k) => k,
        None => 0,
    };
    let extra = last < hi && (n == 0 || last % n != n - 1);
    every + extra as u32
}

const fn min(a: u32, b: u32) -> u32 {
    if a < b {
        a
    } else {
        b
    }
}

/// One layer's cache row widths, in elements per cell: `n_embd_k_gqa(il)`
/// and `n_embd_v_gqa(il)` (`src/llama-hparams.cpp`: head size × key/value
/// heads); `v` 0 when no V tensor is kept (latent attention since b7832).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Width {
    pub k: u64,
    pub v: u64,
}

/// What llama.cpp's memory module allocates per cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheModel {
    /// Repeating layers (`n_layer`).
    pub layers: u32,
    /// Layers with a key/value cache (`llama_hparams::has_kv`; a hybrid's
    /// attention layers, `create_memory`'s `filter_attn`).
    pub kv_layers: Pattern,
    /// Layers that attend within the window (`hparams.is_swa`): their cache
    /// is the SWA cache of `llama_kv_cache_iswa`. [`Pattern::None`]: no
    /// SWA cache (`swa_type == LLAMA_SWA_TYPE_NONE`).
    pub swa_layers: Pattern,
    /// The window (`n_swa`), tokens.
    pub window: u32,
    /// Row widths of a full-attention layer and of a sliding one.
    pub full: Width,
    pub swa: Width,
    /// Head sizes (`n_embd_head_k`, `n_embd_head_v`): a quantized cache's
    /// block must divide them with flash attention.
    pub head_k: u64,
    pub head_v: u64,
    /// Latent attention: the V width that builds before b7832 stored
    /// (`kv_lora_rank`); 0 for other attention.
    pub mla_v: u64,
    /// Layers with a recurrent state (`hparams.is_recr`).
    pub recurrent_layers: Pattern,
    /// Bytes of one layer's recurrent state per cell: `(n_embd_r() +
    /// n_embd_s()) × 4` (f32, `llama_memory_recurrent`); 0: none.
    pub recurrent: u128,
    /// DeepSeek Sparse Attention: the width of the indexer's key cache
    /// per cell in every layer of the main cache (0: none). Its own
    /// `llama_kv_cache` beside the latent's, of one head of
    /// `index_head_dim`, no V, the latent's type, cells and streams, on the
    /// layer's device (`llama_kv_cache_dsa`, `src/llama-kv-cache-dsa.cpp:31-53`,
    /// b10488): the log's second `KV buffer size` line. Measured:
    /// `scripts/measure/families/dsa/llamacpp/`.
    pub indexer: u64,
}

impl CacheModel {
    /// Bytes of one context checkpoint of a hybrid's sequence, as
    /// llama-server takes it (`create_checkpoint`, `update_tgt` with
    /// `LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY`: the recurrent memory only):
    /// the magic and sequence id from [`builds::STATE_MAGIC`], the cell
    /// count, its position and sequence count, the transposition flag and
    /// layer count, then for each recurrent layer the R and S rows, each
    /// with its type and row size (`llama_memory_recurrent::state_write`,
    /// b10499 `src/llama-memory-recurrent.cpp`). 0 without recurrent
    /// layers.
    ///
    /// [`builds::STATE_MAGIC`]: super::params::builds::STATE_MAGIC
    pub fn checkpoint(&self, layers: u32, build: u32) -> u128 {
        let n = u128::from(self.recurrent_layers.count(0, layers));
        if n == 0 || self.recurrent == 0 {
            return 0;
        }
        let magic = if build >= super::params::builds::STATE_MAGIC {
            8
        } else {
            0
        };
        magic + 4 + 8 + 8 + n * (2 * (4 + 8) + self.recurrent)
    }

    /// Whether layer `il` keeps a key/value cache, and whether it is a
    /// sliding one.
    pub const fn kind(&self, il: u32) -> Option<bool> {
        if self.kv_layers.picks(il) {
            Some(self.swa_layers.picks(il))
        } else {
            None
        }
    }

    /// Layers with a cache of each kind: (full, sliding).
    pub fn counts(&self) -> (u32, u32) {
        self.counts_in(0, self.layers)
    }

    /// Layers of `lo..hi` with a cache of each kind: (full, sliding). In
    /// closed form when every layer or none keeps a cache (every model
    /// [`LocalModel::of`] makes); else layer by layer.
    pub fn counts_in(&self, lo: u32, hi: u32) -> (u32, u32) {
        let kv = self.kv_layers.count(lo, hi);
        if kv == 0 {
            return (0, 0);
        }
        if kv == hi - lo {
            let swa = self.swa_layers.count(lo, hi);
            return (kv - swa, swa);
        }
        (lo..hi).fold((0, 0), |(f, s), il| match self.kind(il) {
            Some(true) => (f, s + 1),
            Some(false) => (f + 1, s),
            None => (f, s),
        })
    }

    /// Whether the model has a sliding-window cache.
    pub fn has_swa(&self) -> bool {
        self.counts().1 > 0
    }
}

/// Widths the compute graph holds per token, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// `n_embd`.
    pub n_embd: u64,
    pub n_vocab: u64,
    /// Query heads.
    pub n_head: u64,
    /// All query heads together (latent attention: the absorbed query,
    /// `n_head × (kv_lora_rank + rope)`).
    pub q: u64,
    /// Attention's output before its projection.
    pub attn_out: u64,
    /// The widest MLP a token goes through: a dense layer's `n_ff`, or the
    /// experts it is routed to (`n_expert_used × n_ff_exp`), or the shared
    /// expert.
    pub ffn: u64,
}

/// Whether a latent-attention GGUF carries the MLA keys
/// (`attention.key_length_mla`): with them llama.cpp caches the latent
/// (`llama_hparams::is_mla`); without them, every head's key and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MlaKeys {
    Present,
    Absent,
}

/// The model as the local runners see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalModel {
    pub cache: CacheModel,
    pub dims: Dims,
    /// `n_ctx_train` (the GGUF's `context_length`; 0: unknown).
    pub n_ctx_train: u32,
    /// Routed experts (`n_expert`; 0: dense).
    pub n_expert: u32,
    /// The fewest key/value heads of any layer (`HeadCountKVMin` of the
    /// GGUF's `attention.head_count_kv`, a list on Gemma 4's larger
    /// models), which Ollama's pre-flight reads.
    pub n_head_kv_min: u64,
}

impl LocalModel {
    /// `a` as mlx-lm builds it: the layers sharing keys and values are the
    /// last `kv_shared_layers` (`first_kv_shared_layer_idx`, mlx-lm
    /// d78bf58e `models/gemma3n.py`, `gemma4_text.py`), whatever llama.cpp
    /// fixes.
    pub fn for_mlx(a: &Architecture) -> LocalModel {
        let mut m = LocalModel::of(a, MlaKeys::Present);
        m.cache.kv_layers = shared_pattern(a, 0).unwrap_or(hybrid_patterns(a).0);
        m
    }

    /// `a` as llama.cpp loads its GGUF (converted by `convert_hf_to_gguf`).
    pub fn of(a: &Architecture, mla: MlaKeys) -> LocalModel {
        let g = KvGeometry::of(a);
        let w = attention(&g, mla);
        let (kv_layers, recurrent_layers) = hybrid_patterns(a);
        let (full, global) = global_rows(a, &w);
        let cache = CacheModel {
            layers: a.layers,
            kv_layers: shared_pattern(a, crate::model::gguf::kv_from_start(a.family))
                .unwrap_or(kv_layers),
            swa_layers: swa_pattern(a),
            window: a.sliding_window,
            full,
            swa: w.row,
            head_k: w.head_k,
            head_v: w.head_v,
            mla_v: w.mla_v,
            recurrent_layers,
            recurrent: recurrent_state(a),
            indexer: if a.family.spec().indexer {
                u64::from(a.index_head_dim)
            } else {
                0
            },
        };
        LocalModel {
            cache,
            dims: Dims {
                n_embd: u64::from(a.hidden),
                n_vocab: u64::from(a.vocab),
                n_head: g.heads(),
                q: w.q.max(global.q(a.heads)),
                attn_out: w.attn_out.max(global.q(a.heads)),
                ffn: ffn_width(a),
            },
            n_ctx_train: a.positions,
            n_expert: a.experts,
            n_head_kv_min: kv_heads_min(a, &w),
        }
    }
}

/// A global layer's cache row and heads: Gemma 4's full-attention layers
/// have their own head width and key/value heads (`n_embd_k_gqa(il)` =
/// `n_embd_head_k(il) × n_head_kv(il)`, `src/llama-hparams.cpp`, from
/// `attention.key_length` and the per-layer `attention.head_count_kv` the
/// converter writes, `conversion/gemma.py` `Gemma4Model.set_gguf_parameters`).
/// A layer whose keys are its values still stores both: the cache
/// allocates a V tensor for every layer that is not latent attention
/// (`llama_kv_cache::llama_kv_cache`, `has_v = !is_mla`;
/// `src/models/gemma4.cpp` passes K as V). Any other model: the row of
/// every layer.
fn global_rows(a: &Architecture, w: &Attention) -> (Width, LayerHeads) {
    let global = a.global_heads();
    if !a.family.spec().global_attention {
        return (w.row, global);
    }
    let row = global.kv();
    (Width { k: row, v: row }, global)
}

/// The layers with a cache when the last `kv_shared_layers` reuse earlier
/// ones: the first `n_layer − shared` (`hparams.n_layer_kv_from_start`,
/// `has_kv(il)`, `src/llama-hparams.cpp`; set by `src/models/gemma4.cpp`
/// `load_arch_hparams` from `attention.shared_kv_layers`), or the first
/// `fixed` when the loader fixes it (Gemma 3n's 20,
/// `Converter::kv_from_start` in `model::gguf`). `None`:
/// no sharing.
fn shared_pattern(a: &Architecture, fixed: u32) -> Option<Pattern> {
    let sharing = a.family.spec().kv_sharing;
    match fixed {
        0 => (sharing && a.kv_shared_layers > 0)
            .then(|| Pattern::First(a.layers.saturating_sub(a.kv_shared_layers))),
        n => sharing.then(|| Pattern::First(n.min(a.layers))),
    }
}

/// `HeadCountKVMin`: the sliding layers' heads, or fewer on a global
/// layer that has its own (the converter writes a per-layer list only
/// then); the row over the head for other attention.
fn kv_heads_min(a: &Architecture, w: &Attention) -> u64 {
    // LFM2's and Granite 4.0-H's converters write 0 key/value heads for
    // their recurrent layers (`Recurrence::zero_kv_heads`): the list's
    // least is 0, which Ollama's `PredictServerVRAM` takes as 1
    // (`llm/llama_server.go`, fb30760).
    let zeros = a
        .family
        .spec()
        .linear
        .is_some_and(|l| l.kind.zero_kv_heads());
    if zeros && a.linear_layers > 0 {
        return 1;
    }
    if a.family.spec().global_attention {
        let global = a.global_heads().kv_heads;
        return u64::from(a.kv_heads.min(global));
    }
    match w.head_k {
        0 => 1,
        h => (w.row.k / h).max(1),
    }
}

/// A layer's attention as llama.cpp holds it.
struct Attention {
    row: Width,
    head_k: u64,
    head_v: u64,
    mla_v: u64,
    q: u64,
    attn_out: u64,
}

/// Every key/value head's row (`n_head_kv × head size`); latent attention
/// with the MLA keys one 576-wide head, the latent and the rotary key, its
/// queries absorbed to that width (`src/models/deepseek2.cpp`); without
/// the keys every head's key (`qk_nope + rope`) and value.
fn attention(g: &KvGeometry, mla: MlaKeys) -> Attention {
    let heads = Attention {
        row: Width {
            k: g.k_width(),
            v: g.v_width(),
        },
        head_k: 0,
        head_v: 0,
        mla_v: 0,
        q: g.q_width(),
        attn_out: g.o_width(),
    };
    match (g.layer, mla) {
        (LayerAttention::Latent(m), MlaKeys::Present) => Attention {
            row: Width {
                k: m.kv_lora_rank + m.rope_dim,
                v: 0,
            },
            head_k: m.kv_lora_rank + m.rope_dim,
            head_v: m.kv_lora_rank,
            mla_v: m.kv_lora_rank,
            q: m.heads * (m.kv_lora_rank + m.rope_dim),
            attn_out: m.heads * m.kv_lora_rank,
        },
        (LayerAttention::Latent(m), MlaKeys::Absent) => Attention {
            head_k: m.qk_head_dim,
            head_v: m.v_head_dim,
            ..heads
        },
        (LayerAttention::Heads { head_dim, .. }, _) => Attention {
            head_k: head_dim,
            head_v: head_dim,
            ..heads
        },
    }
}

/// The layers with a key/value cache and those with a recurrent state: a
/// Gated DeltaNet hybrid's full-attention layers and its linear ones
/// (`llama_hparams::is_recr`; `create_memory` gives the hybrid memory's
/// cache only the layers that are not recurrent, `filter_attn`), every
/// layer a cache otherwise. llama.cpp b10488's `qwen35moe` reads the
/// pattern from `full_attention_interval` (default 4): layer `il` is
/// recurrent when `il < n_layer() && (il + 1) % interval != 0`
/// (`src/models/qwen35moe.cpp` `load_arch_hparams`; an MTP block past
/// `n_layer()` is neither); a count that is not the default pattern's is
/// read as the first layers.
fn hybrid_patterns(a: &Architecture) -> (Pattern, Pattern) {
    let Some(rule) = a.family.spec().linear else {
        return (Pattern::All, Pattern::None);
    };
    if a.linear_layers == 0 {
        (Pattern::All, Pattern::None)
    } else if rule.count(a.layers) == a.linear_layers && rule.last_full {
        let last = a.layers.saturating_sub(1);
        (
            Pattern::EveryAndLast(rule.full_every, last),
            Pattern::AllButEveryAndLast(rule.full_every, last),
        )
    } else if rule.count(a.layers) == a.linear_layers {
        (
            Pattern::Every(rule.full_every),
            Pattern::AllButEvery(rule.full_every),
        )
    } else {
        // Nemotron-H's MLP-only layers come after the recurrent ones
        // ([`Architecture::ffn_only_at`]): neither a cache nor a state
        // (`create_memory`'s filters keep the layers whose `n_ff` is 0,
        // `src/llama-model.cpp`; `is_recr`: no key/value heads and no
        // `n_ff`, `src/models/nemotron-h.cpp`).
        (
            Pattern::From(a.linear_layers.saturating_add(a.ffn_layers)),
            Pattern::First(a.linear_layers),
        )
    }
}

/// One recurrent layer's state per sequence, in bytes: `(n_embd_r() +
/// n_embd_s()) × 4` (f32, `llama_memory_recurrent`), with the Gated
/// DeltaNet's `ssm_d_conv = linear_conv`, `ssm_d_inner = Hv·Dv`,
/// `ssm_d_state = Dk` and `ssm_n_group = Hk`: `n_embd_r = (d_conv − 1) ×
/// (d_inner + 2·n_group·d_state)`, the convolution's last steps over q, k
/// and v, and `n_embd_s = d_state × d_inner`, the state of every value head
/// (`src/llama-hparams.cpp`). 0 without one.
///
/// LFM2's short convolution: `n_embd_r = n_embd × (L_cache − 1)` (the
/// `n_shortconv_l_cache` branch), no `n_embd_s`.
fn recurrent_state(a: &Architecture) -> u128 {
    let Some(rule) = a.family.spec().linear.filter(|_| a.linear_layers > 0) else {
        return 0;
    };
    if rule.kind == Recurrence::ShortConv {
        let steps = u128::from(a.linear_conv.saturating_sub(1));
        return u128::from(a.hidden) * steps * 4;
    }
    let (conv, value) = a.linear_widths();
    let steps = u128::from(a.linear_conv.saturating_sub(1));
    let r = steps * u128::from(conv);
    let s = u128::from(a.linear_k_dim) * u128::from(value);
    (r + s) * 4
}

/// The layers llama.cpp runs with a window: the family's rule (or the
/// config's first `sliding_layers`) when some layers slide and some do
/// not. A model whose every layer slides (Mistral 7B v0.1, Mixtral,
/// Phi-3) runs without a window cache: llama.cpp's `llama` architecture
/// reads no window and `phi3` turns it off ("Phi SWA is currently
/// disabled", `src/models/phi3.cpp:13-24`); the interleaved architectures
/// set `swa_type` (`src/models/gemma2.cpp:4-14`,
/// `src/models/openai-moe.cpp:6-11`).
fn swa_pattern(a: &Architecture) -> Pattern {
    if a.sliding_window == 0 || a.sliding_layers == 0 || a.sliding_layers >= a.layers {
        return Pattern::None;
    }
    let rule = a.sliding_rule();
    if rule.count(a.layers) != a.sliding_layers {
        return Pattern::First(a.sliding_layers);
    }
    match rule {
        Sliding::None => Pattern::None,
        Sliding::All => Pattern::All,
        Sliding::EveryOther => Pattern::AllButEvery(2),
        Sliding::AllButEvery(n) => Pattern::AllButEvery(n),
    }
}

/// The widest MLP of any layer kind the model has.
fn ffn_width(a: &Architecture) -> u64 {
    a.layer_kinds()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, _)| match kind {
            // Gemma 4 E2B's layers sharing keys and values have an MLP
            // twice as wide (`n_ff(il)`, the converter's per-layer
            // `feed_forward_length`).
            LayerKind::Dense => a.ffn_at(a.layers.saturating_sub(1)),
            LayerKind::Moe => {
                let routed = u64::from(a.experts_per_token) * u64::from(a.moe_ffn);
                routed.max(u64::from(a.shared_experts) * u64::from(a.moe_ffn))
            }
        })
        .max()
        .unwrap_or(0)
}
