//! The command line's share of the fuzz campaign (issue 9): argument
//! vectors (flags, generated query strings, config files, non-UTF-8 bytes)
//! through `vramfit_cli::run`, in-process. Invariants: no panic, exit code 0
//! or 2 (3 only for the probe, which is not built here), JSON on stdout when
//! it succeeds, and every error under 2 KB.

use std::ffi::OsString;
use vramfit_core::fuzz::{self, Rng};

fn cases() -> u64 {
    std::env::var("VRAMFIT_FUZZ_ARGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

#[cfg(unix)]
fn not_utf8() -> OsString {
    use std::os::unix::ffi::OsStringExt;
    OsString::from_vec(vec![b'b', b'a', b't', b'c', b'h', b'=', 0xff, 0xfe])
}

#[cfg(not(unix))]
fn not_utf8() -> OsString {
    OsString::from("batch=\u{FFFD}")
}

fn config_file(dir: &std::path::Path, i: u64, text: &str) -> String {
    let path = dir.join(format!("config-{i}.json"));
    std::fs::write(&path, text).expect("write a config");
    path.to_string_lossy().into_owned()
}

#[test]
fn generated_argument_vectors() {
    let dir = std::env::temp_dir().join(format!("vramfit-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut r = Rng::new(0xA7_65);
    let n = cases();
    for i in 0..n {
        let mut args: Vec<OsString> = Vec::new();
        for _ in 0..r.range(0, 4) {
            let a: OsString = match r.below(15) {
                0 => "--text".into(),
                1 => "--json".into(),
                2 => "--as-llama".into(),
                3 => "--bogus".into(),
                4 => "-h".into(),
                // First, with the probe built in, it would run a real
                // probe (GPU memory, seconds): its own tests cover that
                // path (src/probe_cmd.rs); here it is an argument.
                5 if args.is_empty() && cfg!(feature = "probe") => "--text".into(),
                5 => "probe".into(),
                6 => not_utf8(),
                7 => "--config".into(),
                8 => config_file(&dir, i, &fuzz::config(&mut r)).into(),
                // `--from -` reads the generated stdin below.
                9 => "--from".into(),
                10 => "-".into(),
                11 => "--check".into(),
                _ => fuzz::query(&mut r).into(),
            };
            args.push(a);
        }
        let shown = format!("{args:?}");
        // A query string, a config or nothing, as `--from -`'s stdin.
        let stdin = match r.below(3) {
            0 => fuzz::query(&mut r),
            1 => fuzz::config(&mut r),
            _ => String::new(),
        };
        let out = vramfit_cli::run_with_stdin(args.into_iter(), &mut stdin.as_bytes());
        let help = out.stdout.starts_with("usage: vramfit");
        match out.code {
            0 if help || out.stdout.starts_with("vramfit: ") => {}
            0 | 1 if out.stdout.starts_with("vramfit: ") || out.stdout.starts_with("read: ") => {}
            0 | 1 => {
                let v: serde_json::Value = serde_json::from_str(&out.stdout)
                    .unwrap_or_else(|e| panic!("{shown}: not JSON ({e}): {}", out.stdout));
                assert!(v["peak_total_bytes"].is_u64(), "{shown}");
            }
            // `--from` says what it read even when there is no estimate.
            2 => assert!(
                out.stdout.is_empty() || out.stdout.starts_with("{\n  \"read\""),
                "{shown}"
            ),
            code => panic!("{shown}: exit code {code}: {}", out.stderr),
        }
        // Bad arguments print the usage (with every key's help) after the
        // reason; everything else is short.
        if !out.stderr.contains("usage: vramfit") {
            assert!(
                out.stderr.len() < 2048,
                "{shown}: a {}-byte message",
                out.stderr.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{n} argument vectors");
}
