//! What a byte of memory is for ([`Component`]) and bytes per component
//! ([`Components`]): shared by the terms, the report and every workload;
//! imports only `units`.

use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// What a byte of memory is for, in any workload.
///
/// The order is the stacking order of the chart, bottom to top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// Model weights and buffers, in their storage dtype.
    Parameters,
    /// The key/value cache of an inference engine (or the pool it sets
    /// aside for it).
    KvCache,
    /// Optimizer state (Adam moments, momentum buffers, step counters).
    OptimizerState,
    /// Gradients of the trainable parameters.
    Gradients,
    /// Temporaries the optimizer allocates inside `step()`.
    OptimizerTemporaries,
    /// Autocast's low-precision weight copies, kept from forward to backward.
    WeightCopies,
    /// Tensors saved for backward by the layers, and the inputs.
    Activations,
    /// Logits-sized tensors: the logits, their fp32 upcast, the loss's
    /// log-softmax and their gradients.
    Logits,
    /// Kept across steps: data put on the GPU, and leaks.
    Retained,
    /// An inference engine's own buffers: CUDA graphs, its profiling run's
    /// activations, memory outside PyTorch.
    Engine,
    /// CUDA context and caching-allocator reserve: not tensors.
    Overhead,
}

impl Component {
    pub const ALL: [Component; 11] = [
        Component::Parameters,
        Component::KvCache,
        Component::OptimizerState,
        Component::Gradients,
        Component::OptimizerTemporaries,
        Component::WeightCopies,
        Component::Activations,
        Component::Logits,
        Component::Retained,
        Component::Engine,
        Component::Overhead,
    ];

    /// Stable machine name, as in the JSON output.
    pub fn key(self) -> &'static str {
        match self {
            Component::Parameters => "parameters",
            Component::KvCache => "kv_cache",
            Component::OptimizerState => "optimizer_state",
            Component::Gradients => "gradients",
            Component::OptimizerTemporaries => "optimizer_temporaries",
            Component::WeightCopies => "weight_copies",
            Component::Activations => "activations",
            Component::Logits => "logits",
            Component::Retained => "retained",
            Component::Engine => "engine",
            Component::Overhead => "overhead",
        }
    }

    /// Plain-words label for people.
    pub fn label(self) -> &'static str {
        match self {
            Component::Parameters => "Parameters",
            Component::KvCache => "KV cache",
            Component::OptimizerState => "Optimizer state",
            Component::Gradients => "Gradients",
            Component::OptimizerTemporaries => "Optimizer temporaries",
            Component::WeightCopies => "Autocast weight copies",
            Component::Activations => "Activations",
            Component::Logits => "Logits & loss",
            Component::Retained => "Kept across steps",
            Component::Engine => "Engine buffers",
            Component::Overhead => "CUDA context & allocator",
        }
    }

    /// Position in [`Component::ALL`] (the declaration order).
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Bytes per component at one moment. Always sums to its total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Components([Bytes; 11]);

impl Components {
    pub fn get(&self, c: Component) -> Bytes {
        self.0[c.index()]
    }

    pub fn set(&mut self, c: Component, b: Bytes) {
        self.0[c.index()] = b;
    }

    pub fn with(mut self, c: Component, b: Bytes) -> Self {
        self.set(c, b);
        self
    }

    /// Sum of every component, overhead included.
    pub fn total(&self) -> Bytes {
        self.0.iter().copied().sum()
    }

    /// Sum of live tensor bytes: everything but [`Component::Overhead`]
    /// (what `torch.cuda.memory_allocated()` reports).
    pub fn allocated(&self) -> Bytes {
        self.total().saturating_sub(self.get(Component::Overhead))
    }

    /// Non-zero components in stacking order.
    pub fn iter(&self) -> impl Iterator<Item = (Component, Bytes)> + '_ {
        Component::ALL
            .iter()
            .map(move |&c| (c, self.get(c)))
            .filter(|(_, b)| b.get() > 0)
    }
}

impl Serialize for Components {
    /// A map of the non-zero components, keyed by [`Component::key`].
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (c, b) in self.iter() {
            m.serialize_entry(c.key(), &b)?;
        }
        m.end()
    }
}
