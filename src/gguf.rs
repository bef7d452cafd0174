//! The GGUF file itself, for llama.cpp and Ollama: a file picked from disk,
//! or a Hub repository's file by name. The tools worker reads only the
//! file's header (slices of a picked file, range requests to the Hub:
//! `crates/tools-worker`), nothing is uploaded, and its answer is applied
//! as an import: the model's keys, the file type (`weights`), the file's
//! name (`file`: `hf:repo/path` or the picked file's name) and the exact
//! bytes of its tensors (`file_bytes`). The page itself carries no GGUF
//! reader. Every failure is a plain message next to the inputs.

use crate::hub::HUB;
use crate::Page;
use leptos::prelude::*;
use vramfit_core::clip::{clip, QUOTE};
use vramfit_core::infer::engine::WeightsKind;
use vramfit_core::infer::local::FileName;
use vramfit_core::query::Key;
use vramfit_core::text::HubId;
use vramfit_core::tools::ImportOutcome;
use wasm_bindgen::JsCast;

use crate::tools::GgufSource;

/// Characters of a file's name quoted in a message (the tools worker's
/// rule): a Hub file's name holds its repository.
const NAME: usize = 120;

fn quote(name: &str) -> String {
    clip(name, NAME)
}

/// What the status line shows.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Idle,
    /// The header of this file is being read.
    Reading(String),
    /// Read and applied: the file's name and what was read.
    Done {
        name: String,
        text: String,
    },
    Failed(String),
}

impl State {
    /// `data-state`, for tests and styling.
    fn name(&self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Reading(_) => "reading",
            State::Done { .. } => "done",
            State::Failed(_) => "error",
        }
    }
}

/// The panel's signals, shared by its handlers (all `Copy`).
#[derive(Clone, Copy)]
struct Ctx {
    page: Page,
    state: RwSignal<State>,
    /// The number of the latest request: an older answer is dropped.
    latest: StoredValue<u32>,
    /// The file input: emptied when its file is refused or forgotten, so
    /// that picking the same file again reads it again.
    input: NodeRef<leptos::html::Input>,
}

impl Ctx {
    /// Reads the header of `name` from `source` in the tools worker and
    /// applies it, unless a later request replaced this one.
    fn read(self, source: GgufSource, name: String) {
        let ticket = self.latest.get_value().wrapping_add(1);
        self.latest.set_value(ticket);
        self.state.set(State::Reading(name.clone()));
        leptos::task::spawn_local(async move {
            let reply = crate::tools::ask_gguf(&source, &name).await;
            if self.latest.try_get_value() != Some(ticket) {
                return;
            }
            let next = match ImportOutcome::of(reply) {
                ImportOutcome::Imported { summary, changes } => {
                    self.page.apply_import(&changes, &[]);
                    State::Done {
                        name,
                        text: format!(
                            "{summary} The estimate uses the exact bytes of its tensors."
                        ),
                    }
                }
                ImportOutcome::Refused { why, .. } => State::Failed(why),
                ImportOutcome::WorkerFailed(why) => {
                    State::Failed(format!("{} was not read: {why}", quote(&name)))
                }
            };
            if matches!(next, State::Failed(_)) {
                self.clear_input();
            }
            self.state.set(next);
        });
    }

    fn clear_input(self) {
        if let Some(input) = self.input.get_untracked() {
            input.set_value("");
        }
    }

    /// Says why nothing is read (an answer on its way is dropped).
    fn fail(self, why: String) {
        self.clear_input();
        self.latest
            .set_value(self.latest.get_value().wrapping_add(1));
        self.state.set(State::Failed(why));
    }

    /// The file picked in the input, read.
    fn picked(self, ev: &leptos::ev::Event) {
        let Some((blob, name)) = picked_file(ev) else {
            return;
        };
        match FileName::new(&name) {
            Ok(_) => self.read(GgufSource::Picked(blob), name),
            Err(e) => self.fail(format!("{}: {e}; rename the file.", quote(&name))),
        }
    }

    /// The Hub file typed, checked (nothing is fetched for a bad one),
    /// then read.
    fn hub(self, repo: &str, path: &str) {
        match hub_file(repo, path) {
            Ok((name, url)) => self.read(GgufSource::Url(url), name),
            Err(why) => self.fail(why),
        }
    }

    /// Removes the file's keys: the weights are predicted for the file
    /// type again.
    fn forget(self) {
        self.latest
            .set_value(self.latest.get_value().wrapping_add(1));
        self.page.form.update(|f| {
            f.remove(Key::File);
            f.remove(Key::FileBytes);
        });
        self.clear_input();
        self.state.set(State::Idle);
    }
}

