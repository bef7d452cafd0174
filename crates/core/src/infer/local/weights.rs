//! The model's weights as llama.cpp places them: bytes per layer, split
//! the way `--fit`'s tensor overrides split a layer (its attention, the
//! MLP's gate, up and down, and the routed experts of each), the input
//! and output layers. The caller fills it from the GGUF's tensors
//! ([`LayerBytes::add`] classifies a tensor by its name, as the overrides'
//! regular expressions do); this module reads no file.

use crate::model::gguf::Run;

/// Bytes of some tensors: as the file stores them, and what a CUDA buffer
/// adds to them (each tensor's `ggml::cuda_extra`: the row padding of a
/// quantized tensor, the 128-byte alignment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    pub bytes: u128,
    pub cuda_extra: u128,
}

impl Part {
    /// Bytes on a device (`cuda`: a CUDA buffer, which pads).
    pub const fn on(self, cuda: bool) -> u128 {
        if cuda {
            self.bytes + self.cuda_extra
        } else {
            self.bytes
        }
    }

    /// This part and `o` together.
    pub const fn plus(self, o: Part) -> Part {
        Part {
            bytes: self.bytes + o.bytes,
            cuda_extra: self.cuda_extra + o.cuda_extra,
        }
    }

    /// `n` parts like this one.
    pub const fn times(self, n: u32) -> Part {
        Part {
            bytes: self.bytes * n as u128,
            cuda_extra: self.cuda_extra * n as u128,
        }
    }
}

/// How much of a layer stays on its device; the rest goes to the
/// overflow buffer (the CPU, or with `--fit` on several GPUs the next
/// one). `common/fit.cpp: common_layer_fraction_t` and
/// `get_overflow_pattern` (`:17-23`, `:407-440`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fraction {
    /// The whole layer.
    Full,
    /// All but the routed experts (`ffn_(up|down|gate_up|gate)_(ch|)exps`
    /// overflow): `LAYER_FRACTION_MOE`.
    Moe,
    /// Attention and the MLP's up projections (`ffn_(gate|gate_up|down).*`
    /// overflow): `LAYER_FRACTION_UP`.
    Up,
    /// All but the down projections (`ffn_down.*` overflow):
    /// `LAYER_FRACTION_GATE`.
    Gate,
    /// Attention only (`ffn_(gate|up|gate_up|down).*` overflow):
    /// `LAYER_FRACTION_ATTN`.
    Attn,
}

/// One repeating layer's tensors (`blk.N.*`), by what the overrides move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerBytes {
    /// Every tensor not named `ffn_gate*`, `ffn_up*`, `ffn_down*`: the
    /// norms (`ffn_norm` included), attention, anything else.
    pub attn: Part,
    /// `ffn_gate*` and `ffn_gate_up*` but the routed experts: the dense
    /// gate, the router (`ffn_gate_inp`), the shared expert's gate.
    pub ffn_gate: Part,
    /// `ffn_up*` but the routed experts.
    pub ffn_up: Part,
    /// `ffn_down*` but the routed experts.
    pub ffn_down: Part,
    /// The routed experts: `ffn_gate_exps` / `ffn_gate_up_exps`,
    /// `ffn_up_exps`, `ffn_down_exps` (and `_chexps`, and their biases).
    pub exps_gate: Part,
    pub exps_up: Part,
    pub exps_down: Part,
    /// The largest single tensor (the copy an offloaded matmul makes).
    pub largest: u128,
}

impl LayerBytes {
    /// Counts a tensor of this layer, named without its `blk.N.` prefix
    /// (`ffn_up_exps.weight`), of `bytes` in the file and `cuda_extra` more
    /// on CUDA.
    pub fn add(&mut self, name: &str, bytes: u128, cuda_extra: u128) {
        let p = Part { bytes, cuda_extra };
        let slot = match ffn_kind(name) {
            None => &mut self.attn,
            Some((Proj::Gate, false)) => &mut self.ffn_gate,
            Some((Proj::Up, false)) => &mut self.ffn_up,
            Some((Proj::Down, false)) => &mut self.ffn_down,
            Some((Proj::Gate, true)) => &mut self.exps_gate,
            Some((Proj::Up, true)) => &mut self.exps_up,
            Some((Proj::Down, true)) => &mut self.exps_down,
        };
        *slot = slot.plus(p);
        self.largest = self.largest.max(bytes);
    }

