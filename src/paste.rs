//! "Paste what you have": a command, a training config, an engine's
//! start-up log or PyTorch's out-of-memory message (typed, pasted or a
//! picked file), read in the tools worker (`vramfit_core::paste`, nothing
//! uploaded, no parser in the page's own wasm): its settings are set on
//! the form, what was not read is listed, and each figure it measured is
//! shown beside vramfit's estimate of the same thing.

use crate::Page;
use leptos::prelude::*;
use vramfit_core::tools::{ToolReply, ToolRequest};

/// What a paste came to.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Read {
        summary: String,
        read: Vec<String>,
        unknown: Vec<String>,
        measured: Vec<String>,
    },
    Failed(String),
}

/// Reads `text` over the form (in the tools worker) and applies its keys.
async fn read_paste(page: Page, text: String) -> Outcome {
    let query = page.form.with_untracked(|f| f.to_query_string());
    match crate::tools::ask(&ToolRequest::Paste { text, query }).await {
        Ok(ToolReply::Pasted {
            summary,
            changes,
            read,
            unknown,
            measured,
        }) => {
            page.form
                .update(|f| vramfit_core::tools::apply_changes(f, &changes));
            Outcome::Read {
                summary,
                read,
                unknown,
                measured,
            }
        }
        Ok(ToolReply::Refused { why, .. }) | Err(why) => Outcome::Failed(why),
        Ok(_) => {
            Outcome::Failed("the paste worker answered another question: reload the page".into())
        }
    }
}

/// A picked file's text (the worker refuses what is binary or too large).
async fn file_text(ev: leptos::ev::Event) -> Result<String, String> {
    use wasm_bindgen::JsCast;
    let get = |v: &wasm_bindgen::JsValue, k: &str| js_sys::Reflect::get(v, &k.into()).ok();
    let input: wasm_bindgen::JsValue = ev.target().ok_or("no file")?.into();
    let file = get(&input, "files")
        .and_then(|f| get(&f, "0"))
        .ok_or("no file picked")?;
    let blob: web_sys::Blob = file.dyn_into().map_err(|_| "not a file")?;
    let size = blob.size() as usize;
    if size > vramfit_core::paste::MAX_PASTE_BYTES {
        return Err(vramfit_core::paste::PasteError::TooLarge { bytes: size }.to_string());
    }
    let text = wasm_bindgen_futures::JsFuture::from(blob.text())
        .await
        .map_err(|_| "the file could not be read: pick it again")?;
    Ok(text.as_string().unwrap_or_default())
}

/// One titled list of the outcome's lines.
fn lines(title: &'static str, testid: &'static str, items: Vec<String>) -> impl IntoView {
    (!items.is_empty()).then(|| {
        view! {
            <p class="hint">{title}</p>
            <ul class="paste-lines" data-testid=testid>
                {items.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
            </ul>
        }
    })
}

/// The paste box, its file picker, and what the last paste came to.
#[component]
pub fn PasteBox(page: Page) -> impl IntoView {
    let (text, set_text) = signal(String::new());
    let (outcome, set_outcome) = signal(None::<Outcome>);
    let run = move |t: String| {
        leptos::task::spawn_local(async move {
            set_outcome.set(Some(read_paste(page, t).await));
        });
    };
    let picked = move |ev: leptos::ev::Event| {
        leptos::task::spawn_local(async move {
            match file_text(ev).await {
                Ok(t) => {
                    set_text.set(t.clone());
                    set_outcome.set(Some(read_paste(page, t).await));
                }
                Err(why) => set_outcome.set(Some(Outcome::Failed(why))),
            }
        });
    };
    view! {
        <details class="panel" data-testid="paste">
            <summary><h2>"Paste what you have"</h2></summary>
            <div class="fields">
                <p class="hint">"The llama-server, vllm serve, ollama, mlx_lm or training command you run; a TRL, Axolotl, LLaMA-Factory, DeepSpeed or accelerate config; an engine's start-up log; or PyTorch's out-of-memory message. Read in this browser: nothing is uploaded."</p>
                <label for="paste-text" class="visually-hidden">"What you have"</label>
                <textarea id="paste-text" data-testid="paste-text" rows="6" spellcheck="false"
                    prop:value=move || text.get()
                    on:input=move |ev| set_text.set(event_target_value(&ev))></textarea>
                <label for="paste-file">"Or a file"</label>
                <input id="paste-file" data-testid="paste-file" type="file" on:change=picked/>
                <button type="button" data-testid="paste-read"
                    on:click=move |_| run(text.get_untracked())>"Read it"</button>
                {move || outcome.get().map(|o| match o {
                    Outcome::Read { summary, read, unknown, measured } => view! {
                        <div data-testid="paste-outcome" data-ok="true" aria-live="polite">
                            <p class="hint">{summary}</p>
                            {lines("Understood (now in the form):", "paste-read-keys", read)}
                            {lines("Measured, beside vramfit's estimate:", "paste-measured", measured)}
                            {lines("Not read:", "paste-unknown", unknown)}
                        </div>
                    }
                    .into_any(),
                    Outcome::Failed(why) => view! {
                        <p class="field-error" data-testid="paste-outcome" data-ok="false" aria-live="polite">{why}</p>
                    }
                    .into_any(),
                })}
            </div>
        </details>
    }
}
