//! The page's side of its Web Workers (the probe's and the tools'), written
//! once: start a worker by name, hold what is sent until the worker says it
//! listens (messages posted before its wasm runs are dropped), hand each
//! reply and a failure to load to callbacks, and terminate it when its
//! handle is dropped. [`ask`] is one request and its one answer.

use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// What the page reads from one kind of worker.
pub trait Protocol: 'static {
    /// The worker's name: Trunk builds `<NAME>.js` and `<NAME>_bg.wasm`.
    const NAME: &'static str;
    type Reply: 'static;
    /// A reply's text; `None` for anything that is not one.
    fn decode(text: &str) -> Option<Self::Reply>;
    /// Whether `reply` says the worker listens.
    fn is_ready(reply: &Self::Reply) -> bool;
}

/// What is posted before the worker listens waits here.
#[derive(Default)]
struct Inbox {
    ready: bool,
    waiting: Vec<JsValue>,
}

type OnMessage = Closure<dyn FnMut(web_sys::MessageEvent)>;
type OnError = Closure<dyn FnMut(JsValue)>;

/// A started worker; dropping it terminates the worker.
pub struct Worker {
    worker: web_sys::Worker,
    inbox: Rc<RefCell<Inbox>>,
    _handlers: (OnMessage, OnError),
}

impl Worker {
    /// Starts `P`'s worker. `on_reply` receives every message but the one
    /// that says it is ready (`None`: one that does not decode);
    /// `on_error`, that its script failed to load or run.
    pub fn start<P: Protocol>(
        mut on_reply: impl FnMut(Option<P::Reply>) + 'static,
        on_error: impl FnMut() + 'static,
    ) -> Result<Worker, String> {
        // Hands on a reply; `true` for the one that says it is ready.
        let read = move |text: Option<String>| {
            let reply = text.and_then(|t| P::decode(&t));
            let ready = reply.as_ref().is_some_and(P::is_ready);
            if !ready {
                on_reply(reply);
            }
            ready
        };
        Worker::listen(P::NAME, Box::new(read), Box::new(on_error))
    }

    /// [`Worker::start`], the same for every protocol.
    fn listen(
        name: &str,
        mut read: Box<dyn FnMut(Option<String>) -> bool>,
        mut on_error: Box<dyn FnMut()>,
    ) -> Result<Worker, String> {
        let worker = crate::browser::spawn_worker(name)?;
        let inbox: Rc<RefCell<Inbox>> = Rc::default();
        let on_message = {
            let (worker, inbox) = (worker.clone(), Rc::clone(&inbox));
            OnMessage::new(move |ev: web_sys::MessageEvent| {
                if !read(ev.data().as_string()) {
                    return;
                }
                let mut inbox = inbox.borrow_mut();
                inbox.ready = true;
                for message in inbox.waiting.drain(..) {
                    let _ = worker.post_message(&message);
                }
            })
        };
        let on_error = OnError::new(move |_| on_error());
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Worker {
            worker,
            inbox,
            _handlers: (on_message, on_error),
        })
    }

    /// Posts `message` (a request's text, or what the worker reads
    /// structured-cloned), now or as soon as the worker listens.
    pub fn send(&self, message: JsValue) {
        let mut inbox = self.inbox.borrow_mut();
        if inbox.ready {
            let _ = self.worker.post_message(&message);
        } else {
            inbox.waiting.push(message);
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// Why [`ask`] has no answer.
pub enum Silence {
    /// The worker could not be started, and why.
    Unstarted(String),
    /// Its script failed to load or run.
    Failed,
}

/// Starts a worker, sends it `message` and resolves to its first reply
/// (`None`: one that does not decode); the worker is then terminated.
pub async fn ask<P: Protocol>(message: JsValue) -> Result<Option<P::Reply>, Silence> {
    let answer: Rc<RefCell<Option<Option<P::Reply>>>> = Rc::default();
    let wake: Rc<RefCell<Option<js_sys::Function>>> = Rc::default();
    let settled = js_sys::Promise::new(&mut |resolve, _| *wake.borrow_mut() = Some(resolve));
    let settle = move || {
        if let Some(resolve) = wake.borrow_mut().take() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    };
    let on_reply = {
        let (answer, settle) = (Rc::clone(&answer), settle.clone());
        move |reply| {
            answer.borrow_mut().get_or_insert(reply);
            settle();
        }
    };
    let worker = Worker::start::<P>(on_reply, settle).map_err(Silence::Unstarted)?;
    worker.send(message);
    let _ = wasm_bindgen_futures::JsFuture::from(settled).await;
    drop(worker);
    answer.take().ok_or(Silence::Failed)
}
