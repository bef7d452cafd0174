//! The page's tools Web Worker: reads a `config.json`, writes the estimate
//! as JSON ([`vramfit_core::tools`]), and reads a GGUF file's header (a
//! file picked from disk, or a Hub file by range requests: [`header`]).
//! These need serde_json and the GGUF reader, which live here only, so the
//! page's first download stays small and this one is fetched when someone
//! imports, exports or reads a file.
//!
//! Messages: the page sends a [`ToolRequest`] as text, or, for a picked
//! file read as a paste, the array `["paste", blob, query]`, or, for a GGUF
//! header, the array `["gguf", source, name]` where `source` is a `Blob`
//! (a picked `File`, structured-cloned: nothing is copied until a slice is
//! read) or a URL string, and `name` is what the link records
//! (`hf:repo/path` or the file's name). Every answer is a [`ToolReply`]'s
//! text, [`ToolReply::Ready`] first.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod header;

#[cfg(target_arch = "wasm32")]
mod worker {
    use crate::header::{quote, read_header, Source, FIRST};
    use vramfit_core::tools::{answer, ToolReply, ToolRequest};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, WorkerGlobalScope};

    fn post(scope: &DedicatedWorkerGlobalScope, reply: &ToolReply) {
        let _ = scope.post_message(&JsValue::from_str(&reply.encode()));
    }

    /// A file picked from disk: read by slices of the `Blob`.
    struct Picked {
        blob: web_sys::Blob,
        name: String,
    }

    impl Source for Picked {
        async fn read(&mut self, from: u64, to: u64) -> Result<Vec<u8>, String> {
            let size = self.blob.size();
            // Offsets below 64 MiB: exact as f64.
            let end = (to as f64).min(size);
            let start = (from as f64).min(end);
            let failed = || {
                format!(
                    "{} could not be read (was it moved, changed or deleted since it was \
                     picked?): pick it again.",
                    quote(&self.name)
                )
            };
            let part = self
                .blob
                .slice_with_f64_and_f64(start, end)
                .map_err(|_| failed())?;
            let buf = JsFuture::from(part.array_buffer())
                .await
                .map_err(|_| failed())?;
            Ok(js_sys::Uint8Array::new(&buf).to_vec())
        }
    }

    /// A file on a server (the Hub): read by HTTP range requests, as
    /// huggingface.js reads safetensors headers. No credentials and no
    /// header but `Range` (CORS-safelisted for one range): no preflight.
    struct Ranged {
        scope: WorkerGlobalScope,
        url: String,
        name: String,
    }

    impl Ranged {
        /// The server's name, for messages (`huggingface.co`).
        fn host(&self) -> &str {
            let rest = self.url.split_once("//").map_or(&*self.url, |(_, r)| r);
            rest.split(['/', '?', '#']).next().unwrap_or(rest)
        }

        fn status_error(&self, status: u16) -> String {
            let (name, host) = (quote(&self.name), self.host());
            match status {
                404 => format!(
                    "{name} was not found on {host} (no such repository, or no such file on \
                     its main branch): check both, written as on the repository's Files page."
                ),
                401 | 403 => format!(
                    "{name} is in a gated or private repository (or one that does not exist: \
                     without a login {host} answers the same for both). Download the file while \
                     logged in and pick it from disk instead."
                ),
                code => format!("{host} answered HTTP {code} for {name}: try again later."),
            }
        }
    }

    /// The response's body, whole.
    async fn body(
        response: &web_sys::Response,
        failed: impl Fn() -> String,
    ) -> Result<Vec<u8>, String> {
        let promise = response.array_buffer().map_err(|_| failed())?;
        let buf = JsFuture::from(promise).await.map_err(|_| failed())?;
        Ok(js_sys::Uint8Array::new(&buf).to_vec())
    }

    impl Source for Ranged {
        async fn read(&mut self, from: u64, to: u64) -> Result<Vec<u8>, String> {
            let unreachable = || {
                format!(
                    "Could not reach {} for {} (offline, or the answer was blocked): try again \
                     when connected, or download the file and pick it from disk.",
                    self.host(),
                    quote(&self.name)
                )
            };
            let init = web_sys::RequestInit::new();
            let headers = web_sys::Headers::new().map_err(|_| unreachable())?;
            headers
                .set("Range", &format!("bytes={from}-{}", to.saturating_sub(1)))
                .map_err(|_| unreachable())?;
            init.set_headers(&headers);
            let answer = JsFuture::from(self.scope.fetch_with_str_and_init(&self.url, &init))
                .await
                .map_err(|_| unreachable())?;
            let response: web_sys::Response = answer.dyn_into().map_err(|_| unreachable())?;
            match response.status() {
                206 => body(&response, unreachable).await,
                // The whole file: taken only when it is no longer than what
                // was asked for anyway.
                200 => {
                    let length = response
                        .headers()
                        .get("content-length")
                        .ok()
                        .flatten()
                        .and_then(|l| l.trim().parse::<u64>().ok());
                    if length.is_some_and(|n| n <= to) {
                        let all = body(&response, unreachable).await?;
                        let skip = usize::try_from(from).unwrap_or(usize::MAX);
                        return Ok(all.get(skip..).unwrap_or_default().to_vec());
                    }
                    if let Some(stream) = response.body() {
                        let _ = stream.cancel();
                    }
                    Err(format!(
                        "{} sent the whole of {} instead of the part asked for (it did not \
                         answer a range request), so the page stopped rather than download the \
                         file: download it and pick it from disk instead.",
                        self.host(),
                        quote(&self.name)
                    ))
                }
                // The range starts at or past the file's end.
                416 => Ok(Vec::new()),
                status => Err(self.status_error(status)),
            }
        }
    }

    /// A GGUF read request: its source and name.
    enum Gguf {
        Picked(Picked),
        Ranged(Ranged),
    }

    fn gguf_request(data: &JsValue, scope: &WorkerGlobalScope) -> Option<Gguf> {
        if !js_sys::Array::is_array(data) {
            return None;
        }
        let parts: &js_sys::Array = data.unchecked_ref();
        if parts.length() != 3 || parts.get(0).as_string().as_deref() != Some("gguf") {
            return None;
        }
        let name = parts.get(2).as_string()?;
        let source = parts.get(1);
        Some(match source.as_string() {
            Some(url) => Gguf::Ranged(Ranged {
                scope: scope.clone(),
                url,
                name,
            }),
            None => Gguf::Picked(Picked {
                blob: source.dyn_into().ok()?,
                name,
            }),
        })
    }

    /// A picked file to read as a paste: `["paste", blob, query]`.
    fn paste_request(data: &JsValue) -> Option<(web_sys::Blob, String)> {
        if !js_sys::Array::is_array(data) {
            return None;
        }
        let parts: &js_sys::Array = data.unchecked_ref();
        if parts.length() != 3 || parts.get(0).as_string().as_deref() != Some("paste") {
            return None;
        }
        Some((parts.get(1).dyn_into().ok()?, parts.get(2).as_string()?))
    }

    /// A picked file's bytes read as a paste over the page's `query`; a
    /// file over the paste limit is refused by its size, unread.
    async fn paste_file(blob: web_sys::Blob, query: &str) -> ToolReply {
        use vramfit_core::paste::{PasteError, MAX_PASTE_BYTES};
        // A file's size in bytes: a whole number well inside f64's.
        let size = blob.size() as usize;
        if size > MAX_PASTE_BYTES {
            return ToolReply::Refused {
                why: PasteError::TooLarge { bytes: size }.to_string(),
                offer_llama: false,
            };
        }
        match JsFuture::from(blob.array_buffer()).await {
            Ok(buf) => vramfit_core::tools::paste_bytes_reply(
                &js_sys::Uint8Array::new(&buf).to_vec(),
                query,
            ),
            Err(_) => ToolReply::Refused {
                why: "the file could not be read: pick it again".into(),
                offer_llama: false,
            },
        }
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let handler = {
            let scope = scope.clone();
            Closure::<dyn Fn(MessageEvent)>::new(move |msg: MessageEvent| {
                let data = msg.data();
                if let Some(text) = data.as_string() {
                    let reply = match ToolRequest::decode(&text) {
                        Some(request) => answer(&request),
                        // Never leave the page waiting.
                        None => ToolReply::Unreadable,
                    };
                    post(&scope, &reply);
                    return;
                }
                if let Some((blob, query)) = paste_request(&data) {
                    let scope = scope.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        post(&scope, &paste_file(blob, &query).await);
                    });
                    return;
                }
                let Some(request) = gguf_request(&data, &scope) else {
                    post(&scope, &ToolReply::Unreadable);
                    return;
                };
                let scope = scope.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let reply = match request {
                        Gguf::Picked(mut p) => {
                            let name = p.name.clone();
                            read_header(&mut p, &name, FIRST).await
                        }
                        Gguf::Ranged(mut r) => {
                            let name = r.name.clone();
                            read_header(&mut r, &name, FIRST).await
                        }
                    };
                    post(&scope, &reply);
                });
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
