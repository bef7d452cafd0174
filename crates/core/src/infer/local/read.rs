//! A GGUF file that was read, as a link carries it: its bytes as llama.cpp
//! places them ([`FileBytes`]), with the repeating layers folded into a few
//! kinds (a Q4_K_M has two: layers whose `attn_v` and `ffn_down` got Q6_K,
//! and the others), so the whole answer fits in the scenario (which stays
//! `Copy`) and in a query value (`file_bytes`).
//!
//! The text form: dot-separated items, each a letter and its numbers.
//! `e` the token embedding, `i` the other input-layer tensors in host
//! memory (Gemma 4's per-layer table; absent: none), `o` the output tensor
//! (absent: tied), `n` the
//! output norm and other output-layer tensors, one `k` per kind of layer
//! (attention, MLP gate, up, down, the routed experts' gate, up, down, and
//! the largest tensor, `_`-separated), and `s` the layers' kinds in order
//! (`-`-separated kind indices, `r` and a count for a run). A part is its
//! bytes in the file, with `x` and the bytes a CUDA buffer adds when there
//! are any. `e288358400x0.n16384.k11010048_20447232_20447232_31252480_0_0_0_20447232.s0r28`.

use super::weights::{FileBytes, FoldedFile, LayerBytes, Part};
use crate::model::gguf::{runs_of, GgufHeader};
use std::fmt::{self, Write};

/// Kinds of layer a read file may have.
pub const MAX_KINDS: usize = 6;
/// Repeating layers a read file may have.
pub const MAX_LAYERS: usize = 256;

/// A read GGUF file's bytes, folded (see the module's text).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReadFile {
    token_embd: Part,
    /// Input-layer tensors besides `token_embd` (host memory).
    inputs: u128,
    output: Option<Part>,
    output_norm: u128,
    kinds: [LayerBytes; MAX_KINDS],
    n_kinds: u8,
    order: [u8; MAX_LAYERS],
    n_layers: u16,
}

impl fmt::Debug for ReadFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReadFile({self})")
    }
}

/// Why a file or a `file_bytes` value cannot be carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadFileError {
    /// More layers than [`MAX_LAYERS`], or none.
    Layers(usize),
    /// More kinds of layer than [`MAX_KINDS`].
    Kinds(usize),
    /// The text is not in the form the module describes.
    Form(String),
}

impl fmt::Display for ReadFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFileError::Layers(n) => {
                write!(
                    f,
                    "the file has {n} repeating layers; vramfit carries 1 to {MAX_LAYERS}"
                )
            }
            ReadFileError::Kinds(n) => write!(
                f,
                "the file's layers come in {n} different sizes; vramfit carries at most {MAX_KINDS}"
            ),
            ReadFileError::Form(why) => {
                write!(f, "not a file's bytes as vramfit writes them: {why}")
            }
        }
    }
}

impl ReadFile {
    /// Folds a read file's layers into kinds.
    pub fn fold(f: &FileBytes) -> Result<ReadFile, ReadFileError> {
        let n = f.layers.len();
        if n == 0 || n > MAX_LAYERS {
            return Err(ReadFileError::Layers(n));
        }
        let mut r = ReadFile {
            token_embd: f.token_embd_part,
            inputs: f.token_embd.saturating_sub(f.token_embd_part.bytes),
            output: f.output,
            output_norm: f.output_norm,
            kinds: [LayerBytes::default(); MAX_KINDS],
            n_kinds: 0,
            order: [0; MAX_LAYERS],
            n_layers: n as u16,
        };
        let mut kinds: Vec<LayerBytes> = Vec::new();
        for (i, l) in f.layers.iter().enumerate() {
            let k = match kinds.iter().position(|k| k == l) {
                Some(k) => k,
                None => {
                    kinds.push(*l);
                    kinds.len() - 1
                }
            };
            r.order[i] = k as u8;
        }
        if kinds.len() > MAX_KINDS {
            return Err(ReadFileError::Kinds(kinds.len()));
        }
        r.kinds[..kinds.len()].copy_from_slice(&kinds);
        r.n_kinds = kinds.len() as u8;
        Ok(r)
    }

    /// A GGUF header's tensors, as llama.cpp places them: those of the
    /// blocks from `skipped_from` on left out (the MTP blocks a converter
    /// appends, which llama.cpp does not load: `Converter::mtp_skipped`).
    pub fn of_header(h: &GgufHeader, skipped_from: Option<u32>) -> Result<ReadFile, ReadFileError> {
        let mut f = FileBytes::default();
        h.weights_each(&mut |t| {
            if t.layer.zip(skipped_from).is_none_or(|(l, from)| l < from) {
                f.add(t);
            }
        });
        ReadFile::fold(&f)
    }

