"""Tensor bytes of a GGUF file (gguf-py's GGUFReader): the sum of every tensor's data size
(`n_bytes`: elements x type size / block size), and the span llama.cpp maps as its model
buffer (from the first tensor's data offset to the end of the last, GGUF's 32-byte alignment
padding between tensors included).

    ~/.gt-venv/bin/python tensor_bytes.py FILE.gguf [-v]   (-v: every tensor too)
"""
import collections
import sys

import gguf

r = gguf.GGUFReader(sys.argv[1])
ts = r.tensors
total = sum(int(t.n_bytes) for t in ts)
by_type = collections.Counter()
for t in ts:
    by_type[t.tensor_type.name] += int(t.n_bytes)
start = min(int(t.data_offset) for t in ts)
end = max(int(t.data_offset) + int(t.n_bytes) for t in ts)
print(f"tensors {len(ts)}; sum of n_bytes {total:,} = {total / 2**20:.4f} MiB; by type {dict(by_type)}")
print(f"mapped span (first data offset {start:,} to last end {end:,}) {end - start:,} = {(end - start) / 2**20:.4f} MiB")
for t in ts if "-v" in sys.argv else []:
    print(f"  {t.name:<32} {t.tensor_type.name:<4} {list(int(x) for x in t.shape)} {int(t.n_bytes):,}")
