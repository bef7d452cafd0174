#!/usr/bin/env python3
"""measure_cuda.py's training runs, each with the caching allocator's own
event trace (torch.cuda.memory._record_memory_history), on a real GPU.

  python3 record.py CONFIGS.txt ROWS.jsonl TRACE_DIR [--deadline-s S]

CONFIGS.txt: one measure_cuda.py configuration per line. For configuration
N, TRACE_DIR/trainN.gpu.gz holds the allocator's trace as
c10/cuda/CUDACachingAllocator.cpp's record_trace records it (see dump: an
alloc's SIZE is the size requested of the allocator, a segment's its
cudaMalloc'd or mapped size), which `cargo run --example replay` reads.
"""
import gzip
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_cuda as M  # noqa: E402


def dump(path, torch):
    """The device's trace since recording began, then recording off.

    Written compactly (a 13B `generate` records millions of events): each
    block gets an ID in allocation order; `a ID SIZE STREAM ADDR` (alloc,
    SIZE as requested), `f ID` (free_completed: the block is back in its
    pool), `s SIZE ADDR` (segment_alloc or segment_map), `S SIZE ADDR`
    (segment_free or segment_unmap), `o SIZE` (oom), `x ACTION SIZE`
    (anything else). Traces recorded before 2026-11-30 01:00 lack ADDR.
    free_requested is left out: it matters only for blocks used on another
    stream, and its free_completed follows."""
    snap = torch.cuda.memory._snapshot()
    trace = snap["device_traces"][0]
    live, n, unknown = {}, 0, 0
    code = {"segment_alloc": "s", "segment_map": "s", "segment_free": "S", "segment_unmap": "S",
            "oom": "o"}
    with gzip.open(path, "wt", compresslevel=9) as f:
        for e in trace:
            act = e["action"]
            if act == "alloc":
                live[e["addr"]] = n
                f.write(f"a {n} {e['size']} {e['stream']} {e['addr']}\n")
                n += 1
            elif act == "free_completed":
                i = live.pop(e["addr"], None)
                if i is None:
                    unknown += 1
                else:
                    f.write(f"f {i}\n")
            elif act == "free_requested":
                pass
            elif act in code:
                f.write(f"{code[act]} {e['size']} {e['addr']}\n")
            else:
                f.write(f"x {act} {e['size']}\n")
    torch.cuda.memory._record_memory_history(enabled=None)
    return dict(events=len(trace), blocks=n, unknown_frees=unknown)


def main():
    cfgs, rows, traces = sys.argv[1:4]
    rest = sys.argv[4:]
    os.makedirs(traces, exist_ok=True)
    state = dict(n=0)
    run = M.run

    def recorded(args, st):
        import torch
        M.init_cuda_once(st, 0)
        M.release_between_configs(torch.device("cuda", 0))
        torch.cuda.memory._record_memory_history(
            enabled="all", context=None, stacks="python", max_entries=4_000_000, clear_history=True)
        t0 = time.time()
        res = run(args, st)
        state["n"] += 1
        name = f"train{state['n']}.gpu.gz"
        res["trace_file"] = name
        res["trace"] = dump(os.path.join(traces, name), torch)
        res["trace_dump_s"] = round(time.time() - t0, 2)
        res["alloc_conf"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
        stats = torch.cuda.memory_stats(0)
        res["allocator_stats"] = {k: stats.get(k) for k in (
            "num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free",
            "num_sync_all_streams")}
        return res

    M.run = recorded
    return M.main(["--batch-file", cfgs, "--out", rows] + rest)


if __name__ == "__main__":
    sys.exit(main())
