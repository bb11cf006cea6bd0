"""The official `openai` Python library against `leap serve --checkpoint`'s OpenAI-compatible
endpoints: models, chat and completions with n > 1, seeds, log-probs and top log-probs, streaming
with usage (the deltas add up to the plain answer), the asyncio client with many requests in
flight, and errors that name the field (`param`). The served model is a tiny random Llama written
by transformers' save_pretrained with a tokenizer trained by `tokenizers` (hf_fixtures.py).
"""
import asyncio

import pytest

from hf_fixtures import write_llama_checkpoint
from leap_server import LeapServer


@pytest.fixture(scope="module")
def server(leap_binary, source_dir, tmp_path_factory):
    ckpt = write_llama_checkpoint(source_dir, tmp_path_factory.mktemp("hf") / "tiny-llama")
    srv = LeapServer(leap_binary, checkpoint=ckpt)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def client(server):
    import openai
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="unused", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def model(client):
    models = client.models.list().data
    assert len(models) == 1, models
    return models[0].id


def check_usage(u):
    assert u.prompt_tokens > 0 and u.completion_tokens > 0
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens


MESSAGES = [{"role": "system", "content": "You write CUDA."}, {"role": "user", "content": "Add two vectors."}]


def test_chat_n_seed_logprobs_and_top_logprobs(client, model):
    kw = dict(model=model, messages=MESSAGES, max_tokens=12, n=3, seed=7, logprobs=True, top_logprobs=3,
              temperature=1.0)
    chat = client.chat.completions.create(**kw)
    assert chat.object == "chat.completion" and chat.model == model
    assert [c.index for c in chat.choices] == [0, 1, 2]
    for c in chat.choices:
        assert c.message.role == "assistant" and isinstance(c.message.content, str)
        assert c.finish_reason in ("stop", "length")
        assert len(c.logprobs.content) >= 1
        for t in c.logprobs.content:
            assert t.logprob <= 0 and isinstance(t.bytes, list)
            tops = [x.logprob for x in t.top_logprobs]
            assert len(tops) == 3 and tops == sorted(tops, reverse=True)
            # The most likely token is at least as likely as the sampled one.
            assert tops[0] >= t.logprob - 1e-5
    check_usage(chat.usage)
    assert chat.usage.completion_tokens <= 36
    again = client.chat.completions.create(**kw)
    assert [c.message.content for c in again.choices] == [c.message.content for c in chat.choices]
    other = client.chat.completions.create(**{**kw, "seed": 8})
    assert [c.message.content for c in other.choices] != [c.message.content for c in chat.choices]


def test_completions_n_and_logprobs(client, model):
    comp = client.completions.create(model=model, prompt="__global__ void add(", max_tokens=10, logprobs=2,
                                     seed=3, n=2)
    assert comp.object == "text_completion" and len(comp.choices) == 2
    for c in comp.choices:
        assert isinstance(c.text, str)
        lp = c.logprobs
        assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) >= 1
        assert all(x <= 0 for x in lp.token_logprobs)
        assert all(len(top) >= 1 for top in lp.top_logprobs)
        assert "".join(lp.tokens) == c.text
    check_usage(comp.usage)


def test_streamed_chat_adds_up_to_the_plain_answer_with_usage(client, model):
    kw = dict(model=model, messages=[{"role": "user", "content": "Write a kernel."}], max_tokens=15, seed=11)
    plain = client.chat.completions.create(**kw)
    text, chunks, finish, usage = "", 0, None, None
    for chunk in client.chat.completions.create(**kw, stream=True, stream_options={"include_usage": True}):
        chunks += 1
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            text += c.delta.content or ""
            finish = c.finish_reason or finish
    assert chunks >= 3
    assert text == plain.choices[0].message.content
    assert finish == plain.choices[0].finish_reason
    check_usage(usage)
    assert usage.completion_tokens == plain.usage.completion_tokens


def test_streamed_completion_adds_up_to_the_plain_answer(client, model):
    kw = dict(model=model, prompt="int main() {", max_tokens=8, seed=5)
    text, usage = "", None
    for chunk in client.completions.create(**kw, stream=True, stream_options={"include_usage": True}):
        usage = chunk.usage or usage
        text += "".join(c.text or "" for c in chunk.choices)
    assert text == client.completions.create(**kw).choices[0].text
    check_usage(usage)


@pytest.mark.parametrize("field,value", [("temperature", 9), ("top_p", 1.5), ("n", 0), ("max_tokens", -1)])
def test_a_bad_field_is_a_400_naming_it(client, model, field, value):
    import openai
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "x"}], **{field: value})
    assert err.value.status_code == 400
    assert err.value.param == field, err.value.body


def test_asyncio_client_keeps_many_requests_in_flight(server, client, model):
    import openai

    async def run():
        aclient = openai.AsyncOpenAI(base_url=server.base_url + "/v1", api_key="unused", max_retries=0, timeout=120)
        try:
            calls = [aclient.chat.completions.create(model=model, messages=[{"role": "user", "content": f"kernel {i}"}],
                                                      max_tokens=8, seed=i) for i in range(16)]
            return await asyncio.gather(*calls)
        finally:
            await aclient.close()

    answers = asyncio.run(run())
    # Each concurrent answer is the one the same seeded request gets alone.
    for i in (0, 7, 15):
        alone = client.chat.completions.create(model=model, messages=[{"role": "user", "content": f"kernel {i}"}],
                                               max_tokens=8, seed=i)
        assert answers[i].choices[0].message.content == alone.choices[0].message.content
