#!/bin/sh
# Registers the service's custom search attributes in the Temporal namespace. Idempotent: an
# attribute that already exists is skipped, so this one-shot container can run on every
# `docker compose up`. Keep the list in step with workflows/search-attributes.ts.
set -eu

address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"
attributes="ChatId AgentRunId UserId ToolName AgentRunStatus WebhookEvent WebhookEndpointId"

tries=0
until temporal operator namespace describe --namespace "$namespace" --address "$address" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 90 ]; then
    echo "namespace '$namespace' did not appear on $address" >&2
    exit 1
  fi
  echo "waiting for namespace '$namespace' on $address..."
  sleep 2
done

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
