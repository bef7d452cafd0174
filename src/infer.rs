//! Running a model: the task switch, the inference run's panels (fields
//! shown while the scenario reads them), the engine's own figures, and the
//! answers a click away (the longest context, the most sequences, the most
//! precise weights that fit, changes that save memory).

use crate::form::{field_error, FieldInput};
use crate::results::SuggestionItem;
use crate::{rules, Page};
use leptos::prelude::*;
use vramfit_core::explain::group;
use vramfit_core::infer::engine::WeightsKind;
use vramfit_core::infer::run::Engine;
use vramfit_core::query::{Field, FieldKind, Group, Key};
use vramfit_core::report::{GpuShare, Served};
use vramfit_core::{solve, Bytes, Scenario};

/// Train the model, or run it: the `task` key, as two buttons.
#[component]
pub fn TaskSwitch(page: Page) -> impl IntoView {
    let field = Key::Task.field();
    let options = match field.map(|f| f.kind) {
        Some(FieldKind::Choice(options)) => options,
        _ => &[],
    };
    let label = field.map_or("", |f| f.label);
    let help = field.map_or("", |f| f.help);
    let error = move || field_error(page, Key::Task).map(|(text, _)| text);
    view! {
        <fieldset class="task-switch" data-testid="task-switch" title=help aria-describedby="e-task">
            <legend>{label}</legend>
            <div class="task-options">
                {options
                    .iter()
                    .map(|(value, text)| {
                        let checked = move || page.task.get().key() == *value;
                        view! {
                            <label class="task-option" class:chosen=checked>
                                <input type="radio" name="task" value=*value prop:checked=checked
                                    on:change=move |_| page.apply(&[(Key::Task, value.to_string())])/>
                                <span>{*text}</span>
                            </label>
                        }
                    })
                    .collect_view()}
            </div>
            <p class="field-error" id="e-task" data-testid="error-task" aria-live="polite">{error}</p>
        </fieldset>
    }
}

/// Inference keys rarely changed, folded under "Advanced".
const ADVANCED: [Key; 2] = [Key::MinNew, Key::Attn];

/// The inference run's panel order: the engine, the weights and their
/// options, the lengths and the sequences, the cache. A key not named here
/// (a new one) follows, in `FIELDS` order, so none is left out.
const ORDER: [Key; 12] = [
    Key::Engine,
    Key::Weights,
    Key::GroupSize,
    Key::DoubleQuant,
    Key::BnbCompute,
    Key::Prompt,
    Key::New,
    Key::Batch,
    Key::Ctx,
    Key::KvDtype,
    Key::MinNew,
    Key::Attn,
];

/// Keys with a control of their own elsewhere: the GGUF file picker's.
const PICKED: [Key; 2] = [Key::File, Key::FileBytes];

/// The inference run's fields (all but the engines' own arguments), in
/// [`ORDER`].
fn run_fields() -> Vec<&'static Field> {
    let mut fields: Vec<&'static Field> = rules::infer_keys()
        .filter(|f| !rules::engine_group(f.group) && !PICKED.contains(&f.key))
        .collect();
    vramfit_core::sort::by_key(&mut fields, |f| {
        ORDER
            .iter()
            .position(|k| *k == f.key)
            .unwrap_or(ORDER.len())
    });
    fields
}

/// A field while the scenario reads it (or the form holds it, with the
/// notice that says it is not used); nothing otherwise. Its control is
/// made again only when that flips, so typing keeps the focus.
#[component]
fn Shown(page: Page, field: &'static Field) -> impl IntoView {
    let shown = Memo::new(move |_| page.shows(field.key));
    move || {
        shown
            .get()
            .then(|| view! { <FieldInput field=field page=page/> })
    }
}

/// What is run: the engine, the weights, the prompt and new tokens
/// (transformers) or the context and the cache's dtype (vLLM), the
/// sequences.
#[component]
pub fn InferPanel(page: Page) -> impl IntoView {
    let (advanced, main): (Vec<&'static Field>, Vec<&'static Field>) = run_fields()
        .into_iter()
        .partition(|f| ADVANCED.contains(&f.key));
    let keys: Vec<Key> = advanced.iter().map(|f| f.key).collect();
    let any_advanced = Memo::new(move |_| keys.iter().any(|k| page.shows(*k)));
    view! {
        <details class="panel" open=true data-testid="infer-panel">
            <summary><h2>"Inference run"</h2></summary>
            <div class="fields">
                {main.into_iter().map(|f| view! { <Shown field=f page=page/> }).collect_view()}
                <details class="advanced" class:hidden=move || !any_advanced.get()>
                    <summary>"Advanced"</summary>
                    {advanced.into_iter().map(|f| view! { <Shown field=f page=page/> }).collect_view()}
                </details>
            </div>
        </details>
    }
}

