#!/usr/bin/env bash
# Installs what only the tests need: a Python virtual environment at .venv (git-ignored) made
# with Debian's python3 (python3-venv) that also sees Debian's python3-torch and python3-numpy
# (--system-site-packages), holding the test-only references pinned with hashes in
# tests/python/requirements.lock: pytest, Hugging Face tokenizers and transformers, jinja2, Meta's
# llama-models tokenizer with tiktoken, and the official openai library. `make test` runs it.
# Idempotent: the Debian packages are installed only when missing, and pip runs only when the lock
# (or the interpreter) changed since the last install. leap itself never downloads anything.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
lock=tests/python/requirements.lock
py=/usr/bin/python3

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
missing=()
# python3-pip, python3-setuptools and python3-wheel: tests/python/test_client_package.py builds the
# client package (clients/python) offline with Debian's own pip, setuptools and wheel.
for pkg in python3 python3-venv python3-pip-whl python3-pip python3-setuptools python3-wheel python3-torch python3-numpy; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
  echo "install-test-deps: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

want="$(sha256sum "$lock" | cut -d' ' -f1) $("$py" -c 'import sys; print(sys.version.split()[0])')"
stamp="$venv/.leap-lock"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "install-test-deps: $venv is up to date with $lock"
  exit 0
fi
echo "install-test-deps: creating $venv from $lock ($("$py" --version))"
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip --disable-pip-version-check -q install --no-deps --require-hashes \
  --only-binary=:all: -r "$lock"
# The references the tests import, and Debian's torch seen from the environment.
"$venv/bin/python" -c 'import pytest, tokenizers, transformers, jinja2, tiktoken, openai, torch, numpy
import llama_models.llama3.tokenizer'
echo "$want" > "$stamp"
echo "install-test-deps: $venv ready (tokenizers $("$venv/bin/python" -c 'import tokenizers; print(tokenizers.__version__)'), transformers $("$venv/bin/python" -c 'import transformers; print(transformers.__version__)'), torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'))"
