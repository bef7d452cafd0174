//! The vramfit page: pick a model, train it or run it, see memory phase by
//! phase (and step by step, or against the context length), and know
//! whether it fits.
//!
//! State is the raw form (a [`RawQuery`], exactly what was typed). The
//! validated scenario, both estimates, the verdict and the URL are derived
//! from it, so a bad value never loses what was typed and a reload restores
//! everything. Logic lives in `vramfit-core`; this crate only wires it to the
//! DOM. Natively this crate is empty (see Cargo.toml).
#![cfg(target_arch = "wasm32")]

mod backend;
mod browser;
mod charts;
mod form;
mod gguf;
mod hub;
mod infer;
mod probe;
mod results;
/// The form's rules around the codec's edits: the core's.
pub use vramfit_core::query::form as rules;
mod tools;
mod worker;

use leptos::prelude::*;
use vramfit_core::query::{self, Group, Key, FIELDS};
use vramfit_core::{
    Bytes, Decoded, DisplayUnit, Estimate, Estimates, Notice, RawQuery, Scenario, Task,
};

/// Removes index.html's "Loading…" line once the app is about to mount.
pub fn remove_loading_message() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("loading"))
    {
        el.remove();
    }
}

/// The form's starting values: the known keys of the URL, as typed (an
/// empty URL starts from the default scenario's canonical query). Unknown
/// keys are dropped here; they are reported once, from the URL.
pub fn initial_form(url: &RawQuery) -> RawQuery {
    let mut form = RawQuery::default();
    for (k, v) in url.pairs() {
        if query::field(k).is_some() {
            form.set(k, v);
        }
    }
    if form.pairs().next().is_none() {
        form = query::encode(&Scenario::default());
    }
    form
}

/// Notices about the link itself rather than one field's value.
fn link_notices(url: &RawQuery) -> Vec<Notice> {
    query::decode(url)
        .notices
        .into_iter()
        .filter(|n| {
            matches!(
                n,
                Notice::UnknownKey { .. } | Notice::TooManyPairs { .. } | Notice::Repeated { .. }
            )
        })
        .collect()
}

/// Everything the components read, as signals (all `Copy`).
#[derive(Clone, Copy)]
pub struct Page {
    /// What was typed, key by key.
    pub form: RwSignal<RawQuery>,
    pub decoded: Memo<Decoded>,
    pub scenario: Memo<Scenario>,
    pub estimates: Memo<Estimates>,
    /// The estimate to lead with (vramfit's, or the seed's for a count alone).
    pub primary: Memo<Option<Estimate>>,
    pub unit: Memo<DisplayUnit>,
    pub capacity: Memo<Bytes>,
    /// Memory over training steps (the steps chart and the verdict's
    /// out-of-memory step read the same one); an error when what the steps
    /// keep is too large to count.
    pub timeline:
        Memo<Option<Result<vramfit_core::train::steps::Timeline, vramfit_core::EstimateError>>>,
    /// What is done with the model: which panels, answers and charts show.
    pub task: Memo<Task>,
    /// The inference keys the scenario does not read (`rules::unread`):
    /// their fields are hidden unless the form holds them.
    pub unread: Memo<Vec<Key>>,
    /// Settings a change set aside, restored when they are read again.
    aside: StoredValue<rules::Aside>,
    /// An inference run's longest context that fits (the solver's key and
    /// value), for the answers and the context chart; computed only when
    /// read.
    pub infer_answers: Memo<Option<vramfit_core::solve::Answers>>,
}

