//! One llama.cpp load, evaluated: for a context size and a placement, the
//! bytes of every buffer on every GPU and in host memory, as
//! `llama_context::memory_breakdown` counts them (`model`, `context`,
//! `compute` per buffer type, `src/llama-context.cpp:3265`) and the output
//! buffer beside them. `--fit` measures this same breakdown for each
//! placement it tries (`common/fit.cpp:30-140`).

use super::compute::{self, ComputeBuffers, Settings, Stages, Terms, Where};
use super::kv::{self, KvSizes, Rows};
use super::model::LocalModel;
use super::params::{resolve, Backend, Gpu, LlamaCpp, Resolved, MAX_DEVICES};
use super::placement::{Layout, Place, Placement, Stretches};
use super::weights::{Fraction, ModelBytes, Part, Weights};
use super::LocalError;

/// What one device (a GPU, or the host) holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceBytes {
    /// The model buffer(s): on the host, the mapped file ranges
    /// (`CPU_Mapped`) and any tensor overflowing there.
    pub weights: u128,
    /// The key/value cache's buffer(s) (`KV buffer size`).
    pub kv: u128,
    /// Of `kv`, the sliding-window cache's buffer (a model with both kinds
    /// of layer has one cache of each, and one buffer of each a device).
    pub kv_swa: u128,
    /// A hybrid's recurrent state (`RS buffer size`).
    pub recurrent: u128,
    /// The compute buffer (an estimate, `compute`).
    pub compute: u128,
    /// Repeating layers whose tensors are here.
    pub layers: u32,
    /// The output layer is here.
    pub output: bool,
    /// A LoRA adapter's buffer(s) (`LoRA buffer size`): neither in the
    /// breakdown nor in `--fit`'s sums ([`super::adapter`]).
    pub lora: u128,
}

impl DeviceBytes {
    /// What `--fit` counts for the device: model, context and compute.
    pub const fn total(&self) -> u128 {
        self.weights + self.kv + self.recurrent + self.compute
    }

    /// What the device holds: [`DeviceBytes::total`] and the adapter.
    pub const fn held(&self) -> u128 {
        self.total() + self.lora
    }
}

/// One evaluated load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub resolved: Resolved,
    pub flash_attn: bool,
    /// `-ngl` as applied (at most `n_layer + 1`).
    pub n_gpu_layers: u32,
    pub kv: KvSizes,
    pub gpus: [DeviceBytes; MAX_DEVICES],
    pub n_gpus: usize,
    pub host: DeviceBytes,
    /// The output buffer (host memory, outside the breakdown).
    pub output_buffer: u128,
    /// Several GPUs with every layer, layer split, the cache offloaded and
    /// no tensor override: llama.cpp enables pipeline parallelism, whose
    /// four copies of the graph inputs these compute buffers do not count
    /// (`llama-context.cpp:423-449`).
    pub pipeline_parallel: bool,
    /// The compute estimate's stages.
    pub terms: Terms,
}

impl Plan {
    /// GPU `d`'s bytes.
    pub fn gpu(&self, d: usize) -> DeviceBytes {
        self.gpus.get(d).copied().unwrap_or_default()
    }

    /// Every GPU's bytes together.
    pub fn gpu_total(&self) -> u128 {
        self.gpus[..self.n_gpus]
            .iter()
            .map(DeviceBytes::total)
            .sum()
    }
}

/// The load of `m` with weights `w`, knobs `p`, `-c n_ctx_param` (0: the
/// model's) and `placement`, on `gpus`.
pub fn plan(
    m: &LocalModel,
    w: &ModelBytes<'_>,
    p: &LlamaCpp,
    gpus: &[Gpu],
    n_ctx_param: u32,
    placement: &Placement,
) -> Result<Plan, LocalError> {
    let w = Weights::from(w);
    Ok(Context::new(m, &w, p, gpus, n_ctx_param)?.plan(&w, placement))
}

