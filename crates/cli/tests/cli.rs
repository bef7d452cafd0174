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
    // Source: the ground truth's peak_overall for this configuration, and
    // cuBLAS's two workspaces on the default GPU (2 × 8,519,680 bytes, CUDA
    // only: the ground truth ran on the CPU).
    assert_eq!(v["peak_allocated_bytes"], 24_716_305_224u64 + 2 * 8_519_680);
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

/// Issue 9, finding 4: a non-UTF-8 argument aborted the process (SIGABRT,
/// exit 134, from `std::env::args()`); it is bad input: a message, exit 2.
#[cfg(unix)]
#[test]
fn a_non_utf8_argument_is_bad_input() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .arg(std::ffi::OsStr::from_bytes(b"\xff"))
        .output()
        .expect("run vramfit");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "vramfit: argument 1 is not valid UTF-8: \u{FFFD}\n"
    );
}

/// Issue 9, finding 2: with gradient accumulation the peak is in a later
/// micro-step; the table's rows must be that moment's (they sum to it).
#[test]
fn the_text_breakdown_sums_to_the_peak_with_gradient_accumulation() {
    let (code, out, _) = vramfit(&["--text", "grad_accum=4"]);
    assert_eq!(code, 0);
    let vramfit = out.split("== seed formula").next().unwrap_or_default();
    let peak: u64 = vramfit
        .lines()
        .find_map(|l| l.strip_prefix("peak: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("peak line");
    let rows: u64 = vramfit
        .lines()
        .skip_while(|l| !l.starts_with("peak: "))
        .skip(1)
        .filter_map(|l| l.split_whitespace().rev().nth(2)?.parse::<u64>().ok())
        .sum();
    assert_eq!(rows, peak, "{vramfit}");
}

/// Issue 9, findings 3 and 5: the seed formula past 2^64 bytes is an error
/// (exit 2) that names batch × seq, not a saturated success or "needs an
/// architecture".
#[test]
fn too_large_for_the_seed_formula_names_the_inputs() {
    for q in [
        "params=100T&batch=47&seq=4184633",
        "params=100T&batch=65536&seq=4194304",
    ] {
        let (code, out, err) = vramfit(&[q]);
        assert_eq!((code, out.as_str()), (2, ""), "{q}");
        assert_eq!(
            err, "vramfit: batch × seq is too large: the memory would exceed 16 EiB (2^64 bytes)\n",
            "{q}"
        );
    }
}

fn fixture(name: &str) -> String {
    format!(
        "{}/../core/tests/fixtures/hf_configs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Issue 10: `vramfit --config config.json '<query>'` reads the file with
/// the page's importer; query keys override it.
#[test]
fn a_config_json_with_query_keys_on_top() {
    let (code, out, err) = vramfit(&[
        "--config",
        &fixture("transformers4/llama3.2-1b"),
        "dtype=fp32&optim=adamw&batch=1&seq=1024",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["scenario"]["model"]["preset"]["id"], "llama3.2-1b");
    // Source: the ground truth's peak_overall (as a_model_gets_both_methods).
    assert_eq!(v["peak_allocated_bytes"], 24_716_305_224u64 + 2 * 8_519_680);

    // The query wins over the file.
    let (code, out, _) = vramfit(&["--config", &fixture("llama3.2-1b"), "layers=2"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["scenario"]["arch"]["layers"], 2);
}

/// A config transformers 5.23 refuses as written (Scout's
/// `attn_temperature_tuning` 4) is estimated, with a note on stderr and in
/// the JSON's notes, first.
#[test]
fn a_config_transformers_refuses_is_estimated_with_a_note() {
    let (code, out, err) = vramfit(&["--config", &fixture("llama4-scout"), "batch=1&seq=512"]);
    assert_eq!(code, 0, "{err}");
    let first =
        "transformers 5.23 refuses this config.json as written: `attn_temperature_tuning` is 4";
    assert!(err.starts_with(&format!("vramfit: note: {first}")), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(
        v["notes"][0].as_str().is_some_and(|n| n.starts_with(first)),
        "{}",
        v["notes"]
    );
    let (code, _, err) = vramfit(&["--config", &fixture("llama4-maverick"), "batch=1&seq=512"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("refuses"), "{err}");
}

#[test]
fn a_config_of_an_unknown_family_is_refused_unless_read_as_llama() {
    let dir = std::env::temp_dir().join(format!("vramfit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("config.json");
    std::fs::write(
        &path,
        r#"{"model_type": "stablelm", "hidden_size": 2048, "num_hidden_layers": 16,
            "num_attention_heads": 16, "intermediate_size": 8192, "vocab_size": 100352}"#,
    )
    .expect("write");
    let p = path.to_string_lossy().to_string();
    let (code, _, err) = vramfit(&["--config", &p, "batch=1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("model_type `stablelm` is not a family vramfit knows"),
        "{err}"
    );
    assert!(err.contains("add --as-llama"), "{err}");
    let (code, out, err) = vramfit(&["--config", &p, "--as-llama", "batch=1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("vramfit: note: `stablelm` is not a family vramfit knows"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["notes"][0]
        .as_str()
        .is_some_and(|n| n.contains("Llama-like")));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _, err) = vramfit(&["--config", "/nonexistent/config.json", "batch=1"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("vramfit: --config /nonexistent/config.json: "),
        "{err}"
    );
}

fn paste_fixture(name: &str) -> String {
    format!(
        "{}/../core/tests/fixtures/pastes/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `--from` a PyTorch OOM message: the GPU's capacity read, the run given
/// in the query, each measured figure beside the estimate's, and
/// `--check` exits 1 because the run does not fit (as it did not).
#[test]
fn from_an_oom_message_checks_the_run() {
    let file = paste_fixture("pytorch-oom-23.65gib.txt");
    let (code, out, err) = vramfit(&[
        "--from",
        &file,
        "--check",
        "model=llama3.1-8b&dtype=bf16&batch=1&seq=512",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("short by"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["read"], "gpu=custom&capacity_gib=23.65");
    assert_eq!(v["found"][0], "PyTorch's out-of-memory message");
    let m = &v["measured"][0];
    assert_eq!(m["field"], "peak_allocated_bytes");
    assert_eq!(m["measured"], 24_611_756_442u64);
    assert_eq!(m["estimated"], v["peak_allocated_bytes"]);
    assert_eq!(m["holds"], "at_least_reached");
    assert_eq!(m["bound"], "at least");
    assert!(v["query"]
        .as_str()
        .is_some_and(|q| q.contains("capacity_gib=23.65")));
}

/// `--check` exits 0 when the run fits, and `--from -` reads stdin.
#[test]
fn from_stdin_and_check_fits() {
    let yaml = std::fs::read(paste_fixture("trl-example_config.yaml")).expect("fixture");
    let args = ["--from", "-", "--check", "batch=1&seq=512&gpu=h100-sxm-80"];
    let out = vramfit_cli::run_with_stdin(args.iter().map(Into::into), &mut yaml.as_slice());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(v["read"], "task=train&model=qwen2.5-0.5b");
    assert_eq!(v["unknown"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["scenario"]["model"]["preset"]["id"], "qwen2.5-0.5b");
}

/// A torchtitan TOML config (torchtitan v0.2.2's `llama3_8b.toml`): its
/// training keys read, the GPU count it leaves to torchrun given in the
/// query and applied on top, and the selective checkpointing it asks for
/// listed as not read.
#[test]
fn from_a_torchtitan_config_with_the_gpus_given() {
    let file = paste_fixture("torchtitan-llama3_8b.toml");
    let (code, out, err) = vramfit(&["--from", &file, "gpus=8&gpu=h100-sxm-80"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["read"],
        "task=train&model=llama3.1-8b&dtype=amp_bf16&optim=adamw_fused&batch=1&seq=8192&zero=3&shard=fsdp2"
    );
    assert_eq!(v["found"][0], "a torchtitan TOML training config");
    assert!(v["query"]
        .as_str()
        .is_some_and(|q| q.contains("gpus=8&zero=3&shard=fsdp2")));
    assert!(v["unknown"][0]
        .as_str()
        .is_some_and(|u| u.starts_with("activation_checkpoint.mode = selective (line 58)")));
    assert!(v["peak_total_bytes"].as_u64().is_some());
}

/// A llama.cpp start-up log: read to its settings, its buffers beside
/// the estimate's, in the table too.
#[test]
fn from_a_llamacpp_log_as_text() {
    let file = paste_fixture("llamacpp-qwen3-0.6b-orin-b5489.log");
    let (code, out, err) = vramfit(&["--from", &file, "--text"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "read: task=infer&model=qwen3-0.6b&engine=llamacpp&weights=q4_k_m&ctx=4096"
        ),
        "{out}"
    );
    assert!(
        out.contains("measured kv_cache_bytes: measured 469762048 bytes"),
        "{out}"
    );
    assert!(out.contains("within the printed rounding"), "{out}");
}

/// No estimate for what was read (vLLM over pipeline stages does not model
/// Gemma 4 yet): what was read and measured is still printed, with why, and
/// the exit code is 2.
#[test]
fn from_without_an_estimate_says_what_it_read() {
    let log = b"(APIServer pid=1) INFO 11-02 10:00:00 [utils.py:253] non-default args: {'model_tag': 'google/gemma-4-31B-it', 'model': 'google/gemma-4-31B-it', 'max_model_len': 32768, 'pipeline_parallel_size': 2}
(EngineCore pid=7) INFO 11-02 10:01:00 [gpu_worker.py:508] Available KV cache memory: 5.98 GiB
";
    let args = ["--from", "-", "--check"];
    let out = vramfit_cli::run_with_stdin(args.iter().map(Into::into), &mut log.as_slice());
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("not modelled yet"), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        v["read"],
        "task=infer&model=gemma4-31b&engine=vllm&ctx=32768&pipeline_parallel_size=2"
    );
    assert_eq!(v["measured"][0]["measured"], 6_420_976_108u64);
    assert_eq!(v["measured"][0]["holds"], "not_estimated");
    assert!(v["estimate_error"]
        .as_str()
        .is_some_and(|e| e.contains("Gemma 4")));
    assert!(v.get("peak_total_bytes").is_none());
}

#[test]
fn from_bad_input_exits_2() {
    let missing = paste_fixture("no-such-file.txt");
    let dir = std::env::temp_dir().join(format!("vramfit-from-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let binary = dir.join("model.gguf");
    std::fs::write(&binary, b"GGUF\x03\0\0\0").expect("write");
    let big = dir.join("big.log");
    std::fs::write(&big, vec![b'a'; (4 << 20) + 1]).expect("write");
    let other = dir.join("other.txt");
    std::fs::write(&other, "hello world\n").expect("write");
    for (args, says) in [
        (vec!["--from", missing.as_str()], "--from"),
        (vec!["--from", binary.to_str().unwrap_or("")], "binary"),
        (vec!["--from", big.to_str().unwrap_or("")], "4194305 bytes"),
        (
            vec!["--from", other.to_str().unwrap_or("")],
            "not a command",
        ),
        (vec!["--from"], "--from needs a file"),
        (
            vec!["--from", "a", "--config", "b"],
            "--from reads its own settings",
        ),
    ] {
        let (code, out, err) = vramfit(&args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
