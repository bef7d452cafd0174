#!/usr/bin/env python3
"""Write tiny MLA GGUFs that llama.cpp b10488 loads, to read what it allocates for Mistral Small 4
(`mistral4`) and Mistral Large 3 (converted as `deepseek2`).

    ~/.gguf-venv/bin/python tiny_gguf.py OUT_DIR      (gguf-py of b10488: pip install gguf-py)

Files (random f16 2-D weights; f32 1-D weights and router, as the converter writes them,
conversion/base.py:932-968; byte vocabulary as ../../glm4moe_gguf.py):
  tiny-mistral4-f16.gguf        arch mistral4, the tensor set and keys that b10488's converter writes
                                for Mistral3ForConditionalGeneration with a mistral4 text config
                                (conversion/mistral3.py:32-48 + deepseek.py:319-386): fused
                                ffn_gate_up_exps, no exp_probs_b, no gating-func key (softmax default),
                                all layers MoE (first_k_dense_replace 0).
  tiny-mistral4-as-ds2-f16.gguf the same tensors and keys with general.architecture = deepseek2
                                (control: does arch mistral4 allocate anything deepseek2 does not?)
  tiny-large3-f16.gguf          arch deepseek2 as MistralMoeModel (conversion/mistral.py:113-202,
                                `--mistral-format`) writes Mistral Large 3: DeepSeek-V3 layout, split
                                gate/up experts, first layer dense, softmax gating, llama-4 attention
                                temperature keys (attention.temperature_scale / _length), YaRN.

Shapes (ggml ne0 has the same divisibility by 256 as the real model's):
  mistral4: n_embd 512 (4096), 4 heads (32), q_lora 256 (1024), kv_lora 256 (256), qk_nope 64 (64),
            qk_rope 64 (64), v_head 128 (128), 16 experts (128) x 256 (2048), top-4 (4), 1 shared (1),
            4 layers (36), vocab 1024 (131072).
  large3:   n_embd 512 (7168), 4 heads (128), q_lora 256 (1536), kv_lora 256 (512), qk_nope 128 (128),
            qk_rope 64 (64), v_head 128 (128), dense FFN 512, 16 experts x 256 (2 used), 1 shared,
            4 layers (first dense), vocab 1024.  (Large 3 real values assumed = DeepSeek-V3 widths.)
16 (not 8) experts so the n_expert == 8 special cases of llama-quant.cpp do not fire.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

N_VOCAB, N_EMBD, N_HEAD, N_LAYER = 1024, 512, 4, 4


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


def write(path: str, arch: str, kind: str) -> None:
    rng = np.random.default_rng(7)
    m4 = kind == "mistral4"
    q_lora, kv_lora, rope = 256, 256, 64
    nope, v_head = (64, 128) if m4 else (128, 128)
    n_exp, n_used, n_ff_exp, n_ff = 16, (4 if m4 else 2), 256, 512
    n_dense = 0 if m4 else 1
    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"vramfit tiny {kind} ({arch})")
    w.add_block_count(N_LAYER)
    w.add_context_length(1048576 if m4 else 294912)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(1)                      # MLA as MQA (conversion/deepseek.py:326)
    w.add_key_length(kv_lora + rope)            # deepseek.py:350
    w.add_value_length(kv_lora)                 # deepseek.py:351
    w.add_key_length_mla(nope + rope)           # deepseek.py:352
    w.add_value_length_mla(v_head)              # deepseek.py:353
    w.add_q_lora_rank(q_lora)
    w.add_kv_lora_rank(kv_lora)
    w.add_rope_dimension_count(rope)
    w.add_rope_freq_base(10000.0 if m4 else 1000000.0)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(128.0 if m4 else 64.0)
    w.add_rope_scaling_orig_ctx_len(8192 if m4 else 4096)
    w.add_rope_scaling_yarn_beta_fast(32.0)
    w.add_rope_scaling_yarn_beta_slow(1.0)
    w.add_rope_scaling_yarn_log_mul(0.1)        # 0.1 * mscale_all_dim (deepseek.py:386, mistral.py:182)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(N_VOCAB)
    w.add_leading_dense_block_count(n_dense)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(n_used)
    w.add_expert_group_count(1)
    w.add_expert_group_used_count(1)
    w.add_expert_feed_forward_length(n_ff_exp)
    w.add_expert_shared_count(1)
    w.add_expert_weights_scale(1.0)
    w.add_expert_weights_norm(True)
    if not m4:
        # MistralMoeModel: scoring_func "softmax" (mistral.py:168 -> base.py:1364-1368),
        # llama_4_scaling beta and yarn original ctx (mistral.py:108-110, 177)
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SOFTMAX)
        w.add_attn_temperature_scale(0.1)
        w.add_attn_temperature_length(4096)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", ones(N_EMBD))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        # numpy shapes are the ggml shapes reversed
        w.add_tensor(p + "attn_norm.weight", ones(N_EMBD))
        w.add_tensor(p + "attn_q_a_norm.weight", ones(q_lora))
        w.add_tensor(p + "attn_kv_a_norm.weight", ones(kv_lora))
        w.add_tensor(p + "attn_q_a.weight", t(rng, q_lora, N_EMBD))
        w.add_tensor(p + "attn_q_b.weight", t(rng, N_HEAD * (nope + rope), q_lora))
        w.add_tensor(p + "attn_kv_a_mqa.weight", t(rng, kv_lora + rope, N_EMBD))
        w.add_tensor(p + "attn_k_b.weight", t(rng, N_HEAD, kv_lora, nope))
        w.add_tensor(p + "attn_v_b.weight", t(rng, N_HEAD, v_head, kv_lora))
        w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * v_head))
        w.add_tensor(p + "ffn_norm.weight", ones(N_EMBD))
        if i < n_dense:
            w.add_tensor(p + "ffn_gate.weight", t(rng, n_ff, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, n_ff, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, n_ff))
            continue
        w.add_tensor(p + "ffn_gate_inp.weight", t(rng, n_exp, N_EMBD, dtype=np.float32))
        if m4:
            # HF mistral4 stores experts stacked: mlp.experts.gate_up_proj (n_exp, 2*n_ff_exp, n_embd)
            # -> FFN_GATE_UP_EXP (gguf-py tensor_mapping.py:614-616, conversion/mistral3.py:36-40)
            w.add_tensor(p + "ffn_gate_up_exps.weight", t(rng, n_exp, 2 * n_ff_exp, N_EMBD))
        else:
            w.add_tensor(p + "ffn_gate_exps.weight", t(rng, n_exp, n_ff_exp, N_EMBD))
            w.add_tensor(p + "ffn_up_exps.weight", t(rng, n_exp, n_ff_exp, N_EMBD))
        w.add_tensor(p + "ffn_down_exps.weight", t(rng, n_exp, N_EMBD, n_ff_exp))
        w.add_tensor(p + "ffn_gate_shexp.weight", t(rng, n_ff_exp, N_EMBD))
        w.add_tensor(p + "ffn_up_shexp.weight", t(rng, n_ff_exp, N_EMBD))
        w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, n_ff_exp))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "tiny-mistral4-f16.gguf"), "mistral4", "mistral4")
    write(os.path.join(out, "tiny-mistral4-as-ds2-f16.gguf"), "deepseek2", "mistral4")
    write(os.path.join(out, "tiny-large3-f16.gguf"), "deepseek2", "large3")


if __name__ == "__main__":
    main()
