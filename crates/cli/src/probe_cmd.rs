//! `vramfit probe [--ceiling-gib N] [--time-limit-s N] [--json] [--quiet]`:
//! the page's GPU memory probe, natively (wgpu on Vulkan, Metal or DX12).
//! Prints the adapter report and how much could be allocated at once, to
//! compare with `nvidia-smi` on a real GPU.
//!
//! Exit codes: 0 measured (whatever stopped it), 2 bad arguments, 3 no
//! adapter (or no backend), 4 the device was lost during the probe.

use vramfit_core::units::GIB;
use vramfit_core::Bytes;
use vramfit_probe::{
    block_on, document_json, probe, report, AdapterReport, Outcome, ProbeConfig, ProbeResult,
};

/// Usage text of the `probe` subcommand.
pub const USAGE: &str = "\
usage: vramfit probe [--ceiling-gib N] [--time-limit-s N] [--json] [--quiet]

Measures how much GPU memory can be allocated at once: buffers of up to
256 MiB, each cleared on the GPU and read back, until the GPU refuses, the
ceiling is reached, allocation slows down (swapping), or time runs out.
Everything is freed at the end.

  --ceiling-gib N    stop after N GiB (default 4; decimals allowed)
  --time-limit-s N   stop after N seconds (default 20)
  --json             print the adapter report and result as JSON
  --quiet            no progress lines on stderr

Exit codes: 0 measured, 2 bad arguments, 3 no GPU adapter, 4 device lost.";

/// Default ceiling: enough to check common cards without eating a machine.
const DEFAULT_CEILING_GIB: f64 = 4.0;

/// Largest ceiling accepted, in GiB.
const MAX_CEILING_GIB: f64 = 1024.0;

#[derive(Debug, PartialEq)]
struct Args {
    ceiling: Bytes,
    time_limit_ms: u64,
    json: bool,
    quiet: bool,
}

fn number(flag: &str, value: Option<&String>) -> Result<f64, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a number"))?;
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| format!("{flag} must be a positive number, not '{v}'"))
}

/// `Ok(None)` for `--help`.
fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut out = Args {
        ceiling: Bytes((DEFAULT_CEILING_GIB * GIB as f64) as u64),
        time_limit_ms: plan_default_time_limit(),
        json: false,
        quiet: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--json" => out.json = true,
            "--quiet" => out.quiet = true,
            "--ceiling-gib" => {
                let n = number(a, it.next())?;
                if n > MAX_CEILING_GIB {
                    return Err(format!("--ceiling-gib is at most {MAX_CEILING_GIB}"));
                }
                out.ceiling = Bytes((n * GIB as f64) as u64);
            }
            "--time-limit-s" => {
                let n = number(a, it.next())?;
                out.time_limit_ms = (n * 1000.0).min(u64::MAX as f64) as u64;
            }
            s => return Err(format!("unknown argument '{s}'")),
        }
    }
    Ok(Some(out))
}

fn plan_default_time_limit() -> u64 {
    vramfit_probe::plan::DEFAULT_TIME_LIMIT_MS
}

const NO_ADAPTER_HINT: &str = "(natively: no Vulkan, Metal or DX12 adapter was found. On Linux, \
install your GPU's Vulkan driver, or mesa-vulkan-drivers for a software one.)";

fn text(r: &AdapterReport, cfg: &ProbeConfig, res: &ProbeResult) -> String {
    let mut s = String::new();
    let name = if r.name.is_empty() {
        "(unnamed)"
    } else {
        &r.name
    };
    s.push_str(&format!(
        "adapter: {name} (vendor {}, {}, {})\n",
        if r.vendor.is_empty() { "?" } else { &r.vendor },
        r.backend,
        r.device_type
    ));
    if !r.description.is_empty() {
        s.push_str(&format!("driver: {}\n", r.description));
    }
    if let Some(note) = r.fallback_note() {
        s.push_str(&format!("warning: {note}\n"));
    }
    s.push_str(&format!("maxBufferSize: {} bytes\n", r.max_buffer_size()));
    s.push_str(&format!(
        "probe: ceiling {} bytes ({}), chunks of {} bytes, time limit {} s\n",
        cfg.ceiling.get(),
        cfg.ceiling,
        cfg.chunk.get(),
        cfg.time_limit_ms as f64 / 1000.0
    ));
    s.push_str(&format!("result: {}\n", res.summary()));
    s.push_str(&format!("allocated: {} bytes\n", res.allocated.get()));
    s.push_str(&format!("outcome: {}\n", res.outcome.key()));
    s.push_str(&format!("{}\n", res.message()));
    s
}