/// What a load makes of the knobs for one `-c`, whatever the placement:
/// worked out once for each context `--fit` tries, then each placement
/// ([`Context::plan`]) is a few sums over stretches of layers.
pub struct Context<'a> {
    m: &'a LocalModel,
    p: &'a LlamaCpp,
    gpus: &'a [Gpu],
    r: Resolved,
    flash_attn: bool,
    kv: KvSizes,
    /// One full-attention layer's and one sliding layer's cache: (bytes,
    /// CUDA padding).
    full: (u128, u128),
    swa: (u128, u128),
    cuda: [bool; MAX_DEVICES],
    /// The compute graph's settings and its stages' sizes.
    settings: Settings,
    stages: Stages,
}

impl<'a> Context<'a> {
    /// The context of `-c n_ctx_param` (0: the model's): the checks
    /// llama.cpp makes before it allocates, in its order, and the cache's
    /// sizes.
    pub fn new(
        m: &'a LocalModel,
        w: &Weights<'_>,
        p: &'a LlamaCpp,
        gpus: &'a [Gpu],
        n_ctx_param: u32,
    ) -> Result<Self, LocalError> {
        if gpus.len() > MAX_DEVICES {
            return Err(LocalError::TooManyGpus);
        }
        if !w.layers.fits(m.cache.layers) {
            return Err(LocalError::WeightsLayers {
                given: w.layers.given(),
                model: m.cache.layers,
            });
        }
        let r = resolve(m, p, n_ctx_param)?;
        let flash_attn = p.flash_attn_requested();
        kv::check_types(m, p, flash_attn)?;
        let rows = Rows::of(m, p.build, flash_attn);
        let full = kv::layer_bytes(p, &rows, &r, false)?;
        let swa = if r.swa_cells > 0 {
            kv::layer_bytes(p, &rows, &r, true)?
        } else {
            (0, 0)
        };
        let kv = kv::sizes(m, p, &rows, &r)?;
        let settings = Settings {
            build: p.build,
            flash_attn,
            quantized: p.cache_type_k.is_quantized() || p.cache_type_v.is_quantized(),
            op_offload: !p.no_op_offload,
            k_width: rows.full.k.max(rows.swa.k),
            v_width: rows.full.v.max(rows.swa.v),
            lora: p.lora,
        };
        Ok(Context {
            m,
            p,
            gpus,
            r,
            flash_attn,
            kv,
            full,
            swa,
            cuda: cuda_flags(gpus),
            settings,
            stages: Stages::of(m, &r, &settings),
        })
    }

    /// The load with weights `w` (those [`Context::new`] checked) placed
    /// as `placement` says.
    pub fn plan(&self, w: &Weights<'_>, placement: &Placement) -> Plan {
        self.plan_of(&self.buffers(w, placement), placement)
    }

    /// The load whose buffers are `b`, placed as `placement` says (the
    /// placement `b` was worked out for, or one that loads alike:
    /// [`Placement::loads_like`]).
    pub(super) fn plan_of(&self, b: &Buffers, placement: &Placement) -> Plan {
        let (m, p, gpus) = (self.m, self.p, self.gpus);
        let ngl = placement.n_gpu_layers.min(m.cache.layers.saturating_add(1));
        let mut gpu_bytes = [DeviceBytes::default(); MAX_DEVICES];
        for (d, slot) in gpu_bytes.iter_mut().enumerate().take(gpus.len()) {
            *slot = b.device(Place::Gpu(d));
        }
        Plan {
            resolved: self.r,
            flash_attn: self.flash_attn,
            n_gpu_layers: ngl,
            kv: self.kv,
            gpus: gpu_bytes,
            n_gpus: gpus.len(),
            host: b.device(Place::Host),
            output_buffer: compute::output_buffer(m, &self.r, p.embeddings),
            pipeline_parallel: gpus.len() > 1
                && ngl > m.cache.layers
                && !p.no_kv_offload
                && !placement.has_overrides(),
            terms: b.compute.terms,
        }
    }

