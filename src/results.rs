//! The answers: the fit verdict, the totals with the seed formula beside
//! them, what would fit, and the breakdown table with its formulas.

use crate::{browser, Page};
use leptos::prelude::*;
use vramfit_chart::colour_hex;
use vramfit_core::explain::{self, group};
use vramfit_core::query::Key;
use vramfit_core::solve::{self, Fit, Suggestion};
use vramfit_core::{Bytes, Estimate, EstimateError};

/// Fits with X to spare / short by X, on which GPU.
#[component]
pub fn Verdict(page: Page) -> impl IntoView {
    let fit = Memo::new(move |_| {
        page.primary.with(|e| {
            e.as_ref()
                .map(|e| solve::Verdict::of(e, page.capacity.get()))
        })
    });
    let oom_step = Memo::new(move |_| {
        page.timeline.with(|t| {
            t.as_ref()
                .and_then(|t| t.as_ref().ok())
                .and_then(|t| t.oom_step)
        })
    });
    // A Mac's GPU gets the working set macOS allows, not all its memory.
    let on = move || {
        page.scenario.with(|s| {
            let gpu = s.view.capacity.describe(s.view.unit);
            if s.view.capacity.is_apple() {
                format!("{gpu}: the GPU working set macOS allows")
            } else {
                gpu
            }
        })
    };
    // A run vramfit refuses (a mechanism not modelled, or the engine's
    // own refusal) has no input to fix: the reason is under the totals.
    let refused = move || {
        page.estimates.with(|e| {
            matches!(
                e.primary(),
                Err(EstimateError::NotModelled(_) | EstimateError::Engine(_))
            )
        })
    };
    move || {
        match fit.get() {
        None => view! {
            <section class="verdict unknown" data-testid="fit-verdict" data-fits="" data-bytes=move || page.capacity.get().get().to_string()>
                <p>{move || if refused() {
                    "No estimate: vramfit does not model this run (the reason is under the totals)."
                } else {
                    "No estimate: fix the inputs marked in red."
                }}</p>
            </section>
        }
        .into_any(),
        Some(v) => {
            // bitsandbytes' paged state can leave the GPU when it runs
            // short: the run goes on, slower.
            let (fits, paging) = (v.fit() == Fit::Yes, v.fit() == Fit::Paging);
            view! {
                <section class=if fits { "verdict fits" } else if paging { "verdict paging" } else { "verdict short" } role="status"
                    data-testid="fit-verdict" data-fits=fits.to_string() data-paging=paging.to_string()
                    data-bytes=v.capacity.get().to_string()>
                    <p class="verdict-main">
                        {v.headline(page.unit.get())}
                    </p>
                    <p class="verdict-on">{move || format!("on {}", on())}</p>
                    {move || host_line(page)}
                    {move || ranks_line(page)}
                    // vLLM takes its share of the GPU (gpu_memory_utilization).
                    {(v.capacity != page.capacity.get()).then(|| view! {
                        <p class="verdict-on" data-testid="budget" data-bytes=v.capacity.get().to_string()>
                            {format!("of which the engine may take {} (gpu_memory_utilization)", page.show(v.capacity))}
                        </p>
                    })}
                    {(!fits).then(|| match vramfit_core::gpus::closest_fitting(v.needed) {
                        Some(g) => view! {
                            <p class="verdict-hint" data-testid="closest-gpu" data-gpu=g.id>
                                {format!("The smallest GPU in the list that would hold it: {} ({}).", g.name, page.show(g.usable))}
                                " "
                                <button type="button" class="link" on:click=move |_| page.apply(&[(Key::Gpu, g.id.to_string())])>
                                    "Use it"
                                </button>
                            </p>
                        }.into_any(),
                        None => view! {
                            <p class="verdict-hint" data-testid="closest-gpu" data-gpu="">
                                "No single GPU in the list holds it: shard it over several (ZeRO) or shrink it."
                            </p>
                        }.into_any(),
                    })}
                    {move || oom_step.get().filter(|_| fits).map(|k| view! {
                        <p class="verdict-leak" data-testid="oom-step" data-step=k.to_string()>
                            {format!("…but the leak runs it out of memory at step {k}.")}
                        </p>
                    })}
                </section>
            }
            .into_any()
        }
    }
    }
}