/// The probe `args` ask for on `adapter` (a software adapter caps the
/// ceiling, as it does in the page).
fn plan(args: &Args, adapter: &AdapterReport) -> ProbeConfig {
    let mut cfg = adapter.config(args.ceiling);
    cfg.time_limit_ms = args.time_limit_ms;
    cfg
}

/// Runs `vramfit probe`; `args` are the arguments after `probe`. Returns
/// the text to print, or the exit code and message.
pub fn run(args: &[String]) -> Result<String, (u8, String)> {
    let args = match parse(args) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(format!("{USAGE}\n")),
        Err(e) => return Err((2, format!("vramfit probe: {e}\n\n{USAGE}"))),
    };
    let adapter = block_on(report()).map_err(|o| {
        let hint = match o {
            Outcome::Unsupported | Outcome::NoAdapter => format!("\n{NO_ADAPTER_HINT}"),
            _ => String::new(),
        };
        (
            3,
            format!("vramfit probe: {}{hint}", Outcome::NoAdapter.message()),
        )
    })?;
    let cfg = plan(&args, &adapter);
    let quiet = args.quiet;
    let res = block_on(probe(
        cfg,
        |p| {
            if !quiet && p.chunks > 0 {
                eprintln!(
                    "probe: {} buffers, {} bytes ({:.2} GiB), {:.1} s",
                    p.chunks,
                    p.allocated.get(),
                    p.allocated.gib(),
                    p.elapsed_ms as f64 / 1000.0
                );
            }
        },
        || false,
    ));
    let out = if args.json {
        document_json(&adapter, &cfg, &res) + "\n"
    } else {
        text(&adapter, &cfg, &res)
    };
    match res.outcome {
        Outcome::Unsupported | Outcome::NoAdapter => Err((
            3,
            format!("vramfit probe: {}\n{NO_ADAPTER_HINT}", res.message()),
        )),
        Outcome::DeviceLost => Err((4, out)),
        _ => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_probe::FALLBACK_CEILING;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn parses_options() {
        assert_eq!(
            parse(&args(&[
                "--ceiling-gib",
                "1.5",
                "--json",
                "--time-limit-s",
                "2"
            ])),
            Ok(Some(Args {
                ceiling: Bytes(3 * GIB / 2),
                time_limit_ms: 2000,
                json: true,
                quiet: false
            }))
        );
        let d = parse(&[]).expect("test value").expect("test value");
        assert_eq!(d.ceiling, Bytes(4 * GIB));
        assert_eq!(d.time_limit_ms, 20_000);
        assert_eq!(parse(&args(&["--help"])), Ok(None));
    }

    #[test]
    fn rejects_bad_options() {
        for bad in [
            &["--ceiling-gib"][..],
            &["--ceiling-gib", "x"],
            &["--ceiling-gib", "-1"],
            &["--ceiling-gib", "inf"],
            &["--ceiling-gib", "2000"],
            &["--time-limit-s", "0"],
            &["--frobnicate"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
        let Err((code, msg)) = run(&args(&["--nope"])) else {
            panic!("expected an error");
        };
        assert_eq!(code, 2);
        assert!(msg.contains("unknown argument '--nope'"));
    }

    /// Issue 15, finding 3: on a software adapter `vramfit probe` keeps
    /// the page's 2 GiB ceiling (it used its own 4 GiB default there).
    #[test]
    fn a_software_adapter_caps_the_ceiling_as_in_the_page() {
        let defaults = parse(&[]).expect("defaults").expect("not help");
        let mut adapter = AdapterReport {
            limits: vec![("maxBufferSize".into(), 1 << 30)],
            ..Default::default()
        };
        assert_eq!(plan(&defaults, &adapter).ceiling, Bytes(4 * GIB));
        adapter.fallback = true;
        assert_eq!(plan(&defaults, &adapter).ceiling, FALLBACK_CEILING);
        let typed = parse(&args(&["--ceiling-gib", "1"]))
            .expect("1")
            .expect("args");
        assert_eq!(plan(&typed, &adapter).ceiling, Bytes(GIB));
    }
}
