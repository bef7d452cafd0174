"""Parameter counts of the Gemma 3n audio encoder and the two multimodal
embedders (transformers 5.23 defaults = the published audio_config, per
configuration_gemma3n.py), on the meta device. The vision tower
(TimmWrapper, mobilenetv5_300m_enc) needs timm, not installed here.
  ~/.gt-venv/bin/python scripts/measure/families/gemma3n/params_audio.py
"""
import sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import configs
from transformers import Gemma3nAudioConfig, Gemma3nTextConfig, Gemma3nVisionConfig
from transformers.models.gemma3n.modeling_gemma3n import Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder
with torch.device("meta"):
    a = Gemma3nAudioEncoder(Gemma3nAudioConfig())
    t = Gemma3nTextConfig(**configs.E2B)
    ea = Gemma3nMultimodalEmbedder(Gemma3nAudioConfig(), t)
    ev = Gemma3nMultimodalEmbedder(Gemma3nVisionConfig(), t)
n = lambda m: sum(p.numel() for p in m.parameters())
print("audio encoder", f"{n(a):,}")
print("embed_audio", f"{n(ea):,}", "embed_vision", f"{n(ev):,}", "(text hidden 2048, same for E2B/E4B)")
