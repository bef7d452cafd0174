//! `vramfit '<query string>'`: the page's query string in, the same estimate
//! out, as JSON (or a table with `--text`). Exit code 2 on bad input.

use std::io::Write;
use std::process::ExitCode;
use vramfit_core::query::{self, RawQuery, FIELDS};
use vramfit_core::report::Document;
use vramfit_core::{seed, Estimate};

const USAGE: &str = "\
usage: vramfit [--text] '<query string>'

Estimates GPU memory for a training run. The query string is the part of a
vramfit page link after '?', e.g.

  vramfit 'params=1.5e9&dtype=bf16&optim=adamw&batch=8&seq=2048'

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
        s.push_str(&format!("\n  {:<8} {}", f.key, f.help));
    }
    s
}

fn text(e: &Estimate, query: &str) -> String {
    let mut out = format!("vramfit: {query}\nmethod: {}\n\n", e.method.label());
    out.push_str(&format!(
        "{:<4} {:<15} {:>18} {:>12} {:>18} {:>12}\n",
        "iter", "phase", "peak bytes", "peak GiB", "end bytes", "end GiB"
    ));
    for p in &e.phases {
        out.push_str(&format!(
            "{:<4} {:<15} {:>18} {:>12.3} {:>18} {:>12.3}\n",
            p.iteration,
            p.phase.key(),
            p.peak_bytes.get(),
            p.peak_bytes.gib(),
            p.end_bytes.get(),
            p.end_bytes.gib(),
        ));
    }
    out.push_str(&format!(
        "\npeak: {} bytes ({}) in {} of iteration {}\n",
        e.peak_total_bytes.get(),
        e.peak_total_bytes,
        e.peak_phase.key(),
        e.peak_iteration
    ));
    if let Some(p) = e.peak() {
        for (c, b) in p.components.iter() {
            out.push_str(&format!(
                "  {:<24} {:>18} {:>12.3} GiB\n",
                c.label(),
                b.get(),
                b.gib()
            ));
        }
    }
    out
}

fn run() -> Result<String, (u8, String)> {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(usage() + "\n"),
        Err(e) => return Err((2, format!("vramfit: {e}\n\n{}", usage()))),
    };
    let scenario = query::decode_strict(&RawQuery::parse(&args.query)).map_err(|notices| {
        let lines: Vec<String> = notices.iter().map(|n| format!("vramfit: {n}")).collect();
        (2, lines.join("\n"))
    })?;
    let estimate = seed::estimate(&scenario).map_err(|e| (2, format!("vramfit: {e}")))?;
    let canonical = query::encode(&scenario).to_query_string();
    Ok(match args.format {
        Format::Text => text(&estimate, &canonical),
        Format::Json => Document::new(canonical, &estimate).to_json() + "\n",
    })
}

fn main() -> ExitCode {
    match run() {
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
