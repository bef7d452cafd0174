//! The inputs: one control per query key (its `name` is the key), each with
//! its label, tooltip and, when a value is refused, the reason beside it.

use crate::{browser, keys_of, Page};
use leptos::prelude::*;
use vramfit_core::explain::group;
use vramfit_core::gpus::{by_kind, GpuKind};
use vramfit_core::model::hf_config;
use vramfit_core::model::presets::{Preset, PRESETS};
use vramfit_core::model::Family;
use vramfit_core::query::{Field, FieldKind, Group, Key};
use vramfit_core::scenario::ModelSpec;
use vramfit_core::tools::{ImportOutcome, ToolRequest};
use vramfit_core::{DisplayUnit, Notice};

/// Rarely changed run settings, folded under "Advanced".
const ADVANCED: [Key; 5] = [
    Key::KeepOutputs,
    Key::Dropout,
    Key::CudaLike,
    Key::UseCache,
    Key::BackwardPrefetch,
];

/// The reason a field's value was refused or is not used, with what the
/// page does instead; `true` for a refusal (the field is marked invalid).
pub(crate) fn field_error(page: Page, key: Key) -> Option<(String, bool)> {
    page.decoded.with(|d| {
        d.notices.iter().find_map(|n| match n {
            Notice::Invalid { key: k, .. } if *k == key => {
                Some((format!("{n}; {}", n.consequence()), true))
            }
            Notice::ParamsIgnored { .. } if key == Key::Params => {
                Some((format!("{n}; {}", n.consequence()), true))
            }
            Notice::Unused { key: k, .. } if *k == key => {
                Some((format!("{n}; {}", n.consequence()), false))
            }
            _ => None,
        })
    })
}

/// What the numbers rest on for this key (true, nothing refused), one
/// sentence per note; empty when there is none.
fn field_note(page: Page, key: Key) -> String {
    // `like_llama`, `hub` and `multimodal` have no control of their own:
    // the model's.
    let mine = |k: Key| {
        k == key || (key == Key::Model && matches!(k, Key::LikeLlama | Key::Hub | Key::Multimodal))
    };
    page.decoded.with(|d| {
        d.notes
            .iter()
            .filter(|n| mine(n.key()))
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The families in the order the model picker lists them: dense models by
/// maker, then mixtures of experts. A family not named here (a new one)
/// follows, in `Family::ALL` order, so no preset is ever left out.
const FAMILY_ORDER: [Family; 39] = [
    Family::Llama,
    Family::SmolLm3,
    Family::Qwen2,
    Family::Qwen3,
    Family::Qwen35Text,
    Family::Mistral,
    Family::Ministral3,
    Family::Gemma,
    Family::Gemma2,
    Family::Gemma3Text,
    Family::Gemma3nText,
    Family::Gemma4Text,
    Family::Gemma4UnifiedText,
    Family::Phi3,
    Family::Olmo2,
    Family::Olmo3,
    Family::Lfm2,
    Family::GraniteMoeHybrid,
    Family::NemotronH,
    Family::Gpt2,
    Family::GptBigcode,
    Family::GptNeox,
    Family::Mixtral,
    Family::Qwen2Moe,
    Family::Qwen3Moe,
    Family::Qwen35MoeText,
    Family::Qwen3Next,
    Family::Lfm2Moe,
    Family::KimiLinear,
    Family::Llama4Text,
    Family::DeepseekV2,
    Family::DeepseekV3,
    Family::Glm4Moe,
    Family::Glm4MoeLite,
    Family::DeepseekV32,
    Family::GlmMoeDsa,
    Family::Mistral4,
    Family::MinimaxM2,
    Family::GptOss,
];

/// The presets grouped by family, in [`FAMILY_ORDER`]; empty families
/// are left out.
fn preset_groups() -> Vec<(Family, Vec<&'static Preset>)> {
    let rest = Family::ALL.iter().filter(|f| !FAMILY_ORDER.contains(f));
    FAMILY_ORDER
        .iter()
        .chain(rest)
        .map(|f| {
            (
                *f,
                PRESETS
                    .iter()
                    .filter(|p| p.arch.family == *f)
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, ps)| !ps.is_empty())
        .collect()
}

/// `s` as HTML text (for the preset lists, built as markup once).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The preset `<option>`s, in family order; with `headings`, under an
/// `<optgroup>` per family. Markup built once: some 60 options as views would
/// cost kilobytes of code for a list that never changes.
fn preset_options(headings: bool) -> String {
    let mut html = String::new();
    for (family, presets) in preset_groups() {
        if headings {
            html.push_str(&format!("<optgroup label=\"{}\">", escape(family.label())));
        }
        for p in presets {
            html.push_str(&format!(
                "<option value=\"{}\">{}</option>",
                escape(p.id),
                escape(p.name)
            ));
        }
        if headings {
            html.push_str("</optgroup>");
        }
    }
    html
}

/// What a field's control reads and writes: its key's value as typed (or
/// as the scenario shows it), and whether that value was refused.
#[derive(Clone, Copy)]
struct Control {
    page: Page,
    field: &'static Field,
    problem: Memo<Option<(String, bool)>>,
}

// Each returns one closure type, whatever the field's kind: the controls'
// attributes are then compiled once, not once per kind.
impl Control {
    fn value(self) -> impl Fn() -> String + Copy + Send + Sync + 'static {
        let (page, field) = (self.page, self.field);
        move || {
            page.form
                .with(|f| f.get(field.key).map(str::to_string))
                .unwrap_or_else(|| page.scenario.with(|s| field.shown_value(s)))
        }
    }

    fn set(self, v: String) {
        self.page.apply(&[(self.field.key, v)]);
    }

    /// Sets what was typed or chosen.
    fn on_value(self) -> impl Fn(web_sys::Event) + Copy + 'static {
        move |ev| self.set(event_target_value(&ev))
    }

    /// `aria-invalid`: whether the value was refused.
    fn invalid(self) -> impl Fn() -> String + Copy + Send + Sync + 'static {
        let problem = self.problem;
        move || problem.with(|p| matches!(p, Some((_, true)))).to_string()
    }

    /// A value the scenario does not read.
    fn unused(self) -> impl Fn() -> bool + Copy + Send + Sync + 'static {
        let problem = self.problem;
        move || problem.with(|p| matches!(p, Some((_, false))))
    }

    fn id(self) -> String {
        format!("f-{}", self.field.key)
    }

    /// `aria-describedby`: the error line and the note line.
    fn described_by(self) -> String {
        let key = self.field.key;
        format!("e-{key} n-{key}")
    }
}

