"""Tokenizer conformance: leap's token ids (through `leap tokenize --tokenizer FILE --jsonl`, the
door a user has) equal those of Hugging Face's `tokenizers` (the Rust library every HF stack runs)
on the same tokenizer.json and the same corpus, with no character left out.

Tokenizers compared:
  * Llama 3 (the real vocabulary): Meta's tokenizer.model shipped in the `llama-models` package,
    turned into a tokenizer.json by transformers' TikTokenConverter (the conversion behind the
    Hub's Llama 3 files), with Llama 3's split regex, its 256 special tokens and ignore_merges
    as on the Hub. Meta's own tiktoken tokenizer is checked on the same corpus too.
  * Tokenizers built and trained here with `tokenizers` itself, one for every pre-tokenizer,
    normalizer and decoder leap supports: ByteLevel with the GPT-2 regex, ByteLevel without a
    regex, Split(Llama 3 regex) + ByteLevel (with and without ignore_merges), Split(Qwen2
    regex) + ByteLevel with the NFC normalizer (alone and in a Sequence), added tokens special and
    not. The normalizers leap does not support (NFKC, NFD, Lowercase, Strip, ...) are refused
    with a message naming them.
The corpus: every bundled CUDA source (as is and with CRLF line ends), Unicode edge cases
(including U+0085 and U+FEFF) and seeded random texts.
"""
import json
import random
import subprocess

import pytest

# Split regexes as the Hub's tokenizer.json files spell them.
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

EDGE_CASES = [
    "",
    # Decomposed text and combining marks (NFC composes them).
    "cafe\u0301", "Cafe\u0301 Ame\u0301lie na\u0308ive", "A\u030A \u212B \u2126 ohm",
    "Tie\u0302\u0301ng Vie\u0323\u0302t", "e\u0302\u0323 e\u0323\u0302", "\u1100\u1161\u11A8 \u1112\u1161\u11AB",
    "\u0301 leading mark", "1\u0301 x\u0301\u0301\u0301", "\u0958 \u0915\u093C \u0344 \uFB2A",
    "o\u0308\u0304 \u00F6\u0304 \u022B", "s\u0323\u0307 \u1E69", "Z\u0351\u0352\u0353a\u0308\u0308\u0308l\u0302go",
    # Emoji, ZWJ sequences, modifiers, flags, keycaps.
    "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family",
    "\U0001F3F3\uFE0F\u200D\U0001F308 \U0001F44D\U0001F3FD \U0001F1EB\U0001F1F7\U0001F1EF\U0001F1F5 1\uFE0F\u20E3",
    "ok\U0001F600\U0001F600\U0001F600!! \U0001F9D1\u200D\U0001F4BB wrote it",
    # CJK and other scripts.
    "你好，世界！这是一个测试。", "こんにちは、世界。カタカナとひらがな", "안녕하세요 세계",
    "CUDA内核优化123个线程块", "Ελληνικά Русский العربية עברית हिन्दी ภาษาไทย",
    "𝐀𝐁𝐂 𝟘𝟙𝟚 ℕ ℝ → ≤ ≥ ∑ ∫ √ ∞ ™ © ®",
    # CRLF and other white space, U+0085 (NEL, White_Space) and U+FEFF (BOM, not White_Space).
    "line1\r\nline2\r\n\r\n  indented\r\n", "a\r\rb\n\r", "\r\n", "x   \r\n   y\t\t\n\n\nz   ",
    "tab\there\u00A0nbsp\u3000ideographic\u2003em\u2028ls", "    \n    ", "trailing spaces   ",
    "a\u0085b \u0085 \u0085\u0085x", "\uFEFFint main() {}", "x \uFEFF y\uFEFF\uFEFF", "\u0085\n\u0085 \uFEFF\n",
    "\u000b\u000c\u001c\u001d\u001e\u001f \u180e \u200b \u2060",
    # Long digit runs and numbers.
    "1234567890123456789012345678901234567890", "3.14159265358979323846", "0x7fffffff 1e-10 1,000,000",
    "٣٤٥١٢ ²³¹ ½ ⅓ ①②", "v1.2.3-rc4 2024-01-01T12:34:56Z",
    # Contractions, in capitals and mixed case.
    "DON'T I'LL WE'RE THEY'VE I'M HE'D IT'S", "Don'T i'Ll We'Re", "don't i'll we're they've",
    "rock'n'roll ''s 'll've 'S'", "O'NEIL'S DOG'S", "'s's's", "L'ÉTÉ D'ÉTÉ",
    # Special tokens in the text (matched where the tokenizer has them, plain text elsewhere).
    "<|begin_of_text|>hi<|eot_id|>", "<|im_start|>user\n<think>x</think><|im_end|>\n",
    "<|im_start<|im_start|><|im_start|>|>", "<|endoftext|><|end_of_text|>",
    "<|start_header_id|>system<|end_header_id|>\n\nYou write CUDA.<|eot_id|>",
    # Code.
    "__global__ void k(float* __restrict__ a){a[threadIdx.x]+=1.0f;}",
    "for (int i = 0; i < n; ++i) {\n\tsum += x[i] * y[i];   // dot\n}\n",
    "a" * 300, "=" * 200, " " * 100 + "x",
]

