#!/usr/bin/env python3
"""The long-sequence matrix (long_rows.jsonl): one argv list per configuration for the
shared harness's batch mode (`measure.py --argv-file FILE`).

    python3 scripts/measure/long/matrix.py [--only SUBSTR,...] [--out ROWS.jsonl] > argv.json

Every family vramfit knows, on a published config from crates/core/tests/fixtures/hf_configs,
at 16k, 32k and 64k tokens per step (batch x seq with seq <= the model's positions), with
full fine-tuning (bf16, amp_bf16; torch AdamW foreach), LoRA r16 all-linear and LoRA r16
attention-only (bf16 base), each with and without checkpointing; plus full fine-tuning with
checkpointing at 8 x 4096 for every family whose positions allow it, and the issue's cases.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = os.path.normpath(os.path.join(HERE, "../../../crates/core/tests/fixtures/hf_configs"))

# family -> (config file, [(batch, seq) at 16k, 32k, 64k tokens], attention, attention LoRA targets)
QKVO = "q_proj,k_proj,v_proj,o_proj"
MODELS = [
    ("gpt2", "gpt2-124m", [(16, 1024), (32, 1024), (64, 1024)], "sdpa", "c_attn"),
    ("gpt_bigcode", "starcoderbase-1b", [(2, 8192), (4, 8192), (8, 8192)], "sdpa", "c_attn"),
    ("llama", "llama3.1-8b", [(1, 16384), (1, 32768), (1, 65536)], "sdpa", QKVO),
    ("mistral", "mistral-7b", [(1, 16384), (1, 32768), (2, 32768)], "sdpa", QKVO),
    ("mistral", "mistral-nemo-12b", [(1, 16384), (1, 32768), (1, 65536)], "sdpa", QKVO),
    ("qwen2", "qwen2.5-7b", [(1, 16384), (1, 32768), (1, 65536)], "sdpa", QKVO),
    ("qwen3", "qwen3-8b", [(1, 16384), (1, 32768), (2, 32768)], "sdpa", QKVO),
    ("phi3", "phi3.5-mini", [(1, 16384), (1, 32768), (1, 65536)], "sdpa", "qkv_proj,o_proj"),
    ("phi3", "phi3-mini", [(4, 4096), (8, 4096), (16, 4096)], "sdpa", "qkv_proj,o_proj"),
    ("gemma", "gemma-2b", [(2, 8192), (4, 8192), (8, 8192)], "sdpa", QKVO),
    ("gemma2", "gemma2-2b", [(2, 8192), (4, 8192), (8, 8192)], "eager", QKVO),
    ("gemma3_text", "gemma3-1b", [(1, 16384), (1, 32768), (2, 32768)], "sdpa", QKVO),
    ("olmo2", "olmo2-1b", [(4, 4096), (8, 4096), (16, 4096)], "sdpa", QKVO),
    ("mixtral", "mixtral-8x7b", [(1, 16384), (1, 32768), (2, 32768)], "sdpa", QKVO),
    ("qwen2_moe", "qwen1.5-moe-a2.7b", [(2, 8192), (4, 8192), (8, 8192)], "sdpa", QKVO),
    ("qwen3_moe", "qwen3-30b-a3b", [(1, 16384), (1, 32768), (2, 32768)], "sdpa", QKVO),
    ("deepseek_v2", "deepseek-v2-lite", [(1, 16384), (1, 32768), (1, 65536)], "sdpa",
     "q_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj"),
    ("deepseek_v3", "moonlight-16b-a3b", [(2, 8192), (4, 8192), (8, 8192)], "sdpa",
     "q_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj"),
    ("gpt_oss", "gpt-oss-20b", [(1, 16384), (1, 32768), (1, 65536)], "eager", QKVO),
]

RECIPES = [  # name, dtype, lora targets (None = full fine-tuning)
    ("full bf16", "bf16", None),
    ("full amp_bf16", "amp_bf16", None),
    ("lora16 all-linear", "bf16", "all-linear"),
    ("lora16 attn", "bf16", "attn"),
]


def argv(family, model, dtype, lora, b, s, gc, attn, attn_targets, recipe, extra=""):
    a = ["--config", f"{CFG}/{model}.json", "--mode", "fake", "--dtype", dtype, "--optim", "adamw",
         "--batch", str(b), "--seq", str(s), "--gc", str(gc), "--attn", attn]
    if lora:
        a += ["--lora", "1", "--lora-r", "16",
              "--lora-targets", attn_targets if lora == "attn" else lora]
    tag = f"long:{family}; {recipe} b{b} s{s}{' gc' if gc else ''}{extra}"
    return a + ["--tag", tag]


def matrix():
    out = []
    for family, model, shapes, attn, attn_targets in MODELS:
        for b, s in shapes:
            for recipe, dtype, lora in RECIPES:
                for gc in (0, 1):
                    out.append(argv(family, model, dtype, lora, b, s, gc, attn, attn_targets, recipe))
        # full fine-tuning with checkpointing at 8 x 4096 (positions >= 4096)
        if (b, s) != (8, 4096) and model not in ("gpt2-124m",):
            if all((bb, ss) != (8, 4096) for bb, ss in shapes):
                for recipe, dtype, _ in RECIPES[:2]:
                    out.append(argv(family, model, dtype, None, 8, 4096, 1, attn, attn_targets,
                                    recipe, "; 8x4096"))
    # the cases that the grid above does not hold
    out.append(argv("mistral", "mistral-7b", "bf16", "all-linear", 2, 16384, 1, "sdpa", QKVO,
                    "lora16 all-linear", "; issue"))
    out.append(argv("mistral", "mistral-7b", "bf16", "attn", 2, 16384, 1, "sdpa", QKVO,
                    "lora16 attn", "; issue"))
    for lora in ("all-linear", "attn"):
        out.append(argv("mixtral", "mixtral-8x7b", "bf16", lora, 4, 8192, 1, "sdpa", QKVO,
                        f"lora16 {'all-linear' if lora == 'all-linear' else 'attn'}", "; issue"))
    return out


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="keep configurations whose argv holds one of these")
    ap.add_argument("--out", default="", help="rows file the harness appends to")
    ap.add_argument("--skip-done", default="", help="leave out (model, tag) pairs this rows file holds")
    args = ap.parse_args()
    m = matrix()
    if args.skip_done and os.path.exists(args.skip_done):
        done = set()
        for line in open(args.skip_done):
            r = json.loads(line)
            done.add((r["model"], r["tag"]))

        def key(a):
            return (os.path.splitext(os.path.basename(a[a.index("--config") + 1]))[0],
                    a[a.index("--tag") + 1])
        m = [a for a in m if key(a) not in done]
    if args.only:
        keys = args.only.split(",")
        m = [a for a in m if any(k in " ".join(a) for k in keys)]
    if args.out:
        m = [a + ["--out", args.out] for a in m]
    json.dump(m, sys.stdout, indent=0)
    print(len(m), "configurations", file=sys.stderr)
