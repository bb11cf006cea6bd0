"""Markdown tables from the micro-benchmarks' results (scripts/bench_tables.py runs them).

Each render_* function takes what one command produced (Google Benchmark's JSON, or
bench_serve's --json object) and returns the Markdown that follows the stamp in
docs/bench/<name>.md. Where the docs compare paths, the ratios come from the same run, side by
side. Benchmarks a run skipped with an error show their message instead of figures. Pure;
standard library only.
"""
import math

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


# --- Google Benchmark results ------------------------------------------------------------------

def gbench_rows(data):
    """run_name -> result: the median aggregate where the run repeated, else the one run."""
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[b["run_name"]] = b
        else:
            rows.setdefault(b["run_name"], b)
    return rows


def gbench_aggregates(data, run_name):
    """aggregate name -> result, for one repeated benchmark."""
    return {b["aggregate_name"]: b for b in data.get("benchmarks", [])
            if b.get("run_type") == "aggregate" and b.get("run_name") == run_name}


def find(rows, prefix):
    """The first result whose name starts with `prefix` (benchmark names carry suffixes such as
    /min_time:2.000/real_time), or None."""
    for name, b in rows.items():
        if name == prefix or name.startswith(prefix + "/"):
            return b
    return None


def ns(b, key="cpu_time"):
    return b[key] * UNIT_NS[b.get("time_unit", "ns")]


def failed(b):
    if b is None:
        return "not run"
    if b.get("error_occurred") or b.get("skipped"):
        return "not run: " + str(b.get("error_message", "skipped")).replace("|", "/")
    return None


def sig(x, digits=3):
    """x with `digits` significant digits, never in exponent form."""
    if x == 0 or not math.isfinite(x):
        return f"{x:.0f}" if math.isfinite(x) else "-"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:.{decimals}f}"