PIECES = [
    " ", "  ", "\n", "\r\n", "\r", "\t", "'s", "'LL", "'", "x", "Hello", "123456", "7",
    "__global__", "<|im_start|>", "<|eot_id|>", "<|", "|>", "é", "e\u0301", "\u0301", "\u0308",
    "日本", "\U0001F600", "\u200D", "\uFE0F", "\u00A0", "\u3000", "\u017F", "Ω", "ß", "İ", "ﬁ",
    "①", "½", "٣", "𝟘", "Ⅻ", ".", ",", "(", ")", "{", "}", ";", "+=", "->", "//", "/*", "#", '"',
    "\\", "—", "…", "\u0915\u093C", "\u1100\u1161", "\u11A8", "A\u030A", "ا", "ה", "\u0E01\u0E34",
    "\u0085", "\uFEFF", "\u2028", "\u000b",
]


def random_texts(count=2000, seed=7):
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(count)]


def bundled_sources(source_dir):
    paths = sorted((source_dir / "tasks").glob("*/reference.cu"))
    paths += sorted((source_dir / "tests/env/candidates").rglob("*.cu"))
    assert len(paths) > 60, f"expected the bundled sources under {source_dir}"
    return [p.read_text(encoding="utf-8") for p in paths]


@pytest.fixture(scope="module")
def corpus(source_dir):
    lines = []
    for text in bundled_sources(source_dir):
        lines += [text, text.replace("\n", "\r\n")]
    return lines + EDGE_CASES + random_texts()


