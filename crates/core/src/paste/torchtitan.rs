//! torchtitan's TOML training configs (`torchtitan/models/*/train_configs/*.toml`,
//! loaded by `torchtitan/config/manager.py` into `JobConfig`) as query keys.
//!
//! Field names, defaults and what each does are torchtitan v0.2.2's
//! (commit 73a0e6979dd10b6b1904098eb3c8f62c18ab87ce, 2026-02-20, the last
//! release whose configs are TOML: #2386 replaced them with Python
//! dataclasses), from `torchtitan/config/job_config.py` unless a rule
//! names another file. `[training] batch_size` is `local_batch_size`'s
//! name before #1238 (2025-06).
//!
//! A field the file leaves out has torchtitan's default, and a key read
//! from a default says so. Every value goes through the codec's field
//! ([`Collector::set`]); a field no rule reads is listed as unknown, with
//! "no effect on memory" where that is known.

use super::yaml::{Entry, Value};
use super::Collector;
use crate::query::Key;

/// What the paste is, in words.
const WHAT: &str = "a torchtitan TOML training config";

/// Every field a rule below reads (a TOML with one is torchtitan's).
const READ: &[&str] = &[
    "model.name",
    "model.flavor",
    "training.local_batch_size",
    "training.batch_size",
    "training.global_batch_size",
    "training.seq_len",
    "training.dtype",
    "training.mixed_precision_param",
    "training.mixed_precision_reduce",
    "training.enable_cpu_offload",
    "optimizer.name",
    "optimizer.implementation",
    "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option",
    "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree",
    "parallelism.fsdp_reshard_after_forward",
    "parallelism.tensor_parallel_degree",
    "parallelism.disable_loss_parallel",
    "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_schedule_csv",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers",
    "parallelism.context_parallel_degree",
    "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree",
];

/// Tables (ending in `.`) and fields that change nothing vramfit models in
/// memory: the job's files, logging, the learning-rate schedule,
/// checkpoint files, communication timeouts, the optimizer's
/// hyperparameters, the data and the step count.
const NO_EFFECT: &[&str] = &[
    "job.",
    "profiling.",
    "metrics.",
    "lr_scheduler.",
    "checkpoint.",
    "comm.",
    "optimizer.lr",
    "optimizer.eps",
    "optimizer.beta1",
    "optimizer.beta2",
    "optimizer.weight_decay",
    "training.dataset",
    "training.dataset_path",
    "training.steps",
    "training.max_norm",
    "training.gc_freq",
    "training.gc_debug",
    "training.seed",
    "training.deterministic",
    "debug.seed",
    "debug.deterministic",
    "debug.deterministic_warn_only",
];

/// Pipeline fields, which change nothing without a pipeline.
const PIPELINE: &[&str] = &[
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_schedule_csv",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.module_fqns_per_model_part",
    "parallelism.pipeline_parallel_expert_parallel_overlap",
];

/// Tensor-parallel fields, which change nothing without it.
const TENSOR: &[&str] = &[
    "parallelism.disable_loss_parallel",
    "parallelism.enable_async_tensor_parallel",
];

/// `[model] name` and `flavor` whose architecture is a preset's: the
/// flavors of `torchtitan/models/llama3/__init__.py` (`llama3_args`: 8B
/// and 70B are Llama 3.1's, their vocabulary the Llama 3.1 tokenizer's
/// 128,256) and `torchtitan/models/qwen3/__init__.py` (`qwen3_args`).
/// Others (the debug models, Llama 3 405B, the flex- and
/// varlen-attention flavors, DeepSeek V3's and gpt-oss's on flex
/// attention) are unknown.
const FLAVORS: &[(&str, &str, &str)] = &[
    ("llama3", "8B", "llama3.1-8b"),
    ("llama3", "70B", "llama3.1-70b"),
    ("qwen3", "0.6B", "qwen3-0.6b"),
    ("qwen3", "1.7B", "qwen3-1.7b"),
    ("qwen3", "4B", "qwen3-4b"),
    ("qwen3", "8B", "qwen3-8b"),
    ("qwen3", "14B", "qwen3-14b"),
    ("qwen3", "32B", "qwen3-32b"),
    ("qwen3", "30B-A3B", "qwen3-30b-a3b"),
    ("qwen3", "235B-A22B", "qwen3-235b-a22b"),
];

