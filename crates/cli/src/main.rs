//! `vramfit '<query string>'`: the page's query string in, the same estimate
//! out, as JSON (or a table with `--text`). Exit code 2 on bad input.

#[cfg(feature = "probe")]
mod probe_cmd;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use vramfit_core::query::{self, RawQuery, FIELDS};
use vramfit_core::{Estimate, Estimates, Scenario};

const USAGE: &str = "\
usage: vramfit [--text] '<query string>'
       vramfit probe [--ceiling-gib N] [--json]   (built with --features probe)

Estimates the GPU memory of a training run. The query string is the part of
a vramfit page link after '?', e.g.

  vramfit 'model=llama3.1-8b&dtype=amp_bf16&optim=adamw&batch=4&seq=2048'
  vramfit 'params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048'   (seed formula only)

Prints the estimate as JSON; --text prints a table. Exit code 2 on bad input.

keys:";

enum Format {
    Json,
    Text,
}

struct Args {
    format: Format,
    query: String,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut format = Format::Json;
    let mut query = None;
    for a in args {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--text" => format = Format::Text,
            "--json" => format = Format::Json,
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s if query.is_none() => query = Some(s.to_string()),
            _ => {
                return Err(
                    "expected one query string (quote it: '&' splits shell commands)".into(),
                )
            }
        }
    }
    Ok(Some(Args {
        format,
        query: query.unwrap_or_default(),
    }))
}

fn usage() -> String {
    let mut s = USAGE.to_string();
    for f in FIELDS {
        s.push_str(&format!("\n  {:<13} {}", f.key, f.help));
    }
    s
}

fn table(e: &Estimate, out: &mut String) {
    out.push_str(&format!(
        "{:<4} {:<5} {:<15} {:>18} {:>10} {:>18} {:>10}\n",
        "iter", "micro", "phase", "peak bytes", "peak GiB", "end bytes", "end GiB"
    ));
    for p in &e.phases {
        out.push_str(&format!(
            "{:<4} {:<5} {:<15} {:>18} {:>10.3} {:>18} {:>10.3}\n",
            p.iteration,
            p.micro_step,
            p.phase.key(),
            p.peak_bytes.get(),
            p.peak_bytes.gib(),
            p.end_bytes.get(),
            p.end_bytes.gib(),
        ));
    }
    out.push_str(&format!(
        "peak: {} bytes ({}) in {} of iteration {}; allocated {} bytes\n",
        e.peak_total_bytes.get(),
        e.peak_total_bytes,
        e.peak_phase.key(),
        e.peak_iteration,
        e.peak_allocated_bytes.get(),
    ));
    if let Some(p) = e.peak() {
        for (c, b) in p.components.iter() {
            out.push_str(&format!(
                "  {:<26} {:>18} {:>10.3} GiB\n",
                c.label(),
                b.get(),
                b.gib()
            ));
        }
    }
}

fn text(all: &Estimates, s: &Scenario) -> String {
    let mut out = format!("vramfit: {}\n", query::encode(s).to_query_string());
    match s.arch {
        Some(a) => out.push_str(&format!(
            "model: {} ({} parameters; {} hidden, {} layers, {} heads, {} kv heads, {} ffn, {} vocab{})\n",
            s.preset().map_or("custom", |p| p.name),
            a.params(),
            a.hidden,
            a.layers,
            a.heads,
            a.kv_heads,
            a.ffn,
            a.vocab,
            if a.tied { ", tied" } else { "" }
        )),
        None => out.push_str(&format!("model: {} parameters (no architecture)\n", s.params())),
    }
    for (name, r) in [("vramfit", &all.vramfit), ("seed formula", &all.seed)] {
        out.push_str(&format!("\n== {name}\n"));
        match r {
            Ok(e) => table(e, &mut out),
            Err(err) => out.push_str(&format!("not available: {err}\n")),
        }
    }
    out
}

/// The arguments as text: a non-UTF-8 argument is bad input (exit 2), named
/// by its position, never a panic.
fn utf8_args(args: impl Iterator<Item = OsString>) -> Result<Vec<String>, (u8, String)> {
    args.enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                (
                    2,
                    format!(
                        "vramfit: argument {} is not valid UTF-8: {}",
                        i + 1,
                        a.to_string_lossy().chars().take(40).collect::<String>()
                    ),
                )
            })
        })
        .collect()
}

fn run(argv: Vec<String>) -> Result<String, (u8, String)> {
    let args = match parse_args(argv.into_iter()) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(usage() + "\n"),
        Err(e) => return Err((2, format!("vramfit: {e}\n\n{}", usage()))),
    };
    let decoded = query::decode(&RawQuery::parse(&args.query));
    if !decoded.notices.is_empty() {
        let lines: Vec<String> = decoded
            .notices
            .iter()
            .map(|n| format!("vramfit: {n}"))
            .collect();
        return Err((2, lines.join("\n")));
    }
    let scenario = decoded.scenario;
    let notes: Vec<String> = decoded.notes.iter().map(ToString::to_string).collect();
    for n in &notes {
        eprintln!("vramfit: note: {n}");
    }
    let all = Estimates::new(&scenario);
    Ok(match args.format {
        Format::Text => text(&all, &scenario),
        Format::Json => {
            let mut doc = all
                .document(&scenario)
                .map_err(|e| (2, format!("vramfit: {e}")))?;
            doc.notes.extend(notes);
            doc.to_json() + "\n"
        }
    })
}

fn main() -> ExitCode {
    let result = utf8_args(std::env::args_os().skip(1)).and_then(|argv| {
        match argv.first().map(String::as_str) {
            #[cfg(feature = "probe")]
            Some("probe") => probe_cmd::run(&argv[1..]),
            #[cfg(not(feature = "probe"))]
            Some("probe") => Err((
                2,
                "vramfit: this build has no probe; build it with `cargo build -p vramfit-cli --features probe`"
                    .to_string(),
            )),
            _ => run(argv),
        }
    });
    match result {
        Ok(out) => {
            // A closed pipe (`vramfit ... | head`) is not an error worth a panic.
            let _ = std::io::stdout().write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err((code, msg)) => {
            eprintln!("{msg}");
            ExitCode::from(code)
        }
    }
}