/// The title of an engine's own arguments.
fn engine_title(group: Group) -> &'static str {
    group
        .engine()
        .map_or("Engine arguments", |e| e.spec().words.panel)
}

/// One engine's own arguments (vLLM's, llama-server's, Ollama's,
/// mlx-lm's), shown while that engine runs (or while the form holds one
/// that is not used).
#[component]
fn EngineGroupPanel(page: Page, group: Group) -> impl IntoView {
    let fields: Vec<&'static Field> = rules::infer_keys().filter(|f| f.group == group).collect();
    let keys: Vec<Key> = fields.iter().map(|f| f.key).collect();
    let shown = Memo::new(move |_| keys.iter().any(|k| page.shows(*k)));
    move || {
        let fields = fields.clone();
        shown.get().then(|| {
            view! {
                <details class="panel" open=true data-testid="engine-panel" data-group=engine_title(group)>
                    <summary><h2>{engine_title(group)}</h2></summary>
                    <div class="fields">
                        {fields.into_iter().map(|f| view! { <Shown field=f page=page/> }).collect_view()}
                    </div>
                </details>
            }
        })
    }
}

/// Every engine's own arguments, each panel shown with its engine.
#[component]
pub fn EnginePanel(page: Page) -> impl IntoView {
    let mut groups: Vec<Group> = Vec::new();
    for f in rules::infer_keys().filter(|f| rules::engine_group(f.group)) {
        if !groups.contains(&f.group) {
            groups.push(f.group);
        }
    }
    groups
        .into_iter()
        .map(|g| view! { <EngineGroupPanel page=page group=g/> })
        .collect_view()
}

/// One figure of the engine's, in bytes.
fn figure(page: Page, testid: &'static str, label: &'static str, b: Bytes) -> impl IntoView {
    view! {
        <tr data-testid=testid data-bytes=b.get().to_string()>
            <th scope="row">{label}</th>
            <td class="num">{page.show(b)}</td>
            <td class="num bytes">{group(b.get())}</td>
        </tr>
    }
}

/// What the cache figure is, engine by engine.
fn cache_label(engine: Engine) -> &'static str {
    engine.spec().words.kv_cache
}

/// What the weights figure is, engine by engine.
fn weights_label(engine: Engine) -> &'static str {
    engine.spec().words.weights
}

/// The engine's own figures: the weights and the key/value cache; for
/// vLLM its profiling run, graphs, request and pool as its log prints
/// them; for llama.cpp and Ollama the layers on the GPU, the context,
/// what `--fit` did, and the GPU's and the host's shares side by side.
#[component]
pub fn EngineFigures(page: Page) -> impl IntoView {
    let served = Memo::new(move |_| {
        page.primary
            .with(|e| e.as_ref().and_then(|e| e.served.clone()))
    });
    move || served.get().map(|v| served_view(page, &v))
}

fn served_view(page: Page, v: &Served) -> impl IntoView {
    let engine = page.scenario.with(|s| s.infer.engine);
    let optional = [
        (
            "served-activations",
            "Activation peak (profiling run)",
            v.activation_peak_bytes,
        ),
        (
            "served-non-torch",
            "Memory outside PyTorch",
            v.non_torch_bytes,
        ),
        ("served-cudagraphs", "CUDA graphs", v.cudagraph_bytes),
        (
            "served-requested",
            "Requested (gpu_memory_utilization × the GPU)",
            v.requested_bytes,
        ),
        (
            "served-lora",
            "LoRA adapter (--lora: every device; not counted by --fit)",
            v.lora_bytes,
        ),
    ];
    let pool = match (v.kv_blocks, v.kv_tokens) {
        (Some(blocks), Some(tokens)) => Some(format!(
            "{} blocks of key/value cache: {} tokens.",
            group(blocks),
            group(tokens)
        )),
        _ => None,
    };
    let concurrency = match (v.max_concurrency, v.max_model_len) {
        (Some(c), Some(len)) => Some(format!(
            "Maximum concurrency for {} tokens per request: {}.{:02}×.",
            group(len),
            c.0 / 100,
            c.0 % 100
        )),
        _ => None,
    };
    view! {
        <section class="panel engine-figures" aria-labelledby="engine-h" data-testid="engine-figures"
            data-engine=v.engine.clone()>
            <h2 id="engine-h">{format!("What the engine holds: {}", v.engine)}</h2>
            {(v.n_gpu_layers.is_some() || v.n_ctx.is_some()).then(|| layer_split(page, v))}
            <div class="table-wrap">
                <table class="breakdown figures">
                    <tbody>
                        {figure(page, "served-weights", weights_label(engine), v.weights_bytes)}
                        {figure(page, "served-kv", cache_label(engine), v.kv_cache_bytes)}
                        {optional
                            .into_iter()
                            .filter_map(|(id, label, b)| b.map(|b| figure(page, id, label, b)))
                            .collect_view()}
                    </tbody>
                </table>
            </div>
            {pool.map(|p| view! { <p class="hint" data-testid="served-pool">{p}</p> })}
            {concurrency.map(|c| view! { <p class="hint" data-testid="served-concurrency">{c}</p> })}
            {v.gpu_shown.clone().map(|g| view! {
                <p class="hint" data-testid="served-gpu">{format!("Per GPU: {g}.")}</p>
            })}
        </section>
    }
}

