"""Test helper: a `leap serve` process on a loopback port, started and stopped by a test.

Starts `leap serve` with `serve.listen=127.0.0.1:0` and the CPU backend, waits for its
"serving on http://127.0.0.1:PORT" line, and on stop sends SIGTERM (then SIGKILL after 30 s), so
no process outlives the test. Single-threaded use from one test.
"""
import os
import re
import signal
import subprocess
import tempfile
import threading
import time


class LeapServer:
    def __init__(self, leap_binary, checkpoint=None, extra_sets=(), startup_seconds=120):
        self.dir = tempfile.mkdtemp(prefix="leap-pyserve-")
        os.chmod(self.dir, 0o755)  # candidates run as another uid when leap runs as root
        cache = os.environ.get("LEAP_TEST_CACHE_DIR", os.path.join(self.dir, "cache"))
        args = [str(leap_binary)]
        for s in ["environment.cache_dir=" + cache, "environment.backend=cpu", "serve.listen=127.0.0.1:0",
                  "compiler.workers=1", "executor.workers=1", "environment.work_dir=" + self.dir + "/work",
                  *extra_sets]:
            args += ["--set", s]
        args.append("serve")
        if checkpoint:
            args += ["--checkpoint", str(checkpoint)]
        self.log = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True, errors="replace")
        self.port = None
        found = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.log.append(line)
                m = re.search(r"serving on https?://127\.0\.0\.1:(\d+)", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + startup_seconds
        while not found.wait(0.2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("leap serve did not start:\n" + "".join(self.log))

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.reader.join(5)
        subprocess.run(["rm", "-rf", self.dir], check=False)
