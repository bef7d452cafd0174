//! Why each number is what it is: one row per component alive at the peak,
//! with the formula that produced it and the actual values substituted, and
//! a CSV export of the same table.

use crate::estimate::{self, Breakdown};
use crate::ledger::Part;
use crate::report::{Component, Estimate, Method};
use crate::scenario::{Dtype, Optimizer, Scenario};
use crate::seed::{self, SeedTerms};
use crate::units::Bytes;

/// One row of the breakdown table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub component: Component,
    /// Bytes at the overall peak.
    pub bytes: Bytes,
    /// The formula with values substituted.
    pub formula: String,
}

/// `1543714304` as `1 543 714 304` (thin spaces).
pub fn group(n: impl Into<u128>) -> String {
    let digits = n.into().to_string();
    let mut out = String::with_capacity(digits.len() * 2);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

fn gb(n: u128) -> String {
    format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64)
}

/// The rows for the estimate's peak, in stacking order.
pub fn rows(s: &Scenario, e: &Estimate) -> Vec<Row> {
    let Some(peak) = e.peak() else {
        return Vec::new();
    };
    let formulas: Vec<(Component, String)> = match e.method {
        Method::SeedFormula => seed_formulas(s),
        Method::Vramfit => match estimate::breakdown(s) {
            Ok(b) => vramfit_formulas(s, &b, peak.phase),
            Err(_) => Vec::new(),
        },
    };
    peak.components
        .iter()
        .map(|(c, bytes)| Row {
            component: c,
            bytes,
            formula: formulas
                .iter()
                .find(|(fc, _)| *fc == c)
                .map(|(_, f)| f.clone())
                .unwrap_or_default(),
        })
        .collect()
}

fn seed_formulas(s: &Scenario) -> Vec<(Component, String)> {
    let Ok(t) = SeedTerms::new(s) else {
        return Vec::new();
    };
    let n = s.params();
    let p = s.train.dtype.param_bytes();
    let tr = &s.train;
    vec![
        (Component::Parameters, format!("model = N × P = {} × {p} B", group(n))),
        (
            Component::OptimizerState,
            format!(
                "optimizer state = {} × N × P = {} × {} × {p} B",
                seed::state_multiplier(tr.optim),
                seed::state_multiplier(tr.optim),
                group(n)
            ),
        ),
        (Component::Gradients, format!("gradients = N × P = {} × {p} B", group(n))),
        (
            Component::OptimizerTemporaries,
            format!("optimizer intermediates = N × P = {} × {p} B", group(n)),
        ),
        (
            Component::Activations,
            format!(
                "activations = A × B × L × P with A = 4.6894e-4 × N + 1.8494e6 = {:.0}: {:.0} × {} × {} × {p} B = {}",
                seed::activations_per_token(n),
                seed::activations_per_token(n),
                tr.batch.get(),
                tr.seq.get(),
                gb(u128::from(t.activations.get()))
            ),
        ),
    ]
}

