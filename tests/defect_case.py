"""The harness of the check_*_defects.py scripts (CASE BIN_DIR SOURCE_DIR WORK_DIR): a failure
names the case and exits 1, a command's exit code is checked, a program is found in BIN_DIR."""
import os
import subprocess
import sys


class DefectCase:
    def __init__(self, name, bin_dir):
        self.name, self.bin_dir = name, bin_dir

    def fail(self, msg):
        print(f"FAIL: {self.name}: {msg}")
        sys.exit(1)

    def run(self, cmd, want_rc=0, **kw):
        """Runs cmd (5 minutes at most unless timeout=); fails the case when its exit code is not
        want_rc (None: any)."""
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)
        if want_rc is not None and p.returncode != want_rc:
            self.fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {want_rc}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
        return p

    def exe(self, name):
        return os.path.join(self.bin_dir, name)
