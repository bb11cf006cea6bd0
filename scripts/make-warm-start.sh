#!/usr/bin/env bash
# Rebuilds the warm start that `make run` starts from (assets/warm_start) from scratch: the stages
# of configs/warm-start/ in the order of their leading numbers (1-, 2-, ..., 10-), each a `leap
# pretrain` with that file's [policy] and [sft] (generated tasks labelled by construction, bundled
# tasks and bug variants by the environment; labels are cached by content in ~/.cache/leap), each
# stage after the first continuing from the one before (sft.init_checkpoint). Then the last
# stage's checkpoint replaces the shipped one and the SHA-256 of its manifest.json is written into
# the warm_start_sha256 of configs/quickstart.toml and configs/experiments/paper.toml, the pin leap
# checks when it loads the warm start.
# Called by `make warm-start` (about 4 h on 2 cores; docs/training.md).
#
#   scripts/make-warm-start.sh [--stages DIR] [--work DIR] [--out DIR] [--pin-in TOML ...]
#                              [--set key=value ...]
#
# Each stage's checkpoint is kept in --work (default runs/warm-start/<stage>) with the SHA-256 of
# what made it (its file, the --set overrides and the previous stage's manifest): a rerun after an
# interruption skips the stages that are already made, and redoes a stage and all after it when
# any of that changed. --out and --pin-in choose another directory and files to write (--pin-in
# once per file; the tests build a tiny warm start this way); --set overrides the recipe's keys in
# every stage, as on leap's command line.
set -euo pipefail
cd "$(dirname "$0")/.."

leap=${LEAP:-build/leap}
stages_dir=configs/warm-start
work=runs/warm-start
out=assets/warm_start
pins=()
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stages) stages_dir=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pin-in) pins+=("$2"); shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "make-warm-start: unknown argument '$1' (--stages, --work, --out, --pin-in, --set)" >&2
       exit 2 ;;
  esac
done
[ -x "$leap" ] || { echo "make-warm-start: $leap is not built (run make build)" >&2; exit 2; }
[ ${#pins[@]} -gt 0 ] || pins=(configs/quickstart.toml configs/experiments/paper.toml)
for pin_in in "${pins[@]}"; do
  if ! grep -q '^warm_start_sha256 = ' "$pin_in"; then
    echo "make-warm-start: $pin_in has no 'warm_start_sha256 = ...' line to renew" >&2
    exit 2
  fi
done
mapfile -t stages < <(find "$stages_dir" -maxdepth 1 -name '*.toml' | LC_ALL=C sort -V)
[ ${#stages[@]} -gt 0 ] || { echo "make-warm-start: no stage (*.toml) in $stages_dir" >&2; exit 2; }

start=$(date +%s)
mkdir -p "$work"
prev=""
prev_sha="none"
n=0
for stage in "${stages[@]}"; do
  n=$((n + 1))
  name=$(basename "$stage" .toml)
  dir="$work/$name"
  # What makes this stage: its file, the overrides, and the checkpoint it continues from.
  recipe=$( { cat "$stage"; printf '%s\n' "${sets[@]}" "from $prev_sha"; } | sha256sum | cut -d' ' -f1)
  if [ -f "$dir/manifest.json" ] && [ "$(cat "$dir.recipe" 2>/dev/null)" = "$recipe" ]; then
    echo "stage $n/${#stages[@]} ($name): already made, kept ($dir)"
  else
    echo "stage $n/${#stages[@]} ($name): leap pretrain"
    rm -rf "$dir" "$dir.partial" "$dir.recipe"
    from=()
    [ -n "$prev" ] && from=(--set "sft.init_checkpoint=$prev")
    stage_start=$(date +%s)
    "$leap" --config "$stage" "${sets[@]}" "${from[@]}" pretrain --out "$dir.partial"
    mv "$dir.partial" "$dir"
    echo "$recipe" > "$dir.recipe"
    echo "stage $n/${#stages[@]} ($name): $(( $(date +%s) - stage_start )) s"
  fi
  prev=$dir
  prev_sha=$(sha256sum "$dir/manifest.json" | cut -d' ' -f1)
done

# Replace the old warm start only now that the new one is complete.
tmp="$out.partial"
rm -rf "$tmp" "$out.old"
cp -r "$prev" "$tmp"
sha=$(sha256sum "$tmp/manifest.json" | cut -d' ' -f1)
if [ -e "$out" ]; then mv "$out" "$out.old"; fi
mv "$tmp" "$out"
rm -rf "$out.old"
for pin_in in "${pins[@]}"; do
  sed -i "s/^warm_start_sha256 = .*/warm_start_sha256 = \"$sha\"/" "$pin_in"
done
echo "warm start: $out ($(du -sh "$out" | cut -f1)), ${#stages[@]} stages, manifest SHA-256 $sha," \
     "pinned in ${pins[*]}; $(( $(date +%s) - start )) s"