    /// The buffers of the load placed as `placement` says.
    pub(super) fn buffers(&self, w: &Weights<'_>, placement: &Placement) -> Buffers {
        let (m, p) = (self.m, self.p);
        let layout = Layout::new(m.cache.layers, p.build, placement, self.gpus);
        let stretches = layout.stretches();
        let kv = kv::per_place(
            m,
            p,
            &self.r,
            (&layout, &stretches),
            &self.cuda,
            (self.full, self.swa),
        );
        let placed = place_weights(w, (&layout, &stretches), &self.cuda);
        let (layers, output) = (layout.counts(), layout.output());
        let compute = self.compute_buffers(w, (layers, output), &placed);
        Buffers {
            layers,
            output,
            kv,
            placed,
            compute,
        }
    }

    /// The load placed as `placement` says with an adapter loaded beside
    /// it: its pairs go where the weights they adapt went (a layer's
    /// fraction on its GPU, the rest to the overflow place, a host layer's
    /// in host memory, the output layer's with it), each tensor padded as
    /// [`super::adapter`] says.
    pub(super) fn plan_adapted(
        &self,
        w: &Weights<'_>,
        adapter: &super::adapter::LoadedAdapter,
        placement: &Placement,
    ) -> Plan {
        let mut plan = self.plan(w, placement);
        let layout = Layout::new(self.m.cache.layers, self.p.build, placement, self.gpus);
        let lora = Weights {
            token_embd: 0,
            output: adapter.output,
            output_norm: 0,
            tied: false,
            layers: super::weights::Layers::Each(&adapter.layers),
        };
        let placed = place_weights(&lora, (&layout, &layout.stretches()), &self.cuda);
        for (g, b) in plan.gpus.iter_mut().zip(placed.gpu) {
            g.lora = b;
        }
        plan.host.lora = placed.host;
        plan
    }

    /// The compute buffers of the load: where its work is (the layers on
    /// each GPU and the host's, the output layer's place).
    fn compute_buffers(
        &self,
        w: &Weights<'_>,
        ((layers_on, host_layers), output): (([u32; MAX_DEVICES], u32), Place),
        placed: &Placed,
    ) -> ComputeBuffers {
        let mut backends = [Backend::Cuda; MAX_DEVICES];
        for (b, g) in backends.iter_mut().zip(self.gpus) {
            *b = g.backend;
        }
        let place = Where {
            layers_on,
            host_layers,
            n_gpus: self.gpus.len(),
            backends,
            output,
            kv_on_host: self.p.no_kv_offload,
            largest_host_tensor: placed.largest_host,
            output_weight: w.output.bytes,
            layer_kv: self.full.0,
        };
        compute::buffers(&self.stages, &self.r, &self.settings, &place)
    }
}

/// One placement's buffers, by place: the repeating layers on each GPU
/// and on the host, where the output layer is, and each buffer.
pub(super) struct Buffers {
    layers: ([u32; MAX_DEVICES], u32),
    output: Place,
    kv: kv::PerPlace,
    placed: Placed,
    compute: ComputeBuffers,
}

impl Buffers {
    /// What `place` holds.
    pub(super) fn device(&self, place: Place) -> DeviceBytes {
        let (on, host_layers) = self.layers;
        match place {
            Place::Gpu(d) => DeviceBytes {
                weights: self.placed.gpu[d],
                kv: self.kv.gpu[d].0,
                kv_swa: self.kv.swa_gpu[d],
                recurrent: self.kv.gpu[d].1,
                compute: self.compute.gpu[d],
                layers: on[d],
                output: self.output == place,
                lora: 0,
            },
            Place::Host => DeviceBytes {
                weights: self.placed.host,
                kv: self.kv.host.0,
                kv_swa: self.kv.swa_host,
                recurrent: self.kv.host.1,
                compute: self.compute.host,
                layers: host_layers,
                output: self.output == place,
                lora: 0,
            },
        }
    }
}

