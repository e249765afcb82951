"""Shared by cfr-serve's checks: start the server on a free loopback port, stop it with SIGINT."""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


def fail(case, what):
    print(f"FAIL: {case}: {what}")
    sys.exit(1)


class Server:
    """cfr-serve --port 0 as a context manager; .url is its address. On exit it sends SIGINT and
    checks the exit code is 0 (Ctrl-C closes connections and exits 0)."""

    def __init__(self, bin_dir, work, extra=()):
        self.args = [os.path.join(bin_dir, "cfr-serve"), "--port", "0", "--player-logs", work, *extra]
        self.log_path = os.path.join(work, "serve.log")

    def __enter__(self):
        # Its request log goes to a file: a pipe nobody reads would block the server once full.
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 30
        while True:
            first = open(self.log_path).readline()
            if "listening on http://" in first:
                break
            if self.proc.poll() is not None or time.time() > deadline:
                self.proc.kill()
                fail("server", f"cfr-serve did not start: {open(self.log_path).read()!r}")
            time.sleep(0.05)
        self.url = first.split("listening on ")[1].split("/ ")[0].rstrip("/")
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("server", "cfr-serve did not exit within 30 s of SIGINT")
        self.log.close()
        if exc[0] is None and self.proc.returncode != 0:
            fail("server", f"cfr-serve exited {self.proc.returncode} after SIGINT (expected 0)")
        return False

    def log_text(self):
        return open(self.log_path).read()

    def call(self, method, path, body=None, raw=None, headers=None):
        """(status, parsed JSON or text) of one request; never raises for an HTTP error status."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, method=method, data=data,
                                     headers=headers or {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text
