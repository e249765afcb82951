#!/usr/bin/env bash
# expect_output.sh CODE REGEX -- COMMAND...: passes iff COMMAND exits with CODE and its stdout and
# stderr together match REGEX (an extended regular expression, matched against the whole output:
# `.` also matches a newline, as in CTest's PASS_REGULAR_EXPRESSION, which ignores the exit code).
set -u
code=$1; regex=$2; shift 3
out=$("$@" 2>&1); rc=$?
if [ "$rc" != "$code" ]; then echo "expected exit code $code, got $rc; output:"; echo "$out" | tail -n 40; exit 1; fi
if ! grep -Ezq -- "$regex" <<<"$out"; then echo "output does not match /$regex/:"; echo "$out" | tail -n 40; exit 1; fi
echo "ok: exit $rc, output matches /$regex/"
