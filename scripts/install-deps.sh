#!/usr/bin/env bash
# Installs leap's build and run dependencies from Debian 12 packages. Idempotent: it checks
# what is present first and runs `apt-get update` only when something is missing.
# The CUDA toolkit is not installed here: leap expects nvcc at $CUDA_HOME (default /usr/local/cuda).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcaf-dev                      # CAF 0.17 core + io
  libcaf-openssl0.17 libssl-dev   # CAF's TLS module (cluster connections)
  openssl                         # the CLI: test certificates, docs/cluster.md walk-through
  python3                         # the `leap serve` Python client and its test
  libtorch-dev                    # LibTorch 1.13 (CPU)
  libopenblas0-pthread            # optimised BLAS for LibTorch (reference BLAS is ~33x slower)
  libtcmalloc-minimal4            # keeps LibTorch's large tensors mapped (SFT 1.8x faster)
  libboost-dev libboost-context-dev libboost-filesystem-dev
  libtomlplusplus-dev nlohmann-json3-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libseccomp-dev
  libutf8proc-dev                 # Unicode NFC for the tokenizer's NFC normalizer (Qwen2/3)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [[ ! -x "$cuda_home/bin/nvcc" ]]; then
  echo "install-deps: WARNING: no nvcc at $cuda_home/bin/nvcc; install the CUDA toolkit there or set CUDA_HOME" >&2
fi

# LibTorch links the generic libblas.so.3: make sure the alternative points at OpenBLAS.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "install-deps: WARNING: libblas.so.3 -> ${blas:-none}, not OpenBLAS: LibTorch matmuls will be slow" >&2 ;;
esac
