#!/usr/bin/env python3
"""Read the buffer lines of run.sh's logs (raw/) into crates/core/tests/fixtures/llamacpp_devices.jsonl,
each run with the vramfit query that describes it (the model and its tensors as `vramfit --gguf`
writes them into the link, then the run's keys). Standard library only.

    python3 scripts/measure/llamacpp/devices/fixture.py
"""
from __future__ import annotations

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "crates", "core", "tests", "fixtures",
                                    "llamacpp_devices.jsonl"))

# What `vramfit --gguf FILE 'task=infer&engine=llamacpp'` writes for each model (its header read).
LLAMA = ("task=infer&model=llama-20m&layers=8&kv_heads=2&ffn=1024&vocab=1024&tied=false&positions=8192"
         "&engine=llamacpp&weights=f16&file=tiny-llama-f16.gguf"
         "&file_bytes=e1048576.o1048576.n2048.k1314816_1048576_1048576_1048576_0_0_0_1048576.s0r8")
MOE = ("task=infer&model=qwen3-30b-a3b&hidden=512&layers=6&heads=8&kv_heads=2&head_dim=64&ffn=512"
       "&vocab=1024&positions=8192&experts=8&experts_per_token=2&moe_ffn=512&engine=llamacpp&weights=f16"
       "&file=tiny-moe-f16.gguf"
       "&file_bytes=e1048576.o1048576.n2048.k1315328_16384_0_0_4194304_4194304_4194304_4194304.s0r6")
RUN = "&n_gpu_layers=99&n_parallel=1&ctx=4096&fit=false"

# run name -> (query, the device index of each RPC server's port)
RUNS = {
    "llama-1dev-all": (LLAMA + RUN, {50152: 0}),
    "llama-2dev-ts3-1": (LLAMA + RUN + "&tensor_split=3,1", {50152: 0, 50153: 1}),
    "llama-2dev-ts1-1": (LLAMA + RUN + "&tensor_split=1,1", {50152: 0, 50153: 1}),
    "llama-2dev-ts1-3": (LLAMA + RUN + "&tensor_split=1,3", {50152: 0, 50153: 1}),
    "llama-2dev-ngl5": (LLAMA + RUN.replace("n_gpu_layers=99", "n_gpu_layers=5") + "&tensor_split=1,1",
                        {50152: 0, 50153: 1}),
    "llama-2dev-sm-none": (LLAMA + RUN + "&tensor_split=1,1&split_mode=none&main_gpu=1", {50153: 1}),
    "llama-2dev-np4": (LLAMA + RUN.replace("n_parallel=1&ctx=4096", "n_parallel=4&ctx=8192") + "&tensor_split=3,1",
                       {50152: 0, 50153: 1}),
    "llama-2dev-np4-kvu": (LLAMA + RUN.replace("n_parallel=1&ctx=4096", "n_parallel=4&ctx=8192")
                           + "&tensor_split=3,1&kv_unified=true", {50152: 0, 50153: 1}),
    "moe-1dev-all": (MOE + RUN, {50152: 0}),
    "moe-1dev-ncpumoe2": (MOE + RUN + "&n_cpu_moe=2", {50152: 0}),
    "moe-1dev-cpumoe": (MOE + RUN + "&n_cpu_moe=6", {50152: 0}),
    "moe-1dev-ot-1-2": (MOE + RUN + "&override_tensor=" + "blk%5C.(1%7C2)%5C.ffn_.*_exps%5C.%3DCPU", {50152: 0}),
    "moe-1dev-ot-all": (MOE + RUN + "&override_tensor=.ffn_.*_exps.%3DCPU", {50152: 0}),
    "moe-1dev-ncpumoe1-ot-1-2": (MOE + RUN + "&n_cpu_moe=1&override_tensor=blk%5C.%5B1-2%5D%5C.ffn_.*_exps%3DCPU",
                                 {50152: 0}),
    "moe-2dev-ts1-1-ncpumoe3": (MOE + RUN + "&tensor_split=1,1&n_cpu_moe=3", {50152: 0, 50153: 1}),
}

LINE = re.compile(r"(\S+?)\s+(model|KV|compute|output) buffer size =\s+([0-9.]+) MiB")


def main() -> None:
    rows = []
    for name, (query, ports) in RUNS.items():
        with open(os.path.join(HERE, "raw", name + ".log")) as f:
            text = f.read()
        command = text.splitlines()[0].removeprefix(f"== {name}: ")
        gpus: dict[int, dict[str, str]] = {}
        host: dict[str, str] = {}
        for buf, what, mib in LINE.findall(text):
            port = re.search(r":(\d+)\]$", buf)
            if port:
                gpus.setdefault(ports[int(port.group(1))], {})[what] = mib
            else:
                host[f"{buf} {what}"] = mib
        rows.append({
            "id": name,
            "llama_cpp_build": "b10488 (9d77fa17), CPU + two ggml-rpc-server devices on this machine",
            "command": command,
            "query": query,
            "gpus": {str(d): v for d, v in sorted(gpus.items())},
            "host": host,
        })
    with open(OUT, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
