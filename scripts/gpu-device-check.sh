#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU and nvcc but without leap's build (no CAF, no
# LibTorch): run from the repository root with a folder packed by `gpu_bundle` (tests/gpu/).
#   1. Builds leap's CUDA harness (env/harness/harness_main.cpp) and, with nvcc, every task
#      reference and every candidate of the bundle into worker executables, as leap links them.
#   2. Runs each worker in a fresh directory with its job file, one at a time (the timing loop
#      must not share the GPU), references first, under a RUN_TIMEOUT (default 30 s) timeout.
#   3. Judges the candidates with tests/gpu/gpu_judge.py (leap's verdict order and tolerances).
#   4. Builds and runs every whole program of tests/env/cpu_emu/programs/ with nvcc: each prints
#      PASS when the GPU does what the CPU emulation's tests say it does.
# Usage: scripts/gpu-device-check.sh BUNDLE OUT   (OUT receives judge.txt, judge.json, programs.txt)
# Environment: NVCC (default nvcc), ARCH (default sm_90), JOBS (default nproc).
set -uo pipefail

bundle=${1:?usage: gpu-device-check.sh BUNDLE OUT}
out=${2:?usage: gpu-device-check.sh BUNDLE OUT}
nvcc=${NVCC:-nvcc}
arch=${ARCH:-sm_90}
jobs=${JOBS:-$(nproc)}
root=$(pwd)
work=$(mktemp -d /tmp/leap-gpu.XXXXXX)
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" 2>&1
"$nvcc" --version | tail -1 >> "$out/device.txt"
cat "$out/device.txt"

# 1. Build.
"$nvcc" -O2 -std=c++17 -DLEAP_HARNESS_CUDA=1 -I"$root" -x c++ -c "$root/env/harness/harness_main.cpp" \
  -o "$work/harness.o" || { echo "gpu-device-check: the harness does not build" >&2; exit 1; }
build_one() { # SRC_DIR GLUE_DIR DEST
  local src=$1 glue=$2 dest=$3
  mkdir -p "$dest"
  if ! "$nvcc" -O3 -std=c++17 -arch="$arch" -c "$src" -o "$dest/solution.o" > "$dest/nvcc.log" 2>&1 ||
     ! "$nvcc" -O2 -std=c++17 -arch="$arch" -c "$glue/glue.cu" -o "$dest/glue.o" >> "$dest/nvcc.log" 2>&1 ||
     ! "$nvcc" -arch="$arch" -o "$dest/worker" "$dest/solution.o" "$dest/glue.o" "$work/harness.o" >> "$dest/nvcc.log" 2>&1
  then
    touch "$dest/compile_error"
  fi
}
export -f build_one
export nvcc arch work
{
  for t in "$bundle"/tasks/*/; do
    t=${t%/}; echo "$t/reference.cu $t $work/runs/ref.$(basename "$t")"
  done
  while IFS=$'\t' read -r id task _ _; do
    echo "$bundle/cases/$id/solution.cu $bundle/tasks/$task $work/runs/$id"
  done < "$bundle/cases.tsv"
} | xargs -P "$jobs" -L 1 bash -c 'build_one "$0" "$1" "$2"'

# 2. Run, one at a time.
run_one() { # DIR JOB
  local d=$1
  [ -e "$d/compile_error" ] && return
  cp "$2" "$d/job.txt"
  (cd "$d" && timeout -s KILL "${RUN_TIMEOUT:-30}" ./worker > stdout.txt 2> stderr.txt; rc=$?; [ $rc -eq 137 ] && rc=124; echo $rc > rc)
}
for t in "$bundle"/tasks/*/; do
  t=${t%/}; run_one "$work/runs/ref.$(basename "$t")" "$t/job.txt"
done
while IFS=$'\t' read -r id task _ _; do
  run_one "$work/runs/$id" "$bundle/tasks/$task/job.txt"
done < "$bundle/cases.tsv"

# 3. Judge.
python3 "$root/tests/gpu/gpu_judge.py" "$bundle" "$work/runs" "$out/judge.json" | tee "$out/judge.txt"

# 4. The emulation's whole programs on the GPU.
pass=0; total=0
: > "$out/programs.txt"
for p in "$root"/tests/env/cpu_emu/programs/*.cu; do
  [ -e "$p" ] || continue
  total=$((total + 1))
  name=$(basename "$p" .cu)
  if ! "$nvcc" -O2 -std=c++17 -arch="$arch" -o "$work/$name" "$p" > "$work/$name.log" 2>&1; then
    echo "$name: does not build with nvcc: $(head -c 400 "$work/$name.log")" | tee -a "$out/programs.txt"
    continue
  fi
  res=$(timeout -s KILL 60 "$work/$name" 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q PASS <<< "$res"; then
    pass=$((pass + 1)); echo "$name: PASS" | tee -a "$out/programs.txt"
  else
    echo "$name: FAIL (exit $rc): $(tail -c 600 <<< "$res")" | tee -a "$out/programs.txt"
  fi
done
echo "programs: $pass of $total pass on the GPU" | tee -a "$out/programs.txt"