/// The model control: a search box over every preset (a datalist, in
/// family order) and a list to browse them under a heading per family.
fn model_control(c: Control) -> AnyView {
    let page = c.page;
    // The preset the model starts from; none for a parameter count alone.
    let chosen = move || page.scenario.with(|s| s.preset().map_or("", |p| p.id));
    let browse = format!(
        "<option value=\"\" disabled>Choose a preset…</option>{}",
        preset_options(true)
    );
    // The options go in before the value is set, so it can select one.
    view! {
        <input id=c.id() name=c.field.key.text() type="search" list="presets" autocomplete="off"
            placeholder="search: llama 8b, qwen, gpt2…" title=c.field.help
            aria-invalid=c.invalid() aria-describedby=c.described_by()
            prop:value=c.value() on:change=c.on_value()/>
        <datalist id="presets" inner_html=preset_options(false)></datalist>
        <label for="model-browse" class="browse-label">"or browse the presets by family"</label>
        <select id="model-browse" data-testid="model-browse" inner_html=browse prop:value=chosen
            on:change=c.on_value()>
        </select>
    }
    .into_any()
}

/// A typed number or text.
fn text_control(c: Control) -> AnyView {
    let mode = if c.field.kind == FieldKind::Text {
        "text"
    } else {
        "decimal"
    };
    view! {
        <input id=c.id() name=c.field.key.text() type="text" inputmode=mode
            autocomplete="off" spellcheck="false" title=c.field.help
            aria-invalid=c.invalid() aria-describedby=c.described_by()
            prop:value=c.value() on:input=c.on_value()/>
    }
    .into_any()
}

/// A checkbox, `true` or `false`.
fn toggle_control(c: Control) -> AnyView {
    view! {
        <input id=c.id() name=c.field.key.text() type="checkbox" title=c.field.help
            aria-invalid=c.invalid() aria-describedby=c.described_by()
            prop:checked=move || c.value()() == "true"
            on:change=move |ev| c.set(event_target_checked(&ev).to_string())/>
    }
    .into_any()
}

