"""Test helper: small Hugging Face checkpoints written by `transformers` and `tokenizers` themselves.

`write_tokenizer` trains a byte-level BPE (Llama 3's split regex) on the bundled CUDA sources and
writes tokenizer.json; `write_llama_checkpoint` writes a random tiny LlamaForCausalLM with
save_pretrained plus that tokenizer and a tokenizer_config.json whose chat_template is Llama 3's,
so `leap serve --checkpoint DIR` loads it as it would a model from the Hub. Deterministic by seed.
"""
import json
import pathlib

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
# Meta-Llama-3-8B-Instruct's chat_template (tokenizer_config.json on the Hub, as published by Meta).
LLAMA3_CHAT_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")


def write_tokenizer(source_dir, out_dir, vocab_size=1024):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    texts = [p.read_text(encoding="utf-8") for p in sorted(pathlib.Path(source_dir).glob("tasks/*/reference.cu"))]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(LLAMA3_SPECIALS), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in LLAMA3_SPECIALS])
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    return tok


def write_llama_checkpoint(source_dir, out_dir, seed=3):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    out = pathlib.Path(out_dir)
    tok = write_tokenizer(source_dir, out)
    specials = {t: tok.token_to_id(t) for t in LLAMA3_SPECIALS}
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=512, rope_theta=500000.0, tie_word_embeddings=False,
                      bos_token_id=specials["<|begin_of_text|>"], eos_token_id=specials["<|end_of_text|>"])
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(str(out), safe_serialization=True)
    (out / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": specials["<|begin_of_text|>"],
         "eos_token_id": [specials["<|end_of_text|>"], specials["<|eot_id|>"]]}))
    (out / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "chat_template": LLAMA3_CHAT_TEMPLATE,
        "added_tokens_decoder": {str(i): {"content": t, "special": True} for t, i in specials.items()}}))
    return out
