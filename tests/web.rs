//! Component tests in a real headless Chromium (wasm-bindgen-test): the app
//! mounted into the document, read through its data-testid hooks.
#![cfg(target_arch = "wasm32")]

use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::Estimates;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("document")
}

/// Lets Leptos's effects run.
async fn tick() {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        let _ = web_sys::window()
            .expect("window")
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 20);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(p).await;
}

/// Mounts the app as if opened at `?query`, in a fresh container.
fn mount_at(query: &str) -> web_sys::HtmlElement {
    let w = web_sys::window().expect("window");
    let path = w.location().pathname().expect("path");
    w.history()
        .expect("history")
        .replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}?{query}")),
        )
        .expect("replaceState");
    let div: web_sys::HtmlElement = document()
        .create_element("div")
        .expect("div")
        .unchecked_into();
    document()
        .body()
        .expect("body")
        .append_child(&div)
        .expect("append");
    let handle = leptos::mount::mount_to(div.clone(), vramfit_web::App);
    handle.forget();
    div
}

fn attr(root: &web_sys::HtmlElement, selector: &str, name: &str) -> Option<String> {
    root.query_selector(selector)
        .ok()
        .flatten()?
        .get_attribute(name)
}

fn text(root: &web_sys::HtmlElement, selector: &str) -> String {
    root.query_selector(selector)
        .ok()
        .flatten()
        .and_then(|e| e.text_content())
        .unwrap_or_default()
}

fn expected_peak(query: &str) -> String {
    let s = decode_strict(&RawQuery::parse(query)).expect("valid");
    let all = Estimates::new(&s);
    all.primary()
        .expect("estimate")
        .peak_total_bytes
        .get()
        .to_string()
}

#[wasm_bindgen_test]
async fn shows_the_estimate_of_the_url() {
    let q = "params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048";
    let root = mount_at(q);
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak(q))
    );
    assert_eq!(
        attr(&root, "[data-testid=row-activations]", "data-bytes").as_deref(),
        Some("83650478080")
    );
    // The chart reports the bands it drew.
    assert_eq!(
        attr(&root, "[data-testid=phase-chart]", "data-bands").as_deref(),
        Some("5")
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn typing_updates_the_total_and_the_url() {
    let root = mount_at("params=1e9&dtype=fp32&optim=sgd&batch=1&seq=128");
    tick().await;
    let input: web_sys::HtmlInputElement = root
        .query_selector("[name=batch]")
        .ok()
        .flatten()
        .expect("batch input")
        .unchecked_into();
    input.set_value("4");
    input
        .dispatch_event(&web_sys::Event::new("input").expect("event"))
        .expect("dispatch");
    tick().await;
    let q = "params=1e9&dtype=fp32&optim=sgd&batch=4&seq=128";
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak(q))
    );
    let search = web_sys::window()
        .expect("window")
        .location()
        .search()
        .expect("search");
    assert_eq!(search, format!("?{q}"));
    root.remove();
}

#[wasm_bindgen_test]
async fn a_bad_value_is_explained_next_to_its_field() {
    let root = mount_at("batch=-2&dtype=fp32&nonsense=1");
    tick().await;
    assert_eq!(
        text(&root, "[data-testid=error-batch]"),
        "batch: `-2` must be at least 1; using the default 8"
    );
    assert!(
        text(&root, "[data-testid=link-notices]").contains("unknown parameter `nonsense`; ignored")
    );
    assert_eq!(
        attr(&root, "[name=batch]", "aria-invalid").as_deref(),
        Some("true")
    );
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak("batch=8&dtype=fp32"))
    );
    root.remove();
}

fn click(root: &web_sys::HtmlElement, selector: &str) {
    let el: web_sys::HtmlElement = root
        .query_selector(selector)
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no {selector}"))
        .unchecked_into();
    el.click();
}

#[wasm_bindgen_test]
async fn the_verdict_compares_with_the_chosen_capacity() {
    let root = mount_at("model=gpt2-124m&gpu=custom&capacity_gib=1");
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=fit-verdict]", "data-fits").as_deref(),
        Some("false")
    );
    assert_eq!(
        attr(&root, "[data-testid=fit-verdict]", "data-bytes").as_deref(),
        Some("1073741824")
    );
    assert!(text(&root, "[data-testid=fit-verdict]").starts_with("Does not fit: short by"));
    root.remove();
}

