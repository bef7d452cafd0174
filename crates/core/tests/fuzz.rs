//! The project's own fuzz campaign (issue 9): generated query strings and
//! config.json texts, from the codec's own tables, through decode, both
//! estimators, the explanation, the steps timeline and (now and then) the
//! solver, with overflow checks on (test profile). Invariants:
//! - nothing panics;
//! - every phase's components sum to its bytes, every breakdown row to the
//!   peak, every row's terms to the row;
//! - `decode(encode(s)) == s`, with every key;
//! - peaks never fall when batch or sequence grow;
//! - a config.json never imports what the codec would refuse;
//! - every message is under 2 KB;
//! - the page↔worker messages and typed decimals read any text safely.
//!
//! Cases per run: `VRAMFIT_FUZZ_CASES` (default 20 000 query strings and a
//! quarter as many configs), seed `VRAMFIT_FUZZ_SEED` (default fixed, so CI
//! is repeatable). The long run (10^6 cases) is in the README. Every input
//! that once broke an invariant is kept in `fuzz_corpus/` and checked on
//! every run.

use vramfit_core::fuzz::{self, Rng};
use vramfit_core::import;
use vramfit_core::model::hf_config::Reading;
use vramfit_core::query::{decode, decode_strict, encode, RawQuery};
use vramfit_core::report::Component;
use vramfit_core::tools::{ToolReply, ToolRequest};
use vramfit_core::train::steps;
use vramfit_core::units::Decimal;
use vramfit_core::{explain, solve, Estimate, Estimates, Scenario};

const MAX_MESSAGE: usize = 2048;

fn cases() -> u64 {
    std::env::var("VRAMFIT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn seed() -> u64 {
    std::env::var("VRAMFIT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_F00D)
}

fn short(m: &str, what: &str, input: &str) {
    assert!(
        m.len() < MAX_MESSAGE,
        "{what}: a {}-byte message for {input:?}",
        m.len()
    );
}

/// The invariants of one estimate.
fn check_estimate(s: &Scenario, e: &Estimate, input: &str) {
    for p in &e.phases {
        assert_eq!(p.components.total(), p.peak_bytes, "{input}: {p:?}");
        assert_eq!(p.end_components.total(), p.end_bytes, "{input}: {p:?}");
    }
    let peak = e.peak().expect("a peak");
    assert_eq!(peak.peak_bytes, e.peak_total_bytes, "{input}");
    let rows = explain::rows(s, e);
    let sum: u64 = rows.iter().map(|r| r.bytes.get()).sum();
    assert_eq!(sum, e.peak_total_bytes.get(), "{input}: rows {rows:?}");
    for r in rows.iter().filter(|r| r.component != Component::Overhead) {
        let terms: u128 = r.terms.iter().map(|(_, t)| t.bytes()).sum();
        assert_eq!(terms, u128::from(r.bytes.get()), "{input}: {r:?}");
        for (_, t) in &r.terms {
            let product = t
                .factors()
                .fold(1u128, |p, f| p.saturating_mul(u128::from(f.value)));
            assert_eq!(
                t.bytes(),
                product.div_ceil(u128::from(t.divisor())),
                "{input}: {t:?}"
            );
        }
    }
    match steps::timeline(s, e, s.view.capacity.bytes()) {
        Ok(t) => assert!(t.points.iter().all(|p| p.x.is_finite()), "{input}"),
        Err(e) => short(&e.to_string(), "timeline", input),
    }
}

/// One query string through everything.
fn check_query(q: &str, r: &mut Rng) {
    // The page↔worker messages and typed decimals take any text without
    // panicking, and a decoded message reads back as itself.
    if let Some(m) = ToolRequest::decode(q) {
        assert_eq!(ToolRequest::decode(&m.encode()), Some(m), "{q}");
    }
    if let Some(m) = ToolReply::decode(q) {
        assert_eq!(ToolReply::decode(&m.encode()), Some(m), "{q}");
    }
    for (_, v) in RawQuery::parse(q).pairs() {
        if let Some(d) = Decimal::parse(v) {
            let _ = (d.count(0), d.count(12), d.times_floor(1 << 30));
        }
    }
    let d = decode(&RawQuery::parse(q));
    for n in &d.notices {
        short(&n.to_string(), "notice", q);
    }
    for n in &d.notes {
        short(&n.to_string(), "note", q);
    }
    let s = d.scenario;
    let canonical = encode(&s).to_query_string();
    assert_eq!(
        decode_strict(&RawQuery::parse(&canonical)),
        Ok(s),
        "round trip of {q:?} via {canonical:?}"
    );
    let all = Estimates::new(&s);
    for err in [&all.vramfit, &all.seed]
        .into_iter()
        .filter_map(|x| x.as_ref().err())
    {
        short(&err.to_string(), "estimate error", q);
    }
    let Ok(e) = all.primary() else {
        return;
    };
    check_estimate(&s, e, q);
    // Monotone: one more sequence or token never needs less.
    for key in ["batch", "seq"] {
        let mut raw = RawQuery::parse(&canonical);
        let now = raw
            .get(key)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        raw.set(key, &(now + 1).to_string());
        let more = decode(&raw);
        if !more.notices.is_empty() {
            continue;
        }
        if let Ok(bigger) = Estimates::new(&more.scenario).primary() {
            if bigger.method == e.method {
                assert!(
                    bigger.peak_total_bytes >= e.peak_total_bytes,
                    "{key}+1 lowers the peak of {canonical}"
                );
            }
        }
    }
    if r.one_in(50) {
        let cap = s.view.capacity.bytes();
        let _ = solve::max_batch(&s, cap);
        let _ = solve::max_seq(&s, cap);
        for x in solve::suggestions(&s, cap) {
            short(&x.label, "suggestion", q);
        }
    }
}

/// One config.json through the importer, both ways of reading it.
fn check_config(text: &str) {
    for reading in [Reading::AsItSays, Reading::AsLlama] {
        match import::parse_as(text, reading) {
            Err(e) => short(&e.to_string(), "config error", &text[..text.len().min(200)]),
            Ok(imp) => {
                // Every key is one the codec takes as it is, and together
                // they decode, without a notice, to the same architecture.
                let mut raw = RawQuery::default();
                for (k, v) in imp.changes() {
                    let f = k.field().expect("a codec key");
                    assert_eq!(f.validate(&v), Ok(()), "{k}={v} from {text}");
                    raw.set(k, &v);
                }
                let d = decode(&raw);
                assert!(d.notices.is_empty(), "{text}: {:?}", d.notices);
                assert_eq!(d.scenario.arch, Some(imp.arch), "{text}");
            }
        }
    }
}

#[test]
fn generated_queries_keep_every_invariant() {
    let mut r = Rng::new(seed());
    let n = cases();
    for _ in 0..n {
        let q = fuzz::query(&mut r);
        check_query(&q, &mut r);
    }
    println!("{n} query strings");
}

#[test]
fn generated_configs_keep_every_invariant() {
    let mut r = Rng::new(seed() ^ 0xC0F1_6000);
    let n = cases() / 4;
    for _ in 0..n {
        check_config(&fuzz::config(&mut r));
    }
    println!("{n} config.json texts");
}

/// Every input that once broke an invariant (issue 9's findings first).
#[test]
fn the_corpus_keeps_every_invariant() {
    let mut r = Rng::new(1);
    for line in include_str!("fuzz_corpus/queries.txt").lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        check_query(line, &mut r);
    }
    for text in include_str!("fuzz_corpus/configs.txt").split("\n---\n") {
        check_config(text);
    }
}
