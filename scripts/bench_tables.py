#!/usr/bin/env python3
"""Runs leap's benchmarks and writes the tables the docs show (what `make bench` runs).

    python3 scripts/bench_tables.py run [NAME ...] [--build DIR] [--skip NAME ...]
    python3 scripts/bench_tables.py render [NAME ...]  # the same tables again from the recorded results
    python3 scripts/bench_tables.py refresh     # copy docs/bench/*.md into the docs' marked blocks
    python3 scripts/bench_tables.py check       # what `make test` checks (no benchmark runs)
    python3 scripts/bench_tables.py list        # the benchmarks, their commands and rough durations

`run` runs each benchmark once (all of them without NAME), from the repository root: the Google
Benchmark binaries with --benchmark_out=runs/bench/micro/NAME.json, bench_serve with --json,
`leap bench --out runs/bench/SCENARIO` (which writes SCENARIO.md itself) and the Python clients'
concurrency example against a `leap serve` it starts. For each it writes docs/bench/NAME.md: the
stamp (date, commit, CPU, cores, load average at the start, the exact command;
scripts/bench_docs.py) and the table. Then it refreshes the docs' blocks. A benchmark that fails
leaves its previous file as it was and makes the exit status 1. docs/bench.md says more.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_docs  # noqa: E402
import bench_render as render  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MICRO_OUT = "runs/bench/micro"
# What `leap` sets for LibTorch's thread pools (common/thread_pools_env.hpp); the Makefile always
# gave the benchmark binaries the same, unless the caller set them.
THREAD_ENV = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}


class Bench:
    """One generated table: docs/bench/<name>.md from one command."""

    def __init__(self, name, what, seconds, kind, args=(), binary=None, renderer=None, scenario=None,
                 env=None):
        self.name, self.what, self.seconds, self.kind = name, what, seconds, kind
        self.args, self.binary, self.renderer, self.scenario = list(args), binary, renderer, scenario
        self.env = dict(env or {})


BENCHES = [
    Bench("algo", "tournament, advantages, DCP decision", 10, "gbench", binary="bench_algo",
          args=["--benchmark_min_time=0.1"], renderer=render.render_algo),
    Bench("messaging", "CAF round trips, local against the loopback middleman", 10, "gbench",
          binary="bench_messaging", args=["--benchmark_min_time=0.2"], renderer=render.render_messaging),
    Bench("emulation", "the emulation's barriers and each emulated feature against its baseline", 60,
          "gbench", binary="bench_emulation",
          args=["--benchmark_min_time=0.2", "--benchmark_repetitions=3",
                "--benchmark_report_aggregates_only=true"], renderer=render.render_emulation),
    Bench("tokenizer", "BPE encode, decode and training", 10, "gbench", binary="bench_tokenizer",
          args=["--benchmark_min_time=0.5"], renderer=render.render_tokenizer),
    Bench("sampling", "batched sampling with and without the KV cache", 120, "gbench",
          binary="bench_sampling", args=["--benchmark_filter=BM_sample_group_(cached|nocache)"],
          renderer=render.render_sampling),
    Bench("decode_paths", "each decode path at G = 8 in one run, against LibTorch", 90, "gbench",
          binary="bench_sampling",
          args=["--benchmark_filter=BM_sample_group_path", "--benchmark_repetitions=3",
                "--benchmark_report_aggregates_only=true"], renderer=render.render_decode_paths),
    Bench("decode_paths_sse", "LibTorch held to SSE against the portable decode loops", 60, "gbench",
          binary="bench_sampling", env={"ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Nehalem"},
          args=["--benchmark_filter=BM_sample_group_path/path:[01]/", "--benchmark_repetitions=3",
                "--benchmark_report_aggregates_only=true"],
          renderer=lambda data: render.render_decode_paths(data, held_to_sse=True)),
    Bench("learner", "one GRPO learner step", 60, "gbench", binary="bench_learner",
          renderer=render.render_learner),
    Bench("startup", "`leap version` and a cache-hit `leap check` from process start", 40, "gbench",
          binary="bench_startup", args=["--benchmark_enable_random_interleaving=true"],
          renderer=render.render_startup),
    Bench("compile", "a cold build's alternatives side by side (LEAP_COMPILE_BENCH_ROUNDS=2)", 60,
          "gbench", binary="bench_compile", renderer=render.render_compile),
    Bench("serve", "`leap serve` under load against the in-process evaluator", 240, "serve",
          binary="bench_serve", renderer=render.render_serve),
    Bench("python_clients", "the asyncio Python client against the blocking one", 60, "clients",
          renderer=render.render_clients),
    Bench("compile_bound", "`leap bench`: the compile-bound scenario's four modes", 200, "leap_bench",
          scenario="configs/bench/compile_bound.toml"),
    Bench("cluster", "`leap bench`: the cluster scenario on 1, 2 and 4 node processes", 150,
          "leap_bench", scenario="configs/bench/cluster.toml"),
    Bench("real_cluster", "`leap bench`: real compile and execute in-process and on 1 and 2 "
          "`leap node` processes", 300, "leap_bench", scenario="configs/bench/real_cluster.toml"),
]


def rel(path):
    return os.path.relpath(path, ROOT) if os.path.isabs(path) and path.startswith(ROOT + os.sep) else path


def execute(argv, env_extra, log):
    """Runs argv from the repository root with env_extra added; its exit status. Output goes to
    the terminal and to `log`."""
    env = dict(os.environ, **env_extra)
    with open(log, "w") as out:
        p = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace")
        for line in p.stdout:
            sys.stdout.write(line)
            out.write(line)
        return p.wait()


def thread_env():
    return {k: v for k, v in THREAD_ENV.items() if k not in os.environ}


def run_gbench(b, build):
    json_out = f"{MICRO_OUT}/{b.name}.json"
    argv = [f"{build}/bench/{b.binary}", *b.args, f"--benchmark_out={json_out}",
            "--benchmark_out_format=json"]
    env = dict(thread_env(), **b.env)
    if b.name == "compile" and "LEAP_COMPILE_BENCH_ROUNDS" not in os.environ:
        env["LEAP_COMPILE_BENCH_ROUNDS"] = "2"
    stamp = bench_docs.take_stamp(ROOT, argv, env)
    rc = execute(argv, env, f"{MICRO_OUT}/{b.name}.log")
    if rc != 0:
        return None, f"exit status {rc} (output in {MICRO_OUT}/{b.name}.log)"
    with open(os.path.join(ROOT, json_out)) as f:
        return {"stamp": stamp, "data": json.load(f)}, None


def run_serve(b, build):
    json_out = f"{MICRO_OUT}/{b.name}.json"
    argv = [f"{build}/bench/{b.binary}", "--json", json_out]
    stamp = bench_docs.take_stamp(ROOT, argv)
    rc = execute(argv, {}, f"{MICRO_OUT}/{b.name}.log")
    if rc != 0:
        return None, f"exit status {rc} (output in {MICRO_OUT}/{b.name}.log)"
    with open(os.path.join(ROOT, json_out)) as f:
        return {"stamp": stamp, "data": json.load(f)}, None


def run_leap_bench(b, build):
    out_dir = f"runs/bench/{os.path.splitext(os.path.basename(b.scenario))[0]}"
    argv = [f"{build}/leap", "bench", "--config", b.scenario, "--out", out_dir]
    rc = execute(argv, {}, f"{MICRO_OUT}/{b.name}.log")
    md = os.path.join(ROOT, out_dir, f"{os.path.splitext(os.path.basename(b.scenario))[0]}.md")
    if rc != 0 or not os.path.exists(md):
        return None, f"exit status {rc} (output in {MICRO_OUT}/{b.name}.log)"
    with open(md) as f:
        return {"markdown": f.read()}, None  # leap bench stamped it (bench/pipeline/stamp.cpp)


def run_clients(b, build):
    """bench_concurrency.py (clients/python/examples) against a `leap serve` started here with the
    Python tests' server settings (tests/python/leap_server.py)."""
    work = tempfile.mkdtemp(prefix="leap-bench-clients-")
    os.chmod(work, 0o755)  # candidates run as another uid when leap runs as root
    server = [f"{build}/leap"]
    for s in (f"environment.cache_dir={work}/cache", "environment.backend=cpu", "serve.listen=127.0.0.1:0",
              "compiler.workers=1", "executor.workers=1", f"environment.work_dir={work}/work"):
        server += ["--set", s]
    server.append("serve")
    proc = subprocess.Popen(server, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace")
    port, found, log = [None], threading.Event(), []

    def read():
        for line in proc.stdout:
            log.append(line)
            m = re.search(r"serving on http://127\.0\.0\.1:(\d+)", line)
            if m and port[0] is None:
                port[0] = m.group(1)
                found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not found.wait(0.2):
            if proc.poll() is not None or time.monotonic() > deadline:
                return None, "leap serve did not start:\n" + "".join(log)
        client = ["python3", "clients/python/examples/bench_concurrency.py",
                  "--url", f"http://127.0.0.1:{port[0]}", "--task", "vector_add",
                  "--source", "tests/env/candidates/vector_add/compile_error.cu", "--checks", "512"]
        env = {"PYTHONPATH": "clients/python"}
        stamp = bench_docs.take_stamp(ROOT, client, env)
        out = subprocess.run(client, cwd=ROOT, env=dict(os.environ, **env), capture_output=True, text=True)
        sys.stdout.write(out.stdout + out.stderr)
        if out.returncode != 0:
            return None, f"bench_concurrency.py: exit status {out.returncode}"
        rows = [l for l in out.stdout.splitlines() if l.startswith("|")]
        if not rows:
            return None, "bench_concurrency.py printed no table"
        extra = [f"- **Server:** `{' '.join(server)}` (started first; its port in --url)"]
        return {"stamp": stamp, "extra": extra, "data": {"table": rows}}, None
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
        shutil.rmtree(work, ignore_errors=True)


RUNNERS = {"gbench": run_gbench, "serve": run_serve, "leap_bench": run_leap_bench, "clients": run_clients}


def result_path(b):
    return os.path.join(ROOT, MICRO_OUT, f"{b.name}.result.json")


def render_result(b, result):
    """docs/bench/<name>.md's text from what a run recorded (its stamp and figures)."""
    if "markdown" in result:
        return result["markdown"]
    return (bench_docs.render_stamp(result["stamp"], "scripts/bench_tables.py", result.get("extra", ()))
            + "\n" + b.renderer(result["data"]))


def write_table(b, result):
    """Writes docs/bench/<name>.md; the problems with it (then nothing is written)."""
    text = render_result(b, result)
    problems = bench_docs.stamp_problems(text)
    if problems:
        return [f"{b.name}: {p}" for p in problems]
    path = os.path.join(ROOT, bench_docs.GENERATED_DIR, f"{b.name}.md")
    with open(path, "w") as f:
        f.write(text)
    print(f"== {b.name}: wrote {rel(path)}", flush=True)
    return []


def selected(args):
    names = args.names or [b.name for b in BENCHES]
    unknown = [n for n in names + args.skip if n not in {b.name for b in BENCHES}]
    if unknown:
        raise SystemExit(f"bench_tables: unknown benchmark(s) {', '.join(unknown)}; known: "
                         f"{', '.join(b.name for b in BENCHES)}")
    return [b for b in BENCHES if b.name in names and b.name not in args.skip]


def cmd_run(args):
    os.makedirs(os.path.join(ROOT, MICRO_OUT), exist_ok=True)
    os.makedirs(os.path.join(ROOT, bench_docs.GENERATED_DIR), exist_ok=True)
    failures = []
    for b in selected(args):
        print(f"== {b.name}: {b.what} (about {b.seconds} s on 2 cores)", flush=True)
        t0 = time.monotonic()
        result, err = RUNNERS[b.kind](b, args.build)
        if err:
            failures.append(f"{b.name}: {err}")
            print(f"bench_tables: {b.name} failed: {err}", file=sys.stderr)
            continue
        with open(result_path(b), "w") as f:
            json.dump(result, f)
        failures += write_table(b, result)
        print(f"== {b.name}: {time.monotonic() - t0:.0f} s", flush=True)
    problems = bench_docs.refresh(ROOT)
    for p in failures + problems:
        print(f"bench_tables: {p}", file=sys.stderr)
    return 1 if failures or problems else 0


def cmd_render(args):
    """Re-renders docs/bench/NAME.md from the last run's recorded result (runs/bench/micro/), for
    a change of layout: same figures, same stamp; no benchmark runs."""
    failures = []
    for b in selected(args):
        try:
            with open(result_path(b)) as f:
                failures += write_table(b, json.load(f))
        except OSError:
            failures.append(f"{b.name}: no recorded result in {MICRO_OUT}/ (run it first)")
    failures += bench_docs.refresh(ROOT)
    for p in failures:
        print(f"bench_tables: {p}", file=sys.stderr)
    return 1 if failures else 0


def cmd_refresh(args):
    problems = bench_docs.refresh(ROOT)
    for p in problems:
        print(f"bench_tables: {p}", file=sys.stderr)
    return 1 if problems else 0


def cmd_check(args):
    problems = bench_docs.check(ROOT)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print("bench tables: every documented table is generated, stamped and up to date "
              f"({len(os.listdir(os.path.join(ROOT, bench_docs.GENERATED_DIR)))} files in "
              f"{bench_docs.GENERATED_DIR}/)")
    return 1 if problems else 0


def cmd_list(args):
    for b in BENCHES:
        if b.kind == "gbench":
            cmd = f"{args.build}/bench/{b.binary} {' '.join(b.args)}".strip()
        elif b.kind == "serve":
            cmd = f"{args.build}/bench/{b.binary} --json ..."
        elif b.kind == "leap_bench":
            cmd = f"{args.build}/leap bench --config {b.scenario} --out runs/bench/..."
        else:
            cmd = "clients/python/examples/bench_concurrency.py against leap serve"
        print(f"{b.name:17} ~{b.seconds:4} s  {b.what}\n{'':25}{cmd}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="the build directory (default: build)")
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="run benchmarks, write docs/bench/NAME.md, refresh the docs")
    r.add_argument("names", nargs="*", help="benchmarks to run (default: all; see list)")
    r.add_argument("--skip", nargs="*", default=[], help="benchmarks not to run")
    g = sub.add_parser("render", help="re-render docs/bench/NAME.md from the last run's recorded result")
    g.add_argument("names", nargs="*", help="benchmarks to render (default: all)")
    g.add_argument("--skip", nargs="*", default=[], help="benchmarks not to render")
    sub.add_parser("refresh", help="copy docs/bench/*.md into the docs' marked blocks")
    sub.add_parser("check", help="fail when a documented table is not generated, stamped and current")
    sub.add_parser("list", help="the benchmarks and their commands")
    args = ap.parse_args(argv)
    return {"run": cmd_run, "render": cmd_render, "refresh": cmd_refresh, "check": cmd_check, "list": cmd_list}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
