//! The vramfit page: a form whose every field is a query key, the estimate's
//! totals and breakdown, and the memory-per-phase chart.
//!
//! State is the raw form (a [`RawQuery`], exactly what was typed); the
//! validated scenario and the estimate are derived from it, and the URL is
//! written back from it. Logic lives in `vramfit-core`; this crate only wires
//! it to the DOM. Natively this crate is empty (see Cargo.toml).
#![cfg(target_arch = "wasm32")]

mod browser;
mod chart;

use leptos::prelude::*;
use vramfit_core::presets::PRESETS;
use vramfit_core::query::{self, Field, FieldKind, FIELDS};
use vramfit_core::{Bytes, Decoded, Estimate, Estimates, Notice, RawQuery};

/// Removes index.html's "Loading…" line once the app is about to mount.
pub fn remove_loading_message() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("loading"))
    {
        el.remove();
    }
}

/// `92650478080` as `92 650 478 080` (thin spaces), for reading exact bytes.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 2);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
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
        form = query::encode(&vramfit_core::Scenario::default());
    }
    form
}

/// Notices about the link itself rather than one field's value.
fn link_notices(url: &RawQuery) -> Vec<Notice> {
    query::decode(url)
        .notices
        .into_iter()
        .filter(|n| !matches!(n, Notice::Invalid { .. }))
        .collect()
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let url = RawQuery::parse(&browser::query());
    let ignored = link_notices(&url);
    let form = RwSignal::new(initial_form(&url));
    let decoded = Memo::new(move |_| form.with(query::decode));
    let estimates = Memo::new(move |_| decoded.with(|d| Estimates::new(&d.scenario)));

    // Every change is written back to the address bar.
    Effect::new(move |_| form.with(|f| browser::replace_query(&f.to_query_string())));

    view! {
        <header class="top">
            <h1>"vramfit"</h1>
            <p class="tagline">"How much GPU memory will this training run need?"</p>
        </header>
        <main>
            <LinkNotices notices=ignored/>
            <section class="panel inputs" aria-labelledby="inputs-h">
                <h2 id="inputs-h">"Training run"</h2>
                <form class="fields" on:submit=|ev| ev.prevent_default()>
                    {FIELDS.iter().map(|f| view! { <FieldInput field=f form=form decoded=decoded/> }).collect_view()}
                </form>
                <CopyLink/>
            </section>
            <Results estimates=estimates/>
        </main>
        <footer>
            "Seed formula: "
            <em>"Understanding Model Memory Calculations"</em>
            ". Bytes are exact; GiB = 2"<sup>"30"</sup>" bytes."
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

/// One labelled input whose `name` is its query key, with its error beside it.
#[component]
fn FieldInput(
    field: &'static Field,
    form: RwSignal<RawQuery>,
    decoded: Memo<Decoded>,
) -> impl IntoView {
    let key = field.key;
    let id = format!("f-{key}");
    let err_id = format!("e-{key}");
    let value = move || {
        form.with(|f| f.get(key).map(str::to_string))
            .unwrap_or_else(|| decoded.with(|d| field.shown_value(&d.scenario)))
    };
    // Choosing "parameter count only" removes the model key.
    let set = move |v: String| {
        form.update(|f| match field.kind {
            FieldKind::Model if v.is_empty() => f.remove(key),
            _ => f.set(key, &v),
        })
    };
    let error = move || {
        decoded.with(|d| {
            d.notices.iter().find_map(|n| match n {
                Notice::Invalid { key: k, .. } if *k == key => {
                    Some(format!("{n}; {}", n.consequence()))
                }
                _ => None,
            })
        })
    };
    let invalid = move || error().is_some().to_string();
    let input = match field.kind {
        FieldKind::Number => view! {
            <input id=id.clone() name=key type="text" inputmode="decimal" autocomplete="off"
                spellcheck="false" title=field.help aria-invalid=invalid
                aria-describedby=err_id.clone()
                prop:value=value on:input=move |ev| set(event_target_value(&ev))/>
        }
        .into_any(),
        FieldKind::Model => view! {
            <select id=id.clone() name=key title=field.help aria-invalid=invalid
                aria-describedby=err_id.clone()
                prop:value=value on:change=move |ev| set(event_target_value(&ev))>
                <option value="">"(parameter count only)"</option>
                {PRESETS
                    .iter()
                    .map(|p| view! { <option value=p.id>{p.name}</option> })
                    .collect_view()}
            </select>
        }
        .into_any(),
        FieldKind::Toggle => view! {
            <select id=id.clone() name=key title=field.help aria-invalid=invalid
                aria-describedby=err_id.clone()
                prop:value=value on:change=move |ev| set(event_target_value(&ev))>
                <option value="false">"no"</option>
                <option value="true">"yes"</option>
            </select>
        }
        .into_any(),
        FieldKind::Choice(options) => view! {
            <select id=id.clone() name=key title=field.help aria-invalid=invalid
                aria-describedby=err_id.clone()
                prop:value=value on:change=move |ev| set(event_target_value(&ev))>
                {options
                    .iter()
                    .map(|(v, label)| view! { <option value=*v>{*label}</option> })
                    .collect_view()}
            </select>
        }
        .into_any(),
    };
    view! {
        <div class="field">
            <label for=id>{field.label}</label>
            {input}
            <p class="field-error" id=err_id data-testid=format!("error-{key}") aria-live="polite">
                {error}
            </p>
        </div>
    }
}

/// Copies the page's URL, which holds every input.
#[component]
fn CopyLink() -> impl IntoView {
    let (copied, set_copied) = signal(None::<bool>);
    let copy = move |_| {
        leptos::task::spawn_local(async move {
            set_copied.set(Some(browser::copy(&browser::href()).await));
        });
    };
    view! {
        <div class="share">
            <button type="button" data-testid="copy-link" on:click=copy>"Copy link"</button>
            <span class="hint" aria-live="polite">
                {move || match copied.get() {
                    Some(true) => "Link copied: it reproduces this estimate exactly.",
                    Some(false) => "Could not reach the clipboard; copy the address bar instead.",
                    None => "",
                }}
            </span>
        </div>
    }
}

/// The total, the breakdown at the peak and the chart, or why there are none.
#[component]
fn Results(estimates: Memo<Estimates>) -> impl IntoView {
    move || match estimates.with(|e| e.primary().cloned().map_err(Clone::clone)) {
        Ok(e) => {
            let seed = estimates.with(|all| all.seed.clone().ok());
            view! { <Totals estimate=e seed=seed/> }.into_any()
        }
        Err(err) => view! {
            <section class="panel results">
                <p class="error" role="alert" data-testid="estimate-error">{err.to_string()}</p>
            </section>
        }
        .into_any(),
    }
}

fn gib(b: Bytes) -> String {
    format!("{:.2} GiB", b.gib())
}

/// Peak total, where it happens, and what it is made of; the seed formula's
/// figure beside it.
#[component]
fn Totals(estimate: Estimate, seed: Option<Estimate>) -> impl IntoView {
    let peak = estimate.peak().cloned();
    let total = estimate.peak_total_bytes;
    let rows = peak
        .map(|p| {
            p.components
                .iter()
                .map(|(c, b)| {
                    let share = 100.0 * b.get() as f64 / total.get().max(1) as f64;
                    view! {
                        <tr data-testid=format!("row-{}", c.key()) data-bytes=b.get().to_string()>
                            <th scope="row">
                                <span class="swatch" style=format!("background:{}", vramfit_chart::colour_hex(c))></span>
                                {c.label()}
                            </th>
                            <td class="num">{gib(b)}</td>
                            <td class="num bytes">{group_digits(b.get())}</td>
                            <td class="num">{format!("{share:.1}%")}</td>
                        </tr>
                    }
                })
                .collect_view()
        });
    let chart_estimate = estimate.clone();
    view! {
        <section class="panel results" aria-labelledby="results-h">
            <h2 id="results-h">{format!("Estimate ({})", estimate.method.label())}</h2>
            <p class="total">
                "Peak memory: "
                <strong data-testid="peak-total" data-bytes=total.get().to_string()>{gib(total)}</strong>
                " in the "{estimate.peak_phase.label()}" of iteration "{estimate.peak_iteration}
            </p>
            <p class="exact">{format!("{} bytes", group_digits(total.get()))}</p>
            {seed.filter(|s| s.method != estimate.method).map(|s| {
                let diff = 100.0 * (s.peak_total_bytes.get() as f64 / total.get().max(1) as f64 - 1.0);
                view! {
                    <p class="seed" data-testid="seed-total" data-bytes=s.peak_total_bytes.get().to_string()>
                        {format!("Seed formula: {} ({diff:+.0}%)", gib(s.peak_total_bytes))}
                    </p>
                }
            })}
            <table class="breakdown">
                <caption>"What is alive at the peak"</caption>
                <thead>
                    <tr><th scope="col">"Component"</th><th scope="col">"GiB"</th><th scope="col">"Bytes"</th><th scope="col">"Share"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <chart::PhaseChart estimate=chart_estimate/>
        </section>
    }
}
