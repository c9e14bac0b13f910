"""serve_harness: `cky serve` started on a free loopback port, for the load test
(tools/serve-load), the fuzzer (tools/serve-fuzz) and the Python tests (python/tests).

    with Server(cky, grammar, "--engine", "cpu") as s:
        s.url            # http://127.0.0.1:PORT
        s.resident()     # the resident set, bytes
    # leaving the block sends SIGTERM and waits for the exit (s.returncode)
"""
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request


class ServerError(Exception):
    pass


class Server:
    def __init__(self, cky, grammar, *options, env=None, start_timeout=600):
        self.log_file = tempfile.NamedTemporaryFile(prefix="cky-serve-", suffix=".log",
                                                    delete=False)
        self.proc = subprocess.Popen([cky, "serve", "-g", grammar, "--port", "0", *options],
                                     stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, env=env)
        self.returncode = None
        deadline = time.monotonic() + start_timeout  # the first run compiles the kernels
        while True:
            m = re.search(r"listening on (http://[^/ ]+)/", self.log())
            if m:
                self.url = m.group(1)
                self.port = int(self.url.rsplit(":", 1)[1])
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise ServerError("cky serve did not start:\n" + self.log())
            time.sleep(0.05)

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        with open(self.log_file.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def resident(self):
        """The server's resident set in bytes (from /proc)."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise ServerError("no VmRSS")

    def get(self, path, token=None):
        """The JSON of GET path (raises urllib's HTTPError for a status other than 2xx)."""
        req = urllib.request.Request(self.url + path)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def stop(self, sig=signal.SIGTERM, timeout=300):
        """Send sig, wait for the exit; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise ServerError("cky serve did not stop within %d s:\n%s" % (timeout,
                                                                               self.log()))
        self.returncode = self.proc.returncode
        return self.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        try:
            self.stop()
        finally:
            self.kill()
            os.unlink(self.log_file.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