    /// The file's bytes, unfolded.
    pub fn unfold(&self) -> FileBytes {
        let kinds = &self.kinds[..usize::from(self.n_kinds)];
        FileBytes {
            layers: self.order[..usize::from(self.n_layers)]
                .iter()
                .map(|&k| kinds[usize::from(k)])
                .collect(),
            token_embd: self.token_embd.bytes.saturating_add(self.inputs),
            token_embd_part: self.token_embd,
            output: self.output,
            output_norm: self.output_norm,
        }
    }

    /// The file's bytes, its layers left folded.
    pub fn folded(&self) -> FoldedFile {
        let order = &self.order[..usize::from(self.n_layers)];
        FoldedFile {
            kinds: FileBytes {
                layers: self.kinds[..usize::from(self.n_kinds)].to_vec(),
                token_embd: self.token_embd.bytes.saturating_add(self.inputs),
                token_embd_part: self.token_embd,
                output: self.output,
                output_norm: self.output_norm,
            },
            runs: runs_of(order.iter().map(|&k| u16::from(k))),
        }
    }

    /// Repeating layers in the file.
    pub const fn layers(&self) -> u32 {
        self.n_layers as u32
    }

    /// Every byte of the file's tensors.
    pub fn total(&self) -> u128 {
        self.folded().weights().total(self.layers())
    }

    /// Reads the text form (see the module's text).
    pub fn parse(text: &str) -> Result<ReadFile, ReadFileError> {
        let mut f = FileBytes::default();
        let mut kinds: Vec<LayerBytes> = Vec::new();
        let mut order: Option<Vec<usize>> = None;
        let mut inputs = 0;
        for item in text.trim().split('.') {
            let mut chars = item.chars();
            let tag = chars.next();
            let rest = chars.as_str();
            match tag {
                Some('e') => f.token_embd_part = part(rest)?,
                Some('i') => inputs = number(rest)?,
                Some('o') => f.output = Some(part(rest)?),
                Some('n') => f.output_norm = number(rest)?,
                Some('k') => kinds.push(layer(rest)?),
                Some('s') => order = Some(sequence(rest, kinds.len())?),
                Some(other) => return Err(form(format!("unknown item `{other}`"))),
                None => return Err(form("an empty item".into())),
            }
        }
        f.token_embd = f.token_embd_part.bytes.saturating_add(inputs);
        let order = order.ok_or_else(|| form("no `s` (the layers' kinds)".into()))?;
        if order.len() > MAX_LAYERS {
            return Err(ReadFileError::Layers(order.len()));
        }
        f.layers = order.iter().map(|&k| kinds[k]).collect();
        let r = ReadFile::fold(&f)?;
        if usize::from(r.n_kinds) != kinds.len() {
            return Err(form("a kind is unused or repeated".into()));
        }
        Ok(r)
    }
}

impl fmt::Display for ReadFile {
    /// The text form (see the module's text); [`ReadFile::parse`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}", PartText(self.token_embd))?;
        if self.inputs > 0 {
            write!(f, ".i{}", self.inputs)?;
        }
        if let Some(o) = self.output {
            write!(f, ".o{}", PartText(o))?;
        }
        write!(f, ".n{}", self.output_norm)?;
        for k in &self.kinds[..usize::from(self.n_kinds)] {
            let parts = [
                k.attn,
                k.ffn_gate,
                k.ffn_up,
                k.ffn_down,
                k.exps_gate,
                k.exps_up,
                k.exps_down,
            ];
            f.write_str(".k")?;
            for p in parts {
                write!(f, "{}_", PartText(p))?;
            }
            write!(f, "{}", k.largest)?;
        }
        f.write_str(".s")?;
        let order = &self.order[..usize::from(self.n_layers)];
        let mut i = 0;
        while i < order.len() {
            let run = order[i..].iter().take_while(|&&k| k == order[i]).count();
            if i > 0 {
                f.write_char('-')?;
            }
            write!(f, "{}", order[i])?;
            if run > 1 {
                write!(f, "r{run}")?;
            }
            i += run;
        }
        Ok(())
    }
}

struct PartText(Part);

impl fmt::Display for PartText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.cuda_extra {
            0 => write!(f, "{}", self.0.bytes),
            x => write!(f, "{}x{x}", self.0.bytes),
        }
    }
}

fn form(why: String) -> ReadFileError {
    ReadFileError::Form(why)
}

/// A byte count: digits, below 2^64 (the tensors of any file are smaller).
fn number(s: &str) -> Result<u128, ReadFileError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(form(format!("`{s}` is not a whole number")));
    }
    s.parse::<u64>()
        .map(u128::from)
        .map_err(|_| form(format!("`{s}` is too large")))
}

fn part(s: &str) -> Result<Part, ReadFileError> {
    let (bytes, extra) = s.split_once('x').unwrap_or((s, "0"));
    Ok(Part {
        bytes: number(bytes)?,
        cuda_extra: number(extra)?,
    })
}

