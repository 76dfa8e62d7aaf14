#!/usr/bin/env bash
# Prints the path of one of the binaries of a Temporal cluster (what `npm run start:cluster` and the
# cluster suite run), building it once with `go install` through scripts/go-tool.sh, as the
# Temporal CLI is built; --find (tests) never builds.
# Usage: temporal-cluster-tool.sh [--find] server|sql-tool|ui-server
# The server and its SQL tool are one release (the SQL tool's embedded schemas are the ones that
# server expects). The UI server stays at v2.45.3: later versions need a newer Go than ours.
set -euo pipefail
find=()
if [ "${1:-}" = --find ]; then find=(--find); shift; fi
go_tool="$(dirname "${BASH_SOURCE[0]}")/go-tool.sh"
case ${1:-} in
  server)
    exec bash "$go_tool" "${find[@]}" temporal-server go.temporal.io/server/cmd/server@v1.29.1 \
      TEMPORAL_SERVER_PATH "download temporal_<version>_linux_amd64.tar.gz from Temporal's GitHub releases and put its temporal-server on PATH" ;;
  sql-tool)
    exec bash "$go_tool" "${find[@]}" temporal-sql-tool go.temporal.io/server/cmd/tools/sql@v1.29.1 \
      TEMPORAL_SQL_TOOL_PATH "download temporal_<version>_linux_amd64.tar.gz from Temporal's GitHub releases and put its temporal-sql-tool on PATH" ;;
  ui-server)
    exec bash "$go_tool" "${find[@]}" temporal-ui-server github.com/temporalio/ui-server/v2/cmd/server@v2.45.3 \
      TEMPORAL_UI_SERVER_PATH "download ui-server_<version>_linux_amd64.tar.gz from the temporalio/ui-server GitHub releases and put it on PATH as temporal-ui-server" ;;
  *)
    echo "usage: temporal-cluster-tool.sh [--find] server|sql-tool|ui-server" >&2
    exit 2 ;;
esac
