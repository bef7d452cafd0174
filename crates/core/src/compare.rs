//! What a paste measured beside what vramfit estimates of the same thing:
//! each [`crate::paste::Measured`] figure against the estimate's field of
//! the same name, the difference in bytes (or tokens, blocks) and in
//! hundredths of a percent, and whether the estimate holds it: within the
//! printed figure's rounding, or (for a run that failed) at least what it
//! had reached.
//!
//! Above the estimate and the paste reader; imports nothing of the page.

use crate::paste::{Bound, Figure, Measured, Read};
use crate::report::Estimate;
use crate::units::Bytes;
use crate::Document;
use serde::Serialize;

/// One measured figure beside the estimate's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The estimate's JSON field (`kv_cache_bytes`, ...).
    pub field: &'static str,
    pub measured: u64,
    /// `None`: this estimate has no such figure (another engine's).
    pub estimated: Option<u64>,
    /// Estimated minus measured.
    pub difference: Option<i128>,
    /// The difference in hundredths of a percent of the measured figure.
    pub difference_hundredths_pct: Option<i128>,
    /// `bytes` or `count`.
    pub unit: &'static str,
    /// How the figure was printed: `±N` (its rounding), or `at least`
    /// (what a failed run had reached).
    pub bound: String,
    pub holds: Holds,
    /// Where the difference most likely comes from, when the estimate
    /// does not hold the figure ([`likely_cause`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<&'static str>,
    pub source: String,
}

/// Where a difference in each figure most likely comes from: what the
/// figure depends on that a paste may not say, or that vramfit models
/// from a prediction rather than the run's own files; a training run's
/// peak and a served model's differ in what drives them.
pub fn likely_cause(field: &str, training: bool) -> Option<&'static str> {
    Some(match field {
        "peak_allocated_bytes" if !training => "a setting the paste does not say (the context, parallel sequences, batch sizes, the cache type, flash attention), or buffers the engine's version sizes otherwise than the one vramfit models",
        "weights_bytes" => "the weights as stored differ from the link's model and weights: a file's own tensor types or an output layer of its own (read the file's header, --gguf or the page's GGUF picker, for its exact bytes), a checkpoint's format, or parts the estimate's caveats say it does not count (a multimodal checkpoint's encoders)",
        "kv_cache_bytes" => "the cache as the run set it differs: its context, parallel sequences, cache type or a sliding window the paste does not say",
        "kv_tokens" | "kv_blocks" => "the memory left for the cache differs: the weights, the profiling run's peak or gpu_memory_utilization",
        "peak_allocated_bytes" => "a setting the paste does not say (batch, sequence, checkpointing, the optimizer), or tensors of the program beside the model's",
        "peak_total_bytes" => "what the GPU holds beside the tensors: the CUDA context, the caching allocator's free segments, other processes",
        "host_bytes" => "what stays in host memory: layers or experts placed otherwise than the link says",
        "activation_peak_bytes" => "vLLM's profiling run: its token budget (max_num_batched_tokens) and the sampler's tensors",
        "non_torch_bytes" => "memory beside PyTorch's tensors: NCCL, the CUDA context and cuBLAS's workspaces, by driver and GPU",
        "cudagraph_bytes" => "CUDA graphs: the capture sizes and their memory pool",
        "requested_bytes" => "the GPU's capacity differs from the one chosen: choose the GPU the log names",
        "lora_bytes" => "the adapter the run loaded differs from the link's: a log does not print its rank, projections or type (set lora_r, lora_targets and lora_type as its adapter_config.json and file say; an adapter of the output layer adds lm_head to lora_targets)",
        "ollama_ps_size" | "ollama_ps_size_vram" => "Ollama's version (before v0.30.0 ollama ps showed Ollama's own prediction, not llama-server's buffers), or a setting the paste does not say (OLLAMA_NUM_PARALLEL, the cache type, flash attention, num_gpu)",
        _ => return None,
    })
}

/// Whether the estimate agrees with the measured figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holds {
    /// Within the printed figure's rounding.
    WithinRounding,
    /// Not within it: the difference is the estimate's error here (or a
    /// setting the paste did not say).
    Differs,
    /// The run failed having reached the figure, and the estimate is at
    /// least that.
    AtLeastReached,
    /// The estimate is below what the failed run had already reached.
    BelowReached,
    /// The estimate has no such figure.
    NotEstimated,
}

/// The estimate's figure named `field`.
pub fn estimated(field: &str, e: &Estimate) -> Option<Figure> {
    let served = e.served.as_deref();
    let bytes = |b: Bytes| Some(Figure::Bytes(b));
    match field {
        "peak_allocated_bytes" => bytes(e.peak_allocated_bytes),
        "peak_total_bytes" => bytes(e.peak_total_bytes),
        "host_bytes" => bytes(e.host_bytes),
        "weights_bytes" => served.and_then(|s| bytes(s.weights_bytes)),
        "kv_cache_bytes" => served.and_then(|s| bytes(s.kv_cache_bytes)),
        // A link without an adapter estimates none.
        "lora_bytes" => served.and_then(|s| bytes(s.lora_bytes.unwrap_or(Bytes::ZERO))),
        "activation_peak_bytes" => served
            .and_then(|s| s.activation_peak_bytes)
            .map(Figure::Bytes),
        "non_torch_bytes" => served.and_then(|s| s.non_torch_bytes).map(Figure::Bytes),
        "cudagraph_bytes" => served.and_then(|s| s.cudagraph_bytes).map(Figure::Bytes),
        "requested_bytes" => served.and_then(|s| s.requested_bytes).map(Figure::Bytes),
        "kv_tokens" => served.and_then(|s| s.kv_tokens).map(Figure::Count),
        "kv_blocks" => served.and_then(|s| s.kv_blocks).map(Figure::Count),
        "ollama_ps_size" => served
            .and_then(|s| s.ollama_ps)
            .map(|p| Figure::Bytes(p.size)),
        "ollama_ps_size_vram" => served
            .and_then(|s| s.ollama_ps)
            .map(|p| Figure::Bytes(p.size_vram)),
        _ => None,
    }
}

