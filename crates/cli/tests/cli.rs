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
        "params=1500000000&dtype=bf16&optim=adamw&batch=8&seq=2048&grad_accum=1&grad_ckpt=false\
         &attn=sdpa&lora_r=0&gpus=1&zero=0"
    );
    assert_eq!(v["method"], "seed_formula");
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
fn a_model_gets_both_methods() {
    let (code, out, _) = vramfit(&["model=llama3.2-1b&dtype=fp32&optim=adamw&batch=1&seq=1024"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["method"], "vramfit");
    assert_eq!(v["params"], 1_235_814_400u64);
    // Source: the ground truth's peak_overall for this configuration.
    assert_eq!(v["peak_allocated_bytes"], 24_716_305_224u64);
    assert_eq!(v["peak_phase"], "optimizer_step");
    assert_eq!(v["peak_iteration"], 1);
    let phases: Vec<String> = v["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| {
            format!(
                "{}:{}",
                p["iteration"],
                p["phase"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        phases,
        [
            "0:init",
            "1:forward",
            "1:backward",
            "1:optimizer_step",
            "1:zero_grad",
            "2:forward",
            "2:backward",
            "2:optimizer_step",
            "2:zero_grad"
        ]
    );
    assert_eq!(v["seed_formula"]["method"], "seed_formula");
    assert_eq!(v["scenario"]["arch"]["hidden"], 2048);
    assert!(v.get("notes").is_none());
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
    for key in [
        "model", "params", "hidden", "dtype", "optim", "batch", "seq", "lora_r", "zero", "gpu",
    ] {
        assert!(out.contains(&format!("\n  {key}")), "{key}");
    }
}
