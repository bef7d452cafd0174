//! mlx-lm's generation on Apple silicon (mlx-lm `d78bf58e`, mlx
//! `846d1762`): the key/value cache as it grows, quantized or not, the
//! prompt's chunks, and the limits MLX sets from the GPU's working set.
//!
//! `mlx_lm/models/cache.py`:
//! - `KVCache.update_and_fetch` (`:333-356`): `step = 256`; when a call's
//!   `S` tokens do not fit, zeros of `ceil(S / 256) × 256` tokens are
//!   concatenated to the cache (trimmed first to its tokens when those are
//!   not a multiple of 256). The cache holds its capacity, not its tokens.
//! - `QuantizedKVCache` (`:232-300`, `group_size` 64, `bits` 8 by
//!   default): per K and V, the values packed in `uint32` (`dim × bits /
//!   32` words) and a scale and a bias per group in the keys' dtype; it
//!   grows the same way. `generate.py: maybe_quantize_kv_cache` (`:290-295`)
//!   turns each cache into one once `quantized_kv_start` tokens are in it,
//!   keeping its capacity; a `RotatingKVCache` refuses ("RotatingKVCache
//!   Quantization NYI", `:551-552`).
//! - `RotatingKVCache(max_size)` (`:410-550`): a sliding layer's cache
//!   (`make_cache` of gpt-oss, Gemma 3), or every layer's with
//!   `max_kv_size`: grows by 256 up to `max_size`, then rotates in place; a
//!   prompt chunk is concatenated to the last `max_size - 1` tokens.
//!
//! `generate.py: generate_step` (`:298-470`): the prompt but its last token
//! in chunks of `prefill_step_size` (2048), `mx.clear_cache()` after each;
//! the last prompt token, then one token per step, `max_tokens` steps.
//! The chunks compute no logits (only the cache is evaluated).

use super::model::{LocalModel, Pattern};
use crate::model::family::{Blocks, Recurrence};
use crate::model::{Architecture, KvGeometry, LayerAttention};
use std::fmt;

/// mlx-lm's generation settings, by its argument names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mlx {
    /// Prompt tokens.
    pub prompt: u32,
    /// `max_tokens`: tokens generated.
    pub max_tokens: u32,
    /// `prefill_step_size` (2048; 512 in `speculative_generate_step`).
    pub prefill_step_size: u32,
    /// `kv_bits` (`None`: an unquantized cache), `kv_group_size` (64),
    /// `quantized_kv_start` (0).
    pub kv_bits: Option<u32>,
    pub kv_group_size: u32,
    pub quantized_kv_start: u32,
    /// `max_kv_size`: every layer a `RotatingKVCache` of this size (keeps
    /// 4), for a model without its own `make_cache`.
    pub max_kv_size: Option<u32>,
    /// Bytes per element of the model's activations (bf16, f16: 2).
    pub dtype_bytes: u32,
}

impl Mlx {
    /// `generate_step`'s defaults for a prompt and a generation.
    pub const fn defaults(prompt: u32, max_tokens: u32) -> Mlx {
        Mlx {
            prompt,
            max_tokens,
            prefill_step_size: 2048,
            kv_bits: None,
            kv_group_size: 64,
            quantized_kv_start: 0,
            max_kv_size: None,
            dtype_bytes: 2,
        }
    }
}

/// Why mlx-lm refuses the settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MlxError {
    /// "RotatingKVCache Quantization NYI".
    RotatingQuantized,
    /// `mx.quantize` needs the group to divide a row and bits in 2..=8.
    Quantize { width: u64, group: u32, bits: u32 },
    /// `prefill_step_size` 0.
    ZeroStep,
    /// A Gated DeltaNet hybrid whose count of linear layers is not the
    /// interval's: mlx-lm makes layer `i` linear when `(i + 1) %
    /// full_attention_interval != 0` (`qwen3_5.py:213`,
    /// `qwen3_next.py`), whatever `layer_types` says.
    HybridPattern {
        linear: u32,
        interval: u32,
        expected: u32,
    },
    /// A model of one-thing layers ([`crate::model::family::Blocks::Single`])
    /// without an attention layer or without a recurrent one: mlx-lm's
    /// Nemotron-H takes its masks from the caches of the first of each
    /// (`fa_idx`, `ssm_idx`, `nemotron_h.py:467-490`), past the cache list's
    /// end when there is none (`IndexError`; measured on `M-M`,
    /// `scripts/measure/mlx/nemotron_h_NOTES.md`).
    NoLayerOfKind { attention: bool },
    /// Kimi Linear's latent attention with a quantized cache: its rotary
    /// scores take the cache's values as an array
    /// (`q_pe @ k_pe.swapaxes(-1, -2)`, `kimi_linear.py:209`), which a
    /// `QuantizedKVCache` returns as a tuple (`AttributeError`; measured,
    /// `scripts/measure/families/kimi_linear/mlx/raw/rows.jsonl`).
    LatentQuantized,
}

