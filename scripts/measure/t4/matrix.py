#!/usr/bin/env python3
"""The measured matrix: runs measure48.py / fsdp48.py one configuration at a time (nice, 1 thread).

usage: matrix.py VENV_PYTHON OUT.jsonl GROUP[,GROUP...] [--only SUBSTR] [--tags FILE] [--dry]
(--tags: a file of exact tags, one per line, to run only those)
groups: lora1 (Mistral LoRA one GPU), bigcode, fullft, mixtral, moe_loop (4.x expert loop), loss (loss swaps on 4.x),
        fsdp, fsdp_more, fsdp2
Each configuration's tag names it; rows append to OUT.jsonl.
"""
import itertools, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = os.environ.get("HF_CONFIGS", os.path.join(HERE, "..", "..", "..", "crates", "core", "tests", "fixtures", "hf_configs"))
SCRATCH_CFG = os.environ.get("T4_CFG", "/work/scratch-t4/cfg")
SIZES = [(1, 2048), (4, 2048), (8, 4096)]


def cfg(name):
    p = os.path.join(CFG, name + ".json")
    return p if os.path.exists(p) else os.path.join(SCRATCH_CFG, name + ".json")


def lora1():
    for (b, s), gc, attn in itertools.product(SIZES, ("reentrant", "nonreentrant"), ("fa2emu", "sdpa")):
        yield (f"lora1:mistral-7b:qkvo:r16:bf16+amp:{gc}:{attn}:b{b}s{s}",
               ["measure48.py", "--config", cfg("mistral-7b"), "--dtype", "bf16", "--autocast", "1", "--lora", "1",
                "--lora-r", "16", "--lora-alpha", "16", "--lora-dropout", "0.05", "--gc", gc, "--attn", attn,
                "--batch", str(b), "--seq", str(s)])
    # without accelerate's autocast (bf16 model, fp32 adapters as peft makes them)
    yield ("lora1:mistral-7b:qkvo:r16:bf16-noamp:reentrant:fa2emu:b4s2048",
           ["measure48.py", "--config", cfg("mistral-7b"), "--dtype", "bf16", "--lora", "1", "--lora-r", "16",
            "--lora-alpha", "16", "--lora-dropout", "0.05", "--gc", "reentrant", "--attn", "fa2emu", "--batch", "4", "--seq", "2048"])


def loss():
    for (b, s), lo in itertools.product(SIZES[1:], ("v5", "v448")):
        yield (f"loss:mistral-7b:qkvo:r16:bf16+amp:reentrant:fa2emu:b{b}s{s}:loss={lo}",
               ["measure48.py", "--config", cfg("mistral-7b"), "--dtype", "bf16", "--autocast", "1", "--lora", "1",
                "--lora-r", "16", "--lora-alpha", "16", "--lora-dropout", "0.05", "--gc", "reentrant", "--attn", "fa2emu",
                "--batch", str(b), "--seq", str(s), "--loss", lo])


