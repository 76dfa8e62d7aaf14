#!/usr/bin/env bash
# Fuzzes the HTTP API from its own OpenAPI document with Schemathesis, against the real stack
# (test/fuzz/serve.ts), authenticated with a real API key and session cookie.
# Env: FUZZ_MAX_EXAMPLES (default 200), FUZZ_SEED (default: a random one, printed), FUZZ_PORT
# (default: a free port).
# Counts: each API operation of each run (a JUnit test case of Schemathesis: every example, phase
# and check of that operation) passes or fails as a whole; the stateful phase is one more case.
# They are printed, and appended to TEST_SUMMARY_FILE when set (.ci/run sums them).
set -euo pipefail
cd "$(dirname "$0")/../.."

schemathesis=$(bash scripts/schemathesis.sh --find)
work=$(mktemp -d)
info="$work/info.json"
log="$work/serve.log"
# Its own session and process group, so cleanup reaches PostgreSQL and Temporal under it too.
FUZZ_INFO="$info" setsid node --import tsx test/fuzz/serve.ts >"$log" 2>&1 &
server=$!
cleanup() {
  kill -TERM -- "-$server" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$server" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 300); do
  [ -s "$info" ] && break
  if ! kill -0 "$server" 2>/dev/null; then cat "$log" >&2; echo "fuzz server failed to start" >&2; exit 1; fi
  sleep 1
done
[ -s "$info" ] || { cat "$log" >&2; echo "fuzz server did not come up" >&2; exit 1; }

field() { node -e "process.stdout.write(String(require(process.argv[1])[process.argv[2]]))" "$info" "$1"; }
port=$(field port)
limited_port=$(field limitedPort)
key=$(field apiKey)
cookie=$(field cookie)
base="http://127.0.0.1:$port"

export FUZZ_API_KEY="$key"
# The stateful phase's chains: fresh idempotency keys, plans to decide, polls that wait for a run
# to settle (test/fuzz/hooks.py).
export SCHEMATHESIS_HOOKS="$PWD/test/fuzz/hooks.py"
export FUZZ_SESSION_TOKEN="${cookie#*=}"
# count NAME JUNIT_FILE: one `name<TAB>passed<TAB>failed<TAB>skipped` line, as the mocha suites write,
# and each failed operation's name to TEST_FAILURES_FILE when set.
count() {
  [ -s "$2" ] || return 0
  "$(dirname "$schemathesis")/python" - "$1" "$2" <<'PY' | tee -a "${TEST_SUMMARY_FILE:-/dev/null}"
import os
import sys
import xml.etree.ElementTree as ET

name, path = sys.argv[1:]
passed = failed = skipped = 0
failures = []
for case in ET.parse(path).iter("testcase"):
    problem = case.find("failure")
    if problem is None:
        problem = case.find("error")
    if problem is not None:
        failed += 1
        first = (problem.get("message") or problem.text or "").strip().split("\n")[0][:300]
        failures.append(f"{name}: {case.get('name')}\n    {first}\n")
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print(f"{name}\t{passed}\t{failed}\t{skipped}")
failures_file = os.environ.get("TEST_FAILURES_FILE")
if failures_file and failures:
    with open(failures_file, "a") as out:
        out.writelines(failures)
PY
}

# A new seed each run, so runs together cover more than one would; printed, to repeat a failure.
seed="${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
echo "fuzz: seed $seed (FUZZ_SEED=$seed bash test/fuzz/run.sh repeats this run)"

# fuzz [schemathesis options]: against $target (the main gateway unless set).
fuzz() {
  local at="${target:-$base}"
  "$schemathesis" --config-file test/fuzz/schemathesis.toml run "$at/api/v1/openapi.json" \
    --url "$at" \
    --checks all \
    --max-examples "${FUZZ_MAX_EXAMPLES:-200}" \
    --request-timeout 30 \
    --workers 1 \
    --seed "$seed" \
    --suppress-health-check all \
    "$@"
}

# Every operation but the two sign-outs first (they would end the session the others use), then those.
status=0
fuzz --phases examples,coverage,fuzzing,stateful --exclude-operation-id signOut --exclude-operation-id signOutEverywhere \
  --report junit --report-junit-path "$work/main.xml" || status=$?
fuzz --phases examples,coverage,fuzzing --include-operation-id signOut --include-operation-id signOutEverywhere \
  --report junit --report-junit-path "$work/sign-out.xml" || status=$?
# Sends at the default limit (SEND_RATE_LIMIT_PER_MINUTE, 60) meet it within the pass: each 429
# must carry the headers the document declares for it (Retry-After; RateLimit-* where only the
# rate limit can refuse).
FUZZ_API_KEY="$(field limitedApiKey)" target="http://127.0.0.1:$limited_port" FUZZ_MAX_EXAMPLES=100 fuzz --phases fuzzing \
  --include-operation-id sendTurn --include-operation-id listChats \
  --report junit --report-junit-path "$work/limits.xml" || status=$?
count "fuzz (operations)" "$work/main.xml"
count "fuzz (sign-out)" "$work/sign-out.xml"
count "fuzz (rate limits)" "$work/limits.xml"

if [ "$status" -ne 0 ]; then
  echo "--- server log (tail) ---" >&2
  tail -n 50 "$log" >&2 || true
fi
exit "$status"
