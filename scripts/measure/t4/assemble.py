#!/usr/bin/env python3
"""Turn the raw rows of measure48.py / fsdp48.py / qlora48.py into the fixture files.

usage: assemble.py OUT_ONE_GPU.jsonl OUT_FSDP1.jsonl RAW.jsonl [RAW.jsonl ...]
  Latest row per (tag, transformers version) wins; rows of measure48.py that ran GPTBigCode in bf16 with
  autocast before the CUDA layer_norm emulation existed (no "cuda_autocast_ln") are dropped (re-measured).
  Output schema: the harness's (lora_rows.jsonl) plus the stack fields: transformers, torch, peft, trl,
  accelerate, bitsandbytes, trainer, attn_impl, attn_emulated, shard, gpus, mixed_precision, autocast, loss.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
HF = os.path.join(HERE, "..", "..", "..", "crates", "core", "tests", "fixtures", "hf_configs")
PRESET_FILES = {"mistral-7b", "llama3.1-8b", "starcoderbase-1b", "santacoder"}


def base(r):
    return r.get("transformers") or r["versions"]["transformers"]


def cfg_of(r):
    p = r.get("config")
    if isinstance(p, dict):
        return p
    with open(p) as f:
        return json.load(f)


def common(r, cfg, name):
    v = r.get("versions", {})
    m = r["measured"]
    for it in ("iter1", "iter2"):
        d = m[it]
        d.pop("groups_at_peak", None)
        if "peak_zero_grad" not in d:
            # zero_grad(set_to_none=True) allocates nothing: its phase peak is where it starts
            d["peak_zero_grad"] = d["end_step"]
            d["peak_zero_grad_derived"] = True
    out = dict(model=name, family=cfg["model_type"], mode=r.get("mode", "fake"), device="cpu")
    if name not in PRESET_FILES:
        out["config"] = cfg
    return out, m


def one_gpu(r):
    cfg = cfg_of(r)
    name = r["model"] if r["model"] in PRESET_FILES else r["model"]
    out, m = common(r, cfg, name)
    v = r.get("versions", {})
    fa = r["attn"] == "fa2emu"
    out.update(
        dtype=r["dtype"], optim="adamw", batch=r["batch"], seq=r["seq"], grad_ckpt=r["gc"] != "off",
        gc_reentrant=r["gc"] == "reentrant" if r["gc"] != "off" else None,
        attn="flash_attention_2" if fa else r["attn"], lora=bool(r["lora"]),
        lora_r=r["lora_r"] if r["lora"] else None, lora_alpha=r["lora_alpha"] if r["lora"] else None,
        lora_targets=r["lora_targets"] if r["lora"] else None,
        lora_dropout=r["lora_dropout"] if r["lora"] else None,
        keep_outputs=bool(r["keep_outputs"]), dropout0=False, cuda_like=True, iters=2, fwd_only=False,
        use_cache=bool(r["use_cache"]), n_params=r["n_params"], n_trainable=r["n_trainable"],
        published_params=None, arch=r.get("arch"), measured=m,
        transformers=base(r), torch=r.get("torch", v.get("torch", "").split("+")[0]), peft=r.get("peft"),
        trl=r.get("trl"), accelerate=r.get("accelerate"), bitsandbytes=None, trainer=r.get("trainer"),
        attn_impl="flash_attention_2" if fa else r["attn"],
        attn_emulated="flash-attn 2.7.3 (csrc/flash_attn/flash_api.cpp) allocations" if fa else None,
        shard="none", gpus=1, mixed_precision=r.get("mixed_precision"), autocast=r.get("autocast"),
        cuda_autocast_ln=r.get("cuda_autocast_ln", False), loss=r.get("loss", "native"),
        n_ops=r.get("n_ops"), wall_s=r.get("wall_s"), status="ok", tag=r["tag"],
        tracker="dispatch(storage weakref)" + ("+FakeTensorMode" if r.get("mode", "fake") == "fake" else ""),
    )
    return out


def qlora(r):
    cfg = r["config"]
    out, m = common(r, cfg, r["model"])
    v = r["versions"]
    keep = {k: r[k] for k in ("dtype", "optim", "batch", "seq", "grad_ckpt", "gc_reentrant", "attn", "lora", "lora_r",
                              "lora_alpha", "lora_targets", "lora_dropout", "keep_outputs", "dropout0", "cuda_like",
                              "iters", "fwd_only", "quant", "double_quant", "kbit_prep", "dora", "compute_dtype",
                              "load_dtype", "blocksize", "n_params", "n_trainable", "n_quantized", "n_quant_layers",
                              "published_params", "arch", "static_bytes", "trl_cast")}
    out.update(keep)
    if v["bitsandbytes"].startswith("0.47"):
        # bitsandbytes 0.47.0's CPU dequantize_4bit holds an int32 index tensor (4 B/weight) and one bf16
        # intermediate (2 B/weight) besides its 2 B/weight output; CUDA's kernel writes only the output.
        # Bytes of that excess alive at each phase peak (subtract for a CUDA-equivalent figure).
        ex = {}
        for it in ("iter1", "iter2"):
            for ph, bd in m[it]["breakdown_at_peak"].items():
                inner = sum(val for k, val in bd.items() if k.startswith("bnb_inner"))
                ex.setdefault(it, {})[ph] = inner - (inner - 32) // 4 if inner > 2 ** 20 else 0
        out["bnb_cpu_dequant_excess"] = ex
    out.update(measured=m, transformers=v["transformers"], torch=v["torch"].split("+")[0], peft=v["peft"],
               trl="0.13.0" if r.get("trl_cast") else None, accelerate=v["accelerate"], bitsandbytes=v["bitsandbytes"],
               bnb_version=v["bitsandbytes"], trainer="trl" if r.get("trl_cast") else "hf", attn_impl=r["attn"],
               attn_emulated=None, shard="none", gpus=1, mixed_precision="bf16" if r["dtype"] == "amp_bf16" else "no",
               autocast=r["dtype"] == "amp_bf16", cuda_autocast_ln=False, loss="native", status="ok", tag=r["tag"],
               tracker=r.get("tracker"), wall_s=r.get("wall_s"))
    return out


def wrap_policy(r):
    return ("peft.utils.other.fsdp_auto_wrap_policy" if r["wrap"] == "peft" else
            "transformer_auto_wrap_policy(_no_split_modules)")


def fsdp2_setup(r):
    """What fsdp2.py sets up: accelerate's fsdp2_prepare_model (fully_shard per policy unit, then the root)."""
    return dict(version=2, api="fully_shard", reshard_after_forward=True, mixed_precision=None, offload=None,
                auto_wrap_policy=wrap_policy(r), n_units=r["n_fsdp_units"])


