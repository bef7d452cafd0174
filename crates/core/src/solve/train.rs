//! The training workload's answers: the longest sequence that fits, and
//! the changes worth trying (checkpointing, LoRA and QLoRA, 8-bit and paged
//! optimizers, ZeRO and offload, smaller micro-batches).

use super::{largest_fitting, Candidate};
use crate::query::Key;
use crate::scenario::Scenario;
use crate::train::optim::StepTemps;
use crate::train::run::PpSchedule;
use crate::train::run::{Ckpt, Dtype, Offload, Quant, SeqLen};
use crate::train::Targets;
use crate::units::Bytes;

/// The largest sequence length that fits, other settings unchanged.
pub fn max_seq(s: &Scenario, capacity: Bytes) -> Option<u32> {
    largest_fitting(s, Key::Seq, SeqLen::MIN, SeqLen::MAX, capacity)
}

pub(super) fn train_candidates(s: &Scenario) -> Vec<Candidate> {
    let t = &s.train;
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |label: &str, cost: &str, ch: &[(Key, &str)]| {
        out.push(candidate(label, cost, ch));
    };
    let optim = t.optim.spec();
    let adamw_like = optim.torch_adamw;
    let offloaded = s.parallel.offload != Offload::None;
    match t.grad_ckpt {
        Ckpt::Off => add(
            "Turn on gradient checkpointing",
            "each layer's forward runs again in backward: about a third more compute per step",
            &[(Key::GradCkpt, "true")],
        ),
        Ckpt::On | Ckpt::NonReentrant | Ckpt::Reentrant => add(
            "Keep the checkpoints in host memory",
            "each layer's input crosses PCIe twice a step: slower steps, and host memory",
            &[(Key::GradCkpt, "offload")],
        ),
        Ckpt::Offload => {}
    }
    if matches!(t.dtype, Dtype::Fp32 | Dtype::AmpBf16 | Dtype::AmpFp16) && t.quant == Quant::None {
        add(
            "Train in pure bf16",
            "weights and optimizer state in bf16: updates below bf16's precision are lost",
            &[(Key::Dtype, "bf16")],
        );
    }
    if adamw_like && !offloaded {
        add(
            "Use 8-bit AdamW (bitsandbytes)",
            "optimizer state quantized to 8 bits, in blocks of 256",
            &[(Key::Optim, "adamw8bit")],
        );
        add(
            "Use paged 8-bit AdamW (bitsandbytes)",
            "8-bit state that pages to host memory when the GPU runs short: slower steps then",
            &[(Key::Optim, "paged_adamw_8bit")],
        );
    }
    if adamw_like && optim.temps != StepTemps::None {
        add(
            "Use fused AdamW (no step temporaries)",
            "none (a CUDA kernel for the whole step)",
            &[(Key::Optim, "adamw_fused")],
        );
    }
    if s.arch.is_some() {
        match (t.lora_r.is_some(), t.quant) {
            (false, _) => {
                add(
                    "Fine-tune with LoRA (rank 16)",
                    "trains low-rank adapters, not the weights: a fine-tune, which can trail full training",
                    &[(Key::LoraR, "16")],
                );
                add(
                    "QLoRA: LoRA (rank 16) over a 4-bit base",
                    "adapters over nf4 weights (double quantization): slower steps, each weight dequantized per use, and a small quality cost",
                    &[(Key::LoraR, "16"), (Key::Quant, "nf4"), (Key::DoubleQuant, "true")],
                );
            }
            (true, Quant::None) => add(
                "Load the base in 4 bits (QLoRA)",
                "nf4 weights with double quantization: slower steps, each weight dequantized per use, and a small quality cost",
                &[(Key::Quant, "nf4"), (Key::DoubleQuant, "true"), (Key::Dora, "false")],
            ),
            (true, Quant::Nf4 | Quant::Fp4 | Quant::Int8) => {}
        }
        if t.lora_r.is_some() && t.lora_targets != Targets::ATTN {
            add(
                "LoRA on attention only (q, k, v, o)",
                "fewer adapters than all linear layers: less capacity to adapt",
                &[(Key::LoraTargets, "attn")],
            );
        }
        if t.quant != Quant::None && t.kbit_prep {
            add(
                "Keep the unquantized weights in 16 bits",
                "skips prepare_model_for_kbit_training's fp32 upcast of embeddings, head and norms: a little less numerical headroom",
                &[(Key::KbitPrep, "false")],
            );
        }
    }
    if t.attn == crate::inputs::Attn::Eager {
        add("Use SDPA attention", "none", &[(Key::Attn, "sdpa")]);
    }
    if let Some((label, cost, keys)) = super::expandable(s) {
        add(label, cost, keys);
    }
    if t.keep_outputs {
        add(
            "Drop the outputs before backward",
            "none (delete the output object, keep the loss)",
            &[(Key::KeepOutputs, "false")],
        );
    }
    let (gpus, zero) = (s.parallel.gpus.get(), s.parallel.zero.get());
    let fsdp = s.parallel.shard.fsdp();
    if !offloaded && optim.cpu_offload && !fsdp {
        let z = zero.max(2).to_string();
        add(
            "Offload the optimizer to host memory (ZeRO-Offload)",
            "the optimizer step runs on the CPU: much slower steps, and host memory",
            &[(Key::Zero, &z), (Key::Offload, "optimizer")],
        );
    }
    if gpus > 1 && zero < 3 {
        let z = (zero + 1).to_string();
        add(
            &format!("Shard more with ZeRO stage {z}"),
            "more communication between the GPUs",
            &[(Key::Zero, &z)],
        );
    }
    let b = t.batch.get();
    if b >= 2 {
        let half = (b / 2).to_string();
        let acc = (t.grad_accum.get() * 2).to_string();
        add(
            &format!("Batch {half} with {acc}× gradient accumulation (same effective batch)"),
            "the same effective batch in more, smaller micro-steps: lower throughput",
            &[(Key::Batch, &half), (Key::GradAccum, &acc)],
        );
    }
    out.extend(more_gpus(s));
    out
}