    /// The whole layer.
    pub const fn total(&self) -> Part {
        self.kept(Fraction::Full)
            .plus(self.overflow(Fraction::Full))
    }

    /// What stays on the layer's device under `f`.
    pub const fn kept(&self, f: Fraction) -> Part {
        let dense = self.attn.plus(self.ffn_gate).plus(self.ffn_up);
        match f {
            Fraction::Full => dense
                .plus(self.ffn_down)
                .plus(self.exps_gate)
                .plus(self.exps_up)
                .plus(self.exps_down),
            Fraction::Moe => dense.plus(self.ffn_down),
            Fraction::Up => self.attn.plus(self.ffn_up).plus(self.exps_up),
            Fraction::Gate => dense.plus(self.exps_gate).plus(self.exps_up),
            Fraction::Attn => self.attn,
        }
    }

    /// What goes to the overflow buffer under `f`.
    pub const fn overflow(&self, f: Fraction) -> Part {
        let exps = self.exps_gate.plus(self.exps_up).plus(self.exps_down);
        match f {
            Fraction::Full => Part {
                bytes: 0,
                cuda_extra: 0,
            },
            Fraction::Moe => exps,
            Fraction::Up => self
                .ffn_gate
                .plus(self.ffn_down)
                .plus(self.exps_gate)
                .plus(self.exps_down),
            Fraction::Gate => self.ffn_down.plus(self.exps_down),
            Fraction::Attn => self
                .ffn_gate
                .plus(self.ffn_up)
                .plus(self.ffn_down)
                .plus(exps),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proj {
    Gate,
    Up,
    Down,
}

/// Which MLP projection a tensor name belongs to, and whether it is a
/// routed expert's: the overrides' patterns are searched in the name
/// (`std::regex_search`), `ffn_(gate|up|gate_up|down)` and
/// `ffn_(up|down|gate_up|gate)_(ch|)exps`.
fn ffn_kind(name: &str) -> Option<(Proj, bool)> {
    let at = crate::model::gguf::find_in_name(name, "ffn_")?;
    let rest = &name[at + 4..];
    let (proj, tail) = if let Some(t) = rest.strip_prefix("gate_up") {
        (Proj::Gate, t)
    } else if let Some(t) = rest.strip_prefix("gate") {
        (Proj::Gate, t)
    } else if let Some(t) = rest.strip_prefix("up") {
        (Proj::Up, t)
    } else if let Some(t) = rest.strip_prefix("down") {
        (Proj::Down, t)
    } else {
        return None;
    };
    let exps = tail.starts_with("_exps") || tail.starts_with("_chexps");
    Some((proj, exps))
}

/// The model's weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelBytes<'a> {
    /// `token_embd` (and any other input-layer tensor): always in host
    /// memory (`llama_model::load_tensors`, "there is very little benefit
    /// to offloading the input layer", `src/llama-model.cpp:1369-1370`).
    pub token_embd: u128,
    /// `output`: its own tensor, or with tied embeddings `token_embd`'s
    /// bytes (the output device gets a duplicate, `TENSOR_DUPLICATED`).
    pub output: Part,
    /// `output_norm` (and other output-layer tensors).
    pub output_norm: u128,
    /// The output is `token_embd` itself: on the host it is the same mapped
    /// range and costs nothing more.
    pub tied: bool,
    /// One entry per repeating layer, or a single entry that every layer
    /// repeats.
    pub layers: &'a [LayerBytes],
}

impl ModelBytes<'_> {
    /// Layer `il`'s tensors (`None`: the list has neither one entry nor
    /// one per layer).
    pub fn layer(&self, il: u32, n_layer: u32) -> Option<&LayerBytes> {
        match self.layers.len() {
            1 => self.layers.first(),
            n if n == n_layer as usize => self.layers.get(il as usize),
            _ => None,
        }
    }

    /// Whether the list fits a model of `n_layer` layers.
    pub fn fits(&self, n_layer: u32) -> bool {
        self.layers.len() == 1 || self.layers.len() == n_layer as usize
    }

    /// Every byte of the file's tensors.
    pub fn total(&self, n_layer: u32) -> u128 {
        Weights::from(self).total(n_layer)
    }
}

/// A model's repeating layers, as the placement reads them: by ranges of
/// layers, so that a load is worked out per device rather than per layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layers<'a> {
    /// Every layer has these tensors.
    Same(&'a LayerBytes),
    /// One entry per layer.
    Each(&'a [LayerBytes]),
    /// Each kind of layer once, and the runs saying which kind each layer
    /// is (a predicted file's classes, a read file's kinds): in layer
    /// order, each from where the last ended, the first from layer 0.
    Runs {
        kinds: &'a [LayerBytes],
        runs: &'a [Run],
    },
}

impl Layers<'_> {
    /// Layers described: 1 for [`Layers::Same`].
    pub fn given(&self) -> usize {
        match self {
            Layers::Same(_) => 1,
            Layers::Each(each) => each.len(),
            Layers::Runs { runs, .. } => runs.last().map_or(0, |r| r.hi as usize),
        }
    }

    /// Whether they describe a model of `n_layer` layers.
    pub fn fits(&self, n_layer: u32) -> bool {
        matches!(self, Layers::Same(_)) || self.given() == n_layer as usize
    }

    /// Calls `f` with each kind of layer among `lo..hi` and how many of
    /// those layers are of it (a kind may come more than once).
    pub fn each(&self, lo: u32, hi: u32, mut f: impl FnMut(&LayerBytes, u32)) {
        if hi <= lo {
            return;
        }
        match *self {
            Layers::Same(l) => f(l, hi - lo),
            Layers::Each(each) => {
                let end = (hi as usize).min(each.len());
                for l in each.get(lo as usize..end).unwrap_or_default() {
                    f(l, 1);
                }
            }
            Layers::Runs { kinds, runs } => {
                // Up to eight kinds (a file has two or three), each is
                // told once with its count.
                let mut counts = [0u32; 8];
                let tally = kinds.len() <= counts.len();
                // Runs follow each other: those that end by `lo` are
                // skipped, those from `hi` on never reached.
                let from = runs.partition_point(|r| r.hi <= lo);
                for run in runs[from..].iter().take_while(|r| r.lo < hi) {
                    for (k, n) in run.kinds_in(lo, hi) {
                        match (tally, counts.get_mut(usize::from(k))) {
                            (true, Some(c)) => *c += n,
                            (true, None) | (false, _) => {
                                if let Some(l) = kinds.get(usize::from(k)) {
                                    f(l, n);
                                }
                            }
                        }
                    }
                }
                for (l, &n) in kinds.iter().zip(&counts).filter(|(_, &n)| n > 0) {
                    f(l, n);
                }
            }
        }
    }

    /// `part` of every layer of `lo..hi`, summed.
    pub fn sum(&self, lo: u32, hi: u32, part: impl Fn(&LayerBytes) -> Part) -> Part {
        let mut total = Part::default();
        self.each(lo, hi, |l, n| total = total.plus(part(l).times(n)));
        total
    }

    /// Layer `il`'s tensors.
    pub fn layer(&self, il: u32) -> Option<&LayerBytes> {
        match *self {
            Layers::Same(l) => Some(l),
            Layers::Each(each) => each.get(il as usize),
            Layers::Runs { kinds, runs } => runs
                .iter()
                .find(|r| r.lo <= il && il < r.hi)
                .and_then(|r| kinds.get(usize::from(r.kind_of(il)))),
        }
    }
}

/// The model's weights as the placement reads them: [`ModelBytes`] with
/// its layers in any of the [`Layers`] forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights<'a> {
    pub token_embd: u128,
    pub output: Part,
    pub output_norm: u128,
    pub tied: bool,
    pub layers: Layers<'a>,
}

