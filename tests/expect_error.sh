#!/usr/bin/env bash
# expect_error.sh CODE REGEX -- COMMAND...: passes iff COMMAND exits with CODE and its stderr
# matches REGEX (an extended regular expression). Used for bad-input tests of the apps.
set -u
code=$1; regex=$2; shift 3
err=$("$@" 2>&1 >/dev/null); rc=$?
if [ "$rc" != "$code" ]; then echo "expected exit code $code, got $rc; stderr:"; echo "$err"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$err"; then echo "stderr does not match /$regex/:"; echo "$err"; exit 1; fi
echo "ok: exit $rc: $err" | head -3