/// llama.cpp's layers left in host memory, beside the verdict: it fits
/// the GPU because they run on the CPU.
fn host_line(page: Page) -> Option<impl IntoView> {
    let total = page
        .scenario
        .with(|s| s.arch.map(|a| a.layers.saturating_add(1)))?;
    page.primary.with(|e| {
        let e = e.as_ref()?;
        let on_gpu = e.served.as_ref()?.n_gpu_layers?;
        (on_gpu < total || e.host_bytes.get() > 0).then(|| {
            let text = if on_gpu < total {
                format!(
                    "with {on_gpu} of {total} layers on the GPU: {} more stay in host memory ({} of RAM), and run slower there",
                    total - on_gpu,
                    page.show(e.host_bytes)
                )
            } else {
                format!(
                    "every layer on the GPU; {} of host memory (RAM) beside it",
                    page.show(e.host_bytes)
                )
            };
            view! { <p class="verdict-on verdict-host" data-testid="verdict-host">{text}</p> }
        })
    })
}

/// A pipeline's first, fullest middle and last ranks side by side, beside
/// the verdict: the figures above are the rank that needs most.
fn ranks_line(page: Page) -> Option<impl IntoView> {
    page.primary.with(|e| {
        let e = e.as_ref()?;
        (!e.ranks.is_empty()).then(|| {
            let cells = e
                .ranks
                .iter()
                .map(|r| {
                    let ends = match (r.first, r.last) {
                        (true, true) => ", embedding, head",
                        (true, false) => ", embedding",
                        (false, true) => ", head and loss",
                        (false, false) => "",
                    };
                    format!(
                        "rank {} ({} layers{ends}): {}",
                        r.rank,
                        r.layers,
                        page.show(r.peak_total_bytes)
                    )
                })
                .collect::<Vec<_>>()
                .join(" · ");
            view! {
                <p class="verdict-on verdict-host" data-testid="verdict-ranks" data-ranks=e.ranks.len().to_string()>
                    {format!("the pipeline's first, fullest middle and last GPUs (the figures above are the fullest): {cells}")}
                </p>
            }
        })
    })
}

/// On narrow screens: the answer stays in sight while the inputs scroll.
#[component]
pub fn MiniSummary(page: Page) -> impl IntoView {
    let line = move || {
        page.primary.with(|e| {
            e.as_ref().map(|e| {
                let v = solve::Verdict::of(e, page.capacity.get());
                let verdict = v.summary(page.unit.get());
                // vLLM takes more than it needs: say what it needs.
                let amount = match e.needed_bytes {
                    Some(n) => format!("needs {}", page.show(n)),
                    None => format!("{} peak", page.show(e.peak_total_bytes)),
                };
                (v.fit() != Fit::No, format!("{amount} · {verdict}"))
            })
        })
    };
    view! {
        <div class=move || match line() { Some((true, _)) => "mini fits", Some((false, _)) => "mini short", None => "mini" }
            aria-hidden="true">
            {move || line().map(|(_, t)| t)}
        </div>
    }
}

