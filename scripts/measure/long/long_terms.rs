//! Diagnosis helper (not for the main repo): prints every phase's peak terms
//! for the query in $Q, and all nonzero terms of the breakdown.
use vramfit_core::estimate::{breakdown, estimate};
use vramfit_core::query::{decode_strict, RawQuery};

#[test]
fn print_terms() {
    let Ok(q) = std::env::var("Q") else { return };
    let s = decode_strict(&RawQuery::parse(&q)).expect("query");
    let b = breakdown(&s).expect("breakdown");
    println!("ALL TERMS");
    for id in vramfit_core::terms::TermId::ALL {
        let t = b.terms.get(*id);
        if t.bytes() > 0 {
            println!("  {:?} {} = {}", id, vramfit_core::explain::term_text(*id, t), t.bytes());
        }
    }
    let e = estimate(&s).expect("estimate");
    for p in &e.phases {
        println!("PHASE it{} {:?} at {:?} alloc {}", p.iteration, p.phase, p.peak_at, p.components.allocated().get());
        for id in p.terms.iter() {
            println!("    {:?} {}", id, b.terms.bytes(id));
        }
    }
}
