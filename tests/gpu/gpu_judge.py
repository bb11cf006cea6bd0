#!/usr/bin/env python3
"""Judges what scripts/gpu-device-check.sh ran on a GPU: for each case of a gpu_bundle folder, the
candidate's status file, exit code and raw outputs against its task reference's, in the order and
with the rules of leap's executor (env/executor_verdict.cpp): timeout, harness failure, signal,
early exit, then the outputs of every trial, the repeated call, every timed call (fresh inputs, same
buffers), then the speedup (reference median / candidate median) and the excessive_speedup flag.
Comparison as env/compare.cpp: floats pass when |a - e| <= atol + rtol * |e| (NaN never passes),
int32 must be equal. Runs on the GPU machine (numpy only) because the timed outputs are too large
to bring back; prints a table and writes judge.json.

Usage: gpu_judge.py BUNDLE RUNS OUT_JSON
  RUNS/<id>/ and RUNS/ref.<task>/ hold status.txt, rc, outputs.bin, repeat.bin, timed.bin.
"""
import json
import os
import sys

import numpy as np

MAX_PLAUSIBLE_SPEEDUP = 10.0


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def parse_status(text):
    si = {"done": False, "failed": False, "kind": "", "msg": "", "median_ms": None}
    for line in (text or "").splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "fail" and not si["failed"]:
            si["failed"] = True
            si["kind"] = w[3] if len(w) > 3 else ""
            si["msg"] = " ".join(w[4:])
        elif w[0] == "time" and len(w) >= 3:
            si["median_ms"] = float(w[2])
        elif w[0] == "done":
            si["done"] = True
    return si


class Malformed(Exception):
    """The output file is missing or of the wrong size (env/compare.cpp's `malformed`)."""


def compare(layout, sets, trials, cand, ref):
    """(ok, why) for buffers laid out per size set, per trial, per output argument; raises
    Malformed when a buffer has the wrong size."""
    need = sum(o["n"] * 4 for s in sets for o in layout["size_sets"][s]) * trials
    if ref is None or len(ref) < need:
        raise Malformed("reference outputs short (%s of %d bytes)" % (None if ref is None else len(ref), need))
    if cand is None or len(cand) != need:
        raise Malformed("outputs malformed: %s bytes, expected %d" % (None if cand is None else len(cand), need))
    off = 0
    for s in sets:
        for t in range(trials):
            for o in layout["size_sets"][s]:
                n = o["n"]
                dt = np.int32 if o["int"] else np.float32
                a = np.frombuffer(cand, dtype=dt, count=n, offset=off)
                e = np.frombuffer(ref, dtype=dt, count=n, offset=off)
                off += 4 * n
                if o["int"]:
                    bad = a != e
                else:
                    a64, e64 = a.astype(np.float64), e.astype(np.float64)
                    with np.errstate(invalid="ignore"):
                        bad = ~(np.abs(a64 - e64) <= layout["atol"] + layout["rtol"] * np.abs(e64))
                if bad.any():
                    i = int(np.argmax(bad))
                    return False, "%s[%d] size set %d trial %d: expected %r, got %r (%d mismatches)" % (
                        o["name"], i, s, t + 1, e[i].item(), a[i].item(), int(bad.sum()))
    return True, ""


def judge(layout, cdir, rdir):
    rc = int((read(os.path.join(cdir, "rc")) or b"-1").strip() or -1)
    si = parse_status((read(os.path.join(cdir, "status.txt")) or b"").decode(errors="replace"))
    if rc == 124:
        return "timeout", "wall_clock", None
    if si["failed"]:
        return "runtime_error", si["kind"] + ": " + si["msg"], None
    if rc > 128:
        return "runtime_error", "signal %d" % (rc - 128), None
    if rc != 0 or not si["done"]:
        return "runtime_error", "early_exit (exit %d)" % rc, None
    rsi = parse_status((read(os.path.join(rdir, "status.txt")) or b"").decode(errors="replace"))
    if not rsi["done"] or rsi["failed"]:
        return "leap_error", "the reference failed: " + rsi["kind"] + " " + rsi["msg"], None
    all_sets = list(range(len(layout["size_sets"])))
    cand_out = read(os.path.join(cdir, "outputs.bin"))
    # As the executor: malformed trial outputs are a runtime error (reason "outputs"); a malformed
    # repeated or timed call's outputs make the verdict wrong_answer with that reason.
    try:
        ok, why = compare(layout, all_sets, layout["trials"], cand_out, read(os.path.join(rdir, "outputs.bin")))
    except Malformed as e:
        return "runtime_error", "outputs: " + str(e), None
    if not ok:
        return "wrong_answer", "mismatch: " + why, None
    first_block = sum(o["n"] * 4 for o in layout["size_sets"][0])
    checks = (("inconsistent", [0], 1, read(os.path.join(cdir, "repeat.bin")), cand_out[:first_block]),
              ("timed_mismatch", [0], layout["timed"], read(os.path.join(cdir, "timed.bin")),
               read(os.path.join(rdir, "timed.bin"))))
    for reason, sets, trials, got, want in checks:
        try:
            ok, why = compare(layout, sets, trials, got, want)
        except Malformed as e:
            ok, why = False, str(e)
        if not ok:
            return "wrong_answer", reason + ": " + why, None
    speedup = None
    if si["median_ms"] and rsi["median_ms"]:
        speedup = rsi["median_ms"] / si["median_ms"]
    flag = "excessive_speedup" if speedup and speedup > MAX_PLAUSIBLE_SPEEDUP else ""
    return "correct", flag, speedup


def main():
    bundle, runs, out_json = sys.argv[1:4]
    rows = []
    with open(os.path.join(bundle, "cases.tsv")) as f:
        cases = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for cid, task, expect, src in cases:
        with open(os.path.join(bundle, "tasks", task, "layout.json")) as f:
            layout = json.load(f)
        cdir = os.path.join(runs, cid)
        if read(os.path.join(cdir, "compile_error")) is not None:
            got, why, sp = "compile_error", "nvcc failed", None
        else:
            got, why, sp = judge(layout, cdir, os.path.join(runs, "ref." + task))
        match = got in expect.split("|")
        rows.append({"id": cid, "task": task, "expected": expect, "gpu": got, "why": why,
                     "speedup": sp, "as_expected": match, "source": src})
        print("%-48s %-24s %-14s %-8s %s" % (cid, expect, got, "" if sp is None else "%.2fx" % sp,
                                              ("ok " if match else "DIFF ") + why[:150]))
    same = sum(r["as_expected"] for r in rows)
    print("gpu_judge: %d of %d cases got their expected verdict on the GPU" % (same, len(rows)))
    with open(out_json, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
