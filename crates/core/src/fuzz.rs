//! Input generators for the project's own fuzz campaign (cargo feature
//! `fuzz`; see `tests/fuzz.rs` and the README). Every generator is driven
//! by the codec's own tables ([`FIELDS`], [`ArchNum`], the importer's field
//! names), so a new key is fuzzed without anyone remembering to.
//!
//! Values reach the extremes on purpose: each bound, one past it, zero, the
//! largest 64-bit number, signs, exponents, empty, too long, control
//! characters and other scripts, besides valid values in between.

use crate::gpus::GPUS;
use crate::model::presets::PRESETS;
use crate::model::{ArchNum, Family};
use crate::query::{FieldKind, RawQuery, FIELDS, MAX_PAIRS};

/// A small, fast, seeded generator (SplitMix64): the same seed gives the
/// same cases on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(span + 1)
    }

    /// Log-uniform in `lo..=hi`: small values as often as large ones.
    pub fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let bits = 64 - hi.max(1).leading_zeros();
        let top = 1u64.checked_shl(self.range(0, u64::from(bits)) as u32);
        let top = top.map_or(hi, |t| t.min(hi));
        self.range(lo, top.max(lo))
    }
}

/// Text that is not a valid value of anything: hostile or broken.
fn garbage(r: &mut Rng) -> String {
    match r.below(12) {
        0 => String::new(),
        1 => " ".into(),
        2 => "9".repeat(r.range(20, 200) as usize),
        3 => "<script>alert(1)</script>".into(),
        4 => "\u{0}\u{1}\u{7f}".into(),
        5 => "é".repeat(r.range(1, 100) as usize),
        6 => "NaN".into(),
        7 => "inf".into(),
        8 => "0x10".into(),
        9 => "1e999".into(),
        10 => "%zz%".into(),
        _ => (0..r.range(1, 30))
            .map(|_| char::from_u32(r.range(1, 0x2FFF) as u32).unwrap_or('?'))
            .collect(),
    }
}

/// A value for a whole number in `min..=max`: the bounds and past them,
/// and what people mistype.
fn count(r: &mut Rng, min: u64, max: u64) -> String {
    match r.below(16) {
        0 => min.to_string(),
        1 => max.to_string(),
        2 => min.saturating_add(1).min(max).to_string(),
        3 => max.saturating_sub(1).max(min).to_string(),
        4 => min.wrapping_sub(1).to_string(),
        5 => max.saturating_add(1).to_string(),
        6 => "0".into(),
        7 => u64::MAX.to_string(),
        8 => format!("+{}", r.range(min, max)),
        9 => "-0".into(),
        10 => format!("{}e{}", r.range(1, 9), r.range(0, 30)),
        11 => format!("{}.5", r.range(min, max)),
        12 => format!(" {} ", r.range(min, max)),
        13 => garbage(r),
        _ => r.log_range(min, max).to_string(),
    }
}

fn decimal(r: &mut Rng, min: &str, max: &str) -> String {
    match r.below(10) {
        0 => min.into(),
        1 => max.into(),
        2 => format!("{}.{:04}", r.below(2), r.below(10_000)),
        3 => format!("{}.{}", r.below(70_000), r.below(1000)),
        4 => "0.12345".into(),
        5 => "-1".into(),
        6 => "1e3".into(),
        7 => garbage(r),
        _ => format!("0.{}", r.below(10_000)),
    }
}

/// A value for one field, from its kind.
pub fn value(r: &mut Rng, kind: FieldKind) -> String {
    match kind {
        FieldKind::Count { min, max } => count(r, min, max),
        FieldKind::Decimal { min, max } => decimal(r, min, max),
        FieldKind::Choice(options) => match r.below(8) {
            0 => r.pick(options).0.to_ascii_uppercase(),
            1 => garbage(r),
            _ => r.pick(options).0.to_string(),
        },
        FieldKind::Toggle => r
            .pick(&[
                "true", "false", "1", "0", "yes", "no", "on", "off", "maybe", "",
            ])
            .to_string(),
        FieldKind::Model => match r.below(10) {
            0 => garbage(r),
            1 => String::new(),
            _ => r.pick(PRESETS).id.to_string(),
        },
        FieldKind::Gpu => match r.below(10) {
            0 => "custom".into(),
            1 => "probe".into(),
            2 => garbage(r),
            _ => r.pick(GPUS).id.to_string(),
        },
        FieldKind::Text => match r.below(6) {
            0 => "é".repeat(r.range(60, 70) as usize),
            1 => "GPU\u{7}x".into(),
            2 => garbage(r),
            _ => r
                .pick(&["NVIDIA GeForce RTX 4090", "olmoe", "Apple M3 Max", "x"])
                .to_string(),
        },
    }
}

