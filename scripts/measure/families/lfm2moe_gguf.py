#!/usr/bin/env python3
"""Write a tiny LFM2-MoE (`lfm2moe`) GGUF that llama.cpp b10488 loads, to read how it allocates
the hybrid memory (KV cache for the attention layers, RS buffer for the short-convolution
layers), the model buffer with stacked routed experts, and the compute buffer.

    ~/.gt-venv/bin/python scripts/measure/families/lfm2moe_gguf.py OUT_DIR

The keys and tensors are those b10488's converter writes for Lfm2MoeForCausalLM
(`conversion/lfm2.py` `LFM2MoeModel`, over `conversion/base.py` `TextModel.set_gguf_parameters`)
and its loader reads (`src/models/lfm2moe.cpp` `load_arch_hparams`, `load_arch_tensors`):

- Keys written by `TextModel.set_gguf_parameters` from the published config.json: block_count,
  context_length (max_position_embeddings), embedding_length, feed_forward_length
  (intermediate_size: the dense layers' width, no LFM2 auto-adjust), attention.head_count,
  attention.head_count_kv (per-layer array, 0 on every layer whose layer_types entry is not
  "full_attention"), rope.freq_base, attention.layer_norm_rms_epsilon (norm_eps), expert_count
  (num_experts), expert_used_count (num_experts_per_tok), file_type. No key_length/value_length
  (the config has no head_dim: n_embd / n_head). By `LFM2MoeModel.set_gguf_parameters`:
  expert_feed_forward_length (moe_intermediate_size), leading_dense_block_count
  (num_dense_layers), expert_gating_func = SIGMOID (2), vocab_size, shortconv.l_cache.
  NOT written: expert_weights_norm (the graph passes norm_w = true itself), expert_weights_scale
  (routed_scaling_factor), any use_expert_bias flag (the exp_probs_b tensor is required).
- Tensors: `token_embd`, `token_embd_norm` (the final norm, LLM_TENSOR_OUTPUT_NORM_LFM2), no
  `output` (tied); per layer `attn_norm` (operator_norm), `ffn_norm`; attention layers
  attn_q/k/v/output, attn_q_norm/attn_k_norm ({head_dim}); conv layers shortconv.conv
  {L_cache, n_embd} (F32: SHORTCONV_CONV is in the converter's always-F32 list),
  shortconv.in_proj {n_embd, 3 n_embd}, shortconv.out_proj; dense layers (< leading_dense_block_count)
  ffn_gate/ffn_up/ffn_down; MoE layers ffn_gate_inp {n_embd, n_expert} (F32: FFN_GATE_INP is
  in the always-F32 list), exp_probs_b.bias {n_expert} (F32: 1-D; the converter renames
  `feed_forward.expert_bias` to `.expert_bias.bias`), and the per-expert w1/w3/w2 stacked
  (torch.stack dim 0) into ffn_gate_exps {n_embd, n_ff_exp, n_expert}, ffn_up_exps (same),
  ffn_down_exps {n_ff_exp, n_embd, n_expert}, f16.

Shape: 8 layers, attention on layers 2 and 5 (the others conv), n_embd 512, 8 heads of 64,
2 KV heads, L_cache 3, layers 0-1 dense with feed_forward_length 1024, layers 2-7 MoE with
8 experts (2 used) of 256, vocabulary 1024, context 128000.

DROP=key1,key2 (environment) leaves those keys out (names without the `lfm2moe.` prefix), to
check which ones b10488 requires.
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
N_DENSE, N_EXP, N_USED, N_FF_EXP = 2, 8, 2, 256
ATTN = (2, 5)
ARCH = "lfm2moe"


def main(out: str) -> None:
    drop = set(filter(None, os.environ.get("DROP", "").split(",")))
    rng = np.random.default_rng(7)
    path = os.path.join(out, "tiny-lfm2moe-f16.gguf")
    w = gguf.GGUFWriter(path, ARCH)

    def kv(key, fn, *a):
        if key not in drop:
            fn(*a)

    w.add_name("vramfit tiny lfm2moe")
    kv("block_count", w.add_block_count, N_LAYER)
    kv("context_length", w.add_context_length, 128000)
    kv("embedding_length", w.add_embedding_length, N_EMBD)
    kv("feed_forward_length", w.add_feed_forward_length, N_FF)
    kv("attention.head_count", w.add_head_count, N_HEAD)
    kv("attention.head_count_kv", w.add_head_count_kv, [N_KV if i in ATTN else 0 for i in range(N_LAYER)])
    kv("rope.freq_base", w.add_rope_freq_base, 1000000.0)
    kv("attention.layer_norm_rms_epsilon", w.add_layer_norm_rms_eps, 1e-5)
    kv("expert_count", w.add_expert_count, N_EXP)
    kv("expert_used_count", w.add_expert_used_count, N_USED)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    kv("expert_feed_forward_length", w.add_expert_feed_forward_length, N_FF_EXP)
    kv("leading_dense_block_count", w.add_leading_dense_block_count, N_DENSE)
    kv("expert_gating_func", w.add_expert_gating_func, gguf.ExpertGatingFuncType.SIGMOID)
    kv("vocab_size", w.add_vocab_size, N_VOCAB)
    kv("shortconv.l_cache", w.add_shortconv_l_cache, L_CACHE)
    vocab(w)
    f32 = np.float32
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("token_embd_norm.weight", np.ones(N_EMBD, dtype=f32))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=f32))
        if i in ATTN:
            w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
            w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
            w.add_tensor(p + "attn_q_norm.weight", np.ones(HEAD, dtype=f32))
            w.add_tensor(p + "attn_k_norm.weight", np.ones(HEAD, dtype=f32))
        else:
            w.add_tensor(p + "shortconv.conv.weight", t(rng, N_EMBD, L_CACHE, dtype=f32))
            w.add_tensor(p + "shortconv.in_proj.weight", t(rng, 3 * N_EMBD, N_EMBD))
            w.add_tensor(p + "shortconv.out_proj.weight", t(rng, N_EMBD, N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=f32))
        if i < N_DENSE:
            w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
        else:
            w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=f32))
            w.add_tensor(p + "exp_probs_b.bias", np.zeros(N_EXP, dtype=f32))
            w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF_EXP))
    save(w)


if __name__ == "__main__":
    run(main)