/// llama.cpp's placement: the layers on the GPU of all of them, the
/// context, what `--fit` did; the GPU's figure and the host's beside it,
/// with the terms that make the host's.
fn layer_split(page: Page, v: &Served) -> impl IntoView {
    // `-ngl` counts the output layer: `n_layer + 1` is all of them.
    let total = page
        .scenario
        .with(|s| s.arch.map(|a| a.layers.saturating_add(1)));
    let (gpu, host, host_terms) = page.primary.with(|e| match e {
        Some(e) => (
            e.peak_total_bytes,
            e.host_bytes,
            e.host_terms
                .iter()
                .map(|id| {
                    let b = Bytes(e.terms.bytes(id).try_into().unwrap_or(u64::MAX));
                    (b, id.label())
                })
                .filter(|(b, _)| b.get() > 0)
                .collect::<Vec<_>>(),
        ),
        None => (Bytes::ZERO, Bytes::ZERO, Vec::new()),
    });
    let apple = page.scenario.with(|s| s.view.capacity.is_apple());
    let layers = v.n_gpu_layers.map(|n| match total {
        Some(t) => format!("{n} of {t}"),
        None => n.to_string(),
    });
    view! {
        <dl class="layer-split" data-testid="layer-split">
            {layers.map(|l| view! {
                <div>
                    <dt>"Layers on the GPU (-ngl, the output layer counted)"</dt>
                    <dd data-testid="served-ngl" data-value=v.n_gpu_layers.map(|n| n.to_string())
                        data-total=total.map(|t| t.to_string())>{l}</dd>
                </div>
            })}
            {v.n_ctx.map(|n| view! {
                <div>
                    <dt>"Context (n_ctx)"</dt>
                    <dd data-testid="served-nctx" data-value=n.to_string()>{format!("{} tokens", group(n))}</dd>
                </div>
            })}
            {v.fit.map(|f| view! {
                <div>
                    <dt>"--fit"</dt>
                    <dd data-testid="served-fit">{f}</dd>
                </div>
            })}
        </dl>
        {v.ollama_ps.map(|ps| view! {
            <p class="hint" data-testid="served-ollama-ps-line">
                "What "<code>"ollama ps"</code>" reports: "
                <span data-testid="served-ollama-ps" data-size=ps.size.get().to_string()
                    data-size-vram=ps.size_vram.get().to_string()>
                    {format!(
                        "SIZE {} · PROCESSOR {} · CONTEXT {}",
                        ps.size_text(),
                        ps.processor(),
                        ps.context
                    )}
                </span>
                {(ps.kv_unlisted.get() > 0).then(|| format!(
                    ". It leaves out {} of key/value cache: Ollama keeps one KV buffer line a device from llama-server's log, and this model prints two (the full-attention cache's, then the sliding-window cache's).",
                    page.show(ps.kv_unlisted)
                ))}
                {(ps.lora_unlisted.get() > 0).then(|| format!(
                    " It leaves out the LoRA adapter's {}: llama-server prints it in a line Ollama does not sum.",
                    page.show(ps.lora_unlisted)
                ))}
            </p>
        })}
        <div class="split">
            {v.gpus.is_empty().then(|| view! {
                <div class="split-cell" data-testid="split-gpu" data-bytes=gpu.get().to_string()>
                    <span class="split-what">{if apple { "GPU (working set)" } else { "GPU" }}</span>
                    <strong>{page.show(gpu)}</strong>
                    <span class="bytes">{format!("{} B", group(gpu.get()))}</span>
                </div>
            })}
            {v.gpus.iter().map(|g| view! {
                <div class="split-cell" data-testid="split-gpu" data-gpu=g.gpu.to_string()
                    data-bytes=g.total_bytes.get().to_string()>
                    <span class="split-what">{gpu_what(g)}</span>
                    <strong>{page.show(g.total_bytes)}</strong>
                    <span class="bytes">{format!(
                        "weights {} · cache {} · compute {}{}",
                        page.show(g.weights_bytes),
                        page.show(g.kv_cache_bytes),
                        page.show(g.compute_bytes),
                        if g.lora_bytes.get() > 0 {
                            format!(" · LoRA {}", page.show(g.lora_bytes))
                        } else {
                            String::new()
                        }
                    )}</span>
                </div>
            }).collect_view()}
            <div class="split-cell host" data-testid="split-host" data-bytes=host.get().to_string()>
                <span class="split-what">"Host memory (RAM)"</span>
                <strong>{page.show(host)}</strong>
                <span class="bytes">{format!("{} B", group(host.get()))}</span>
            </div>
        </div>
        <ul class="host-terms" data-testid="host-terms">
            {host_terms
                .into_iter()
                .map(|(b, label)| view! {
                    <li data-bytes=b.get().to_string()>
                        {format!("{label}: {} ({} B)", page.show(b), group(b.get()))}
                    </li>
                })
                .collect_view()}
        </ul>
    }
}

