#!/usr/bin/env bash
# Prints the path of a MinIO server binary (the real S3-compatible server the S3 storage tests
# run against), building one when none is found. Order: MINIO_PATH; `minio` on PATH; a copy built
# earlier into .tools/bin; a `go install` of the pinned commit below.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# MinIO publishes no semver tags for Go modules; this pseudo-version is what @latest resolved to.
version=v0.0.0-20260212201848-7aac2a2c5b7c
tools_bin="$root/.tools/bin"

if [ -n "${MINIO_PATH:-}" ]; then
  if [ -x "$MINIO_PATH" ]; then echo "$MINIO_PATH"; exit 0; fi
  echo "MINIO_PATH=$MINIO_PATH is not an executable file" >&2
  exit 1
fi
if command -v minio >/dev/null 2>&1; then command -v minio; exit 0; fi
if [ -x "$tools_bin/minio" ]; then echo "$tools_bin/minio"; exit 0; fi

if command -v go >/dev/null 2>&1; then
  echo "Building MinIO $version from source into .tools/bin (one time, takes a few minutes)..." >&2
  mkdir -p "$tools_bin"
  # -x shows each build step, so a slow build is visibly alive.
  if GOBIN="$tools_bin" GOFLAGS=-mod=mod go install -x "github.com/minio/minio@$version" 2>&1 \
    | grep --line-buffered -E '^(go: downloading|WORK=|mkdir -p \$WORK/b[0-9]+/$)' \
    | awk '/go: downloading/ { print; fflush(); next } { n++; if (n % 50 == 0) { printf "  ... %d build steps\n", n; fflush() } }' >&2 \
    && [ -x "$tools_bin/minio" ]; then
    echo "MinIO built: $tools_bin/minio" >&2
    echo "$tools_bin/minio"
    exit 0
  fi
  echo "go install of MinIO failed." >&2
fi

cat >&2 <<'MSG'
No MinIO server found. Either:
  - install Go (1.24+) and run this again, so it can build github.com/minio/minio; or
  - download a MinIO server binary and put it on PATH; or
  - set MINIO_PATH to an existing minio binary.
MSG
exit 1