def bigcode():
    for model, dt, attn, gc in itertools.product(("starcoderbase-1b",), ("bf16", "amp_bf16"), ("fa2emu", "sdpa"), ("off", "reentrant")):
        extra = ["--autocast", "1"] if dt == "bf16" else []
        yield (f"bigcode:{model}:full:{dt}{'+amp' if extra else ''}:{gc}:{attn}:b4s2048:cache1",
               ["measure48.py", "--config", cfg(model), "--dtype", dt, *extra, "--gc", gc, "--attn", attn,
                "--batch", "4", "--seq", "2048", "--use-cache", "1"])
    for gc in ("off", "reentrant", "nonreentrant"):
        yield (f"bigcode:starcoderbase-1b:full:bf16+amp:{gc}:fa2emu:b4s2048:cache0",
               ["measure48.py", "--config", cfg("starcoderbase-1b"), "--dtype", "bf16", "--autocast", "1", "--gc", gc,
                "--attn", "fa2emu", "--batch", "4", "--seq", "2048", "--use-cache", "0"])
    yield ("bigcode:starcoderbase-1b:full:bf16+amp:nonreentrant:fa2emu:b4s2048:cache1",
           ["measure48.py", "--config", cfg("starcoderbase-1b"), "--dtype", "bf16", "--autocast", "1", "--gc", "nonreentrant",
            "--attn", "fa2emu", "--batch", "4", "--seq", "2048", "--use-cache", "1"])
    for gc in ("off", "reentrant"):
        # pure bf16 (model loaded in bf16, Trainer bf16=False: no autocast)
        yield (f"bigcode:starcoderbase-1b:full:bf16-noamp:{gc}:fa2emu:b4s2048:cache1",
               ["measure48.py", "--config", cfg("starcoderbase-1b"), "--dtype", "bf16", "--gc", gc,
                "--attn", "fa2emu", "--batch", "4", "--seq", "2048", "--use-cache", "1"])
    for gc in ("off", "reentrant"):
        yield (f"bigcode:santacoder:full:bf16+amp:{gc}:fa2emu:b8s2048:cache1",
               ["measure48.py", "--config", cfg("santacoder"), "--dtype", "bf16", "--autocast", "1", "--gc", gc,
                "--attn", "fa2emu", "--batch", "8", "--seq", "2048", "--use-cache", "1"])


def fullft():
    for model, gc, attn in itertools.product(("llama3.1-8b", "mistral-7b"), ("reentrant", "nonreentrant"), ("fa2emu", "sdpa")):
        yield (f"fullft:{model}:full:bf16+amp:{gc}:{attn}:b8s4096",
               ["measure48.py", "--config", cfg(model), "--dtype", "bf16", "--autocast", "1", "--gc", gc, "--attn", attn,
                "--batch", "8", "--seq", "4096"])
    yield ("fullft:llama3.1-8b:full:amp_bf16:reentrant:fa2emu:b8s4096",
           ["measure48.py", "--config", cfg("llama3.1-8b"), "--dtype", "amp_bf16", "--gc", "reentrant", "--attn", "fa2emu",
            "--batch", "8", "--seq", "4096"])


def mixtral():
    # 4.x experts are nn.Linear and route with torch.where (data dependent): real CPU tensors, shrunk config
    for gc, attn, tg in itertools.product(("reentrant", "nonreentrant"), ("sdpa", "fa2emu"), ("qkvo", "all")):
        targets = "q_proj,k_proj,v_proj,o_proj" if tg == "qkvo" else "q_proj,k_proj,v_proj,o_proj,w1,w2,w3"
        yield (f"mixtral:mixtral-shrunk:lora-{tg}:r16:bf16+amp:{gc}:{attn}:b2s512:real",
               ["measure48.py", "--config", cfg("mixtral-shrunk"), "--dtype", "bf16", "--autocast", "1", "--lora", "1",
                "--lora-r", "16", "--lora-alpha", "16", "--lora-dropout", "0.05", "--lora-targets", targets, "--gc", gc,
                "--attn", attn, "--batch", "2", "--seq", "512", "--mode", "real"])


def scratch_config(name, base, update, drop=()):
    """The path of a config `base` changed by `update` (and without `drop`), written to SCRATCH_CFG once."""
    path = os.path.join(SCRATCH_CFG, name + ".json")
    if not os.path.exists(path):
        with open(cfg(base)) as f:
            c = json.load(f)
        c.update(update)
        for k in drop:
            c.pop(k, None)
        os.makedirs(SCRATCH_CFG, exist_ok=True)
        with open(path, "w") as f:
            json.dump(c, f, indent=1)
    return path


