#!/usr/bin/env bash
# Prints the path of a tool the project builds from a Go module when no copy is found.
# Usage: go-tool.sh [--find] NAME MODULE@VERSION ENV_VAR "how to install it otherwise"
# Order: $ENV_VAR; NAME on PATH; a copy built earlier into .tools/bin; `go install MODULE@VERSION`
# into .tools/bin, showing progress, since such a build takes minutes. With --find (what tests
# use: they never build anything) it stops before building and names the command that builds.
# NAME may differ from the name `go install` gives the binary (the last element of the module's
# path: Temporal's server and UI server are both `cmd/server`); the build is then renamed to NAME.
set -euo pipefail
find_only=false
if [ "${1:-}" = --find ]; then find_only=true; shift; fi
name=$1
module=$2
env_var=$3
otherwise=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools_bin="$root/.tools/bin"

override=${!env_var:-}
if [ -n "$override" ]; then
  if [ -x "$override" ]; then echo "$override"; exit 0; fi
  echo "$env_var=$override is not an executable file" >&2
  exit 1
fi
if command -v "$name" >/dev/null 2>&1; then command -v "$name"; exit 0; fi
if [ -x "$tools_bin/$name" ]; then echo "$tools_bin/$name"; exit 0; fi
if $find_only; then
  echo "No $name found (looked at \$$env_var, PATH and .tools/bin): run \`npm run test:setup\` to build it (npm test runs it first)." >&2
  exit 1
fi

if command -v go >/dev/null 2>&1; then
  echo "Building $name ($module) from source into .tools/bin (one time, takes a few minutes)..." >&2
  built_name=$(basename "${module%@*}")
  # Each build gets its own GOBIN, so two builds of different `cmd/server` never meet.
  gobin="$tools_bin/.build-$name"
  mkdir -p "$gobin"
  # -x shows each build step, so a slow build is visibly alive.
  if GOBIN="$gobin" GOFLAGS=-mod=mod go install -x "$module" 2>&1 \
    | grep --line-buffered -E '^(go: downloading|WORK=|mkdir -p \$WORK/b[0-9]+/$)' \
    | awk '/go: downloading/ { print; fflush(); next } { n++; if (n % 50 == 0) { printf "  ... %d build steps\n", n; fflush() } }' >&2 \
    && mv "$gobin/$built_name" "$tools_bin/$name" && rmdir "$gobin" && [ -x "$tools_bin/$name" ]; then
    echo "$name built: $tools_bin/$name" >&2
    echo "$tools_bin/$name"
    exit 0
  fi
  echo "go install of $module failed." >&2
fi

printf 'No %s found. Either:\n  - install Go and run this again, so it can build %s; or\n  - %s; or\n  - set %s to an existing %s binary.\n' \
  "$name" "$module" "$otherwise" "$env_var" "$name" >&2
exit 1