impl<'a> From<&ModelBytes<'a>> for Weights<'a> {
    fn from(w: &ModelBytes<'a>) -> Self {
        Weights {
            token_embd: w.token_embd,
            output: w.output,
            output_norm: w.output_norm,
            tied: w.tied,
            layers: match w.layers {
                [one] => Layers::Same(one),
                each => Layers::Each(each),
            },
        }
    }
}

impl Weights<'_> {
    /// Every byte of the file's tensors (the layers' only when they fit a
    /// model of `n_layer` layers).
    pub fn total(&self, n_layer: u32) -> u128 {
        let layers = if self.layers.fits(n_layer) {
            self.layers.sum(0, n_layer, LayerBytes::total).bytes
        } else {
            0
        };
        let output = if self.tied { 0 } else { self.output.bytes };
        self.token_embd + output + self.output_norm + layers
    }
}

/// A GGUF file's tensors (predicted or read), gathered as llama.cpp
/// places them: each layer's parts, the token embedding, the output tensor
/// (with tied embeddings, the token embedding's bytes again) and the
/// output norm.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileBytes {
    pub layers: Vec<LayerBytes>,
    pub token_embd: u128,
    pub token_embd_part: Part,
    pub output: Option<Part>,
    pub output_norm: u128,
}

impl FileBytes {
    /// Counts one tensor (`crate::model::gguf::predict_each`'s or
    /// `GgufHeader::weights_each`'s).
    pub fn add(&mut self, t: crate::model::gguf::TensorBytes<'_>) {
        use super::ggml::{cuda_extra, cuda_row_pad};
        let row_pad = cuda_row_pad(t.ty.block(), t.ty.block_bytes(), t.ne0);
        let part = Part {
            bytes: t.bytes,
            cuda_extra: cuda_extra(t.bytes, row_pad),
        };
        match (t.layer, t.name) {
            (Some(l), name) => {
                let i = l as usize;
                if self.layers.len() <= i {
                    self.layers.resize(i + 1, LayerBytes::default());
                }
                self.layers[i].add(name, t.bytes, part.cuda_extra);
            }
            (None, "token_embd.weight") => {
                self.token_embd += t.bytes;
                self.token_embd_part = self.token_embd_part.plus(part);
            }
            // Gemma 4's per-layer embedding table is an input-layer tensor
            // (`LLM_TENSOR_PER_LAYER_TOKEN_EMBD`: `LLM_TENSOR_LAYER_INPUT`,
            // `src/llama-arch.cpp`), in host memory beside `token_embd` and
            // never the output's duplicate. Its projection and norm
            // (`per_layer_model_proj`, `per_layer_proj_norm`) are layer
            // 0's tensors in llama.cpp (`tn(..., 0)`); they are counted
            // with the output norm, on the output's device.
            (None, "per_layer_token_embd.weight") => self.token_embd += t.bytes,
            (None, "output.weight") => {
                self.output = Some(self.output.unwrap_or_default().plus(part))
            }
            (None, _) => self.output_norm += t.bytes,
        }
    }