def loop_row(tag, path, gc, targets, attn="sdpa"):
    """One bf16 + autocast row on real tensors at 2 x 512: LoRA r16 on `targets`, or full fine-tuning."""
    lora = ["--lora", "1", "--lora-r", "16", "--lora-alpha", "16", "--lora-dropout", "0.05",
            "--lora-targets", targets] if targets else []
    return (tag, ["measure48.py", "--config", path, "--dtype", "bf16", "--autocast", "1", *lora, "--gc", gc,
                  "--attn", attn, "--batch", "2", "--seq", "512", "--mode", "real"])


def moe_loop():
    # transformers 4's per-expert loop: no checkpointing and non-reentrant (the saved tensors of every
    # expert, summed), and the shrunk Mixtral with a 128-token vocabulary, so that the loop's own moments
    # rather than the logits hold the peaks
    attn_only = "q_proj,k_proj,v_proj,o_proj"
    scratch_config("mixtral-shrunk-v128", "mixtral-shrunk", dict(vocab_size=128))
    for model, gc, tg in [("mixtral-shrunk", "off", "all"), ("mixtral-shrunk", "off", "qkvo"),
                          ("mixtral-shrunk", "nonreentrant", "all"), ("mixtral-shrunk-v128", "off", "all"),
                          ("mixtral-shrunk-v128", "reentrant", "all")]:
        targets = attn_only if tg == "qkvo" else attn_only + ",w1,w2,w3"
        yield loop_row(f"mixtral:{model}:lora-{tg}:r16:bf16+amp:{gc}:sdpa:b2s512:real", cfg(model), gc, targets)
    # Qwen-MoE's per-expert MLPs (gate_proj, up_proj, down_proj; Qwen2-MoE's shared expert and its gate too),
    # shrunk: 2 layers, hidden 1024, 16 experts, top 4, vocab 32000 (Qwen3-MoE is 4.51 and later: $T457 only)
    shrunk = dict(num_hidden_layers=2, hidden_size=1024, num_attention_heads=8, num_experts=16,
                  num_experts_per_tok=4, vocab_size=32000, tie_word_embeddings=False)
    for name, base, extra in [("qwen2moe-shrunk", "qwen1.5-moe-a2.7b",
                               dict(num_key_value_heads=8, moe_intermediate_size=1408,
                                    shared_expert_intermediate_size=2816, intermediate_size=2816)),
                              ("qwen3moe-shrunk", "qwen3-30b-a3b",
                               dict(num_key_value_heads=2, head_dim=128, moe_intermediate_size=768,
                                    intermediate_size=3072))]:
        path = scratch_config(name, base, dict(shrunk, **extra))
        for gc, tg in [("off", "all"), ("reentrant", "all"), ("off", "qkvo")]:
            targets = attn_only if tg == "qkvo" else attn_only + ",gate_proj,up_proj,down_proj"
            yield loop_row(f"moe_loop:{name}:lora-{tg}:r16:bf16+amp:{gc}:sdpa:b2s512:real", path, gc, targets)
    # gpt-oss (4.55 to 4.57: stacked experts looped over in training, $T457 only): gpt-oss-20b's layout
    # shrunk to 2 layers, hidden 1024, 16 experts of 1024, top 4, 8 heads of 64, 2 kv heads, vocab 32000
    # (its special tokens moved inside the vocabulary, its first two layer types); eager attention (sinks)
    with open(cfg("gpt-oss-20b")) as f:
        layer_types = json.load(f)["layer_types"][:2]
    path = scratch_config("gptoss-shrunk", "gpt-oss-20b", dict(
        num_hidden_layers=2, hidden_size=1024, intermediate_size=1024, num_local_experts=16, num_experts_per_tok=4,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, vocab_size=32000, pad_token_id=31999,
        eos_token_id=31998, layer_types=layer_types), drop=("quantization_config",))
    for gc, lora in itertools.product(("off", "reentrant"), (True, False)):
        tag = "lora-qkvo:r16" if lora else "full"
        yield loop_row(f"moe_loop:gptoss-shrunk:{tag}:bf16+amp:{gc}:eager:b2s512:real", path, gc,
                       attn_only if lora else None, attn="eager")
    # DeepSeek-V3 (4.57: per-expert linears looped, a router parameter, fp32 routing weights unless autocast):
    # deepseek-v3.json shrunk to 2 layers (the first dense), hidden 1024, 16 experts of 512, top 4 in 4 groups
    # (2 picked), one shared expert, latent attention (q rank 256, kv rank 128, heads 8 of 64 + 32), vocab 32000.
    # Only the reentrant rows: without checkpointing the CPU's SDPA math path for latent attention keeps what
    # neither of vramfit's kernels does (NOTES.md §8; those two rows were run with --gc off, kept out).
    path = scratch_config("dsv3-shrunk", "deepseek-v3", dict(
        num_hidden_layers=2, first_k_dense_replace=1, hidden_size=1024, intermediate_size=2048,
        moe_intermediate_size=512, n_routed_experts=16, num_experts_per_tok=4, n_group=4, topk_group=2,
        n_shared_experts=1, num_attention_heads=8, num_key_value_heads=8, q_lora_rank=256, kv_lora_rank=128,
        qk_rope_head_dim=32, qk_nope_head_dim=64, v_head_dim=64, vocab_size=32000), drop=("quantization_config",))
    targets = "q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj,gate_proj,up_proj,down_proj"
    for lora in (True, False):
        tag = "lora-all:r16" if lora else "full"
        yield loop_row(f"moe_loop:dsv3-shrunk:{tag}:bf16+amp:reentrant:sdpa:b2s512:real", path, "reentrant",
                       targets if lora else None)
    # DeepSeek-V2 (4.57: `DeepseekV2MoE.moe` sorts the routed rows and runs each expert on its slice, a loop
    # vramfit does not describe): deepseek-v2-lite.json shrunk as DeepSeek-V3 above (no q rank, 16 experts of
    # 512, top 4 greedy), reentrant checkpointing only (the recompute hides the loop's saved tensors; without
    # it the CPU's latent-attention path decides, NOTES.md §8); LoRA on the attention (4.x refuses it on the
    # experts' gate/up/down) and full fine-tuning
    path = scratch_config("dsv2-shrunk", "deepseek-v2-lite", dict(
        num_hidden_layers=2, first_k_dense_replace=1, hidden_size=1024, intermediate_size=2048,
        moe_intermediate_size=512, n_routed_experts=16, num_experts_per_tok=4, n_shared_experts=1,
        num_attention_heads=8, num_key_value_heads=8, kv_lora_rank=128, qk_rope_head_dim=32, qk_nope_head_dim=64,
        v_head_dim=64, vocab_size=32000), drop=("auto_map",))
    for lora in (False, True):
        tag = "lora-attn:r16" if lora else "full"
        yield loop_row(f"moe_loop:dsv2-shrunk:{tag}:bf16+amp:reentrant:sdpa:b2s512:real", path, "reentrant",
                       "q_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj" if lora else None)
    # Without checkpointing, on eager attention (which the CPU runs as CUDA does, so the loop's own saved
    # tensors and moments show): full fine-tuning, LoRA on the attention, LoRA on every linear (the experts'
    # gate/up/down included); and with a 128-token vocabulary, so that the loop rather than the logits holds
    # the peaks
    scratch_config("dsv2-shrunk-v128", "dsv2-shrunk", dict(vocab_size=128))
    attn = "q_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj"
    for model, (tag, targets) in itertools.product(
            ("dsv2-shrunk", "dsv2-shrunk-v128"),
            (("full", None), ("lora-attn:r16", attn), ("lora-all:r16", attn + ",gate_proj,up_proj,down_proj"))):
        yield loop_row(f"moe_loop:{model}:{tag}:bf16+amp:off:eager:b2s512:real", cfg(model), "off", targets,
                       attn="eager")
    # and with reentrant checkpointing at the 128-token vocabulary: the recompute's no-grad loop
    for tag, targets in (("full", None), ("lora-all:r16", attn + ",gate_proj,up_proj,down_proj")):
        yield loop_row(f"moe_loop:dsv2-shrunk-v128:{tag}:bf16+amp:reentrant:eager:b2s512:real", cfg("dsv2-shrunk-v128"),
                       "reentrant", targets, attn="eager")