fn value(f: Figure) -> (u64, &'static str) {
    match f {
        Figure::Bytes(b) => (b.get(), "bytes"),
        Figure::Count(n) => (n, "count"),
    }
}

/// One row per measured figure, in the paste's order.
pub fn compare(read: &Read, e: &Estimate) -> Vec<Row> {
    read.measured
        .iter()
        .map(|m| {
            let mut r = row(m, Some(e));
            if read.model_unread && r.cause.is_some() {
                r.cause = Some(MODEL_UNREAD);
            }
            r
        })
        .collect()
}

/// The cause of a difference when the paste's model was not read: the
/// figure is set beside another model's estimate.
pub const MODEL_UNREAD: &str = "the pasted model was not read (see what was not read): the estimate is of the link's model, not the one measured";

/// The rows when there is no estimate (why is said beside them).
pub fn unestimated(read: &Read) -> Vec<Row> {
    read.measured.iter().map(|m| row(m, None)).collect()
}

fn row(m: &Measured, e: Option<&Estimate>) -> Row {
    let (measured, unit) = value(m.figure);
    let estimated = e.and_then(|e| estimated(m.field, e)).map(|f| value(f).0);
    let difference = estimated.map(|est| i128::from(est) - i128::from(measured));
    let pct = difference.and_then(|d| (measured > 0).then(|| d * 10_000 / i128::from(measured)));
    let holds = match (difference, m.bound) {
        (None, _) => Holds::NotEstimated,
        (Some(d), Bound::Printed { plus_minus }) if d.unsigned_abs() <= u128::from(plus_minus) => {
            Holds::WithinRounding
        }
        (Some(_), Bound::Printed { .. }) => Holds::Differs,
        (Some(d), Bound::AtLeast) if d >= 0 => Holds::AtLeastReached,
        (Some(_), Bound::AtLeast) => Holds::BelowReached,
    };
    let bound = match m.bound {
        Bound::Printed { plus_minus } => format!("±{plus_minus}"),
        Bound::AtLeast => "at least".into(),
    };
    let cause = match holds {
        Holds::Differs | Holds::BelowReached => {
            likely_cause(m.field, e.is_none_or(|e| e.peak_phase.of_training()))
        }
        Holds::WithinRounding | Holds::AtLeastReached | Holds::NotEstimated => None,
    };
    Row {
        field: m.field,
        measured,
        estimated,
        difference,
        difference_hundredths_pct: pct,
        unit,
        bound,
        holds,
        cause,
        source: m.source.clone(),
    }
}

impl Row {
    /// The row in words, for the page and `--text`.
    pub fn text(&self) -> String {
        let show = |n: u64| match self.unit {
            "bytes" => format!("{n} bytes ({})", crate::units::Bytes(n)),
            _ => n.to_string(),
        };
        let est = self
            .estimated
            .map_or_else(|| "not estimated".to_string(), show);
        let diff = match (self.difference, self.difference_hundredths_pct) {
            (Some(d), Some(p)) => format!(
                ", difference {d:+} ({}{}.{:02}%)",
                if p < 0 { "-" } else { "+" },
                p.abs() / 100,
                p.abs() % 100
            ),
            (Some(d), None) => format!(", difference {d:+}"),
            _ => String::new(),
        };
        let holds = match self.holds {
            Holds::WithinRounding => "within the printed rounding",
            Holds::Differs => "outside the printed rounding",
            Holds::AtLeastReached => "the estimate is at least what the run had reached",
            Holds::BelowReached => "the estimate is below what the run had already reached",
            Holds::NotEstimated => "this estimate has no such figure",
        };
        let cause = self
            .cause
            .map_or_else(String::new, |c| format!("; likely: {c}"));
        format!(
            "{}: measured {} ({}), estimated {est}{diff}: {holds}{cause}",
            self.field,
            show(self.measured),
            self.bound
        )
    }
}

/// The CLI's `--from` JSON (and the page's export of a paste): what was
/// read, then the estimate's document for it.
#[derive(Serialize)]
pub struct PastedDocument<'a> {
    /// The query string the paste reads to.
    pub read: String,
    pub found: &'a [&'static str],
    pub unknown: &'a [String],
    pub measured: Vec<Row>,
    /// Why there is no estimate, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_error: Option<String>,
    #[serde(flatten)]
    pub document: Option<Document<'a>>,
}

impl<'a> PastedDocument<'a> {
    pub fn new(read: &'a Read, measured: Vec<Row>, document: Document<'a>) -> Self {
        PastedDocument {
            read: read.query(),
            found: &read.found,
            unknown: &read.unknown,
            measured,
            estimate_error: None,
            document: Some(document),
        }
    }

    /// What was read when the query it makes has no estimate.
    pub fn without_estimate(read: &'a Read, why: String) -> Self {
        PastedDocument {
            read: read.query(),
            found: &read.found,
            unknown: &read.unknown,
            measured: unestimated(read),
            estimate_error: Some(why),
            document: None,
        }
    }

    /// Pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Plain structs of integers and strings: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
