#!/usr/bin/env python
"""zero3.py on a Gated DeltaNet hybrid (Qwen3.5 text model). Under `deepspeed.zero.Init` every
parameter is a partitioned placeholder of 0 elements, and transformers 5.23's `Qwen3_5PreTrainedModel
._init_weights` copies a fresh `A_log` into it (`init.copy_`, 0 vs num_v_heads elements: RuntimeError)
when the model is built from its config, as the harness builds it (`from_pretrained` loads A_log
instead). The copy only sets initial values: it is skipped here for a 0-element target, nothing else
changes.

Usage: as zero3.py (same arguments).
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transformers.initialization as init

_copy = init.copy_


def copy_(tensor, other):
    if tensor.numel() == 0:
        return tensor
    return _copy(tensor, other)


init.copy_ = copy_
import zero3  # noqa: E402

if __name__ == "__main__":
    zero3.main()