/// The tables of torchtitan's `JobConfig`: a TOML that opens with one
/// and does not parse is a torchtitan config refused, not another format.
const TABLES: &[&str] = &[
    "job",
    "profiling",
    "metrics",
    "model",
    "optimizer",
    "lr_scheduler",
    "training",
    "parallelism",
    "checkpoint",
    "activation_checkpoint",
    "compile",
    "quantize",
    "comm",
    "memory_estimation",
    "fault_tolerance",
    "experimental",
    "validation",
    "debug",
];

pub(crate) fn is_table(name: &str) -> bool {
    TABLES.contains(&name)
}

/// Whether `entries` are a torchtitan config: one names a field read here
/// that is torchtitan's own (a `[model] name` or a `[training] seq_len`
/// alone could be another trainer's).
pub(crate) fn is_config(entries: &[Entry]) -> bool {
    let own = |p: &str| {
        READ.contains(&p)
            && (p.starts_with("parallelism.")
                || p.starts_with("activation_checkpoint.")
                || matches!(
                    p,
                    "model.flavor" | "training.local_batch_size" | "training.mixed_precision_param"
                ))
    };
    entries.iter().any(|e| own(&e.path))
}

/// The entries by path, each marked when a rule reads it.
struct Fields<'a> {
    entries: &'a [Entry],
    used: Vec<bool>,
}

/// One field's value: as written, or torchtitan's default.
struct Field {
    text: String,
    from: String,
    given: bool,
}

impl<'a> Fields<'a> {
    /// The last entry at `path`, marked read.
    fn get(&mut self, path: &str) -> Option<&'a Entry> {
        let i = self.entries.iter().rposition(|e| e.path == path)?;
        if let Some(u) = self.used.get_mut(i) {
            *u = true;
        }
        self.entries.get(i)
    }

    /// The first of `paths` the file sets, else `default`.
    fn field(&mut self, paths: &[&str], default: &str) -> Field {
        match paths.iter().find_map(|p| self.get(p)) {
            Some(e) => Field {
                text: e.value.text(),
                from: from(e),
                given: true,
            },
            None => Field {
                text: default.to_string(),
                from: format!(
                    "{} = {default} (torchtitan's default)",
                    paths.first().copied().unwrap_or_default()
                ),
                given: false,
            },
        }
    }

    /// Whether the last entry at `path` is `true` (not marked read).
    fn is_true(&self, path: &str) -> bool {
        self.entries
            .iter()
            .rev()
            .find(|e| e.path == path)
            .is_some_and(|e| e.value.text() == "true")
    }
}

/// An entry as written: `path = value (line n)`.
fn from(e: &Entry) -> String {
    let v = match &e.value {
        Value::Scalar(s) => s.clone(),
        Value::List(items) => format!("[{}]", items.join(", ")),
    };
    format!("{} = {v} (line {})", e.path, e.line)
}

/// Reads a torchtitan config's entries into `c`.
pub(crate) fn read(entries: &[Entry], c: &mut Collector) {
    c.found(WHAT);
    c.set(Key::Task, "train", WHAT);
    let mut f = Fields {
        entries,
        used: vec![false; entries.len()],
    };
    let layers = model(&mut f, c);
    let batch = training(&mut f, c);
    optimizer(&mut f, c);
    checkpointing(&mut f, c);
    let degrees = degrees(&mut f, c);
    if let Some(d) = &degrees {
        data_parallel(&mut f, c, d, &batch);
        other_parallel(&mut f, c, d);
        pipeline(&mut f, c, d, &batch, layers);
    }
    dtype(&mut f, c, degrees.as_ref());
    let off = switched_off(&f);
    for (e, used) in entries.iter().zip(&f.used) {
        if !used {
            c.unknown(format!("{} ({})", from(e), why_unread(e, &off)));
        }
    }
}

