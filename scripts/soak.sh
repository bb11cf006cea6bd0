#!/usr/bin/env bash
# A soak of the training pipeline (not in CI): `leap train` with the tests' tiny policy on two
# tasks (real nvcc + the CPU emulation) for MINUTES minutes (default 30), sampling once a minute
# the run's resident memory, its open file descriptors, and the processes under it; then a
# summary with each figure's first, last and largest value and its trend over the second half
# (least squares), and the resident memory's growth from minute 5 to the end in percent (leap
# bounds it at 5%). A healthy run shows no trend: memory flat after warm-up, descriptors and
# processes bounded by the pools' sizes.
#
#   scripts/soak.sh [MINUTES] [OUT_DIR]      # default 30, and a fresh temporary directory
#
# Resident memory is read every 5 s: it moves within a learner step (tensors allocated and freed,
# spans the allocator returns to the kernel), so one reading depends on where in a step it falls;
# each minute's largest reading (rss_max_kb) is what the bound is checked on.
# Writes OUT_DIR/soak.csv (minute, rss_kb, rss_max_kb, fds, processes, steps, and the heap figures
# of the minute's last learner step from metrics.jsonl's "memory": heap_in_use_mib,
# heap_resident_mib, heap_free_mib; then the minute's RSS split into anonymous and file-backed
# pages: rss_anon_kb, rss_file_kb) and prints the summary. The heap figures say where growth
# is: in live data (in use) or in free memory the allocator keeps (free).
# Exit status: 0 within the bound, 3 over it, 1 when the run ended early, 2 without a build.
set -euo pipefail

minutes="${1:-30}"
out="${2:-$(mktemp -d /tmp/leap-soak-XXXXXX)}"
here="$(cd "$(dirname "$0")/.." && pwd)"
leap="$here/build/leap"
[[ -x "$leap" ]] || { echo "soak: no $leap; run 'make build' first" >&2; exit 2; }
mkdir -p "$out"

tiny=(--set environment.backend=cpu --set 'sft.tasks=["vector_add","relu"]'
      --set 'train.tasks=["vector_add","relu"]' --set policy.vocab_size=600
      --set policy.d_model=32 --set policy.n_layers=1 --set policy.n_heads=2
      --set policy.n_kv_heads=1 --set policy.d_ff=64 --set sft.max_steps=150
      --set sft.batch_sequences=4 --set sft.lr=1e-2 --set sft.alt_solution_weight=0
      --set sft.repair_weight=0 --set train.batch_groups=2 --set train.group_size=4
      --set train.max_new_tokens=320 --set executor.timeout_seconds=10
      --set "environment.cache_dir=$out/cache")

echo "soak: warm start (tiny policy) into $out/warm" >&2
"$leap" "${tiny[@]}" pretrain --out "$out/warm" > "$out/pretrain.log" 2>&1

echo "soak: training for $minutes minute(s); samples in $out/soak.csv" >&2
"$leap" "${tiny[@]}" --set train.steps=1000000 --set train.checkpoint_every=20 \
  --set "train.warm_start=$out/warm" train --out "$out/run" > "$out/train.log" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true' EXIT

descendants() { # every process under $1
  local kids
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do echo "$k"; descendants "$k"; done
}

sleep 15 # past start-up (leap re-executes itself once), so the first sample is of a running run
rss_now() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0; }
# Anonymous and file-backed resident kB (RssAnon, RssFile): heap and stacks against the pages of
# mapped files (libtorch_cpu's code and data are counted in RSS once touched, and are shared).
rss_split_now() {
  awk '/^RssAnon:/ {a = $2} /^RssFile:/ {f = $2} END {printf "%s,%s", a + 0, f + 0}' \
    "/proc/$pid/status" 2>/dev/null || echo "0,0"
}
# The heap figures of the last step written: in use, resident, free (MiB), or empty.
heap_now() {
  tail -n 1 "$out/run/metrics.jsonl" 2>/dev/null | python3 -c '
import json, sys
try:
    m = json.loads(sys.stdin.read()).get("memory", {})
    print("%.1f,%.1f,%.1f" % (m["heap_in_use_mib"], m["heap_resident_mib"], m["heap_free_mib"]))
except Exception:
    print(",,")'
}
echo "minute,rss_kb,rss_max_kb,fds,processes,steps,heap_in_use_mib,heap_resident_mib,heap_free_mib,rss_anon_kb,rss_file_kb" > "$out/soak.csv"
peak=0
for ((m = 0; m <= minutes; m++)); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "soak: leap train ended early; see $out/train.log" >&2
    exit 1
  fi
  rss=$(rss_now)
  ((rss > peak)) && peak=$rss
  fds=$(ls "/proc/$pid/fd" | wc -l)
  procs=$(descendants "$pid" | wc -l)
  steps=$( (wc -l < "$out/run/metrics.jsonl") 2>/dev/null || echo 0)
  echo "$m,$rss,$peak,$fds,$procs,$steps,$(heap_now),$(rss_split_now)" >> "$out/soak.csv"
  peak=0
  if ((m < minutes)); then
    for ((s = 0; s < 12; s++)); do
      sleep 5
      r=$(rss_now)
      ((r > peak)) && peak=$r
    done
  fi
done
kill -INT "$pid"
wait "$pid" || true
trap - EXIT

python3 - "$out/soak.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def trend(xs, ys):
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
half = rows[len(rows) // 2:]
print("soak: %d samples over %s minutes, %s learner steps" % (len(rows), rows[-1]["minute"], rows[-1]["steps"]))
for key, unit, scale in (("rss_kb", "MiB", 1 / 1024), ("rss_max_kb", "MiB", 1 / 1024),
                         ("fds", "", 1), ("processes", "", 1), ("heap_in_use_mib", "MiB", 1),
                         ("heap_resident_mib", "MiB", 1), ("heap_free_mib", "MiB", 1),
                         ("rss_anon_kb", "MiB", 1 / 1024), ("rss_file_kb", "MiB", 1 / 1024)):
    have = [r for r in rows if r.get(key)]
    if not have:
        continue
    ys = [float(r[key]) * scale for r in have]
    half_have = [r for r in half if r.get(key)]
    slope = trend([float(r["minute"]) for r in half_have], [float(r[key]) * scale for r in half_have])
    print("  %-17s first %8.1f  last %8.1f  max %8.1f  trend over the second half %+.3f %s/min"
          % (key, ys[0], ys[-1], max(ys), slope, unit))
# The bound: resident memory after the first 5 minutes grows by at most 5% to the end, on each
# minute's largest reading: the largest of the last five minutes against the largest of minutes
# 1-5 (the first minute of samples, minute 0, is one reading, not a minute's).
early = [float(r["rss_max_kb"]) / 1024 for r in rows if 1 <= float(r["minute"]) <= 5]
late = [float(r["rss_max_kb"]) / 1024 for r in rows if float(r["minute"]) > 5][-5:]
if early and len(late) == 5:
    base, last = max(early), max(late)
    growth = 100 * (last - base) / base if base else 0.0
    print("  largest rss, minutes 1-5 against the last five minutes: %.1f -> %.1f MiB, %+.1f%% (%s 5%%)"
          % (base, last, growth, "within" if growth <= 5 else "OVER"))
    if growth > 5:
        sys.exit(3)
else:
    print("  rss growth after minute 5: not measured (the run is shorter than 6 minutes)")
EOF
