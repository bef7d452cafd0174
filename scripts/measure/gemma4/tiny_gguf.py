"""Writes tiny Gemma 4 GGUF files with random weights, every metadata key
llama.cpp b10488 reads for `gemma4` (src/models/gemma4.cpp
load_arch_hparams, src/llama-model.cpp load_hparams) and every tensor
load_arch_tensors creates, so that llama.cpp's own logs give the cache it
allocates ("llama_kv_cache: size = ...").

Run with the gguf package of build b10488:
  ~/.llama-venv/bin/python scripts/measure/gemma4/tiny_gguf.py OUTDIR

Two files (the last layer global, as transformers forces; llama.cpp's
reuse rule takes the last layer with a cache to be global and the one
before it sliding, as in every Gemma 4):
- tiny-e.gguf: the E-models' mechanisms in 10 layers: per-layer
  embeddings (8 wide), the last 5 layers reusing keys and values,
  double-wide MLPs on them, 1 KV head, heads of 16 (sliding) and 32
  (global), no K=V, window 16, and the sliding pattern four to one (E2B's).
- tiny-kv.gguf: the large models' mechanisms in 12 layers: K=V on the
  global layers (no attn_v there), 4 KV heads on sliding layers and 2 on
  global ones (a per-layer head_count_kv list), 2 experts of 16 beside a
  dense MLP (the 26B-A4B), window 32, five to one.
The matching config.json (transformers' names) is written beside each, so
vramfit imports the same model, and the header alone (`.header.gguf`, up to
the tensor data: what vramfit reads) for the test fixtures
(crates/core/tests/fixtures/gguf/gemma4-tiny-*.{header.gguf,config.json}).
"""
import json, pathlib, sys
import numpy as np
import gguf

rng = np.random.default_rng(0)

def w(*shape):
    # ggml shape (ne0 first) -> numpy shape reversed
    return (rng.standard_normal(tuple(reversed(shape))) * 0.02).astype(np.float32)

def ones(n):
    return np.ones((n,), dtype=np.float32)

