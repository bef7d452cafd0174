//! Input generators for the project's own fuzz campaign (cargo feature
//! `fuzz`; see `tests/fuzz.rs` and the README). Every generator is driven
//! by the codec's own tables ([`FIELDS`], [`ArchNum`], the importer's field
//! names), so a new key is fuzzed without anyone remembering to.
//!
//! Values reach the extremes on purpose: each bound, one past it, zero, the
//! largest 64-bit number, signs, exponents, empty, too long, control
//! characters and other scripts, besides valid values in between.

use crate::gpus::GPUS;
use crate::infer::run::{Engine, MlxWeights};
use crate::model::gguf::FileType;
use crate::model::presets::PRESETS;
use crate::model::{ArchNum, Family, WeightFormat};
use crate::query::{Field, FieldKind, Key, RawQuery, FIELDS, MAX_PAIRS};
use crate::scenario::Task;

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

/// A workload for a generated query: any keys, training's, or an
/// engine's (each engine as often as training), from the `task` and
/// `engine` fields' own options.
fn workload(r: &mut Rng, raw: &mut RawQuery) -> Option<(Task, Option<Engine>)> {
    let engines = match Key::Engine.field().map(|f| f.kind) {
        Some(FieldKind::Choice(options)) => options,
        _ => &[],
    };
    match r.below(engines.len() as u64 + 2) {
        0 => None,
        1 => {
            raw.set(Key::Task, Task::Train.key());
            Some((Task::Train, None))
        }
        n => {
            let (key, _) = engines[(n - 2) as usize % engines.len().max(1)];
            raw.set(Key::Task, Task::Infer.key());
            raw.set(Key::Engine, key);
            Some((Task::Infer, Engine::from_key(key)))
        }
    }
}

/// A field to set: any, or (mostly) one the workload reads, an engine's
/// own arguments only for that engine.
fn field_for(r: &mut Rng, w: Option<(Task, Option<Engine>)>) -> &'static Field {
    let Some((task, engine)) = w.filter(|_| !r.one_in(5)) else {
        return r.pick(FIELDS);
    };
    let read: Vec<&'static Field> = FIELDS
        .iter()
        .filter(|f| f.tasks.include(task) && f.group.engine().is_none_or(|e| Some(e) == engine))
        .collect();
    match read.len() {
        0 => r.pick(FIELDS),
        n => read[r.below(n as u64) as usize],
    }
}

/// A `weights` value: a checkpoint format, a GGUF file type or an MLX
/// conversion (whatever the engine), or garbage.
fn weights(r: &mut Rng) -> String {
    let lists: [&[(&str, &str)]; 3] = [
        WeightFormat::OPTIONS,
        FileType::OPTIONS,
        MlxWeights::OPTIONS,
    ];
    match r.below(10) {
        0 => garbage(r),
        _ => {
            let list = *r.pick(&lists);
            r.pick(list).0.to_string()
        }
    }
}

