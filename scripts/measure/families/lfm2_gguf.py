#!/usr/bin/env python3
"""Write a tiny LFM2 (`lfm2`) GGUF that llama.cpp b10488 loads, to read how it allocates the
hybrid memory: a KV cache for the attention layers and an RS (recurrent state) buffer for the
short-convolution layers, the model buffer and the compute buffer.

    ~/.gt-venv/bin/python scripts/measure/families/lfm2_gguf.py OUT_DIR

The keys and tensors are those b10488's converter writes for Lfm2ForCausalLM
(`conversion/lfm2.py` `LFM2Model`, `conversion/base.py` `TextModel.set_gguf_parameters`) and its
loader reads (`src/models/lfm2.cpp` `load_arch_hparams`, `load_arch_tensors`):

- `lfm2.attention.head_count_kv` is a per-layer array, 0 on the conv layers: b10488 marks a layer
  recurrent iff its KV head count is 0 (`hparams.is_recr_impl[il] = hparams.n_head_kv(il) == 0`);
  there is no layer-type key.
- `lfm2.shortconv.l_cache` (required, `LLM_KV_SHORTCONV_L_CACHE`) and
  `lfm2.attention.layer_norm_rms_epsilon` (required).
- `token_embd_norm.weight` is the final norm (`LLM_TENSOR_OUTPUT_NORM_LFM2`, "fix for wrong
  tensor name"); no `output.weight`: tied, the loader duplicates `token_embd`
  (`TENSOR_DUPLICATED`), as for the published checkpoints.
- `blk.N.shortconv.conv.weight` ggml {L_cache, n_embd} (numpy (n_embd, L_cache)), kept f32 as
  the converter keeps SHORTCONV_CONV; `shortconv.in_proj` {n_embd, 3 n_embd},
  `shortconv.out_proj` {n_embd, n_embd}; attention layers `attn_q/k/v/output`, `attn_q_norm`,
  `attn_k_norm` ({head_dim}); every layer `attn_norm` (operator_norm), `ffn_norm`,
  `ffn_gate/up/down`.

Random f16 matrices, f32 norms and conv kernels, a byte vocabulary (glm4moe_gguf.py's `t` and
`vocab`). Shape: 8 layers, attention on layers 2 and 5 (the others conv), n_embd 512, 8 heads
of 64, 2 KV heads, L_cache 3, feed_forward_length 1024, vocabulary 1024, context 65536.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD = 1024, 512, 8, 2, 64
N_LAYER, N_FF, L_CACHE = 8, 1024, 3
ATTN = (2, 5)


def main(out: str) -> None:
    rng = np.random.default_rng(5)
    path = os.path.join(out, "tiny-lfm2-f16.gguf")
    w = gguf.GGUFWriter(path, "lfm2")
    w.add_name("vramfit tiny lfm2")
    w.add_block_count(N_LAYER)
    w.add_context_length(65536)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv([N_KV if i in ATTN else 0 for i in range(N_LAYER)])
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_vocab_size(N_VOCAB)
    w.add_shortconv_l_cache(L_CACHE)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("token_embd_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        if i in ATTN:
            w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
            w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
            w.add_tensor(p + "attn_q_norm.weight", np.ones(HEAD, dtype=np.float32))
            w.add_tensor(p + "attn_k_norm.weight", np.ones(HEAD, dtype=np.float32))
        else:
            w.add_tensor(p + "shortconv.conv.weight", t(rng, N_EMBD, L_CACHE, dtype=np.float32))
            w.add_tensor(p + "shortconv.in_proj.weight", t(rng, 3 * N_EMBD, N_EMBD))
            w.add_tensor(p + "shortconv.out_proj.weight", t(rng, N_EMBD, N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
    save(w)


if __name__ == "__main__":
    run(main)
