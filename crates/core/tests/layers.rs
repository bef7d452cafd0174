//! The core's imports go one way (ARCHITECTURE.md, "Invariants"): from the
//! codec to the scenario, to the workloads, to the report, with re-exports
//! followed to where an item is defined. No cycle spans two parts; the
//! codec imports only the workloads' input types; the report knows no
//! scenario; the model imports nothing of a workload, the codec or the
//! report; the two workloads nothing of each other; and no code outside
//! `model/` names a family's variant.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate's parts, bottom to top: a part may import its own modules and
/// the parts below it, never one above (so no cycle spans two parts).
/// Parts on one line import nothing of each other.
const PARTS: &[&[&str]] = &[
    &[
        "units", "choice", "clip", "error", "wire", "caching", "sort", "cublas",
    ],
    &["text", "component", "gpus", "regex"],
    &["terms", "model"],
    &["inputs", "lora", "report"],
    &["train", "infer"],
    &["scenario"],
    &["query"],
    &["import", "paste"],
    &["lib"],
    &["solve", "explain", "compare"],
    &["tools", "fuzz"],
];

/// The workloads' input types: all the codec may import of a workload
/// (`infer::local::read` is a read file as a link carries it).
const INPUTS: &[&str] = &[
    "train::run",
    "train::stack",
    "infer::run",
    "infer::engine",
    "infer::local::read",
];