impl fmt::Display for MlxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MlxError::RotatingQuantized => f.write_str(
                "mlx-lm cannot quantize a rotating (sliding-window or max_kv_size) cache",
            ),
            MlxError::Quantize { width, group, bits } => write!(
                f,
                "mlx cannot quantize rows of {width} in groups of {group} at {bits} bits"
            ),
            MlxError::ZeroStep => f.write_str("prefill_step_size must be at least 1"),
            MlxError::LatentQuantized => {
                f.write_str("mlx-lm's Kimi Linear fails with kv_bits")
            }
            MlxError::HybridPattern {
                linear,
                interval,
                expected,
            } => write!(
                f,
                "mlx-lm makes every layer but each {interval}th a Gated DeltaNet layer (full_attention_interval), {expected} of them here: linear_layers={linear} is another pattern, which it does not run"
            ),
            MlxError::NoLayerOfKind { attention } => write!(
                f,
                "mlx-lm reads its masks from the first {} layer's cache, which this model does not have (it fails with an IndexError)",
                if *attention { "attention" } else { "recurrent" }
            ),
        }
    }
}

impl std::error::Error for MlxError {}

/// What the generation holds at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlxReport {
    /// Tokens in the cache (`prompt + max_tokens`).
    pub tokens: u64,
    /// Cells a full-attention layer's cache holds, and a rotating one's
    /// (0: none).
    pub capacity: u64,
    pub window_capacity: u64,
    /// The cache's bytes, every layer.
    pub kv: u128,
    /// The Gated DeltaNet layers' `ArraysCache` (0 without them): each
    /// holds its convolution's last `kernel − 1` inputs in the model's
    /// dtype and the recurrent state in fp32, made by the first chunk and
    /// replaced in place by every later call (see [`recurrent`]).
    pub state: u128,
    /// While a growth's `concatenate` runs, the layer being grown holds its
    /// old arrays too: at most these bytes more, one layer at `capacity -
    /// 256` cells (MLX may keep freed arrays in its buffer cache until
    /// `mx.clear_cache()`, after each prompt chunk and every 256 tokens).
    pub growth: u128,
    /// Prompt chunks.
    pub prefill_chunks: u64,
    /// An estimate, not held to a measurement: one layer's activations for
    /// a chunk (the residual and its norm, q, k, v, attention's output,
    /// the MLP's gate, up and product).
    pub prefill_activations: u128,
}

/// One growth step of `KVCache` / `QuantizedKVCache` for `s` new tokens.
const fn grow(cap: u64, off: u64, s: u64) -> u64 {
    if off + s <= cap && cap > 0 {
        return cap;
    }
    let base = if off.is_multiple_of(256) { cap } else { off };
    base + s.div_ceil(256) * 256
}

/// Spare cells at a group's start that [`after_chunks`] remembers.
const SLACKS: usize = 512;

