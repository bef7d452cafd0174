//! The tools worker from the page's side: config.json import, JSON export
//! and GGUF header reads run there ([`vramfit_core::tools`]), so the page's
//! wasm carries no JSON library and no GGUF reader. One worker per
//! request: it is fetched the first time (then cached by the browser),
//! answers once and is terminated.

use std::cell::RefCell;
use std::rc::Rc;
use vramfit_core::tools::{ToolReply, ToolRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The worker's answer to `request`, or why there is none.
pub async fn ask(request: &ToolRequest) -> Result<ToolReply, String> {
    ask_with(JsValue::from_str(&request.encode())).await
}

/// What a GGUF header is read from.
pub enum GgufSource {
    /// A file picked from disk: the worker reads slices of it (the `File`
    /// is structured-cloned to the worker; its bytes are not copied).
    Picked(web_sys::Blob),
    /// A file on the Hub, at this address: the worker makes range requests.
    Url(String),
}

/// The worker's reply to reading the header of the GGUF file `name` (what
/// the link records: `hf:repo/path`, or the picked file's name) from
/// `source`: [`ToolReply::Imported`] with the model's and the file's keys,
/// or [`ToolReply::Refused`] with a message to show.
pub async fn ask_gguf(source: &GgufSource, name: &str) -> Result<ToolReply, String> {
    // The worker's message for a GGUF read: ["gguf", source, name].
    let source: JsValue = match source {
        GgufSource::Picked(blob) => blob.into(),
        GgufSource::Url(url) => JsValue::from_str(url),
    };
    let message = js_sys::Array::of3(
        &JsValue::from_str("gguf"),
        &source,
        &JsValue::from_str(name),
    );
    ask_with(message.into()).await
}

/// Sends `message` once the worker listens, and reads its one answer.
async fn ask_with(message: JsValue) -> Result<ToolReply, String> {
    let worker = crate::browser::spawn_worker("vramfit-tools-worker")?;
    let settle: Rc<RefCell<Option<(js_sys::Function, js_sys::Function)>>> = Rc::default();
    let on_message = {
        let (worker, settle) = (worker.clone(), settle.clone());
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let text = ev.data().as_string().unwrap_or_default();
            if ToolReply::decode(&text) == Some(ToolReply::Ready) {
                let _ = worker.post_message(&message);
            } else if let Some((resolve, _)) = settle.borrow_mut().take() {
                let _ = resolve.call1(&JsValue::NULL, &JsValue::from_str(&text));
            }
        })
    };
    let on_error = {
        let settle = settle.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |_| {
            if let Some((_, reject)) = settle.borrow_mut().take() {
                let _ = reject.call0(&JsValue::NULL);
            }
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        *settle.borrow_mut() = Some((resolve, reject));
    });
    let answer = wasm_bindgen_futures::JsFuture::from(promise).await;
    worker.terminate();
    drop((on_message, on_error));
    let text = answer
        .ok()
        .and_then(|v| v.as_string())
        .ok_or("the import and export worker could not start: reload the page to try again")?;
    match ToolReply::decode(&text) {
        Some(ToolReply::Unreadable) | None => Err(
            "the import and export worker is from another version of this page: reload the page"
                .to_string(),
        ),
        Some(reply) => Ok(reply),
    }
}
