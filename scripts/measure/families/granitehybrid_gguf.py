#!/usr/bin/env python3
"""Write two tiny Granite 4.0-H (`granitehybrid`) GGUFs that llama.cpp b10488 loads, to read how
it allocates the hybrid memory (a KV cache for the attention layers, an RS buffer for the
Mamba-2 layers), the model buffer and the compute buffer:

- tiny-granitehybrid-f16.gguf: dense FFN on every layer (as granite-4.0-h-micro / h-1b / h-350m:
  num_local_experts 0, the shared_mlp becomes ffn_gate/ffn_up/ffn_down);
- tiny-granitehybrid-moe-f16.gguf: routed experts plus a shared expert on every layer (as
  granite-4.0-h-tiny / h-small).

    ~/.gt-venv/bin/python scripts/measure/families/granitehybrid_gguf.py OUT_DIR

The keys and tensors are those b10488's converter writes for GraniteMoeHybridForCausalLM
(`conversion/granite.py` `GraniteHybridModel`, over `GraniteMoeModel`, `GraniteModel`,
`conversion/llama.py` `LlamaModel` and `conversion/base.py` `TextModel.set_gguf_parameters`;
Mamba tensors reshaped by `conversion/mamba.py` `Mamba2Model.modify_tensors`) and its loader reads
(`src/models/granite-hybrid.cpp` `load_arch_hparams`, `load_arch_tensors`):

- Keys: block_count, context_length (2^20: NoPE hybrids, `GraniteHybridModel.set_gguf_parameters`
  overwrites max_position_embeddings), embedding_length, feed_forward_length (intermediate_size),
  attention.head_count, attention.head_count_kv (per-layer array, 0 on every "mamba" entry of
  layer_types: the loader's only way to tell a recurrent layer), rope.freq_base, rope.dimension_count
  (hidden / heads, `LlamaModel`), rope.scaling.finetuned = false (the switch that turns RoPE off),
  attention.layer_norm_rms_epsilon, expert_count and expert_used_count (written even when 0),
  vocab_size, attention.scale / embedding_scale / residual_scale / logit_scale (the Granite
  multipliers), expert_shared_feed_forward_length (shared_intermediate_size), ssm.conv_kernel,
  ssm.state_size, ssm.group_count, ssm.inner_size (mamba_expand * hidden), ssm.time_step_rank
  (mamba_n_heads), file_type.
- Tensors: token_embd, output_norm, no output (tied: the loader duplicates token_embd); every
  layer attn_norm (input_layernorm) and ffn_norm (post_attention_layernorm); Mamba layers ssm_in
  {n_embd, 2 d_inner + 2 n_group d_state + n_head}, ssm_conv1d.weight {d_conv, d_inner + 2 n_group
  d_state} (F32: SSM_CONV1D is in the converter's always-F32 list), ssm_conv1d.bias (F32, 1-D),
  ssm_dt.bias {n_head} (F32, 1-D), ssm_a and ssm_d {1, n_head} (F32: their names do not end in
  ".weight"), ssm_norm.weight {d_inner / n_group, n_group} (F32: "_norm.weight"), ssm_out {d_inner,
  n_embd}; attention layers attn_q/k/v/output (no q/k norms, no biases); dense FFN ffn_gate/up/down
  {n_embd, shared_intermediate_size}; MoE ffn_gate_inp {n_embd, n_expert} (F32: FFN_GATE_INP),
  ffn_gate_exps/ffn_up_exps {n_embd, n_ff, n_expert} (the converter splits input_linear),
  ffn_down_exps {n_ff, n_embd, n_expert}, ffn_gate_shexp/ffn_up_shexp {n_embd, n_ff_shexp},
  ffn_down_shexp {n_ff_shexp, n_embd}. Matrices f16, the rest f32.

Random weights, a byte vocabulary (glm4moe_gguf.py's `t` and `vocab`). Shape: 6 layers, attention
on layers 1 and 4 (the other 4 Mamba-2), n_embd 256, 4 heads of 64, 2 KV heads; Mamba d_inner 512
(expand 2), d_state 16, n_group 2, d_conv 4, 8 heads of 64; dense ffn 512; MoE 8 experts (2 used)
of 128 plus a shared expert of 256; vocabulary 1024. So n_embd_r = (4 - 1) * (512 + 2*2*16) = 1728
and n_embd_s = 16 * 512 = 8192 floats per cell and layer.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(__file__))
from glm4moe_gguf import run, save, t, vocab  # noqa: E402

N_VOCAB, N_EMBD, N_HEAD, N_KV, HEAD = 1024, 256, 4, 2, 64
N_LAYER = 6
ATTN = (1, 4)
D_INNER, D_STATE, N_GROUP, D_CONV, N_SSM_HEAD = 2 * N_EMBD, 16, 2, 4, 8
N_FF_DENSE = 512
N_EXP, N_EXP_USED, N_FF_EXP, N_FF_SHEXP = 8, 2, 128, 256


def write(path: str, moe: bool, rng) -> None:
    w = gguf.GGUFWriter(path, "granitehybrid")
    w.add_name("vramfit tiny granitehybrid" + (" moe" if moe else ""))
    w.add_block_count(N_LAYER)
    w.add_context_length(2**20)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF_EXP if moe else N_FF_DENSE)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv([N_KV if i in ATTN else 0 for i in range(N_LAYER)])
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_rope_scaling_finetuned(False)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(N_EXP if moe else 0)
    w.add_expert_used_count(N_EXP_USED if moe else 0)
    w.add_vocab_size(N_VOCAB)
    w.add_attention_scale(0.0078125)
    w.add_embedding_scale(12.0)
    w.add_residual_scale(0.22)
    w.add_logit_scale(6.0)
    w.add_expert_shared_feed_forward_length(N_FF_SHEXP if moe else N_FF_DENSE)
    w.add_ssm_conv_kernel(D_CONV)
    w.add_ssm_state_size(D_STATE)
    w.add_ssm_group_count(N_GROUP)
    w.add_ssm_inner_size(D_INNER)
    w.add_ssm_time_step_rank(N_SSM_HEAD)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)
    f32 = np.float32
    conv_dim = D_INNER + 2 * N_GROUP * D_STATE
    d_in_proj = 2 * D_INNER + 2 * N_GROUP * D_STATE + N_SSM_HEAD
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=f32))
    for i in range(N_LAYER):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=f32))
        if i in ATTN:
            w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
            w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
            w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
        else:
            # numpy shapes are the reverse of ggml's ne
            w.add_tensor(p + "ssm_in.weight", t(rng, d_in_proj, N_EMBD))
            w.add_tensor(p + "ssm_conv1d.weight", t(rng, conv_dim, D_CONV, dtype=f32))
            w.add_tensor(p + "ssm_conv1d.bias", t(rng, conv_dim, dtype=f32))
            w.add_tensor(p + "ssm_dt.bias", t(rng, N_SSM_HEAD, dtype=f32))
            w.add_tensor(p + "ssm_a", -np.arange(1, N_SSM_HEAD + 1, dtype=f32).reshape(N_SSM_HEAD, 1))
            w.add_tensor(p + "ssm_d", np.ones((N_SSM_HEAD, 1), dtype=f32))
            w.add_tensor(p + "ssm_norm.weight", np.ones((N_GROUP, D_INNER // N_GROUP), dtype=f32))
            w.add_tensor(p + "ssm_out.weight", t(rng, N_EMBD, D_INNER))
        w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=f32))
        if moe:
            w.add_tensor(p + "ffn_gate_inp.weight", t(rng, N_EXP, N_EMBD, dtype=f32))
            w.add_tensor(p + "ffn_gate_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_up_exps.weight", t(rng, N_EXP, N_FF_EXP, N_EMBD))
            w.add_tensor(p + "ffn_down_exps.weight", t(rng, N_EXP, N_EMBD, N_FF_EXP))
            w.add_tensor(p + "ffn_gate_shexp.weight", t(rng, N_FF_SHEXP, N_EMBD))
            w.add_tensor(p + "ffn_up_shexp.weight", t(rng, N_FF_SHEXP, N_EMBD))
            w.add_tensor(p + "ffn_down_shexp.weight", t(rng, N_EMBD, N_FF_SHEXP))
        else:
            w.add_tensor(p + "ffn_gate.weight", t(rng, N_FF_DENSE, N_EMBD))
            w.add_tensor(p + "ffn_up.weight", t(rng, N_FF_DENSE, N_EMBD))
            w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, N_FF_DENSE))
    save(w)


def main(out: str) -> None:
    rng = np.random.default_rng(7)
    write(os.path.join(out, "tiny-granitehybrid-f16.gguf"), False, rng)
    write(os.path.join(out, "tiny-granitehybrid-moe-f16.gguf"), True, rng)


if __name__ == "__main__":
    run(main)