fn layer(s: &str) -> Result<LayerBytes, ReadFileError> {
    let v: Vec<&str> = s.split('_').collect();
    let [a, g, u, d, eg, eu, ed, largest] = v[..] else {
        return Err(form(format!(
            "a kind has 8 `_`-separated numbers, not {}",
            v.len()
        )));
    };
    let l = LayerBytes {
        attn: part(a)?,
        ffn_gate: part(g)?,
        ffn_up: part(u)?,
        ffn_down: part(d)?,
        exps_gate: part(eg)?,
        exps_up: part(eu)?,
        exps_down: part(ed)?,
        largest: number(largest)?,
    };
    // Each tensor is counted in one part and in `largest`
    // (`LayerBytes::add`): the largest is at most the largest part, and a
    // layer with bytes has a tensor.
    let parts = [
        l.attn,
        l.ffn_gate,
        l.ffn_up,
        l.ffn_down,
        l.exps_gate,
        l.exps_up,
        l.exps_down,
    ];
    let top = parts.iter().map(|p| p.bytes).max().unwrap_or(0);
    if l.largest > top {
        return Err(form(format!(
            "a kind's largest tensor ({}) is larger than its largest part ({top})",
            l.largest
        )));
    }
    if l.largest == 0 && top > 0 {
        return Err(form("a kind with bytes has a largest tensor, not 0".into()));
    }
    Ok(l)
}

fn sequence(s: &str, kinds: usize) -> Result<Vec<usize>, ReadFileError> {
    let mut out = Vec::new();
    for run in s.split('-') {
        let (k, n) = run.split_once('r').unwrap_or((run, "1"));
        let k = usize::try_from(number(k)?).unwrap_or(usize::MAX);
        if k >= kinds {
            return Err(form(format!(
                "kind {k} is not among the {kinds} given before `s`"
            )));
        }
        let n = usize::try_from(number(n)?).unwrap_or(usize::MAX);
        if n == 0 || out.len().saturating_add(n) > MAX_LAYERS {
            return Err(ReadFileError::Layers(out.len().saturating_add(n)));
        }
        out.extend(std::iter::repeat_n(k, n));
    }
    Ok(out)
}

/// Characters a file's name in a link may have.
pub const MAX_NAME: usize = 200;

/// Which file was read, as the link records it: `hf:` and a Hub
/// repository's file (`hf:Qwen/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf`), or the
/// name of a file picked from disk (nothing of it leaves the machine).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FileName {
    text: [u8; MAX_NAME],
    len: u8,
}