def fsdp(r):
    cfg = cfg_of(r)
    out, m = common(r, cfg, r["model"])
    v2 = r.get("shard", "").startswith("fsdp2")
    fa = r.get("attn", "fa2emu") == "fa2emu"  # rows before fsdp48.py's --attn are all fa2emu
    out.update(
        dtype="bf16", optim="adamw", batch=r["batch"], seq=r["seq"], grad_ckpt=True, gc_reentrant=r["gc"] == "reentrant",
        attn="flash_attention_2" if fa else r["attn"], lora=bool(r["lora"]), lora_r=r.get("lora_r"),
        lora_alpha=r.get("lora_alpha"), lora_targets=r.get("lora_targets"), lora_dropout=r.get("lora_dropout"),
        keep_outputs=False, dropout0=False,
        cuda_like=True, iters=2, fwd_only=False, use_cache=bool(r["use_cache"]), published_params=None,
        arch=r.get("arch"), measured=m, transformers=r["transformers"], torch=r["torch"], peft=r.get("peft"),
        trl=r.get("trl"), accelerate=r.get("accelerate"), bitsandbytes=None, trainer=r.get("trainer"),
        attn_impl="flash_attention_2" if fa else r["attn"],
        attn_emulated="flash-attn 2.7.3 (csrc/flash_attn/flash_api.cpp) allocations" if fa else None,
        shard="fsdp2" if v2 else "fsdp1", gpus=2, rank=0, fsdp=fsdp2_setup(r) if v2 else dict(
            version=1, sharding_strategy="FULL_SHARD", backward_prefetch=r["prefetch"],
            forward_prefetch=False, limit_all_gathers=True, use_orig_params=r["use_orig_params"], mixed_precision=None,
            auto_wrap_policy=wrap_policy(r), n_units=r["n_fsdp_units"]),
        mixed_precision="no", autocast=False, loss="native", n_params_local=r.get("n_params_local"),
        status="ok", tag=r["tag"], wall_s=r.get("wall_s"),
        tracker="dispatch(storage weakref)+FakeTensorMode+FSDP storage resize hooks, fake process group (world 2)"
        + (", DTensor outputs counted by their local shard" if v2 else ""))
    return out


def main():
    # --fsdp2 FILE: FSDP2 rows (tags "fsdp2:...") go there instead of the FSDP1 file.
    out2 = None
    if "--fsdp2" in sys.argv:
        i = sys.argv.index("--fsdp2")
        out2 = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    out1, outf, raws = sys.argv[1], sys.argv[2], sys.argv[3:]
    latest = {}
    order = []
    for p in raws:
        for line in open(p):
            r = json.loads(line)
            if r.get("status") != "ok":
                continue
            tag = r.get("tag", "")
            if not tag or tag.startswith(("dbg", "smoke", "t457test", "qtest", "tinymix", "fsdptiny")):
                continue
            if tag.startswith("bigcode") and "bf16+amp" in tag and not r.get("cuda_autocast_ln"):
                continue
            v = r.get("transformers") or r.get("versions", {}).get("transformers")
            key = (tag, v)
            if key not in latest:
                order.append(key)
            latest[key] = r
    n1 = nf = n2 = 0
    f2 = open(out2, "w") if out2 else None
    with open(out1, "w") as f1, open(outf, "w") as ff:
        for key in order:
            r = latest[key]
            if key[0].startswith("fsdp2:"):
                if f2 is None:
                    continue
                f2.write(json.dumps(fsdp(r)) + "\n"); n2 += 1
            elif key[0].startswith("fsdp"):
                ff.write(json.dumps(fsdp(r)) + "\n"); nf += 1
            elif key[0].startswith("qlora"):
                f1.write(json.dumps(qlora(r)) + "\n"); n1 += 1
            else:
                f1.write(json.dumps(one_gpu(r)) + "\n"); n1 += 1
    if f2 is not None:
        f2.close()
    print(f"{out1}: {n1} rows, {outf}: {nf} rows" + (f", {out2}: {n2} rows" if f2 else ""))


if __name__ == "__main__":
    main()
