//! A LoRA adapter llama.cpp loads beside the model (`--lora`,
//! `--lora-scaled`; Ollama's `ADAPTER`, which it passes as `--lora`): its
//! own buffers, and what its matmuls add to the compute graph.
//!
//! Source: llama.cpp b10488 `src/llama-adapter.cpp`
//! (`llama_adapter_lora_init_impl`, 149-421) and `src/llama-graph.cpp`
//! (`build_lora_mm`, 1487-1516); measured on its CPU build over 124
//! adapter buffers and 147 compute buffers
//! (`scripts/measure/llamacpp/lora/NOTES.md`).
//!
//! - Each pair of tensors goes to the buffer type of the weight it
//!   adapts (`:335`; a CPU "extra" type such as `CPU_REPACK` falls back
//!   to the CPU, the same memory), one buffer per type, each tensor
//!   padded to the type's alignment: 32 bytes on the CPU and CUDA's host
//!   type, 128 on CUDA with its quantized row padding
//!   ([`super::ggml::cuda_extra`]). So the adapter is placed layer by
//!   layer as the model is ([`LayerBytes`] classify it by the weight's
//!   name as they do the weights).
//! - It is loaded after `--fit` chose the placement and is in neither
//!   `memory_breakdown` nor `--fit`'s sums (`common/fit.cpp` has no
//!   reference to it): on a GPU it comes out of `--fit`'s margin.
//! - Each adapted matmul adds `ax = A·x` (`{r, n_tokens}` f32) and
//!   `B·ax` (`{n_out, n_tokens}` f32) while its result is live; the
//!   warm-up reserves the graph again with them ([`LoraShape`]).

use super::ggml::{cuda_extra, cuda_row_pad, pad};
use super::weights::{LayerBytes, Part};
use crate::lora::Adapter;
use crate::model::gguf::{adapter_tensors, AdapterAt, AdapterMisfit};
use crate::model::Architecture;

/// The CPU buffer types' alignment (`ggml_backend_cpu_buffer_type_get_alignment`:
/// `TENSOR_ALIGNMENT`, 32; CUDA's host type the same).
const CPU_ALIGNMENT: u128 = 32;

/// Which stages of the graph an adapter's matmuls run in, and its rank:
/// what the compute estimate adds for them (`compute::stages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoraShape {
    pub rank: u32,
    /// An attention projection (or any weight outside the MLP) adapted.
    pub attn: bool,
    /// The MLP's gate, up and down projections adapted.
    pub gate: bool,
    pub up: bool,
    pub down: bool,
    /// The output layer adapted (`lm_head`).
    pub head: bool,
}

/// An adapter as llama.cpp loads it for a model: each layer's tensors,
/// classified as the weights are, and the stages it adds to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedAdapter {
    pub layers: Vec<LayerBytes>,
    /// The output layer's pair, placed with it.
    pub output: Part,
    pub shape: LoraShape,
}

impl LoadedAdapter {
    /// The adapter `ad` on `a`'s layers, as `convert_lora_to_gguf.py`
    /// writes it ([`adapter_tensors`]): per adapted weight `{n_in, n_out}`,
    /// `lora_a` `{n_in, r}` and `lora_b` `{r, n_out}` in the adapter's type.
    pub fn of(a: &Architecture, ad: &Adapter) -> Result<LoadedAdapter, AdapterMisfit> {
        let r = u64::from(ad.r.get());
        let mut layers = vec![LayerBytes::default(); a.layers as usize];
        let mut output = Part::default();
        let mut shape = LoraShape {
            rank: ad.r.get(),
            ..LoraShape::default()
        };
        let adapts = |m| ad.targets.adapts(m);
        adapter_tensors(a, (&adapts, ad.targets.head()), &mut |at, name, ne| {
            let (bytes, cuda_extra) = [tensor(ad, ne[0], r), tensor(ad, r, ne[1])]
                .into_iter()
                .fold((0, 0), |(b, e), (tb, te)| (b + tb, e + te));
            let l = match at {
                AdapterAt::Output => {
                    output = Part { bytes, cuda_extra };
                    shape.head = true;
                    return;
                }
                AdapterAt::Layer(l) => l,
            };
            let Some(layer) = layers.get_mut(l as usize) else {
                return;
            };
            layer.add(name, bytes, cuda_extra);
            match stage(name) {
                Stage::Gate => shape.gate = true,
                Stage::Up => shape.up = true,
                Stage::Down => shape.down = true,
                Stage::Attn => shape.attn = true,
            }
        })?;
        Ok(LoadedAdapter {
            layers,
            output,
            shape,
        })
    }

    /// Every adapter byte, as a CPU buffer holds them.
    pub fn bytes(&self) -> u128 {
        self.layers.iter().map(|l| l.total().bytes).sum::<u128>() + self.output.bytes
    }
}

/// One adapter tensor of `ne1` rows `ne0` wide: its bytes in a CPU buffer
/// (`ggml_nbytes` padded to 32) and what a CUDA buffer adds to them.
fn tensor(ad: &Adapter, ne0: u64, ne1: u64) -> (u128, u128) {
    let ty = ad.ty.ggml(ne0);
    let (blck, size) = (ty.block(), ty.block_bytes());
    let nbytes = u128::from(ne0 / blck) * u128::from(size) * u128::from(ne1);
    let cpu = pad(nbytes, CPU_ALIGNMENT);
    let cuda = nbytes + cuda_extra(nbytes, cuda_row_pad(blck, size, ne0));
    (cpu, cuda.saturating_sub(cpu))
}

/// The stage of the graph a weight's matmul runs in, by its name.
enum Stage {
    Attn,
    Gate,
    Up,
    Down,
}

fn stage(name: &str) -> Stage {
    if name.starts_with("ffn_gate_inp") {
        Stage::Attn
    } else if name.starts_with("ffn_gate") {
        Stage::Gate
    } else if name.starts_with("ffn_up") {
        Stage::Up
    } else if name.starts_with("ffn_down") {
        Stage::Down
    } else {
        Stage::Attn
    }
}