/// Tables whose feature the file leaves off (`compile.enable`,
/// `validation.enable`, `fault_tolerance.enable` and
/// `memory_estimation.enable` false by default; `[quantize]` applies only
/// through `model.converters`, empty by default), with why.
fn switched_off(f: &Fields) -> Vec<(&'static str, &'static str)> {
    let mut off: Vec<(&'static str, &'static str)> = [
        ("compile.", "compile.enable", "compile.enable is false"),
        (
            "validation.",
            "validation.enable",
            "validation.enable is false",
        ),
        (
            "fault_tolerance.",
            "fault_tolerance.enable",
            "fault_tolerance.enable is false",
        ),
        (
            "memory_estimation.",
            "memory_estimation.enable",
            "memory_estimation.enable is false",
        ),
    ]
    .into_iter()
    .filter(|(_, switch, _)| !f.is_true(switch))
    .map(|(table, _, why)| (table, why))
    .collect();
    let converters = f
        .entries
        .iter()
        .rev()
        .find(|e| e.path == "model.converters");
    let none = match converters.map(|e| &e.value) {
        None => true,
        Some(Value::List(items)) => items.is_empty(),
        Some(Value::Scalar(s)) => s.is_empty(),
    };
    if none {
        off.push(("quantize.", "model.converters is empty"));
        off.push(("model.converters", "it is empty"));
    }
    off
}

fn why_unread(e: &Entry, off: &[(&str, &str)]) -> String {
    let path = e.path.as_str();
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let within = |n: &str| path == n || (n.ends_with('.') && path.starts_with(n));
    if NO_EFFECT.iter().any(|n| within(n)) {
        "no effect on memory".into()
    } else if leaf.starts_with("enable") && e.value.text() == "false" {
        "off: no effect on memory".into()
    } else if let Some((_, why)) = off.iter().find(|(n, _)| within(n)) {
        format!("no effect on memory: {why}")
    } else {
        "not read".into()
    }
}

/// `[model] name` and `flavor` (defaults `llama3`, `debugmodel`): the
/// preset of that architecture ([`FLAVORS`]). Returns its layers.
fn model(f: &mut Fields, c: &mut Collector) -> Option<u32> {
    let name = f.field(&["model.name"], "llama3");
    let flavor = f.field(&["model.flavor"], "debugmodel");
    if !name.given && !flavor.given {
        return None;
    }
    let src = format!("{}, {}", name.from, flavor.from);
    match FLAVORS
        .iter()
        .find(|(n, fl, _)| *n == name.text && *fl == flavor.text)
    {
        Some((_, _, id)) => {
            c.set(Key::Model, id, &src);
            crate::model::presets::preset(id).map(|p| p.arch.layers)
        }
        None => {
            c.unknown(format!(
                "{src}: no vramfit preset is this flavor's architecture (the CLI takes --config FILE with the model's config.json)"
            ));
            None
        }
    }
}

/// `[training] local_batch_size` (default 8; per GPU) and `seq_len`
/// (default 2048). Returns the batch and its source.
fn training(f: &mut Fields, c: &mut Collector) -> Field {
    let batch = f.field(&["training.local_batch_size", "training.batch_size"], "8");
    c.set(Key::Batch, &batch.text, &batch.from);
    let seq = f.field(&["training.seq_len"], "2048");
    c.set(Key::Seq, &seq.text, &seq.from);
    batch
}

/// `[optimizer] name` (`AdamW`; `Adam` is not modelled) and
/// `implementation` (`fused` by default, `foreach`, `for-loop`), as
/// `torchtitan/components/optimizer.py` `build_optimizers` passes them to
/// `torch.optim.AdamW`.
fn optimizer(f: &mut Fields, c: &mut Collector) {
    let name = f.field(&["optimizer.name"], "AdamW");
    let imp = f.field(&["optimizer.implementation"], "fused");
    let src = format!("{}, {}", name.from, imp.from);
    let key = match (name.text.as_str(), imp.text.as_str()) {
        ("AdamW", "fused") => "adamw_fused",
        ("AdamW", "foreach") => "adamw",
        ("AdamW", "for-loop") => "adamw_forloop",
        _ => return c.unknown(format!("{src}: an optimizer vramfit does not model")),
    };
    c.set(Key::Optim, key, &src);
}

/// `[activation_checkpoint] mode` (default `selective`, every second
/// block) as `torchtitan/distributed/activation_checkpoint.py` applies
/// it: `full` wraps every transformer block in torch's
/// `checkpoint_wrapper` (non-reentrant), and so does `selective` with
/// `selective_ac_option` 0 or 1 (`_apply_layer_sac`); other selective
/// options and `memory_budget` are not modelled.
fn checkpointing(f: &mut Fields, c: &mut Collector) {
    let mode = f.field(&["activation_checkpoint.mode"], "selective");
    let option = f.field(&["activation_checkpoint.selective_ac_option"], "2");
    let selective = mode.text == "selective";
    let every = selective && matches!(option.text.as_str(), "0" | "1");
    match mode.text.as_str() {
        "none" => c.set(Key::GradCkpt, "false", &mode.from),
        "full" => c.set(Key::GradCkpt, "non_reentrant", &mode.from),
        _ if every => c.set(
            Key::GradCkpt,
            "non_reentrant",
            &format!("{}, {}: every block", mode.from, option.from),
        ),
        _ if selective => c.unknown(format!(
            "{}: selective activation checkpointing (selective_ac_option = {}) is not modelled: give grad_ckpt in the query",
            mode.from, option.text
        )),
        _ => c.unknown(format!(
            "{}: activation checkpointing vramfit does not model",
            mode.from
        )),
    }
    if !selective && option.given {
        c.unknown(format!(
            "{} (no effect on memory: mode is {})",
            option.from, mode.text
        ));
    }
}