fn part_list(per_token: &[u64; 8]) -> String {
    Part::ALL
        .iter()
        .zip(per_token)
        .filter(|(_, &b)| b > 0)
        .map(|(p, b)| format!("{} {b} B", p.label()))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn vramfit_formulas(s: &Scenario, b: &Breakdown, phase: crate::Phase) -> Vec<(Component, String)> {
    let Some(a) = s.arch else {
        return Vec::new();
    };
    let t = &s.train;
    let n = a.params();
    let pb = t.dtype.param_bytes();
    let (gpus, zero) = (s.parallel.gpus.get(), s.parallel.zero.get());
    let split = |on: bool| {
        if on {
            format!(", ÷ {gpus} GPUs (ZeRO)")
        } else {
            String::new()
        }
    };
    let mut out = Vec::new();

    let mut params = format!("N × P = {} × {pb} B", group(n));
    if a.buffer_bytes() > 0 {
        params.push_str(&format!(" + {} B RoPE buffers", a.buffer_bytes()));
    }
    if let Some(r) = t.lora_r {
        let nl = estimate::lora_params(&a, u64::from(r.get()));
        params.push_str(&format!(" + LoRA adapters {} × 4 B (fp32)", group(nl)));
    }
    if zero >= 3 {
        params.push_str(&format!(
            "{} + the largest module ({} elements) gathered with its gradient",
            split(true),
            group(a.largest_module())
        ));
    }
    out.push((Component::Parameters, params));

    let (tr, sd) = (b.trainable, b.state_dtype);
    let what = if t.lora_r.is_some() {
        "adapter"
    } else {
        "trainable"
    };
    let mut state = match t.optim {
        Optimizer::AdamW | Optimizer::AdamWForLoop | Optimizer::AdamWFused => format!(
            "Adam's two moments: 2 × {} {what} × {sd} B + {} step counters × 4 B",
            group(tr),
            group(b.tensors)
        ),
        Optimizer::AdamW8bit => format!(
            "two 8-bit moments: 2 × {} × 1 B + one fp32 absmax per 256 elements",
            group(tr)
        ),
        Optimizer::Lion => format!("one moment: {} × {sd} B", group(tr)),
        Optimizer::Adafactor => {
            "factored second moments: (rows + cols) × 4 B per matrix + 4 B RMS per tensor".into()
        }
        Optimizer::SgdMomentum => format!("momentum buffers: {} × {sd} B", group(tr)),
        Optimizer::Sgd => "none".into(),
    };
    if t.dtype == Dtype::MixedBf16 {
        state.push_str(&format!(
            " + fp32 master weights and fp32 gradients: {} × 8 B",
            group(tr)
        ));
    }
    state.push_str(&split(zero >= 1));
    if phase != crate::Phase::OptimizerStep {
        state.push_str(" (created at the first step)");
    }
    out.push((Component::OptimizerState, state));

    let mut grads = format!("{} {what} × {} B", group(tr), b.grad_bytes);
    grads.push_str(&split(zero >= 2));
    if b.ddp_buckets > 0 {
        grads.push_str(" + DDP's bucket copy of the same size");
    }
    out.push((Component::Gradients, grads));

    let temps = match t.optim {
        Optimizer::AdamW => format!(
            "foreach AdamW's √v list: one copy of every {what} tensor, {} × {sd} B",
            group(tr)
        ),
        Optimizer::AdamWForLoop | Optimizer::Lion => format!(
            "two copies of the largest tensor: 2 × {} × {sd} B",
            group(b.largest)
        ),
        Optimizer::Adafactor => format!(
            "fp32 update and its negation{}: {} × {} elements × 4 B",
            if pb == 2 {
                ", fp32 copies of the weight and gradient"
            } else {
                ""
            },
            if pb == 2 { 4 } else { 2 },
            group(b.largest)
        ),
        _ => "none".into(),
    } + &split(zero >= 1);
    out.push((Component::OptimizerTemporaries, temps));

    out.push((
        Component::WeightCopies,
        format!(
            "autocast's bf16 copies of the weights each matmul uses, kept for backward: {}",
            gb(b.weight_copies)
        ),
    ));

    let (bt, seq) = (u128::from(t.batch.get()), u128::from(t.seq.get()));
    let in_pass = matches!(phase, crate::Phase::Forward | crate::Phase::Backward);
    let mut acts = if !in_pass {
        format!("token ids and labels the loop keeps: 16 B × B × S = 16 × {bt} × {seq} B")
    } else if t.grad_ckpt {
        format!(
            "checkpointing keeps each layer's input: B × S × L × h × {} B = {} × {} × {} × {} × {} B",
            crate::ledger::Mode::of(t.dtype).residual(),
            bt,
            seq,
            a.layers,
            a.hidden,
            crate::ledger::Mode::of(t.dtype).residual()
        )
    } else {
        let mut f = format!(
            "B × S × L × {} B per token per layer = {} × {} × {} × {} B ({})",
            b.layer.token_bytes(),
            bt,
            seq,
            a.layers,
            b.layer.token_bytes(),
            part_list(&b.layer.per_token)
        );
        if b.layer.per_token_key > 0 {
            f.push_str(&format!(
                " + B × S² × L × {} B of attention scores",
                b.layer.per_token_key
            ));
        }
        f
    };
    if in_pass {
        acts.push_str(&format!(
            " + embedding and final norm {} B per token + token ids and labels 24 B per token",
            b.outer.token_bytes()
        ));
    }
    out.push((Component::Activations, acts));

    let v = a.vocab;
    let al = crate::ledger::Mode::of(t.dtype).act();
    let logits = match phase {
        crate::Phase::Forward => format!(
            "B × S × V × {} B: logits ({al} B){} + fp32 log-softmax (4 B) = {bt} × {seq} × {v} × {} B",
            b.logits_peak / (b.tokens * u128::from(v)).max(1),
            if al == 2 { " + fp32 upcast (4 B)" } else { "" },
            b.logits_peak / (b.tokens * u128::from(v)).max(1)
        ),
        _ => format!(
            "start of backward: fp32 log-softmax + its gradient + the logits' gradient, 3 × 4 B × B × S × V = 12 × {bt} × {seq} × {v} B{}",
            if t.keep_outputs { ", + the kept logits" } else { "" }
        ),
    };
    out.push((Component::Logits, logits));
    out.push((
        Component::Retained,
        format!("data put on the GPU: {} MiB", s.view.dataset_mib),
    ));
    out.push((
        Component::Overhead,
        format!(
            "CUDA context {} MiB + {}% caching-allocator reserve over the highest allocation so far",
            s.overhead.cuda_ctx_mib, s.overhead.reserve_pct
        ),
    ));
    out
}

/// "20.0 bytes per parameter at the optimizer step: …", the model-state cost
/// that explains 16 vs 20 bytes per parameter.
pub fn bytes_per_param(s: &Scenario, e: &Estimate) -> Option<String> {
    let step = e
        .phases
        .iter()
        .find(|p| p.iteration == 2 && p.phase == crate::Phase::OptimizerStep)?;
    let n = e.params.max(1) as f64;
    let c = &step.components;
    let per = |x: Component| c.get(x).get() as f64 / n;
    let _ = s;
    Some(format!(
        "{:.1} bytes per parameter at the optimizer step: {:.1} weights + {:.1} gradients + {:.1} optimizer state + {:.1} temporaries",
        per(Component::Parameters)
            + per(Component::Gradients)
            + per(Component::OptimizerState)
            + per(Component::OptimizerTemporaries),
        per(Component::Parameters),
        per(Component::Gradients),
        per(Component::OptimizerState),
        per(Component::OptimizerTemporaries),
    ))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The breakdown table and every phase, as CSV (bytes exact).
pub fn csv(s: &Scenario, e: &Estimate) -> String {
    let total = e.peak_total_bytes.get().max(1) as f64;
    let mut out = String::from("component,bytes,share_percent,formula\n");
    for r in rows(s, e) {
        out.push_str(&format!(
            "{},{},{:.2},{}\n",
            r.component.key(),
            r.bytes.get(),
            100.0 * r.bytes.get() as f64 / total,
            csv_field(&r.formula)
        ));
    }
    out.push_str("\niteration,micro_step,phase,peak_bytes,end_bytes\n");
    for p in &e.phases {
        out.push_str(&format!(
            "{},{},{},{},{}\n",
            p.iteration,
            p.micro_step,
            p.phase.key(),
            p.peak_bytes.get(),
            p.end_bytes.get()
        ));
    }
    out
}