/// `(capacity, tokens)` after `k` prompt chunks of `c` tokens from an
/// empty cache: closed form when `c` is a multiple of 256. Otherwise every
/// group of `256 / gcd(c, 256)` chunks starts on a multiple of 256, so how
/// a group grows the cache depends only on the spare cells at its start:
/// once a number of spare cells comes back, the groups since repeat, and
/// every whole repetition left is added at once (at most a few hundred
/// groups stepped, never one step per token). Within a group the chunks
/// that fit in the capacity as it is leave it unchanged ([`grow`]): they
/// are taken at once, so a group is stepped growth by growth, not chunk
/// by chunk.
fn after_chunks(c: u64, k: u64) -> (u64, u64) {
    if c.is_multiple_of(256) {
        return (c * k, c * k);
    }
    // At most 256: the cast keeps it.
    let q = (256 / crate::infer::gcd(u128::from(c), 256)) as u64;
    let (mut cap, mut off, mut done) = (0u64, 0u64, 0u64);
    // By spare cells: the chunks done and the capacity at the first group
    // that started with them.
    let mut seen = [(u64::MAX, 0u64); SLACKS];
    let mut repeated = false;
    while done < k {
        if !repeated && done.is_multiple_of(q) {
            let slack = usize::try_from(cap - off).unwrap_or(SLACKS);
            if let Some(at) = seen.get_mut(slack) {
                if at.0 == u64::MAX {
                    *at = (done, cap);
                } else {
                    let (period, grown) = (done - at.0, cap - at.1);
                    let times = (k - done) / period;
                    cap += times * grown;
                    off += times * period * c;
                    done += times * period;
                    repeated = true;
                    continue;
                }
            }
        }
        // Chunks `grow` leaves the capacity as it is for (`off + c <= cap`,
        // `cap > 0`), up to the next group's start and the last chunk.
        let fit = if cap > 0 { (cap - off) / c } else { 0 };
        let to_group = if repeated { k } else { q - done % q };
        let n = fit.min(to_group).min(k - done);
        if n > 0 {
            off += n * c;
            done += n;
            continue;
        }
        cap = grow(cap, off, c);
        off += c;
        done += 1;
    }
    (cap, off)
}

/// `KVCache`'s capacity after the whole generation.
fn capacity(s: &Mlx) -> u64 {
    let p = u64::from(s.prompt);
    let c = u64::from(s.prefill_step_size.max(1));
    let before_last = p.saturating_sub(1);
    let (k, r) = (before_last / c, before_last % c);
    let (mut cap, mut off) = after_chunks(c, k);
    if r > 0 {
        cap = grow(cap, off, r);
        off += r;
    }
    let singles = u64::from(s.max_tokens) + u64::from(p > 0);
    let end = off + singles;
    if end > cap {
        cap += (end - cap).div_ceil(256) * 256;
    }
    cap
}

/// A `RotatingKVCache(max_size)`'s cells at the end, and the most it held
/// while a prompt chunk was concatenated (old and new arrays together).
/// A chunk joins the last `max_size - 1` cells (`_update_concat`); a
/// single token grows the cache by `min(256, max_size - offset)` when it
/// is full, and trims it to `max_size` (`_update_in_place`).
fn rotating(s: &Mlx, max_size: u64) -> (u64, u64) {
    let p = u64::from(s.prompt);
    let c = u64::from(s.prefill_step_size.max(1));
    let keep = max_size.saturating_sub(1);
    let before_last = p.saturating_sub(1);
    let (k, r) = (before_last / c, before_last % c);
    let (mut size, mut peak) = (0u64, 0u64);
    if k > 0 {
        let prev = if (k - 1) * c <= keep {
            (k - 1) * c
        } else {
            keep
        };
        size = prev + c;
        peak = prev + size;
    }
    if r > 0 {
        let new = size.min(keep) + r;
        peak = peak.max(size + new);
        size = new;
    }
    let total = p + u64::from(s.max_tokens);
    let end = if total >= max_size || size >= max_size {
        max_size
    } else if total > size {
        (size + (total - size).div_ceil(256) * 256).min(max_size)
    } else {
        size
    };
    (end, peak)
}

/// A `ChunkedKVCache(chunk)`'s cells at the end (Llama 4's chunked
/// layers, mlx-lm `models/cache.py`, `llama4.py`). Before every call the
/// model trims each one to its last `chunk` tokens (`maybe_trim_front`, a
/// view of the old array), and a call that does not fit appends
/// `⌈n / 256⌉·256` cells to it (`update_and_fetch`, as `KVCache`'s). Until
/// more than `chunk` tokens precede a call it grows as a `KVCache`
/// ([`capacity`]); after, each call is trimmed to `chunk` first and the
/// last one (a single token) leaves `chunk + 256` cells. Measured: mlx-cpu
/// 0.32.4, mlx-lm d78bf58e, `tests/fixtures/mlx_chunked_rows.jsonl`.
fn chunked_cells(s: &Mlx, chunk: u64) -> u64 {
    let tokens = u64::from(s.prompt) + u64::from(s.max_tokens);
    if tokens.saturating_sub(1) > chunk {
        chunk + 256
    } else {
        capacity(s)
    }
}

