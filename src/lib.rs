//! The vramfit page: pick a model, set the run, see memory phase by phase and
//! step by step, and know whether it fits.
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
mod hub;
mod probe;
mod results;
mod tools;

use leptos::prelude::*;
use vramfit_core::query::{self, Group, FIELDS};
use vramfit_core::{Bytes, Decoded, DisplayUnit, Estimate, Estimates, Notice, RawQuery, Scenario};

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
        let timeline = Memo::new(move |_| {
            primary.with(|e| {
                e.as_ref().map(|e| {
                    scenario.with(|s| vramfit_core::train::steps::timeline(s, e, capacity.get()))
                })
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
        }
    }

    /// Sets query keys as if typed, in order (with the form's rules,
    /// `query::edit`).
    pub fn apply(&self, changes: &[(query::Key, String)]) {
        self.form.update(|f| {
            for (k, v) in changes {
                query::edit(f, *k, v);
            }
        });
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

    view! {
        <header class="top">
            <h1>"vramfit"</h1>
            <p class="tagline">"How much GPU memory will this training run need, and will it fit?"</p>
            <div class="header-controls">
                <form::UnitToggle page=page/>
            </div>
        </header>
        <results::MiniSummary page=page/>
        <main>
            <LinkNotices notices=ignored/>
            <div class="inputs">
                <form::ModelPanel page=page/>
                <form::GroupPanel page=page group=Group::Run title="Training run" open=true/>
                <form::GroupPanel page=page group=Group::Stack title="Software stack" open=false/>
                <form::GroupPanel page=page group=Group::Parallel title="GPUs and sharding" open=true/>
                <form::FitPanel page=page/>
                <form::GroupPanel page=page group=Group::Overhead title="Overhead (not tensors)" open=false/>
                <form::CopyLink page=page/>
            </div>
            <div class="results">
                <results::Verdict page=page/>
                <results::Totals page=page/>
                <results::WhatFits page=page/>
                <charts::PhaseChart page=page/>
                <charts::StepsChart page=page/>
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

/// What was ignored in the link (unknown or repeated keys), shown once.
#[component]
fn LinkNotices(notices: Vec<Notice>) -> impl IntoView {
    (!notices.is_empty()).then(|| {
        view! {
            <div class="notice" role="status" data-testid="link-notices">
                <strong>"Some of the link was not used: "</strong>
                <ul>
                    {notices
                        .into_iter()
                        .map(|n| view! { <li>{format!("{n}; {}", n.consequence())}</li> })
                        .collect_view()}
                </ul>
            </div>
        }
    })
}

/// Keys of a form group, in order.
fn keys_of(group: Group) -> impl Iterator<Item = &'static query::Field> {
    FIELDS.iter().filter(move |f| f.group == group)
}