/// The peak, where it happens, allocated vs total, and the seed formula.
#[component]
pub fn Totals(page: Page) -> impl IntoView {
    let peak = move || {
        page.primary
            .with(|e| e.as_ref().map(|e| e.peak_total_bytes.get()).unwrap_or(0))
    };
    let error = move || {
        page.estimates
            .with(|all| match (&all.vramfit, all.primary()) {
                (_, Err(e)) => Some(e.to_string()),
                (Err(e), Ok(_)) => Some(format!("{e}.")),
                _ => None,
            })
    };
    let seed = move || {
        page.estimates.with(|all| {
            let (Ok(ours), Ok(seed)) = (&all.vramfit, &all.seed) else {
                return None;
            };
            let (o, s) = (ours.peak_total_bytes.get(), seed.peak_total_bytes.get());
            let diff = 100.0 * (s as f64 / o.max(1) as f64 - 1.0);
            Some((s, diff))
        })
    };
    view! {
        <section class="panel totals" aria-labelledby="totals-h">
            <h2 id="totals-h">{move || page.primary.with(|e| match e {
                Some(e) => format!("Peak memory ({})", e.method.label()),
                None => "Peak memory".to_string(),
            })}</h2>
            <p class="total">
                <strong data-testid="peak-total" data-bytes=move || peak().to_string()>
                    {move || page.show(Bytes(peak()))}
                </strong>
                {move || page.primary.with(|e| e.as_ref().map(|e| format!(" {}", peak_place(e))))}
            </p>
            <p class="exact">
                {move || format!("{} bytes", group(peak()))}
                {move || page.primary.with(|e| e.as_ref().map(|e| format!(
                    " · {} of live tensors ({} bytes) + overhead",
                    page.show(e.peak_allocated_bytes),
                    group(e.peak_allocated_bytes.get())
                )))}
            </p>
            {move || error().map(|e| view! { <p class="error" data-testid="estimate-error">{e}</p> })}
            {move || page.primary.with(|e| e.as_ref().and_then(|e| e.needed_bytes).map(|n| view! {
                <p class="host" data-testid="needed" data-bytes=n.get().to_string()>
                    {format!(
                        "It needs at least {}: the engine takes what its share of the GPU allows and fills the rest with its key/value pool.",
                        page.show(n)
                    )}
                </p>
            }))}
            {move || page.primary.with(|e| {
                let v = e.as_ref()?.served.as_ref()?;
                let shown = v.gpus.iter().find(|g| g.phases)?;
                Some(view! {
                    <p class="host" data-testid="gpu-shown">
                        {format!(
                            "The peak is GPU {}'s, the fullest of {}: each GPU is listed with the engine's figures below.",
                            shown.gpu,
                            v.gpus.len()
                        )}
                    </p>
                })
            })}
            {move || page.primary.with(|e| e.as_ref().filter(|e| e.host_bytes.get() > 0).map(|e| {
                // An engine lists its host terms with its figures.
                let what = if e.served.is_some() {
                    "what the engine keeps there is listed with its figures below".to_string()
                } else {
                    e.host_terms.iter().map(|id| id.label()).collect::<Vec<_>>().join("; ")
                };
                view! {
                    <p class="host" data-testid="host-memory" data-bytes=e.host_bytes.get().to_string()>
                        {format!("+ {} of host memory beside the GPU's ({what})", page.show(e.host_bytes))}
                    </p>
                }
            }))}
            {move || page.primary.with(|e| e.as_ref().filter(|e| e.pageable_bytes.get() > 0).map(|e| view! {
                <p class="host" data-testid="pageable" data-bytes=e.pageable_bytes.get().to_string()>
                    {format!(
                        "{} of it is paged optimizer state: bitsandbytes moves it to host memory when the GPU runs short",
                        page.show(e.pageable_bytes)
                    )}
                </p>
            }))}
            <Notes page=page/>
            <Caveats page=page/>
            {move || seed().map(|(s, diff)| view! {
                <p class="seed" data-testid="seed-total" data-bytes=s.to_string()>
                    {format!(
                        "The seed formula{} says {} ({diff:+.0}% vs vramfit)",
                        if page.scenario.with(|s| s.parallel.gpus.get() > 1) { " (the whole model on one GPU)" } else { "" },
                        page.show(Bytes(s))
                    )}
                </p>
            })}
        </section>
    }
}

/// What the numbers rest on (each note is also shown next to its field).
#[component]
fn Notes(page: Page) -> impl IntoView {
    let notes = move || page.decoded.with(|d| d.notes.clone());
    move || {
        let notes = notes();
        (!notes.is_empty()).then(|| {
            view! {
                <ul class="notes" data-testid="notes" aria-label="What these numbers rest on">
                    {notes
                        .into_iter()
                        .map(|n| view! { <li data-key=n.key().text()>{n.to_string()}</li> })
                        .collect_view()}
                </ul>
            }
        })
    }
}

