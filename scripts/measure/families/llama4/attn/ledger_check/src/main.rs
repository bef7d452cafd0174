//! The estimate vramfit's training ledger gives a harness row, built as
//! crates/core/tests/ground_truth.rs builds it (model_keys + query), with
//! each phase's allocated peak in bytes.
//! usage: ledger_check CONFIG.json 'dtype=bf16&optim=adamw&batch=2&seq=64&grad_ckpt=false&attn=sdpa&keep_outputs=false&cuda_like=true'
use vramfit_core::import;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::terms::TermId;
use vramfit_core::train::estimate;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&a[1]).expect("config");
    let imported = import::parse(&text).expect("import");
    let mut raw = RawQuery::default();
    for (k, v) in imported.changes() {
        raw.set(k, &v);
    }
    let q = format!("{}&{}", raw.to_query_string(), a[2]);
    println!("query {q}");
    let s = decode_strict(&RawQuery::parse(&q)).unwrap_or_else(|n| panic!("{q}: {n:?}"));
    let e = estimate(&s.train_run()).expect("estimate");
    for p in &e.phases {
        let c = &p.components;
        let parts: Vec<String> = c.iter().map(|(k, b)| format!("{}={}", k.key(), b.get())).collect();
        // as ground_truth.rs's cuda_only: cuBLAS's workspaces are not in the rows
        let cuda_only = if p.terms.contains(TermId::CublasWorkspaces) {
            u64::try_from(e.terms.bytes(TermId::CublasWorkspaces)).unwrap_or(0)
        } else {
            0
        };
        println!(
            "it{} {:?} allocated {} [{}]",
            p.iteration,
            p.phase,
            c.allocated().get() - cuda_only,
            parts.join(" ")
        );
    }
}
