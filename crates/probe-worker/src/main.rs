//! The probe's Web Worker. The page posts [`Request`]s; this answers with
//! [`Reply`]s: the adapter report, progress after every chunk, and the
//! result. wgpu lives here only, so the page downloads it when the probe is
//! opened, and allocation never blocks the page's thread.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

#[cfg(target_arch = "wasm32")]
mod worker {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use vramfit_probe::protocol::{decode, encode, Reply, Request};
    use vramfit_probe::AdapterReport;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    fn post(scope: &DedicatedWorkerGlobalScope, reply: &Reply) {
        let _ = scope.post_message(&JsValue::from_str(&encode(reply)));
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let cancel = Rc::new(Cell::new(false));
        let running = Rc::new(Cell::new(false));
        // The adapter last reported, for the probe's JSON document.
        let adapter: Rc<RefCell<AdapterReport>> = Rc::default();
        let handler = {
            let scope = scope.clone();
            Closure::<dyn Fn(MessageEvent)>::new(move |msg: MessageEvent| {
                let Some(request) = msg.data().as_string().and_then(|t| decode::<Request>(&t))
                else {
                    return;
                };
                match request {
                    Request::Cancel => cancel.set(true),
                    Request::Report => {
                        let (scope, adapter) = (scope.clone(), adapter.clone());
                        wasm_bindgen_futures::spawn_local(async move {
                            let reply = match vramfit_probe::report().await {
                                Ok(report) => {
                                    adapter.replace(report.clone());
                                    Reply::Report {
                                        json: report.to_json(),
                                        report,
                                    }
                                }
                                Err(outcome) => Reply::Missing { outcome },
                            };
                            post(&scope, &reply);
                        });
                    }
                    // One probe at a time.
                    Request::Probe { config } if !running.get() => {
                        cancel.set(false);
                        running.set(true);
                        let (scope, cancel, running, adapter) = (
                            scope.clone(),
                            cancel.clone(),
                            running.clone(),
                            adapter.clone(),
                        );
                        wasm_bindgen_futures::spawn_local(async move {
                            let progress_scope = scope.clone();
                            let result = vramfit_probe::probe(
                                config,
                                move |progress| {
                                    post(&progress_scope, &Reply::Progress { progress })
                                },
                                move || cancel.get(),
                            )
                            .await;
                            running.set(false);
                            let json =
                                vramfit_probe::document_json(&adapter.borrow(), &config, &result);
                            post(&scope, &Reply::Done { result, json });
                        });
                    }
                    Request::Probe { .. } => {}
                }
            })
        };
        scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
        handler.forget();
        // Messages sent before the wasm listens are dropped: say when it does.
        post(&scope, &Reply::Ready);
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    worker::start();
}