/// One GPU of several: its index and the layers it holds.
fn gpu_what(g: &GpuShare) -> String {
    let output = if g.output_layer {
        " and the output"
    } else {
        ""
    };
    let layers = if g.layers == 1 { "layer" } else { "layers" };
    format!("GPU {} · {} {layers}{output}", g.gpu, g.layers)
}

/// The solver's answers for an inference run.
#[derive(Clone, Debug, PartialEq)]
struct Answers {
    /// The longest prompt (transformers) or context (vLLM) that fits.
    context: Option<(Key, u32)>,
    /// The longest context keeps every layer on the GPU (llama.cpp's
    /// `--fit` or Ollama's scheduler would move layers for a longer one).
    context_whole: bool,
    /// transformers: the most sequences at once.
    batch: Option<Option<u32>>,
    /// The most precise weights that fit (`None`: none does); the local
    /// runners' fit whole on the GPU.
    weights: Option<WeightsAnswer>,
    /// Whether the engine reads GGUF files or MLX's conversions.
    local: bool,
    suggestions: Vec<solve::Suggestion>,
}

/// The most precise weights that fit, as the page offers them: the
/// weights' key and label, the keys that apply the answer, and whether the
/// run has it already.
#[derive(Clone, Debug, PartialEq)]
struct WeightsAnswer {
    key: &'static str,
    label: &'static str,
    changes: Vec<(Key, String)>,
    these: bool,
}

impl WeightsAnswer {
    fn of<T>(s: &Scenario, a: solve::Answer<T>, key: &'static str, label: &'static str) -> Self {
        WeightsAnswer {
            key,
            label,
            these: a.in_effect(s),
            changes: a.changes,
        }
    }
}

/// The most precise weights that fit, of the kind the engine reads.
fn weights_answer(s: &Scenario, a: Option<solve::Answer<&'static str>>) -> Option<WeightsAnswer> {
    let kind = s.infer.engine.spec().weights;
    a.map(|a| {
        let key = a.value;
        // A checkpoint's format by its name; a file type or a conversion
        // as it is typed.
        let label = match kind {
            WeightsKind::Checkpoint => kind
                .options()
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(key, |(_, l)| *l),
            WeightsKind::Gguf | WeightsKind::Mlx => key,
        };
        WeightsAnswer::of(s, a, key, label)
    })
}

/// The solver's answers for this run, computed once per change.
fn answers(page: Page) -> Memo<Answers> {
    Memo::new(move |_| {
        let cap = page.capacity.get();
        let core = page.infer_answers.get();
        // The run's own peak, from the estimate the page shows (estimating
        // it again would run llama.cpp's `--fit` search a second time).
        let now = page.primary.with(|e| e.as_ref().map(|e| e.needed()));
        page.scenario.with(|s| {
            let (context, context_whole, batch, weights) = core
                .map_or((None, false, None, None), |a| {
                    (a.context, a.context_whole, a.batch, a.weights)
                });
            Answers {
                context,
                context_whole,
                batch,
                weights: weights_answer(s, weights),
                local: !s.infer.engine.spec().caching_allocator,
                suggestions: now.map_or_else(Vec::new, |now| solve::suggestions_from(s, now, cap)),
            }
        })
    })
}

