//! Loading a model's `config.json` from the Hugging Face Hub, only on the
//! user's request: the "Load from the Hub" button, or opening a link that
//! carries `hub` (the link is the request). The id is checked as the Hub
//! checks it before anything is fetched; the answer goes through the same
//! importer as a pasted config.json; every failure is a plain message next
//! to the box, and the rest of the page keeps working.

use crate::{browser, Page};
use leptos::prelude::*;
use vramfit_core::model::hf_config::Reading;
use vramfit_core::query::Key;
use vramfit_core::text::HubId;
use vramfit_core::tools::{ImportOutcome, ToolRequest};
use vramfit_core::Notice;

/// The Hub the page reads configs from. The end-to-end tests route this
/// origin to a local server; the page itself only ever names the real one.
pub const HUB: &str = "https://huggingface.co";

/// Why a model's config.json could not be loaded or used.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadError {
    /// No answer at all: offline, blocked, or refused by CORS.
    Unreachable,
    /// HTTP 404: no such model, or no config.json on its main branch.
    NotFound,
    /// HTTP 401 or 403: gated or private. Without a login the Hub answers
    /// 401 for a repository that does not exist as well.
    Restricted,
    /// Any other HTTP status.
    Status(u16),
    /// An answer that is not a config vramfit can use (not JSON, not a
    /// causal language model, a field it does not model…): the importer's
    /// reason.
    Config(String),
    /// The import worker could not read it (it did not start, or answered
    /// something else): the reason.
    Worker(String),
}

impl LoadError {
    /// The message shown next to the box, naming the model.
    pub fn message(&self, id: HubId) -> String {
        let id = id.as_str();
        match self {
            LoadError::Unreachable => "Could not reach huggingface.co (offline?). Try again when \
                 connected, or paste the model's config.json below."
                .into(),
            LoadError::NotFound => format!(
                "`{id}` was not found on the Hub (no such model, or no config.json on its main \
                 branch): check the id, written as on the model's page."
            ),
            LoadError::Restricted => format!(
                "`{id}` is gated or private on the Hub (or does not exist: without a login the \
                 Hub answers the same for both). Open its config.json while logged in to \
                 huggingface.co, download or copy it, and paste it below."
            ),
            LoadError::Status(code) => format!(
                "The Hub answered HTTP {code} for `{id}`. Try again later, or paste the \
                 config.json below."
            ),
            LoadError::Config(e) => format!("`{id}` on the Hub: {e}"),
            LoadError::Worker(e) => format!("`{id}` was loaded, but {e}"),
        }
    }

    /// Whether the user can get the file another way (the links to open it
    /// on the Hub and to paste it are offered).
    fn paste_instead(&self) -> bool {
        !matches!(
            self,
            LoadError::NotFound | LoadError::Config(_) | LoadError::Worker(_)
        )
    }
}

/// The body of a successful answer, or why there is none.
pub fn answer(fetched: Option<(u16, String)>) -> Result<String, LoadError> {
    match fetched {
        None => Err(LoadError::Unreachable),
        Some((200, body)) => Ok(body),
        Some((404, _)) => Err(LoadError::NotFound),
        Some((401 | 403, _)) => Err(LoadError::Restricted),
        Some((code, _)) => Err(LoadError::Status(code)),
    }
}

/// Who asked for the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The button (or Enter in the box).
    Button,
    /// A link opened with `hub`: it is applied only if the form still has
    /// that id when the answer comes, and keeps the link's own dropout.
    Link,
}

/// What the box shows.
#[derive(Clone, Debug, PartialEq)]
enum HubState {
    Idle,
    Loading(HubId),
    Done {
        id: HubId,
        text: String,
    },
    Failed {
        why: String,
        /// Reading the config as Llama-like is a choice to offer.
        offer_llama: bool,
        /// The model whose file can be opened on the Hub and pasted.
        paste: Option<HubId>,
    },
}

impl HubState {
    /// `data-state`, for tests and styling.
    fn name(&self) -> &'static str {
        match self {
            HubState::Idle => "idle",
            HubState::Loading(_) => "loading",
            HubState::Done { .. } => "done",
            HubState::Failed { .. } => "error",
        }
    }
}

/// The box's signals, shared by its handlers (all `Copy`).
#[derive(Clone, Copy)]
struct Ctx {
    page: Page,
    state: RwSignal<HubState>,
    /// The number of the latest request: an older answer is dropped.
    latest: StoredValue<u32>,
    /// The last text fetched, kept for the Llama-like choice.
    fetched: StoredValue<Option<(HubId, String, Origin)>>,
}

