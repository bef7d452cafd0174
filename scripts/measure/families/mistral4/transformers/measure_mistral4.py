#!/usr/bin/env python
"""Shim: run the unmodified ground-truth harness (../shared/groundtruth/harness/measure.py) on
mistral4 configs.  transformers 5.23 does not list "mistral4" in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
(models/auto/modeling_auto.py:760..), so the harness's AutoModelForCausalLM.from_config() raises
"Unrecognized configuration class ... Mistral4Config".  This registers the existing
Mistral4ForCausalLM class for Mistral4Config (the only change), then calls measure.main().
Usage: same arguments as measure.py."""
import os, sys
HARNESS = os.environ.get("GT_HARNESS", "/work/shared/groundtruth/harness")
sys.path.insert(0, HARNESS)
import transformers
from transformers import AutoModelForCausalLM, Mistral4Config, Mistral4ForCausalLM
AutoModelForCausalLM.register(Mistral4Config, Mistral4ForCausalLM, exist_ok=True)
import measure  # noqa: E402
if __name__ == "__main__":
    sys.exit(measure.main())