/// One parallelism degree and its source.
struct Degree {
    n: i64,
    from: String,
}

/// `[parallelism]`'s degrees (each 1 by default, the data-parallel
/// shard's -1: the GPUs left over), checked as
/// `torchtitan/distributed/parallel_dims.py` `ParallelDims._validate`.
struct Degrees {
    replicate: Degree,
    shard: Degree,
    cp: Degree,
    tp: Degree,
    pp: Degree,
    ep: Degree,
    etp: Degree,
}

/// Whether `fully_shard` applies (`ParallelDims.fsdp_enabled`: a shard
/// degree or a context-parallel degree over 1).
enum Fsdp {
    On,
    /// A shard degree of -1: FSDP over the GPUs left over, when more
    /// than one (how many is torchrun's, not the file's).
    Rest,
    Off,
}

impl Degrees {
    fn fsdp(&self) -> Fsdp {
        if self.shard.n > 1 || self.cp.n > 1 {
            Fsdp::On
        } else if self.shard.n == -1 {
            Fsdp::Rest
        } else {
            Fsdp::Off
        }
    }

    /// replicate × cp × tp × pp: the GPUs the shard degree multiplies.
    fn others(&self) -> Option<i64> {
        self.replicate
            .n
            .checked_mul(self.cp.n)?
            .checked_mul(self.tp.n)?
            .checked_mul(self.pp.n)
    }
}

fn degrees(f: &mut Fields, c: &mut Collector) -> Option<Degrees> {
    let mut one = |name: &str, default: &str| -> Option<Degree> {
        let d = f.field(&[&format!("parallelism.{name}")], default);
        match d.text.parse::<i64>() {
            Ok(n) if n >= 1 || (n == -1 && name == "data_parallel_shard_degree") => {
                Some(Degree { n, from: d.from })
            }
            Ok(_) | Err(_) => {
                c.unknown(format!(
                    "{}: torchtitan takes a degree of 1 or more (-1 for data_parallel_shard_degree): the parallelism is not read",
                    d.from
                ));
                None
            }
        }
    };
    let replicate = one("data_parallel_replicate_degree", "1");
    let shard = one("data_parallel_shard_degree", "-1");
    let cp = one("context_parallel_degree", "1");
    let tp = one("tensor_parallel_degree", "1");
    let pp = one("pipeline_parallel_degree", "1");
    let ep = one("expert_parallel_degree", "1");
    let etp = one("expert_tensor_parallel_degree", "1");
    Some(Degrees {
        replicate: replicate?,
        shard: shard?,
        cp: cp?,
        tp: tp?,
        pp: pp?,
        ep: ep?,
        etp: etp?,
    })
}