/// One candidate: what the page shows and the keys that apply it.
fn candidate(label: &str, cost: &str, ch: &[(Key, &str)]) -> Candidate {
    Candidate {
        label: label.to_string(),
        cost: cost.to_string(),
        changes: ch.iter().map(|(k, v)| (*k, v.to_string())).collect(),
    }
}

/// More GPUs: twice as many with ZeRO-3 (FSDP2 under tensor parallelism,
/// the codec's rule), and twice the tensor parallelism within one 8-GPU
/// node, offered only where the codec takes it (the family splits, the
/// heads divide, the run is one tensor parallelism models).
fn more_gpus(s: &Scenario) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let (gpus, tp) = (s.parallel.gpus.get(), s.parallel.tp.get());
    if gpus * 2 <= crate::train::run::Gpus::MAX {
        let g = (gpus * 2).to_string();
        let cost =
            format!("needs {g} GPUs; parameters gathered layer by layer over the interconnect");
        out.push(if tp > 1 {
            candidate(
                &format!("Use {g} GPUs with FSDP2 over the tensor-parallel groups"),
                &cost,
                &[(Key::Gpus, &g), (Key::Shard, "fsdp2"), (Key::Zero, "3")],
            )
        } else {
            candidate(
                &format!("Use {g} GPUs with ZeRO-3"),
                &cost,
                &[(Key::Gpus, &g), (Key::Zero, "3")],
            )
        });
    }
    if tp * 2 <= 8 {
        let n = tp * 2;
        let g = gpus.max(n).next_multiple_of(n);
        let (ns, gs) = (n.to_string(), g.to_string());
        let mut changes = vec![(Key::Tp, ns.as_str()), (Key::Gpus, gs.as_str())];
        if g > n {
            changes.extend([(Key::Shard, "fsdp2"), (Key::Zero, "3")]);
        }
        let c = candidate(
            &format!("Split each layer over {n} GPUs (tp={n})"),
            &format!("needs {g} GPUs; an all-reduce after attention and after the MLP, forward and backward, over the {n} GPUs of a group (NVLink within a node)"),
            &changes,
        );
        if super::applied(s, &c.changes).is_some() {
            out.push(c);
        }
    }
    out.extend(more_stages(s));
    out.extend(one_f_one_b(s));
    out
}

/// 1F1B where a pipeline runs GPipe or interleaved 1F1B: at most pp − r
/// micro-batches in flight on rank r, where GPipe keeps all of them and
/// interleaving keeps more over its stages (torch 2.15 `schedules.py`;
/// the bubble, Narayanan et al. 2021 §2.2: interleaving divides it by
/// `vpp`, GPipe's is 1F1B's).
fn one_f_one_b(s: &Scenario) -> Option<Candidate> {
    if s.parallel.pp.get() == 1 {
        return None;
    }
    let cost = match s.parallel.pp_schedule {
        PpSchedule::OneFOneB => return None,
        PpSchedule::Gpipe => "none in time: the same bubble as GPipe's",
        PpSchedule::Interleaved => {
            "a larger bubble: ranks idle about vpp times longer while the pipeline fills and drains"
        }
    };
    let c = candidate(
        "Run the pipeline as 1F1B (pp_schedule=1f1b)",
        cost,
        &[(Key::PpSchedule, "1f1b"), (Key::Vpp, "1")],
    );
    super::applied(s, &c.changes).is_some().then_some(c)
}

/// Twice the pipeline stages, one GPU each (the codec's rule), with as
/// many micro-batches as stages where the batch divides and none were
/// set (fewer sequences in each, so less to keep per rank); offered only
/// where the codec takes it.
fn more_stages(s: &Scenario) -> Option<Candidate> {
    let (pp, m, batch) = (
        s.parallel.pp.get(),
        s.parallel.micro_batches.get(),
        s.train.batch.get(),
    );
    if s.parallel.gpus.get() != pp {
        return None;
    }
    let n = pp * 2;
    let ns = n.to_string();
    let mut changes = vec![(Key::Pp, ns.as_str()), (Key::Gpus, ns.as_str())];
    if m == 1 && batch % n == 0 {
        changes.push((Key::MicroBatches, ns.as_str()));
    }
    let c = candidate(
        &format!("Cut the layers into {n} pipeline stages (pp={n})"),
        &format!("needs {n} GPUs; each micro-batch's hidden state and its gradient sent between neighbouring stages, and ranks idle while the pipeline fills and drains"),
        &changes,
    );
    super::applied(s, &c.changes).is_some().then_some(c)
}
