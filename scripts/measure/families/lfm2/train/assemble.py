"""Raw harness rows (matrix.sh) -> crates/core/tests/fixtures/lfm2_train_rows.jsonl: each row
with its config inline (the model is named after its file: this folder's lfm2-*.json, or
../tiny-lfm2.json), the GT_DEBUG allocation list dropped.
    cat raw/rows.jsonl raw/moe_rows.jsonl > /tmp/all.jsonl
    python3 assemble.py /tmp/all.jsonl > ../../../../../crates/core/tests/fixtures/lfm2_train_rows.jsonl
"""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
for line in open(sys.argv[1]):
    r = json.loads(line)
    r.pop("debug_allocs", None)
    name = r["model"]
    path = os.path.join(here, name + ".json")
    if not os.path.exists(path):
        path = os.path.join(here, "..", name + ".json")
    r["config"] = json.load(open(path))
    print(json.dumps(r))
