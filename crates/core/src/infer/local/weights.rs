//! The model's weights as llama.cpp places them: bytes per layer, split
//! the way `--fit`'s tensor overrides split a layer (its attention, the
//! MLP's gate, up and down, and the routed experts of each), the input
//! and output layers. The caller fills it from the GGUF's tensors
//! ([`LayerBytes::add`] classifies a tensor by its name, as the overrides'
//! regular expressions do); this module reads no file.

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

    const fn plus(self, o: Part) -> Part {
        Part {
            bytes: self.bytes + o.bytes,
            cuda_extra: self.cuda_extra + o.cuda_extra,
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
    let at = name.find("ffn_")?;
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
        let layers: u128 = (0..n_layer)
            .filter_map(|il| self.layer(il, n_layer))
            .map(|l| l.total().bytes)
            .sum();
        let output = if self.tied { 0 } else { self.output.bytes };
        self.token_embd + output + self.output_norm + layers
    }
}
