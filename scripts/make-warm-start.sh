#!/usr/bin/env bash
# Rebuilds the warm start that `make run` starts from (assets/warm_start) from scratch: `leap
# pretrain` with the [policy] and [sft] sections of configs/quickstart.toml (its corpus labelled by
# the environment; the labels are cached by content in ~/.cache/leap, so a rerun skips the
# labelling), then the checkpoint replaces the shipped one and the SHA-256 of its manifest.json is
# written into configs/quickstart.toml's warm_start_sha256, the pin leap checks when it loads the
# warm start. Called by `make warm-start`.
#
#   scripts/make-warm-start.sh [--config FILE] [--out DIR] [--pin-in TOML] [--set key=value ...]
#
# --out and --pin-in choose another directory and file to write (the tests build a tiny warm start
# this way); --set overrides the recipe's keys as on leap's command line.
set -euo pipefail
cd "$(dirname "$0")/.."

leap=${LEAP:-build/leap}
config=configs/quickstart.toml
out=assets/warm_start
pin_in=configs/quickstart.toml
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pin-in) pin_in=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "make-warm-start: unknown argument '$1' (--config, --out, --pin-in, --set)" >&2; exit 2 ;;
  esac
done
[ -x "$leap" ] || { echo "make-warm-start: $leap is not built (run make build)" >&2; exit 2; }
if ! grep -q '^warm_start_sha256 = ' "$pin_in"; then
  echo "make-warm-start: $pin_in has no 'warm_start_sha256 = ...' line to renew" >&2
  exit 2
fi

start=$(date +%s)
tmp="$out.partial"
rm -rf "$tmp"
"$leap" --config "$config" "${sets[@]}" pretrain --out "$tmp"
sha=$(sha256sum "$tmp/manifest.json" | cut -d' ' -f1)
# Replace the old warm start only now that the new one is complete.
rm -rf "$out.old"
if [ -e "$out" ]; then mv "$out" "$out.old"; fi
mv "$tmp" "$out"
rm -rf "$out.old"
sed -i "s/^warm_start_sha256 = .*/warm_start_sha256 = \"$sha\"/" "$pin_in"
echo "warm start: $out ($(du -sh "$out" | cut -f1)), manifest SHA-256 $sha, pinned in $pin_in;" \
     "$(( $(date +%s) - start )) s"