def fsdp():
    for (b, s), gc in itertools.product(SIZES, ("reentrant", "nonreentrant")):
        yield (f"fsdp:mistral-7b:qkvo:r16:bf16:{gc}:fa2emu:b{b}s{s}:peftwrap:orig1",
               ["fsdp48.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
                "--lora-dropout", "0.05", "--gc", gc, "--batch", str(b), "--seq", str(s), "--wrap", "peft",
                "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE"])
    yield ("fsdp:mistral-7b:qkvo:r16:bf16:reentrant:fa2emu:b4s2048:peftwrap:orig0",
           ["fsdp48.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
            "--lora-dropout", "0.05", "--gc", "reentrant", "--batch", "4", "--seq", "2048", "--wrap", "peft",
            "--use-orig-params", "0", "--prefetch", "BACKWARD_PRE"])
    yield ("fsdp:mistral-7b:qkvo:r16:bf16:reentrant:fa2emu:b4s2048:peftwrap:orig1:noprefetch",
           ["fsdp48.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
            "--lora-dropout", "0.05", "--gc", "reentrant", "--batch", "4", "--seq", "2048", "--wrap", "peft",
            "--use-orig-params", "1", "--prefetch", "NONE"])
    for model, gc in itertools.product(("llama3.1-8b", "mistral-7b"), ("reentrant", "nonreentrant")):
        yield (f"fsdp:{model}:full:bf16:{gc}:fa2emu:b8s4096:transformerwrap:orig1",
               ["fsdp48.py", "--config", cfg(model), "--gc", gc, "--batch", "8", "--seq", "4096", "--wrap", "transformer",
                "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE"])
    for gc, cache in (("nonreentrant", "1"), ("reentrant", "0")):
        yield (f"fsdp:starcoderbase-1b:full:bf16:{gc}:fa2emu:b4s2048:transformerwrap:orig1:cache{cache}",
               ["fsdp48.py", "--config", cfg("starcoderbase-1b"), "--gc", gc, "--batch", "4", "--seq", "2048",
                "--wrap", "transformer", "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE", "--use-cache", cache])
    yield ("fsdp:starcoderbase-1b:full:bf16:reentrant:fa2emu:b4s2048:transformerwrap:orig1:cache1",
           ["fsdp48.py", "--config", cfg("starcoderbase-1b"), "--gc", "reentrant", "--batch", "4", "--seq", "2048",
            "--wrap", "transformer", "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE", "--use-cache", "1"])