type Module = Vec<String>;

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without its comments (doc comments name modules)
/// and without its unit tests (`#[cfg(test)]`, at the end of a file).
fn code(p: &Path) -> String {
    let text = std::fs::read_to_string(p).expect("readable");
    let text: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// `src/train/breakdown/mod.rs` is `train::breakdown`; `lib.rs` the root.
fn module_of(p: &Path) -> Module {
    let rel = p.strip_prefix(src()).expect("under src");
    let mut m: Module = rel
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
        m.pop();
    }
    m
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`,
/// `a::c::e` (`self` is the prefix itself; `as` renames are dropped).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("");
        return vec![path
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "self")
            .collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|tail| prefix.iter().cloned().chain(tail).collect())
        .collect()
}

/// The crate's modules, what each names of the crate, and its re-exports.
struct Crate {
    modules: BTreeSet<Module>,
    /// Each module's paths into the crate, made absolute.
    uses: BTreeMap<Module, BTreeSet<Module>>,
    /// (module, name) re-exported by `pub use` -> the path it names.
    reexports: BTreeMap<(Module, String), Module>,
}

impl Crate {
    fn read() -> Crate {
        let files: Vec<(Module, String)> = sources(&src())
            .iter()
            .map(|p| (module_of(p), code(p)))
            .collect();
        let modules: BTreeSet<Module> = files.iter().map(|(m, _)| m.clone()).collect();
        let mut c = Crate {
            modules,
            uses: BTreeMap::new(),
            reexports: BTreeMap::new(),
        };
        for (m, text) in &files {
            c.read_uses(m, text);
            c.read_paths(m, text);
        }
        c
    }

    /// `crate::a::b` from the crate's root; `super::` and `self::` from `m`;
    /// a child module's name from `m` (`mod x; use x::Y;`).
    fn absolute(&self, m: &Module, path: &[String]) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some(m.iter().chain(rest).cloned().collect()),
            "super" => {
                let mut base = m.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                Some(base.into_iter().chain(rest.iter().cloned()).collect())
            }
            _ => {
                let child: Module = m.iter().chain([first]).cloned().collect();
                self.modules
                    .contains(&child)
                    .then(|| m.iter().chain(path).cloned().collect())
            }
        }
    }

    fn read_uses(&mut self, m: &Module, text: &str) {
        for (i, _) in text.match_indices("use ") {
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let head = text[..i].trim_end();
            let public = ["pub", "pub(crate)", "pub(super)"]
                .iter()
                .any(|v| head.ends_with(v));
            let Some(end) = text[i..].find(';') else {
                continue;
            };
            for path in expand(&text[i + 4..i + end]) {
                let Some(abs) = self.absolute(m, &path) else {
                    continue;
                };
                if public {
                    if let Some(name) = path.last() {
                        self.reexports
                            .insert((m.clone(), name.clone()), abs.clone());
                    }
                }
                self.uses.entry(m.clone()).or_default().insert(abs);
            }
        }
    }

    /// Paths written in the code (`crate::x::y(...)`, `super::z`).
    fn read_paths(&mut self, m: &Module, text: &str) {
        for start in ["crate::", "super::"] {
            for (i, _) in text.match_indices(start) {
                let before = text[..i].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let mut path = vec![start.trim_end_matches(':').to_string()];
                let mut rest = &text[i + start.len()..];
                loop {
                    let name = ident(rest);
                    if name.is_empty() {
                        // `a::{b, c}` or `a::*`: a use tree, read whole
                        // by `read_uses`.
                        path.clear();
                        break;
                    }
                    rest = &rest[name.len()..];
                    path.push(name);
                    match rest.strip_prefix("::") {
                        Some(r) => rest = r,
                        None => break,
                    }
                }
                if let Some(abs) = self.absolute(m, &path) {
                    self.uses.entry(m.clone()).or_default().insert(abs);
                }
            }
        }
    }

    /// The module that defines what `path` names, re-exports followed.
    fn defined_in(&self, path: &[String], hops: usize) -> Module {
        for k in (0..=path.len()).rev() {
            let m = path[..k].to_vec();
            if !self.modules.contains(&m) {
                continue;
            }
            if let Some(name) = path.get(k) {
                if let Some(target) = self.reexports.get(&(m.clone(), name.clone())) {
                    if hops < 16 && target.as_slice() != path {
                        let full: Module = target.iter().chain(&path[k + 1..]).cloned().collect();
                        return self.defined_in(&full, hops + 1);
                    }
                }
            }
            return m;
        }
        Vec::new()
    }

    /// Each module's imports, as the modules that define them.
    fn edges(&self) -> Vec<(Module, Module)> {
        let mut out = BTreeSet::new();
        for (m, paths) in &self.uses {
            for p in paths {
                out.insert((m.clone(), self.defined_in(p, 0)));
            }
        }
        out.into_iter().collect()
    }
}

/// A module's part: its first name, or `lib` for the root.
fn part(m: &Module) -> &str {
    m.first().map_or("lib", String::as_str)
}

fn level(part: &str) -> usize {
    PARTS
        .iter()
        .position(|line| line.contains(&part))
        .unwrap_or_else(|| panic!("crate::{part} is not placed in PARTS: add it where it belongs"))
}

fn path(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn imports_go_down_the_parts_with_re_exports_followed() {
    let c = Crate::read();
    let mut wrong = Vec::new();
    for (from, to) in c.edges() {
        let (a, b) = (part(&from), part(&to));
        if a != b && level(b) >= level(a) {
            wrong.push(format!(
                "{} uses {} ({a} is not above {b})",
                path(&from),
                path(&to)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the parts' order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_codec_imports_only_the_workloads_input_types() {
    let c = Crate::read();
    for (from, to) in c.edges() {
        if !matches!(part(&from), "query" | "import") || !matches!(part(&to), "train" | "infer") {
            continue;
        }
        let to_path = path(&to);
        assert!(
            INPUTS
                .iter()
                .any(|i| to_path == *i || to_path.starts_with(&format!("{i}::"))),
            "{} uses {to_path}, not a workload's input",
            path(&from)
        );
    }
}

#[test]
fn the_reports_and_the_scenarios_place_in_the_order() {
    // What the issue named: the report knows no scenario, the scenario no
    // codec, the workloads neither; and the model none of them.
    for (low, high) in [
        ("report", "scenario"),
        ("scenario", "query"),
        ("train", "scenario"),
        ("infer", "scenario"),
        ("model", "train"),
        ("model", "report"),
        ("text", "query"),
        ("terms", "report"),
    ] {
        assert!(level(low) < level(high), "{low} below {high}");
    }
}

#[test]
fn the_training_modules_import_each_other_one_way() {
    let c = Crate::read();
    let second = |m: &Module| m.get(1).cloned().unwrap_or_default();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in c.edges() {
        // `train/mod.rs`, the wing's front, stands apart from its modules.
        let (a, b) = (second(&from), second(&to));
        if part(&from) == "train"
            && part(&to) == "train"
            && a != b
            && !a.is_empty()
            && !b.is_empty()
        {
            graph.entry(a).or_default().insert(b);
        }
    }
    // A cycle exists when some module reaches itself.
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph[start].iter().collect();
        while let Some(m) = todo.pop() {
            assert_ne!(
                m, start,
                "train::{start} imports itself through others: {graph:?}"
            );
            if seen.insert(m.clone()) {
                todo.extend(graph.get(m).into_iter().flatten());
            }
        }
    }
}

#[test]
fn the_two_workloads_import_nothing_of_each_other() {
    let c = Crate::read();
    for (from, to) in c.edges() {
        let (a, b) = (part(&from), part(&to));
        assert!(
            !matches!((a, b), ("train", "infer") | ("infer", "train")),
            "{} uses {}",
            path(&from),
            path(&to)
        );
    }
}

#[test]
fn the_resolver_follows_re_exports() {
    // A check of the checker: `crate::Scenario` is defined in `scenario`,
    // `crate::train::Targets` in `lora`, through two re-exports (`train`'s
    // of its run's inputs, `train::run`'s of `lora`).
    let c = Crate::read();
    let p = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(c.defined_in(&p("Scenario"), 0), p("scenario"));
    assert_eq!(c.defined_in(&p("train::Targets"), 0), p("lora"));
    assert_eq!(c.defined_in(&p("Bytes"), 0), p("units"));
    assert_eq!(
        expand("a::{b, c::{d, e as f}, self}"),
        vec![p("a::b"), p("a::c::d"), p("a::c::e"), p("a")]
    );
}

/// Where an engine may be named by its variant: the engine table, the
/// dispatch, each engine's own modules, the engines' key table and the
/// inference solver (under `crates/core/src`); nowhere in the page.
const ENGINE_NAMED_IN: &[&str] = &[
    "infer/engine.rs",
    "infer/mod.rs",
    "infer/transformers.rs",
    "infer/vllm/",
    "infer/local/",
    "query/tasks.rs",
    "solve/infer.rs",
];

/// The `Engine::Variant`s a file's code names (not `Engine::ALL`, nor a
/// function such as `Engine::from_key`).
fn engine_variants(p: &Path) -> Vec<String> {
    let c = code(p);
    c.match_indices("Engine::")
        .filter(|(i, _)| {
            let before = c[..*i].chars().next_back();
            !before.is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        })
        .map(|(i, _)| ident(&c[i + 8..]))
        .filter(|v| {
            v.chars().next().is_some_and(char::is_uppercase) && v.chars().any(char::is_lowercase)
        })
        .collect()
}

#[test]
fn an_engine_is_named_only_where_engines_are_described() {
    let src = src();
    for p in sources(&src) {
        let rel = p
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        let allowed = ENGINE_NAMED_IN
            .iter()
            .any(|a| rel == *a || (a.ends_with('/') && rel.starts_with(a)));
        let named = engine_variants(&p);
        assert!(
            allowed || named.is_empty(),
            "{rel} names Engine::{}",
            named.join(", Engine::")
        );
    }
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src");
    for p in sources(&page) {
        let named = engine_variants(&p);
        assert!(
            named.is_empty(),
            "the page's {} names Engine::{}",
            p.display(),
            named.join(", Engine::")
        );
    }
    // A check of the check.
    assert_eq!(
        engine_variants(&src.join("infer/engine.rs"))
            .first()
            .map(String::as_str),
        Some("Transformers")
    );
}

#[test]
fn no_family_is_named_outside_the_model() {
    let src = src();
    let model = src.join("model");
    for p in sources(&src).into_iter().filter(|p| !p.starts_with(&model)) {
        let c = code(&p);
        for (i, _) in c.match_indices("Family::") {
            let rest = ident(&c[i + 8..]);
            let is_variant = rest.chars().next().is_some_and(char::is_uppercase)
                && rest.chars().any(char::is_lowercase);
            assert!(!is_variant, "{} names Family::{rest}", p.display());
        }
    }
}