/// The picked file and its name (the input's first file), read without
/// the `File` bindings: a `File` is a `Blob`.
pub(crate) fn picked_file(ev: &leptos::ev::Event) -> Option<(web_sys::Blob, String)> {
    let get = |v: &wasm_bindgen::JsValue, k: &str| js_sys::Reflect::get(v, &k.into()).ok();
    let input: wasm_bindgen::JsValue = ev.target()?.into();
    let file = get(&get(&input, "files")?, "0")?;
    let name = get(&file, "name")?.as_string()?;
    Some((file.dyn_into().ok()?, name))
}

/// The `hf:` name the link records and the address the worker reads by
/// ranges, for what was typed: a repository id (or its page's address)
/// and a file's path in it; or the file's whole address (its page, or its
/// download link) in either box.
fn hub_file(repo: &str, path: &str) -> Result<(String, String), String> {
    let (repo, path) = match split_address(repo).or_else(|| split_address(path)) {
        // An address's path is percent-encoded (`small%20model.gguf`).
        Some((r, p)) => (
            r,
            js_sys::decode_uri_component(p)
                .ok()
                .and_then(|d| d.as_string())
                .unwrap_or_else(|| p.to_string()),
        ),
        None => (
            strip_origin(repo.trim()).trim_matches('/'),
            path.trim().to_string(),
        ),
    };
    let id = HubId::new(repo).map_err(|e| format!("`{}` {e}", clip(repo, QUOTE)))?;
    let path = path.trim_start_matches('/');
    if path.is_empty() {
        return Err(format!(
            "Name the file in {} too, as its Files page lists it: e.g. model-Q4_K_M.gguf.",
            id.as_str()
        ));
    }
    let bad_part = path
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..");
    if bad_part
        || path
            .chars()
            .any(|c| c.is_control() || matches!(c, '?' | '#' | '\\'))
    {
        return Err(format!(
            "`{}` is not a file's path in a repository: write it as its Files page lists it, \
             folders separated by /.",
            clip(path, QUOTE)
        ));
    }
    let name = format!("hf:{}/{path}", id.as_str());
    FileName::new(&name).map_err(|e| format!("{}: {e}.", quote(&name)))?;
    let encoded: Vec<String> = path
        .split('/')
        .map(|p| String::from(js_sys::encode_uri_component(p)))
        .collect();
    let url = format!("{HUB}/{}/resolve/main/{}", id.as_str(), encoded.join("/"));
    Ok((name, url))
}

/// `owner/name` without the Hub's origin before it.
fn strip_origin(typed: &str) -> &str {
    [
        "https://huggingface.co/",
        "http://huggingface.co/",
        "huggingface.co/",
    ]
    .iter()
    .find_map(|origin| typed.strip_prefix(origin))
    .unwrap_or(typed)
}

/// A file's address on the Hub (`…/owner/name/blob/main/path` or
/// `…/resolve/main/path`, with or without the origin) as its repository
/// and path.
fn split_address(typed: &str) -> Option<(&str, &str)> {
    let rest = strip_origin(typed.trim());
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let mut cut = rest.match_indices('/').map(|(i, _)| i);
    let at = cut.nth(1)?;
    let (repo, tail) = (&rest[..at], &rest[at + 1..]);
    let path = ["blob/main/", "resolve/main/"]
        .iter()
        .find_map(|p| tail.strip_prefix(p))?;
    Some((repo, path))
}

/// The notice of the link or the codec about `key`, if any.
fn notice(page: Page, key: Key) -> Option<String> {
    crate::form::field_error(page, key).map(|(text, _)| text)
}

/// The status line's text for the current state and form.
fn message(ctx: Ctx) -> String {
    let form_file = ctx.page.form.with(|f| f.get(Key::File).map(str::to_string));
    let has_bytes = ctx.page.scenario.with(|s| s.infer.file_bytes.is_some());
    ctx.state.with(|s| match s {
        State::Reading(name) => format!(
            "Reading the header of {}… (only its first megabytes, in this browser)",
            quote(name)
        ),
        State::Failed(why) => why.clone(),
        // Shown while the file is still the one the estimate uses.
        State::Done { name, text } if has_bytes && form_file.as_deref() == Some(name.as_str()) => {
            text.clone()
        }
        State::Idle | State::Done { .. } => match (form_file, has_bytes) {
            (Some(file), true) => format!(
                "The estimate uses the exact bytes of {}'s tensors, read from its header.",
                quote(&file)
            ),
            (Some(file), false) if file.starts_with("hf:") => format!(
                "This link names {} but not its bytes: read its header for them (the weights \
                 are predicted for the file type until then).",
                quote(&file)
            ),
            (Some(file), false) => format!(
                "This link names {}, a file on someone's computer, but not its bytes: pick it \
                 to read its header (the weights are predicted for the file type until then).",
                quote(&file)
            ),
            (None, _) => String::new(),
        },
    })
}