/// One answer's button: `text`, applied with a click (`key`, when given,
/// names the key it sets; `value`, the value).
fn answer_button(
    page: Page,
    testid: &'static str,
    key: Option<String>,
    value: String,
    changes: Vec<(Key, String)>,
    text: String,
) -> impl IntoView {
    view! {
        <button type="button" class="link" data-testid=testid data-key=key
            data-value=value title="Apply it" on:click=move |_| page.apply(&changes)>
            {text}
        </button>
    }
}

/// The longest prompt (or context) that fits.
fn context_answer(page: Page, answers: Memo<Answers>) -> impl IntoView {
    move || {
        let (engine, new) = page.scenario.with(|s| (s.infer.engine, s.infer.new.get()));
        let label = match engine.spec().words.context_arg {
            None => format!("Longest prompt that fits (with {} new tokens)", group(new)),
            Some(arg) if answers.with(|a| a.context_whole) => {
                format!("Longest context ({arg}) with every layer on the GPU")
            }
            Some(arg) => format!("Longest context ({arg}) that fits"),
        };
        let testid = "max-context";
        match answers.with(|a| a.context) {
            Some((key, n)) => {
                let (value, text) = (n.to_string(), format!("{} tokens", group(n)));
                let changes = vec![(key, value.clone())];
                let button = answer_button(
                    page,
                    testid,
                    Some(key.text().to_string()),
                    value,
                    changes,
                    text,
                );
                view! { <li>{label}": "{button}</li> }.into_any()
            }
            None => view! {
                <li data-testid=testid data-value="">{label}": "{crate::results::none_fits(page, "even at 1 token")}</li>
            }
            .into_any(),
        }
    }
}

/// The most sequences at once that fit, where the engine reads `batch`.
fn batch_answer(page: Page, answers: Memo<Answers>) -> impl IntoView {
    move || {
        answers.with(|a| a.batch).map(|b| match b {
            Some(n) => {
                let changes = vec![(Key::Batch, n.to_string())];
                let button = answer_button(page, "max-batch", None, n.to_string(), changes, group(n));
                view! { <li>"Most sequences at once that fit (this prompt): "{button}</li> }.into_any()
            }
            None => view! {
                <li data-testid="max-batch" data-value="">"Most sequences at once that fit: none, even 1"</li>
            }
            .into_any(),
        })
    }
}

/// The most precise weights that fit, of the kind the engine reads.
fn weights_line(page: Page, answers: Memo<Answers>) -> impl IntoView {
    move || {
        let (text, none) = if answers.with(|a| a.local) {
            (
                "Most precise weights that fit whole on the GPU: ",
                "none of the common types",
            )
        } else {
            (
                "Most precise weights that fit: ",
                "none of the formats, other settings as they are",
            )
        };
        // A refused run has nothing to search from, which is not "none".
        let none = if page.primary.with(Option::is_some) {
            none.to_string()
        } else {
            crate::results::none_fits(page, none)
        };
        match answers.with(|a| a.weights.clone()) {
            Some(w) if w.these => view! {
                <li data-testid="weights-that-fit" data-value=w.key>{format!("{text}{} (these)", w.label)}</li>
            }
            .into_any(),
            Some(w) => {
                let (value, label) = (w.key.to_string(), w.label.to_string());
                let button = answer_button(page, "weights-that-fit", None, value, w.changes, label);
                view! { <li>{text}{button}</li> }.into_any()
            }
            None => view! {
                <li data-testid="weights-that-fit" data-value="">{format!("{text}{none}")}</li>
            }
            .into_any(),
        }
    }
}

/// Changes that save memory, ranked by saving.
fn suggestions_list(page: Page, answers: Memo<Answers>) -> impl IntoView {
    view! {
        <ol class="suggestions">
            {move || answers.get().suggestions.into_iter().map(|x| view! { <SuggestionItem page=page x=x/> }).collect_view()}
        </ol>
    }
}

/// The longest context, the most sequences and the most precise weights
/// that fit, and changes ranked by saving; each applies with a click.
#[component]
pub fn InferFits(page: Page) -> impl IntoView {
    let answers = answers(page);
    let fits = move || {
        page.primary.with(|e| {
            e.as_ref()
                .is_some_and(|e| solve::Verdict::of(e, page.capacity.get()).fits())
        })
    };
    view! {
        <section class="panel what-fits" aria-labelledby="fits-h" data-testid="infer-fits">
            <h2 id="fits-h">{move || if fits() { "Room to grow, and ways to save" } else { "What would fit" }}</h2>
            <ul class="limits">
                {context_answer(page, answers)}
                {batch_answer(page, answers)}
                {weights_line(page, answers)}
            </ul>
            {suggestions_list(page, answers)}
        </section>
    }
}
