#!/usr/bin/env python3
"""Write a tiny GPT-NeoX GGUF as llama.cpp b10488's converter makes one of
`GPTNeoXForCausalLM` (conversion/gptneox.py: `gptneox`, the fused
`attn_qkv` with biases, `rope.dimension_count` = rotary_pct × head,
`use_parallel_residual`), to read llama-server's buffers for it.

    ~/.gt-venv/bin/python scripts/measure/families/gptneox_gguf.py OUT_DIR

4 layers, n_embd 512, 8 heads of 64 (16 rotated), n_ff 2048, vocabulary
1024 (glm4moe_gguf.py's byte vocabulary), context 2048; random f16 matrices,
f32 norms and biases (the converter keeps 1-D tensors in f32).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import N_VOCAB, run, save, t, vocab  # noqa: E402

N_EMBD, N_HEAD, HEAD, N_LAYER, N_FF, CTX = 512, 8, 64, 4, 2048, 2048


def main(out: str) -> None:
    rng = np.random.default_rng(5)
    w = gguf.GGUFWriter(os.path.join(out, "tiny-gptneox-f16.gguf"), "gptneox")
    w.add_name("vramfit tiny gptneox")
    w.add_block_count(N_LAYER)
    w.add_context_length(CTX)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_rope_dimension_count(HEAD // 4)
    w.add_head_count(N_HEAD)
    w.add_parallel_residual(True)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    one = lambda n: np.ones(n, dtype=np.float32)  # noqa: E731
    zero = lambda n: np.zeros(n, dtype=np.float32)  # noqa: E731
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", one(N_EMBD))
    w.add_tensor("output_norm.bias", zero(N_EMBD))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        for n in ("attn_norm", "ffn_norm"):
            w.add_tensor(p + n + ".weight", one(N_EMBD))
            w.add_tensor(p + n + ".bias", zero(N_EMBD))
        w.add_tensor(p + "attn_qkv.weight", t(rng, 3 * N_EMBD, N_EMBD))
        w.add_tensor(p + "attn_qkv.bias", zero(3 * N_EMBD))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_EMBD))
        w.add_tensor(p + "attn_output.bias", zero(N_EMBD))
        w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.bias", zero(N_FF))
        w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
        w.add_tensor(p + "ffn_down.bias", zero(N_EMBD))
    save(w)


if __name__ == "__main__":
    run(main)