/// The GGUF file panel: pick a file or name a Hub file, and what happened.
/// Shown for the engines that run GGUF files (llama.cpp, Ollama), or while
/// the form holds the file's keys (with the notice that says they are not
/// used).
#[component]
pub fn GgufPanel(page: Page) -> impl IntoView {
    // A link's Hub file fills the boxes (reading it is one click).
    let linked = page.form.with_untracked(|f| {
        f.get(Key::File)
            .and_then(|v| FileName::new(v).ok())
            .and_then(|n| n.hub().map(|(r, p)| (r.to_string(), p.to_string())))
    });
    let (linked_repo, linked_path) = linked.unwrap_or_default();
    let repo = RwSignal::new(linked_repo);
    let path = RwSignal::new(linked_path);
    let ctx = Ctx {
        page,
        state: RwSignal::new(State::Idle),
        latest: StoredValue::new(0),
        input: NodeRef::new(),
    };
    let shown = Memo::new(move |_| {
        page.scenario
            .with(|s| s.infer.engine.spec().weights == WeightsKind::Gguf)
            || page
                .form
                .with(|f| f.get(Key::File).is_some() || f.get(Key::FileBytes).is_some())
    });
    let has_file = move || page.form.with(|f| f.get(Key::File).is_some());
    let file_notice = move || notice(page, Key::File);
    let bytes_notice = move || notice(page, Key::FileBytes);
    // Typing a new file clears the message about the last one.
    let typed = move |signal: RwSignal<String>, ev: leptos::ev::Event| {
        signal.set(event_target_value(&ev));
        if matches!(ctx.state.get_untracked(), State::Failed(_)) {
            ctx.state.set(State::Idle);
        }
    };
    move || {
        shown.get().then(|| {
            view! {
                <details class="panel gguf" open=true data-testid="gguf-panel">
                    <summary><h2>"Your GGUF file"</h2></summary>
                    <div class="fields">
                        <p class="hint gguf-intro">
                            "Read a GGUF file's header for its model and the exact bytes of its \
                             tensors. Only the header is read (its first megabytes), in this \
                             browser: nothing is uploaded."
                        </p>
                        <div class="field gguf-pick">
                            <label for="gguf-file">"A file on this computer"</label>
                            <input id="gguf-file" data-testid="gguf-file" type="file"
                                accept=".gguf" aria-describedby="gguf-status e-file e-file_bytes"
                                node_ref=ctx.input on:change=move |ev| ctx.picked(&ev)/>
                        </div>
                        <form class="field gguf-hub" data-testid="gguf-hub-form"
                            on:submit=move |ev| {
                                ev.prevent_default();
                                ctx.hub(&repo.get_untracked(), &path.get_untracked());
                            }>
                            <label for="gguf-repo">"Or a Hugging Face repository"</label>
                            <input id="gguf-repo" data-testid="gguf-repo" type="text"
                                autocomplete="off" autocapitalize="off" spellcheck="false"
                                placeholder="e.g. Qwen/Qwen3-8B-GGUF"
                                aria-describedby="gguf-status"
                                prop:value=move || repo.get()
                                on:input=move |ev| typed(repo, ev)/>
                            <label for="gguf-path">"and its file"</label>
                            <div class="gguf-row">
                                <input id="gguf-path" data-testid="gguf-path" type="text"
                                    autocomplete="off" autocapitalize="off" spellcheck="false"
                                    placeholder="e.g. Qwen3-8B-Q4_K_M.gguf"
                                    aria-describedby="gguf-status"
                                    prop:value=move || path.get()
                                    on:input=move |ev| typed(path, ev)/>
                                <button type="submit" data-testid="gguf-hub-read">
                                    "Read its header"
                                </button>
                            </div>
                        </form>
                        <div id="gguf-status" class="gguf-status" role="status" aria-live="polite"
                            data-testid="gguf-status" data-state=move || ctx.state.with(State::name)>
                            <p class="gguf-message">{move || message(ctx)}</p>
                            <button type="button" class="link" data-testid="gguf-forget"
                                hidden=move || !has_file()
                                on:click=move |_| ctx.forget()>
                                "Forget the file: predict the weights for the file type"
                            </button>
                        </div>
                        <p class="field-error" id="e-file" data-testid="error-file">{file_notice}</p>
                        <p class="field-error" id="e-file_bytes" data-testid="error-file_bytes">
                            {bytes_notice}
                        </p>
                    </div>
                </details>
            }
        })
    }
}
