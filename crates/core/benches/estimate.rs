//! One full estimate (every phase of two iterations) must stay well under
//! 5 µs natively: the page re-estimates on every keystroke and the max-batch
//! solver calls it dozens of times. `cargo bench -p vramfit-core`.

mod cases;

use cases::{INFER, TRAIN};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::train as estimate;
use vramfit_core::{Estimates, Scenario};

fn scenario(q: &str) -> Scenario {
    decode_strict(&RawQuery::parse(q)).unwrap_or_else(|n| panic!("{q}: {n:?}"))
}

fn bench(c: &mut Criterion) {
    for &(name, q) in TRAIN {
        let s = scenario(q);
        c.bench_function(&format!("estimate/{name}"), |b| {
            b.iter(|| estimate::estimate(black_box(&s.train_run())))
        });
    }
    for &(name, q) in INFER {
        let s = scenario(q);
        c.bench_function(&format!("infer/{name}"), |b| {
            b.iter(|| vramfit_core::infer::estimate(black_box(&s.infer_run())))
        });
    }
    let s = scenario(TRAIN[0].1);
    c.bench_function("both methods", |b| b.iter(|| Estimates::new(black_box(&s))));
    c.bench_function("decode + both methods", |b| {
        b.iter(|| {
            let s = scenario(black_box(TRAIN[0].1));
            Estimates::new(&s)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