/// A query string: a workload (or none), a random set of keys with values
/// from their kinds, and now and then unknown keys, repeats, too many
/// pairs, raw garbage, or (inference) a read file's bytes for the model.
pub fn query(r: &mut Rng) -> String {
    if r.one_in(40) {
        return garbage(r);
    }
    let mut raw = RawQuery::default();
    let w = workload(r, &mut raw);
    let n = r.range(0, FIELDS.len() as u64);
    for _ in 0..n {
        let f = field_for(r, w);
        let v = match f.key {
            Key::Weights => weights(r),
            Key::FileBytes => {
                let layers = r.range(1, 300) as u32;
                file_bytes(r, layers)
            }
            _ => value(r, f.kind),
        };
        if r.one_in(20) {
            // A repeated key: the last one counts.
            let mut q = raw.to_query_string();
            q.push_str(&format!("&{}={}", f.key, v));
            raw = RawQuery::parse(&q);
        } else {
            raw.set(f.key, &v);
        }
    }
    if w.is_some_and(|(t, _)| t == Task::Infer) && r.one_in(4) {
        // The file of this very model (its layers), as an import writes it.
        let layers = crate::query::decode(&raw)
            .scenario
            .arch
            .map_or(1, |a| a.layers);
        raw.set(Key::FileBytes, &file_bytes(r, layers));
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

/// A byte count for a read file: real sizes, the extremes, past them.
fn file_number(r: &mut Rng) -> String {
    match r.below(12) {
        0 => "0".into(),
        1 => "1".into(),
        2 => u64::MAX.to_string(),
        3 => (u128::from(u64::MAX) + 1).to_string(),
        4 => garbage(r),
        _ => r.log_range(1, 1 << 40).to_string(),
    }
}

/// A part: bytes, and now and then what CUDA adds (`x`).
fn file_part(r: &mut Rng) -> String {
    let bytes = file_number(r);
    if r.one_in(3) {
        format!("{bytes}x{}", file_number(r))
    } else {
        bytes
    }
}

/// A `file_bytes` value of `layers` layers in the text form of
/// [`crate::infer::local::ReadFile`]: kinds with parts from the extremes
/// (a largest tensor sometimes past its parts), runs that add up to the
/// layers or not, items missing, repeated or unknown.
pub fn file_bytes(r: &mut Rng, layers: u32) -> String {
    let kinds = r.range(1, 7) as usize;
    let mut items = vec![format!("e{}", file_part(r))];
    if r.one_in(2) {
        items.push(format!("o{}", file_part(r)));
    }
    items.push(format!("n{}", file_number(r)));
    for _ in 0..kinds {
        let parts: Vec<String> = (0..7).map(|_| file_part(r)).collect();
        let largest = match r.below(4) {
            0 => file_number(r),
            _ => parts
                .iter()
                .filter_map(|p| p.split('x').next()?.parse::<u64>().ok())
                .max()
                .unwrap_or(0)
                .to_string(),
        };
        items.push(format!("k{}_{largest}", parts.join("_")));
    }
    let mut left = if r.one_in(8) {
        r.range(0, 300) as u32
    } else {
        layers
    };
    let mut runs = Vec::new();
    while left > 0 && runs.len() < 20 {
        let n = if runs.len() == 19 {
            left
        } else {
            r.range(1, u64::from(left)) as u32
        };
        runs.push(format!("{}r{n}", r.below(kinds as u64 + 1)));
        left -= n;
    }
    items.push(format!("s{}", runs.join("-")));
    if r.one_in(10) {
        let i = r.below(items.len() as u64) as usize;
        items.remove(i);
    }
    if r.one_in(20) {
        items.push(garbage(r));
    }
    items.join(".")
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

/// A metadata value of a generated GGUF header.
enum Meta {
    U32(u32),
    Str(String),
}

/// A GGUF header's bytes: the start, the keys, the tensor infos (each
/// tensor 2-D, `[ne0, rows]`, at the next 32-byte offset), no data.
fn gguf_bytes(keys: &[(String, Meta)], tensors: &[(String, u64, u64, u32, u64)]) -> Vec<u8> {
    fn string(b: &mut Vec<u8>, s: &str) {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    }
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend((tensors.len() as i64).to_le_bytes());
    b.extend((keys.len() as i64).to_le_bytes());
    for (k, v) in keys {
        string(&mut b, k);
        match v {
            Meta::U32(n) => {
                b.extend(4u32.to_le_bytes());
                b.extend(n.to_le_bytes());
            }
            Meta::Str(s) => {
                b.extend(8u32.to_le_bytes());
                string(&mut b, s);
            }
        }
    }
    let mut offset = 0u64;
    for (name, ne0, rows, ty, bytes) in tensors {
        string(&mut b, name);
        b.extend(2u32.to_le_bytes());
        b.extend(ne0.to_le_bytes());
        b.extend(rows.to_le_bytes());
        b.extend(ty.to_le_bytes());
        b.extend(offset.to_le_bytes());
        offset = offset.saturating_add(bytes.div_ceil(32) * 32);
    }
    b
}

/// The keys `convert_hf_to_gguf.py` writes for `a` (`block_count` as
/// `layers`), and the file type.
fn gguf_keys(a: &crate::model::Architecture, layers: u32, ft: FileType) -> Vec<(String, Meta)> {
    let arch = crate::model::gguf::gguf_architecture(a);
    let mut keys = vec![
        (
            "general.architecture".to_string(),
            Meta::Str(arch.to_string()),
        ),
        ("general.file_type".to_string(), Meta::U32(ft.id())),
    ];
    let nums = [
        ("block_count", layers),
        ("context_length", a.positions),
        ("embedding_length", a.hidden),
        ("feed_forward_length", a.ffn),
        ("attention.head_count", a.heads),
        ("attention.head_count_kv", a.kv_heads),
        ("attention.key_length", a.head_dim),
        ("attention.value_length", a.v_head_dim),
        ("attention.q_lora_rank", a.q_lora_rank),
        ("attention.kv_lora_rank", a.kv_lora_rank),
        ("rope.dimension_count", a.rope_dim),
        ("attention.sliding_window", a.sliding_window),
        ("expert_count", a.experts),
        ("expert_used_count", a.experts_per_token),
        ("expert_feed_forward_length", a.moe_ffn),
        ("expert_shared_count", a.shared_experts),
        ("leading_dense_block_count", a.dense_layers),
        // Always for Llama 4 (`Llama4Model.set_gguf_parameters`), 1 where
        // every layer has experts.
        (
            "interleave_moe_layer_step",
            match a.family.spec().moe.is_some_and(|m| m.interleaved) {
                true => a.moe_step.max(1),
                false => a.moe_step,
            },
        ),
        ("vocab_size", a.vocab),
    ];
    for (k, v) in nums.into_iter().filter(|(_, v)| *v > 0) {
        keys.push((format!("{arch}.{k}"), Meta::U32(v)));
    }
    keys
}

/// A GGUF header: a preset (now and then with fewer layers) in a file type
/// as `llama-quantize` types its tensors, written whole, then (mostly)
/// broken: `block_count` off its tensors, a layer's tensors left out, a
/// tensor twice, bits flipped, a count or length made huge, cut short.
pub fn gguf(r: &mut Rng) -> Vec<u8> {
    use crate::model::gguf::{predict_each, Recipe};
    let mut a = r.pick(PRESETS).arch;
    if r.one_in(2) {
        let shrunk = crate::model::Architecture {
            layers: r.range(1, 6) as u32,
            ..a
        };
        if shrunk.validate().is_ok() {
            a = shrunk;
        }
    }
    let ft = *r.pick(FileType::ALL);
    let mut tensors = Vec::new();
    let _ = predict_each(&a, ft, Recipe::for_file_type(ft), &mut |t| {
        let row = t.ne0 / t.ty.block().max(1) * t.ty.block_bytes();
        let bytes = u64::try_from(t.bytes).unwrap_or(u64::MAX);
        if row > 0 && bytes.is_multiple_of(row) {
            let name = match t.layer {
                Some(l) => format!("blk.{l}.{}", t.name),
                None => t.name.to_string(),
            };
            tensors.push((name, t.ne0, bytes / row, t.ty.id(), bytes));
        }
    });
    let mut layers = a.layers;
    match r.below(8) {
        0 => layers = r.range(0, u64::from(a.layers) * 2 + 1) as u32,
        1 => {
            let gone = format!("blk.{}.", r.below(u64::from(a.layers)));
            tensors.retain(|t| !t.0.starts_with(&gone));
        }
        2 if !tensors.is_empty() => {
            let t = tensors[r.below(tensors.len() as u64) as usize].clone();
            tensors.push(t);
        }
        _ => {}
    }
    let mut b = gguf_bytes(&gguf_keys(&a, layers, ft), &tensors);
    mutate(r, &mut b);
    b
}

/// Now and then breaks bytes: flipped bits, a huge count or length
/// written over 8 bytes, cut short, trailing garbage.
fn mutate(r: &mut Rng, b: &mut Vec<u8>) {
    if b.is_empty() {
        return;
    }
    match r.below(8) {
        0 => {
            for _ in 0..r.range(1, 8) {
                let at = r.below(b.len() as u64) as usize;
                b[at] ^= 1 << r.below(8);
            }
        }
        1 if b.len() >= 8 => {
            let at = r.below(b.len() as u64 - 7) as usize;
            let v = *r.pick(&[u64::MAX, i64::MAX as u64, 1 << 40, 1 << 30, 0]);
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        2 => b.truncate(r.below(b.len() as u64) as usize),
        3 => b.extend((0..r.range(1, 64)).map(|_| r.below(256) as u8)),
        _ => {}
    }
}

/// A safetensors header: the length, then JSON naming each tensor's dtype,
/// shape and contiguous byte range (and `__metadata__`), then (mostly)
/// broken: a range off its shape, a gap, an unknown dtype, a huge length,
/// bits flipped, cut short.
pub fn safetensors(r: &mut Rng) -> Vec<u8> {
    const DTYPES: [&str; 8] = ["BF16", "F16", "F32", "F8_E4M3", "U8", "I64", "F4", "X9"];
    let mut entries = vec!["\"__metadata__\":{\"format\":\"pt\"}".to_string()];
    let mut at = 0u64;
    for i in 0..r.range(0, 12) {
        let dtype = if r.one_in(20) {
            DTYPES[7]
        } else {
            *r.pick(&DTYPES[..7])
        };
        let bits = crate::model::gguf::dtype_bits(dtype).unwrap_or(8);
        let shape: Vec<u64> = (0..r.range(0, 3))
            .map(|_| r.log_range(1, 1 << 16))
            .collect();
        let elems = shape.iter().fold(1u64, |n, d| n.saturating_mul(*d));
        let mut bytes = elems.saturating_mul(bits) / 8;
        if r.one_in(15) {
            bytes = bytes.saturating_add(r.range(1, 9));
        }
        if r.one_in(20) {
            at = at.saturating_add(r.range(1, 9));
        }
        let end = at.saturating_add(bytes);
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        entries.push(format!(
            "\"t{i}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{at},{end}]}}",
            dims.join(",")
        ));
        at = end;
    }
    let json = format!("{{{}}}", entries.join(","));
    let len = if r.one_in(20) {
        r.next_u64()
    } else {
        json.len() as u64
    };
    let mut b = len.to_le_bytes().to_vec();
    b.extend(json.as_bytes());
    mutate(r, &mut b);
    b
}
