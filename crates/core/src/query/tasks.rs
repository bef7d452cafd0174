//! The rules across keys that depend on what is done with the model: a
//! key of the other workload is unused; an inference run's keys against
//! its engine, its weights and the model.

use super::checks::{conflict, conflict_using};
use super::notice::{FieldError, Note, Notice};
use super::{Field, Group, Key};
use crate::infer::run::{Engine, Inference, KvDtype, MaxLen, Tokens};
use crate::model::family::Positions;
use crate::model::WeightFormat;
use crate::scenario::{Attn, Parallel, Scenario, Task, Training, View};

/// Says each key of the other workload is not used (once per key), and
/// keeps that workload's inputs at their defaults, so a link carries one
/// workload and `decode(encode(s)) == s`.
pub(super) fn check_task(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let mut said: Vec<Key> = Vec::new();
    for (k, _) in texts {
        let other = k.field().is_some_and(|f| !f.tasks.include(s.task));
        if other && !said.contains(k) {
            said.push(*k);
            notices.push(Notice::Unused {
                key: *k,
                because: match s.task {
                    Task::Train => "it is an inference setting: set task=infer to use it".into(),
                    Task::Infer => "it is a training setting (task=infer runs the model)".into(),
                },
            });
        }
    }
    match s.task {
        Task::Train => s.infer = Inference::default(),
        Task::Infer => {
            s.train = Training::default();
            s.parallel = Parallel::default();
            let v = View::default();
            s.view.iters = v.iters;
            s.view.leak = v.leak;
            s.view.leak_mib = v.leak_mib;
            s.view.dataset_mib = v.dataset_mib;
        }
    }
}

/// Whether an inference run reads the key of `f`: its engine's keys, its
/// weights' options. The one rule for saying a key is unused and for
/// leaving it out of the canonical query.
pub(super) fn reads(i: &Inference, f: &Field) -> bool {
    let key = f.key;
    let vllm = i.engine == Engine::Vllm;
    let vllm_only = f.group == Group::Engine || key == Key::Ctx;
    let transformers_only = matches!(
        key,
        Key::Prompt | Key::New | Key::MinNew | Key::Batch | Key::Attn
    );
    let grouped = matches!(i.weights, WeightFormat::Gptq | WeightFormat::Awq);
    let bnb4 = matches!(i.weights, WeightFormat::Nf4 | WeightFormat::Fp4);
    let bnb_option = matches!(key, Key::DoubleQuant | Key::BnbCompute);
    // Each key is read unless it belongs to what the run does not use.
    (vllm || !vllm_only)
        && (!vllm || !transformers_only)
        && (grouped || key != Key::GroupSize)
        && (bnb4 || !bnb_option)
}

/// Why an inference run does not read `key` (see [`reads`]).
fn unread_because(i: &Inference, key: Key) -> &'static str {
    if key == Key::GroupSize {
        "only GPTQ and AWQ weights have groups"
    } else if matches!(key, Key::DoubleQuant | Key::BnbCompute) {
        "only 4-bit bitsandbytes weights (nf4, fp4) read it"
    } else {
        match i.engine {
            Engine::Vllm => {
                "vLLM serves requests up to ctx tokens each: set ctx (and max_num_seqs)"
            }
            Engine::Transformers => "only vLLM reads it",
        }
    }
}

/// Says each given key the run does not read, and resets every input it
/// does not read, so `decode(encode(s)) == s`.
fn unread(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let i = &mut s.infer;
    for f in super::FIELDS.iter().filter(|f| !reads(i, f)) {
        if texts.iter().any(|(k, _)| *k == f.key) {
            notices.push(Notice::Unused {
                key: f.key,
                because: unread_because(i, f.key).into(),
            });
        }
    }
    let d = Inference::default();
    match i.engine {
        Engine::Vllm => {
            (i.prompt, i.new, i.min_new) = (d.prompt, d.new, d.min_new);
            (i.batch, i.attn) = (d.batch, d.attn);
        }
        Engine::Transformers => (i.ctx, i.vllm) = (d.ctx, d.vllm),
    }
    if !matches!(i.weights, WeightFormat::Gptq | WeightFormat::Awq) {
        i.group_size = d.group_size;
    }
    if !matches!(i.weights, WeightFormat::Nf4 | WeightFormat::Fp4) {
        (i.double_quant, i.compute_fp32) = (d.double_quant, d.compute_fp32);
    }
}

/// An inference run's keys against its engine, its weights and the model.
pub(super) fn check_infer(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
) -> Vec<Note> {
    if s.task != Task::Infer {
        return Vec::new();
    }
    engine_conflicts(s, texts, notices);
    let notes = model_limits(s, texts, notices);
    unread(s, texts, notices);
    notes
}