/// The largest batch and sequence that fit, and changes ranked by saving.
#[component]
pub fn WhatFits(page: Page) -> impl IntoView {
    let answers = Memo::new(move |_| {
        let cap = page.capacity.get();
        // The run's own peak, from the estimate the page shows (not
        // estimated again).
        // A refused run has nothing to search from: no search runs.
        let now = page.primary.with(|e| e.as_ref().map(|e| e.needed()));
        page.scenario.with(|s| match now {
            Some(now) => (
                solve::max_batch(s, cap),
                solve::max_seq(s, cap),
                solve::suggestions_from(s, now, cap),
            ),
            None => (None, None, Vec::new()),
        })
    });
    let fits = move || {
        page.primary.with(|e| {
            e.as_ref()
                .is_some_and(|e| solve::Verdict::of(e, page.capacity.get()).fits())
        })
    };
    let limit = move |key: Key, label: &'static str, v: Option<u32>| {
        let testid = format!("max-{key}");
        match v {
            Some(n) => view! {
                <li>
                    {label}": "
                    <button type="button" class="link" data-testid=testid data-value=n.to_string()
                        title="Apply it"
                        on:click=move |_| page.apply(&[(key, n.to_string())])>
                        {group(n)}
                    </button>
                </li>
            }
            .into_any(),
            None => view! {
                <li data-testid=testid data-value="">{label}": "{none_fits(page, "even at 1")}</li>
            }
            .into_any(),
        }
    };
    view! {
        <section class="panel what-fits" aria-labelledby="fits-h">
            <h2 id="fits-h">{move || if fits() { "Room to grow, and ways to save" } else { "What would fit" }}</h2>
            <ul class="limits">
                {move || {
                    let (b, l, _) = answers.get();
                    view! {
                        {limit(Key::Batch, "Largest batch size that fits (this sequence length)", b)}
                        {limit(Key::Seq, "Longest sequence that fits (this batch size)", l)}
                    }
                }}
            </ul>
            <ol class="suggestions">
                {move || answers.get().2.into_iter().map(|x| view! { <SuggestionItem page=page x=x/> }).collect_view()}
            </ol>
        </section>
    }
}

/// What a search that found nothing says: none fits, or (without an
/// estimate of the run itself) that there is nothing to search from.
pub fn none_fits(page: Page, least: &'static str) -> String {
    if page.primary.with(Option::is_some) {
        format!("none fits, {least}")
    } else {
        "no estimate to search from".to_string()
    }
}

/// One change, its saving, and a button that applies it.
#[component]
pub fn SuggestionItem(page: Page, x: Suggestion) -> impl IntoView {
    let changes = x.changes.clone();
    let apply = move |_| page.apply(&changes);
    view! {
        <li class=if x.fits || x.fits_paging { "fits" } else { "" }>
            <button type="button" data-testid="suggestion" data-saves=x.saves.get().to_string()
                data-peak=x.peak.get().to_string() data-fits=x.fits.to_string()
                data-host=x.host.get().to_string() data-gpus=x.gpus.to_string() on:click=apply>
                {x.label.clone()}
            </button>
            <span class="saves">
                {format!("saves {} → {}", page.show(x.saves), page.show(x.peak))}
                {x.fits.then_some(" · fits")}
                {x.fits_paging.then_some(" · fits by paging")}
            </span>
            <span class="cost" data-testid="suggestion-cost">{format!("Cost: {}.", x.cost)}</span>
        </li>
    }
}