/// The weights' options are the engine's: checkpoint formats, GGUF file
/// types or MLX's. The list is made again when the engine changes, each
/// option selected as it is built.
fn weights_control(c: Control) -> AnyView {
    let page = c.page;
    let options = Memo::new(move |_| {
        page.scenario
            .with(|s| s.infer.engine.spec().weights.options())
    });
    (move || {
        let now = c.value()();
        view! {
            <select id=c.id() name=c.field.key.text() title=c.field.help
                aria-invalid=c.invalid() aria-describedby=c.described_by()
                prop:value=c.value() on:change=c.on_value()>
                {options
                    .get()
                    .iter()
                    .map(|(v, label)| view! { <option value=*v selected=now == *v>{*label}</option> })
                    .collect_view()}
            </select>
        }
    })
    .into_any()
}

/// A fixed list of options.
fn choice_control(c: Control, options: &'static [(&'static str, &'static str)]) -> AnyView {
    view! {
        <select id=c.id() name=c.field.key.text() title=c.field.help
            aria-invalid=c.invalid() aria-describedby=c.described_by()
            prop:value=c.value() on:change=c.on_value()>
            {options
                .iter()
                .map(|(v, label)| view! { <option value=*v>{*label}</option> })
                .collect_view()}
        </select>
    }
    .into_any()
}

/// The GPUs by kind, then a typed size or the probe's measurement.
fn gpu_control(c: Control) -> AnyView {
    view! {
        <select id=c.id() name=c.field.key.text() title=c.field.help
            aria-invalid=c.invalid() aria-describedby=c.described_by()
            prop:value=c.value() on:change=c.on_value()>
            {GpuKind::ALL
                .iter()
                .map(|k| view! {
                    <optgroup label=k.label()>
                        {by_kind(*k)
                            .map(|g| view! { <option value=g.id>{g.name}</option> })
                            .collect_view()}
                    </optgroup>
                })
                .collect_view()}
            <optgroup label="other">
                <option value="custom">"Type its memory…"</option>
                <option value="probe">"Measured in this browser (probe)"</option>
            </optgroup>
        </select>
    }
    .into_any()
}

/// A field's control, by its kind.
fn field_control(c: Control) -> AnyView {
    match c.field.kind {
        FieldKind::Count { .. } | FieldKind::Decimal { .. } | FieldKind::Text => text_control(c),
        FieldKind::Toggle => toggle_control(c),
        FieldKind::Choice(_) if c.field.key == Key::Weights => weights_control(c),
        FieldKind::Choice(options) => choice_control(c, options),
        FieldKind::Model => model_control(c),
        FieldKind::Gpu => gpu_control(c),
    }
}

/// Why the value was refused or is not used; for a key the scenario does
/// not read, a button removes it.
fn error_line(c: Control) -> impl IntoView {
    let (page, key) = (c.page, c.field.key);
    let error = move || c.problem.get().map(|(text, _)| text);
    let remove = move |_| page.form.update(|f| f.remove(key));
    view! {
        <p class="field-error" id=format!("e-{key}") data-testid=format!("error-{key}") aria-live="polite">
            {error}
            {move || c.unused()().then(|| view! {
                " "
                <button type="button" class="link" data-testid=format!("remove-{key}") on:click=remove>
                    "Remove it"
                </button>
            })}
        </p>
    }
}

/// What the numbers rest on for this key.
fn note_line(page: Page, key: Key) -> impl IntoView {
    view! {
        <p class="field-note" id=format!("n-{key}") data-testid=format!("note-{key}")>
            {move || field_note(page, key)}
        </p>
    }
}

/// One labelled control whose `name` is its query key.
#[component]
pub fn FieldInput(field: &'static Field, page: Page) -> impl IntoView {
    let problem = Memo::new(move |_| field_error(page, field.key));
    let c = Control {
        page,
        field,
        problem,
    };
    let class = if field.kind == FieldKind::Toggle {
        "field toggle"
    } else {
        "field"
    };
    view! {
        <div class=class class:unused=c.unused()>
            <label for=c.id()>{field.label}</label>
            {field_control(c)}
            {error_line(c)}
            {note_line(page, field.key)}
        </div>
    }
}

