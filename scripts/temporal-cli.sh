#!/usr/bin/env bash
# Prints the path of a Temporal CLI, building one when none is found. Used by `npm start` and the
# test setup (scripts/test-setup.sh) alike; tests pass --find, which never builds. Order: TEMPORAL_CLI_PATH; `temporal` on PATH; a copy built earlier
# into .tools/bin; a `go install` of v1.5.1, the newest version without a replace directive
# (later versions cannot be go-installed).
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-tool.sh" "$@" temporal \
  github.com/temporalio/cli/cmd/temporal@v1.5.1 TEMPORAL_CLI_PATH \
  "on a machine with internet, install it with Temporal's official installer (curl -sSf https://temporal.download/cli.sh | sh) and put it on PATH"
