"""GLM-5.2 (partial config: indexer_types / mlp_layer_types arrays omitted in the source, so
transformers derives them from index_topk_freq 4 / index_skip_topk_offset 3) on the meta device."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from params import CONFIGS, count  # noqa: E402
from transformers import AutoConfig  # noqa: E402

r = count(CONFIGS / "GLM-5.2.partial.json")
raw = json.load(open(CONFIGS / "GLM-5.2.partial.json"))
cfg = AutoConfig.for_model(**{k: v for k, v in raw.items() if k != "architectures"})
r["indexer_types_derived"] = "".join("F" if t == "full" else "S" for t in cfg.indexer_types)
print(json.dumps(r, default=sorted))