def fsdp_more():
    """FSDP1 beyond the first matrix: full fine-tuning and SDPA on every release (issue 16)."""
    for model, gc, attn in itertools.product(("llama3.1-8b", "mistral-7b"), ("reentrant", "nonreentrant"), ("fa2emu", "sdpa")):
        yield (f"fsdp:{model}:full:bf16:{gc}:{attn}:b8s4096:transformerwrap:orig1",
               ["fsdp48.py", "--config", cfg(model), "--gc", gc, "--batch", "8", "--seq", "4096", "--wrap", "transformer",
                "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE", "--attn", attn])
    for gc in ("reentrant", "nonreentrant"):
        yield (f"fsdp:mistral-7b:qkvo:r16:bf16:{gc}:sdpa:b4s2048:peftwrap:orig1",
               ["fsdp48.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
                "--lora-dropout", "0.05", "--gc", gc, "--batch", "4", "--seq", "2048", "--wrap", "peft",
                "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE", "--attn", "sdpa"])
    yield ("fsdp:starcoderbase-1b:full:bf16:nonreentrant:sdpa:b4s2048:transformerwrap:orig1:cache1",
           ["fsdp48.py", "--config", cfg("starcoderbase-1b"), "--gc", "nonreentrant", "--batch", "4", "--seq", "2048",
            "--wrap", "transformer", "--use-orig-params", "1", "--prefetch", "BACKWARD_PRE", "--use-cache", "1",
            "--attn", "sdpa"])


