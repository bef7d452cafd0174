//! llama.cpp's key/value cache, to the byte: one K and one V tensor per
//! layer that keeps a cache, `[row width, cells, streams]` of the cache
//! type, in the buffer of the layer's device; the sliding-window layers in
//! their own, smaller cache; a hybrid's recurrent state beside it.
//!
//! `llama_kv_cache::llama_kv_cache` (`src/llama-kv-cache.cpp:64-330`,
//! b10488): `k = ggml_new_tensor_3d(type_k, n_embd_k_gqa(il), kv_size,
//! n_stream)` (`:231`) and `v` likewise with `type_v` (`:232`); without
//! flash attention V is stored transposed and every layer's row is
//! `n_embd_v_gqa_max()` wide (`:208`); latent attention keeps no V (`has_v
//! = !is_mla`, `:229`, since b7832). The buffer is the layer's device's
//! (`model.dev_layer(il)`) with `offload_kqv`, else the CPU's (`:212-219`).
//! The CUDA buffer type pads each quantized tensor whose rows are not a
//! multiple of 512 (`ggml-cuda.cu:914-919`). The recurrent state
//! (`llama_memory_recurrent`) is f32, `max(1, n_seq_max)` cells
//! (`src/llama-model.cpp:2300-2335`). DeepSeek Sparse Attention keeps a
//! second cache beside the latent's, the indexer's keys, of the same type,
//! cells and streams (`llama_kv_cache_dsa`, `src/llama-kv-cache-dsa.cpp`).

use super::ggml::CacheType;
use super::model::{LocalModel, Width};
use super::params::{builds, LlamaCpp, Resolved};
use super::placement::{Layout, Place, Stretches};
use super::LocalError;

/// One of the two caches: the full-attention one, or the sliding-window
/// one of `llama_kv_cache_iswa`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KvGroup {
    /// Layers in this cache.
    pub layers: u32,
    /// Cells per stream, and streams.
    pub cells: u32,
    pub streams: u32,
    /// Bytes of every layer's K, and of every layer's V (the log's `K
    /// (f16): X MiB, V (f16): Y MiB`; CUDA's padding not included).
    pub k: u128,
    pub v: u128,
}

impl KvGroup {
    /// K and V together (the log's `size = X MiB`).
    pub const fn bytes(&self) -> u128 {
        self.k + self.v
    }
}

/// The whole cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KvSizes {
    pub base: KvGroup,
    pub swa: KvGroup,
    /// DeepSeek Sparse Attention's indexer keys beside `base`, of its
    /// cells and streams: the log's second `KV buffer size` line
    /// ([`super::model::CacheModel::indexer`]).
    pub indexer: u128,
    /// The recurrent state (the log's `RS buffer size`), and its cells.
    pub recurrent: u128,
    pub recurrent_cells: u32,
}

impl KvSizes {
    /// Key/value bytes of the caches.
    pub const fn kv(&self) -> u128 {
        self.base.bytes() + self.swa.bytes() + self.indexer
    }
}

/// The cache's rows for one layer: its widths as this build stores them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    pub full: Width,
    pub swa: Width,
    /// The indexer's keys in a full layer (0: none).
    pub indexer: u64,
}

impl Rows {
    /// Widths with flash attention on or off: latent attention's V stored
    /// before b7832 (`kv_lora_rank` wide), a transposed V padded to the
    /// widest V of any layer.
    pub fn of(m: &LocalModel, build: u32, flash_attn: bool) -> Rows {
        let c = &m.cache;
        let mut full = c.full;
        let mut swa = c.swa;
        if c.mla_v > 0 && build < builds::MLA_K_ONLY {
            full.v = c.mla_v;
            swa.v = c.mla_v;
        }
        if !flash_attn {
            let (_, n_swa) = c.counts();
            let widest = if n_swa > 0 { full.v.max(swa.v) } else { full.v };
            full.v = if full.v > 0 { widest } else { 0 };
            swa.v = if swa.v > 0 { widest } else { 0 };
        }
        Rows {
            full,
            swa,
            indexer: c.indexer,
        }
    }

    /// The widths of a full (`false`) or sliding (`true`) layer.
    pub const fn get(&self, sliding: bool) -> Width {
        if sliding {
            self.swa
        } else {
            self.full
        }
    }
}

/// Bytes of one layer's K or V: `ggml_row_size(type, width) × cells ×
/// streams`, and the CUDA padding of that tensor.
fn tensor(t: CacheType, width: u64, cells: u32, streams: u32) -> Result<(u128, u128), LocalError> {
    if width == 0 {
        return Ok((0, 0));
    }
    let row = t.row_size(width).ok_or(LocalError::BlockDoesNotDivide {
        cache_type: t,
        width,
    })?;
    let bytes = row * u128::from(cells) * u128::from(streams);
    Ok((bytes, t.cuda_extra(bytes, width)))
}

