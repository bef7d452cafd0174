//! The core's wings keep to their lanes (ARCHITECTURE.md, "Invariants"):
//! the model's description imports nothing of a workload, the codec or the
//! report; the training and inference workloads nothing of the codec, the
//! solver or the page's tools (nor of each other); and no code outside `model/` names a family's variant
//! (what differs between families is read from the description).

use std::path::{Path, PathBuf};

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

/// The code of a file without its comments (doc comments name modules).
fn code(p: &Path) -> String {
    let text = std::fs::read_to_string(p).expect("readable");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `crate::x` modules a folder's code uses.
fn uses(folder: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(folder);
    let mut out = Vec::new();
    for p in sources(&dir) {
        let c = code(&p);
        for (i, _) in c.match_indices("crate::") {
            let name: String = c[i + 7..]
                .chars()
                .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                .collect();
            out.push((p.display().to_string(), name));
        }
    }
    out
}

#[test]
fn the_model_imports_nothing_of_a_workload_the_codec_or_the_report() {
    let allowed = ["model", "choice", "clip", "units"];
    for (file, m) in uses("model") {
        assert!(allowed.contains(&m.as_str()), "{file} uses crate::{m}");
    }
}

#[test]
fn training_imports_nothing_of_the_codec_the_solver_or_the_tools() {
    let allowed = [
        "model",
        "train",
        "terms",
        "report",
        "units",
        "scenario",
        "choice",
        "EstimateError",
    ];
    for (file, m) in uses("train") {
        assert!(allowed.contains(&m.as_str()), "{file} uses crate::{m}");
    }
}

#[test]
fn no_family_is_named_outside_the_model() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let model = src.join("model");
    for p in sources(&src).into_iter().filter(|p| !p.starts_with(&model)) {
        let c = code(&p);
        for (i, _) in c.match_indices("Family::") {
            let rest: String = c[i + 8..]
                .chars()
                .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                .collect();
            let is_variant = rest.chars().next().is_some_and(char::is_uppercase)
                && rest.chars().any(char::is_lowercase);
            assert!(!is_variant, "{} names Family::{rest}", p.display());
        }
    }
}

#[test]
fn inference_imports_nothing_of_training_the_codec_the_solver_or_the_tools() {
    let allowed = [
        "model",
        "infer",
        "terms",
        "report",
        "units",
        "scenario",
        "choice",
        "EstimateError",
    ];
    for (file, m) in uses("infer") {
        assert!(allowed.contains(&m.as_str()), "{file} uses crate::{m}");
    }
}
