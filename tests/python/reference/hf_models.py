"""Test-only reference for tests/policy/model/hf_transformers_test.cpp: tiny random Hugging Face models
written by `transformers` itself (save_pretrained) and transformers' float32 logits of them.

usage: .venv/bin/python hf_models.py OUT_DIR

Writes, for each architecture (LlamaForCausalLM with llama3 rope_scaling, Qwen2ForCausalLM with
its q/k/v biases and tied embeddings, MistralForCausalLM with head_dim != hidden/heads) and each
variant (f32: float32, one model.safetensors; sharded: float32 in >= 2 shards with
model.safetensors.index.json; bf16 and fp16: save_pretrained of the model cast to that dtype),
OUT_DIR/<arch>-<variant>/ (the checkpoint as save_pretrained writes it) and
OUT_DIR/<arch>-<variant>.logits (little-endian float32, [batch, seq, vocab], C order): the logits
of the *saved* checkpoint reloaded with from_pretrained(torch_dtype=torch.float32), so the bf16 and
fp16 roundings are the same as on leap's side, on the fixed input ids. OUT_DIR/reference.json
lists them: {"input_ids": [[...], ...], "vocab_size": V, "cases": [{"name", "dir", "logits",
"shards"}]}. Every weight is drawn at random (also the biases and norm weights that HF initialises
to 0 and 1), large enough that the logits are O(1) and a wrong weight, bias or rotary frequency
shows. Deterministic (seeded); runs offline on the CPU.
"""
import json
import pathlib
import sys

import torch
import transformers
from transformers import (LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM)

VOCAB = 96
BATCH, SEQ = 2, 40  # positions beyond original_max_position_embeddings (16) exercise llama3 scaling
COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1, eos_token_id=2)


def architectures():
    return {
        "llama": (LlamaForCausalLM, LlamaConfig(
            **COMMON, rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
            rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 16})),
        "qwen2": (Qwen2ForCausalLM, Qwen2Config(
            **COMMON, rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, use_sliding_window=False)),
        "mistral": (MistralForCausalLM, MistralConfig(
            **COMMON, head_dim=32, rope_theta=1000000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
            sliding_window=None)),
    }


VARIANTS = {  # name: (dtype saved, max_shard_size or None)
    "f32": (torch.float32, None),
    "sharded": (torch.float32, "100KB"),
    "bf16": (torch.bfloat16, None),
    "fp16": (torch.float16, None),
}


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(torch.rand(p.shape, generator=gen) + 0.5)  # U[0.5, 1.5): a skipped norm shows
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.15)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = pathlib.Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    transformers.utils.logging.disable_progress_bar()
    gen = torch.Generator().manual_seed(20240611)
    input_ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    cases = []
    for arch, (cls, cfg) in architectures().items():
        model = cls(cfg).eval()
        randomize(model, gen)
        for variant, (dtype, shard) in VARIANTS.items():
            name = f"{arch}-{variant}"
            d = out / name
            saved = model.to(dtype)
            kwargs = {"safe_serialization": True}
            if shard:
                kwargs["max_shard_size"] = shard
            saved.save_pretrained(str(d), **kwargs)
            model = model.to(torch.float32)
            shards = sorted(p.name for p in d.glob("model*.safetensors"))
            if shard and len(shards) < 2:
                raise SystemExit(f"{name}: save_pretrained wrote {len(shards)} shard(s), want >= 2")
            ref = cls.from_pretrained(str(d), torch_dtype=torch.float32).eval()
            with torch.no_grad():
                logits = ref(input_ids=input_ids).logits
            assert logits.dtype == torch.float32 and tuple(logits.shape) == (BATCH, SEQ, VOCAB)
            logits.contiguous().numpy().astype("<f4").tofile(str(out / f"{name}.logits"))
            cases.append({"name": name, "dir": name, "logits": f"{name}.logits", "shards": len(shards)})
    (out / "reference.json").write_text(json.dumps(
        {"input_ids": input_ids.tolist(), "vocab_size": VOCAB, "cases": cases}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