impl Ctx {
    /// Checks the typed id (nothing is fetched for a bad one), then loads.
    fn request(self, typed: &str) {
        let typed = typed.trim();
        match HubId::new(model_id(typed)) {
            Ok(id) => self.start(id, Origin::Button),
            Err(e) => {
                // An answer still on its way is for an id no longer asked for.
                self.latest
                    .set_value(self.latest.get_value().wrapping_add(1));
                self.state.set(HubState::Failed {
                    why: format!(
                        "`{}` {e}",
                        vramfit_core::clip::clip(typed, vramfit_core::clip::QUOTE)
                    ),
                    offer_llama: false,
                    paste: None,
                });
            }
        }
    }

    /// Fetches the model's config.json and applies it when it arrives,
    /// unless a later request replaced this one.
    fn start(self, id: HubId, origin: Origin) {
        let ticket = self.latest.get_value().wrapping_add(1);
        self.latest.set_value(ticket);
        self.state.set(HubState::Loading(id));
        leptos::task::spawn_local(async move {
            let fetched = browser::fetch_text(&id.config_url(HUB)).await;
            if self.latest.try_get_value() != Some(ticket) {
                return;
            }
            if origin == Origin::Link && self.form_hub().as_deref() != Some(id.as_str()) {
                self.state.set(HubState::Idle);
                return;
            }
            let next = match answer(fetched) {
                Ok(text) => {
                    self.finish(id, text, Reading::AsItSays, origin, ticket)
                        .await
                }
                Err(e) => Some(failed(id, &e)),
            };
            if let Some(next) = next {
                self.state.set(next);
            }
        });
    }

    /// A link that chose the Llama-like reading (`like_llama`) makes the
    /// same choice again, when the config still needs it.
    fn link_chose_llama(self, origin: Origin) -> bool {
        origin == Origin::Link
            && self
                .page
                .form
                .with_untracked(|f| f.get(Key::LikeLlama).is_some())
    }

    /// The `hub` key of the form now.
    fn form_hub(self) -> Option<String> {
        self.page
            .form
            .try_with_untracked(|f| f.get(Key::Hub).map(str::to_string))
            .flatten()
    }

    /// Imports the fetched text (in the tools worker): on success the
    /// model's keys are replaced and `hub` set; otherwise the text is kept
    /// for the Llama-like choice. `None` when request `ticket` was replaced
    /// by a later one while the worker read it.
    async fn finish(
        self,
        id: HubId,
        text: String,
        mut reading: Reading,
        origin: Origin,
        ticket: u32,
    ) -> Option<HubState> {
        loop {
            let request = ToolRequest::Import {
                text: text.clone(),
                reading,
            };
            let reply = crate::tools::ask(&request).await;
            if self.latest.try_get_value() != Some(ticket) {
                return None;
            }
            return Some(match ImportOutcome::of(reply) {
                ImportOutcome::Imported { summary, changes } => {
                    let mut extra = vec![(Key::Hub, id.as_str().to_string())];
                    if origin == Origin::Link {
                        // The link's own dropout is a run setting the user
                        // may have changed after the import: it stays.
                        let dropout = self
                            .page
                            .form
                            .with_untracked(|f| f.get(Key::Dropout).map(str::to_string));
                        extra.extend(dropout.map(|d| (Key::Dropout, d)));
                    }
                    self.page.apply_import(&changes, &extra);
                    self.fetched.set_value(None);
                    HubState::Done {
                        id,
                        text: format!("Loaded from the Hub. {summary}"),
                    }
                }
                ImportOutcome::Refused { offer_llama, .. }
                    if offer_llama
                        && reading == Reading::AsItSays
                        && self.link_chose_llama(origin) =>
                {
                    reading = Reading::AsLlama;
                    continue;
                }
                ImportOutcome::Refused { why, offer_llama } => {
                    self.fetched.set_value(Some((id, text, origin)));
                    HubState::Failed {
                        why: LoadError::Config(why).message(id),
                        offer_llama,
                        paste: None,
                    }
                }
                ImportOutcome::WorkerFailed(why) => failed(id, &LoadError::Worker(why)),
            });
        }
    }

    /// The user chose to read the last fetched config as Llama-like.
    fn as_llama(self) {
        if let Some((id, text, origin)) = self.fetched.get_value() {
            let ticket = self.latest.get_value();
            leptos::task::spawn_local(async move {
                if let Some(next) = self
                    .finish(id, text, Reading::AsLlama, origin, ticket)
                    .await
                {
                    self.state.set(next);
                }
            });
        }
    }
}

/// The failed state for `e`.
fn failed(id: HubId, e: &LoadError) -> HubState {
    HubState::Failed {
        why: e.message(id),
        offer_llama: false,
        paste: e.paste_instead().then_some(id),
    }
}

