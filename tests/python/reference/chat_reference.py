"""Test-only reference for tests/policy/text/chat_template_test.cpp: conversations rendered by
Hugging Face transformers' own `apply_chat_template` with the published chat templates in
tests/python/chat_templates/ (see SOURCES.md there).

usage: .venv/bin/python chat_reference.py llama3|qwen2_5|qwen3 < conversations.jsonl > rendered.jsonl
       .venv/bin/python chat_reference.py --tokenizer-config NAME > tokenizer_config.json
       .venv/bin/python chat_reference.py --tokenizer-configs OUT_DIR NAME... (OUT_DIR/NAME.json each)

Reads one JSON array of {"role", "content"} messages per line and writes one JSON object per line,
{"renderer": ..., "text": ...}: the conversation as apply_chat_template(tokenize=False,
add_generation_prompt=True) renders it. The tokenizer is a PreTrainedTokenizerFast around a
word-level `tokenizers` model holding only the special tokens: rendering with tokenize=False uses
the template and the special-token strings (bos_token for Llama 3), never the vocabulary.
--tokenizer-config writes the model's tokenizer_config.json as transformers' save_pretrained
writes it, with the template and the real special-token ids (SOURCES.md), for the C++ test to
parse; --tokenizer-configs writes several in one run (transformers is imported once). Runs offline;
nothing is downloaded.
"""
import json
import pathlib
import sys

TEMPLATES = pathlib.Path(__file__).resolve().parents[1] / "chat_templates"

# Special tokens and their ids in the real vocabularies (SOURCES.md cites them).
SPECIALS = {
    "llama3": {"tokens": {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001,
                          "<|start_header_id|>": 128006, "<|end_header_id|>": 128007, "<|eot_id|>": 128009},
               "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "pad_token": None},
    "qwen2_5": {"tokens": {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
                "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "qwen3": {"tokens": {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
              "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
}


def make_tokenizer(name):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    spec = SPECIALS[name]
    vocab = {"[UNK]": 0}
    for t in spec["tokens"]:
        vocab[t] = len(vocab)
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    return PreTrainedTokenizerFast(
        tokenizer_object=core, chat_template=(TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"),
        bos_token=spec["bos_token"], eos_token=spec["eos_token"], pad_token=spec["pad_token"], unk_token="[UNK]",
        additional_special_tokens=list(spec["tokens"]))


def tokenizer_config(name):
    """tokenizer_config.json with the real ids: what save_pretrained writes, ids remapped."""
    import tempfile
    spec = SPECIALS[name]
    if name == "llama3":  # the ids, checked against Meta's own tokenizer (llama-models' tokenizer.model)
        from llama_models.llama3.tokenizer import Tokenizer
        meta = Tokenizer.get_instance().special_tokens
        wrong = {t: (i, meta.get(t)) for t, i in spec["tokens"].items() if meta.get(t) != i}
        if wrong:
            raise SystemExit(f"llama3 special-token ids differ from llama-models' (ours, theirs): {wrong}")
    tok = make_tokenizer(name)
    with tempfile.TemporaryDirectory() as d:
        tok.save_pretrained(d)
        cfg = json.loads((pathlib.Path(d) / "tokenizer_config.json").read_text(encoding="utf-8"))
        if "chat_template" not in cfg:  # newer transformers write chat_template.jinja instead
            cfg["chat_template"] = tok.chat_template
    cfg["added_tokens_decoder"] = {str(spec["tokens"][v["content"]]): v
                                   for v in cfg["added_tokens_decoder"].values() if v["content"] in spec["tokens"]}
    return cfg


def main(argv):
    if len(argv) == 3 and argv[1] == "--tokenizer-config" and argv[2] in SPECIALS:
        json.dump(tokenizer_config(argv[2]), sys.stdout, ensure_ascii=False, indent=2)
        return 0
    if len(argv) >= 4 and argv[1] == "--tokenizer-configs" and all(n in SPECIALS for n in argv[3:]):
        for name in argv[3:]:
            text = json.dumps(tokenizer_config(name), ensure_ascii=False, indent=2)
            (pathlib.Path(argv[2]) / f"{name}.json").write_text(text, encoding="utf-8")
        return 0
    if len(argv) != 2 or argv[1] not in SPECIALS:
        sys.stderr.write(__doc__)
        return 2
    import transformers
    tok = make_tokenizer(argv[1])
    renderer = f"transformers {transformers.__version__} apply_chat_template"
    out = sys.stdout
    for line_no, line in enumerate(sys.stdin.buffer.read().decode("utf-8").splitlines(), 1):
        try:
            messages = json.loads(line)
        except json.JSONDecodeError as e:
            sys.stderr.write(f"line {line_no}: not JSON: {e}\n")
            return 1
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        out.write(json.dumps({"renderer": renderer, "text": text}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