/// Bytes of one token's K and V rows of one layer.
fn row_bytes(s: &Mlx, bits: Option<u32>, k: u64, v: u64) -> Result<u128, MlxError> {
    let d = u128::from(s.dtype_bytes);
    let Some(bits) = bits else {
        return Ok(u128::from(k + v) * d);
    };
    let g = s.kv_group_size;
    let mut total = 0;
    for w in [k, v] {
        let ok = (2..=8).contains(&bits)
            && g > 0
            && w.is_multiple_of(u64::from(g))
            && (w * u64::from(bits)).is_multiple_of(32);
        if !ok {
            return Err(MlxError::Quantize {
                width: w,
                group: g,
                bits,
            });
        }
        total += u128::from(w * u64::from(bits) / 8) + 2 * u128::from(w / u64::from(g)) * d;
    }
    Ok(total)
}

/// The cache's rows per token of one layer, as mlx-lm's models keep them:
/// every key/value head, or latent attention's normalised latent and its
/// rotary key (`deepseek_v3.py:134-145`). DeepSeek Sparse Attention's
/// layers keep a `CacheList(KVCache(), KVCache())` (`deepseek_v32.py:654-655`):
/// the latent's, and the indexer's keys (`index_head_dim` a token in the
/// model's dtype, its values 0 wide, `:101`), counted here with the
/// latent; both grow by the same 256 cells. Measured: mlx-cpu 0.32.4,
/// mlx-lm d78bf58e, `tests/fixtures/mlx_dsa_rows.jsonl`.
fn widths(a: &Architecture) -> (u64, u64) {
    let g = KvGeometry::of(a);
    match g.layer {
        LayerAttention::Heads { .. } => (g.k_width(), g.v_width()),
        LayerAttention::Latent(m) => (m.kv_lora_rank + u64::from(a.index_head_dim), m.rope_dim),
    }
}