/// The GPUs (`ParallelDims`: replicate × shard × cp × tp × pp is the
/// world size), FSDP2 (`torchtitan/models/llama3/infra/parallelize.py`
/// `parallelize_llama` and `apply_fsdp`), its CPU offload and the
/// gradient accumulation `torchtitan/train.py` derives from
/// `global_batch_size`.
fn data_parallel(f: &mut Fields, c: &mut Collector, d: &Degrees, batch: &Field) {
    let others = d.others().unwrap_or(i64::MAX);
    if d.shard.n == -1 && others == 1 {
        c.unknown(format!(
            "{}: as many GPUs as torchrun starts, read as more than one (FSDP2): give gpus in the query",
            d.shard.from
        ));
    } else if d.shard.n == -1 {
        c.unknown(format!(
            "{}: as many GPUs as torchrun starts beyond {others}, read as more than one (FSDP2): give gpus in the query (a multiple of {others})",
            d.shard.from
        ));
    } else if d.cp.n == 1 {
        let world = others.checked_mul(d.shard.n).unwrap_or(i64::MAX);
        c.set(
            Key::Gpus,
            &world.to_string(),
            &format!(
                "data_parallel_replicate_degree × data_parallel_shard_degree × tensor_parallel_degree × pipeline_parallel_degree = {} × {} × {} × {}",
                d.replicate.n, d.shard.n, d.tp.n, d.pp.n
            ),
        );
    }
    fsdp(f, c, d);
    if f.is_true("training.enable_cpu_offload") {
        if let Some(e) = f.get("training.enable_cpu_offload") {
            c.set(Key::Offload, "params", &from(e));
        }
    }
    let global = f.field(&["training.global_batch_size"], "-1");
    let local = batch.text.parse::<i64>().ok();
    match (global.text.parse::<i64>(), local) {
        (Ok(g), _) if g < 0 => {}
        (Ok(g), Some(b)) if d.shard.n > 0 => {
            let per_step = b.saturating_mul(d.replicate.n).saturating_mul(d.shard.n);
            if per_step > 0 && g % per_step == 0 {
                c.set(Key::GradAccum, &(g / per_step).to_string(), &global.from);
            } else {
                c.unknown(format!(
                    "{}: not a multiple of local_batch_size × the data-parallel degree ({per_step}), which torchtitan's trainer refuses",
                    global.from
                ));
            }
        }
        (Ok(_), _) | (Err(_), _) => c.unknown(format!(
            "{}: its gradient accumulation steps divide it by local_batch_size × the data-parallel degree, not in the file: give grad_accum in the query",
            global.from
        )),
    }
}

/// FSDP2 as `torchtitan/models/llama3/infra/parallelize.py` applies it
/// (`parallelize_llama`, `apply_fsdp`): over the shard degree, HSDP with
/// a replicate degree too; `fsdp_reshard_after_forward`'s "default"
/// reshards after forward unless pipelined.
fn fsdp(f: &mut Fields, c: &mut Collector, d: &Degrees) {
    let paths = ["parallelism.fsdp_reshard_after_forward"];
    if d.replicate.n > 1 && d.shard.n != 1 {
        f.get(paths[0]);
        return c.unknown(format!(
            "{}, {}: HSDP (FSDP2 within each replica) is not modelled",
            d.replicate.from, d.shard.from
        ));
    }
    let src = match d.fsdp() {
        Fsdp::Off => return inert(f, c, &paths, "no FSDP"),
        // FSDP over the context-parallel ranks: not modelled (said once,
        // beside the degree).
        Fsdp::On if d.cp.n > 1 => return inert(f, c, &paths, "context parallelism"),
        Fsdp::On => d.shard.from.clone(),
        Fsdp::Rest => format!(
            "{}: FSDP2 over the GPUs left over, read as more than one",
            d.shard.from
        ),
    };
    let policy = f.field(&paths, "default");
    let reshard = match policy.text.as_str() {
        "always" => Some(true),
        "never" => Some(false),
        "default" => Some(d.pp.n == 1),
        _ => None,
    };
    match reshard {
        Some(true) => {
            c.set(Key::Shard, "fsdp2", &src);
            c.set(Key::Zero, "3", &src);
        }
        Some(false) => c.unknown(format!(
            "{}: FSDP2 keeping the parameters gathered after forward (torchtitan's default under PP) is not modelled",
            policy.from
        )),
        None => c.unknown(format!("{}: a policy torchtitan has not", policy.from)),
    }
}

/// Tensor, context and expert parallelism: `tp` as read; the others are
/// not modelled unless 1.
fn other_parallel(f: &mut Fields, c: &mut Collector, d: &Degrees) {
    if d.tp.n > 1 {
        c.set(Key::Tp, &d.tp.n.to_string(), &d.tp.from);
        let what = if f.is_true("parallelism.disable_loss_parallel") {
            "sequence parallel (torchtitan's apply_tp) is"
        } else {
            "sequence and loss parallel (torchtitan's apply_tp) are"
        };
        f.get("parallelism.disable_loss_parallel");
        c.unknown(format!(
            "{}: {what} not modelled: vramfit's tp is transformers' plan",
            d.tp.from
        ));
    } else {
        inert(f, c, TENSOR, "tensor_parallel_degree is 1");
    }
    for (deg, what) in [
        (
            &d.cp,
            "context parallelism is not modelled: gpus is not read",
        ),
        (&d.ep, "expert parallelism is not modelled"),
        (&d.etp, "expert tensor parallelism is not modelled"),
    ] {
        if deg.n > 1 {
            c.unknown(format!("{}: {what}", deg.from));
        }
    }
}