impl FileName {
    /// A name of 1 to [`MAX_NAME`] bytes with no control characters.
    pub fn new(name: &str) -> Result<FileName, String> {
        let name = name.trim();
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(format!(
                "not a file's name of 1 to {MAX_NAME} bytes (it has {})",
                name.len()
            ));
        }
        if name.chars().any(char::is_control) {
            return Err("not a file's name: it has control characters".into());
        }
        let mut text = [0; MAX_NAME];
        text[..name.len()].copy_from_slice(name.as_bytes());
        Ok(FileName {
            text,
            len: name.len() as u8,
        })
    }

    pub fn as_str(&self) -> &str {
        // Built from a `&str` by `new`, whole: always UTF-8.
        std::str::from_utf8(&self.text[..usize::from(self.len)]).unwrap_or_default()
    }

    /// The Hub repository and path, for an `hf:` name.
    pub fn hub(&self) -> Option<(&str, &str)> {
        let rest = self.as_str().strip_prefix("hf:")?;
        let mut cut = rest.match_indices('/').map(|(i, _)| i);
        let at = cut.nth(1)?;
        Some((&rest[..at], &rest[at + 1..]))
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileName({:?})", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(bytes: u128, cuda_extra: u128) -> Part {
        Part { bytes, cuda_extra }
    }

    fn file(layers: Vec<LayerBytes>, output: Option<Part>) -> FileBytes {
        FileBytes {
            layers,
            token_embd: 1000,
            token_embd_part: part(1000, 24),
            output,
            output_norm: 16,
        }
    }

    fn kind(attn: u128, down: u128) -> LayerBytes {
        LayerBytes {
            attn: part(attn, 128),
            ffn_down: part(down, 0),
            largest: down,
            ..LayerBytes::default()
        }
    }

    #[test]
    fn text_round_trips_and_folds_runs() {
        let (a, b) = (kind(500, 900), kind(600, 900));
        let f = file(vec![a, a, b, a, b, b, b], Some(part(2000, 0)));
        let r = ReadFile::fold(&f).expect("folds");
        let text = r.to_string();
        assert_eq!(
            text,
            "e1000x24.o2000.n16.k500x128_0_0_900_0_0_0_900.k600x128_0_0_900_0_0_0_900.s0r2-1-0-1r3"
        );
        assert_eq!(ReadFile::parse(&text), Ok(r));
        assert_eq!(r.unfold(), f);
        assert_eq!(r.total(), 1000 + 2000 + 16 + 3 * 1400 + 4 * 1500);
    }

    /// Gemma 4's per-layer table, an input-layer tensor beside
    /// `token_embd` in host memory, rides as `i` and never as the tied
    /// output's duplicate.
    #[test]
    fn other_input_tensors_ride_as_i() {
        let f = FileBytes {
            token_embd: 1000 + 5000,
            ..file(vec![kind(1, 2)], None)
        };
        let r = ReadFile::fold(&f).expect("folds");
        let text = r.to_string();
        assert_eq!(text, "e1000x24.i5000.n16.k1x128_0_0_2_0_0_0_2.s0");
        assert_eq!(ReadFile::parse(&text), Ok(r));
        assert_eq!(r.unfold(), f);
        assert_eq!(r.unfold().model().output, part(1000, 24));
    }

    #[test]
    fn tied_file_has_no_output_item() {
        let r = ReadFile::fold(&file(vec![kind(1, 2)], None)).expect("folds");
        assert_eq!(r.to_string(), "e1000x24.n16.k1x128_0_0_2_0_0_0_2.s0");
        assert_eq!(ReadFile::parse(&r.to_string()), Ok(r));
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let check = |text: &str, expected: &str| {
            let got = ReadFile::parse(text)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string());
            assert_eq!(got, Err(expected.to_string()), "{text}");
        };
        let k = "k1_0_0_2_0_0_0_2";
        check(
            &format!("e1.n2.{k}"),
            "not a file's bytes as vramfit writes them: no `s` (the layers' kinds)",
        );
        check(
            &format!("e1.n2.{k}.s1"),
            "not a file's bytes as vramfit writes them: kind 1 is not among the 1 given before `s`",
        );
        check(
            &format!("e1.n2.{k}.s0r300"),
            "the file has 300 repeating layers; vramfit carries 1 to 256",
        );
        check(
            &format!("e1.n2.{k}.s0r0"),
            "the file has 0 repeating layers; vramfit carries 1 to 256",
        );
        check(
            "e1.n2.k1_2.s0",
            "not a file's bytes as vramfit writes them: a kind has 8 `_`-separated numbers, not 2",
        );
        check(
            &format!("e1.n-2.{k}.s0"),
            "not a file's bytes as vramfit writes them: `-2` is not a whole number",
        );
        check(
            &format!("e1.n99999999999999999999.{k}.s0"),
            "not a file's bytes as vramfit writes them: `99999999999999999999` is too large",
        );
        check(
            &format!("e1.n2.{k}.{k}.s0"),
            "not a file's bytes as vramfit writes them: a kind is unused or repeated",
        );
        check(
            "e1.n1.k1_1_1_1_0_0_0_18446744073709551615.s0",
            "not a file's bytes as vramfit writes them: a kind's largest tensor (18446744073709551615) is larger than its largest part (1)",
        );
        check(
            "e1.n1.k1_1_1_1_0_0_0_0.s0",
            "not a file's bytes as vramfit writes them: a kind with bytes has a largest tensor, not 0",
        );
        check(
            "q1",
            "not a file's bytes as vramfit writes them: unknown item `q`",
        );
        check(
            "",
            "not a file's bytes as vramfit writes them: an empty item",
        );
        check(
            "é1",
            "not a file's bytes as vramfit writes them: unknown item `é`",
        );
    }

    #[test]
    fn names_say_their_hub_repository() {
        let n = FileName::new("hf:Qwen/Qwen3-8B-GGUF/sub/Qwen3-8B-Q4_K_M.gguf").expect("a name");
        assert_eq!(
            n.hub(),
            Some(("Qwen/Qwen3-8B-GGUF", "sub/Qwen3-8B-Q4_K_M.gguf"))
        );
        assert_eq!(FileName::new("model.gguf").expect("a name").hub(), None);
        assert_eq!(FileName::new("hf:no-path").expect("a name").hub(), None);
        assert!(FileName::new("C:\\models\\a b.gguf").is_ok());
        assert_eq!(
            FileName::new("a\u{7}b"),
            Err("not a file's name: it has control characters".into())
        );
        assert_eq!(
            FileName::new(&"x".repeat(201)).map(|_| ()),
            Err("not a file's name of 1 to 200 bytes (it has 201)".into())
        );
    }

    #[test]
    fn too_many_kinds_is_refused() {
        let layers = (0..7).map(|i| kind(i + 1, 1)).collect();
        assert_eq!(
            ReadFile::fold(&file(layers, None)),
            Err(ReadFileError::Kinds(7))
        );
    }
}