/// One layer's cache: (bytes, CUDA padding).
pub fn layer_bytes(
    p: &LlamaCpp,
    rows: &Rows,
    r: &Resolved,
    sliding: bool,
) -> Result<(u128, u128), LocalError> {
    let w = rows.get(sliding);
    let cells = if sliding { r.swa_cells } else { r.n_ctx_seq };
    let (k, kp) = tensor(p.cache_type_k, w.k, cells, r.n_stream)?;
    let (v, vp) = tensor(p.cache_type_v, w.v, cells, r.n_stream)?;
    if sliding || rows.indexer == 0 {
        return Ok((k + v, kp + vp));
    }
    let (i, ip) = tensor(p.cache_type_k, rows.indexer, cells, r.n_stream)?;
    Ok((k + v + i, kp + vp + ip))
}

/// Both caches and the recurrent state, as the log's `size =` lines count
/// them.
pub fn sizes(
    m: &LocalModel,
    p: &LlamaCpp,
    rows: &Rows,
    r: &Resolved,
) -> Result<KvSizes, LocalError> {
    let (n_full, n_swa) = m.cache.counts();
    let group = |layers: u32, sliding: bool| -> Result<KvGroup, LocalError> {
        let w = rows.get(sliding);
        let cells = if sliding { r.swa_cells } else { r.n_ctx_seq };
        let n = u128::from(layers);
        Ok(KvGroup {
            layers,
            cells,
            streams: r.n_stream,
            k: n * tensor(p.cache_type_k, w.k, cells, r.n_stream)?.0,
            v: n * tensor(p.cache_type_v, w.v, cells, r.n_stream)?.0,
        })
    };
    let recurrent_layers = m.cache.recurrent_layers.count(0, m.cache.layers);
    let recurrent_cells = r.n_seq_max.max(1);
    Ok(KvSizes {
        base: group(n_full, false)?,
        swa: if n_swa > 0 {
            group(n_swa, true)?
        } else {
            KvGroup::default()
        },
        indexer: u128::from(n_full)
            * tensor(p.cache_type_k, rows.indexer, r.n_ctx_seq, r.n_stream)?.0,
        recurrent: m.cache.recurrent * u128::from(recurrent_layers) * u128::from(recurrent_cells),
        recurrent_cells,
    })
}

/// Where each layer's cache lives, and the bytes each place holds: (KV,
/// recurrent) per GPU and on the host, and of the KV the sliding-window
/// cache's (its own buffer, allocated after the other's: `swa_gpu`,
/// `swa_host`). `cuda[d]`: GPU `d` pads.
pub struct PerPlace {
    pub gpu: [(u128, u128); super::params::MAX_DEVICES],
    pub host: (u128, u128),
    pub swa_gpu: [u128; super::params::MAX_DEVICES],
    pub swa_host: u128,
}

/// The cache split over the places its layers are in, stretch by stretch
/// of layers in one place (`full` and `swa`: one layer's bytes and CUDA
/// padding, [`layer_bytes`]).
pub fn per_place(
    m: &LocalModel,
    p: &LlamaCpp,
    r: &Resolved,
    (layout, stretches): (&Layout, &Stretches),
    cuda: &[bool],
    (full, swa): ((u128, u128), (u128, u128)),
) -> PerPlace {
    let state = m.cache.recurrent * u128::from(r.n_seq_max.max(1));
    let mut out = PerPlace {
        gpu: [(0, 0); super::params::MAX_DEVICES],
        host: (0, 0),
        swa_gpu: [0; super::params::MAX_DEVICES],
        swa_host: 0,
    };
    for (lo, hi) in stretches.iter() {
        let place = if p.no_kv_offload {
            Place::Host
        } else {
            layout.place(lo)
        };
        let (n_full, n_swa) = m.cache.counts_in(lo, hi);
        let (n_full, n_swa) = (u128::from(n_full), u128::from(n_swa));
        let n_rs = u128::from(m.cache.recurrent_layers.count(lo, hi));
        let (slot, swa_slot) = match place {
            Place::Gpu(d) => (&mut out.gpu[d], &mut out.swa_gpu[d]),
            Place::Host => (&mut out.host, &mut out.swa_host),
        };
        let padded = matches!(place, Place::Gpu(d) if cuda.get(d).copied().unwrap_or(false));
        let with_pad = |(kv, pad): (u128, u128)| kv + if padded { pad } else { 0 };
        slot.0 += n_full * with_pad(full) + n_swa * with_pad(swa);
        slot.1 += n_rs * state;
        *swa_slot += n_swa * with_pad(swa);
    }
    out
}

/// The checks llama.cpp makes of the cache types before allocating
/// (`llama_init_from_model`, `src/llama-context.cpp:3591-3625`, and the
/// constructor's `:461-467`).
pub fn check_types(m: &LocalModel, p: &LlamaCpp, flash_attn: bool) -> Result<(), LocalError> {
    let (k, v) = (p.cache_type_k, p.cache_type_v);
    if m.cache.mla_v > 0 && k != v {
        return Err(LocalError::MlaNeedsSameTypes);
    }
    if v.is_quantized() && !flash_attn {
        return Err(LocalError::QuantizedVNeedsFlashAttn);
    }
    if flash_attn {
        for (t, head) in [(k, m.cache.head_k), (v, m.cache.head_v)] {
            if t.is_quantized() && !head.is_multiple_of(t.block().0) {
                return Err(LocalError::BlockDoesNotDivide {
                    cache_type: t,
                    width: head,
                });
            }
        }
    }
    Ok(())
}