/// Settings an engine cannot run: an fp8 cache under transformers,
/// bitsandbytes under vLLM, quantized experts.
fn engine_conflicts(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) {
    let w = s.infer.weights;
    if s.infer.engine == Engine::Transformers && s.infer.kv_dtype != KvDtype::Auto {
        conflict(
            notices,
            texts,
            Key::KvDtype,
            "transformers' default cache keeps the model's dtype (its quantized caches are not modelled): use vLLM for an fp8 cache".into(),
        );
        s.infer.kv_dtype = KvDtype::Auto;
    }
    let bnb = matches!(
        w,
        WeightFormat::Nf4 | WeightFormat::Fp4 | WeightFormat::Int8
    );
    if s.infer.engine == Engine::Vllm && bnb {
        conflict(
            notices,
            texts,
            Key::Weights,
            "vLLM 0.33 loads no bitsandbytes weights: use fp8, GPTQ or AWQ, or transformers".into(),
        );
        s.infer.weights = Inference::default().weights;
    }
    let moe = s.arch.is_some_and(|a| a.experts > 0);
    if moe
        && matches!(
            w,
            WeightFormat::Fp8 | WeightFormat::Gptq | WeightFormat::Awq
        )
    {
        conflict(
            notices,
            texts,
            Key::Weights,
            format!(
                "{} experts of a mixture of experts are not modelled: use 16-bit weights (or bitsandbytes with transformers, which leaves the experts in 16 bits)",
                w.label()
            ),
        );
        s.infer.weights = Inference::default().weights;
    }
}

/// A learned position table's limit on prompt + new (PyTorch fails at
/// the position embedding past it): `new` kept up to half the table, the
/// prompt up to the rest; a typed value that had to change is refused with
/// the reason and the value used (an untyped default is fitted silently,
/// as training's `seq`).
fn fit_positions(
    s: &mut Scenario,
    texts: &[(Key, &str)],
    notices: &mut Vec<Notice>,
    positions: u32,
) {
    let i = &mut s.infer;
    let new = i.new.get().min(positions / 2).max(1);
    let prompt = i.prompt.get().min(positions.saturating_sub(new)).max(1);
    let why = format!("{positions} learned positions: prompt + new must be at most {positions}");
    for (key, now, used) in [
        (Key::New, i.new.get(), new),
        (Key::Prompt, i.prompt.get(), prompt),
    ] {
        let typed = texts.iter().rev().find(|(k, _)| *k == key);
        if let (Some((_, value)), true) = (typed, now != used) {
            notices.push(Notice::Invalid {
                key,
                value: value.to_string(),
                error: FieldError::Conflict(format!("the model has {why}")),
                default: used.to_string(),
            });
        }
    }
    if let (Some(n), Some(p)) = (Tokens::new(new), Tokens::new(prompt)) {
        (i.new, i.prompt) = (n, p);
    }
}

/// The sequence against the model's positions and the split against its
/// heads.
fn model_limits(s: &mut Scenario, texts: &[(Key, &str)], notices: &mut Vec<Notice>) -> Vec<Note> {
    let mut notes = Vec::new();
    let Some(a) = s.arch else {
        return notes;
    };
    let learned = a.family.spec().positions == Positions::Learned;
    let i = s.infer;
    match i.engine {
        Engine::Transformers => {
            let spec = a.family.spec();
            if i.attn == Attn::FlashAttention2 {
                // Measured for training only (t4_rows.jsonl).
                conflict_using(
                    notices,
                    texts,
                    Key::Attn,
                    "flash_attention_2 is estimated for training only: generate is estimated with sdpa or eager".into(),
                    Attn::Sdpa.key().to_string(),
                );
                s.infer.attn = Attn::Sdpa;
            }
            let i = s.infer;
            if (spec.attn_softcap || spec.sinks) && i.attn == Attn::Sdpa {
                // `_supports_sdpa = False` (modeling_gemma2.py,
                // modeling_gpt_oss.py): asked for, SDPA is refused; left
                // out, transformers picks eager.
                if texts.iter().any(|(k, _)| *k == Key::Attn) {
                    conflict_using(
                        notices,
                        texts,
                        Key::Attn,
                        format!(
                            "transformers has no SDPA for {} (softcapping, attention sinks): it runs eager attention",
                            a.family.label()
                        ),
                        Attn::Eager.key().to_string(),
                    );
                }
                s.infer.attn = Attn::Eager;
            }
            let len = i.prompt.get().saturating_add(i.new.get());
            if learned && len > a.positions {
                fit_positions(s, texts, notices, a.positions);
            } else if a.positions > 0 && len > a.positions {
                notes.push(Note::BeyondTrainedContext {
                    seq: len,
                    positions: a.positions,
                });
            }
        }
        Engine::Vllm => {
            if let MaxLen::Tokens(n) = i.ctx {
                if a.positions > 0 && n.get() > a.positions {
                    conflict_using(
                        notices,
                        texts,
                        Key::Ctx,
                        format!(
                            "vLLM refuses a max_model_len above the model's {} positions",
                            a.positions
                        ),
                        a.positions.to_string(),
                    );
                    s.infer.ctx = MaxLen::Model;
                }
            }
            let tp = i.vllm.tensor_parallel_size.get();
            if !a.heads.is_multiple_of(tp) {
                conflict(
                    notices,
                    texts,
                    Key::TensorParallelSize,
                    format!(
                        "vLLM splits the {} attention heads evenly: tensor_parallel_size must divide them",
                        a.heads
                    ),
                );
                s.infer.vllm.tensor_parallel_size = Inference::default().vllm.tensor_parallel_size;
            }
        }
    }
    notes
}