    /// The weights as [`crate::infer::local::llama_cpp`] reads them.
    pub fn model(&self) -> ModelBytes<'_> {
        ModelBytes {
            token_embd: self.token_embd,
            output: self.output.unwrap_or(self.token_embd_part),
            output_norm: self.output_norm,
            tied: self.output.is_none(),
            layers: &self.layers,
        }
    }
}

/// A GGUF file's tensors with its repeating layers folded: `kinds`
/// gathered by kind of layer rather than by layer (its `layers` are the
/// kinds), and `runs` saying which kind each layer is. What a predicted
/// file ([`FoldedFile::predict`]) or a read one
/// ([`super::ReadFile::folded`]) is placed from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldedFile {
    pub kinds: FileBytes,
    pub runs: Vec<Run>,
}

impl FoldedFile {
    /// The file `llama-quantize` would make of `a` in file type `ft` as
    /// `recipe` says, each class of layer typed once
    /// ([`crate::model::gguf::predict_folded`]).
    pub fn predict(
        a: &crate::model::Architecture,
        ft: crate::model::gguf::FileType,
        recipe: crate::model::gguf::Recipe,
    ) -> Result<FoldedFile, crate::model::gguf::PredictError> {
        let mut kinds = FileBytes {
            layers: Vec::with_capacity(4),
            ..FileBytes::default()
        };
        let runs = crate::model::gguf::predict_folded(a, ft, recipe, &mut |class, t| {
            kinds.add(crate::model::gguf::TensorBytes {
                layer: class.map(u32::from),
                ..t
            });
        })?;
        Ok(FoldedFile { kinds, runs })
    }

    /// The weights as [`crate::infer::local::llama_cpp_with`] reads them.
    pub fn weights(&self) -> Weights<'_> {
        let f = &self.kinds;
        Weights {
            token_embd: f.token_embd,
            output: f.output.unwrap_or(f.token_embd_part),
            output_norm: f.output_norm,
            tied: f.output.is_none(),
            layers: Layers::Runs {
                kinds: &f.layers,
                runs: &self.runs,
            },
        }
    }
}
