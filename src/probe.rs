//! The GPU memory probe panel: what the browser's WebGPU adapter says about
//! itself, and, only when the user clicks, how much memory the page can
//! really allocate. The work happens in a Web Worker (`vramfit-probe-worker`,
//! which holds wgpu) fetched when the section is first opened; this module
//! talks to it with `vramfit_probe::protocol` messages.
//!
//! Test hooks (`data-testid`): `probe-adapter`, `probe-fallback`,
//! `probe-export`, `probe-start`, `probe-cancel`, `probe-status`, and
//! `probe-result` with `data-bytes` (exact allocated bytes) and
//! `data-outcome` (the outcome key: `oom`, `ceiling`, `swap`, `time`,
//! `cancelled`, `unsupported`, `no-adapter`, `device-lost`). Without WebGPU
//! (or when the probe's worker cannot start) there is nothing to click: the
//! `probe-result` then appears as soon as the section is opened, inside
//! `probe-adapter`, with `data-bytes="0"`, the outcome `no-adapter` or
//! `unsupported`, and the message saying what to do instead.

use crate::worker::Worker;
use leptos::html::Details;
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use vramfit_core::Bytes;
use vramfit_probe::protocol::{decode, encode, Reply, Request};
use vramfit_probe::{
    json_data_url, AdapterReport, Outcome, ProbeConfig, ProbeResult, Progress, FALLBACK_NOTE,
};
use wasm_bindgen::JsValue;

/// What is known about the adapter.
#[derive(Clone, Debug, PartialEq)]
enum Adapter {
    /// The section has not been opened: nothing asked yet.
    Closed,
    /// The worker is loading, or the report has not come back yet.
    Asking,
    Ready(AdapterReport),
    /// No WebGPU, or no adapter.
    Missing(Outcome),
    /// The worker itself could not start.
    Broken(String),
}

/// The probe's worker, as the page reads it.
struct ProbeWorker;

impl crate::worker::Protocol for ProbeWorker {
    const NAME: &'static str = "vramfit-probe-worker";
    type Reply = Reply;

    fn decode(text: &str) -> Option<Reply> {
        decode(text)
    }

    fn is_ready(reply: &Reply) -> bool {
        matches!(reply, Reply::Ready)
    }
}

/// The probe's worker once started: requests wait until it listens.
type Client = Rc<RefCell<Option<Worker>>>;

/// Sends `req` to the worker, if it started.
fn send(client: &Client, req: &Request) {
    if let Some(w) = client.borrow().as_ref() {
        w.send(JsValue::from_str(&encode(req)));
    }
}

/// What a run is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// How much can be allocated, up to the ceiling.
    Measure,
    /// Whether exactly the workload's peak can be allocated.
    Fit,
}

/// Where the probe stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Run {
    Idle,
    Running(Progress),
    Done(ProbeResult, ProbeConfig, Mode),
}

/// A typed size: `Ok(None)` when empty (use the default).
fn typed(text: &str, unit: u64, what: &str) -> Result<Option<Bytes>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let bytes = vramfit_core::units::Decimal::parse(t)
        .filter(|d| !d.negative)
        .and_then(|d| d.times_floor(unit))
        .filter(|&b| b > 0 && b < 1_000_000_000_000_000);
    match bytes.and_then(|b| u64::try_from(b).ok()) {
        Some(b) => Ok(Some(Bytes(b))),
        None => Err(format!(
            "{what}: `{}` is not a positive number",
            vramfit_core::clip::clip(t, vramfit_core::clip::QUOTE)
        )),
    }
}