/// Each of `paths` the file sets, listed as changing nothing.
fn inert(f: &mut Fields, c: &mut Collector, paths: &[&str], why: &str) {
    for p in paths {
        if let Some(e) = f.get(p) {
            c.unknown(format!("{} (no effect on memory: {why})", from(e)));
        }
    }
}

/// The pipeline as `torchtitan/distributed/pipeline_parallel.py` builds
/// it: the schedule (`1F1B` by default; torch's `get_schedule_class`
/// reads the name in any case; 1F1B, GPipe and interleaved 1F1B) over
/// `local_batch_size / pipeline_parallel_microbatch_size` micro-batches
/// (`build_pipeline_schedule`, which refuses a size that does not divide
/// the batch), with the stages per rank `pipeline_llm` sets ([`stages`])
/// and the layers cut as `generate_llm_fqn_per_model_part` cuts them
/// (`pp_split=torchtitan`, with its end weights).
fn pipeline(f: &mut Fields, c: &mut Collector, d: &Degrees, batch: &Field, layers: Option<u32>) {
    if d.pp.n == 1 {
        return inert(f, c, PIPELINE, "pipeline_parallel_degree is 1");
    }
    let schedule = f.field(&["parallelism.pipeline_parallel_schedule"], "1F1B");
    let csv = f.field(&["parallelism.pipeline_parallel_schedule_csv"], "");
    let size = f.field(&["parallelism.pipeline_parallel_microbatch_size"], "1");
    let first = f.field(
        &["parallelism.pipeline_parallel_first_stage_less_layers"],
        "1",
    );
    let last = f.field(
        &["parallelism.pipeline_parallel_last_stage_less_layers"],
        "1",
    );
    let mut refused = Vec::new();
    let name = schedule.text.to_ascii_lowercase();
    let interleaved = name == "interleaved1f1b";
    if !csv.text.is_empty() {
        refused.push(format!(
            "{}: a schedule from a file is not modelled",
            csv.from
        ));
    } else if !interleaved && name != "1f1b" && name != "gpipe" {
        refused.push(format!(
            "{}: vramfit models the 1F1B, GPipe and interleaved 1F1B schedules only",
            schedule.from
        ));
    }
    let vpp = stages(f, d, interleaved, (&first, &last), layers).unwrap_or_else(|why| {
        refused.push(why);
        1
    });
    let micro = match (size.text.parse::<u64>(), batch.text.parse::<u64>()) {
        (Ok(m), Ok(b)) if m > 0 && b % m == 0 => Some(b / m),
        (Ok(m), Ok(b)) if m > 0 => {
            refused.push(format!(
                "{}: torchtitan refuses it: the batch ({b}) must be divisible by the microbatch size",
                size.from
            ));
            None
        }
        (Ok(_) | Err(_), _) => {
            refused.push(format!("{}: not a microbatch size", size.from));
            None
        }
    };
    let Some(m) = micro.filter(|_| refused.is_empty()) else {
        for why in refused {
            c.unknown(why);
        }
        return c.unknown(format!("{}: not read (its schedule is not)", d.pp.from));
    };
    c.set(Key::Pp, &d.pp.n.to_string(), &d.pp.from);
    c.set(
        Key::PpSchedule,
        if interleaved {
            "interleaved_1f1b"
        } else {
            &name
        },
        &schedule.from,
    );
    if interleaved {
        c.set(
            Key::Vpp,
            &vpp.to_string(),
            "torchtitan's stages per rank (pipeline_llm)",
        );
    }
    c.set(
        Key::MicroBatches,
        &m.to_string(),
        &format!("{} ÷ {}", batch.from, size.from),
    );
    // `generate_llm_fqn_per_model_part` with these as its input and
    // output weights.
    let from = if first.given || last.given {
        format!("{} and {}", first.from, last.from)
    } else {
        "torchtitan's default stage split".into()
    };
    c.set(Key::PpSplit, "torchtitan", &from);
    for (key, w) in [(Key::PpFirstLess, &first), (Key::PpLastLess, &last)] {
        if w.given {
            c.set(key, &w.text, &w.from);
        }
    }
}

