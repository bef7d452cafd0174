#!/usr/bin/env python3
"""Predict the bytes of a quantized checkpoint from its base architecture and compare with the
published size.

The per-format byte rules are the ones written (with their citations) in NOTES.md beside this
file. This script applies them to every tensor the architecture stores, sums, and compares with
the number the repository publishes (`model.safetensors.index.json` `metadata.total_size` where
one was found, else the sum of the Hub file listing's rounded sizes, with its rounding error).

Usage:
    python3 scripts/measure/weights/check_sizes.py            # print the table
    python3 scripts/measure/weights/check_sizes.py --write    # also (re)write the fixture
    python3 scripts/measure/weights/check_sizes.py --memory   # also print in-memory bytes
                                                              # (transformers; vLLM on sm90 / sm80)

No third-party packages; no network. The published numbers and their sources are the
`CHECKPOINTS` list below (copied from the pages named in each `source`).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ROOT / "crates/core/tests/fixtures/hf_configs"
FIXTURE = ROOT / "crates/core/tests/fixtures/weight_formats.jsonl"

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8_e4m3fn": 1}


# --------------------------------------------------------------------------------------------
# Architecture -> the tensors a checkpoint of it stores.
# Each tensor: (name, kind, shape). kind:
#   "linear"  a Linear inside a decoder block (what every format here quantizes)
#   "router"  an MoE router Linear (kept unquantized by every format here)
#   "embed", "head", "norm", "bias", "fp32" (kept in fp32 by the checkpoint), "mtp_linear"
# A linear's shape is (out_features, in_features) as nn.Linear stores it.
# --------------------------------------------------------------------------------------------


def _llama_like(c: dict, store_tied_head: bool) -> list[tuple[str, str, tuple[int, ...]]]:
    h, i, n = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    nh = c["num_attention_heads"]
    nkv = c.get("num_key_value_heads") or nh
    hd = c.get("head_dim") or h // nh
    v = c["vocab_size"]
    mt = c["model_type"]
    qkv_bias = mt == "qwen2" or bool(c.get("attention_bias"))
    o_bias = bool(c.get("attention_bias")) and mt != "qwen2"
    t: list[tuple[str, str, tuple[int, ...]]] = [("model.embed_tokens.weight", "embed", (v, h))]
    for l in range(n):
        p = f"model.layers.{l}."
        for nm, out, inp in (("q_proj", nh * hd, h), ("k_proj", nkv * hd, h), ("v_proj", nkv * hd, h)):
            t.append((p + f"self_attn.{nm}", "linear", (out, inp)))
            if qkv_bias:
                t.append((p + f"self_attn.{nm}.bias", "bias", (out,)))
        t.append((p + "self_attn.o_proj", "linear", (h, nh * hd)))
        if o_bias:
            t.append((p + "self_attn.o_proj.bias", "bias", (h,)))
        if mt == "qwen3":
            t.append((p + "self_attn.q_norm.weight", "norm", (hd,)))
            t.append((p + "self_attn.k_norm.weight", "norm", (hd,)))
        t.append((p + "mlp.gate_proj", "linear", (i, h)))
        t.append((p + "mlp.up_proj", "linear", (i, h)))
        t.append((p + "mlp.down_proj", "linear", (h, i)))
        t.append((p + "input_layernorm.weight", "norm", (h,)))
        t.append((p + "post_attention_layernorm.weight", "norm", (h,)))
    t.append(("model.norm.weight", "norm", (h,)))
    if not c.get("tie_word_embeddings") or store_tied_head:
        t.append(("lm_head", "head", (v, h)))
    return t


def _deepseek_v3(c: dict, mtp: bool) -> list[tuple[str, str, tuple[int, ...]]]:
    h, n = c["hidden_size"], c["num_hidden_layers"]
    nh, v = c["num_attention_heads"], c["vocab_size"]
    ql, kvl = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    e, mi, ns = c["n_routed_experts"], c["moe_intermediate_size"], c["n_shared_experts"]
    dense_i, k_dense = c["intermediate_size"], c["first_k_dense_replace"]

    def layer(l: int) -> list[tuple[str, str, tuple[int, ...]]]:
        p = f"model.layers.{l}."
        t = [
            (p + "self_attn.q_a_proj", "linear", (ql, h)),
            (p + "self_attn.q_a_layernorm.weight", "norm", (ql,)),
            (p + "self_attn.q_b_proj", "linear", (nh * (nope + rope), ql)),
            (p + "self_attn.kv_a_proj_with_mqa", "linear", (kvl + rope, h)),
            (p + "self_attn.kv_a_layernorm.weight", "norm", (kvl,)),
            (p + "self_attn.kv_b_proj", "linear", (nh * (nope + vd), kvl)),
            (p + "self_attn.o_proj", "linear", (h, nh * vd)),
            (p + "input_layernorm.weight", "norm", (h,)),
            (p + "post_attention_layernorm.weight", "norm", (h,)),
        ]
        if l < k_dense:
            t += [
                (p + "mlp.gate_proj", "linear", (dense_i, h)),
                (p + "mlp.up_proj", "linear", (dense_i, h)),
                (p + "mlp.down_proj", "linear", (h, dense_i)),
            ]
        else:
            for x in range(e):
                q = p + f"mlp.experts.{x}."
                t += [
                    (q + "gate_proj", "linear", (mi, h)),
                    (q + "up_proj", "linear", (mi, h)),
                    (q + "down_proj", "linear", (h, mi)),
                ]
            t += [
                (p + "mlp.shared_experts.gate_proj", "linear", (mi * ns, h)),
                (p + "mlp.shared_experts.up_proj", "linear", (mi * ns, h)),
                (p + "mlp.shared_experts.down_proj", "linear", (h, mi * ns)),
                (p + "mlp.gate.weight", "router", (e, h)),
                (p + "mlp.gate.e_score_correction_bias", "fp32", (e,)),
            ]
        return t

    t: list[tuple[str, str, tuple[int, ...]]] = [("model.embed_tokens.weight", "embed", (v, h))]
    for l in range(n):
        t += layer(l)
    t += [("model.norm.weight", "norm", (h,)), ("lm_head", "head", (v, h))]
    if mtp:
        for k in range(c.get("num_nextn_predict_layers") or 0):
            l = n + k
            p = f"model.layers.{l}."
            t += layer(l)
            t += [
                (p + "embed_tokens.weight", "embed", (v, h)),
                (p + "enorm.weight", "norm", (h,)),
                (p + "hnorm.weight", "norm", (h,)),
                (p + "eh_proj", "mtp_linear", (h, 2 * h)),
                (p + "shared_head.norm.weight", "norm", (h,)),
                (p + "shared_head.head", "head", (v, h)),
            ]
    return t


def checkpoint_tensors(cfg: dict, *, store_tied_head: bool = False, mtp: bool = True):
    mt = cfg["model_type"]
    if mt in ("llama", "mistral", "qwen2", "qwen3"):
        return _llama_like(cfg, store_tied_head)
    if mt == "deepseek_v3":
        return _deepseek_v3(cfg, mtp)
    raise SystemExit(f"unsupported model_type {mt}")


# --------------------------------------------------------------------------------------------
# Per-format bytes of one quantized Linear (out x in), as the checkpoint stores it.
# NOTES.md has the citation of every term.
# --------------------------------------------------------------------------------------------


def _bnb4_state_json_len(out: int, inp: int, dtype: str, quant_type: str, double_quant: bool) -> int:
    """Length of the `weight.quant_state.bitsandbytes__<type>` uint8 tensor: json.dumps of the
    non-tensor QuantState fields (bitsandbytes QuantState.as_dict(packed=True)). The nested offset is
    a float whose repr length varies with the data; 0.0123456789 (12 chars) is assumed."""
    d = {"quant_type": quant_type, "blocksize": 64, "dtype": dtype, "shape": [out, inp]}
    if double_quant:
        d.update({"nested_blocksize": 256, "nested_dtype": "float32", "nested_offset": 0.0123456789})
    return len(json.dumps(d))


ST = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "I32": 4, "U8": 1, "I8": 1}
ST_OF = {"float32": "F32", "bfloat16": "BF16", "float16": "F16"}


def linear_tensors(fmt: dict, out: int, inp: int) -> list[tuple[str, str, tuple[int, ...]]]:
    """The tensors one quantized Linear (out x in) is serialized as: (suffix, safetensors dtype,
    shape). The bias, when the layer has one, is a separate unquantized tensor. NOTES.md cites
    every line."""
    k = fmt["format"]
    n = out * inp
    if k == "fp8_block":
        b0, b1 = fmt["weight_block_size"]
        sd = {4: "F32", 2: "BF16"}[fmt["scale_bytes"]]
        return [("weight", "F8_E4M3", (out, inp)),
                ("weight_scale_inv", sd, (math.ceil(out / b0), math.ceil(inp / b1)))]
    if k in ("fp8_tensor", "fp8_channel"):
        sd = {4: "F32", 2: "BF16"}[fmt["scale_bytes"]]
        t = [("weight", "F8_E4M3", (out, inp)),
             ("weight_scale", sd, (1,) if k == "fp8_tensor" else (out, 1))]
        if fmt.get("input_scale_bytes"):
            t.append(("input_scale", {4: "F32", 2: "BF16"}[fmt["input_scale_bytes"]], (1,)))
        return t
    if k == "gptq":
        bits, g = fmt["bits"], fmt["group_size"]
        g = inp if g == -1 else g
        ng = math.ceil(inp / g)
        return [("qweight", "I32", (math.ceil(inp * bits / 32), out)),
                ("qzeros", "I32", (ng, math.ceil(out * bits / 32))),
                ("scales", "F16", (ng, out)),
                ("g_idx", "I32", (inp,))]
    if k == "awq_gemm":
        bits, g = fmt["bits"], fmt["group_size"]
        ng = inp // g
        pk = math.ceil(out * bits / 32)
        return [("qweight", "I32", (inp, pk)), ("qzeros", "I32", (ng, pk)), ("scales", "F16", (ng, out))]
    if k == "bnb4":
        nb = math.ceil(n / 64)
        dq = fmt["double_quant"]
        qt = fmt["quant_type"]
        t = [("weight", "U8", (math.ceil(n / 2), 1)),
             ("weight.absmax", "U8" if dq else "F32", (nb,)),
             ("weight.quant_map", "F32", (16,))]
        if dq:
            t += [("weight.nested_absmax", "F32", (math.ceil(nb / 256),)),
                  ("weight.nested_quant_map", "F32", (256,))]
        js = _bnb4_state_json_len(out, inp, fmt.get("dtype", "bfloat16"), qt, dq)
        t.append((f"weight.quant_state.bitsandbytes__{qt}", "U8", (js,)))
        return t
    if k == "bnb8":
        t = [("weight", "I8", (out, inp)), ("SCB", "F32", (out,))]
        if fmt.get("weight_format_bytes", 1):
            t.append(("weight_format", "U8", ()))
        return t
    raise ValueError(k)


def linear_bytes(fmt: dict, out: int, inp: int, *, memory: bool = False) -> int:
    """Bytes of one quantized linear weight (bias not included): the checkpoint's tensors, or
    (memory=True) what transformers holds where that differs (bitsandbytes 4-bit: the packed
    quant_state JSON is parsed, not kept; the double-quant offset is a 0-d fp32 tensor; bnb int8:
    no weight_format)."""
    k = fmt["format"]
    if k in ("bf16", "fp16"):
        return 2 * out * inp
    if k == "fp32":
        return 4 * out * inp
    ts = linear_tensors(fmt, out, inp)
    if memory and k == "bnb4":
        ts = [t for t in ts if "quant_state" not in t[0]]
        extra = 4 if fmt["double_quant"] else 0
        return sum(ST[d] * math.prod(s) for _, d, s in ts) + extra
    if memory and k == "bnb8":
        ts = [t for t in ts if t[0] != "weight_format"]
    return sum(ST[d] * math.prod(s) for _, d, s in ts)


def _skipped(name: str, patterns: list[str]) -> bool:
    return any(re.search(rf"(^|\.){re.escape(p)}(\.|$)", name) for p in patterns)


def serialized(cfg: dict, fmt: dict) -> list[tuple[str, str, tuple[int, ...]]]:
    """Every tensor the checkpoint stores: (name, safetensors dtype, shape)."""
    ud = ST_OF[fmt.get("unquantized_dtype", "bfloat16")]
    skip = fmt.get("modules_to_not_convert") or []
    out_t = []
    for name, kind, shape in checkpoint_tensors(
        cfg, store_tied_head=fmt.get("stores_tied_head", False), mtp=fmt.get("mtp", True)
    ):
        is_lin = kind == "linear" or (kind == "mtp_linear" and fmt.get("mtp_linear_quantized"))
        if kind in ("linear", "mtp_linear", "head", "router"):
            wname = name if name.endswith(".weight") else name + ".weight"
        else:
            wname = name
        if is_lin and fmt["format"] not in ("bf16", "fp16", "fp32") and not _skipped(name, skip):
            out_t += [(f"{name}.{suf}", dt, sh) for suf, dt, sh in linear_tensors(fmt, *shape)]
        elif kind == "fp32":
            out_t.append((wname, "F32", shape))
        else:
            out_t.append((wname, ud, shape))
    return out_t


def header_bytes(tensors: list[tuple[str, str, tuple[int, ...]]], shard_bytes: int) -> int:
    """Estimated safetensors header bytes (8-byte length + JSON, padded to 8) summed over shards of
    about `shard_bytes`: each entry is `"name":{"dtype":"X","shape":[..],"data_offsets":[a,b]}`.
    Offsets are written with the digit count of a typical offset in a shard of that size."""
    digits = len(str(max(shard_bytes // 2, 1)))
    per = 0
    data = 0
    for name, dt, sh in tensors:
        per += len(json.dumps(name)) + len('{"dtype":"","shape":[],"data_offsets":[,]},') + len(dt)
        per += len(",".join(str(x) for x in sh)) + 2 * digits
        data += ST[dt] * math.prod(sh)
    shards = max(1, math.ceil(data / shard_bytes))
    meta = len('{"__metadata__":{"format":"pt"},}')
    return per + shards * (8 + meta + 4)


def predict(cfg: dict, fmt: dict, *, shard_bytes: int = 5 * 10**9) -> dict:
    """The checkpoint's tensor bytes, its estimated safetensors header bytes, and the bytes
    transformers 5.23 holds once loaded on an sm89+ GPU (`memory`: a tied lm_head counted once, no
    MTP layer, bnb 4-bit without its packed JSON but with the 0-d offset, bnb int8 without
    weight_format, compressed-tensors decompressed to the model dtype as after the first forward;
    the GPTQ/AWQ repacking of gptqmodel's kernels is in NOTES.md and not modelled)."""
    ts = serialized(cfg, fmt)
    total = sum(ST[d] * math.prod(s) for _, d, s in ts)
    n_q = sum(
        1 for n, _, _ in ts if n.endswith((".qweight", ".weight_scale_inv", ".weight_scale", ".absmax", ".SCB"))
    )
    ud = DTYPE_BYTES[fmt.get("unquantized_dtype", "bfloat16")]
    skip = fmt.get("modules_to_not_convert") or []
    mem = 0
    # transformers builds no multi-token-prediction layer (DeepSeek-V3: 61 layers), so mtp=False.
    for name, kind, shape in checkpoint_tensors(cfg, store_tied_head=False, mtp=False):
        if kind == "linear" and fmt["format"] not in ("bf16", "fp16", "fp32") and not _skipped(name, skip):
            if fmt.get("container") == "compressed-tensors":
                # default (no use_optimized_inference): decompressed to the model dtype on the first
                # forward; weight_scale / input_scale stay registered
                lt = linear_tensors(fmt, *shape)
                mem += ud * math.prod(shape) + sum(ST[d] * math.prod(sh) for sf, d, sh in lt if sf != "weight")
            else:
                mem += linear_bytes(fmt, *shape, memory=True)
        else:
            mem += (4 if kind == "fp32" else ud) * math.prod(shape)
    return {"total": total, "quantized_linears": n_q, "header_bytes": header_bytes(ts, shard_bytes), "memory": mem}


def _marlin_padded_nk(n: int, k: int, g: int) -> tuple[int, int]:
    """vllm 0.33 marlin_utils.marlin_padded_nk: the cheaper of (n%64, k%lcm(128,g)) and
    (n%128, k%lcm(64,g)) zero-padded tile families."""
    grp = g if g > 0 else 1
    ru = lambda x, m: (x + m - 1) // m * m  # noqa: E731
    c = [(ru(n, 64), ru(k, math.lcm(128, grp))), (ru(n, 128), ru(k, math.lcm(64, grp)))]
    return min(c, key=lambda nk: (nk[0] * nk[1], nk[0] + nk[1]))


def vllm_linear_bytes(fmt: dict, out: int, inp: int, sm: int, act_bytes: int = 2) -> int:
    """Bytes vLLM 0.33 keeps for one quantized Linear after process_weights_after_loading
    (bitsandbytes: vLLM at commit 0406fb9f, the format was removed later). sm = compute capability
    x10 (90 = H100/H200, 89 = L4/L40S/4090, 80 = A100). NOTES.md cites each branch; MoE and
    tensor parallelism are not modelled."""
    k = fmt["format"]
    n = out * inp
    if k in ("gptq", "awq_gemm"):
        bits, g = fmt["bits"], fmt["group_size"]
        zp = k == "awq_gemm"
        gg = inp if g == -1 else g
        machete = sm == 90 and g in (-1, 64, 128) and inp % 64 == 0 and out % 128 == 0
        if machete:
            ng = math.ceil(inp / gg)
            b = n * bits // 8 + act_bytes * ng * out  # prepacked weight (same bits, inferred) + scales
            if zp:
                b += act_bytes * ng * out  # zero points pre-multiplied by -scale, in the scale dtype
            else:
                b += 4 * ng * math.ceil(out * bits / 32)  # GPTQ qzeros stay registered, unused
            return b
        pn, pk = _marlin_padded_nk(out, inp, g)
        ng = 1 if g == -1 else pk // gg
        b = pn * pk * bits // 8 + act_bytes * ng * pn  # repacked weight + permuted scales
        if zp:
            b += 4 * ng * math.ceil(pn * bits / 32)  # marlin_zero_points, packed int32 (inferred size)
        return b  # GPTQ: qzeros replaced by an empty tensor, g_idx never registered
    if k == "fp8_block":
        b0, b1 = fmt["weight_block_size"]
        if sm >= 89:
            return n + 4 * math.ceil(out / b0) * math.ceil(inp / b1)  # scales created fp32
        pn, pk = _marlin_padded_nk(out, inp, b1)
        return pn * pk + act_bytes * (pk // b1) * pn  # Marlin W8A16: group-wise scales in orig dtype
    if k == "fp8_tensor":
        if sm >= 89:
            return n + 4 + (4 if fmt.get("input_scale_bytes") else 0)  # one requantized scale (+ input)
        pn, pk = _marlin_padded_nk(out, inp, -1)
        return pn * pk + act_bytes * pn  # per-channel scales after repeat
    if k == "fp8_channel":
        if sm >= 89:
            return n + 4 * out
        pn, pk = _marlin_padded_nk(out, inp, -1)
        return pn * pk + act_bytes * pn
    if k == "bnb4":
        return math.ceil(n / 2) + 4 * math.ceil(n / 64) + 64  # nested absmax dequantized at load
    if k == "bnb8":
        return n + 4 * out
    return linear_bytes(fmt, out, inp, memory=True)


def vllm_memory(cfg: dict, fmt: dict, sm: int) -> int:
    ud = DTYPE_BYTES[fmt.get("unquantized_dtype", "bfloat16")]
    skip = fmt.get("modules_to_not_convert") or []
    v = cfg["vocab_size"]
    vp = (v + 63) // 64 * 64  # VocabParallelEmbedding pads to 64
    m = 0
    for name, kind, shape in checkpoint_tensors(cfg, store_tied_head=False, mtp=False):
        is_lin = kind == "linear"
        if is_lin and fmt["format"] not in ("bf16", "fp16", "fp32") and not _skipped(name, skip):
            m += vllm_linear_bytes(fmt, *shape, sm, act_bytes=ud)
        elif kind in ("embed", "head"):
            m += ud * vp * shape[1]
        else:
            m += (4 if kind == "fp32" else ud) * math.prod(shape)
    return m


# --------------------------------------------------------------------------------------------
# Published checkpoints. `published` = bytes; `kind` says what the number is:
#   "total_size"  model.safetensors.index.json metadata.total_size (tensor bytes, exact)
#   "file_sum"    sum of the Hub file listing's sizes (decimal units, 3 significant digits,
#                 safetensors headers included); `tolerance` = the rounding bound in bytes
# --------------------------------------------------------------------------------------------

GB, MB = 10**9, 10**6

# Filled from the sources named in each entry (see NOTES.md, "Published checkpoints").
CHECKPOINTS: list[dict] = json.loads((Path(__file__).parent / "checkpoints.json").read_text())


def file_sum(sizes: list[str]) -> tuple[int, int]:
    """'4.41 GB' style sizes -> (sum in bytes, max rounding error in bytes)."""
    total = err = 0
    for s in sizes:
        v, unit = s.split()
        scale = {"GB": GB, "MB": MB, "kB": 10**3}[unit]
        total += round(float(v) * scale)
        # 3 significant digits: half a unit in the last shown digit ("4 GB" is 4.00 GB)
        digits = v.split(".")[1] if "." in v else ""
        intpart = v.split(".")[0]
        shown_decimals = max(len(digits), 3 - len(intpart.lstrip("0") or "0"))
        err += round(0.5 * 10 ** (-shown_decimals) * scale)
    return total, err


def rows(memory: bool = False) -> list[dict]:
    out = []
    for ck in CHECKPOINTS:
        cfg = json.loads((CONFIGS / ck["base_config"]).read_text())
        fmt = ck["format"]
        p = predict(cfg, fmt, shard_bytes=ck.get("shard_bytes", 5 * 10**9))
        if ck["published_kind"] == "file_sum":
            pub, tol = file_sum(ck["files"])
        else:
            pub, tol = ck["published"], ck.get("tolerance", 0)
        # A file listing counts the safetensors headers; total_size does not.
        pred = p["total"] + (p["header_bytes"] if ck["published_kind"] in ("file_sum", "file_bytes") else 0)
        row = {
            "repo": ck["repo"],
            "base_config": ck["base_config"],
            "format": fmt,
            "quantization_config": ck.get("quantization_config"),
            "published_kind": ck["published_kind"],
            "total_size": pub,
            "tolerance": tol,
            "source": ck["source"],
            "predicted_tensor_bytes": p["total"],
            "predicted_header_bytes": p["header_bytes"],
            "predicted": pred,
            "residual": pred - pub,
            "residual_pct": round(100 * (pred - pub) / pub, 4),
            "within_tolerance": abs(pred - pub) <= tol,
            "memory_transformers": p["memory"],
            "memory_vllm_sm90": vllm_memory(cfg, fmt, 90),
            "memory_vllm_sm80": vllm_memory(cfg, fmt, 80),
            "quantized_linears": p["quantized_linears"],
        }
        if ck.get("files"):
            row["files"] = ck["files"]
        if ck.get("note"):
            row["note"] = ck["note"]
        out.append(row)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help=f"write {FIXTURE.relative_to(ROOT)}")
    ap.add_argument("--memory", action="store_true")
    a = ap.parse_args()
    rs = rows(a.memory)
    print(f"{'repo':58} {'format':11} {'published':>15} {'predicted':>15} {'residual':>13} {'%':>8} {'tol':>11}")
    for r in rs:
        print(
            f"{r['repo']:58} {r['format']['format']:11} {r['total_size']:>15,} {r['predicted']:>15,} "
            f"{r['residual']:>13,} {r['residual_pct']:>8.4f} {r['tolerance']:>11,}"
            + ("" if r["within_tolerance"] else "  OUT")
            + (
                f"  hf={r['memory_transformers']:,} vllm90={r['memory_vllm_sm90']:,} vllm80={r['memory_vllm_sm80']:,}"
                if a.memory
                else ""
            )
        )
    if a.write:
        with FIXTURE.open("w") as f:
            for r in rs:
                f.write(json.dumps(r, sort_keys=True) + "\n")
        print(f"wrote {len(rs)} rows to {FIXTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