/// GiB / GB in the header.
#[component]
pub fn UnitToggle(page: Page) -> impl IntoView {
    let value = move || match page.unit.get() {
        DisplayUnit::Gib => "gib",
        DisplayUnit::Gb => "gb",
    };
    view! {
        <label class="unit-toggle">
            "Units "
            <select name="unit" title="GiB (2^30 bytes) as nvidia-smi and PyTorch count, or GB (10^9) as GPU boxes are labelled"
                prop:value=value
                on:change=move |ev| page.apply(&[(Key::Unit, event_target_value(&ev))])>
                <option value="gib">"GiB"</option>
                <option value="gb">"GB"</option>
            </select>
        </label>
    }
}

/// A titled group of fields (a collapsible panel).
#[component]
pub fn GroupPanel(page: Page, group: Group, title: &'static str, open: bool) -> impl IntoView {
    let (main, advanced): (Vec<&'static Field>, Vec<&'static Field>) =
        keys_of(group).partition(|f| !ADVANCED.contains(&f.key));
    view! {
        <details class="panel" open=open>
            <summary><h2>{title}</h2></summary>
            <div class="fields">
                {main.into_iter().map(|f| view! { <FieldInput field=f page=page/> }).collect_view()}
                {(!advanced.is_empty()).then(|| view! {
                    <details class="advanced">
                        <summary>"Advanced"</summary>
                        {advanced.into_iter().map(|f| view! { <FieldInput field=f page=page/> }).collect_view()}
                    </details>
                })}
            </div>
        </details>
    }
}

/// The model: a searchable preset, a parameter count alone, a pasted
/// config.json, or typed architecture numbers; and the exact count.
#[component]
pub fn ModelPanel(page: Page) -> impl IntoView {
    let model = Key::Model.field();
    let params = Key::Params.field();
    let count = move || page.scenario.with(|s| s.params());
    // A mixture of experts: the parameters one token goes through.
    let active = move || {
        page.scenario
            .with(|s| s.arch.filter(|a| a.experts > 0).map(|a| a.active_params()))
    };
    // " parameters (M active per token) · what it is"
    let line = move || {
        // A narrow no-break space: the figure never breaks across lines.
        let active = active().map(|n| {
            let n = group(n).replace('\u{2009}', "\u{202F}");
            format!(" ({n} active per token)")
        });
        let what = page.decoded.with(describe_model);
        format!(" parameters{} · {what}", active.unwrap_or_default())
    };
    view! {
        <details class="panel" open=true>
            <summary><h2>"Model"</h2></summary>
            <div class="fields">
                {model.map(|f| view! { <FieldInput field=f page=page/> })}
                <p class="param-count" data-testid="param-count" data-count=move || count().to_string()
                    data-active=move || active().map(|n| n.to_string()).unwrap_or_default()>
                    <strong>{move || group(count())}</strong>{line}
                </p>
                // N alone is for the seed formula: shown without a model (a
                // Hub model still loading is one), or when a link gives both
                // (to explain why it is ignored).
                {move || page.form.with(|f| {
                    let no_model = f.get(Key::Model).is_none() && f.get(Key::Hub).is_none();
                    no_model || f.get(Key::Params).is_some()
                }).then(|| {
                    params.map(|f| view! { <FieldInput field=f page=page/> })
                })}
                <ConfigImport page=page/>
                <details class="advanced">
                    <summary>"Architecture"</summary>
                    {keys_of(Group::Architecture)
                        .map(|f| view! { <FieldInput field=f page=page/> })
                        .collect_view()}
                </details>
            </div>
        </details>
    }
}

/// What the model is, for the parameter-count line: the preset (or the
/// preset it was changed from), the Hub model it was loaded from, or a
/// parameter count alone.
fn describe_model(d: &vramfit_core::Decoded) -> String {
    let s = &d.scenario;
    let hub = match s.model {
        ModelSpec::Preset { hub, .. } => hub,
        ModelSpec::ParamsOnly { .. } => None,
    };
    let waiting = d
        .notices
        .iter()
        .any(|n| matches!(n, Notice::HubNotLoaded { .. }));
    match (s.preset(), s.arch, hub) {
        (Some(p), Some(_), Some(h)) if waiting => {
            format!(
                "{} until the config.json of {} is loaded",
                p.name,
                h.as_str()
            )
        }
        (Some(p), Some(a), Some(h)) if a == p.arch => {
            format!("{} from the Hub (the {} preset)", h.as_str(), p.name)
        }
        (_, Some(_), Some(h)) => format!("{} from the Hub", h.as_str()),
        (Some(p), Some(a), None) if a == p.arch => p.name.to_string(),
        (Some(p), Some(_), None) => format!("{} (modified)", p.name),
        _ => "a parameter count alone: only the seed formula can use it".to_string(),
    }
}