/// mlx-lm generating with `a` under `s`.
pub fn mlx(a: &Architecture, s: &Mlx) -> Result<MlxReport, MlxError> {
    if s.prefill_step_size == 0 {
        return Err(MlxError::ZeroStep);
    }
    if a.family.spec().blocks == Blocks::Single {
        if a.attention_layers() == 0 {
            return Err(MlxError::NoLayerOfKind { attention: true });
        }
        if a.linear_layers == 0 {
            return Err(MlxError::NoLayerOfKind { attention: false });
        }
    }
    let local = LocalModel::for_mlx(a);
    // Gemma 4's `make_cache` (`gemma4_text.py:675-688`) makes a cache for
    // the layers with their own keys only (`KVCache` on a global layer,
    // `RotatingKVCache(sliding_window, keep=0)` on a sliding one), and
    // `make_prompt_cache` leaves `max_kv_size` to models without one
    // (`cache.py:31-32`, [`own_cache`]).
    let gemma4 = a.family.spec().varies_by_layer();
    let max_kv_size = s.max_kv_size.filter(|_| !own_cache(a));
    let sliding = match max_kv_size {
        Some(_) => Pattern::All,
        None => local.cache.swa_layers,
    };
    let cached = local.cache.kv_layers.count(0, a.layers);
    let n_sliding = u64::from(if gemma4 {
        local.cache.counts().1
    } else {
        sliding.count(0, a.layers)
    });
    let n_full = u64::from(cached) - n_sliding;
    let tokens = u64::from(s.prompt) + u64::from(s.max_tokens);
    // Quantized once `quantized_kv_start` tokens are in the cache, checked
    // after every call: at the end when the generation reaches it.
    let bits = s
        .kv_bits
        .filter(|_| tokens >= u64::from(s.quantized_kv_start));
    // Kimi Linear's latent attention cannot read a quantized cache
    // ([`MlxError::LatentQuantized`]).
    let kda = a
        .family
        .spec()
        .linear
        .is_some_and(|l| l.kind == Recurrence::Kda);
    if kda && bits.is_some() {
        return Err(MlxError::LatentQuantized);
    }
    // Llama 4's `ChunkedKVCache` has no `to_quantized`: `kv_bits` leaves
    // it as it is (`maybe_quantize_kv_cache`, `hasattr(c, "to_quantized")`);
    // nor has DeepSeek Sparse Attention's `CacheList` (measured: the same
    // bytes with `kv_bits` 8).
    let chunked = a.family.spec().chunked && n_sliding > 0;
    let full_bits = bits.filter(|_| !a.family.spec().indexer);
    if n_sliding > 0 && bits.is_some() && !chunked {
        return Err(MlxError::RotatingQuantized);
    }
    let (k, v) = widths(a);
    let row = row_bytes(s, full_bits.filter(|_| !chunked), k, v)?;
    // Gemma 4's global layers' rows are their own (`Attention.__init__`:
    // `global_head_dim`, `num_global_key_value_heads` with keys as values,
    // whose values are still a cache array of their own: `v_norm` makes
    // them from the keys).
    let full_row = if gemma4 {
        row_bytes(s, bits, local.cache.full.k, local.cache.full.v)?
    } else {
        row_bytes(s, full_bits, k, v)?
    };
    let cap = capacity(s);
    let window = u64::from(max_kv_size.unwrap_or(a.sliding_window));
    let win_cap = match (n_sliding > 0, chunked) {
        (false, _) => 0,
        (true, false) => rotating(s, window).0,
        (true, true) => chunked_cells(s, window),
    };
    let kv = full_row * u128::from(n_full) * u128::from(cap)
        + row * u128::from(n_sliding) * u128::from(win_cap);
    let state = recurrent(a, s)?;
    // Every growth appends at least 256 cells to arrays of at most
    // `cap - 256`, which live until `concatenate` has copied them; a
    // chunked layer's old array is the one the call before left.
    let growth = if n_full > 0 {
        full_row * u128::from(cap.saturating_sub(256))
    } else {
        0
    };
    let growth = if chunked && s.max_tokens > 0 {
        let before = Mlx {
            max_tokens: s.max_tokens - 1,
            ..*s
        };
        growth.max(row * u128::from(chunked_cells(&before, window)))
    } else {
        growth
    };
    Ok(MlxReport {
        tokens,
        capacity: if n_full > 0 { cap } else { 0 },
        window_capacity: win_cap,
        kv,
        state,
        growth,
        prefill_chunks: u64::from(s.prompt.saturating_sub(1))
            .div_ceil(u64::from(s.prefill_step_size)),
        prefill_activations: activations(&local, s, ple_width(a), delta_net_width(a))
            + held_chunks(a, s),
    })
}

/// The Gated DeltaNet layers' states, one sequence (`generate_step`'s
/// batch): per linear layer `ArraysCache(size=2)` (`make_cache`,
/// `qwen3_5.py:345-346`), its entry 0 `conv_input[:, -(kernel − 1):, :]`
/// over the convolution's `2·Hk·Dk + Hv·Dv` channels in the input's dtype
/// (`GatedDeltaNet.__call__`), entry 1 the `(B, Hv, Dv, Dk)` state that
/// `gated_delta_update` makes in `float32` and the kernel returns in its
/// own dtype (`gated_delta.py:209-210, 276-279`). Measured: mlx-cpu
/// 0.32.4 with mlx-lm d78bf58e, `scripts/measure/mlx/hybrid_rows.jsonl`.
///
/// LFM2's short convolutions: per convolution layer `ArraysCache(size=1)`
/// (`lfm2.py:312-315`, the layers `full_attn_idxs` leaves out, so no
/// pattern to hold), `Bx[:, -(L_cache − 1):, :]` over `h` channels in the
/// input's dtype (`ShortConv.__call__`, `lfm2.py:146-162`): a view of the
/// step's concatenation of the state and the step's tokens, which it keeps
/// whole, so after the last step (one token) `L_cache` tokens of `h`.
/// Measured: `scripts/measure/mlx/lfm2_rows.jsonl` (the bytes freed when
/// the cache is dropped).
///
/// Mamba-2 (`granitemoehybrid.py:495-502`, `ArraysCache(size=2)` on the
/// `layer_types` layers): the convolution's state is such a view too
/// (`padded_input[:, -(K − 1):, :]`, `:132-148`), `K` tokens of `H·P +
/// 2·G·N` in the input's dtype after a one-token step, and the SSM state
/// `(H, P, N)` in fp32 whatever the model's dtype (`ssm.py`: `compute_dt`
/// casts to fp32, the state a matmul's result). Measured:
/// `scripts/measure/mlx/granite_rows.jsonl`.
fn recurrent(a: &Architecture, s: &Mlx) -> Result<u128, MlxError> {
    let Some(rule) = a.family.spec().linear else {
        return Ok(0);
    };
    let steps = u128::from(a.linear_conv.saturating_sub(1));
    let layers = u128::from(a.linear_layers);
    let dt = u128::from(s.dtype_bytes);
    let (conv, value) = a.linear_widths();
    // LFM2's short convolution keeps no state beside its inputs.
    let ssm = match rule.kind {
        Recurrence::ShortConv => 0,
        Recurrence::Mamba2 | Recurrence::GatedDeltaNet | Recurrence::Kda => {
            u128::from(value) * u128::from(a.linear_k_dim) * 4
        }
    };
    if let Some(w) = conv_view(a, rule.kind) {
        // A view keeps its step's `K` tokens.
        return Ok(layers * ((steps + 1) * u128::from(w) * dt + ssm));
    }
    // mlx-lm builds a Gated DeltaNet model's layers from the interval;
    // Kimi Linear's from the config's list (`kda_layers`), any count.
    let expected = rule.count(a.layers);
    if rule.delta_net() && a.linear_layers != expected {
        return Err(MlxError::HybridPattern {
            linear: a.linear_layers,
            interval: rule.full_every,
            expected,
        });
    }
    Ok(layers * (steps * u128::from(conv) * dt + ssm))
}

