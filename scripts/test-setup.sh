#!/usr/bin/env bash
# Prepares, once, everything the named suites need, so that no test builds or installs anything:
# npm runs it before each suite (`pretest`, `pretest:faults`, `pretest:fuzz`, `prebench`), and
# .ci/run runs the suites through those same npm scripts. When everything is there it only looks.
# A first run builds the Temporal CLI and MinIO with Go (minutes, with progress lines), fetches
# Temporal's time-skipping test server with Maven (Java is on every machine of ours), and installs
# ffmpeg from Debian's packages when the user is root or has passwordless sudo; what it cannot do,
# it says in one line and stops.
# Usage: test-setup.sh [SUITE...]   SUITE: test, faults, chaos, lifecycle, fuzz, bench, cluster (none: every suite)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'test-setup: %s\n' "$*"; }
# One line on stderr, then stop: the whole message a user needs.
stop() {
  printf 'test-setup: %s\n' "$*" >&2
  exit 1
}

# A Debian package providing commands, installed when one is missing and we may (root, or sudo
# without a password); otherwise one line saying what to install.
debian_package() {
  local package=$1
  shift
  local missing=() command
  for command in "$@"; do command -v "$command" >/dev/null 2>&1 || missing+=("$command"); done
  if [ ${#missing[@]} -eq 0 ]; then
    say "$package: $(command -v "$1")"
    return
  fi
  local what="${missing[0]} is"
  [ ${#missing[@]} -eq 1 ] || what="${missing[*]:0:${#missing[@]}-1} and ${missing[-1]} are"
  command -v apt-get >/dev/null 2>&1 ||
    stop "$what missing: install $package with your system's package manager, then run this again."
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    sudo -n true >/dev/null 2>&1 ||
      stop "$what missing and installing needs root: run \`sudo apt-get install $package\`, then this again."
    sudo=(sudo)
  fi
  say "$package: installing the Debian package (${missing[*]} missing; about a minute)..."
  local log
  log=$(mktemp)
  # Progress: a line every 25 packages set up; the full log only when apt fails.
  if ! {
    "${sudo[@]}" apt-get update -qq &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package"
  } 2>&1 | tee "$log" | awk '/^Setting up/ { n++; if (n % 25 == 0) { printf "  ... %d packages set up\n", n; fflush() } }'; then
    cat "$log" >&2
    stop "apt-get could not install $package (log above)."
  fi
  rm -f "$log"
  for command in "$@"; do
    command -v "$command" >/dev/null 2>&1 || stop "$package is installed but $command is still not on PATH."
  done
  say "$package: installed, $(command -v "$1")"
}

# A tool one of the scripts in scripts/ finds, builds or installs (progress on stderr), printing its path.
script_tool() {
  local label=$1 script=$2 path
  # shellcheck disable=SC2086 # a script and its arguments, split on purpose
  path=$(bash scripts/$script) || stop "$label: scripts/$script could not provide it (see above)."
  say "$label: $path"
}

prepare() {
  local start=$SECONDS
  case $1 in
    temporal) script_tool "Temporal CLI" temporal-cli.sh ;;
    test-server) script_tool "Temporal test server" temporal-test-server.sh ;;
    minio) script_tool MinIO minio.sh ;;
    ffmpeg) debian_package ffmpeg ffmpeg ffprobe ;;
    schemathesis) script_tool Schemathesis schemathesis.sh ;;
    chromium) debian_package chromium chromium ;; # headless: the /docs check (test/gateway/docs-browser), the console's browser tests (test/console)
    temporal-server) script_tool "Temporal server" "temporal-cluster-tool.sh server" ;;
    temporal-sql-tool) script_tool "Temporal SQL tool" "temporal-cluster-tool.sh sql-tool" ;;
    temporal-ui-server) script_tool "Temporal UI server" "temporal-cluster-tool.sh ui-server" ;;
    *) stop "unknown tool $1" ;;
  esac
  [ $((SECONDS - start)) -lt 5 ] || say "$1: took $((SECONDS - start)) s"
}

started=$SECONDS
[ $# -gt 0 ] || set -- test faults chaos lifecycle fuzz bench cluster
tools=()
for suite in "$@"; do
  # What each suite needs. A new suite (e.g. lifecycle) adds its line here and a `pre<script>`
  # npm script running `bash scripts/test-setup.sh <suite>`.
  case $suite in
    # Temporal dev server, its time-skipping test server (workflow unit tests), MinIO for the S3
    # driver, ffmpeg for merge_videos, Chromium for /docs offline and the console's browser tests
    test) needs=(temporal test-server minio ffmpeg chromium) ;;
    faults) needs=(temporal) ;;
    # the fault suite's PostgreSQL and Temporal dev server, killed; CHAOS_ENGINE=cluster: the cluster's services
    chaos) if [ "${CHAOS_ENGINE:-dev}" = cluster ]; then needs=(temporal-server temporal-sql-tool); else needs=(temporal); fi ;;
    lifecycle) needs=(temporal) ;; # npm start's own tree
    fuzz) needs=(temporal ffmpeg schemathesis) ;; # the whole service, fuzzed by Schemathesis
    bench) needs=(temporal temporal-server temporal-sql-tool) ;; # --engine=cluster too
    # npm run start:cluster's tree: the Temporal server's services, its SQL tool, its UI server
    cluster) needs=(temporal-server temporal-sql-tool temporal-ui-server ffmpeg) ;;
    *) stop "unknown suite $suite (known: test, faults, chaos, lifecycle, fuzz, bench, cluster)" ;;
  esac
  for tool in "${needs[@]}"; do
    [[ " ${tools[*]} " == *" $tool "* ]] || tools+=("$tool")
  done
done
bash scripts/check-node.sh || exit 1
for tool in "${tools[@]}"; do prepare "$tool"; done
say "ready for $* in $((SECONDS - started)) s (Node $(node --version))"
