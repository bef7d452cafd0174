//! The regular expressions of llama.cpp's tensor overrides (`-ot`), as
//! `std::regex_search` reads them (ECMAScript): the patterns of llama.cpp's
//! own options and of published guides, against the tensor names of a
//! layer.

use vramfit_core::regex::Regex;

fn check(pattern: &str, rows: &[(&str, bool)]) {
    let r = Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    for (name, want) in rows {
        assert_eq!(r.search(name), Some(*want), "{pattern} on {name}");
    }
}

#[test]
fn overrides_people_write() {
    // `--cpu-moe` (`common/arg.cpp`, b10488: `LLM_FFN_EXPS_REGEX`).
    check(
        "\\.ffn_(up|down|gate|gate_up)_(ch|)exps",
        &[
            ("blk.3.ffn_up_exps.weight", true),
            ("blk.3.ffn_gate_up_exps.weight", true),
            ("blk.3.ffn_down_chexps.weight", true),
            ("blk.3.ffn_up_shexp.weight", false),
            ("blk.3.ffn_up.weight", false),
        ],
    );
    // `--n-cpu-moe N`: `llm_ffn_exps_block_regex(i)`, one per layer.
    check(
        "blk\\.12\\.ffn_(up|down|gate|gate_up)_(ch|)exps",
        &[
            ("blk.12.ffn_down_exps.weight", true),
            ("blk.2.ffn_down_exps.weight", false),
            ("blk.112.ffn_down_exps.weight", false),
        ],
    );
    // unsloth's guides.
    check(
        ".ffn_.*_exps.",
        &[
            ("blk.0.ffn_gate_exps.weight", true),
            ("blk.0.ffn_gate_inp.weight", false),
        ],
    );
    check(
        "blk\\.(1[0-9]|2[0-4])\\.ffn_.*_exps\\.",
        &[
            ("blk.10.ffn_up_exps.weight", true),
            ("blk.24.ffn_up_exps.weight", true),
            ("blk.25.ffn_up_exps.weight", false),
            ("blk.9.ffn_up_exps.weight", false),
            ("blk.1.ffn_up_exps.weight", false),
        ],
    );
    check(
        "exps",
        &[
            ("blk.0.ffn_down_exps.weight", true),
            ("output.weight", false),
        ],
    );
    check(
        "^blk\\.[0-9]{1,2}\\.attn_.*$",
        &[
            ("blk.7.attn_q.weight", true),
            ("blk.100.attn_q.weight", false),
            ("xblk.7.attn_q", false),
        ],
    );
    check(
        "[^0-9]\\d+\\.ffn_down",
        &[("blk.31.ffn_down.weight", true), ("31.ffn_down", false)],
    );
    check("(a?){2}b", &[("b", true)]);
    check("(?:x|y)+z", &[("xyxz", true), ("z", false)]);
}

#[test]
fn what_is_not_read_is_refused_with_its_place() {
    for (pattern, at) in [
        ("(?=exps)", 2),
        ("blk\\.(1", 8),
        ("exps)", 5),
        ("*exps", 1),
        ("\\1", 2),
        ("[9-0]", 4),
        ("a{2,1}", 6),
        ("a{", 3),
        ("^*", 2),
    ] {
        let e = Regex::new(pattern).expect_err(pattern);
        assert_eq!(e.at + 1, at, "{pattern}: {e}");
    }
}

/// A pattern whose backtracking doubles with each character gives up
/// (`None`) rather than stall the page.
#[test]
fn a_search_that_would_not_end_gives_up() {
    let r = Regex::new("(.|.)*x").expect("reads");
    assert_eq!(r.search("blk.93.attn_q.weight"), None);
    assert_eq!(r.search("x"), Some(true));
}
