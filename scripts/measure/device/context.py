#!/usr/bin/env python3
"""What the GPU holds outside PyTorch's caching allocator, step by step:
the CUDA context, the kernels loaded as they are first used (lazy module
loading), cuBLAS's and cuDNN's handles, NCCL's communicator.

  python3 context.py lazy|eager|nccl >> context.jsonl

One JSON line: nvidia-smi's memory.used before the process touches the GPU,
then after each step the device's used memory (total - free from
cudaMemGetInfo), the allocator's reserved bytes, and their difference (what
is not the allocator's). `eager` is meant to run with
CUDA_MODULE_LOADING=EAGER; `nccl` adds a one-rank NCCL process group and
all-reduces of 4 MiB and 256 MiB.
"""
import json
import os
import subprocess
import sys
import time


def smi():
    r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True)
    used, total = (float(x) for x in r.stdout.strip().splitlines()[0].split(","))
    return dict(used_mib=used, total_mib=total)


def main():
    mode = sys.argv[1]
    row = dict(mode=mode, module_loading=os.environ.get("CUDA_MODULE_LOADING", "(default)"),
               smi_before=smi())
    import torch
    import torch.nn.functional as F
    row.update(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
               gpu=torch.cuda.get_device_name(0))
    steps = []

    def step(name):
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info(0)
        used = total - free
        res = torch.cuda.memory_reserved(0)
        steps.append(dict(step=name, device_used=used, reserved=res, allocated=torch.cuda.memory_allocated(0),
                          outside_allocator=used - res, t=round(time.time() - t0, 2)))

    t0 = time.time()
    torch.cuda.init()
    step("context")
    row["smi_after_context"] = smi()
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    step("first tensor")
    (a @ a).sum().item()
    step("bf16 matmul (cuBLAS handle + workspace)")
    b = a.float()
    (b @ b).sum().item()
    step("fp32 matmul")
    q = torch.randn(4, 32, 2048, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    step("SDPA forward+backward (flash)")
    w = torch.nn.Parameter(torch.randn(1 << 20, device="cuda"))
    w.grad = torch.randn_like(w)
    torch.optim.AdamW([w], fused=True).step()
    step("fused AdamW step")
    x = torch.randn(8, 64, 56, 56, device="cuda")
    torch.nn.functional.conv2d(x, torch.randn(64, 64, 3, 3, device="cuda"), padding=1).sum().item()
    step("cuDNN conv2d")
    if mode == "nccl":
        import torch.distributed as dist
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1,
                                device_id=torch.device("cuda", 0))
        step("nccl process group")
        t = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(t)
        step("all_reduce 4 MiB")
        t = torch.ones(1 << 26, device="cuda")
        dist.all_reduce(t)
        step("all_reduce 256 MiB")
        dist.destroy_process_group()
        step("destroyed")
        row["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
    row["steps"] = steps
    row["smi_end"] = smi()
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
