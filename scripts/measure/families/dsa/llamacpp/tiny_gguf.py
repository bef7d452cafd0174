#!/usr/bin/env python3
"""Write tiny DeepSeek Sparse Attention GGUFs that llama.cpp b10488 loads, to read what it
allocates for them: `deepseek32` (DeepSeek V3.2) and `glm-dsa` (GLM-5, and GLM-5.2-style with
`glm-dsa.attention.indexer.types`).

    ~/.gguf-venv/bin/python tiny_gguf.py OUT_DIR      (gguf-py of b10488: pip install gguf-py)

Files (random f16 2-D weights, f32 1-D weights, router and indexer.proj, byte vocabulary as ../../glm4moe_gguf.py):
  tiny-deepseek32-f16.gguf      deepseek32, 4 trunk layers (first dense) + 1 NextN/MTP block
  tiny-glmdsa-f16.gguf          glm-dsa, same shape, no indexer.types key, context 202752
                                (< 1048576: every layer has a "full" indexer, glm-dsa.cpp)
  tiny-glmdsa-types-f16.gguf    glm-dsa with indexer.types = [1,0,1,0] (GLM-5.2 style: layers 1
                                and 3 reuse the previous layer's top-k and carry no indexer tensors)

Shape: n_embd 512, 4 heads, q_lora_rank 256, kv_lora_rank 256, qk_rope 64, qk_nope 128, v_head
128, dense FFN 512, 16 experts of 256 (2 used) + 1 shared expert, indexer 4 heads x 128,
top-k 64, vocabulary 1024. The widths are chosen so that every tensor's first dimension is
divisible by 256 exactly where the real models' are (DeepSeek V3.2: n_embd 7168, q_lora 1536,
kv_lora 512, qk_nope 128, index_head_dim 128), so Q4_K_M picks the same types and fallbacks;
16 (not 8) experts so the n_expert == 8 special cases of llama-quant.cpp do not fire.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

N_VOCAB, N_EMBD, N_HEAD = 1024, 512, 4
Q_LORA, KV_LORA, ROPE, NOPE, V_HEAD = 256, 256, 64, 128, 128
N_LAYER, N_NEXTN, N_FF, N_EXP, N_USED, N_FF_EXP = 4, 1, 512, 16, 2, 256
IDX_HEADS, IDX_DIM, IDX_TOPK = 4, 128, 64
# variants for the compute-buffer fit (measure3.sh): N_HEAD=8 or IDX_HEADS=16 in the environment
N_HEAD = int(os.environ.get("N_HEAD", N_HEAD))
IDX_HEADS = int(os.environ.get("IDX_HEADS", IDX_HEADS))


def vocab(w: gguf.GGUFWriter) -> None:
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    types = [2, 3, 3] + [6] * 256
    i = 0
    while len(tokens) < N_VOCAB:
        tokens.append("\u2581" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(3)))
        types.append(1)
        i += 1
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([-float(j) for j in range(N_VOCAB)])
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def t(rng, *shape, dtype=np.float16):
    return (rng.standard_normal(shape) * 0.02).astype(dtype)


def ones(n):
    return np.ones(n, dtype=np.float32)


def write(path: str, arch: str, ctx_train: int, indexer_types: list[bool] | None, nextn: int) -> None:
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(path, arch)
    blocks = N_LAYER + nextn
    w.add_name(f"vramfit tiny {arch}")
    w.add_block_count(blocks)
    w.add_context_length(ctx_train)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(1)                      # MLA as MQA (conversion/deepseek.py)
    w.add_key_length(KV_LORA + ROPE)            # kv_lora_rank + qk_rope_head_dim
    w.add_value_length(KV_LORA)
    w.add_key_length_mla(NOPE + ROPE)
    w.add_value_length_mla(V_HEAD)
    w.add_q_lora_rank(Q_LORA)
    w.add_kv_lora_rank(KV_LORA)
    w.add_rope_dimension_count(ROPE)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(N_VOCAB)
    w.add_leading_dense_block_count(1)
    w.add_expert_count(N_EXP)
    w.add_expert_used_count(N_USED)
    w.add_expert_feed_forward_length(N_FF_EXP)
    w.add_expert_shared_count(1)
    w.add_expert_weights_scale(2.5)
    w.add_expert_weights_norm(True)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    if nextn:
        w.add_nextn_predict_layers(nextn)
    w.add_indexer_head_count(IDX_HEADS)
    w.add_indexer_key_length(IDX_DIM)
    w.add_indexer_top_k(IDX_TOPK)
    if indexer_types is not None:
        w.add_indexer_types(indexer_types)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", ones(N_EMBD))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(blocks):
        p = f"blk.{i}."
        # numpy shapes are the ggml shapes reversed
        w.add_tensor(p + "attn_norm.weight", ones(N_EMBD))
        w.add_tensor(p + "attn_q_a_norm.weight", ones(Q_LORA))
        w.add_tensor(p + "attn_kv_a_norm.weight", ones(KV_LORA))
        w.add_tensor(p + "attn_q_a.weight", t(rng, Q_LORA, N_EMBD))
        w.add_tensor(p + "attn_q_b.weight", t(rng, N_HEAD * (NOPE + ROPE), Q_LORA))
        w.add_tensor(p + "attn_kv_a_mqa.weight", t(rng, KV_LORA + ROPE, N_EMBD))
        w.add_tensor(p + "attn_k_b.weight", t(rng, N_HEAD, KV_LORA, NOPE))
        w.add_tensor(p + "attn_v_b.weight", t(rng, N_HEAD, V_HEAD, KV_LORA))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * V_HEAD))
        w.add_tensor(p + "ffn_norm.weight", ones(N_EMBD))
        full = indexer_types is None or i >= N_LAYER or indexer_types[i]
        if full:
            w.add_tensor(p + "indexer.k_norm.weight", ones(IDX_DIM))
            w.add_tensor(p + "indexer.k_norm.bias", np.zeros(IDX_DIM, dtype=np.float32))
            # F32 as convert writes it (conversion/base.py:967, "DSA indexer weights should be F32")
            w.add_tensor(p + "indexer.proj.weight", t(rng, IDX_HEADS, N_EMBD, dtype=np.float32))
            w.add_tensor(p + "indexer.attn_k.weight", t(rng, IDX_DIM, N_EMBD))
            w.add_tensor(p + "indexer.attn_q_b.weight", t(rng, IDX_HEADS * IDX_DIM, Q_LORA))
        if i == 0:
            w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, N_FF, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF))
        else:
            w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=np.float32))
            w.add_tensor(p + "exp_probs_b.bias", np.zeros(N_EXP, dtype=np.float32))
            w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF_EXP))
            w.add_tensor(p + "ffn_gate_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_shexp.weight", t(rng, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, N_FF_EXP))
        if i >= N_LAYER:
            w.add_tensor(p + "nextn.eh_proj.weight", t(rng, N_EMBD, 2 * N_EMBD))
            w.add_tensor(p + "nextn.enorm.weight", ones(N_EMBD))
            w.add_tensor(p + "nextn.hnorm.weight", ones(N_EMBD))
            w.add_tensor(p + "nextn.shared_head_norm.weight", ones(N_EMBD))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    if os.environ.get("VARIANT"):
        # deepseek32 only, named by the variant: tiny-deepseek32-<VARIANT>-f16.gguf
        write(os.path.join(out, f"tiny-deepseek32-{os.environ['VARIANT']}-f16.gguf"), "deepseek32", 163840, None, N_NEXTN)
        return
    write(os.path.join(out, "tiny-deepseek32-f16.gguf"), "deepseek32", 163840, None, N_NEXTN)
    write(os.path.join(out, "tiny-glmdsa-f16.gguf"), "glm-dsa", 202752, None, N_NEXTN)
    write(os.path.join(out, "tiny-glmdsa-types-f16.gguf"), "glm-dsa", 1048576,
          [True, False, True, False], N_NEXTN)


if __name__ == "__main__":
    main()
