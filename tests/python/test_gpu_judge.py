"""tests/gpu/gpu_judge.py, the judge of the GPU device check, on hand-made run folders: the verdict
order of leap's executor (timeout, harness failure, signal, early exit, outputs, repeated call,
timed calls) and the tolerance rule |a - e| <= atol + rtol * |e| with NaN never passing."""
import importlib.util
import json
import os

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gpu_judge", os.path.join(HERE, "..", "gpu", "gpu_judge.py"))
gpu_judge = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_judge)

N = 5
LAYOUT = {"task": "t", "atol": 1e-3, "rtol": 1e-3, "trials": 2, "timed": 3,
          "size_sets": [[{"name": "c", "n": N, "int": False}], [{"name": "c", "n": 2, "int": False}]]}


def f32(*v):
    return np.array(v, dtype=np.float32).tobytes()


def ref_buffers():
    first = [f32(1, 2, 3, 4, 5), f32(6, 7, 8, 9, 10)]          # size set 0, trials 1 and 2
    second = [f32(-1, -2), f32(-3, -4)]                        # size set 1
    timed = [f32(*range(10 * k, 10 * k + N)) for k in range(3)]
    return b"".join(first + second), b"".join(timed)


def write_run(d, rc=0, status="begin 0 0\nok\ndone\n", outputs=None, repeat=None, timed=None, ms=None):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "rc"), "w") as f:
        f.write("%d\n" % rc)
    with open(os.path.join(d, "status.txt"), "w") as f:
        f.write(status + ("time 0 %f %f 3\n" % (ms, ms) if ms else ""))
    for name, data in (("outputs.bin", outputs), ("repeat.bin", repeat), ("timed.bin", timed)):
        if data is not None:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


@pytest.fixture
def ref(tmp_path):
    outputs, timed = ref_buffers()
    d = str(tmp_path / "ref")
    write_run(d, outputs=outputs, repeat=outputs[:4 * N], timed=timed, ms=2.0)
    return d, outputs, timed


def judge(tmp_path, ref, **kw):
    d = str(tmp_path / ("cand%d" % len(list(tmp_path.iterdir()))))  # a fresh folder per run
    write_run(d, **kw)
    return gpu_judge.judge(LAYOUT, d, ref[0])


def test_an_honest_run_is_correct_with_its_speedup(tmp_path, ref):
    _, outputs, timed = ref
    st, why, sp = judge(tmp_path, ref, outputs=outputs, repeat=outputs[:4 * N], timed=timed, ms=0.5)
    assert (st, why) == ("correct", "")
    assert sp == pytest.approx(4.0)


def test_within_tolerance_passes_and_nan_never_does(tmp_path, ref):
    _, outputs, timed = ref
    close = bytearray(outputs)
    close[0:4] = f32(1.0015)  # |1.0015 - 1| <= 1e-3 + 1e-3 * 1
    st, _, _ = judge(tmp_path, ref, outputs=bytes(close), repeat=bytes(close[:4 * N]), timed=timed, ms=1)
    assert st == "correct"
    nan = bytearray(outputs)
    nan[8:12] = f32(float("nan"))
    st, why, _ = judge(tmp_path, ref, outputs=bytes(nan), repeat=bytes(nan[:4 * N]), timed=timed, ms=1)
    assert st == "wrong_answer" and why.startswith("mismatch: c[2] size set 0 trial 1")


def test_a_replay_is_caught_in_the_timed_calls(tmp_path, ref):
    _, outputs, timed = ref
    stale = timed[:4 * N] * 3  # every timed call left the first call's result
    st, why, _ = judge(tmp_path, ref, outputs=outputs, repeat=outputs[:4 * N], timed=stale, ms=0.01)
    assert st == "wrong_answer" and why.startswith("timed_mismatch: c[0] size set 0 trial 2")


def test_a_second_identical_call_must_agree(tmp_path, ref):
    _, outputs, timed = ref
    st, why, _ = judge(tmp_path, ref, outputs=outputs, repeat=f32(0, 0, 0, 0, 0), timed=timed, ms=1)
    assert st == "wrong_answer" and why.startswith("inconsistent:")


def test_failures_come_before_outputs_in_the_executors_order(tmp_path, ref):
    _, outputs, timed = ref
    assert judge(tmp_path, ref, rc=124, outputs=outputs)[0] == "timeout"
    st, why, _ = judge(tmp_path, ref, rc=0, status="begin 0 0\nfail 0 0 canary wrote past 'c'\n")
    assert st == "runtime_error" and why.startswith("canary")
    assert judge(tmp_path, ref, rc=139, status="begin 0 0\n")[1] == "signal 11"
    assert judge(tmp_path, ref, rc=0, status="begin 0 0\nok\n")[1].startswith("early_exit")
    # Missing or short trial outputs (a forged status file) are a runtime error, as in leap.
    st, why, _ = judge(tmp_path, ref, outputs=outputs[:-4], repeat=outputs[:4 * N], timed=timed, ms=1)
    assert st == "runtime_error" and why.startswith("outputs: outputs malformed")
    st, why, _ = judge(tmp_path, ref, outputs=outputs, repeat=outputs[:4 * N], timed=None, ms=1)
    assert st == "wrong_answer" and why.startswith("timed_mismatch: outputs malformed")


def test_an_excessive_speedup_is_flagged(tmp_path, ref):
    _, outputs, timed = ref
    st, why, sp = judge(tmp_path, ref, outputs=outputs, repeat=outputs[:4 * N], timed=timed, ms=0.1)
    assert (st, why) == ("correct", "excessive_speedup") and sp == pytest.approx(20.0)


def test_main_writes_the_table_and_json(tmp_path, ref):
    bundle = tmp_path / "bundle"
    (bundle / "tasks" / "t").mkdir(parents=True)
    (bundle / "tasks" / "t" / "layout.json").write_text(json.dumps(LAYOUT))
    (bundle / "cases.tsv").write_text("t.good\tt\tcorrect\tgood.cu\nt.cheat\tt\twrong_answer\tcheat.cu\n")
    runs = tmp_path / "runs"
    _, outputs, timed = ref
    write_run(str(runs / "ref.t"), outputs=outputs, repeat=outputs[:4 * N], timed=timed, ms=2.0)
    write_run(str(runs / "t.good"), outputs=outputs, repeat=outputs[:4 * N], timed=timed, ms=1.0)
    write_run(str(runs / "t.cheat"), outputs=outputs, repeat=outputs[:4 * N], timed=outputs[:4 * N] * 3, ms=0.01)
    out = tmp_path / "judge.json"
    import sys
    argv, sys.argv = sys.argv, ["gpu_judge.py", str(bundle), str(runs), str(out)]
    try:
        gpu_judge.main()
    finally:
        sys.argv = argv
    rows = json.loads(out.read_text())
    assert [(r["id"], r["gpu"], r["as_expected"]) for r in rows] == [
        ("t.good", "correct", True), ("t.cheat", "wrong_answer", True)]