/// What an import said: done, or why not (and whether reading it as
/// Llama-like is a choice to offer).
#[derive(Clone, Debug, PartialEq)]
pub enum ImportMessage {
    Done(String),
    Failed { why: String, offer_llama: bool },
}

/// Reads `text` (in the tools worker) and says how it went: as it says,
/// a paste (`ToolRequest::Paste`: a config.json, or a command, a training
/// config, a log, an out-of-memory message over the form); as Llama-like,
/// a config.json.
pub async fn import_text(page: Page, text: String, reading: hf_config::Reading) -> ImportMessage {
    let (request, pasted) = match reading {
        hf_config::Reading::AsItSays => {
            let query = page.form.with_untracked(|f| f.to_query_string());
            (ToolRequest::Paste { text, query }, true)
        }
        hf_config::Reading::AsLlama => (ToolRequest::Import { text, reading }, false),
    };
    show_import(page, crate::tools::ask(&request).await, pasted)
}

/// Applies a worker's import (or paste) reply and says how it went.
/// A paste's keys are applied as typed ones (`Page::apply`: the form's
/// rules set aside what a new task or engine does not read).
fn show_import(
    page: Page,
    reply: Result<vramfit_core::tools::ToolReply, String>,
    pasted: bool,
) -> ImportMessage {
    match ImportOutcome::of(reply) {
        ImportOutcome::Imported { summary, changes } => {
            if pasted {
                let keys: Vec<(Key, String)> = changes
                    .iter()
                    .filter_map(|(k, v)| Some((Key::from_text(k)?, v.clone())))
                    .collect();
                page.apply(&keys);
            } else {
                page.apply_import(&changes, &[]);
            }
            ImportMessage::Done(summary)
        }
        ImportOutcome::Refused { why, offer_llama } => ImportMessage::Failed { why, offer_llama },
        ImportOutcome::WorkerFailed(why) => ImportMessage::Failed {
            why,
            offer_llama: false,
        },
    }
}

/// Shows an import's outcome, with the Llama-like choice when it applies.
#[component]
pub fn ImportOutcome(
    message: ReadSignal<Option<ImportMessage>>,
    retry_as_llama: Callback<()>,
    testid: &'static str,
) -> impl IntoView {
    move || {
        message.get().map(|m| match m {
            ImportMessage::Done(text) => view! {
                <p class="hint paste-out" data-testid=testid data-ok="true" aria-live="polite">{text}</p>
            }
            .into_any(),
            ImportMessage::Failed { why, offer_llama } => view! {
                <div data-testid=testid data-ok="false" aria-live="polite">
                    <p class="field-error">{why}</p>
                    {offer_llama.then(|| view! {
                        <button type="button" data-testid=format!("{testid}-as-llama")
                            on:click=move |_| retry_as_llama.run(())>
                            "Estimate it as a Llama-like decoder anyway"
                        </button>
                    })}
                </div>
            }
            .into_any(),
        })
    }
}