#[wasm_bindgen_test]
async fn a_suggestion_applies_its_change() {
    let root =
        mount_at("model=llama3.2-1b&dtype=amp_bf16&batch=8&seq=2048&gpu=custom&capacity_gib=48");
    tick().await;
    let expected = attr(&root, "[data-testid=suggestion]", "data-peak").expect("a suggestion");
    click(&root, "[data-testid=suggestion]");
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected)
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn a_note_is_shown_next_to_its_field_and_in_the_results() {
    let root = mount_at("model=llama3.2-1b&seq=200000");
    tick().await;
    let note = "seq 200000 is longer than the 131072 tokens the model was trained for";
    assert!(
        text(&root, "[data-testid=note-seq]").starts_with(note),
        "{}",
        text(&root, "[data-testid=note-seq]")
    );
    assert!(text(&root, "[data-testid=notes] li[data-key=seq]").starts_with(note));
    assert_eq!(text(&root, "[data-testid=error-seq]"), "", "not an error");
    assert_eq!(
        attr(&root, "[name=seq]", "aria-invalid").as_deref(),
        Some("false")
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn a_mixture_of_experts_shows_its_active_parameters() {
    let root = mount_at("model=mixtral-8x7b");
    tick().await;
    let a = vramfit_core::model::presets::preset("mixtral-8x7b")
        .expect("preset")
        .arch;
    assert_eq!(
        attr(&root, "[data-testid=param-count]", "data-count"),
        Some(a.params().to_string())
    );
    assert_eq!(
        attr(&root, "[data-testid=param-count]", "data-active"),
        Some(a.active_params().to_string())
    );
    assert!(text(&root, "[data-testid=param-count]").contains(" active per token) · Mixtral 8x7B"));
    root.remove();
}

#[wasm_bindgen_test]
async fn the_presets_are_listed_under_their_families() {
    let root = mount_at("model=qwen3-8b");
    tick().await;
    let list = root
        .query_selector("[data-testid=model-browse]")
        .ok()
        .flatten()
        .expect("the family list")
        .inner_html();
    let mut families: Vec<_> = vramfit_core::model::presets::PRESETS
        .iter()
        .map(|p| p.arch.family)
        .collect();
    families.sort_by_key(|f| f.key());
    families.dedup();
    assert_eq!(list.matches("<optgroup").count(), families.len());
    assert!(
        list.contains("<optgroup label=\"Llama\"><option value=\"llama-20m\">"),
        "{list}"
    );
    // Every preset once, and the placeholder.
    assert_eq!(
        list.matches("<option").count(),
        vramfit_core::model::presets::PRESETS.len() + 1
    );
    assert_eq!(
        attr(&root, "[data-testid=model-browse] optgroup", "label").as_deref(),
        Some("Llama")
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn an_invalid_hub_id_is_refused_before_anything_is_fetched() {
    let root = mount_at("model=llama3.2-1b");
    tick().await;
    let input: web_sys::HtmlInputElement = root
        .query_selector("[data-testid=hub-id]")
        .ok()
        .flatten()
        .expect("hub id box")
        .unchecked_into();
    input.set_value("not an id");
    input
        .dispatch_event(&web_sys::Event::new("input").expect("event"))
        .expect("dispatch");
    click(&root, "[data-testid=hub-load]");
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=hub-status]", "data-state").as_deref(),
        Some("error")
    );
    assert!(text(&root, "[data-testid=hub-status]")
        .contains("`not an id` is not a Hugging Face model id"));
    let search = web_sys::window()
        .expect("window")
        .location()
        .search()
        .expect("search");
    assert!(!search.contains("hub="), "{search}");
    root.remove();
}

#[wasm_bindgen_test]
async fn an_inference_link_shows_its_panels_and_not_the_training_ones() {
    let q = "task=infer&model=llama3.2-1b&prompt=2048&new=128";
    let root = mount_at(q);
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak(q))
    );
    assert!(root
        .query_selector("[data-testid=infer-panel]")
        .ok()
        .flatten()
        .is_some());
    for training in ["dtype", "optim", "seq", "gpus"] {
        let sel = format!("[name={training}]");
        assert!(
            root.query_selector(&sel).ok().flatten().is_none(),
            "{training}"
        );
    }
    // transformers reads neither vLLM's context nor its engine arguments.
    assert!(root.query_selector("[name=ctx]").ok().flatten().is_none());
    assert!(root
        .query_selector("[data-testid=engine-panel]")
        .ok()
        .flatten()
        .is_none());
    assert!(attr(&root, "[data-testid=context-chart]", "data-bands").is_some_and(|b| !b.is_empty()));
    root.remove();
}

