//! One small sort for the short lists the page sorts (a chart's points,
//! llama.cpp's layer cuts, the solver's suggestions, a GGUF layout's
//! tensor slots, the form's fields: tens of items).
//!
//! The standard library's sorts are kilobytes of code for every type and
//! comparison they are used with; in the page's wasm that was about
//! 22 KB before optimization (`scripts/measure/size/NOTES.md`). This one
//! is a stable insertion sort behind one `dyn` comparison per type: a few
//! hundred bytes, quadratic in the length, so only for short lists.

use core::cmp::Ordering;

/// Sorts `v` stably by `cmp`: equal items keep their order.
pub fn by<T>(v: &mut [T], cmp: &mut dyn FnMut(&T, &T) -> Ordering) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && cmp(&v[j - 1], &v[j]) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Sorts `v` stably by `key`.
pub fn by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    by(v, &mut |a, b| key(a).cmp(&key(b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list of up to 7 items over 3 keys (each item tagged with its
    /// place, to see stability) sorts as the standard library's stable
    /// sort does.
    #[test]
    fn sorts_as_the_standard_stable_sort() {
        for len in 0..=7u32 {
            for code in 0..3u32.pow(len) {
                let v: Vec<(u32, u32)> = (0..len).map(|i| ((code / 3u32.pow(i)) % 3, i)).collect();
                let mut ours = v.clone();
                by_key(&mut ours, |x| x.0);
                let mut std = v.clone();
                std.sort_by_key(|x| x.0);
                assert_eq!(ours, std, "{v:?}");
            }
        }
    }
}
