#!/usr/bin/env bash
# Prints the path of a Temporal CLI, building one when none is found. Used by `npm start`, the
# tests and .ci/run alike. Order: TEMPORAL_CLI_PATH; `temporal` on PATH; a copy built earlier
# into .tools/bin; a `go install` of v1.5.1 (the newest version without a replace directive).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=v1.5.1
tools_bin="$root/.tools/bin"

if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
  if [ -x "$TEMPORAL_CLI_PATH" ]; then echo "$TEMPORAL_CLI_PATH"; exit 0; fi
  echo "TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not an executable file" >&2
  exit 1
fi
if command -v temporal >/dev/null 2>&1; then command -v temporal; exit 0; fi
if [ -x "$tools_bin/temporal" ]; then echo "$tools_bin/temporal"; exit 0; fi

if command -v go >/dev/null 2>&1; then
  echo "Building the Temporal CLI $version from source into .tools/bin (one time, takes a few minutes)..." >&2
  mkdir -p "$tools_bin"
  # -x shows each build step, so a slow build is visibly alive.
  if GOBIN="$tools_bin" GOFLAGS=-mod=mod go install -x "github.com/temporalio/cli/cmd/temporal@$version" 2>&1 \
    | grep --line-buffered -E '^(go: downloading|WORK=|mkdir -p \$WORK/b[0-9]+/$)' \
    | awk '/go: downloading/ { print; fflush(); next } { n++; if (n % 50 == 0) { printf "  ... %d build steps\n", n; fflush() } }' >&2 \
    && [ -x "$tools_bin/temporal" ]; then
    echo "Temporal CLI built: $tools_bin/temporal" >&2
    echo "$tools_bin/temporal"
    exit 0
  fi
  echo "go install of the Temporal CLI failed." >&2
fi

cat >&2 <<'MSG'
No Temporal CLI found. Either:
  - install Go (1.22+) and run this again, so it can build github.com/temporalio/cli@v1.5.1; or
  - on a machine with internet, install it with Temporal's official installer
    (curl -sSf https://temporal.download/cli.sh | sh) and put it on PATH; or
  - set TEMPORAL_CLI_PATH to an existing temporal binary.
MSG
exit 1