/// The stages per rank `pipeline_llm` sets (torchtitan v0.2.2): without
/// `pipeline_parallel_layers_per_stage`, 1 for a single-stage schedule
/// (1F1B, GPipe) and 2 for interleaved 1F1B; with it, ceil((layers +
/// first + last weight) / count) stages over the ranks, which must divide
/// them into 1 a rank (single-stage) or at least 2 (interleaved). Else
/// why it is not read, in torchtitan's words where it refuses.
fn stages(
    f: &mut Fields,
    d: &Degrees,
    interleaved: bool,
    (first, last): (&Field, &Field),
    layers: Option<u32>,
) -> Result<u64, String> {
    let per_stage = f.field(&["parallelism.pipeline_parallel_layers_per_stage"], "");
    if !per_stage.given {
        return Ok(if interleaved { 2 } else { 1 });
    }
    let from = &per_stage.from;
    let count = |t: &str| t.parse::<u64>().ok();
    let Some(per) = count(&per_stage.text).filter(|n| *n > 0) else {
        return Err(format!("{from}: not a count of layers"));
    };
    let Some(l) = layers else {
        return Err(format!(
            "{from}: the stages follow from the model's layers, and the model is not one vramfit knows"
        ));
    };
    let (Some(w1), Some(w2)) = (count(&first.text), count(&last.text)) else {
        return Err(format!("{from}: the stage weights are not counts"));
    };
    let total = (u64::from(l) + w1 + w2).div_ceil(per);
    let pp = u64::try_from(d.pp.n).unwrap_or(1).max(1);
    if total % pp != 0 {
        return Err(format!(
            "{from}: torchtitan refuses it: {total} virtual stages must be divisible by pipeline parallel size ({pp})"
        ));
    }
    let per_rank = total / pp;
    match (interleaved, per_rank) {
        (false, 1) => Ok(1),
        (true, n) if n >= 2 => Ok(n),
        (false, n) => Err(format!(
            "{from}: torchtitan refuses it: a single stage schedule requires exactly 1 stage per rank, but got {n}"
        )),
        (true, n) => Err(format!(
            "{from}: torchtitan refuses it: a multi-stage schedule requires at least 2 stages per rank, but got {n}"
        )),
    }
}

/// `[training] dtype` (default `float32`; `bfloat16`: everything in
/// bf16) and `mixed_precision_param` (default `bfloat16`): applied by
/// `fully_shard` under FSDP and by `torch.autocast` under DDP or on one
/// GPU, and off under TP or PP without FSDP
/// (`torchtitan/distributed/utils.py` `maybe_enable_amp`). bf16 over fp32
/// parameters is `amp_bf16`, as an accelerate config's `mixed_precision:
/// bf16` over a model loaded in fp32 reads (FSDP2 gathers its units in
/// bf16, which `amp_bf16` does not model). A shard degree of -1 is read
/// as FSDP, as [`Fsdp::Rest`] is.
fn dtype(f: &mut Fields, c: &mut Collector, d: Option<&Degrees>) {
    let whole = f.field(&["training.dtype"], "float32");
    let param = f.field(&["training.mixed_precision_param"], "bfloat16");
    // The only reduce dtype torchtitan has is float32.
    f.get("training.mixed_precision_reduce");
    match whole.text.as_str() {
        "bfloat16" => return c.set(Key::Dtype, "bf16", &whole.from),
        "float32" => {}
        _ => return c.unknown(format!("{}: not a dtype torchtitan has", whole.from)),
    }
    match (param.text.as_str(), d) {
        ("float32", _) => c.set(Key::Dtype, "fp32", &param.from),
        ("bfloat16", Some(d)) => {
            let tp_or_pp = d.tp.n > 1 || d.pp.n > 1;
            match (d.fsdp(), tp_or_pp) {
                (Fsdp::Off, true) => c.set(
                    Key::Dtype,
                    "fp32",
                    &format!("{}: off under TP or PP without FSDP", param.from),
                ),
                (Fsdp::On | Fsdp::Rest, _) | (Fsdp::Off, false) => c.set(
                    Key::Dtype,
                    "amp_bf16",
                    &format!("{} over {}", param.from, whole.from),
                ),
            }
        }
        ("bfloat16", None) => c.unknown(format!(
            "{}: whether it applies depends on the parallelism, which is not read",
            param.from
        )),
        _ => c.unknown(format!("{}: not a dtype torchtitan has", param.from)),
    }
}
