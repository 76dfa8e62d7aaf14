#!/bin/sh
# Creates the Temporal namespace when missing, sets its retention (TEMPORAL_NAMESPACE_RETENTION,
# default 7d: how long closed workflows are kept), then registers the service's custom search
# attributes in it: what `npm run start:cluster` does through the API
# (apps/stack/embedded/temporal-cluster.ts). Idempotent, so this one-shot container can run on every
# `docker compose up`. The list is checked against workflows/search-attributes.ts by the cluster
# suite (test/cluster/compose.test.ts).
set -eu

address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"
retention="${TEMPORAL_NAMESPACE_RETENTION:-7d}"
attributes="ChatId AgentRunId UserId ToolName AgentRunStatus AgentRunVia WebhookEvent WebhookEndpointId"

tries=0
until temporal operator namespace describe --namespace "$namespace" --address "$address" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 90 ]; then
    echo "namespace '$namespace' could not be created on $address" >&2
    exit 1
  fi
  # Fails while the frontend is not serving yet, or when another run created it meanwhile.
  temporal operator namespace create --namespace "$namespace" --retention "$retention" --address "$address" >/dev/null 2>&1 ||
    sleep 2
done
# A namespace created by an earlier run keeps the retention it was created with until told otherwise.
temporal operator namespace update --namespace "$namespace" --retention "$retention" --address "$address" >/dev/null
echo "namespace $namespace: closed workflows kept $retention"

for name in $attributes; do
  if temporal operator search-attribute list --namespace "$namespace" --address "$address" | grep -qw "$name"; then
    echo "search attribute $name: already registered"
    continue
  fi
  if out=$(temporal operator search-attribute create --namespace "$namespace" --address "$address" \
    --name "$name" --type Keyword 2>&1); then
    echo "search attribute $name: registered (Keyword)"
  else
    case "$out" in
      *"already exists"*) echo "search attribute $name: already registered" ;;
      *) echo "$out" >&2; exit 1 ;;
    esac
  fi
done
