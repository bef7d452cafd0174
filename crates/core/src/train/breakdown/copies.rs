//! Autocast's bf16 weight copies: cached for trainable weights until
//! autocast exits; copies of frozen weights live only while autograd saves
//! them, so checkpointing drops them with the layer.

use super::Inputs;
use crate::terms::{Term, TermId as T, Unit as U};
use crate::train::ledger::Saved;

/// `bytes` of bf16 copies, as elements of 2 bytes.
pub(super) fn copies(bytes: u128) -> Term {
    Term::of(&[(bytes / 2, U::Elements), (2, U::BytesEach)])
}

/// The copies saved for backward and those that only live until autocast
/// exits.
pub(super) fn add(x: &Inputs, put: &mut impl FnMut(T, Term)) {
    let wc = |s: &Saved| u128::from(s.weight_copies);
    let wcf = |s: &Saved| u128::from(s.weight_copies_uncached);
    let wct = |s: &Saved| u128::from(s.weight_copies_transient);
    let ly = &x.layers;
    let (saved, transient) = if x.ckpt.on() {
        (0, ly.sum(wc) + ly.sum(wct))
    } else {
        (ly.sum(wc) + ly.sum(wcf), ly.sum(wct))
    };
    let outer = &ly.outer.saved;
    put(T::CopiesSaved, copies(saved + wc(outer) + wcf(outer)));
    put(T::CopiesTransient, copies(transient + wct(outer)));
}
