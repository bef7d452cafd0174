#!/usr/bin/env python3
"""Write a tiny MiniMax-M2 (`minimax-m2`) GGUF that llama.cpp b10488 loads, to read its cache.

    ~/.llama-venv/bin/python scripts/measure/families/minimax_m2_gguf.py OUT_DIR

4 layers, n_embd 512, 8 heads of 64, 2 KV heads, rotary on 32 (`rotary_dim`), q/k norms over
the whole projections, 8 experts (2 used) of 512 with `exp_probs_b`, vocabulary 1024.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_EMBD, N_HEAD, N_KV, HEAD, N_LAYER, N_EXP, N_FF, N_VOCAB = 512, 8, 2, 64, 4, 8, 512, 1024


def main(out: str) -> None:
    rng = np.random.default_rng(5)
    w = gguf.GGUFWriter(os.path.join(out, "tiny-minimax-m2-f16.gguf"), "minimax-m2")
    w.add_name("vramfit tiny minimax-m2")
    w.add_block_count(N_LAYER)
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_rope_dimension_count(HEAD // 2)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(N_EXP)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(N_FF)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)  # scoring_func "sigmoid"
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
        w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
        w.add_tensor(p + "attn_q_norm.weight", np.ones(N_HEAD * HEAD, dtype=np.float32))
        w.add_tensor(p + "attn_k_norm.weight", np.ones(N_KV * HEAD, dtype=np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=np.float32))
        w.add_tensor(p + "exp_probs_b.bias", np.zeros(N_EXP, dtype=np.float32))
        w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF))
    save(w)


if __name__ == "__main__":
    run(main)
