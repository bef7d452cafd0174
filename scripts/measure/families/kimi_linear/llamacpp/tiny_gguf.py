#!/usr/bin/env python3
"""Write a tiny `kimi-linear` GGUF (Kimi Linear: KDA recurrent layers + MLA full-attention
layers + MoE) that llama.cpp b10488 loads, to read what it allocates.

    ~/.gguf-venv/bin/python tiny_gguf.py OUT_DIR        -> OUT_DIR/tiny-kimilinear-f16.gguf

Keys and tensors are the ones conversion/kimi_linear.py + conversion/base.py (b10488) write for
moonshotai/Kimi-Linear-48B-A3B-Instruct, at a smaller width:
  real (config.json)                                   tiny
  hidden_size 2304 (=9*256)                             512 (=2*256)
  num_attention_heads 32 = linear_attn num_heads 32      4 (llama.cpp uses one n_head for both)
  KDA head_dim 128 (d_inner 4096)                        128 (d_inner 512)
  short_conv_kernel_size 4                               4
  kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128  256, 128, 64, 128
  q_lora_rank null (plain attn_q)                        null
  intermediate_size 9216 (dense layer 0)                 512
  moe_intermediate_size 1024, 256 experts, 8 used, 1 sh  256, 16 experts, 2 used, 1 shared
  27 layers, full_attn_layers (1-based) 4,8,...,24,27     8 layers, full_attn_layers 4, 8
  vocab 163840                                           1024
Every tensor's ne0 has the same divisibility by 256 as the real one (ne0 values: n_embd, d_inner,
head_dim 128, kv_lora, qk_nope 128, n_ff, n_ff_exp, d_conv 4, 1). 16 experts (not 8) so the
n_expert == 8 special cases of llama-quant.cpp do not fire.
Types as the converter writes them (conversion/base.py:931-971): 1-D tensors, *_norm.weight,
ffn_gate_inp, ssm_conv1d_{q,k,v}, and names not ending in .weight (ssm_a, ssm_dt.bias,
exp_probs_b.bias) are F32; every other tensor F16.
Key quirks of the converter kept here: head_count_kv is a per-layer array (0 = KDA/recurrent,
1 = MLA as MQA; kimi_linear.py:80,88-98); key_length = kv_lora+rope (kimi_linear.py:119, it
overwrites base.py:1376's head_dim=72); value_length = config head_dim (72 real = n_embd/n_head;
base.py:1377) -> tiny n_embd/n_head = 128.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

N_VOCAB, N_EMBD, N_HEAD = 1024, 512, 4
KDA_HD, D_CONV = 128, 4
KV_LORA, ROPE, NOPE, V_HEAD = 256, 64, 128, 128
N_LAYER, N_FF, N_EXP, N_USED, N_FF_EXP = 8, 512, 16, 2, 256
FULL_ATTN = [4, 8]  # 1-based, as in linear_attn_config.full_attn_layers
N_LAYER = int(os.environ.get("N_LAYER", N_LAYER))
N_HEAD = int(os.environ.get("N_HEAD", N_HEAD))   # variant for the compute-buffer fit (measure3.sh)
if "FULL_ATTN" in os.environ:
    FULL_ATTN = [int(x) for x in os.environ["FULL_ATTN"].split(",") if x]
D_INNER = N_HEAD * KDA_HD


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


def ones(*n):
    return np.ones(n, dtype=np.float32)


def write(path: str) -> None:
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(path, "kimi-linear")
    w.add_name("vramfit tiny kimi-linear")
    w.add_block_count(N_LAYER)
    w.add_context_length(1048576)               # model_max_length (base.py:1271)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv([1 if il + 1 in FULL_ATTN else 0 for il in range(N_LAYER)])
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(N_EXP)
    w.add_expert_used_count(N_USED)
    w.add_expert_group_used_count(1)            # topk_group
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_key_length(KV_LORA + ROPE)
    w.add_value_length(N_EMBD // N_HEAD)
    w.add_vocab_size(N_VOCAB)
    w.add_ssm_conv_kernel(D_CONV)
    w.add_kda_head_dim(KDA_HD)
    w.add_kv_lora_rank(KV_LORA)
    w.add_rope_dimension_count(ROPE)
    w.add_key_length_mla(NOPE + ROPE)
    w.add_value_length_mla(V_HEAD)
    w.add_expert_feed_forward_length(N_FF_EXP)
    w.add_expert_shared_count(1)
    w.add_leading_dense_block_count(1)
    w.add_expert_weights_scale(2.446)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", ones(N_EMBD))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        # numpy shapes are the ggml shapes reversed
        w.add_tensor(p + "attn_norm.weight", ones(N_EMBD))
        w.add_tensor(p + "ffn_norm.weight", ones(N_EMBD))
        if i + 1 not in FULL_ATTN:   # KDA
            for x in "qkv":
                w.add_tensor(p + f"ssm_conv1d_{x}.weight", t(rng, 1, D_INNER, 1, D_CONV, dtype=np.float32))
                w.add_tensor(p + f"attn_{x}.weight", t(rng, D_INNER, N_EMBD))
            w.add_tensor(p + "ssm_f_a.weight", t(rng, KDA_HD, N_EMBD))
            w.add_tensor(p + "ssm_f_b.weight", t(rng, D_INNER, KDA_HD))
            w.add_tensor(p + "ssm_beta.weight", t(rng, N_HEAD, N_EMBD))
            w.add_tensor(p + "ssm_a", -ones(1, 1, N_HEAD, 1))
            w.add_tensor(p + "ssm_dt.bias", np.zeros(D_INNER, dtype=np.float32))
            w.add_tensor(p + "ssm_g_a.weight", t(rng, KDA_HD, N_EMBD))
            w.add_tensor(p + "ssm_g_b.weight", t(rng, D_INNER, KDA_HD))
            w.add_tensor(p + "ssm_norm.weight", ones(KDA_HD))
            w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, D_INNER))
        else:                         # MLA, q_lora_rank null
            w.add_tensor(p + "attn_kv_a_norm.weight", ones(KV_LORA))
            w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * (NOPE + ROPE), N_EMBD))
            w.add_tensor(p + "attn_kv_a_mqa.weight", t(rng, KV_LORA + ROPE, N_EMBD))
            w.add_tensor(p + "attn_k_b.weight", t(rng, N_HEAD, KV_LORA, NOPE))
            w.add_tensor(p + "attn_v_b.weight", t(rng, N_HEAD, V_HEAD, KV_LORA))
            w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * V_HEAD))
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
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    name = os.environ.get("NAME", "tiny-kimilinear-f16.gguf")
    write(os.path.join(out, name))


if __name__ == "__main__":
    main()
