// The official openai npm client against `leap serve --checkpoint` (run by
// tests/runtime/serve/openai_e2e_test.cpp: `node client_test.js BASE_URL MODEL`): chat,
// completions, streaming (both), n > 1, logprobs, seeds, and an error naming the field.
// Exits 0 when every check passed; otherwise prints the failed check and exits 1.
'use strict';
const OpenAI = require('openai').default;

const [base, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base, apiKey: 'unused', maxRetries: 0, timeout: 120000 });

function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
}

function checkUsage(u, what) {
  check(u && Number.isInteger(u.prompt_tokens) && u.prompt_tokens > 0, what + ': usage.prompt_tokens');
  check(Number.isInteger(u.completion_tokens) && u.completion_tokens > 0, what + ': usage.completion_tokens');
  check(u.total_tokens === u.prompt_tokens + u.completion_tokens, what + ': usage.total_tokens');
}

async function main() {
  const models = await client.models.list();
  check(models.data.length === 1 && models.data[0].id === model, 'models.list: ' + JSON.stringify(models.data));

  // Chat, n = 3, logprobs.
  const chat = await client.chat.completions.create({
    model, messages: [{ role: 'system', content: 'You write CUDA.' },
                      { role: 'user', content: 'Add two vectors.' }],
    max_tokens: 12, n: 3, seed: 7, logprobs: true, top_logprobs: 1, temperature: 1.0,
  });
  check(chat.object === 'chat.completion' && chat.model === model, 'chat: object/model');
  check(chat.choices.length === 3, 'chat: n = 3 choices');
  for (const [i, c] of chat.choices.entries()) {
    check(c.index === i && c.message.role === 'assistant' && typeof c.message.content === 'string',
          'chat: choice ' + i);
    check(['stop', 'length'].includes(c.finish_reason), 'chat: finish_reason ' + c.finish_reason);
    check(c.logprobs && c.logprobs.content.length >= 1, 'chat: logprobs.content');
    for (const t of c.logprobs.content) {
      check(typeof t.logprob === 'number' && t.logprob <= 0 && Array.isArray(t.bytes), 'chat: a token logprob');
      // top_logprobs: 1 = the most likely token there, at least as likely as the sampled one.
      check(t.top_logprobs.length === 1 && t.top_logprobs[0].logprob >= t.logprob - 1e-5,
            'chat: top_logprobs');
    }
  }
  checkUsage(chat.usage, 'chat');
  check(chat.usage.completion_tokens <= 36, 'chat: at most 3 x 12 tokens');

  // The same seeded request again: the same texts.
  const again = await client.chat.completions.create({
    model, messages: [{ role: 'system', content: 'You write CUDA.' },
                      { role: 'user', content: 'Add two vectors.' }],
    max_tokens: 12, n: 3, seed: 7, logprobs: true, top_logprobs: 1, temperature: 1.0,
  });
  for (let i = 0; i < 3; ++i)
    check(again.choices[i].message.content === chat.choices[i].message.content, 'chat: seed reproduces choice ' + i);

  // Completions with logprobs.
  const comp = await client.completions.create({
    model, prompt: '__global__ void add(', max_tokens: 10, logprobs: 1, seed: 3, n: 2,
  });
  check(comp.object === 'text_completion' && comp.choices.length === 2, 'completions: 2 choices');
  for (const c of comp.choices) {
    check(typeof c.text === 'string', 'completions: text');
    check(c.logprobs.tokens.length === c.logprobs.token_logprobs.length, 'completions: logprobs arrays');
    check(c.logprobs.token_logprobs.every((x) => x <= 0), 'completions: logprobs <= 0');
  }
  checkUsage(comp.usage, 'completions');

  // Streaming chat: the deltas add up to the non-streamed text of the same seeded request.
  const plain = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Write a kernel.' }], max_tokens: 15, seed: 11,
  });
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Write a kernel.' }], max_tokens: 15, seed: 11,
    stream: true, stream_options: { include_usage: true },
  });
  let text = '', chunks = 0, finish = null, usage = null;
  for await (const chunk of stream) {
    ++chunks;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta && c.delta.content) text += c.delta.content;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  check(chunks >= 3, 'chat stream: several chunks (' + chunks + ')');
  check(text === plain.choices[0].message.content, 'chat stream: text equals the plain answer');
  check(finish === plain.choices[0].finish_reason, 'chat stream: finish_reason');
  checkUsage(usage, 'chat stream');
  check(usage.completion_tokens === plain.usage.completion_tokens, 'chat stream: usage equals');

  // Streaming completions.
  const cstream = await client.completions.create({
    model, prompt: 'int main() {', max_tokens: 8, seed: 5, stream: true,
  });
  let ctext = '', cusage = null;
  for await (const chunk of cstream) {
    if (chunk.usage) cusage = chunk.usage;
    for (const c of chunk.choices || []) ctext += c.text || '';
  }
  const cplain = await client.completions.create({ model, prompt: 'int main() {', max_tokens: 8, seed: 5 });
  check(ctext === cplain.choices[0].text, 'completions stream: text equals the plain answer');
  checkUsage(cusage, 'completions stream');

  // An error names the field.
  let err = null;
  try {
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], temperature: 9 });
  } catch (e) {
    err = e;
  }
  check(err && err.status === 400, 'bad temperature: 400');
  check(err.param === 'temperature' || (err.error && err.error.param === 'temperature'),
        'bad temperature: param names the field: ' + JSON.stringify(err.error));

  console.log('openai client: all checks passed');
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
