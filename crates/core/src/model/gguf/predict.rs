//! The bytes of the GGUF file `convert_hf_to_gguf.py` and `llama-quantize`
//! would make of a model in a file type: per tensor type, per layer (for
//! llama.cpp's layer offload), the token embedding and the output tensor.
//!
//! It is a **prediction for a file not yet read**: a published file may
//! differ (an importance matrix changes three rules; `--tensor-type`,
//! `--output-tensor-type` and `--token-embedding-type` recipes such as
//! Unsloth's "UD" quants or `_L`/`_XL` files; a publisher's own conversion;
//! another llama.cpp build). Only a file's own header
//! ([`read_gguf`](super::read_gguf), [`GgufHeader::weights`]) gives its
//! exact bytes. Held to 41 published files in `tests/gguf.rs`
//! (`fixtures/gguf_file_sizes.jsonl`): the same bytes as
//! `scripts/measure/gguf/predict.py`, within 0.012 % of each file.
//!
//! Not verified: gpt-oss in a k-quant. Its experts arrive as MXFP4, which
//! `llama-quantize` refuses to requantize without `--allow-requantize`
//! (`llama_model_quantize_impl`: "requantizing from type %s is
//! disabled"); they are predicted as requantized, as a file made from a
//! dequantized upload would be.

use super::super::arch::{ArchError, Architecture};
use super::super::family::{Blocks, Qkv};
use super::ftype::FileType;
use super::header::GgufHeader;
use super::layout::{Category, Converter, Layout, Slot, Type70b};
use super::quant::{Model, NoFallback, Quantizer, Rules};
use super::types::GgmlType;
use std::fmt;

/// How the file was made, beyond its file type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Recipe {
    /// The `llama-quantize` build's rules.
    pub rules: Rules,
    /// An importance matrix was given: it changes the IQ3_XXS attn_v and
    /// ffn_down, the first eighth of IQ4_NL/IQ4_XS ffn_down (Q5_K only
    /// without one) and of Q4_0/Q5_0 ffn_down (Q4_1/Q5_1 only with one).
    pub imatrix: bool,
    /// The config's `rope_scaling` makes the converter write its rope
    /// factor tables (Llama 3.1's `rope_freqs`, Phi-3's long and short
    /// factors), `head_dim / 2` f32 each.
    pub rope_tables: bool,
}

impl Recipe {
    /// The rules of build 8973, with an importance matrix only where the
    /// file type cannot be made without one
    /// ([`FileType::requires_imatrix`]).
    pub fn for_file_type(ft: FileType) -> Recipe {
        Recipe {
            imatrix: ft.requires_imatrix(),
            ..Recipe::default()
        }
    }
}

/// The bytes of a model's GGUF file, predicted ([`predict`]) or read
/// ([`GgufHeader::weights`]). Every size is a sum of `ggml_nbytes`, the
/// bytes llama.cpp loads (a tensor's bytes in memory are its bytes in the
/// file), except `data_section`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufWeights {
    /// The file type predicted, or the one a read file's
    /// `general.file_type` names (`None`: absent, or not one
    /// `llama-quantize` writes).
    pub file_type: Option<FileType>,
    /// Every tensor.
    pub total: u128,
    /// The file's data section: each tensor padded to the alignment (32,
    /// `GGUF_DEFAULT_ALIGNMENT`, which `llama-quantize` always writes
    /// with). The file is this plus its header.
    pub data_section: u128,
    /// `token_embd.weight`. llama.cpp keeps the input layer on the CPU;
    /// with tied embeddings the output layer reads this tensor too.
    pub token_embd: u128,
    /// `output.weight` (0 when the embeddings are tied).
    pub output: u128,
    /// The other tensors outside the layers: `output_norm`, a learned
    /// position table, rope factor tables.
    pub other: u128,
    /// Each layer's tensors, by layer index (`blk.N.`): what `-ngl`
    /// offloads layer by layer.
    pub layers: Vec<u128>,
    /// Tensors in the file.
    pub tensors: u32,
    /// Tensors whose row is not a whole number of blocks of the type the
    /// rules chose (`tensor_type_fallback`; 0 for a read file).
    pub fallbacks: u32,
    by_type: [(u32, u128); GgmlType::COUNT],
}

