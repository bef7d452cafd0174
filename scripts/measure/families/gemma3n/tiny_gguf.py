"""Writes a tiny Gemma 3n GGUF (arch `gemma3n`) with random weights, every
key llama.cpp b10488 reads for it and every tensor
src/models/gemma3n.cpp load_arch_tensors creates, so that llama-server's own
log lines give the caches and buffers it allocates.

  ~/.gguf-venv/bin/python scripts/measure/families/gemma3n/tiny_gguf.py OUTDIR

Constraints from the b10488 loader (see NOTES.md):
- n_layer_kv_from_start is hard-coded to 20 (gemma3n.cpp:9), so the model
  needs more than 20 layers for any to reuse KV: 25 layers here, the last 5
  reuse layer 18's (sliding) or 19's (global) cache (llama-model.cpp:2350-2357).
- n_altup 4, laurel_rank 64, n_embd_altup 256 are fixed defaults in
  llama-hparams.h:225-228 (not read from the file), so the tensors use them.
- the converter (conversion/gemma.py:Gemma3NModel) stores attn_k/attn_v for
  every layer, shared ones too (loaded with flag 0: required).
Geometry: hidden 64, 2 heads of 32, 1 KV head, n_ff 128, window 16,
sliding pattern four to one, vocab 64.
"""
import json, pathlib, sys
import numpy as np
import gguf

rng = np.random.default_rng(0)


def w(*shape):
    return (rng.standard_normal(tuple(reversed(shape))) * 0.02).astype(np.float32)


def ones(*shape):
    return np.ones(tuple(reversed(shape)), dtype=np.float32)


C = dict(layers=25, hidden=64, heads=2, kv_heads=1, head_dim=32, ffn=128, vocab=64,
         ple=256, altup=4, laurel=64, shared=5, window=16, period=5)


def write(path, c):
    L, h, heads, hd, kvh = c["layers"], c["hidden"], c["heads"], c["head_dim"], c["kv_heads"]
    V, p, A, R, ff = c["vocab"], c["ple"], c["altup"], c["laurel"], c["ffn"]
    swa = [(i + 1) % c["period"] != 0 for i in range(L)]
    wr = gguf.GGUFWriter(path, "gemma3n")
    wr.add_context_length(32768)
    wr.add_embedding_length(h)
    wr.add_block_count(L)
    wr.add_feed_forward_length([ff] * L)
    wr.add_head_count(heads)
    wr.add_head_count_kv(kvh)
    wr.add_key_length(hd)
    wr.add_value_length(hd)
    wr.add_layer_norm_rms_eps(1e-6)
    wr.add_rope_freq_base(1_000_000.0)
    wr.add_rope_freq_base_swa(10_000.0)
    wr.add_final_logit_softcapping(30.0)
    wr.add_sliding_window(c["window"])
    wr.add_sliding_window_pattern(swa)
    wr.add_altup_active_idx(0)
    wr.add_altup_num_inputs(A)
    wr.add_embedding_length_per_layer_input(p)
    wr.add_shared_kv_layers(c["shared"])
    wr.add_activation_sparsity_scale([1.6448536 if i < 10 else 0.0 for i in range(L)])
    wr.add_tokenizer_model("gpt2")
    wr.add_tokenizer_pre("llama-bpe")
    letters = [chr(ord("a") + i) for i in range(26)]
    tokens = ["<bos>", "<eos>"] + letters + [str(i) for i in range(10)] + ["\u0120" + x for x in letters]
    assert len(tokens) == V
    wr.add_token_list(tokens)
    wr.add_token_types([3, 3] + [1] * (V - 2))
    wr.add_token_merges(["\u0120 a"])
    wr.add_bos_token_id(0)
    wr.add_eos_token_id(1)
    wr.add_add_bos_token(True)
    wr.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    wr.add_file_type(gguf.LlamaFileType.ALL_F32)
    t = wr.add_tensor
    t("token_embd.weight", w(h, V))
    t("altup_proj.weight", w(h, h, A - 1))
    t("altup_unembd_proj.weight", w(h, h, A - 1))
    t("per_layer_token_embd.weight", w(p * L, V))
    t("per_layer_model_proj.weight", w(h, p * L))
    t("per_layer_proj_norm.weight", ones(p))
    t("output_norm.weight", ones(h))
    for i in range(L):
        b = f"blk.{i}."
        t(b + "attn_norm.weight", ones(h))
        t(b + "attn_q.weight", w(h, hd * heads))
        t(b + "attn_k.weight", w(h, hd * kvh))
        t(b + "attn_v.weight", w(h, hd * kvh))
        t(b + "attn_output.weight", w(hd * heads, h))
        t(b + "attn_q_norm.weight", ones(hd))
        t(b + "attn_k_norm.weight", ones(hd))
        t(b + "post_attention_norm.weight", ones(h))
        t(b + "ffn_norm.weight", ones(h))
        t(b + "ffn_gate.weight", w(h, ff))
        t(b + "ffn_up.weight", w(h, ff))
        t(b + "ffn_down.weight", w(ff, h))
        t(b + "post_ffw_norm.weight", ones(h))
        t(b + "inp_gate.weight", w(h, p))
        t(b + "proj.weight", w(p, h))
        t(b + "post_norm.weight", ones(h))
        t(b + "altup_correct_coef.weight", w(A, A))
        t(b + "altup_correct_scale.weight", ones(h))
        t(b + "altup_predict_coef.weight", w(A, A * A))
        t(b + "altup_router.weight", w(h, A))
        t(b + "altup_router_norm.weight", ones(h))
        t(b + "laurel_l.weight", w(h, R))
        t(b + "laurel_r.weight", w(R, h))
        t(b + "laurel_post_norm.weight", ones(h))
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def config(c):
    L = c["layers"]
    return {
        "architectures": ["Gemma3nForCausalLM"], "model_type": "gemma3n_text",
        "hidden_size": c["hidden"], "num_hidden_layers": L, "num_attention_heads": c["heads"],
        "num_key_value_heads": c["kv_heads"], "head_dim": c["head_dim"],
        "intermediate_size": [c["ffn"]] * L, "vocab_size": c["vocab"],
        "vocab_size_per_layer_input": c["vocab"], "hidden_size_per_layer_input": c["ple"],
        "num_kv_shared_layers": c["shared"], "altup_num_inputs": c["altup"], "laurel_rank": c["laurel"],
        "sliding_window": c["window"], "max_position_embeddings": 32768,
        "layer_types": ["full_attention" if (i + 1) % c["period"] == 0 else "sliding_attention" for i in range(L)],
        "activation_sparsity_pattern": [0.95] * 10 + [0.0] * (L - 10),
        "final_logit_softcapping": 30.0, "tie_word_embeddings": True,
    }


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = pathlib.Path(args[0] if args else ".")
    out.mkdir(parents=True, exist_ok=True)
    models = {"tiny-3n": C}
    if "--quant" in sys.argv:
        # rows of 256 so that k-quants apply (quantize.sh)
        models = {"tiny-3n-q": dict(C, hidden=256, head_dim=128, ffn=512)}
    for name, c in models.items():
        f = out / f"{name}.gguf"
        write(str(f), c)
        (out / f"{name}.json").write_text(json.dumps(config(c), indent=2) + "\n")
        print(f, f.stat().st_size)