fn gib(b: Bytes) -> String {
    format!("{:.2} GiB", b.gib())
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn status_line(adapter: &Adapter, run: Run, ceiling: Bytes) -> String {
    match run {
        Run::Running(p) => format!(
            "Measuring… {} allocated in {} buffer{} ({}), stopping at {} at the latest.",
            gib(p.allocated),
            p.chunks,
            if p.chunks == 1 { "" } else { "s" },
            seconds(p.elapsed_ms),
            gib(p.ceiling)
        ),
        Run::Done(r, _, _) => match r.outcome {
            Outcome::Unsupported | Outcome::NoAdapter => r.message(),
            o => format!("Done ({}). Everything allocated was freed.", o.key()),
        },
        Run::Idle => match adapter {
            Adapter::Missing(o) => format!("Not measured ({}); nothing was allocated.", o.key()),
            Adapter::Broken(_) => format!(
                "Not measured ({}); nothing was allocated.",
                Outcome::Unsupported.key()
            ),
            _ => format!(
                "Not measured yet. The probe allocates GPU memory up to {} (your estimate plus a \
                 margin), then frees it. It starts only when you click.",
                gib(ceiling)
            ),
        },
    }
}

/// The result of a probe that cannot run here (no WebGPU, no adapter, or
/// no worker): 0 bytes, the outcome, and what to do instead.
fn missing_result(outcome: Outcome, message: String) -> impl IntoView {
    view! {
        <div class="probe-result" data-testid="probe-result" data-bytes="0"
            data-outcome=outcome.key()>
            <p><strong>"No GPU memory can be measured in this browser."</strong></p>
            <p class="error">{message}</p>
        </div>
    }
}

/// The adapter's name (or that the browser hides it), and what it is.
fn adapter_facts(report: &AdapterReport) -> (String, String) {
    let title = [&report.name, &report.description]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
        .unwrap_or_else(|| "(the browser does not reveal the adapter's name)".to_string());
    let known = |s: &str| if s.is_empty() { "?" } else { s }.to_string();
    let facts = format!(
        "vendor {}, architecture {}, {} device, backend {}",
        known(&report.vendor),
        known(&report.architecture),
        report.device_type,
        report.backend
    );
    (title, facts)
}

/// The adapter's name, flags, limits and features, and the JSON export.
fn adapter_details(report: AdapterReport, p: Panel) -> impl IntoView {
    let (title, facts) = adapter_facts(&report);
    let limits = report
        .limits
        .iter()
        .map(|(name, v)| {
            view! {
                <tr data-limit=name.clone()><th scope="row">{name.clone()}</th><td class="num">{*v}</td></tr>
            }
        })
        .collect_view();
    let features = if report.features.is_empty() {
        "none".to_string()
    } else {
        report.features.join(", ")
    };
    view! {
        <div data-testid="probe-adapter" data-fallback=report.fallback.to_string()>
            <p><strong>{title}</strong></p>
            <p class="hint">{facts}</p>
            {report.fallback.then(|| view! {
                <p class="notice" role="note" data-testid="probe-fallback">
                    <strong>{FALLBACK_NOTE}</strong>
                    ". The browser offers no hardware GPU here, so the figure below is not VRAM."
                </p>
            })}
            <details>
                <summary>"Limits and features"</summary>
                <table class="limits">
                    <caption>"Limits (as the browser reports them)"</caption>
                    <tbody>{limits}</tbody>
                </table>
                <p><strong>"Features: "</strong>{features}</p>
            </details>
            <p>
                <a data-testid="probe-export" download="vramfit-gpu.json"
                    href=move || json_data_url(&p.export())>
                    "Export JSON"
                </a>
            </p>
        </div>
    }
}

/// The typed ceiling and chunk (`None`: the default), or why one is
/// refused.
type Overrides = Result<(Option<Bytes>, Option<Bytes>), String>;

/// The panel's state: what the worker said, what was typed, what runs.
#[derive(Clone, Copy)]
struct Panel {
    /// The workload's estimated peak, overhead included.
    target: Signal<Bytes>,
    adapter: RwSignal<Adapter>,
    run: RwSignal<Run>,
    /// The plan and purpose of the probe in flight.
    started: RwSignal<Option<(ProbeConfig, Mode)>>,
    ceiling_text: RwSignal<String>,
    chunk_text: RwSignal<String>,
    /// The JSON documents to export, written by the worker: the adapter's
    /// report, then the last probe's.
    report_json: RwSignal<String>,
    done_json: RwSignal<String>,
    overrides: Memo<Overrides>,
    /// What "Measure" would run, and what "Does my workload fit?" would.
    config: Memo<ProbeConfig>,
    fit_config: Memo<ProbeConfig>,
}

/// The largest buffer the adapter allows (any, before it is known).
fn max_buffer(adapter: &Adapter) -> u64 {
    match adapter {
        Adapter::Ready(r) => r.max_buffer_size(),
        _ => u64::MAX,
    }
}

/// Target + margin, or the typed ceiling, as the adapter caps it.
fn plan(
    adapter: &Adapter,
    target: Bytes,
    ceiling: Option<Bytes>,
    chunk: Option<Bytes>,
) -> ProbeConfig {
    let mut cfg = match (adapter, ceiling) {
        (Adapter::Ready(r), None) => r.probe_config(target),
        (Adapter::Ready(r), Some(c)) => r.config(c),
        (_, Some(c)) => ProbeConfig::new(c, max_buffer(adapter)),
        (_, None) => ProbeConfig::for_target(target, u64::MAX),
    };
    if let Some(ch) = chunk {
        cfg.chunk = ch;
        cfg = cfg.clamped_to(max_buffer(adapter));
        cfg.chunk = cfg.chunk.max(Bytes(4)).min(cfg.ceiling.max(Bytes(4)));
    }
    cfg
}

impl Panel {
    fn new(target: Signal<Bytes>) -> Panel {
        let adapter = RwSignal::new(Adapter::Closed);
        let ceiling_text = RwSignal::new(String::new());
        let chunk_text = RwSignal::new(String::new());
        let overrides = Memo::new(move |_| {
            let ceiling = typed(&ceiling_text.get(), 1 << 30, "ceiling")?;
            let chunk = typed(&chunk_text.get(), 1 << 20, "chunk")?;
            Ok::<_, String>((ceiling, chunk))
        });
        let config = Memo::new(move |_| {
            let (ceiling, chunk) = overrides.get().unwrap_or((None, None));
            plan(&adapter.get(), target.get(), ceiling, chunk)
        });
        // "Does my workload fit?": exactly the estimated peak.
        let fit_config = Memo::new(move |_| {
            let chunk = overrides.get().map(|o| o.1).unwrap_or(None);
            plan(&adapter.get(), target.get(), Some(target.get()), chunk)
        });
        Panel {
            target,
            adapter,
            run: RwSignal::new(Run::Idle),
            started: RwSignal::new(None),
            ceiling_text,
            chunk_text,
            report_json: RwSignal::new(String::new()),
            done_json: RwSignal::new(String::new()),
            overrides,
            config,
            fit_config,
        }
    }

    fn on_reply(self, reply: Reply) {
        match reply {
            Reply::Ready => {}
            Reply::Report { report, json } => {
                self.report_json.set(json);
                self.adapter.set(Adapter::Ready(report));
            }
            Reply::Missing { outcome } => self.adapter.set(Adapter::Missing(outcome)),
            Reply::Progress { progress } => self.run.set(Run::Running(progress)),
            Reply::Done { result, json } => {
                if let Some((cfg, mode)) = self.started.get_untracked() {
                    self.done_json.set(json);
                    self.run.set(Run::Done(result, cfg, mode));
                }
            }
        }
    }

    /// Starts the worker and asks for the adapter, once; asking allocates
    /// nothing (the probe waits for a click).
    fn ensure(self, client: &Client) {
        if client.borrow().is_some() {
            return;
        }
        self.adapter.set(Adapter::Asking);
        let on_reply = move |reply: Option<Reply>| reply.map_or((), |r| self.on_reply(r));
        let adapter = self.adapter;
        let on_error = move || adapter.set(Adapter::Broken("its script failed to load".into()));
        match Worker::start::<ProbeWorker>(on_reply, on_error) {
            Ok(w) => *client.borrow_mut() = Some(w),
            Err(e) => return self.adapter.set(Adapter::Broken(e)),
        }
        send(client, &Request::Report);
    }

    /// Runs a probe for `mode`, unless one runs.
    fn start(self, client: &Client, mode: Mode) {
        if matches!(self.run.get_untracked(), Run::Running(_)) {
            return;
        }
        let cfg = match mode {
            Mode::Measure => self.config.get_untracked(),
            Mode::Fit => self.fit_config.get_untracked(),
        };
        self.started.set(Some((cfg, mode)));
        self.run.set(Run::Running(Progress {
            allocated: Bytes::ZERO,
            chunks: 0,
            elapsed_ms: 0,
            ceiling: cfg.ceiling,
        }));
        send(client, &Request::Probe { config: cfg });
    }

    fn running(self) -> bool {
        matches!(self.run.get(), Run::Running(_))
    }

    /// Whether the probe cannot start now (the buttons' `disabled`).
    fn blocked(self) -> impl Fn() -> bool + Copy + Send + Sync + 'static {
        move || {
            self.running()
                || self.overrides.with(Result::is_err)
                || !matches!(self.adapter.get(), Adapter::Ready(_))
        }
    }

    /// The JSON to export: the last probe's, or the adapter's report.
    fn export(self) -> String {
        match (self.adapter.get(), self.run.get()) {
            (Adapter::Ready(_), Run::Done(..)) => self.done_json.get(),
            (Adapter::Ready(_), _) => self.report_json.get(),
            _ => String::new(),
        }
    }

    /// The adapter's name as the capacity records it.
    fn adapter_name(self) -> String {
        match self.adapter.get() {
            Adapter::Ready(r) => [r.name, r.description, r.architecture, r.vendor]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// What is known about the adapter: asking, its report, or why there is
/// none.
fn adapter_view(p: Panel) -> impl IntoView {
    move || match p.adapter.get() {
        Adapter::Closed | Adapter::Asking => {
            view! { <p class="hint">"Asking the browser for its GPU adapter…"</p> }.into_any()
        }
        Adapter::Broken(e) => {
            let why = format!(
                "The probe could not start: {e}. Choose your GPU from the list or type its memory."
            );
            view! {
                <div data-testid="probe-adapter" data-outcome=Outcome::Unsupported.key()>
                    {missing_result(Outcome::Unsupported, why)}
                </div>
            }
            .into_any()
        }
        Adapter::Missing(o) => view! {
            <div data-testid="probe-adapter" data-outcome=o.key()>
                {missing_result(o, o.message().to_string())}
            </div>
        }
        .into_any(),
        Adapter::Ready(r) => adapter_details(r, p).into_any(),
    }
}

/// The typed ceiling and chunk, with the placeholders they replace.
fn size_inputs(p: Panel) -> impl IntoView {
    view! {
        <div class="fields inline">
            <div class="field">
                <label for="probe-ceiling">"Ceiling (GiB)"</label>
                <input id="probe-ceiling" name="probe_ceiling" type="text" inputmode="decimal"
                    data-testid="probe-ceiling" autocomplete="off"
                    title="The probe never allocates more than this; empty: the estimate plus a margin."
                    placeholder=move || format!("{:.2}", p.config.get().ceiling.gib())
                    prop:value=move || p.ceiling_text.get()
                    on:input=move |ev| p.ceiling_text.set(event_target_value(&ev))/>
            </div>
            <div class="field">
                <label for="probe-chunk">"Chunk (MiB)"</label>
                <input id="probe-chunk" name="probe_chunk" type="text" inputmode="decimal"
                    data-testid="probe-chunk" autocomplete="off"
                    title="Size of each buffer; empty: 256 MiB or the adapter's largest buffer."
                    placeholder=move || format!("{}", p.config.get().chunk.get() >> 20)
                    prop:value=move || p.chunk_text.get()
                    on:input=move |ev| p.chunk_text.set(event_target_value(&ev))/>
            </div>
        </div>
    }
}

/// Measure, check the workload's peak, cancel.
fn probe_buttons(p: Panel, client: &Client) -> impl IntoView {
    let start = {
        let client = Rc::clone(client);
        move |mode: Mode| p.start(&client, mode)
    };
    let start_measure = {
        let start = start.clone();
        move |_| start(Mode::Measure)
    };
    let start_fit = move |_| start(Mode::Fit);
    let stop = {
        let client = Rc::clone(client);
        move |_| send(&client, &Request::Cancel)
    };
    view! {
        <div class="share">
            <button type="button" data-testid="probe-start" on:click=start_measure disabled=p.blocked()>
                "Measure GPU memory"
            </button>
            <button type="button" data-testid="probe-fit" on:click=start_fit disabled=p.blocked()
                title="Allocate exactly the estimated peak and say yes or no.">
                "Does my workload fit?"
            </button>
            <button type="button" data-testid="probe-cancel" on:click=stop disabled=move || !p.running()>
                "Cancel"
            </button>
        </div>
    }
}

/// The answer to "Does my workload fit?": `needed` allocated or not.
fn fit_result(r: ProbeResult, cfg: ProbeConfig, needed: Bytes) -> AnyView {
    let confirmed = r.outcome == Outcome::Ceiling && r.allocated >= needed;
    let capped = cfg.ceiling < needed;
    let answer = if confirmed {
        format!(
            "Yes: {} (the estimated peak) could be allocated at once.",
            gib(needed)
        )
    } else if capped && r.outcome == Outcome::Ceiling {
        format!(
            "Could not confirm: a software adapter is probed to {} at most, below the {} needed.",
            gib(cfg.ceiling),
            gib(needed)
        )
    } else {
        format!(
            "No: only {} of the {} needed could be allocated ({}).",
            gib(r.allocated),
            gib(needed),
            r.outcome.key()
        )
    };
    view! {
        <div class="probe-result" data-testid="probe-result"
            data-bytes=r.allocated.get().to_string() data-outcome=r.outcome.key()>
            <p class="total" data-testid="probe-fit-result"
                data-fits=if confirmed { "true" } else if capped { "" } else { "false" }>
                <strong>{answer}</strong>
            </p>
            <p>{format!("How it ended ({}): {}", r.outcome.key(), r.message())}</p>
        </div>
    }
    .into_any()
}

/// A measurement: what could be allocated, and a button to use it as the
/// GPU's capacity.
fn measure_result(p: Panel, r: ProbeResult, use_result: Callback<(Bytes, String)>) -> AnyView {
    let fallback = matches!(p.adapter.get(), Adapter::Ready(ref a) if a.fallback);
    let headline = match r.outcome {
        Outcome::Unsupported | Outcome::NoAdapter => {
            "No GPU memory could be measured in this browser.".to_string()
        }
        _ => format!(
            "At least {} could be allocated ({} buffer{}, {}).",
            gib(r.allocated),
            r.chunks,
            if r.chunks == 1 { "" } else { "s" },
            seconds(r.elapsed_ms)
        ),
    };
    view! {
        <div class="probe-result" data-testid="probe-result"
            data-bytes=r.allocated.get().to_string() data-outcome=r.outcome.key()>
            <p class="total"><strong>{headline}</strong></p>
            <p class="exact">{format!("{} bytes", vramfit_core::explain::group(r.allocated.get()))}</p>
            {fallback.then(|| view! { <p class="notice" role="note">{FALLBACK_NOTE}</p> })}
            <p>{format!("How it ended ({}): {}", r.outcome.key(), r.message())}</p>
            {r.is_measurement().then(|| view! {
                <button type="button" data-testid="probe-use"
                    on:click=move |_| use_result.run((r.allocated, p.adapter_name()))>
                    "Use as the GPU's capacity (a measured lower bound)"
                </button>
            })}
        </div>
    }
    .into_any()
}

/// The last probe's result, once it is done.
fn probe_result(p: Panel, use_result: Callback<(Bytes, String)>) -> impl IntoView {
    move || match p.run.get() {
        Run::Done(r, cfg, Mode::Fit) => Some(fit_result(r, cfg, p.target.get_untracked())),
        Run::Done(r, _, Mode::Measure) => Some(measure_result(p, r, use_result)),
        _ => None,
    }
}

/// The probe panel. `target` is the workload's estimated peak, overhead
/// included (the default ceiling is it plus 10% or 1 GiB, at most 2 GiB on
/// a software adapter; both the ceiling and the chunk size can be typed).
/// `use_result` receives a measurement (bytes and the adapter's name) when
/// the user chooses it as the GPU's capacity.
#[component]
pub fn ProbePanel(
    #[prop(into)] target: Signal<Bytes>,
    #[prop(into)] use_result: Callback<(Bytes, String)>,
    /// Open from the start (the link already uses a measurement).
    open: bool,
) -> impl IntoView {
    let p = Panel::new(target);
    let client: Client = Rc::default();
    let details = NodeRef::<Details>::new();
    let toggled = {
        let client = Rc::clone(&client);
        move |_| {
            if details.get_untracked().is_some_and(|d| d.open()) {
                p.ensure(&client);
            }
        }
    };
    if open {
        p.ensure(&client);
    }
    view! {
        <details class="advanced" node_ref=details open=open on:toggle=toggled>
        <summary>"Measure this browser's GPU"</summary>
        <section class="panel probe" aria-labelledby="probe-h">
            <h2 id="probe-h">"Measure this GPU"</h2>
            <p class="hint">
                "Browsers do not tell a page how much memory the GPU has. This allocates real GPU \
                 buffers until the GPU refuses or a safety ceiling is reached, then frees them: a \
                 lower bound on what a page can use."
            </p>
            {adapter_view(p)}
            {size_inputs(p)}
            <p class="field-error" data-testid="probe-error">{move || p.overrides.get().err()}</p>
            {probe_buttons(p, &client)}
            <p class="hint" data-testid="probe-status" role="status" aria-live="polite">
                {move || status_line(&p.adapter.get(), p.run.get(), p.config.get().ceiling)}
            </p>
            {probe_result(p, use_result)}
        </section>
        </details>
    }
}
