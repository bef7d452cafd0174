//! The page's tools Web Worker: reads a `config.json` and writes the
//! estimate as JSON ([`vramfit_core::tools`]). Both need serde_json, which
//! lives here only, so the page's first download stays small and this one
//! is fetched when someone imports or exports.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

#[cfg(target_arch = "wasm32")]
mod worker {
    use vramfit_core::tools::{answer, ToolReply, ToolRequest};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    fn post(scope: &DedicatedWorkerGlobalScope, reply: &ToolReply) {
        let _ = scope.post_message(&JsValue::from_str(&reply.encode()));
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let handler = {
            let scope = scope.clone();
            Closure::<dyn Fn(MessageEvent)>::new(move |msg: MessageEvent| {
                let reply = match msg.data().as_string().and_then(|t| ToolRequest::decode(&t)) {
                    Some(request) => answer(&request),
                    // Never leave the page waiting.
                    None => ToolReply::Unreadable,
                };
                post(&scope, &reply);
            })
        };
        scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
        handler.forget();
        // Messages sent before the wasm listens are dropped: say when it does.
        post(&scope, &ToolReply::Ready);
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    worker::start();
}
