//! Runs one benchmark scenario's estimate `N` times, for counting its
//! instructions under callgrind (`scripts/bench-ir.sh`): a count does not
//! move with the machine's load, where criterion's timings on a busy
//! machine move by half. The scenarios are criterion's own
//! (`benches/cases`).
//!
//! `instructions --list` prints the scenarios' names;
//! `instructions NAME N` runs that scenario's estimate N times.

#[path = "../benches/cases/mod.rs"]
mod cases;

use std::hint::black_box;
use std::process::ExitCode;
use vramfit_core::query::{decode_strict, RawQuery};
use vramfit_core::Scenario;

/// The counted part: `n` estimates (callgrind's `--toggle-collect`
/// names this function); false if one was refused.
#[inline(never)]
fn measured(s: &Scenario, infer: bool, n: u32) -> bool {
    let mut ok = true;
    for _ in 0..n {
        ok &= if infer {
            black_box(vramfit_core::infer::estimate(black_box(&s.infer_run()))).is_ok()
        } else {
            black_box(vramfit_core::train::estimate(black_box(&s.train_run()))).is_ok()
        };
    }
    ok
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = || {
        let train = cases::TRAIN.iter().map(|c| (c, false));
        train.chain(cases::INFER.iter().map(|c| (c, true)))
    };
    match args.as_slice() {
        [list] if list == "--list" => {
            for ((name, _), _) in all() {
                println!("{name}");
            }
            ExitCode::SUCCESS
        }
        [name, n] => {
            let Some((&(_, q), infer)) = all().find(|((c, _), _)| c == name) else {
                eprintln!("no scenario named {name:?} (see --list)");
                return ExitCode::FAILURE;
            };
            let Ok(n) = n.parse::<u32>() else {
                eprintln!("N must be a whole number, not {n:?}");
                return ExitCode::FAILURE;
            };
            let s = match decode_strict(&RawQuery::parse(q)) {
                Ok(s) => s,
                Err(notices) => {
                    eprintln!("{q}: {notices:?}");
                    return ExitCode::FAILURE;
                }
            };
            if measured(&s, infer, n) {
                ExitCode::SUCCESS
            } else {
                eprintln!("{name}: the estimate was refused");
                ExitCode::FAILURE
            }
        }
        _ => {
            eprintln!("usage: instructions --list | instructions NAME N");
            ExitCode::FAILURE
        }
    }
}