def fsdp2():
    """FSDP2 (`fully_shard`, torch 2.15, transformers 5.x only), wrapped by accelerate 1.15's own
    `fsdp2_prepare_model` with TRANSFORMER_BASED_WRAP (the Trainer keeps it under LoRA too): issue 16."""
    for model, gc, (b, s) in itertools.product(("llama3.1-8b", "mistral-7b"), ("reentrant", "nonreentrant"),
                                              ((1, 1024), (8, 4096))):
        yield (f"fsdp2:{model}:full:bf16:{gc}:fa2emu:b{b}s{s}:transformerwrap",
               ["fsdp2.py", "--config", cfg(model), "--gc", gc, "--batch", str(b), "--seq", str(s),
                "--attn", "fa2emu"])
    for gc, (b, s) in itertools.product(("reentrant", "nonreentrant"), ((4, 2048), (8, 4096))):
        yield (f"fsdp2:mistral-7b:qkvo:r16:bf16:{gc}:fa2emu:b{b}s{s}:transformerwrap",
               ["fsdp2.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
                "--lora-dropout", "0.05", "--gc", gc, "--batch", str(b), "--seq", str(s), "--attn", "fa2emu"])
    yield ("fsdp2:llama3.1-8b:full:bf16:nonreentrant:sdpa:b8s4096:transformerwrap",
           ["fsdp2.py", "--config", cfg("llama3.1-8b"), "--gc", "nonreentrant", "--batch", "8", "--seq", "4096",
            "--attn", "sdpa"])
    yield ("fsdp2:mistral-7b:qkvo:r16:bf16:nonreentrant:sdpa:b4s2048:transformerwrap",
           ["fsdp2.py", "--config", cfg("mistral-7b"), "--lora", "1", "--lora-r", "16", "--lora-alpha", "16",
            "--lora-dropout", "0.05", "--gc", "nonreentrant", "--batch", "4", "--seq", "2048", "--attn", "sdpa"])
    yield ("fsdp2:llama3.2-1b:full:bf16:nonreentrant:fa2emu:b4s2048:transformerwrap",
           ["fsdp2.py", "--config", cfg("llama3.2-1b"), "--gc", "nonreentrant", "--batch", "4", "--seq", "2048",
            "--attn", "fa2emu"])


GROUPS = dict(moe_loop=moe_loop, fsdp2=fsdp2, fsdp_more=fsdp_more, lora1=lora1, loss=loss, bigcode=bigcode, fullft=fullft, mixtral=mixtral, fsdp=fsdp)


def main():
    py, out, groups = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    tags = set(open(sys.argv[sys.argv.index("--tags") + 1]).read().split()) if "--tags" in sys.argv else None
    dry = "--dry" in sys.argv
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for g in groups:
        for tag, argv in GROUPS[g]():
            if only and only not in tag:
                continue
            if tags is not None and tag not in tags:
                continue
            cmd = ["nice", "-n", "10", py, os.path.join(HERE, argv[0]), *argv[1:], "--tag", tag, "--out", out]
            if "--dump" not in argv:
                cmd += ["--dump", "12"]
            if dry:
                print(" ".join(cmd)); continue
            t0 = time.time()
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            last = (p.stdout.strip().splitlines() or [""])[-1]
            print(f"{time.time()-t0:6.1f}s rc={p.returncode} {tag} {last[:200]}", flush=True)
            if p.returncode:
                print(p.stdout[-1500:], p.stderr[-1500:], flush=True)


if __name__ == "__main__":
    main()