impl GgufWeights {
    /// Tensors and bytes per ggml type, for the types present, in
    /// [`GgmlType::ALL`] order.
    pub fn by_type(&self) -> impl Iterator<Item = (GgmlType, u32, u128)> + '_ {
        GgmlType::ALL
            .into_iter()
            .zip(self.by_type.iter())
            .filter(|(_, (n, _))| *n > 0)
            .map(|(t, &(n, b))| (t, n, b))
    }
}

/// Why no file can be predicted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PredictError {
    /// `llama-quantize` throws: tensor `tensor`'s row of `row` elements is
    /// not a whole number of `ty`'s blocks and `ty` has no fallback.
    NoFallback(NoFallback),
    /// The numbers do not make a model ([`Architecture::validate`]).
    Arch(ArchError),
    /// A size beyond 2^128 bytes (numbers no model has).
    TooLarge,
}

/// Refuses an architecture whose GGUF this module cannot predict (none
/// left: every family's converter is modelled).
pub(crate) fn predictable(a: &Architecture) -> Result<(), PredictError> {
    a.validate().map_err(PredictError::Arch)
}

impl fmt::Display for PredictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PredictError::NoFallback(n) => write!(
                f,
                "llama-quantize cannot write {}: its rows of {} are not whole blocks of {} ({} elements) and {} has no fallback",
                n.tensor,
                n.row,
                n.ty,
                n.ty.block(),
                n.ty
            ),
            PredictError::Arch(e) => write!(f, "these numbers do not make a model: {e}"),
            PredictError::TooLarge => f.write_str("the model is too large to size"),
        }
    }
}

impl std::error::Error for PredictError {}

/// The GGUF file of `a` in file type `ft`, made by llama.cpp b8973 with
/// an importance matrix only where `ft` needs one
/// ([`Recipe::for_file_type`]): see [`predict_with`].
pub fn predict(a: &Architecture, ft: FileType) -> Result<GgufWeights, PredictError> {
    predict_with(a, ft, Recipe::for_file_type(ft))
}

/// The GGUF file of `a` in file type `ft` made as `recipe` says: a
/// prediction for a file not yet read (the module's doc says what it
/// cannot know). One pass over the tensors outside the layers and one per
/// layer over a layer's dozen tensors: microseconds.
///
/// Sources: llama.cpp b8973 `convert_hf_to_gguf.py` (which tensors, in
/// which float type) and `src/llama-quant.cpp` (`llama_model_quantize_impl`:
/// the tensors in `weights_map` order, each typed by
/// `llama_tensor_get_type`, written with `GGML_PAD(size, 32)`).
pub fn predict_with(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
) -> Result<GgufWeights, PredictError> {
    predict_each(a, ft, recipe, &mut |_| {})
}

/// One tensor of a GGUF file (predicted or read): its layer (`None`:
/// outside the layers), its name without the `blk.N.` prefix, its type, its
/// row width and its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorBytes<'a> {
    pub layer: Option<u32>,
    pub name: &'a str,
    pub ty: GgmlType,
    pub ne0: u64,
    pub bytes: u128,
}

