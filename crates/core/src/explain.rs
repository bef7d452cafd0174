//! Why each number is what it is: one row per component alive at the peak,
//! written from the very terms that made it (each term's factors with the
//! values substituted), and a CSV export of the same table.
//!
//! Shared at the top: reads an estimate's terms and report; imports the
//! training workload only for its per-layer detail and the seed formula.

use crate::component::Component;
use crate::report::{Estimate, OverheadRule, PhaseReport};
use crate::scenario::Scenario;
use crate::terms::{Factor, Term, TermId, Unit};
use crate::train::ledger::Part;
use crate::units::Bytes;

/// One row of the breakdown table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub component: Component,
    /// Bytes at the overall peak.
    pub bytes: Bytes,
    /// The terms that make it, each with its factors.
    pub terms: Vec<(TermId, Term)>,
    /// The terms written out, values substituted.
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

fn factor(f: &Factor) -> String {
    format!("{}{}", group(f.value), f.unit.suffix())
}

/// One term: `label: f₁ × f₂ … (÷ N GPUs) = bytes B`.
pub fn term_text(id: TermId, t: &Term) -> String {
    let factors: Vec<String> = t.factors().map(|f| factor(&f)).collect();
    let mut s = format!("{}: {}", id.label(), factors.join(" × "));
    if t.divisor() > 1 {
        s.push_str(&format!(" ÷ {} GPUs (ZeRO)", t.divisor()));
    }
    let plain = t.factors().len() == 1 && t.factors().all(|f| f.unit == Unit::Bytes);
    if !plain {
        s.push_str(&format!(" = {} B", group(t.bytes())));
    }
    s
}

/// What one layer saves per token, by part (for the layers' term).
fn layer_detail(s: &Scenario) -> Option<String> {
    let b = crate::train::breakdown(&s.train_run()).ok()?;
    let parts: Vec<String> = Part::ALL
        .iter()
        .zip(&b.layer.per_token)
        .filter(|(_, &bytes)| bytes > 0)
        .map(|(p, bytes)| format!("{} {bytes} B", p.label()))
        .collect();
    (!parts.is_empty()).then(|| format!("per token per layer: {}", parts.join(" + ")))
}

/// The rows for one phase report's peak, in stacking order.
fn rows_of(s: &Scenario, e: &Estimate, p: &PhaseReport) -> Vec<Row> {
    p.components
        .iter()
        .map(|(component, bytes)| {
            let terms: Vec<(TermId, Term)> = p
                .terms
                .iter()
                .filter(|id| id.component() == component)
                .map(|id| (id, *e.terms.get(id)))
                .filter(|(_, t)| t.bytes() > 0)
                .collect();
            let mut parts: Vec<String> = terms.iter().map(|(id, t)| term_text(*id, t)).collect();
            if terms.iter().any(|(id, _)| *id == TermId::Layers) {
                parts.extend(layer_detail(s));
            }
            if terms.iter().any(|(id, _)| *id == TermId::SeedActivations) {
                let a = crate::train::seed::activations_per_token(s.params());
                let t = &s.train;
                parts.push(format!(
                    "A = 4.6894e-4 × N + 1.8494e6 = {a:.0}: {a:.0} × {} × {} × {} B",
                    t.batch.get(),
                    t.seq.get(),
                    t.dtype.param_bytes()
                ));
            }
            if component == Component::Overhead {
                parts.extend(overhead_text(e.overhead));
            }
            Row {
                component,
                bytes,
                formula: parts.join("; "),
                terms,
            }
        })
        .collect()
}

/// The rows for the estimate's peak, in stacking order: every row's terms
/// sum to its bytes (overhead excepted, which is not a tensor).
pub fn rows(s: &Scenario, e: &Estimate) -> Vec<Row> {
    e.peak().map(|p| rows_of(s, e, p)).unwrap_or_default()
}

/// "20.0 bytes per parameter at the optimizer step: …", the model-state cost
/// that explains 16 vs 20 bytes per parameter.
pub fn bytes_per_param(e: &Estimate) -> Option<String> {
    let step = e
        .phases
        .iter()
        .find(|p| p.iteration == 2 && p.phase == crate::Phase::OptimizerStep)?;
    let n = e.params.max(1) as f64;
    let c = &step.components;
    let per = |x: Component| c.get(x).get() as f64 / n;
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

/// The overhead row's formula, as the estimator recorded its rule.
fn overhead_text(rule: OverheadRule) -> Option<String> {
    match rule {
        OverheadRule::None => None,
        OverheadRule::ContextOutsideBudget { ctx_mib, engine } => Some(format!(
            "CUDA context {ctx_mib} MiB, outside {engine}'s budget"
        )),
        OverheadRule::ContextOnly { ctx_mib, engine } => Some(format!(
            "CUDA context {ctx_mib} MiB ({engine} allocates its own buffers: no caching-allocator reserve)"
        )),
        OverheadRule::ContextAndReserve {
            ctx_mib,
            nccl_mib: 0,
            reserve_pct,
        } => Some(format!(
            "CUDA context {ctx_mib} MiB + {reserve_pct}% caching-allocator reserve over the highest allocation so far"
        )),
        OverheadRule::ContextAndReserve {
            ctx_mib,
            nccl_mib,
            reserve_pct,
        } => Some(format!(
            "CUDA context {ctx_mib} MiB + NCCL {nccl_mib} MiB (one rank's, measured) + {reserve_pct}% caching-allocator reserve over the highest allocation so far"
        )),
    }
}
