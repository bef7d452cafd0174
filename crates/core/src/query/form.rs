//! What the form does around the codec's own edit rules (`query::edit`):
//! which inference keys a scenario reads (the form shows those), and the
//! settings a change sets aside: the other task's when the task changes,
//! a key the change made unused (vLLM does not read `prompt`), each
//! restored when it is read again. So the URL carries one workload, the
//! CLI reads it without a notice, and switching back loses nothing.
//!
//! Pure, and part of the codec: the page calls it on every change, the
//! native tests hold it (`tests/form_rules.rs`).

use super::{Field, FieldKind, Group, Key, RawQuery, Tasks, FIELDS};
use crate::infer::run::Engine;
use crate::query;
use crate::scenario::{Scenario, Task};

/// Whether a key belongs to one workload's settings (the panels that
/// change with the task), rather than to the model, the GPU or the view.
pub fn workload_key(f: &Field) -> bool {
    match f.group {
        Group::Run
        | Group::Stack
        | Group::Parallel
        | Group::Infer
        | Group::Engine
        | Group::LlamaCpp
        | Group::Ollama
        | Group::Mlx => true,
        Group::View => f.tasks != Tasks::Both,
        Group::Model | Group::Architecture | Group::Overhead | Group::Fit => false,
    }
}

/// Whether a group is one engine's own arguments (a panel of its own).
pub fn engine_group(group: Group) -> bool {
    group.engine().is_some()
}

/// The keys of the inference panels: the run's (`Group::Infer`, and the
/// run keys both tasks share: batch, attention, the 4-bit options) and
/// each engine's own arguments.
pub fn infer_keys() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|f| {
        f.tasks.include(Task::Infer)
            && (matches!(f.group, Group::Infer | Group::Run) || engine_group(f.group))
    })
}

/// The inference keys `s` does not read, from the engines' key table
/// (`query::reads`): each unread key the form gives or that has a value to
/// give, and a key its engine refuses at any value but its default
/// (`query::refused`: transformers' `kv_dtype`). Empty for a training
/// scenario. Nothing is decoded: the same answer as giving every key left
/// out its shown value and decoding the form again (held by a test).
/// A refused key the form holds stays shown, with its error.
pub fn unread(form: &RawQuery, s: &Scenario) -> Vec<Key> {
    if s.task != Task::Infer {
        return Vec::new();
    }
    let mut out = Vec::new();
    for f in infer_keys() {
        let typed = form.get(f.key).is_some();
        let unread = !query::reads(&s.infer, f.key) && (typed || probe_value(f, s).is_some());
        // A refused value the form holds is an error to show there.
        if unread || query::refused(&s.infer, f.key) && !typed {
            out.push(f.key);
        }
    }
    out
}

/// Values tried for a text field left out, the first that validates:
/// `auto` (a context), `1` (`tensor_split`: one GPU), an override that
/// moves nothing (`override_tensor`).
pub const TEXT_PROBES: [&str; 3] = ["auto", "1", "none=CPU"];

/// A valid value to give `f` in place of a key left out: the one the form
/// shows when it validates, else the kind's smallest.
fn probe_value(f: &Field, s: &Scenario) -> Option<String> {
    let shown = f.shown_value(s);
    let fallback: Vec<String> = match f.kind {
        FieldKind::Count { min, .. } => vec![min.to_string()],
        FieldKind::Decimal { min, .. } => vec![min.to_string()],
        FieldKind::Toggle => vec!["false".to_string()],
        FieldKind::Choice(options) => vec![options.first().map(|(v, _)| v.to_string())?],
        FieldKind::Text => TEXT_PROBES.iter().map(|v| v.to_string()).collect(),
        FieldKind::Model | super::FieldKind::Gpu => return None,
    };
    std::iter::once(shown)
        .chain(fallback)
        .find(|v| f.validate(v).is_ok())
}

/// Settings a change set aside, per task, to come back when read again.
#[derive(Clone, Debug, Default)]
pub struct Aside {
    train: RawQuery,
    infer: RawQuery,
    /// The `weights` each kind of engine had ([`weights_kind`]).
    weights: [Option<String>; 3],
}

/// Which list of weights an engine reads: checkpoint formats, GGUF file
/// types, MLX's conversions (an index into [`Aside`]'s).
fn weights_kind(engine: Engine) -> usize {
    engine.spec().weights.index()
}

/// After the engine changed from `before` (and `weights` was not typed
/// with it): when the new engine reads another kind of weights, the
/// form's `weights` goes aside for the old kind and the new kind's comes
/// back (or its default: q4_k_m for a GGUF, 4bit for MLX). `bf16` means
/// something to every engine, but a checkpoint's bf16 is rarely the GGUF
/// one wants.
pub fn switch_weights(form: &mut RawQuery, aside: &mut Aside, before: Engine, edited: &[Key]) {
    let s = query::decode(form).scenario;
    if s.task != Task::Infer || edited.contains(&Key::Weights) {
        return;
    }
    let (old, new) = (weights_kind(before), weights_kind(s.infer.engine));
    if old == new {
        return;
    }
    aside.weights[old] = form.get(Key::Weights).map(str::to_string);
    form.remove(Key::Weights);
    if let Some(w) = aside.weights[new].take() {
        form.set(Key::Weights, &w);
    }
}

impl Aside {
    fn of(&mut self, task: Task) -> &mut RawQuery {
        match task {
            Task::Train => &mut self.train,
            Task::Infer => &mut self.infer,
        }
    }
}

/// Moves `key` from the form to `to`.
fn set_aside(form: &mut RawQuery, to: &mut RawQuery, key: &str) {
    if let Some(v) = form.get(key).map(str::to_string) {
        to.set(key, &v);
        form.remove(key);
    }
}

/// After the keys `edited` were set in `form` (as typed, through
/// `query::edit`), given the task and the unread keys before: a new task
/// sets the old one's settings aside and brings its own back; otherwise a
/// key the change made unread goes aside, and one set aside that is read
/// again comes back. The edited keys themselves always stay as typed.
pub fn settle(
    form: &mut RawQuery,
    aside: &mut Aside,
    (task_before, unread_before): (Task, &[Key]),
    edited: &[Key],
) {
    let s = query::decode(form).scenario;
    if s.task != task_before {
        let keys: Vec<String> = form
            .pairs()
            .filter(|(k, _)| {
                query::field(k).is_some_and(|f| workload_key(f) && !edited.contains(&f.key))
            })
            .map(|(k, _)| k.to_string())
            .collect();
        for k in keys {
            set_aside(form, aside.of(task_before), &k);
        }
        let back = std::mem::take(aside.of(s.task));
        for (k, v) in back.pairs() {
            if form.get(k).is_none() {
                form.set(k, v);
            }
        }
        return;
    }
    let now = unread(form, &s);
    for key in &now {
        if !unread_before.contains(key) && !edited.contains(key) {
            set_aside(form, aside.of(s.task), key.text());
        }
    }
    let kept = aside.of(s.task);
    let back: Vec<(String, String)> = kept
        .pairs()
        .filter(|(k, _)| Key::from_text(k).is_some_and(|key| !now.contains(&key)))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in back {
        kept.remove(&k);
        if form.get(&k).is_none() {
            form.set(&k, &v);
        }
    }
}
