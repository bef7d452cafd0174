#!/usr/bin/env python3
"""Read a GGUF or safetensors header from the start of a file, without the gguf package, reading
only the bytes the header needs (what a range request against the Hub would fetch). A reference
for the Rust parser and an independent check of the fixtures' *.expected.json.

    python3 read_header.py FILE.gguf            # JSON: metadata, tensors, offsets, sizes
    python3 read_header.py FILE.safetensors
    python3 read_header.py --check DIR          # compare with DIR/*.expected.json

GGUF layout (ggml/include/gguf.h, ggml/src/gguf.cpp gguf_init_from_file_impl at llama.cpp
3142f1db): magic "GGUF", u32 version (3), i64 n_tensors, i64 n_kv; n_kv records of
(string key, i32 value type, value); n_tensors records of (string name, u32 n_dims, i64 ne[n_dims],
i32 ggml type, u64 offset); zero padding to `general.alignment` (u32, default 32); the data
section, where each tensor starts at its offset and is padded to the alignment. A string is a u64
byte length and the bytes (no terminator); a bool is one byte; an array is i32 element type,
u64 count, elements. Little-endian.
"""
from __future__ import annotations

import json
import os
import struct
import sys

GGUF_VALUE_TYPES = ["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL",
                    "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"]
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
          11: "<q", 12: "<d"}
# ggml type id: (name, block elements, block bytes) -- ggml/src/ggml.c type_traits
GGML = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
        6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
        10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
        13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
        16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
        19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
        22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
        26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
        30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
        40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18)}


class Prefix:
    """Reads a file front to back in growing chunks: only the header's bytes are ever read."""

    def __init__(self, f, chunk=1 << 16):
        self.f, self.buf, self.pos, self.chunk = f, b"", 0, chunk

    def take(self, n: int) -> bytes:
        while len(self.buf) < self.pos + n:
            more = self.f.read(max(self.chunk, self.pos + n - len(self.buf)))
            if not more:
                raise EOFError(f"file ends at {len(self.buf)} B inside the header")
            self.buf += more
            self.chunk *= 2
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def u(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.u("<Q")).decode("utf-8")


def read_value(r: Prefix, t: int):
    if t in SCALAR:
        return r.u(SCALAR[t])
    if t == 8:
        return r.string()
    if t == 9:
        et, n = r.u("<i"), r.u("<Q")
        return et, [read_value(r, et) for _ in range(n)]
    raise ValueError(f"bad GGUF value type {t}")


def read_gguf(path: str) -> dict:
    with open(path, "rb") as f:
        r = Prefix(f)
        if r.take(4) != b"GGUF":
            raise ValueError("not a GGUF file")
        version, n_tensors, n_kv = r.u("<I"), r.u("<q"), r.u("<q")
        kvs, align = [], 32
        for _ in range(n_kv):
            key, t = r.string(), r.u("<i")
            v = read_value(r, t)
            kv = {"key": key, "type": GGUF_VALUE_TYPES[t]}
            if t == 9:
                kv["array_type"] = GGUF_VALUE_TYPES[v[0]]
                kv["array_len"] = len(v[1])
                v = v[1]
            kv["value"] = v
            if key == "general.alignment":
                align = v
            kvs.append(kv)
        tensors = []
        for _ in range(n_tensors):
            name, nd = r.string(), r.u("<I")
            ne = [r.u("<q") for _ in range(nd)]
            tid, off = r.u("<i"), r.u("<Q")
            tname, blck, tsize = GGML[tid]
            n_el = 1
            for d in ne:
                n_el *= d
            tensors.append({"name": name, "ne": ne, "type": tname, "type_id": tid, "offset": off,
                            "n_bytes": n_el // blck * tsize, "n_elements": n_el})
        header_end = r.pos
    data_offset = (header_end + align - 1) // align * align
    for t in tensors:
        t["file_offset"] = data_offset + t["offset"]
    pad = lambda n: (n + align - 1) // align * align  # noqa: E731
    return {"file": os.path.basename(path), "file_size": os.path.getsize(path), "version": version,
            "tensor_count": n_tensors, "kv_count": n_kv, "alignment": align,
            "data_offset": data_offset, "header_bytes_read": len(r.buf),
            "tensor_bytes": sum(t["n_bytes"] for t in tensors),
            "tensor_data_bytes": sum(pad(t["n_bytes"]) for t in tensors),
            "metadata": kvs, "tensors": tensors}


ST_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8,
           "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8,
           "F8_E8M0": 1, "F4": 0.5}


def read_safetensors(path: str) -> dict:
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    meta = h.pop("__metadata__", {})
    tensors = []
    for name, v in h.items():
        n_el = 1
        for d in v["shape"]:
            n_el *= d
        b, e = v["data_offsets"]
        assert e - b == int(n_el * ST_SIZE[v["dtype"]]), name
        tensors.append({"name": name, "dtype": v["dtype"], "shape": v["shape"],
                        "data_offsets": [b, e], "n_bytes": e - b, "file_offset": 8 + n + b})
    tensors.sort(key=lambda t: t["data_offsets"][0])
    return {"file": os.path.basename(path), "file_size": os.path.getsize(path), "header_len": n,
            "data_offset": 8 + n, "metadata": meta, "tensors": tensors,
            "tensor_bytes": sum(t["n_bytes"] for t in tensors)}


def read(path: str) -> dict:
    return read_safetensors(path) if path.endswith(".safetensors") else read_gguf(path)


def check(d: str) -> int:
    bad = 0
    for name in sorted(os.listdir(d)):
        if not name.endswith((".gguf", ".safetensors")):
            continue
        got = read(os.path.join(d, name))
        stem = name[:-len(".gguf")] if name.endswith(".gguf") else name
        exp_path = os.path.join(d, stem + ".expected.json")
        with open(exp_path) as f:
            exp = json.load(f)
        for k, v in exp.items():
            if k in ("reader",):
                continue
            g = got.get(k)
            if g != v:
                print(f"{name}: {k} differs:\n  got {str(g)[:300]}\n  exp {str(v)[:300]}")
                bad += 1
        print(f"{name}: {'OK' if not bad else 'MISMATCH'} ({got.get('header_bytes_read', got.get('header_len'))} header bytes read)")
    return bad


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(1 if check(sys.argv[2]) else 0)
    json.dump(read(sys.argv[1]), sys.stdout, indent=1, ensure_ascii=False)
    print()
