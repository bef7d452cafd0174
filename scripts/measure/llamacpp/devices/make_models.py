#!/usr/bin/env python3
"""Write two tiny GGUF models that llama.cpp b10488 loads and runs, for the device-split runs in
this folder (run.sh): random f16 weights, a SentencePiece-style vocabulary of byte tokens.

    ~/.llama-venv/bin/python scripts/measure/llamacpp/devices/make_models.py OUT_DIR

~/.llama-venv has the `gguf` package of llama.cpp b10488 (gguf-py, installed with pip -e) and
numpy. Deterministic (fixed seed). Shapes are multiples of 512 so that no backend pads a row.

  tiny-llama-f16.gguf   llama, 8 layers, n_embd 512, 8 heads of 64, 2 KV heads, n_ff 1024,
                        vocabulary 1024, context 8192
  tiny-moe-f16.gguf     qwen3moe, 6 layers, n_embd 512, 8 heads of 64, 2 KV heads, 8 experts
                        (2 used) of 512, vocabulary 1024, context 8192
"""
from __future__ import annotations

import os
import sys

import numpy as np
import gguf

N_VOCAB = 1024
N_EMBD = 512
N_HEAD = 8
N_KV = 2
HEAD = 64


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


def common(w: gguf.GGUFWriter, n_layer: int, n_ff: int) -> None:
    w.add_name("vramfit tiny")
    w.add_block_count(n_layer)
    w.add_context_length(8192)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_dimension_count(HEAD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    vocab(w)


def t(rng: np.random.Generator, *shape: int, dtype=np.float16) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(dtype)


def attention(w: gguf.GGUFWriter, rng: np.random.Generator, i: int, qk_norm: bool) -> None:
    p = f"blk.{i}."
    w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor(p + "attn_q.weight", t(rng, N_HEAD * HEAD, N_EMBD))
    w.add_tensor(p + "attn_k.weight", t(rng, N_KV * HEAD, N_EMBD))
    w.add_tensor(p + "attn_v.weight", t(rng, N_KV * HEAD, N_EMBD))
    w.add_tensor(p + "attn_output.weight", t(rng, N_EMBD, N_HEAD * HEAD))
    if qk_norm:
        w.add_tensor(p + "attn_q_norm.weight", np.ones(HEAD, dtype=np.float32))
        w.add_tensor(p + "attn_k_norm.weight", np.ones(HEAD, dtype=np.float32))
    w.add_tensor(p + "ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))


def ends(w: gguf.GGUFWriter, rng: np.random.Generator) -> None:
    w.add_tensor("token_embd.weight", t(rng, N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", t(rng, N_VOCAB, N_EMBD))


def llama(path: str) -> None:
    rng = np.random.default_rng(1)
    w = gguf.GGUFWriter(path, "llama")
    n_layer, n_ff = 8, 1024
    common(w, n_layer, n_ff)
    ends(w, rng)
    for i in range(n_layer):
        attention(w, rng, i, qk_norm=False)
        p = f"blk.{i}."
        w.add_tensor(p + "ffn_gate.weight", t(rng, n_ff, N_EMBD))
        w.add_tensor(p + "ffn_up.weight", t(rng, n_ff, N_EMBD))
        w.add_tensor(p + "ffn_down.weight", t(rng, N_EMBD, n_ff))
    finish(w)


def moe(path: str) -> None:
    rng = np.random.default_rng(2)
    w = gguf.GGUFWriter(path, "qwen3moe")
    n_layer, n_exp, n_ff_exp = 6, 8, 512
    common(w, n_layer, n_ff_exp)
    w.add_key_length(HEAD)
    w.add_value_length(HEAD)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(n_ff_exp)
    ends(w, rng)
    for i in range(n_layer):
        attention(w, rng, i, qk_norm=True)
        p = f"blk.{i}."
        w.add_tensor(p + "ffn_gate_inp.weight", t(rng, n_exp, N_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate_exps.weight", t(rng, n_exp, n_ff_exp, N_EMBD))
        w.add_tensor(p + "ffn_up_exps.weight", t(rng, n_exp, n_ff_exp, N_EMBD))
        w.add_tensor(p + "ffn_down_exps.weight", t(rng, n_exp, N_EMBD, n_ff_exp))
    finish(w)


def finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    llama(os.path.join(out, "tiny-llama-f16.gguf"))
    moe(os.path.join(out, "tiny-moe-f16.gguf"))
