#!/usr/bin/env python3
"""Write a tiny OLMo 3 GGUF (llama.cpp b10488 converts `Olmo3ForCausalLM` as `olmo2` with a
sliding window and its pattern, conversion/olmo.py) to read llama.cpp's SWA cache for it.

    ~/.llama-venv/bin/python scripts/measure/families/olmo3_gguf.py OUT_DIR

8 layers (window 256 on all but every 4th), n_embd 512, 8 heads of 64, 8 KV heads, n_ff 1024,
vocabulary 1024, context 8192; random f16 weights, a byte vocabulary.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_EMBD, N_HEAD, HEAD, N_LAYER, N_FF, N_VOCAB, WINDOW = 512, 8, 64, 8, 1024, 1024, 256


def main(out: str) -> None:
    rng = np.random.default_rng(4)
    w = gguf.GGUFWriter(os.path.join(out, "tiny-olmo3-f16.gguf"), "olmo2")
    w.add_name("vramfit tiny olmo3")
    w.add_block_count(N_LAYER)
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(HEAD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_sliding_window(WINDOW)
    w.add_sliding_window_pattern([(i + 1) % 4 != 0 for i in range(N_LAYER)])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        for n in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + n + ".weight", t(rng, N_EMBD, N_EMBD))
        for n in ("attn_q_norm", "attn_k_norm", "post_attention_norm", "post_ffw_norm"):
            w.add_tensor(p + n + ".weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
    save(w)


if __name__ == "__main__":
    run(main)