/// LFM2's short convolutions while the prompt is read: each layer's state
/// is a view of its last chunk's concatenation (the chunk and `L_cache −
/// 1` tokens), kept whole until the layer's next step, so every layer
/// holds a chunk of `h` at once, `chunk − 1` tokens more than the end's
/// state ([`recurrent`]). Measured after one forward over a prompt (the
/// `new` 0 rows of `scripts/measure/mlx/lfm2_rows.jsonl`: the prompt and
/// 2 tokens per layer); 0 for other models.
///
/// Mamba-2's convolution state is a view the same way, over its `H·P +
/// 2·G·N` channels (measured after one forward over a prompt: the prompt
/// and `K − 1` tokens per layer, `granite_rows.jsonl`).
fn held_chunks(a: &Architecture, s: &Mlx) -> u128 {
    let Some(rule) = a.family.spec().linear else {
        return 0;
    };
    let Some(width) = conv_view(a, rule.kind) else {
        return 0;
    };
    let chunk = s.prefill_step_size.min(s.prompt.saturating_sub(1));
    u128::from(a.linear_layers)
        * u128::from(chunk.saturating_sub(1))
        * u128::from(width)
        * u128::from(s.dtype_bytes)
}

/// The channels of a recurrent layer's convolution state when mlx-lm keeps
/// it as a view of its step's concatenation (which the view holds whole):
/// LFM2's `h` (`lfm2.py:146-162`), Mamba-2's `H·P + 2·G·N`
/// (`granitemoehybrid.py:132-148`, `nemotron_h.py`); `None` for the Gated
/// DeltaNet, whose state is a copy of the last `K − 1` inputs.
fn conv_view(a: &Architecture, kind: Recurrence) -> Option<u64> {
    match kind {
        Recurrence::ShortConv => Some(u64::from(a.hidden)),
        Recurrence::Mamba2 => Some(a.linear_widths().0),
        Recurrence::GatedDeltaNet | Recurrence::Kda => None,
    }
}

/// The model has a `make_cache` of its own, to which `make_prompt_cache`
/// leaves the cache, `max_kv_size` unread (`cache.py:31-32`): Gemma 4's
/// (`gemma4_text.py:675-688`), the Gated DeltaNet hybrids'
/// (`qwen3_5.py:345-346`, `qwen3_next.py:449-450`) and Llama 4's
/// (`llama4.py:317-325`: `ChunkedKVCache` on all but every 4th layer).
pub fn own_cache(a: &Architecture) -> bool {
    let spec = a.family.spec();
    spec.varies_by_layer() || spec.linear.is_some() || spec.chunked
}

