#!/usr/bin/env python3
"""Write a tiny Llama 4 (`llama4`) GGUF that llama.cpp b10488 loads, to read how it caches the
chunked-attention layers (LLAMA_SWA_TYPE_CHUNKED, n_swa hard-coded to 8192 in
`src/models/llama4.cpp`), its model buffer and its compute buffer.

    ~/.gt-venv/bin/python scripts/measure/families/llama4_gguf.py OUT_DIR

Random f16 weights, a byte vocabulary (glm4moe_gguf.py's `t` and `vocab`). Shape: 8 layers (chunked on all
but every 4th: layers 3 and 7 full), n_embd 512, 8 heads of 64, 2 KV heads, rotary over the
whole head, 8 experts (1 used) of 512 and a shared expert of 512 in every layer
(`interleave_moe_layer_step` 1), a dense `feed_forward_length` of 1024 that no layer uses,
vocabulary 1024, context 65536. With STEP=2 (Maverick's `interleave_moe_layer_step`), the
experts and the shared expert only on every 2nd layer (`(i + 1) % 2 == 0`), a dense MLP of
1024 on the others: `tiny-llama4-step2-f16.gguf`.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD = 1024, 512, 8, 2, 64
N_LAYER, N_FF, N_EXP, N_FF_EXP = 8, 1024, 8, 512
STEP = int(os.environ.get("STEP", "1"))


def main(out: str) -> None:
    rng = np.random.default_rng(4)
    name = "tiny-llama4-f16.gguf" if STEP == 1 else f"tiny-llama4-step{STEP}-f16.gguf"
    path = os.path.join(out, name)
    w = gguf.GGUFWriter(path, "llama4")
    w.add_name("vramfit tiny llama4")
    w.add_block_count(N_LAYER)
    w.add_context_length(65536)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_rope_dimension_count(HEAD)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(N_EXP)
    w.add_expert_used_count(1)
    w.add_expert_feed_forward_length(N_FF_EXP)
    w.add_interleave_moe_layer_step(STEP)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("rope_freqs.weight", np.ones(HEAD // 2, dtype=np.float32))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
        w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        if (i + 1) % STEP != 0:
            w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
            continue
        w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
        w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
        w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF_EXP))
        w.add_tensor(p + "ffn_gate_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
        w.add_tensor(p + "ffn_up_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
        w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, N_FF_EXP))
    save(w)


if __name__ == "__main__":
    run(main)
