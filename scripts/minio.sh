#!/usr/bin/env bash
# Prints the path of a MinIO server binary (the real S3-compatible server the S3 storage tests
# run against), building one when none is found (with --find, what the tests pass: never builds). Order: MINIO_PATH; `minio` on PATH; a copy built
# earlier into .tools/bin; a `go install` of the pinned commit below. MinIO publishes no semver
# tags for Go modules; this pseudo-version is what @latest resolved to.
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" "$@" minio \
  github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c MINIO_PATH \
  "download a MinIO server binary and put it on PATH"
