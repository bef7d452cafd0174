#!/usr/bin/env python3
"""Make the tiny GGUF and safetensors fixtures in crates/core/tests/fixtures/gguf/, and their
expected parse as read back by the `gguf` package's own reader (gguf.GGUFReader).

    python3 -m venv ~/.gguf-venv && ~/.gguf-venv/bin/pip install -q gguf numpy
    ~/.gguf-venv/bin/python scripts/measure/gguf/make_fixtures.py

Deterministic (fixed seeds): running it again writes byte-identical files. Made with gguf 0.19.0,
numpy 2.4.6. Files (each < 200 KB):

  tiny-llama-mixed.gguf   llama, 2 layers, f32 norms, f16 output, q8_0 token_embd (quantized by
                          gguf-py), q4_K / q6_K weights (raw blocks: gguf-py cannot quantize
                          K-quants), a q8_0 attn_output whose rows (64) are not a multiple of 256
                          (what llama-quantize's fallback does), bf16 and i32 tensors, the usual
                          llama.* / tokenizer.* / general.* keys, default alignment 32
  tiny-moe-align64.gguf   qwen3moe, 1 layer, 3-D expert tensors (ne2 = 4 experts) in mxfp4 and
                          q4_0, f32 router, general.alignment = 64, and one key of every GGUF
                          value type (u8 i8 u16 i16 u32 i32 f32 bool string array u64 i64 f64,
                          arrays of u8/i16/f64/bool/string)
                          (gguf-py refuses to write an empty array, so there is none)
  tiny.safetensors        F32, F16, BF16, F8_E4M3, I32, U8, I64 tensors and __metadata__

Next to each: <name>.expected.json with every metadata key (name, GGUF value type, value), every
tensor (name, ggml shape ne0.., ggml type name and id, offset inside the data section, absolute
file offset, byte size), the data section offset, alignment, the total tensor data bytes
(sum of padded sizes = file size - data offset) and the file size.
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "crates", "core", "tests", "fixtures", "gguf"))

BLOCK = {  # ggml type: (elements per block, bytes per block, byte offset of the f16 scale(s))
    Q.Q4_K: (256, 144, (0, 2)),    # d, dmin, scales[12], qs[128]
    Q.Q6_K: (256, 210, (208,)),    # ql[128], qh[64], scales[16], d
    Q.MXFP4: (32, 17, ()),         # e8m0 exponent, qs[16]
}


def raw_blocks(rng: np.random.Generator, qtype: Q, ne: list[int]) -> np.ndarray:
    """Random blocks of a type gguf-py cannot quantize, with finite small f16 scales so that
    gguf.quants.dequantize gives finite values. Returned as uint8 with the byte shape
    (..., ne1, ne0 / blck * type_size) that GGUFWriter.add_tensor(raw_dtype=...) expects."""
    blck, tsize, scales = BLOCK[qtype]
    nblocks = int(np.prod(ne)) // blck
    b = rng.integers(0, 256, size=(nblocks, tsize), dtype=np.uint8)
    for off in scales:
        b[:, off:off + 2] = np.frombuffer(np.float16(0.01).tobytes(), dtype=np.uint8)
    if qtype == Q.MXFP4:
        b[:, 0] = 120  # 2^(120-127): a small scale
    return b.reshape(*reversed(ne[1:]), ne[0] // blck * tsize)


def f32(rng, ne):
    return rng.standard_normal(size=tuple(reversed(ne))).astype(np.float32)


def tiny_llama(path: str) -> None:
    rng = np.random.default_rng(20261124)
    n_embd, n_ff, n_head, n_head_kv, hd, n_vocab, n_layer = 256, 32, 2, 1, 32, 32, 2
    w = gguf.GGUFWriter(path, arch="llama")
    w.add_type("model")
    w.add_name("tiny-llama-mixed")
    w.add_block_count(n_layer)
    w.add_context_length(128)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(hd)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_vocab_size(n_vocab)
    w.add_file_type(15)                 # LLAMA_FTYPE_MOSTLY_Q4_K_M
    w.add_quantization_version(2)       # GGML_QNT_VERSION
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    tokens = ["<|begin_of_text|>", "<|end_of_text|>"] + [chr(ord("a") + i) for i in range(26)] + \
             ["Ġ", "Ġa", "ab", "Ġab"]
    assert len(tokens) == n_vocab
    w.add_token_list(tokens)
    w.add_token_types([3, 3] + [1] * (n_vocab - 2))
    w.add_token_merges(["Ġ a", "a b", "Ġa b"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)
    w.add_add_bos_token(True)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")

    def t(name, ne, qtype, data=None):
        if qtype in (Q.F32,):
            w.add_tensor(name, f32(rng, ne))
        elif qtype == Q.F16:
            w.add_tensor(name, f32(rng, ne).astype(np.float16))
        elif qtype == Q.BF16:
            w.add_tensor(name, gguf.quants.quantize(f32(rng, ne), Q.BF16), raw_dtype=Q.BF16)
        elif qtype == Q.Q8_0:
            w.add_tensor(name, gguf.quants.quantize(f32(rng, ne), Q.Q8_0), raw_dtype=Q.Q8_0)
        elif qtype == Q.I32:
            w.add_tensor(name, np.arange(int(np.prod(ne)), dtype=np.int32).reshape(tuple(reversed(ne))))
        else:
            w.add_tensor(name, raw_blocks(rng, qtype, ne), raw_dtype=qtype)

    t("token_embd.weight", [n_embd, n_vocab], Q.Q8_0)
    t("output_norm.weight", [n_embd], Q.F32)
    t("output.weight", [n_embd, n_vocab], Q.F16)
    t("rope_freqs.weight", [hd // 2], Q.F32)
    for i in range(n_layer):
        p = f"blk.{i}."
        t(p + "attn_norm.weight", [n_embd], Q.F32)
        t(p + "attn_q.weight", [n_embd, n_head * hd], Q.Q4_K)
        t(p + "attn_k.weight", [n_embd, n_head_kv * hd], Q.Q4_K)
        t(p + "attn_v.weight", [n_embd, n_head_kv * hd], Q.Q6_K)
        t(p + "attn_output.weight", [n_head * hd, n_embd], Q.Q8_0)   # 64 % 256 != 0: fallback-like
        t(p + "ffn_norm.weight", [n_embd], Q.F32)
        t(p + "ffn_gate.weight", [n_embd, n_ff], Q.Q4_K)
        t(p + "ffn_up.weight", [n_embd, n_ff], Q.BF16 if i == 1 else Q.Q4_K)
        t(p + "ffn_down.weight", [n_ff, n_embd], Q.Q8_0)
    t("blk.1.extra_i32.weight", [3, 5], Q.I32)   # a non-float type; odd byte count (60 B) -> padding
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_moe(path: str) -> None:
    rng = np.random.default_rng(7)
    n_embd, n_ff_exp, n_expert, n_head, n_head_kv, hd, n_vocab = 64, 32, 4, 2, 1, 32, 8
    w = gguf.GGUFWriter(path, arch="qwen3moe")
    w.add_custom_alignment(64)
    w.add_name("tiny-moe-align64")
    w.add_block_count(1)
    w.add_context_length(64)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(4 * n_embd)
    w.add_expert_feed_forward_length(n_ff_exp)
    w.add_expert_count(n_expert)
    w.add_expert_used_count(2)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(38)                 # LLAMA_FTYPE_MOSTLY_MXFP4_MOE
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(n_vocab)])
    # one key of each value type, and arrays of several element types
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 0.5)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo wörld")          # non-ASCII: length is in bytes
    w.add_uint64("test.u64", 2**63 + 5)
    w.add_int64("test.i64", -(2**62))
    w.add_float64("test.f64", 3.141592653589793)
    w.add_key_value("test.arr_u8", [1, 2, 3], V.ARRAY, sub_type=V.UINT8)
    w.add_key_value("test.arr_i16", [-1, 0, 1], V.ARRAY, sub_type=V.INT16)
    w.add_key_value("test.arr_f64", [0.25, -2.0], V.ARRAY, sub_type=V.FLOAT64)
    w.add_key_value("test.arr_bool", [True, False, True], V.ARRAY, sub_type=V.BOOL)
    w.add_key_value("test.arr_str", ["a", "", "ccc"], V.ARRAY, sub_type=V.STRING)

    def add(name, arr, raw=None):
        if raw is None:
            w.add_tensor(name, arr)
        else:
            w.add_tensor(name, arr, raw_dtype=raw)

    add("token_embd.weight", gguf.quants.quantize(f32(rng, [n_embd, n_vocab]), Q.Q8_0), Q.Q8_0)
    add("output_norm.weight", f32(rng, [n_embd]))
    add("output.weight", gguf.quants.quantize(f32(rng, [n_embd, n_vocab]), Q.Q8_0), Q.Q8_0)
    p = "blk.0."
    add(p + "attn_norm.weight", f32(rng, [n_embd]))
    add(p + "attn_q.weight", gguf.quants.quantize(f32(rng, [n_embd, n_head * hd]), Q.Q8_0), Q.Q8_0)
    add(p + "attn_q_norm.weight", f32(rng, [hd]))
    add(p + "attn_k.weight", gguf.quants.quantize(f32(rng, [n_embd, n_head_kv * hd]), Q.Q8_0), Q.Q8_0)
    add(p + "attn_k_norm.weight", f32(rng, [hd]))
    add(p + "attn_v.weight", gguf.quants.quantize(f32(rng, [n_embd, n_head_kv * hd]), Q.Q8_0), Q.Q8_0)
    add(p + "attn_output.weight", gguf.quants.quantize(f32(rng, [n_head * hd, n_embd]), Q.Q8_0), Q.Q8_0)
    add(p + "ffn_norm.weight", f32(rng, [n_embd]))
    add(p + "ffn_gate_inp.weight", f32(rng, [n_embd, n_expert]))              # router stays f32
    add(p + "ffn_gate_exps.weight", raw_blocks(rng, Q.MXFP4, [n_embd, n_ff_exp, n_expert]), Q.MXFP4)
    add(p + "ffn_up_exps.weight", raw_blocks(rng, Q.MXFP4, [n_embd, n_ff_exp, n_expert]), Q.MXFP4)
    add(p + "ffn_down_exps.weight",
        gguf.quants.quantize(f32(rng, [n_ff_exp, n_embd, n_expert]), Q.Q4_0), Q.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def field_value(f):
    """A metadata field's value as gguf.GGUFReader decodes it (ReaderField.contents); an f32 is
    written as the exact decimal of the float32 (1e-5 stored is 9.999999747378752e-06)."""
    return _plain(f.contents())


def expected_gguf(path: str) -> dict:
    r = gguf.GGUFReader(path)
    size = os.path.getsize(path)
    kvs = []
    for f in r.fields.values():
        if f.name.startswith("GGUF."):
            continue   # the reader's own pseudo-fields (magic, version, counts)
        t = f.types
        kv = {"key": f.name, "type": t[0].name}
        if t[0] == V.ARRAY:
            kv["array_type"] = t[1].name
            kv["array_len"] = len(f.data)
        kv["value"] = field_value(f)
        kvs.append(kv)
    tensors = []
    data_start = min(t.data_offset for t in r.tensors) if r.tensors else size
    for t in r.tensors:
        rel = int(t.field.parts[-1][0])      # the offset as stored in the tensor info record
        tensors.append({
            "name": t.name,
            "ne": [int(x) for x in t.shape],
            "type": t.tensor_type.name, "type_id": int(t.tensor_type),
            "offset": rel, "file_offset": int(t.data_offset), "n_bytes": int(t.n_bytes),
            "n_elements": int(t.n_elements),
        })
    # the data section begins at the first tensor's absolute offset minus its stored offset
    data_offset = tensors[0]["file_offset"] - tensors[0]["offset"] if tensors else size
    align = int(r.alignment)
    pad = lambda n: (n + align - 1) // align * align  # noqa: E731
    return {
        "file": os.path.basename(path), "file_size": size,
        "version": int(r.fields["GGUF.version"].parts[-1][0]),
        "tensor_count": len(r.tensors), "kv_count": len(kvs),
        "alignment": int(align), "data_offset": int(data_offset),
        "tensor_bytes": sum(t["n_bytes"] for t in tensors),
        "tensor_data_bytes": sum(pad(t["n_bytes"]) for t in tensors),
        "metadata": kvs, "tensors": tensors,
        "reader": f"gguf {gguf.__version__ if hasattr(gguf, '__version__') else '0.19.0'} GGUFReader",
    }


# ----------------------------------------------------------------------------- safetensors
ST_DTYPES = {"F32": (np.float32, 4), "F16": (np.float16, 2), "BF16": (None, 2), "F8_E4M3": (None, 1),
             "I32": (np.int32, 4), "U8": (np.uint8, 1), "I64": (np.int64, 8)}


def tiny_safetensors(path: str) -> dict:
    """The safetensors format: u64 little-endian header length N, N bytes of JSON
    {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}} (offsets
    relative to the byte after the header), then the data. The header is padded with spaces to a
    multiple of 8 here, as the `safetensors` library writes it."""
    rng = np.random.default_rng(3)
    specs = [
        ("model.embed_tokens.weight", "BF16", [8, 4]),
        ("model.layers.0.self_attn.q_proj.weight", "F8_E4M3", [4, 4]),
        ("model.layers.0.self_attn.q_proj.weight_scale_inv", "F32", [1, 1]),
        ("model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", [2, 4, 1, 16]),
        ("model.layers.0.input_layernorm.weight", "F16", [4]),
        ("model.position_ids", "I32", [3]),
        ("model.step", "I64", []),
    ]
    header: dict = {"__metadata__": {"format": "pt", "note": "vramfit tiny fixture"}}
    blobs = []
    off = 0
    for name, dt, shape in specs:
        n = int(np.prod(shape)) if shape else 1
        nbytes = n * ST_DTYPES[dt][1]
        if dt in ("F32", "F16"):
            b = rng.standard_normal(n).astype(ST_DTYPES[dt][0]).tobytes()
        elif dt == "BF16":
            b = (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
        elif dt in ("I32", "I64"):
            b = np.arange(n, dtype=ST_DTYPES[dt][0]).tobytes()
        else:
            b = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert len(b) == nbytes
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + nbytes]}
        blobs.append(b)
        off += nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    tensors = [{"name": k, "dtype": v["dtype"], "shape": v["shape"],
                "data_offsets": v["data_offsets"], "n_bytes": v["data_offsets"][1] - v["data_offsets"][0],
                "file_offset": 8 + len(h) + v["data_offsets"][0]}
               for k, v in header.items() if k != "__metadata__"]
    return {"file": os.path.basename(path), "file_size": os.path.getsize(path),
            "header_len": len(h), "data_offset": 8 + len(h), "metadata": header["__metadata__"],
            "tensors": sorted(tensors, key=lambda t: t["data_offsets"][0]),
            "tensor_bytes": off}


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    for name, fn in (("tiny-llama-mixed.gguf", tiny_llama), ("tiny-moe-align64.gguf", tiny_moe)):
        p = os.path.join(OUT, name)
        fn(p)
        exp = expected_gguf(p)
        assert exp["data_offset"] + exp["tensor_data_bytes"] == exp["file_size"], exp["file"]
        with open(p.replace(".gguf", ".expected.json"), "w") as f:
            json.dump(exp, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {exp['file_size']} B, {exp['tensor_count']} tensors, {exp['kv_count']} keys, "
              f"data at {exp['data_offset']}, tensor data {exp['tensor_data_bytes']}")
    p = os.path.join(OUT, "tiny.safetensors")
    exp = tiny_safetensors(p)
    with open(p.replace(".safetensors", ".safetensors.expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")
    print(f"tiny.safetensors: {exp['file_size']} B, header {exp['header_len']} B")


if __name__ == "__main__":
    main()