def duration(ns_value):
    """A duration in the unit that keeps it readable: 14 ns, 0.38 us, 1.2 ms, 3.1 s."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns_value) >= scale:
            return f"{sig(ns_value / scale)} {unit}"
    return f"{sig(ns_value)} ns"


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


# --- one renderer per benchmark ----------------------------------------------------------------

def render_messaging(data):
    rows = gbench_rows(data)
    kinds = [("request_small", "request/response, an (atom, int32) message"),
             ("request_compile_2kb", "request/response, a compile request with a 2 KB source"),
             ("request_generate_8x300", "request/response, a generate reply of 8 x 300 tokens"),
             ("ping_pong_small", "fire-and-forget ping-pong, one round trip (two messages)")]
    out = []
    for key, what in kinds:
        cells = []
        for where in ("local", "middleman"):
            b = find(rows, f"{key}/{where}")
            if failed(b):
                cells.append((failed(b), None))
                continue
            t = b["per_round_trip"] * 1e9 if "per_round_trip" in b else ns(b, "real_time")
            cells.append((duration(t), t))
        ratio = f"{cells[1][1] / cells[0][1]:.1f}x" if cells[0][1] and cells[1][1] else "-"
        out.append([what, cells[0][0], cells[1][0], ratio])
    return ("Wall time of one round trip between CAF actors: local (one actor system) against the "
            "loopback middleman (serialised, over TCP), side by side in one run.\n\n"
            + table(["round trip", "local", "middleman", "middleman / local"], out))


def render_algo(data):
    rows = gbench_rows(data)
    families = [("tournament/mixed", "rank tournament, mixed group", "per_pair"),
                ("tournament/all_solved", "rank tournament, all solved (tie-breaks)", "per_pair"),
                ("advantages/rank", "advantages: rank", None),
                ("advantages/grpo", "advantages: grpo", None),
                ("advantages/drgrpo", "advantages: drgrpo", None),
                ("advantages/trloo", "advantages: trloo", None),
                ("advantages/discounted", "advantages: discounted", None),
                ("dcp/decide_call", "DCP: one decide() call", None),
                ("dcp/group_turn1", "DCP: a group's turn-1 verdicts, decide() after each", "calls_per_group")]
    out = []
    for key, what, extra in families:
        cells = [what]
        for g in (8, 16, 64):
            b = rows.get(f"{key}/G:{g}")
            if failed(b):
                cells.append(failed(b))
                continue
            cell = duration(ns(b))
            if extra == "per_pair":
                cell += f" ({duration(b['per_pair'] * 1e9)} a pair)"
            elif extra == "calls_per_group":
                cell += f" ({b['calls_per_group']:.1f} calls)"
            cells.append(cell)
        out.append(cells)
    return ("CPU time of one call on groups of G trajectories (fixed seeds).\n\n"
            + table(["computation", "G = 8", "G = 16", "G = 64"], out))


FEATURES = {
    "feature/volatile_tail": "256-thread block reduction ending in the legacy volatile tail, against `__shfl_down_sync`",
    "feature/volatile_access": "one lockstep volatile shared access (`vptr`), against a plain volatile access",
    "feature/cg_tile_reduce": "`cg::reduce` over a 32-thread tile, against a `__shfl_xor_sync` loop",
    "feature/coalesced_threads": "`coalesced_threads()` and a group shfl, against a plain `__shfl_sync` broadcast",
    "feature/cp_async": "tiles staged with `cp.async`, against plain `float4` copies",
    "feature/rewrite_if": "the rewriter on 400 lines with `#if` blocks to evaluate, against the same lines without directives",
    "shared_volatile/struct_tail": "a struct reduction's volatile tail through `vptr<struct>`, against a float's",
    "shared_volatile/struct_access": "one struct element through `vptr<struct>`, against one `vptr<float>` access",
    "shared_volatile/rewrite_extern": "the rewriter on 320 `extern __shared__` declarations, against plain `__shared__` arrays",
    "half/half2_fma": "64 `__hfma2` on `half2`, against 64 `fmaf` pairs on `float2`",
    "half/half2_add": "64 `__hadd2` on `half2`, against 64 `float2` adds",
    "half/bf162_fma": "64 `__hfma2` on `__nv_bfloat162`, against 64 `fmaf` pairs",
    "half/convert": "`float2` -> `half2` -> `float2` round trips, against `float2` copies",
    "async_masks/cp_async_groups": "pending `cp.async` copies performed at `wait_group 0`, against an immediate `float4` store",
    "async_masks/runtime_mask_shfl": "`__activemask()` then a 5-step `__shfl_xor_sync` reduction, against the full mask",
    "async_masks/tile64_reduce": "`cg::reduce` over a 64-thread tile (a barrier of two warps), against a 32-thread tile",
}


def render_emulation(data):
    rows = gbench_rows(data)
    barrier = []
    for block in (32, 256, 1024):
        b = rows.get(f"emu/barrier_cost/block:{block}")
        loop = rows.get(f"emu/launch_no_barrier_loop/block:{block}")
        if failed(b):
            barrier.append([block, failed(b), "", "", "", ""])
            continue
        barrier.append([block, f"{sig(b['us_launch_barrier'])} us", f"{sig(b['us_launch_no_barrier'])} us",
                        f"{b['ratio']:.1f}x", f"{b['ns_per_barrier_thread']:.0f} ns",
                        duration(ns(loop)) if not failed(loop) else failed(loop)])
    features = []
    for key, what in FEATURES.items():
        b = rows.get(f"emu/{key}")
        if failed(b):
            features.append([f"`{key}`", what, failed(b), "", "", ""])
            continue
        unit = ""
        if "ns_per_op_16bit" in b:
            unit = f"{b['ns_per_op_16bit']:.1f} ns an op (float {b['ns_per_op_float']:.1f})"
        else:
            for counter, value in sorted(b.items()):
                if counter.startswith("ns_per_"):
                    per = counter[len("ns_per_"):].replace("_thread", " per thread").replace("_", " ")
                    unit = f"{value:+.1f} ns per {per}"
        features.append([f"`{key}`", what, f"{sig(b['us_feature'])} us", f"{sig(b['us_baseline'])} us",
                         f"{b['ratio']:.2f}x", unit])
    return ("`__syncthreads()` in a one-block launch of 64 steps, thread CPU time of the two kernels "
            "timed alternately:\n\n"
            + table(["block", "with 64 barriers", "without (same fibers)", "ratio",
                     "per barrier per thread", "without, plain loop"], barrier)
            + "\nEach emulated feature against the same work without it, timed alternately in one run "
              "(thread CPU time per launch; ratio = feature / baseline):\n\n"
            + table(["benchmark", "feature, against baseline", "feature", "baseline", "ratio", "cost"],
                    features, ["---", "---", "---:", "---:", "---:", "---"]))


def render_sampling(data):
    rows = gbench_rows(data)
    nocache = {}
    for g, new in ((8, 32), (8, 128)):
        b = find(rows, f"BM_sample_group_nocache/G:{g}/new:{new}")
        if not failed(b):
            nocache[(g, new)] = b["tokens_per_s"]
    out = []
    for kind, shapes in (("cached", ((1, 128), (8, 32), (8, 128), (32, 128))),
                         ("nocache", ((8, 32), (8, 128)))):
        for g, new in shapes:
            b = find(rows, f"BM_sample_group_{kind}/G:{g}/new:{new}")
            what = "KV cache (`sample_group`)" if kind == "cached" else "no cache (full forward per token)"
            if failed(b):
                out.append([what, g, new, failed(b), "", "", ""])
                continue
            vs = (f"{b['tokens_per_s'] / nocache[(g, new)]:.0f}x"
                  if kind == "cached" and (g, new) in nocache else "")
            out.append([what, g, new, f"{b['tokens_per_s']:.0f}", duration(ns(b, "real_time")),
                        duration(ns(b)), vs])
    return ("Batched sampling for the quickstart model (prompt 300 tokens, random weights, no eos), "
            "on the CPU's default decode path (CPU: the calling thread's):\n\n"
            + table(["sampling", "G", "new tokens", "tokens/s", "wall a call", "CPU a call",
                     "vs no cache"], out, ["---", "---:", "---:", "---:", "---:", "---:", "---:"]))


DECODE_PATHS = {0: "libtorch (`forward_cached`)", 1: "portable", 2: "avx2", 3: "avx512"}


def render_decode_paths(data, held_to_sse=False):
    rows = gbench_rows(data)
    found = {p: find(rows, f"BM_sample_group_path/path:{p}/G:8/new:128") for p in DECODE_PATHS}
    base = found[0] if not failed(found[0]) else None
    reps = max((b.get("repetitions", 1) for b in data.get("benchmarks", [])), default=1)
    out = []
    for p, what in DECODE_PATHS.items():
        b = found[p]
        if b is None:
            continue  # not selected by the run's filter
        if failed(b):
            out.append([what, failed(b), "", "", ""])
            continue
        vs_t = f"{b['tokens_per_s'] / base['tokens_per_s']:.1f}x" if base else "-"
        vs_c = f"{ns(base) / ns(b):.1f}x" if base else "-"
        out.append([what, f"{b['tokens_per_s']:.0f}", f"{ns(b) / 1e6:.0f}", vs_t, vs_c])
    sse = (", LibTorch held to SSE as on a CPU with neither AVX2 nor AVX-512 (`ATEN_CPU_CAPABILITY=default "
           "OPENBLAS_CORETYPE=Nehalem`)" if held_to_sse else "")
    return (f"Quickstart model, prompt 300 tokens, 128 new tokens, G = 8, the paths in one process{sse} "
            f"({'medians of ' + str(reps) + ' repetitions' if reps > 1 else 'one repetition'}; CPU: the "
            "calling thread's):\n\n"
            + table(["path", "tokens/s", "CPU ms a call", "vs LibTorch (tokens/s)", "vs LibTorch (CPU)"], out))


def render_tokenizer(data):
    rows = gbench_rows(data)
    what = [("BM_EncodeWarmCache", "encode, warm word cache"), ("BM_EncodeColdCache", "encode, cold word cache"),
            ("BM_Decode", "decode"), ("BM_Train4096", "train a 4096-token vocabulary")]
    out, notes = [], []
    for key, label in what:
        b = find(rows, key)
        if failed(b):
            out.append([label, failed(b), "", ""])
            continue
        if "corpus_MB" in b:
            label += f" on {b['corpus_MB']:.1f} MB"
        if "bytes_per_token" in b:
            notes.append(f"{b['bytes_per_token']:.2f} bytes a token with a {b['vocab']:.0f}-token vocabulary")
        out.append([label, f"{b['bytes_per_second'] / 1e6:.0f}", duration(ns(b, "real_time")), duration(ns(b))])
    return ("Byte-level BPE on every file under tasks/ (encode, decode), trained on the CUDA headers"
            + (f"; {notes[0]}" if notes else "") + ":\n\n"
            + table(["operation", "MB/s", "wall a call", "CPU a call"], out))


def render_learner(data):
    rows = gbench_rows(data)
    out = []
    for p in (200, 500):
        b = find(rows, f"BM_grpo_step/{p}")
        if failed(b):
            out.append([f"~{p}", failed(b), "", "", ""])
            continue
        out.append([f"~{p}", f"{ns(b, 'real_time') / 1e9:.2f}", f"{ns(b) / 1e9:.2f}",
                    f"{b['completion_tok_per_s']:.0f}", f"{b['all_tok_per_s']:.0f}"])
    heap = data.get("context", {}).get("allocator", "leap (tuned)")
    return ("One GRPO learner step (forward, loss, backward, AdamW) of 32 quickstart-shaped sequences, "
            f"completions of 60-320 tokens, micro batch 8; heap: {heap} (CPU: the calling thread's):\n\n"
            + table(["prompt tokens", "s a step", "CPU s a step", "completion tokens/s", "all tokens/s"], out))


def render_startup(data):
    out = []
    for verb, what in (("version", "`leap version`"), ("check_cached", "cache-hit `leap check --task relu --reference`")):
        for exe in ("leap", "leap_torch"):
            run = next((b["run_name"] for b in data.get("benchmarks", [])
                        if b.get("run_name", "").startswith(f"bm_start/{verb}/{exe}/")), None)
            agg = gbench_aggregates(data, run) if run else {}
            if not all(k in agg for k in ("min", "median", "max")):
                out.append([what, exe.replace("_", "-"), "not run", "", ""])
                continue
            out.append([what, exe.replace("_", "-")] + [f"{ns(agg[k], 'real_time') / 1e6:.1f}" for k in ("min", "median", "max")])
    return ("Wall time from process start to exit, 10 runs each:\n\n"
            + table(["command", "binary", "min ms", "median ms", "max ms"], out,
                    ["---", "---", "---:", "---:", "---:"]))


def render_compile(data):
    rows = gbench_rows(data)
    b = find(rows, "BM_compile_side_by_side")
    if failed(b):
        return failed(b) + "\n"
    alts = sorted({k[:-len("_cpu_s")] for k in b if k.endswith("_cpu_s") and not k.endswith("_err_cpu_s")},
                  key=lambda a: (a != "baseline", a))
    out = [[a, f"{b[a + '_cpu_s']:.3f}", f"{b[a + '_cpu_ratio']:.3f}", f"{b[a + '_wall_s']:.3f}",
            f"{b[a + '_err_cpu_s']:.3f}", "yes" if b[a + "_same"] == 1 else "**no**"] for a in alts]
    return ("A cold build of every bundled candidate on the CPU backend with each alternative, in a "
            "rotating order (means per candidate):\n\n"
            + table(["alternative", "CPU s, built", "vs baseline", "wall s, built", "CPU s, rejected by nvcc",
                     "same outcomes"], out))


def render_serve(report):
    h = report.get("health", {})
    out = []
    for r in report.get("rows", []):
        if r["clients"] == 1:
            vs = f"p50 latency {r['p50_ms'] / max(r['in_process_p50_ms'], 1e-9):.2f}x"
        else:
            vs = f"throughput {r['checks_per_second'] / max(r['in_process_checks_per_second'], 1e-9):.2f}x"
        out.append([r["checks"], r["clients"], f"{r['checks_per_second']:.2f}", f"{r['p50_ms']:.0f}",
                    f"{r['p99_ms']:.0f}", f"{r['in_process_checks_per_second']:.2f}", vs, r["failed"]])
    return (f"`leap serve` on loopback (backend {report.get('backend')}, `{report.get('task')}`, a fresh "
            "build cache), each client one keep-alive connection, against the in-process evaluator on "
            f"the same candidates in the same run. `GET /health` on one connection: p50 "
            f"{h.get('p50_ms', 0):.3f} ms, p99 {h.get('p99_ms', 0):.3f} ms, "
            f"{h.get('requests_per_second', 0):.0f} requests/s.\n\n"
            + table(["checks", "clients", "checks/s", "p50 ms", "p99 ms", "in-process checks/s",
                     "HTTP vs in-process", "failed"], out, ["---", "---:", "---:", "---:", "---:", "---:", "---", "---:"]))


def render_clients(data):
    return ("N concurrent episodes, each a loop of checks one after another, 512 checks in all per row, "
            "every check a build-cache hit: this measures the client, HTTP and the server's request "
            "path, not the compiler. Columns: the asyncio client with N coroutines; the blocking client "
            "with N threads; the blocking client called from N coroutines on one event loop. Each row "
            "is timed after an untimed round of the same shape.\n\n" + "\n".join(data["table"]) + "\n")