impl Page {
    fn new(form: RawQuery) -> Page {
        let form = RwSignal::new(form);
        let decoded = Memo::new(move |_| form.with(query::decode));
        let scenario = Memo::new(move |_| decoded.with(|d| d.scenario));
        let estimates = Memo::new(move |_| scenario.with(Estimates::new));
        let primary = Memo::new(move |_| estimates.with(|e| e.primary().ok().cloned()));
        let unit = Memo::new(move |_| scenario.with(|s| s.view.unit));
        let capacity = Memo::new(move |_| scenario.with(|s| s.view.capacity.bytes()));
        let task = Memo::new(move |_| scenario.with(|s| s.task));
        let timeline = Memo::new(move |_| {
            if task.get() != Task::Train {
                return None;
            }
            primary.with(|e| {
                e.as_ref().map(|e| {
                    scenario.with(|s| {
                        vramfit_core::train::steps::timeline(&s.train_run(), e, capacity.get())
                    })
                })
            })
        });
        let unread = Memo::new(move |_| form.with(|f| scenario.with(|s| rules::unread(f, s))));
        // The inference answers, each computed once per change (the core's);
        // none without an estimate of the run (a refusal: nothing to search
        // from).
        let infer_answers = Memo::new(move |_| {
            let cap = capacity.get();
            let estimated = primary.with(Option::is_some);
            scenario.with(|s| {
                (estimated && s.task == Task::Infer).then(|| vramfit_core::solve::answers(s, cap))
            })
        });
        Page {
            form,
            decoded,
            scenario,
            estimates,
            primary,
            unit,
            capacity,
            timeline,
            task,
            unread,
            aside: StoredValue::new(rules::Aside::default()),
            infer_answers,
        }
    }

    /// The longest context that fits, in tokens per sequence: the prompt
    /// and the new tokens (transformers), or `max_model_len` (vLLM).
    pub fn longest_tokens(&self) -> Option<u32> {
        let new = self.scenario.with(|s| s.infer.new.get());
        // The prompt's answer leaves room for the new tokens after it.
        let longest = self
            .infer_answers
            .with(|a| a.as_ref().and_then(|a| a.context));
        longest.map(|(key, n)| {
            if key == Key::Prompt {
                n.saturating_add(new)
            } else {
                n
            }
        })
    }

    /// Sets query keys as if typed, in order: with the codec's rules
    /// (`query::edit`), then the page's (`rules::settle`: the other
    /// task's settings, and keys the change made unused, set aside).
    pub fn apply(&self, changes: &[(Key, String)]) {
        let before = (self.task.get_untracked(), self.unread.get_untracked());
        let engine = self.scenario.with_untracked(|s| s.infer.engine);
        let edited: Vec<Key> = changes.iter().map(|(k, _)| *k).collect();
        self.form.update(|f| {
            for (k, v) in changes {
                query::edit(f, *k, v);
            }
            self.aside.update_value(|a| {
                rules::switch_weights(f, a, engine, &edited);
                rules::settle(f, a, (before.0, &before.1), &edited);
            });
        });
    }

    /// Applies an imported config to the form: the model's keys are
    /// replaced by the import's `changes`, then `extra` is set (the Hub id,
    /// a link's dropout).
    pub fn apply_import(&self, changes: &[(String, String)], extra: &[(Key, String)]) {
        self.form.update(|f| query::apply_import(f, changes, extra));
    }

    /// Whether the form shows `key`'s field: the scenario reads it, or the
    /// form holds it (with the notice that says it is not used).
    pub fn shows(&self, key: Key) -> bool {
        !self.unread.with(|u| u.contains(&key)) || self.form.with(|f| f.get(key).is_some())
    }

    /// Formats bytes in the chosen unit.
    pub fn show(&self, b: Bytes) -> String {
        b.display(self.unit.get())
    }
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let url = RawQuery::parse(&browser::query());
    let ignored = link_notices(&url);
    let page = Page::new(initial_form(&url));

