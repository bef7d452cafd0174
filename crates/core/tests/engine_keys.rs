//! Each engine's keys, from its table (`query/tasks.rs`): a key the engine
//! reads survives `decode(encode(s))`; a key it does not read comes back at
//! its default, with a notice saying why. Every engine, every inference
//! key, values from each end of the key's range and each choice.

use vramfit_core::infer::run::Engine;
use vramfit_core::query::{self, FieldKind, Group, Key, Tasks, FIELDS};
use vramfit_core::{decode, encode, Notice, RawQuery, Task};

/// Values to try for a key: its kind's ends and each of its choices.
fn values(kind: FieldKind) -> Vec<String> {
    match kind {
        FieldKind::Count { min, max } => vec![min.to_string(), max.min(1 << 20).to_string()],
        FieldKind::Decimal { min, max } => vec![min.to_string(), max.to_string()],
        FieldKind::Toggle => vec!["true".into(), "false".into()],
        FieldKind::Choice(options) => options.iter().map(|(v, _)| v.to_string()).collect(),
        FieldKind::Text => vec!["auto".into()],
        FieldKind::Model | FieldKind::Gpu => Vec::new(),
    }
}

/// The inference keys: the run's and each engine's own arguments.
fn infer_keys() -> impl Iterator<Item = &'static query::Field> {
    FIELDS.iter().filter(|f| {
        f.tasks == Tasks::Infer
            || f.tasks.include(Task::Infer) && matches!(f.group, Group::Run | Group::Infer)
            || f.group.engine().is_some()
    })
}

#[test]
fn a_key_read_survives_and_a_key_unread_is_said_and_reset() {
    for engine in Engine::ALL {
        let (mut read, mut unread) = (0, 0);
        for f in infer_keys()
            .filter(|f| !matches!(f.key, Key::Task | Key::Engine | Key::File | Key::FileBytes))
        {
            for v in values(f.kind) {
                let base = format!(
                    "task=infer&engine={}&model=llama3.1-8b&gpu=h100-sxm-80",
                    engine.key()
                );
                let q = format!("{base}&{}={v}", f.key);
                let d = decode(&RawQuery::parse(&q));
                let about: Vec<&Notice> = d
                    .notices
                    .iter()
                    .filter(|n| n.field_key() == Some(f.key))
                    .collect();
                if about.iter().any(|n| matches!(n, Notice::Invalid { .. })) {
                    // Refused with the others (a cache type the model does
                    // not allow): not this test's rule.
                    continue;
                }
                let s = d.scenario;
                let again = decode(&encode(&s));
                assert_eq!(again.scenario, s, "{q}: decode(encode(s)) != s");
                if query::reads(&s.infer, f.key) {
                    read += 1;
                    assert!(about.is_empty(), "{q}: read, yet {about:?}");
                    // Its value is kept: given again, the scenario is the same.
                    let written = f.value_of(&s);
                    let direct = decode(&RawQuery::parse(&format!(
                        "{base}&{}={}",
                        f.key,
                        written.clone().unwrap_or(f.shown_value(&s))
                    )));
                    assert_eq!(direct.scenario, s, "{q}: {written:?}");
                } else {
                    unread += 1;
                    let because = about.iter().find_map(|n| match n {
                        Notice::Unused { because, .. } => Some(because.clone()),
                        _ => None,
                    });
                    let because = because
                        .unwrap_or_else(|| panic!("{q}: unread without a notice: {about:?}"));
                    assert!(!because.is_empty(), "{q}: says no reason");
                    assert_eq!(encode(&s).get(f.key), None, "{q}: an unread key is written");
                    let without = decode(&RawQuery::parse(&base)).scenario;
                    assert_eq!(s, without, "{q}: an unread key changed the run");
                }
            }
        }
        // Both rules were exercised for this engine.
        assert!(
            read > 5 && unread > 20,
            "{engine:?}: read {read}, unread {unread}"
        );
    }
}