/// Every component at the peak: bytes, share, and the formula with the
/// values substituted; exports.
#[component]
pub fn Breakdown(page: Page) -> impl IntoView {
    let rows = Memo::new(move |_| {
        page.primary.with(|e| {
            e.as_ref()
                .map(|e| page.scenario.with(|s| explain::rows(s, e)))
                .unwrap_or_default()
        })
    });
    let per_param = move || {
        page.primary
            .with(|e| e.as_ref().and_then(explain::bytes_per_param))
    };
    let total = move || {
        page.primary
            .with(|e| e.as_ref().map_or(1, |e| e.peak_total_bytes.get().max(1)))
    };
    let (export_error, set_export_error) = signal(None::<String>);
    let export = move |kind: &'static str| {
        let Some(e) = page.primary.get_untracked() else {
            return;
        };
        let s = page.scenario.get_untracked();
        match kind {
            "csv" => browser::download("vramfit-breakdown.csv", "text/csv", &explain::csv(&s, &e)),
            _ => {
                // Written by the tools worker, which carries the JSON code.
                let query = page.form.with_untracked(|f| f.to_query_string());
                leptos::task::spawn_local(async move {
                    use vramfit_core::tools::{ToolReply, ToolRequest};
                    let failed = match crate::tools::ask(&ToolRequest::Export { query }).await {
                        Ok(ToolReply::Exported { json }) => {
                            browser::download("vramfit-estimate.json", "application/json", &json);
                            None
                        }
                        Ok(ToolReply::NotExported { why }) | Err(why) => Some(why),
                        Ok(_) => Some("the export worker answered another question".to_string()),
                    };
                    set_export_error.set(failed);
                });
            }
        }
    };
    view! {
        <section class="panel breakdown-panel" aria-labelledby="breakdown-h">
            <h2 id="breakdown-h">"What the peak is made of"</h2>
            <div class="table-wrap">
                <table class="breakdown">
                    <thead>
                        <tr>
                            <th scope="col">"Component"</th>
                            <th scope="col" class="num">"Size"</th>
                            <th scope="col" class="num">"Bytes"</th>
                            <th scope="col" class="num">"Share"</th>
                            <th scope="col">"Formula"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || rows.get().into_iter().map(|r| {
                            let share = 100.0 * r.bytes.get() as f64 / total() as f64;
                            view! {
                                <tr data-testid=format!("row-{}", r.component.key()) data-bytes=r.bytes.get().to_string()>
                                    <th scope="row">
                                        <span class="swatch" style=format!("background:{}", colour_hex(r.component))></span>
                                        {r.component.label()}
                                    </th>
                                    <td class="num">{page.show(r.bytes)}</td>
                                    <td class="num bytes">{group(r.bytes.get())}</td>
                                    <td class="num">{format!("{share:.1}%")}</td>
                                    <td class="formula">{r.formula}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="hint" data-testid="bytes-per-param">{per_param}</p>
            <div class="exports">
                <button type="button" data-testid="export-csv" on:click=move |_| export("csv")>"Download CSV"</button>
                <button type="button" data-testid="export-json" on:click=move |_| export("json")>"Download JSON"</button>
            </div>
            {move || export_error.get().map(|why| view! {
                <p class="field-error" data-testid="export-error" aria-live="polite">{format!("No JSON: {why}")}</p>
            })}
        </section>
    }
}

/// Where the peak is: "in the forward of iteration 2", "in the prefill"
/// (an inference run has no iterations to tell apart).
pub fn peak_place(e: &Estimate) -> String {
    if e.peak_phase == vramfit_core::Phase::Serve {
        "while serving".to_string()
    } else if vramfit_chart::is_inference(e.peak_phase) {
        format!("in the {}", e.peak_phase.label())
    } else {
        format!(
            "in the {} of iteration {}",
            e.peak_phase.label(),
            e.peak_iteration
        )
    }
}

/// The estimate's peak as a short line (for chart captions).
pub fn peak_line(page: Page, e: &Estimate) -> String {
    format!("peak {} {}", page.show(e.peak_total_bytes), peak_place(e))
}

/// What the estimate does not model for this run, next to the answer.
#[component]
pub fn Caveats(page: Page) -> impl IntoView {
    let caveats = Memo::new(move |_| {
        page.primary
            .with(|e| e.as_ref().map(|e| e.caveats.clone()).unwrap_or_default())
    });
    move || {
        let c = caveats.get();
        (!c.is_empty()).then(|| {
            view! {
                <div class="caveats" data-testid="caveats">
                    <p><strong>"Not modelled here:"</strong></p>
                    <ul>
                        {c.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}
                    </ul>
                </div>
            }
        })
    }
}