#[wasm_bindgen_test]
async fn switching_the_task_sets_the_other_settings_aside_and_back() {
    let root = mount_at("model=gpt2-124m&dtype=fp32&seq=512");
    tick().await;
    click(&root, "input[name=task][value=infer]");
    tick().await;
    tick().await;
    let search = || {
        web_sys::window()
            .expect("window")
            .location()
            .search()
            .expect("search")
    };
    assert!(search().contains("task=infer"), "{}", search());
    assert!(!search().contains("dtype"), "{}", search());
    assert!(root
        .query_selector("[name=prompt]")
        .ok()
        .flatten()
        .is_some());
    click(&root, "input[name=task][value=train]");
    tick().await;
    tick().await;
    assert!(
        search().contains("dtype=fp32") && search().contains("seq=512"),
        "{}",
        search()
    );
    root.remove();
}

/// Issue 16: the software stack is offered in plain words (the release
/// ranges, the trainers and the sharding library by name), a link that
/// names the whole stack shows its estimate, and choosing another release
/// is the same as typing it.
#[wasm_bindgen_test]
async fn the_stack_is_offered_in_plain_words() {
    let q = "model=mistral-7b&transformers=4.48&trainer=trl&attn=flash_attention_2&shard=fsdp1\
             &gpus=2&zero=3&lora_r=16&lora_targets=attn&grad_ckpt=true";
    let root = mount_at(q);
    tick().await;
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak(q))
    );
    let options = |name: &str| {
        root.query_selector(&format!("select[name={name}]"))
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("no {name} choice"))
            .inner_html()
    };
    for (name, label) in [
        ("transformers", ">5.x<"),
        ("transformers", ">4.54 to 4.57 (the last 4.x)<"),
        ("transformers", ">4.46 to 4.48<"),
        ("trainer", ">Hugging Face Trainer<"),
        ("trainer", ">TRL SFTTrainer<"),
        ("shard", ">FSDP1 (accelerate's FSDP plugin)<"),
        (
            "shard",
            ">FSDP2 (fully_shard, accelerate's fsdp_version 2)<",
        ),
    ] {
        assert!(options(name).contains(label), "{name}: {}", options(name));
    }
    // The stack has its own panel (read as text: Leptos may mark a
    // component's children with empty comments).
    let headings = root.query_selector_all("summary > h2").expect("headings");
    let titles: Vec<String> = (0..headings.length())
        .filter_map(|i| headings.item(i)?.text_content())
        .collect();
    assert!(titles.iter().any(|t| t == "Software stack"), "{titles:?}");
    let select = root
        .query_selector("select[name=transformers]")
        .ok()
        .flatten()
        .expect("transformers choice");
    let value = || {
        js_sys::Reflect::get(&select, &"value".into())
            .ok()?
            .as_string()
    };
    assert_eq!(value().as_deref(), Some("4.48"));
    js_sys::Reflect::set(&select, &"value".into(), &"5".into()).expect("set value");
    select
        .dispatch_event(&web_sys::Event::new("change").expect("event"))
        .expect("dispatch");
    tick().await;
    let v5 = q.replace("transformers=4.48", "transformers=5");
    assert_ne!(expected_peak(&v5), expected_peak(q));
    assert_eq!(
        attr(&root, "[data-testid=peak-total]", "data-bytes"),
        Some(expected_peak(&v5))
    );
    root.remove();
}
