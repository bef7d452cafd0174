//! The tools worker from the page's side: config.json import, JSON export
//! and GGUF header reads run there ([`vramfit_core::tools`]), so the page's
//! wasm carries no JSON library and no GGUF reader. One worker per
//! request: it is fetched the first time (then cached by the browser),
//! answers once and is terminated.

use crate::worker::Silence;
use vramfit_core::tools::{ToolReply, ToolRequest};
use wasm_bindgen::JsValue;

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

/// The worker's reply to a picked file read as a paste over the page's
/// `query` (the worker reads the file: the page never holds its text).
pub async fn ask_paste_file(file: web_sys::Blob, query: &str) -> Result<ToolReply, String> {
    let message = js_sys::Array::of3(
        &JsValue::from_str("paste"),
        &file,
        &JsValue::from_str(query),
    );
    ask_with(message.into()).await
}

/// The tools worker, as the page reads it.
struct Tools;

impl crate::worker::Protocol for Tools {
    const NAME: &'static str = "vramfit-tools-worker";
    type Reply = ToolReply;

    fn decode(text: &str) -> Option<ToolReply> {
        ToolReply::decode(text)
    }

    fn is_ready(reply: &ToolReply) -> bool {
        matches!(reply, ToolReply::Ready)
    }
}

/// Sends `message` to a new tools worker, and reads its one answer.
async fn ask_with(message: JsValue) -> Result<ToolReply, String> {
    match crate::worker::ask::<Tools>(message).await {
        Err(Silence::Unstarted(why)) => Err(why),
        Err(Silence::Failed) => Err(
            "the import and export worker could not start: reload the page to try again"
                .to_string(),
        ),
        Ok(Some(ToolReply::Unreadable) | None) => Err(
            "the import and export worker is from another version of this page: reload the page"
                .to_string(),
        ),
        Ok(Some(reply)) => Ok(reply),
    }
}
