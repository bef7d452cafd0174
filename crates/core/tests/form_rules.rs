//! The form's rules around the codec's edits (`query::form`), natively:
//! which inference keys a scenario does not read, read from the engines'
//! key table, is what decoding a probed form says (the page's former rule,
//! kept here as the oracle); unread keys go aside and come back; each kind
//! of engine keeps its own weights.

use vramfit_core::infer::run::Engine;
use vramfit_core::query::form::{infer_keys, settle, switch_weights, unread, Aside};
use vramfit_core::query::{self, Field, FieldError, FieldKind, Key};
use vramfit_core::{Notice, RawQuery, Scenario, Task};

/// The page's former rule: every key the form leaves out given a value that
/// keeps the scenario (`kv_dtype` at fp8, which transformers refuses), the
/// form decoded once more, and the keys said unused or refused collected.
fn probed(form: &RawQuery, s: &Scenario) -> Vec<Key> {
    if s.task != Task::Infer {
        return Vec::new();
    }
    let value = |f: &Field| -> Option<String> {
        if f.key == Key::KvDtype {
            return Some("fp8".into());
        }
        let fallback: Vec<String> = match f.kind {
            FieldKind::Count { min, .. } => vec![min.to_string()],
            FieldKind::Decimal { min, .. } => vec![min.to_string()],
            FieldKind::Toggle => vec!["false".into()],
            FieldKind::Choice(options) => vec![options.first().map(|(v, _)| v.to_string())?],
            FieldKind::Text => vramfit_core::query::form::TEXT_PROBES
                .iter()
                .map(|v| v.to_string())
                .collect(),
            FieldKind::Model | FieldKind::Gpu => return None,
        };
        std::iter::once(f.shown_value(s))
            .chain(fallback)
            .find(|v| f.validate(v).is_ok())
    };
    let mut probe = form.clone();
    let mut given = Vec::new();
    for f in infer_keys() {
        if form.get(f.key).is_none() {
            if let Some(v) = value(f) {
                probe.set(f.key, &v);
                given.push(f.key);
            }
        }
    }
    let mut out = Vec::new();
    for n in query::decode(&probe).notices {
        let key = match n {
            Notice::Unused { key, .. } => key,
            Notice::Invalid {
                key,
                error: FieldError::Conflict(_),
                ..
            } if given.contains(&key) => key,
            _ => continue,
        };
        if !out.contains(&key) && infer_keys().any(|f| f.key == key) {
            out.push(key);
        }
    }
    out
}

fn sorted(mut v: Vec<Key>) -> Vec<&'static str> {
    v.sort_by_key(|k| k.text());
    v.into_iter().map(Key::text).collect()
}

#[test]
fn the_unread_keys_come_from_the_table_as_decoding_a_probe_said() {
    let models = [
        "llama3.1-8b",
        "qwen3-30b-a3b",
        "gemma3-1b",
        "deepseek-v2-lite",
        "gpt-oss-20b",
    ];
    let runs = [
        "",
        "&weights=gptq&group_size=64",
        "&weights=nf4&double_quant=true",
        "&weights=awq&kv_dtype=fp8",
        "&prompt=4096&new=64&batch=4",
        "&ctx=8192&max_num_seqs=16",
        "&weights=q4_k_m&ctx=4096&n_gpu_layers=10&fit=false",
        "&cache_type_k=q8_0&cache_type_v=q8_0&flash_attn=on",
        "&num_ctx=8192&num_gpu=20&kv_cache_type=q8_0",
        "&weights=4bit&kv_bits=8",
        "&attn=eager&min_new=5",
    ];
    let mut checked = 0;
    for engine in Engine::ALL {
        for m in models {
            for r in runs {
                let form =
                    RawQuery::parse(&format!("task=infer&engine={}&model={m}{r}", engine.key()));
                let s = query::decode(&form).scenario;
                assert_eq!(
                    sorted(unread(&form, &s)),
                    sorted(probed(&form, &s)),
                    "{form:?}"
                );
                checked += 1;
            }
        }
    }
    // A training scenario reads no inference key to hide.
    let form = RawQuery::parse("model=llama3.1-8b&batch=4");
    assert!(unread(&form, &query::decode(&form).scenario).is_empty());
    assert_eq!(checked, 5 * 5 * 11);
}

#[test]
fn settle_sets_unread_keys_aside_and_brings_them_back() {
    let mut form = RawQuery::parse("task=infer&model=llama3.2-1b&weights=gptq&group_size=64");
    let mut aside = Aside::default();
    let s = query::decode(&form).scenario;
    let before = unread(&form, &s);
    assert!(!before.contains(&Key::GroupSize));
    assert!(before.contains(&Key::Ctx), "transformers does not read ctx");
    // bf16 weights have no groups: group_size goes aside...
    query::edit(&mut form, Key::Weights, "bf16");
    settle(&mut form, &mut aside, (s.task, &before), &[Key::Weights]);
    assert_eq!(form.get(Key::GroupSize), None);
    // ...and comes back with GPTQ.
    let s = query::decode(&form).scenario;
    let before = unread(&form, &s);
    query::edit(&mut form, Key::Weights, "gptq");
    settle(&mut form, &mut aside, (s.task, &before), &[Key::Weights]);
    assert_eq!(form.get(Key::GroupSize), Some("64"));
    assert!(query::decode(&form).notices.is_empty());
}

#[test]
fn each_kind_of_engine_keeps_its_own_weights() {
    let mut form = RawQuery::parse("task=infer&model=qwen3-8b&weights=nf4");
    let mut aside = Aside::default();
    // To llama.cpp: a checkpoint's nf4 is no GGUF file type; its default.
    query::edit(&mut form, Key::Engine, "llamacpp");
    switch_weights(&mut form, &mut aside, Engine::Transformers, &[Key::Engine]);
    assert_eq!(form.get(Key::Weights), None);
    assert!(query::decode(&form).notices.is_empty());
    query::edit(&mut form, Key::Weights, "q8_0");
    // Ollama reads the same files: q8_0 stays.
    query::edit(&mut form, Key::Engine, "ollama");
    switch_weights(&mut form, &mut aside, Engine::Llamacpp, &[Key::Engine]);
    assert_eq!(form.get(Key::Weights), Some("q8_0"));
    // Back to transformers: nf4 again; and to llama.cpp: q8_0 again.
    query::edit(&mut form, Key::Engine, "transformers");
    switch_weights(&mut form, &mut aside, Engine::Ollama, &[Key::Engine]);
    assert_eq!(form.get(Key::Weights), Some("nf4"));
    query::edit(&mut form, Key::Engine, "llamacpp");
    switch_weights(&mut form, &mut aside, Engine::Transformers, &[Key::Engine]);
    assert_eq!(form.get(Key::Weights), Some("q8_0"));
    // Weights typed with the engine are kept as typed.
    query::edit(&mut form, Key::Engine, "mlx");
    query::edit(&mut form, Key::Weights, "8bit");
    switch_weights(
        &mut form,
        &mut aside,
        Engine::Llamacpp,
        &[Key::Engine, Key::Weights],
    );
    assert_eq!(form.get(Key::Weights), Some("8bit"));
}
