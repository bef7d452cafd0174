//! The few browser calls the app makes: read and replace the URL's query,
//! copy text. Each degrades to a no-op outside a browser window.

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

/// The full current URL.
pub fn href() -> String {
    window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// Writes `text` to the clipboard; resolves to whether it worked.
pub async fn copy(text: &str) -> bool {
    let Some(w) = window() else { return false };
    let promise = w.navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}
