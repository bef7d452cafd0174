//! The `vramfit` binary: [`vramfit_cli::run`], printed.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let out = vramfit_cli::run(std::env::args_os().skip(1));
    // A closed pipe (`vramfit ... | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    ExitCode::from(out.code)
}
