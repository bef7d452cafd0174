#!/usr/bin/env python3
"""Markdown tables of the fixture rows (one GPU and FSDP1), grouped by configuration across
transformers versions, and the byte-formula checks of NOTES.md.
usage: report.py crates/core/tests/fixtures/t4_rows.jsonl crates/core/tests/fixtures/fsdp1_rows.jsonl"""
import json, sys
from collections import OrderedDict

G = 1e9


def load(p):
    return [json.loads(l) for l in open(p)]


def key_of(r):
    return r["tag"]


def table(rows, title):
    print(f"\n### {title}\n")
    print("| configuration (tag) | transformers | peak GB | phase | fwd2 | end_fwd2 | bwd2 | step2 |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(key_of(r), []).append(r)
    for k in sorted(groups):
        for r in sorted(groups[k], key=lambda r: [int(x) for x in r["transformers"].split(".")]):
            m = r["measured"]; d = m["iter2"]
            print(f"| {k} | {r['transformers']} | {m['peak_overall']/G:.3f} | {m['peak_overall_phase']} | {d['peak_fwd']/G:.3f} | "
                  f"{d['end_fwd']/G:.3f} | {d['peak_bwd']/G:.3f} | {d['peak_step']/G:.3f} |")


def loss_check(rows):
    """4.48.x ForCausalLMLoss against 5.x: forward peak delta 4*[B>1]*B*(S-1)*V - 4*B*V (+ int64 labels),
    backward head delta -12*B*V."""
    by = {}
    for r in rows:
        by[(r["tag"], r["transformers"])] = r
    print("\n### Loss formula check (4.48.1 minus 5.23.0, iteration 2)\n")
    print("| tag | B | S | V | Δfwd measured | Δfwd formula | residual | Δbwd measured | Δbwd formula | residual |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (t, v), a in sorted(by.items()):
        if v != "4.48.1" or (t, "5.23.0") not in by or not t.startswith("lora1"):
            continue
        b = by[(t, "5.23.0")]
        B, S, V = a["batch"], a["seq"], a["arch"]["vocab"]
        dF = a["measured"]["iter2"]["peak_fwd"] - b["measured"]["iter2"]["peak_fwd"]
        dB = a["measured"]["iter2"]["peak_bwd"] - b["measured"]["iter2"]["peak_bwd"]
        fF = 4 * (B > 1) * B * (S - 1) * V - 4 * B * V
        fB = -12 * B * V
        print(f"| {t} | {B} | {S} | {V} | {dF} | {fF} | {dF-fF} | {dB} | {fB} | {dB-fB} |")


def main():
    one = load(sys.argv[1]); fs = load(sys.argv[2])
    table(one, "One GPU (t4_rows.jsonl)")
    table(fs, "FSDP1, rank 0 of 2 (fsdp1_rows.jsonl)")
    loss_check(one)


if __name__ == "__main__":
    main()
