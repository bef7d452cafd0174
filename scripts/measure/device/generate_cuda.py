#!/usr/bin/env python3
"""transformers' `generate` on a real GPU, with the caching allocator's
event trace: the Llama-2-13B shape of scripts/measure/allocator (random
weights, bf16, SDPA, greedy, DynamicCache, min_new_tokens = max_new_tokens
so no sequence stops early).

  python3 generate_cuda.py ROWS.jsonl TRACE_DIR BATCH... [--prompt P] [--new N]

Per batch: the model is built on the GPU from an empty allocator, then
generate runs once. One JSON line per batch: max_memory_allocated and
max_memory_reserved over the load and the call, the device's used memory
(torch.cuda.mem_get_info) before the process touched the GPU, after its
context, and at the end, and the allocator's counters. TRACE_DIR/genB.gpu.gz
is the allocator's trace (record.py's format).
"""
import argparse
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record import dump  # noqa: E402


def used(torch):
    free, total = torch.cuda.mem_get_info(0)
    return total - free


def one(torch, transformers, cfg, batch, a, traces, ctx):
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(0)
    torch.cuda.reset_accumulated_memory_stats(0)
    torch.cuda.memory._record_memory_history(
        enabled="all", context=None, stacks="python", max_entries=6_000_000, clear_history=True)
    t0 = time.time()
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16,
                                                              attn_implementation="sdpa")
    model.eval()
    torch.cuda.synchronize()
    loaded = dict(allocated=torch.cuda.memory_allocated(0), reserved=torch.cuda.memory_reserved(0),
                  device_used=used(torch))
    g = torch.Generator(device="cuda").manual_seed(0)
    ids = torch.randint(0, cfg.vocab_size, (batch, a.prompt), device="cuda", generator=g)
    mask = torch.ones_like(ids)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, max_new_tokens=a.new, min_new_tokens=a.new,
                             do_sample=False, use_cache=True, pad_token_id=0)
    torch.cuda.synchronize()
    row = dict(batch=batch, prompt=a.prompt, new=a.new, out_len=int(out.shape[1]), loaded=loaded,
               peak_allocated=torch.cuda.max_memory_allocated(0),
               peak_reserved=torch.cuda.max_memory_reserved(0),
               end_allocated=torch.cuda.memory_allocated(0), end_reserved=torch.cuda.memory_reserved(0),
               end_device_used=used(torch), wall_s=round(time.time() - t0, 2))
    stats = torch.cuda.memory_stats(0)
    row["allocator_stats"] = {k: stats.get(k) for k in (
        "num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free")}
    name = f"gen{batch}.gpu.gz"
    row["trace_file"] = name
    row["trace"] = dump(os.path.join(traces, name), torch)
    del model, out, ids, mask
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("traces")
    ap.add_argument("batches", type=int, nargs="+")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--new", type=int, default=512)
    ap.add_argument("--deadline-s", type=float, default=0)
    a = ap.parse_args()
    os.makedirs(a.traces, exist_ok=True)
    t_start = time.time()
    import torch
    import transformers
    torch.cuda.init()
    ctx = dict(device_used_after_init=used(torch))
    cfg = transformers.LlamaConfig(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                                   num_attention_heads=40, num_key_value_heads=40, vocab_size=32000,
                                   max_position_embeddings=4096, tie_word_embeddings=False)
    info = dict(torch=torch.__version__, transformers=transformers.__version__,
                cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0),
                alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                model="llama2-13b shape (h 5120, ffn 13824, 40 layers, 40 heads, vocab 32000)")
    for b in a.batches:
        if a.deadline_s and time.time() - t_start > a.deadline_s:
            row = dict(batch=b, status="skipped_deadline")
        else:
            try:
                row = one(torch, transformers, cfg, b, a, a.traces, ctx)
                row["status"] = "ok"
            except Exception as e:  # an out-of-memory error is a result too
                row = dict(batch=b, status="error", error=f"{type(e).__name__}: {e}"[:1500])
                torch.cuda.memory._record_memory_history(enabled=None)
        row.update(info, **ctx)
        with open(a.rows, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row.get(k) for k in ("batch", "status", "peak_allocated", "peak_reserved",
                                                   "end_device_used", "wall_s", "error")}), flush=True)


if __name__ == "__main__":
    main()