/// A query string: a random set of keys with values from their kinds, and
/// now and then unknown keys, repeats, too many pairs or raw garbage.
pub fn query(r: &mut Rng) -> String {
    if r.one_in(40) {
        return garbage(r);
    }
    let mut raw = RawQuery::default();
    let n = r.range(0, FIELDS.len() as u64);
    for _ in 0..n {
        let f = r.pick(FIELDS);
        let v = value(r, f.kind);
        if r.one_in(20) {
            // A repeated key: the last one counts.
            let mut q = raw.to_query_string();
            q.push_str(&format!("&{}={}", f.key, v));
            raw = RawQuery::parse(&q);
        } else {
            raw.set(f.key, &v);
        }
    }
    if r.one_in(10) {
        raw.set(garbage(r), &garbage(r));
    }
    let mut q = raw.to_query_string();
    if r.one_in(50) {
        for i in 0..=MAX_PAIRS {
            q.push_str(&format!("&k{i}=1"));
        }
    }
    q
}

/// A value a config.json field might hold.
fn json_value(r: &mut Rng) -> String {
    match r.below(20) {
        0 => "0".into(),
        1 => "1".into(),
        2 => "-1".into(),
        3 => "1.5".into(),
        4 => "1e30".into(),
        5 => "null".into(),
        6 => "true".into(),
        7 => "\"7\"".into(),
        8 => "[]".into(),
        9 => "{}".into(),
        10 => (1u64 << r.range(1, 40)).to_string(),
        11 => (u64::from(u32::MAX) + r.below(3)).to_string(),
        12 => u64::MAX.to_string(),
        13 => format!("\"{}\"", "x".repeat(r.range(0, 5000) as usize)),
        _ => r.log_range(1, 1 << 24).to_string(),
    }
}

/// The field names the importer reads for any family, and the
/// memory-relevant ones it refuses.
fn config_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = crate::model::hf_config::known_fields().collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A config.json text: a family (known or not), some of the fields the
/// importer reads with values from extremes, and now and then hostile
/// structure (deep nesting, huge strings, a nested text_config).
pub fn config(r: &mut Rng) -> String {
    if r.one_in(100) {
        let depth = r.range(100, 10_000) as usize;
        return format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    }
    if r.one_in(50) {
        return garbage(r);
    }
    let model_type = match r.below(10) {
        0 => format!("\"{}\"", "m".repeat(r.range(0, 100_000) as usize)),
        1 => "7".into(),
        2 => "\"olmoe\"".into(),
        _ => format!("\"{}\"", r.pick(Family::ALL).key()),
    };
    let mut fields = vec![format!("\"model_type\": {model_type}")];
    // A plausible base: a preset's numbers under the family's names.
    let p = r.pick(PRESETS);
    let base = |n: ArchNum| n.get(&p.arch);
    for key in config_keys() {
        if r.one_in(3) {
            continue;
        }
        let v = if r.one_in(3) {
            json_value(r)
        } else {
            let n = crate::model::hf_config::number_of(key)
                .map(base)
                .unwrap_or(u32::try_from(r.below(3)).unwrap_or(0));
            n.to_string()
        };
        fields.push(format!("\"{key}\": {v}"));
    }
    let body = fields.join(", ");
    if r.one_in(10) {
        format!("{{\"model_type\": \"llava\", \"text_config\": {{{body}}}}}")
    } else {
        format!("{{{body}}}")
    }
}
