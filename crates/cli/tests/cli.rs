//! The `vramfit` binary: same query string as the page, JSON or a table out,
//! exit code 2 with a clear message on bad input.

use std::process::Command;

fn vramfit(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("run vramfit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prints_the_estimate_as_json() {
    let (code, out, err) = vramfit(&["params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["query"],
        "params=1500000000&dtype=bf16&optim=adamw&batch=8&seq=2048"
    );
    assert_eq!(v["peak_total_bytes"], 92_650_478_080u64);
    assert_eq!(v["peak_phase"], "forward");
    assert_eq!(v["peak_iteration"], 2);
    assert_eq!(v["phases"].as_array().map(Vec::len), Some(7));
    assert_eq!(v["phases"][3]["phase"], "optimizer_step");
    assert_eq!(
        v["phases"][3]["components"]["optimizer_temporaries"],
        3_000_000_000u64
    );
}

#[test]
fn a_leading_question_mark_and_a_full_link_query_work() {
    let (code, out, _) = vramfit(&["?batch=8&seq=2048&params=1.5e9&optim=adamw&dtype=bf16"]);
    assert_eq!(code, 0);
    assert!(out.contains("\"peak_total_bytes\": 92650478080"));
}

#[test]
fn text_table() {
    let (code, out, _) = vramfit(&[
        "--text",
        "params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn bad_input_exits_2_with_every_problem() {
    let (code, out, err) = vramfit(&["batch=0&seq=abc&colour=blue&dtype=fp8"]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    insta::assert_snapshot!(err);
}

#[test]
fn bad_arguments_exit_2() {
    let (code, _, err) = vramfit(&["--bogus"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("vramfit: unknown option --bogus"));
    let (code, _, err) = vramfit(&["batch=1", "seq=2"]);
    assert_eq!(code, 2);
    assert!(err.contains("quote it"));
}

#[test]
fn help_lists_every_key() {
    let (code, out, _) = vramfit(&["--help"]);
    assert_eq!(code, 0);
    for key in ["params", "dtype", "optim", "batch", "seq"] {
        assert!(out.contains(&format!("\n  {key}")), "{key}");
    }
}