/// [`predict_with`], telling `each` every tensor as it is typed (what a
/// runner that places tensors one by one needs: llama.cpp's layer
/// offload).
pub fn predict_each(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
    each: &mut dyn FnMut(TensorBytes<'_>),
) -> Result<GgufWeights, PredictError> {
    predictable(a)?;
    let layout = Layout::of(a, recipe.rope_tables);
    let mut q = quantizer(a, ft, recipe, &layout);
    let mut w = GgufWeights::empty(Some(ft), usize::try_from(a.layers).unwrap_or(0));
    for s in &layout.outside {
        let (ty, bytes) = w.add_outside(&mut q, s)?;
        each(TensorBytes {
            layer: None,
            name: s.name,
            ty,
            ne0: s.ne[0],
            bytes,
        });
    }
    for l in 0..a.layers {
        let slots = layout.slots(a, l);
        let mut layer = 0u128;
        for s in slots {
            let (ty, bytes) = w.add(&mut q, s, u64::from(l))?;
            each(TensorBytes {
                layer: Some(l),
                name: s.name,
                ty,
                ne0: s.ne[0],
                bytes,
            });
            layer = layer.checked_add(bytes).ok_or(PredictError::TooLarge)?;
        }
        w.layers.push(layer);
    }
    w.fallbacks = q.n_fallback;
    Ok(w)
}

impl GgufWeights {
    fn empty(file_type: Option<FileType>, layers: usize) -> Self {
        GgufWeights {
            file_type,
            total: 0,
            data_section: 0,
            token_embd: 0,
            output: 0,
            other: 0,
            layers: Vec::with_capacity(layers),
            tensors: 0,
            fallbacks: 0,
            by_type: [(0, 0); GgmlType::COUNT],
        }
    }

    /// Adds tensor `s`, outside the layers, to its part: its type and
    /// bytes.
    fn add_outside(
        &mut self,
        q: &mut Quantizer,
        s: &Slot,
    ) -> Result<(GgmlType, u128), PredictError> {
        let (ty, bytes) = self.add(q, s, 0)?;
        let part = match s.cat {
            Category::TokenEmbd => &mut self.token_embd,
            Category::Output => &mut self.output,
            Category::AttnQkv
            | Category::AttnKvB
            | Category::AttnV
            | Category::AttnK
            | Category::AttnQ
            | Category::AttnOutput
            | Category::FfnUp
            | Category::FfnGate
            | Category::FfnDown
            | Category::Other => &mut self.other,
        };
        *part += bytes;
        Ok((ty, bytes))
    }

    /// Adds `bytes` of type `ty` to the totals, the data section padded to
    /// `alignment`.
    fn tally(&mut self, ty: GgmlType, bytes: u128, alignment: u128) -> Result<(), PredictError> {
        let padded = bytes.div_ceil(alignment).checked_mul(alignment);
        let (total, data) = (
            self.total.checked_add(bytes),
            padded.and_then(|p| self.data_section.checked_add(p)),
        );
        let (Some(total), Some(data)) = (total, data) else {
            return Err(PredictError::TooLarge);
        };
        (self.total, self.data_section) = (total, data);
        let t = &mut self.by_type[ty.index()];
        *t = (t.0 + 1, t.1 + bytes);
        self.tensors += 1;
        Ok(())
    }

    /// Types tensor `s` of layer `layer` and adds it to the totals; its
    /// type and bytes.
    fn add(
        &mut self,
        q: &mut Quantizer,
        s: &Slot,
        layer: u64,
    ) -> Result<(GgmlType, u128), PredictError> {
        let (ty, bytes) = typed(q, s, layer)?;
        self.tally(ty, bytes, 32)?;
        Ok((ty, bytes))
    }
}

/// `llama-quantize`'s state for `a`'s file in `ft` made as `recipe` says,
/// before its first tensor.
pub(super) fn quantizer(
    a: &Architecture,
    ft: FileType,
    recipe: Recipe,
    layout: &Layout,
) -> Quantizer {
    let has_tied = !layout.outside.iter().any(|s| s.cat == Category::Output);
    Quantizer::new(
        ft,
        recipe.rules,
        recipe.imatrix,
        model(a),
        has_tied,
        attention_wv(a, layout),
    )
}

/// Tensor `s` of layer `layer` (0 outside the layers) typed by `q`: its
/// type and bytes (`llama-quantize` refuses it: its row is not whole
/// blocks of the type chosen).
pub(super) fn typed(
    q: &mut Quantizer,
    s: &Slot,
    layer: u64,
) -> Result<(GgmlType, u128), PredictError> {
    let ty = q.tensor_type(s, layer).map_err(PredictError::NoFallback)?;
    let bytes = ty
        .tensor_bytes(&s.ne)
        .ok_or(PredictError::NoFallback(NoFallback {
            tensor: s.name,
            row: s.ne[0],
            ty,
        }))?;
    Ok((ty, bytes))
}

/// What the rules read of the model, as the file's hyperparameters say it:
/// the converter writes one key/value head for latent attention
/// (`DeepseekV2Model.set_gguf_parameters`: "MLA converts into MQA").
fn model(a: &Architecture) -> Model {
    let kv_heads = match a.family.spec().qkv {
        Qkv::Latent => 1,
        Qkv::Separate | Qkv::Fused => u64::from(a.kv_heads),
    };
    let heads = u64::from(a.heads);
    let is_70b = match Converter::of(a.family).type_70b {
        Type70b::Never => false,
        Type70b::LlamaGqa80 => a.experts != 8 && a.layers == 80 && heads != kv_heads,
        Type70b::Layers80 => a.layers == 80,
    };
    // `n_layer_all`: the MTP blocks a converter appends count.
    let mtp = u64::from(Converter::of(a.family).mtp_blocks);
    Model {
        layers: u64::from(a.layers) + mtp,
        experts: u64::from(a.experts),
        gqa: heads.checked_div(kv_heads).unwrap_or(0),
        is_70b,
    }
}

/// `n_attention_wv`: the attn_v, attn_qkv and attn_kv_b tensors of every
/// layer (`init_quantize_state_counters`; a hybrid's DeltaNet layers count
/// their `attn_qkv`).
fn attention_wv(a: &Architecture, layout: &Layout) -> u64 {
    let per = |slots: &[Slot]| {
        slots
            .iter()
            .filter(|s| {
                matches!(
                    s.cat,
                    Category::AttnV | Category::AttnQkv | Category::AttnKvB
                )
            })
            .count() as u64
    };
    let spec = a.family.spec();
    if spec.varies_by_layer() || spec.blocks == Blocks::Single {
        // Gemma 4: the global layers with keys as values have no attn_v;
        // Nemotron-H: only its attention layers have one.
        return (0..a.layers).map(|l| per(layout.slots(a, l))).sum();
    }
    let [(_, dense), (_, moe)] = a.layer_kinds();
    let dense_end = u32::try_from(dense).unwrap_or(a.layers);
    let (dense_linear, moe_linear) = (
        u64::from(a.linear_in(0, dense_end)),
        u64::from(a.linear_in(dense_end, a.layers)),
    );
    per(&layout.dense) * (dense - dense_linear)
        + per(&layout.moe) * (moe - moe_linear)
        + per(&layout.dense_linear) * dense_linear
        + per(&layout.moe_linear) * moe_linear
}

impl GgufHeader {
    /// The exact bytes of a file that exists, in the form of a prediction:
    /// `token_embd.weight`, `output.weight`, each `blk.N.` layer's tensors
    /// (N below the tensor count, so that a corrupt index allocates
    /// nothing), and the rest. Read from the tensor infos, each tensor's
    /// `ggml_nbytes`.
    pub fn weights(&self) -> GgufWeights {
        self.weights_each(&mut |_| {})
    }

    /// [`GgufHeader::weights`], telling `each` every tensor.
    pub fn weights_each(&self, each: &mut dyn FnMut(TensorBytes<'_>)) -> GgufWeights {
        let ft = self
            .model()
            .file_type
            .and_then(|id| u32::try_from(id).ok())
            .and_then(FileType::from_id);
        let layer_of = |name: &str| {
            let rest = name.strip_prefix("blk.")?;
            let n: usize = rest.split('.').next()?.parse().ok()?;
            (n < self.tensors.len()).then_some(n)
        };
        let n_layers = self.tensors.iter().filter_map(|t| layer_of(&t.name)).max();
        let mut w = GgufWeights::empty(ft, 0);
        w.layers = vec![0; n_layers.map_or(0, |n| n + 1)];
        for t in &self.tensors {
            let bytes = u128::from(t.bytes);
            // u64 sizes of fewer than 2^64 tensors: no sum overflows u128.
            let _ = w.tally(t.ty, bytes, u128::from(self.alignment.max(1)));
            let layer = layer_of(&t.name);
            let part = match (t.name.as_str(), layer) {
                (_, Some(l)) => &mut w.layers[l],
                ("token_embd.weight", None) => &mut w.token_embd,
                ("output.weight", None) => &mut w.output,
                (_, None) => &mut w.other,
            };
            *part += bytes;
            let name = match layer {
                Some(l) => t.name.get(format!("blk.{l}.").len()..).unwrap_or(&t.name),
                None => &t.name,
            };
            each(TensorBytes {
                layer: layer.and_then(|l| u32::try_from(l).ok()),
                name,
                ty: t.ty,
                ne0: t.ne[0],
                bytes,
            });
        }
        w
    }
}