/// A Hugging Face config.json, loaded from the Hub by model id or pasted
/// (its architecture replaces the fields), or whatever else someone has
/// in hand (`vramfit_core::paste`): its settings set the form, and the
/// worker's text sets what it measured beside the estimate.
#[component]
fn ConfigImport(page: Page) -> impl IntoView {
    let (text, set_text) = signal(String::new());
    let (message, set_message) = signal(None::<ImportMessage>);
    let run = move |reading| {
        let text = text.get_untracked();
        leptos::task::spawn_local(async move {
            let m = import_text(page, text, reading).await;
            set_message.set(Some(m));
        });
    };
    // A picked file is read by the worker: the page never holds its text.
    let picked = move |ev: leptos::ev::Event| {
        if let Some((file, _)) = crate::gguf::picked_file(&ev) {
            let query = page.form.with_untracked(|f| f.to_query_string());
            leptos::task::spawn_local(async move {
                let reply = crate::tools::ask_paste_file(file, &query).await;
                set_message.set(Some(show_import(page, reply, true)));
            });
        }
    };
    let section = NodeRef::<leptos::html::Details>::new();
    let area = NodeRef::<leptos::html::Textarea>::new();
    // "Paste it here" from the Hub box: open the paste section, focus it.
    let open_paste = Callback::new(move |()| {
        if let Some(d) = section.get_untracked() {
            d.set_open(true);
        }
        if let Some(a) = area.get_untracked() {
            let _ = a.focus();
        }
    });
    view! {
        <crate::hub::HubLoad page=page paste=open_paste/>
        <details class="advanced" node_ref=section>
            <summary>"Paste what you have"</summary>
            <label for="config-json">"A config.json; the llama-server, vllm serve, ollama or training command you run; a TRL, Axolotl, DeepSpeed or torchtitan config; a PEFT adapter_config.json; a start-up log; PyTorch's out-of-memory message. Read in this browser, nothing uploaded."</label>
            <textarea id="config-json" data-testid="config-json" rows="6" spellcheck="false" node_ref=area
                placeholder="vllm serve Qwen/Qwen3-8B --max-model-len 32768 …"
                prop:value=move || text.get()
                on:input=move |ev| set_text.set(event_target_value(&ev))></textarea>
            <input type="file" data-testid="paste-file" aria-label="Or a file" on:change=picked/>
            <button type="button" data-testid="config-import"
                on:click=move |_| run(hf_config::Reading::AsItSays)>"Read it"</button>
            <ImportOutcome message=message testid="config-message"
                retry_as_llama=Callback::new(move |()| run(hf_config::Reading::AsLlama))/>
        </details>
    }
}

/// The GPU to fit on: from the list, typed, or measured by the probe.
#[component]
pub fn FitPanel(page: Page) -> impl IntoView {
    let gpu = Key::Gpu.field();
    let typed = Key::CapacityGib.field();
    let custom = move || page.form.with(|f| f.get(Key::Gpu) == Some("custom"));
    let target = Signal::derive(move || {
        page.primary.with(|e| {
            e.as_ref()
                .map_or(vramfit_core::Bytes::ZERO, |e| e.peak_total_bytes)
        })
    });
    // A measurement becomes the capacity, with the adapter's name, in the URL.
    let use_probe = Callback::new(move |(bytes, adapter): (vramfit_core::Bytes, String)| {
        page.apply(&[
            (Key::Gpu, "probe".to_string()),
            (Key::ProbeBytes, bytes.get().to_string()),
            (Key::ProbeAdapter, adapter.chars().take(64).collect()),
        ]);
    });
    view! {
        <details class="panel" open=true>
            <summary><h2>"Will it fit?"</h2></summary>
            <div class="fields">
                {gpu.map(|f| view! { <FieldInput field=f page=page/> })}
                {move || custom().then(|| typed.map(|f| view! { <FieldInput field=f page=page/> }))}
                <p class="hint" data-testid="capacity-source">
                    {move || page.scenario.with(|s| s.view.capacity.describe(s.view.unit))}
                </p>
                <crate::probe::ProbePanel target=target use_result=use_probe
                    open=page.form.with_untracked(|f| f.get(Key::Gpu) == Some("probe"))/>
            </div>
        </details>
    }
}

/// Copies the page's URL, which holds every input.
#[component]
pub fn CopyLink(page: Page) -> impl IntoView {
    let (copied, set_copied) = signal(None::<bool>);
    let copy = move |_| {
        leptos::task::spawn_local(async move {
            // The link of what the form holds now (the address bar is
            // written a moment after each change).
            let query = page.form.with_untracked(|f| f.to_query_string());
            set_copied.set(Some(browser::copy(&browser::link(&query)).await));
        });
    };
    view! {
        <div class="share">
            <button type="button" data-testid="copy-link" on:click=copy>"Copy link"</button>
            <span class="hint" aria-live="polite">
                {move || match copied.get() {
                    Some(true) => "Link copied: it reproduces this page exactly.",
                    Some(false) => "Could not reach the clipboard; copy the address bar instead.",
                    None => "",
                }}
            </span>
        </div>
    }
}