def leap_ids(leap_binary, tokenizer_json, texts):
    """Token ids of each text by `leap tokenize` (special tokens matched, nothing added)."""
    stdin = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in texts)
    run = subprocess.run([str(leap_binary), "tokenize", "--tokenizer", str(tokenizer_json), "--jsonl"],
                         input=stdin.encode("utf-8"), capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    out = run.stdout.decode("utf-8").splitlines()
    assert len(out) == len(texts), "leap tokenize printed fewer lines than the corpus has"
    return [json.loads(line) for line in out]


def compare(name, texts, got, want, decode):
    """Fails with the first few differing texts, their first differing token, and a count."""
    bad = [i for i in range(len(texts)) if got[i] != want[i]]
    report = []
    for i in bad[:5]:
        a, b = got[i], want[i]
        k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
        show = lambda ids: ", ".join(f"{t} {decode([t])!r}" for t in ids[k:k + 6])
        report.append(f"line {i + 1} {texts[i][:80]!r}: first difference at token {k}\n"
                      f"  leap:      {show(a)}\n  reference: {show(b)}")
    tokens = sum(len(w) for w in want)
    print(f"{name}: {len(texts)} corpus lines, {tokens} reference tokens, {len(bad)} lines differ")
    assert not bad, f"{name}: {len(bad)} of {len(texts)} lines differ\n" + "\n".join(report)


# ---------------------------------------------------------------------------------------------
# Llama 3's real vocabulary.

@pytest.fixture(scope="module")
def llama3_files(tmp_path_factory):
    from llama_models.llama3.tokenizer import Tokenizer as MetaTokenizer
    from tokenizers import AddedToken
    from transformers.convert_slow_tokenizer import TikTokenConverter

    meta = MetaTokenizer.get_instance()
    specials = sorted(meta.special_tokens.items(), key=lambda kv: kv[1])
    model_file = meta.model.name  # the file name; the path is beside the module
    import llama_models.llama3.tokenizer as module
    import pathlib
    path = pathlib.Path(module.__file__).parent / model_file
    # The converter reads the ranks with tiktoken's loader, which wants blobfile for local paths;
    # hand it the ranks Meta's own loader read from the same file instead.
    import tiktoken.load
    from llama_models.tokenizer_utils import load_bpe_file
    ranks = load_bpe_file(path)
    saved = tiktoken.load.load_tiktoken_bpe
    tiktoken.load.load_tiktoken_bpe = lambda *_args, **_kw: ranks
    try:
        tok = TikTokenConverter(vocab_file=str(path), pattern=meta.pat_str,
                                additional_special_tokens=[t for t, _ in specials]).converted()
    finally:
        tiktoken.load.load_tiktoken_bpe = saved
    # As on the Hub: every special token added with its id, merges ignored for whole-vocab words.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, _ in specials])
    for t, i in specials:
        assert tok.token_to_id(t) == i, f"{t} got id {tok.token_to_id(t)}, Meta's is {i}"
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = True
    out = tmp_path_factory.mktemp("llama3") / "tokenizer.json"
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return meta, out


def test_llama3_real_vocabulary_matches_hf_tokenizers(leap_binary, corpus, llama3_files):
    from tokenizers import Tokenizer
    _, path = llama3_files
    ref = Tokenizer.from_file(str(path))
    assert ref.get_vocab_size() == 128256
    want = [e.ids for e in ref.encode_batch(corpus, add_special_tokens=False)]
    got = leap_ids(leap_binary, path, corpus)
    compare("llama3 vs tokenizers", corpus, got, want, ref.decode)


def test_llama3_real_vocabulary_matches_metas_tiktoken_tokenizer(leap_binary, corpus, llama3_files):
    meta, path = llama3_files
    want = [meta.model.encode(t, allowed_special="all", disallowed_special=()) for t in corpus]
    got = leap_ids(leap_binary, path, corpus)
    compare("llama3 vs Meta's tiktoken", corpus, got, want, lambda ids: meta.model.decode(ids))


# ---------------------------------------------------------------------------------------------
# Tokenizers built with `tokenizers`, one per supported pre-tokenizer / normalizer / decoder.

def build_tokenizer(kind, training_texts, vocab_size=3000):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    ignore_merges = kind.endswith("_ignore_merges")
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges) if ignore_merges else models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if kind == "bytelevel_gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    elif kind == "bytelevel_no_regex":
        tok.pre_tokenizer = byte_level
    elif kind.startswith("llama3_split"):
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False), byte_level])
    elif kind.startswith("qwen2_split"):
        tok.normalizer = normalizers.NFC() if kind == "qwen2_split_nfc" else normalizers.Sequence([normalizers.NFC()])
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False), byte_level])
    else:
        raise ValueError(kind)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.train_from_iterator(training_texts, trainer=trainer)
    # An added token that is not special (matched in text like the special ones).
    tok.add_tokens([AddedToken("<think>", special=False, normalized=False)])
    tok.add_special_tokens([AddedToken("<|eot_id|>", special=True, normalized=False)])
    return tok


KINDS = ["bytelevel_gpt2", "bytelevel_no_regex", "llama3_split", "llama3_split_ignore_merges",
         "qwen2_split_nfc", "qwen2_split_nfc_sequence"]


@pytest.mark.parametrize("kind", KINDS)
def test_tokenizer_built_with_hf_tokenizers_matches(kind, leap_binary, corpus, source_dir, tmp_path):
    # Trained on the bundled sources and a different seed's random text than the corpus uses.
    training = bundled_sources(source_dir) + EDGE_CASES + random_texts(500, seed=11)
    tok = build_tokenizer(kind, training)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    want = [e.ids for e in tok.encode_batch(corpus, add_special_tokens=False)]
    got = leap_ids(leap_binary, path, corpus)
    compare(kind, corpus, got, want, tok.decode)


@pytest.mark.parametrize("normalizer", ["NFKC", "NFD", "NFKD", "Lowercase", "Strip"])
def test_unsupported_normalizer_is_refused_naming_it(normalizer, leap_binary, source_dir, tmp_path):
    from tokenizers import normalizers
    tok = build_tokenizer("llama3_split", bundled_sources(source_dir)[:20], vocab_size=400)
    tok.normalizer = getattr(normalizers, normalizer)()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    run = subprocess.run([str(leap_binary), "tokenize", "--tokenizer", str(path), "--jsonl"],
                         input=b'"x"\n', capture_output=True, timeout=60)
    assert run.returncode == 2, run
    assert normalizer in run.stderr.decode(), run.stderr.decode()