fn cuda_flags(gpus: &[Gpu]) -> [bool; MAX_DEVICES] {
    let mut c = [false; MAX_DEVICES];
    for (x, g) in c.iter_mut().zip(gpus) {
        *x = matches!(g.backend, Backend::Cuda);
    }
    c
}

/// The model buffers by place.
struct Placed {
    gpu: [u128; MAX_DEVICES],
    host: u128,
    /// The largest tensor an op offloaded from host memory copies.
    largest_host: u128,
}

impl Placed {
    /// `part` of the layers at `place` (`largest`: their largest tensor).
    fn put(&mut self, place: Place, part: Part, largest: u128, cuda: &[bool; MAX_DEVICES]) {
        match place {
            Place::Gpu(d) => self.gpu[d] += part.on(cuda[d]),
            Place::Host => {
                self.host += part.bytes;
                self.largest_host = self.largest_host.max(largest);
            }
        }
    }
}

/// Each layer's tensors where the layout puts them: the input layer on the
/// host; a layer on a GPU keeps its fraction there and sends the rest to
/// its overflow place; a layer on the host is wholly there; the output
/// layer on its device (with tied embeddings a GPU gets a duplicate of
/// `token_embd`, the host nothing more). Summed stretch by stretch of
/// layers in one place with one fraction.
fn place_weights(
    w: &Weights<'_>,
    (layout, stretches): (&Layout, &Stretches),
    cuda: &[bool; MAX_DEVICES],
) -> Placed {
    let mut out = Placed {
        gpu: [0; MAX_DEVICES],
        host: w.token_embd,
        largest_host: 0,
    };
    for (lo, hi) in stretches.iter() {
        let (place, f, to) = match layout.place(lo) {
            Place::Host => (Place::Host, Fraction::Full, Place::Host),
            gpu @ Place::Gpu(_) => {
                let (f, to) = layout.fraction(lo);
                (gpu, f, to)
            }
        };
        let (mut kept, mut shed, mut largest, mut largest_shed) = Default::default();
        w.layers.each(lo, hi, |lb, n| {
            kept = lb.kept(f).times(n).plus(kept);
            largest = lb.largest.max(largest);
            if f != Fraction::Full {
                shed = lb.overflow(f).times(n).plus(shed);
                largest_shed = largest_overflow(lb, f).max(largest_shed);
            }
        });
        match place {
            Place::Host => out.put(Place::Host, kept, largest, cuda),
            Place::Gpu(_) => {
                out.put(place, kept, 0, cuda);
                out.put(to, shed, largest_shed, cuda);
            }
        }
    }
    match layout.output() {
        Place::Gpu(d) => out.gpu[d] += w.output.on(cuda[d]) + w.output_norm,
        Place::Host => out.host += if w.tied { 0 } else { w.output.bytes } + w.output_norm,
    }
    out
}

/// The largest single part of what a partial layer sheds (each routed
/// expert set is one tensor).
fn largest_overflow(lb: &super::weights::LayerBytes, f: Fraction) -> u128 {
    let parts = match f {
        Fraction::Full => [Part::default(); 6],
        Fraction::Moe => [
            lb.exps_gate,
            lb.exps_up,
            lb.exps_down,
            Part::default(),
            Part::default(),
            Part::default(),
        ],
        Fraction::Up => [
            lb.ffn_gate,
            lb.ffn_down,
            lb.exps_gate,
            lb.exps_down,
            Part::default(),
            Part::default(),
        ],
        Fraction::Gate => [
            lb.ffn_down,
            lb.exps_down,
            Part::default(),
            Part::default(),
            Part::default(),
            Part::default(),
        ],
        Fraction::Attn => [
            lb.ffn_gate,
            lb.ffn_up,
            lb.ffn_down,
            lb.exps_gate,
            lb.exps_up,
            lb.exps_down,
        ],
    };
    parts.iter().map(|p| p.bytes).max().unwrap_or(0)
}