def write(path, c):
    L, h, heads = c["layers"], c["hidden"], c["heads"]
    hd, ghd = c["head_dim"], c["global_head_dim"]
    period, shared = c["period"], c["shared"]
    swa = [(i + 1) % period != 0 for i in range(L)]
    kv_swa, kv_glob = c["kv_heads"], c["global_kv_heads"]
    kv = [kv_swa if s else kv_glob for s in swa]
    first_shared = L - shared
    ffn = [c["ffn"] * (2 if (c["double_wide"] and i >= first_shared) else 1) for i in range(L)]
    V, p = c["vocab"], c["ple"]
    wr = gguf.GGUFWriter(path, "gemma4")
    wr.add_context_length(4096)
    wr.add_embedding_length(h)
    wr.add_block_count(L)
    wr.add_feed_forward_length(ffn if c["double_wide"] else c["ffn"])
    wr.add_head_count(heads)
    wr.add_head_count_kv(kv if kv_swa != kv_glob else kv_swa)
    wr.add_key_length(ghd)
    wr.add_value_length(ghd)
    wr.add_key_length_swa(hd)
    wr.add_value_length_swa(hd)
    wr.add_layer_norm_rms_eps(1e-6)
    wr.add_sliding_window(c["window"])
    wr.add_sliding_window_pattern(swa)
    wr.add_shared_kv_layers(shared)
    wr.add_embedding_length_per_layer_input(p)
    wr.add_rope_freq_base(1_000_000.0)
    wr.add_rope_freq_base_swa(10_000.0)
    wr.add_rope_dimension_count(ghd)
    wr.add_rope_dimension_count_swa(hd)
    wr.add_final_logit_softcapping(30.0)
    if c["experts"]:
        wr.add_expert_count(c["experts"])
        wr.add_expert_used_count(c["top_k"])
        wr.add_expert_feed_forward_length(c["moe_ffn"])
    # A 64-token byte-pair vocabulary llama.cpp loads (its vocabulary
    # gives n_vocab; "none" would leave it 0).
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
    if p:
        t("per_layer_token_embd.weight", w(p * L, V))
        t("per_layer_model_proj.weight", w(h, p * L))
        t("per_layer_proj_norm.weight", ones(p))
    t("output_norm.weight", ones(h))
    # rope_freqs: one table, for the global layers (created once, then
    # duplicated).
    t("rope_freqs.weight", ones(ghd // 2))
    for i in range(L):
        d = hd if swa[i] else ghd
        b = f"blk.{i}."
        t(b + "attn_norm.weight", ones(h))
        t(b + "attn_q.weight", w(h, d * heads))
        # The layers reusing keys and values still carry k, v and the key
        # norm, as a converted checkpoint does (it stores them;
        # gemma4.cpp loads them TENSOR_NOT_REQUIRED).
        t(b + "attn_k.weight", w(h, d * kv[i]))
        if swa[i] or not c["k_eq_v"]:
            t(b + "attn_v.weight", w(h, d * kv[i]))
        t(b + "attn_k_norm.weight", ones(d))
        t(b + "attn_output.weight", w(d * heads, h))
        t(b + "attn_q_norm.weight", ones(d))
        t(b + "post_attention_norm.weight", ones(h))
        t(b + "layer_output_scale.weight", ones(1))
        t(b + "ffn_norm.weight", ones(h))
        t(b + "ffn_gate.weight", w(h, ffn[i]))
        t(b + "ffn_up.weight", w(h, ffn[i]))
        t(b + "ffn_down.weight", w(ffn[i], h))
        t(b + "post_ffw_norm.weight", ones(h))
        if c["experts"]:
            E, m = c["experts"], c["moe_ffn"]
            t(b + "ffn_gate_inp.weight", w(h, E))
            t(b + "ffn_gate_inp.scale", ones(h))
            t(b + "pre_ffw_norm_2.weight", ones(h))
            t(b + "post_ffw_norm_1.weight", ones(h))
            t(b + "post_ffw_norm_2.weight", ones(h))
            t(b + "ffn_gate_up_exps.weight", w(h, 2 * m, E))
            t(b + "ffn_down_exps.weight", w(m, h, E))
            t(b + "ffn_down_exps.scale", ones(E))
        if p:
            t(b + "inp_gate.weight", w(h, p))
            t(b + "proj.weight", w(p, h))
            t(b + "post_norm.weight", ones(h))
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()

def config(c):
    L = c["layers"]
    types = ["full_attention" if (i + 1) % c["period"] == 0 else "sliding_attention" for i in range(L)]
    return {
        "architectures": ["Gemma4ForCausalLM"],
        "model_type": "gemma4_text",
        "hidden_size": c["hidden"], "num_hidden_layers": L, "num_attention_heads": c["heads"],
        "num_key_value_heads": c["kv_heads"],
        "num_global_key_value_heads": c["global_kv_heads"] if c["k_eq_v"] else None,
        "head_dim": c["head_dim"], "global_head_dim": c["global_head_dim"],
        "intermediate_size": c["ffn"], "vocab_size": c["vocab"],
        "vocab_size_per_layer_input": c["vocab"], "hidden_size_per_layer_input": c["ple"],
        "num_kv_shared_layers": c["shared"], "use_double_wide_mlp": c["double_wide"],
        "attention_k_eq_v": c["k_eq_v"], "enable_moe_block": bool(c["experts"]),
        "num_experts": c["experts"] or None, "top_k_experts": c["top_k"] or None,
        "moe_intermediate_size": c["moe_ffn"] or None,
        "sliding_window": c["window"], "layer_types": types, "max_position_embeddings": 4096,
        "final_logit_softcapping": 30.0, "tie_word_embeddings": True,
    }

MODELS = {
    "tiny-e": dict(layers=10, hidden=32, heads=2, kv_heads=1, global_kv_heads=1, head_dim=16,
                   global_head_dim=32, ffn=64, vocab=64, ple=8, shared=5, double_wide=True,
                   k_eq_v=False, experts=0, top_k=0, moe_ffn=0, window=16, period=5),
    "tiny-kv": dict(layers=12, hidden=32, heads=4, kv_heads=4, global_kv_heads=2, head_dim=16,
                    global_head_dim=32, ffn=48, vocab=64, ple=0, shared=0, double_wide=False,
                    k_eq_v=True, experts=2, top_k=1, moe_ffn=16, window=32, period=6),
}

if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, c in MODELS.items():
        write(str(out / f"{name}.gguf"), c)
        (out / f"{name}.json").write_text(json.dumps(config(c), indent=2) + "\n")
        data = (out / f"{name}.gguf").read_bytes()
        start = gguf.GGUFReader(str(out / f"{name}.gguf")).data_offset
        (out / f"{name}.header.gguf").write_bytes(data[:start])
        print(name, len(data), "header", start)
