#!/usr/bin/env bash
# Prints the path of a Schemathesis CLI (the OpenAPI fuzzer of test/fuzz), installing the pinned
# version from PyPI into a virtualenv under .tools/venv when it is not there yet. With --find
# (what test/fuzz/run.sh passes) it never installs, and names the command that does.
set -euo pipefail
VERSION=4.32.5
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/venv"
bin="$venv/bin/schemathesis"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
  echo "$bin"
  exit 0
fi
if [ "${1:-}" = --find ]; then
  echo "No Schemathesis $VERSION in .tools/venv: run \`npm run test:setup\` to install it (npm run test:fuzz runs it first)." >&2
  exit 1
fi
python3 -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION" >&2
echo "$bin"
