#!/usr/bin/env bash
# Installs the pinned external tools rlsweep's tests and `rlsweep dev` need, once, and caches them under
# $(go env GOPATH)/bin keyed by version so later runs pay nothing. Prints the path of each tool.
#
#   scripts/install-tools.sh temporal   # the Temporal CLI with its dev server and Web UI
#   scripts/install-tools.sh minio      # MinIO, for the S3 integration tests
#   scripts/install-tools.sh chromium   # Debian's chromium, for the headless report check
#   scripts/install-tools.sh staticcheck
#   scripts/install-tools.sh temporal-server      # the production Temporal server (scripts/topology.sh)
#   scripts/install-tools.sh temporal-sql-tool    # its SQL schema tool (scripts/topology.sh)
#   scripts/install-tools.sh temporal-schema      # the server's SQL schema files; prints their directory
#   scripts/install-tools.sh temporal-ui          # the Temporal Web UI server, its built assets embedded
#   scripts/install-tools.sh temporal-ui-config   # the UI server's config directory (docker.yaml); prints it
#   scripts/install-tools.sh postgresql           # Debian's PostgreSQL; prints its bin directory
#   scripts/install-tools.sh iproute2             # Debian's iproute2 (ip netns, veth), for the topology tier
set -euo pipefail

TEMPORAL_VERSION=v1.5.1
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
STATICCHECK_VERSION=v0.8.2
# The newest Temporal server whose module builds with this repository's Go toolchain.
TEMPORAL_SERVER_VERSION=v1.30.4
# The Web UI server: the same module the temporalio/ui image runs, with the UI's built assets embedded.
TEMPORAL_UI_VERSION=v2.42.1

bin=$(go env GOPATH)/bin
mkdir -p "$bin"

install_go_tool() { # name module version
  local name=$1 module=$2 version=$3
  local cached="$bin/$name-$version"
  if [ ! -x "$cached" ]; then
    echo "building $name $version (first run only, several minutes)..." >&2
    local tmp built
    tmp=$(mktemp -d)
    GOBIN="$tmp" CGO_ENABLED=0 go install "$module@$version" >&2
    built=$(basename "$module")
    mv "$tmp/$built" "$cached"
    rm -rf "$tmp"
  fi
  ln -sf "$cached" "$bin/$name"
  echo "$cached"
}

for tool in "${@:-temporal}"; do
  case "$tool" in
    temporal) install_go_tool temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION" ;;
    minio) install_go_tool minio github.com/minio/minio "$MINIO_VERSION" ;;
    temporal-server) install_go_tool temporal-server go.temporal.io/server/cmd/server "$TEMPORAL_SERVER_VERSION" ;;
    temporal-sql-tool) install_go_tool temporal-sql-tool go.temporal.io/server/cmd/tools/sql "$TEMPORAL_SERVER_VERSION" ;;
    temporal-schema)
      (cd / && GO111MODULE=on go mod download go.temporal.io/server@"$TEMPORAL_SERVER_VERSION") >&2
      echo "$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION/schema" ;;
    temporal-ui) install_go_tool temporal-ui github.com/temporalio/ui-server/v2/cmd/server "$TEMPORAL_UI_VERSION" ;;
    temporal-ui-config)
      (cd / && GO111MODULE=on go mod download github.com/temporalio/ui-server/v2@"$TEMPORAL_UI_VERSION") >&2
      echo "$(go env GOMODCACHE)/github.com/temporalio/ui-server/v2@$TEMPORAL_UI_VERSION/config" ;;
    postgresql)
      if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
      fi
      dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)" ;;
    iproute2)
      if ! command -v ip >/dev/null 2>&1; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2) >&2
      fi
      command -v ip ;;
    staticcheck) install_go_tool staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION" ;;
    chromium)
      if ! command -v chromium >/dev/null 2>&1; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2
      fi
      command -v chromium ;;
    *) echo "install-tools.sh: unknown tool $tool (want temporal, minio, staticcheck, chromium, temporal-server, temporal-sql-tool, temporal-schema, temporal-ui, temporal-ui-config, postgresql or iproute2)" >&2; exit 2 ;;
  esac
done