    // Every change is written back to the address bar, once the charts
    // have drawn: `history.replaceState` takes ~5 ms in Chrome (a CPU
    // profile of 30 updates), a third of the update budget. Changes made
    // before it runs are written together.
    let pending = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        let query = page.form.with(|f| f.to_query_string());
        let scheduled = pending.with_value(Option::is_some);
        pending.set_value(Some(query));
        if !scheduled {
            set_timeout(
                move || {
                    if let Some(q) = pending.try_update_value(Option::take).flatten() {
                        browser::replace_query(&q);
                    }
                },
                std::time::Duration::ZERO,
            );
        }
    });

    let task = page.task;
    view! {
        <header class="top">
            <h1>"vramfit"</h1>
            <p class="tagline">"How much GPU memory will it take to train or to run this model, and will it fit?"</p>
            <div class="header-controls">
                <form::UnitToggle page=page/>
            </div>
        </header>
        <results::MiniSummary page=page/>
        <main>
            <LinkNotices notices=ignored/>
            <OtherTaskNotices page=page/>
            <div class="inputs">
                <infer::TaskSwitch page=page/>
                <form::ModelPanel page=page/>
                {move || match task.get() {
                    Task::Train => view! {
                        <form::GroupPanel page=page group=Group::Run title="Training run" open=true/>
                        <form::GroupPanel page=page group=Group::Stack title="Software stack" open=false/>
                        <form::GroupPanel page=page group=Group::Parallel title="GPUs and parallelism" open=true/>
                    }
                    .into_any(),
                    Task::Infer => view! {
                        <infer::InferPanel page=page/>
                        <infer::EnginePanel page=page/>
                        <gguf::GgufPanel page=page/>
                    }
                    .into_any(),
                }}
                <form::FitPanel page=page/>
                <form::GroupPanel page=page group=Group::Overhead title="Overhead (not tensors)" open=false/>
                <form::CopyLink page=page/>
            </div>
            <div class="results">
                <results::Verdict page=page/>
                <results::Totals page=page/>
                {move || match task.get() {
                    Task::Train => view! {
                        <results::WhatFits page=page/>
                        <charts::PhaseChart page=page/>
                        <charts::StepsChart page=page/>
                    }
                    .into_any(),
                    Task::Infer => view! {
                        <infer::EngineFigures page=page/>
                        <infer::InferFits page=page/>
                        <charts::PhaseChart page=page/>
                        <charts::ContextChart page=page/>
                    }
                    .into_any(),
                }}
                <results::Breakdown page=page/>
            </div>
        </main>
        <footer>
            "vramfit models what PyTorch keeps alive, tensor by tensor, and is held to measured PyTorch memory. "
            "Bytes are exact; GiB = 2"<sup>"30"</sup>" bytes, GB = 10"<sup>"9"</sup>". "
            "The seed formula is from "<em>"Understanding Model Memory Calculations"</em>"."
        </footer>
    }
}

/// Keys of the other task in the link (their fields are not on the page):
/// what the codec said about them, and a button that drops them.
#[component]
fn OtherTaskNotices(page: Page) -> impl IntoView {
    let other = Memo::new(move |_| {
        let task = page.task.get();
        page.decoded.with(|d| {
            d.notices
                .iter()
                .filter(|n| {
                    n.field_key()
                        .and_then(Key::field)
                        .is_some_and(|f| !f.tasks.include(task))
                })
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let drop = move |_| {
        let keys: Vec<Key> =
            other.with_untracked(|o| o.iter().filter_map(Notice::field_key).collect());
        page.form.update(|f| {
            for k in keys {
                f.remove(k);
            }
        });
    };
    move || {
        let notices = other.get();
        (!notices.is_empty()).then(|| {
            view! {
                <div class="notice" role="status" data-testid="other-task-notices">
                    <strong>"Not used for this task: "</strong>
                    <ul>
                        {notice_items(notices)}
                    </ul>
                    <button type="button" class="link" data-testid="drop-other-task" on:click=drop>
                        "Remove them from the link"
                    </button>
                </div>
            }
        })
    }
}

/// Each notice with what the page did about it, as list items.
fn notice_items(notices: Vec<Notice>) -> impl IntoView {
    notices
        .into_iter()
        .map(|n| view! { <li>{format!("{n}; {}", n.consequence())}</li> })
        .collect_view()
}

/// What was ignored in the link (unknown or repeated keys), shown once.
#[component]
fn LinkNotices(notices: Vec<Notice>) -> impl IntoView {
    (!notices.is_empty()).then(|| {
        view! {
            <div class="notice" role="status" data-testid="link-notices">
                <strong>"Some of the link was not used: "</strong>
                <ul>
                    {notice_items(notices)}
                </ul>
            </div>
        }
    })
}

/// Keys of a form group, in order.
fn keys_of(group: Group) -> impl Iterator<Item = &'static query::Field> {
    FIELDS.iter().filter(move |f| f.group == group)
}
