//! The few browser calls the app makes: read and replace the URL's query,
//! copy text, fetch a text file. Each degrades to a no-op (or "no answer")
//! outside a browser window.

use wasm_bindgen::JsValue;

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// The current `location.search`, without the `?`.
pub fn query() -> String {
    window()
        .and_then(|w| w.location().search().ok())
        .map(|s| s.trim_start_matches('?').to_string())
        .unwrap_or_default()
}

/// Replaces the query in the address bar without a navigation.
pub fn replace_query(query: &str) {
    let Some(w) = window() else { return };
    let path = w.location().pathname().unwrap_or_default();
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

/// This page's address with `query` (what "Copy link" copies).
pub fn link(query: &str) -> String {
    let Some(w) = window() else {
        return String::new();
    };
    let l = w.location();
    let base = format!(
        "{}{}",
        l.origin().unwrap_or_default(),
        l.pathname().unwrap_or_default()
    );
    if query.is_empty() {
        base
    } else {
        format!("{base}?{query}")
    }
}

/// Writes `text` to the clipboard; resolves to whether it worked.
pub async fn copy(text: &str) -> bool {
    let Some(w) = window() else { return false };
    let promise = w.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// GETs `url` (a plain CORS request: no credentials, no custom headers, so
/// no preflight) and reads the body as text. `None` when no answer came:
/// offline, blocked, refused by CORS, or the body could not be read.
pub async fn fetch_text(url: &str) -> Option<(u16, String)> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let answer = JsFuture::from(window()?.fetch_with_str(url)).await.ok()?;
    let response: web_sys::Response = answer.dyn_into().ok()?;
    let body = JsFuture::from(response.text().ok()?).await.ok()?;
    Some((response.status(), body.as_string()?))
}

/// Milliseconds since navigation start (`performance.now()`): charts stamp
/// their last redraw with it, for the update-latency benchmark.
pub fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Saves `data` as a file named `filename`.
pub fn download(filename: &str, mime: &str, data: &str) {
    let url = format!(
        "data:{mime};charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(data))
    );
    download_url(filename, &url);
}

/// Saves what `url` points to as `filename` (a temporary `<a download>`).
pub fn download_url(filename: &str, url: &str) {
    use wasm_bindgen::JsCast;
    let Some(doc) = window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(a) = doc.create_element("a") else {
        return;
    };
    let a: web_sys::HtmlAnchorElement = a.unchecked_into();
    a.set_href(url);
    a.set_download(filename);
    a.click();
}

/// `text` as a JavaScript string literal, quoted by `JSON.stringify`
/// (Rust's `{:?}` would link its own escaping tables into the page).
fn js_string(text: &str) -> String {
    js_sys::JSON::stringify(&JsValue::from_str(text))
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// Starts the Web Worker `name` from Trunk's no-modules build next to the
/// page (`<name>.js` and `<name>_bg.wasm`).
pub fn spawn_worker(name: &str) -> Result<web_sys::Worker, String> {
    let href = window()
        .and_then(|w| w.location().href().ok())
        .ok_or("no page location")?;
    let base = web_sys::Url::new_with_base(".", &href)
        .map_err(|_| "bad page location")?
        .href();
    let script = format!(
        "importScripts({}); wasm_bindgen({});",
        js_string(&format!("{base}{name}.js")),
        js_string(&format!("{base}{name}_bg.wasm"))
    );
    let parts = js_sys::Array::of1(&JsValue::from_str(&script));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/javascript");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)
        .map_err(|_| "could not build the worker script")?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| "no blob URLs")?;
    web_sys::Worker::new(&url).map_err(|_| "this browser could not start a worker".to_string())
}