/// The model id in what was typed: the id itself, or the address of the
/// model's page on the Hub (`https://huggingface.co/owner/name`).
fn model_id(typed: &str) -> &str {
    let id = [
        "https://huggingface.co/",
        "http://huggingface.co/",
        "huggingface.co/",
    ]
    .iter()
    .find_map(|origin| typed.strip_prefix(origin))
    .unwrap_or(typed);
    id.strip_suffix('/').unwrap_or(id)
}

/// What the link says about `hub` (a refused id, a config not loaded yet),
/// with what the page does about it.
fn hub_notice(page: Page) -> Option<String> {
    page.decoded.with(|d| {
        d.notices
            .iter()
            .find(|n| n.field_key() == Some(Key::Hub) && !matches!(n, Notice::Repeated { .. }))
            .map(|n| format!("{n}; {}", n.consequence()))
    })
}

/// The Hub box: a model id, the button, and what happened. One fixed
/// structure whose text and visibility follow the state (cheaper in code
/// than a view per state).
#[component]
pub fn HubLoad(
    page: Page,
    /// Opens the paste section and puts the cursor in it.
    paste: Callback<()>,
) -> impl IntoView {
    let linked = page
        .form
        .with_untracked(|f| f.get(Key::Hub).map(str::to_string));
    let (typed, set_typed) = signal(linked.clone().unwrap_or_default());
    let ctx = Ctx {
        page,
        state: RwSignal::new(HubState::Idle),
        latest: StoredValue::new(0),
        fetched: StoredValue::new(None),
    };
    // A shared link is the user's request: load its config again.
    if let Some(id) = linked.and_then(|t| HubId::new(t.trim()).ok()) {
        ctx.start(id, Origin::Link);
    }
    let on_input = move |ev| {
        set_typed.set(event_target_value(&ev));
        // The message was about what was typed before.
        if !matches!(ctx.state.get_untracked(), HubState::Loading(_)) {
            ctx.state.set(HubState::Idle);
        }
    };
    let notice = move || {
        let loading = ctx.state.with(|s| matches!(s, HubState::Loading(_)));
        (!loading).then(|| hub_notice(page)).flatten()
    };
    let offer_llama = move || {
        ctx.state.with(|s| {
            matches!(
                s,
                HubState::Failed {
                    offer_llama: true,
                    ..
                }
            )
        })
    };
    let file = move || {
        ctx.state.with(|s| match s {
            HubState::Failed {
                paste: Some(id), ..
            } => Some(id.config_url(HUB)),
            _ => None,
        })
    };
    view! {
        <form class="field hub-load" data-testid="hub-form"
            on:submit=move |ev| {
                ev.prevent_default();
                ctx.request(&typed.get_untracked());
            }>
            <label for="hub-id">"Load a config.json from the Hugging Face Hub"</label>
            <div class="hub-row">
                <input id="hub-id" data-testid="hub-id" type="text" autocomplete="off"
                    autocapitalize="off" spellcheck="false" placeholder="owner/name, e.g. Qwen/Qwen3-8B"
                    aria-describedby="hub-status e-hub"
                    prop:value=move || typed.get() on:input=on_input/>
                <button type="submit" data-testid="hub-load">"Load from the Hub"</button>
            </div>
            <div id="hub-status" class="hub-status" role="status" aria-live="polite"
                data-testid="hub-status" data-state=move || ctx.state.with(HubState::name)>
                <p class="hub-message">{move || message(ctx)}</p>
                <button type="button" data-testid="hub-as-llama" hidden=move || !offer_llama()
                    on:click=move |_| ctx.as_llama()>
                    "Estimate it as a Llama-like decoder anyway"
                </button>
                <p class="hub-alternatives" hidden=move || file().is_none()>
                    <a href=file target="_blank" rel="noopener noreferrer">
                        "Open its config.json on huggingface.co"
                    </a>
                    " · "
                    <button type="button" class="link" data-testid="hub-paste"
                        on:click=move |_| paste.run(())>
                        "Paste it here"
                    </button>
                </p>
            </div>
            <p class="field-error" id="e-hub" data-testid="error-hub">{notice}</p>
        </form>
    }
}

/// The status line's text for the current state.
fn message(ctx: Ctx) -> String {
    ctx.state.with(|s| match s {
        HubState::Idle => String::new(),
        HubState::Loading(id) => format!(
            "Loading the config.json of {} from huggingface.co…",
            id.as_str()
        ),
        // Shown while the model is still the one loaded (a preset picked
        // or a config pasted since replaces it).
        HubState::Done { id, text } => {
            let current = ctx.page.form.with(|f| f.get(Key::Hub) == Some(id.as_str()));
            if current {
                text.clone()
            } else {
                String::new()
            }
        }
        HubState::Failed { why, .. } => why.clone(),
    })
}