/// Gemma 4's per-layer inputs per token (`layers × hidden_size_per_layer_input`):
/// `Gemma4TextModel.__call__` projects them for every layer before the
/// first and keeps them through the forward. 0 without them.
fn ple_width(a: &Architecture) -> u64 {
    if a.family.spec().per_layer_embeddings {
        u64::from(a.layers) * u64::from(a.ple_dim)
    } else {
        0
    }
}

/// The estimate of one layer's activations for a prompt chunk, with the
/// per-layer inputs (`ple` per token) alive beside them: the wider of an
/// attention layer's and a DeltaNet layer's (`delta_net` per token).
fn activations(m: &LocalModel, s: &Mlx, ple: u64, delta_net: u64) -> u128 {
    let d = &m.dims;
    let c = u128::from(s.prefill_step_size.min(s.prompt.saturating_sub(1)).max(1));
    let attention = 2 * d.q + m.cache.full.k + m.cache.full.v;
    let per_token = 2 * d.n_embd + attention.max(delta_net) + 3 * d.ffn + ple;
    c * u128::from(per_token) * u128::from(s.dtype_bytes)
}

/// A Gated DeltaNet layer's mixer per token, for the estimate of a
/// chunk's activations (`GatedDeltaNet.__call__`): the `in_proj_qkv`
/// output and the convolution's output over its channels, `z`, the
/// kernel's output and the gated norm's (each `Hv·Dv`), `a` and `b`
/// (`Hv` each). 0 without DeltaNet layers.
///
/// LFM2's short convolution (`ShortConv.__call__`): `in_proj`'s `3h`, `B·x`
/// and the convolution's output (`h` each): `5h`, an estimate.
///
/// A Mamba-2 mixer (`Mamba2Block.__call__`, `granitemoehybrid.py`):
/// `in_proj`'s `d_inner + C + H`, the convolution's output (`C`), the scan's
/// and the gated norm's (`d_inner` each): an estimate.
fn delta_net_width(a: &Architecture) -> u64 {
    let Some(rule) = a.family.spec().linear.filter(|_| a.linear_layers > 0) else {
        return 0;
    };
    let (conv, value) = a.linear_widths();
    let heads = u64::from(a.linear_v_heads);
    match rule.kind {
        Recurrence::ShortConv => 5 * u64::from(a.hidden),
        Recurrence::Mamba2 => (value + conv + heads) + conv + 2 * value,
        Recurrence::GatedDeltaNet => 2 * conv + 3 * value + 2 * heads,
        // q, k and v and their convolutions, the gates' outputs, the
        // kernel's and the norm's: an estimate as the DeltaNet's.
        Recurrence::Kda => 2 * conv + 3 * value + heads,
    }
}

impl MlxReport {
    /// The generation's peak with `weights` bytes of weights: the weights,
    /// the cache at its end with the last growth's transient, the
    /// recurrent layers' states, and the
    /// prompt chunk's activations (an estimate).
    pub const fn peak(&self, weights: u128) -> u128 {
        weights + self.kv + self.state + self.growth + self.prefill_activations
    }
}

/// What MLX does with the GPU's working set for a generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wired {
    /// `mx.set_wired_limit(max_recommended_working_set_size)` for the
    /// generation (`generate.py: wired_limit`, `:221-258`).
    pub wired_limit: u128,
    /// mlx-lm warns the model "is close to the maximum recommended size"
    /// above 90% of it.
    pub warns: bool,
    /// The allocator's limits (`mlx/backend/metal/allocator.cpp:58-66`):
    /// `min(1.5 × working set, 0.95 × memory)`, and the cache's garbage
    /// collection at `min(0.95 × working set, that)`.
    pub memory_limit: u128,
    pub gc_limit: u128,
}

/// MLX's limits for a Mac with `memory` bytes, a GPU working set of
/// `working_set` bytes, and a model of `model_bytes`.
pub fn wired(memory: u128, working_set: u128, model_bytes: u128) -> Wired {
    let memory_limit = (working_set * 3 / 2).min(memory * 95 / 100);
    Wired {
        wired_limit: working_set,
        warns: model_bytes * 10 > working_set * 9,
        memory_limit,
        gc_limit: (working_set * 95 / 100).min(memory_limit),
    }
}
