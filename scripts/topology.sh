#!/usr/bin/env bash
# The production topology of docker-compose.yml as plain processes on this machine, without Docker:
# PostgreSQL (a private cluster in the state directory), the Temporal schemas set up by Temporal's SQL
# schema tool, the Temporal server (frontend, history, matching and worker services) configured by
# infra/temporal/config.yaml with infra/temporal/dynamicconfig.yaml, the namespace and rlsweep's search
# attributes registered, the Temporal Web UI, MinIO with the artifact bucket, a control worker and GPU-class
# workers.
# Pinned tools come from scripts/install-tools.sh (built once, cached). See docs/deploy.md.
#
#   scripts/topology.sh up       # start whatever is not running; safe to run again
#   scripts/topology.sh status   # one line per service: running or not, pid, address, log
#   scripts/topology.sh down     # stop everything (data stays in the state directory)
#   scripts/topology.sh plan     # print each service's command and environment, start nothing
#   scripts/topology.sh env      # the environment a CLI on this machine needs (eval "$(... env)")
#
# Settings (environment, defaults in brackets):
#   RLSWEEP_TOPOLOGY_DIR   state: data, logs, pids [~/.rlsweep/topology; /var/lib/rlsweep/topology as root]
#   TOPOLOGY_HOST          the address services listen on and workers use to reach them [127.0.0.1]
#   TOPOLOGY_PG_PORT [55432]  TOPOLOGY_TEMPORAL_PORT [7233]  TOPOLOGY_MEMBERSHIP_PORT [6933, below 32764]
#   TOPOLOGY_MINIO_PORT [9000]
#   TOPOLOGY_MINIO_CONSOLE_PORT [9001]  TOPOLOGY_METRICS_PORT [9090] (the server's Prometheus metrics)
#   TOPOLOGY_UI_PORT [8233] (the Web UI, on every address)
#   TOPOLOGY_MINIO_HOST    the address MinIO listens on and workers use to reach it [TOPOLOGY_HOST]
#   TOPOLOGY_GPU_WORKERS   how many GPU-class workers there are [1]
#   TOPOLOGY_START_WORKERS 0: start the services only, not the workers (which run elsewhere, with the
#                          commands and environment `plan` prints) [1]
#   RLSWEEP_GPUS           GPUs for each GPU-class worker (--gpus); empty runs --slots TOPOLOGY_SLOTS [2] on the CPU
#   POSTGRES_PASSWORD [temporal]  MINIO_ROOT_USER [rlsweep]  MINIO_ROOT_PASSWORD [rlsweep-secret]  AWS_REGION [us-east-1]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

if [ "$(id -u)" = 0 ]; then default_dir=/var/lib/rlsweep/topology; else default_dir=$HOME/.rlsweep/topology; fi
dir=${RLSWEEP_TOPOLOGY_DIR:-$default_dir}
host=${TOPOLOGY_HOST:-127.0.0.1}
minio_host=${TOPOLOGY_MINIO_HOST:-$host}
pg_port=${TOPOLOGY_PG_PORT:-55432}
temporal_port=${TOPOLOGY_TEMPORAL_PORT:-7233}
membership_port=${TOPOLOGY_MEMBERSHIP_PORT:-6933}
minio_port=${TOPOLOGY_MINIO_PORT:-9000}
minio_console_port=${TOPOLOGY_MINIO_CONSOLE_PORT:-9001}
metrics_port=${TOPOLOGY_METRICS_PORT:-9090}
ui_port=${TOPOLOGY_UI_PORT:-8233}
gpu_workers=${TOPOLOGY_GPU_WORKERS:-1}
start_workers=${TOPOLOGY_START_WORKERS:-1}
slots=${TOPOLOGY_SLOTS:-2}
gpus=${RLSWEEP_GPUS:-}
pg_password=${POSTGRES_PASSWORD:-temporal}
minio_user=${MINIO_ROOT_USER:-rlsweep}
minio_password=${MINIO_ROOT_PASSWORD:-rlsweep-secret}
region=${AWS_REGION:-us-east-1}
namespace=default
store=s3://rlsweep/artifacts

die() { echo "topology: $*" >&2; exit 1; }
log() { echo "topology: $*" >&2; }

for v in pg_port temporal_port membership_port minio_port minio_console_port metrics_port ui_port gpu_workers slots start_workers; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "topology: $v: got ${!v}, want a number" >&2; exit 2; }
done
[ "$membership_port" -lt 32762 ] ||
  { echo "topology: TOPOLOGY_MEMBERSHIP_PORT: got $membership_port, want below 32762 (the server stores membership ports as a smallint)" >&2; exit 2; }

# The Temporal server's ports, laid out as in its own config: gRPC frontend 7233, history 7234, matching
# 7235, worker 7239 (shifted with the frontend's), membership 6933-6939 (shifted with
# TOPOLOGY_MEMBERSHIP_PORT; the server stores them as a PostgreSQL smallint, so they stay below 32768).
off=$((temporal_port - 7233))
moff=$((membership_port - 6933))
server_env=(
  DB=postgres12
  DB_PORT="$pg_port"
  POSTGRES_SEEDS="$host"
  POSTGRES_USER=temporal
  POSTGRES_PWD="$pg_password"
  DYNAMIC_CONFIG_FILE_PATH="$root/infra/temporal/dynamicconfig.yaml"
  NUM_HISTORY_SHARDS=4
  BIND_ON_IP="$host"
  TEMPORAL_BROADCAST_ADDRESS="$host"
  FRONTEND_GRPC_PORT="$temporal_port"
  FRONTEND_HTTP_PORT=0
  HISTORY_GRPC_PORT=$((7234 + off))
  MATCHING_GRPC_PORT=$((7235 + off))
  WORKER_GRPC_PORT=$((7239 + off))
  FRONTEND_MEMBERSHIP_PORT=$((6933 + moff))
  HISTORY_MEMBERSHIP_PORT=$((6934 + moff))
  MATCHING_MEMBERSHIP_PORT=$((6935 + moff))
  WORKER_MEMBERSHIP_PORT=$((6939 + moff))
  PROMETHEUS_ENDPOINT="$host:$metrics_port"
)
# docker-compose.yml's x-rlsweep-env, with the services' addresses on this machine.
rlsweep_env=(
  TEMPORAL_ADDRESS="$host:$temporal_port"
  TEMPORAL_NAMESPACE="$namespace"
  RLSWEEP_STORE="$store"
  RLSWEEP_UI_URL="http://localhost:$ui_port"
  AWS_ENDPOINT_URL_S3="http://$minio_host:$minio_port"
  AWS_ACCESS_KEY_ID="$minio_user"
  AWS_SECRET_ACCESS_KEY="$minio_password"
  AWS_REGION="$region"
  RLSWEEP_S3_PATH_STYLE=1
)
# docker-compose.yml's temporal-schema: temporal-sql-tool reads its connection from these.
sql_env=(SQL_PLUGIN=postgres12 SQL_HOST="$host" SQL_PORT="$pg_port" SQL_USER=temporal SQL_PASSWORD="$pg_password")
# docker-compose.yml's temporal-ui (the temporalio/ui image runs the same server with the same config file).
ui_env=(TEMPORAL_ADDRESS="$host:$temporal_port" TEMPORAL_CORS_ORIGINS=http://localhost:3000 TEMPORAL_UI_PORT="$ui_port")
minio_env=(MINIO_ROOT_USER="$minio_user" MINIO_ROOT_PASSWORD="$minio_password" MINIO_UPDATE=off)

bin="$dir/bin"
pgdata="$dir/postgresql"

# tool NAME: the path of a pinned tool, installed and cached by scripts/install-tools.sh.
tool() { "$root/scripts/install-tools.sh" "$1" | tail -1; }

# as_pg CMD...: runs a PostgreSQL program, as the user postgres when this is root (PostgreSQL refuses root).
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The services in start order: name, then its command (argv), as plan prints them and up runs them.
worker_cmd() { # NAME: the rlsweep worker command of a worker service
  case "$1" in
    rlsweep-control) echo "$bin/rlsweep worker --control=true --queue= --work-dir $dir/work/$1" ;;
    rlsweep-gpu*)
      if [ -n "$gpus" ]; then
        echo "$bin/rlsweep worker --control=false --queue rlsweep-gpu --gpus $gpus --work-dir $dir/work/$1"
      else
        echo "$bin/rlsweep worker --control=false --queue rlsweep-gpu --slots $slots --work-dir $dir/work/$1"
      fi ;;
  esac
}
gpu_names() { local i; for ((i = 1; i <= gpu_workers; i++)); do if [ "$i" = 1 ]; then echo rlsweep-gpu; else echo "rlsweep-gpu-$i"; fi; done; }

plan() {
  local pgbin; pgbin=${PGBIN:-/usr/lib/postgresql/BIN}
  local uiconfig; uiconfig=${UICONFIG:-$(ui_config_dir)}
  echo "service postgresql"
  echo "exec $pgbin/postgres -D $pgdata -p $pg_port -c listen_addresses=$host -k $pgdata"
  echo "service temporal-schema"
  echo "exec $bin/temporal-sql-tool --db temporal,temporal_visibility create-database, setup-schema -v 0.0, update-schema -d $(schema_dir)/postgresql/v12/{temporal,visibility}/versioned"
  printf 'env %s\n' "${sql_env[@]}"
  echo "service temporal"
  echo "exec $bin/temporal-server --config-file $root/infra/temporal/config.yaml --allow-no-auth start"
  printf 'env %s\n' "${server_env[@]}"
  echo "service temporal-ui"
  echo "exec $bin/temporal-ui --root $uiconfig --config . --env docker start"
  printf 'env %s\n' "${ui_env[@]}"
  echo "service temporal-search-attributes"
  echo "exec $bin/topology-setup --address $host:$temporal_port --namespace $namespace --store $store"
  printf 'env %s\n' "${rlsweep_env[@]}"
  echo "service minio"
  echo "exec $bin/minio server $dir/minio --address $minio_host:$minio_port --console-address $minio_host:$minio_console_port"
  printf 'env %s\n' "${minio_env[@]}"
  echo "service minio-bucket"
  echo "exec $bin/topology-setup --address $host:$temporal_port --namespace $namespace --store $store"
  printf 'env %s\n' "${rlsweep_env[@]}"
  local w
  for w in rlsweep-control $(gpu_names); do
    echo "service $w"
    echo "exec $(worker_cmd "$w")"
    printf 'env %s\n' "${rlsweep_env[@]}"
  done
}

# ui_config_dir: the UI server module's config directory (its docker.yaml reads the environment), without
# downloading anything: plan must not need the network.
ui_config_dir() {
  local v; v=$(sed -n 's/^TEMPORAL_UI_VERSION=//p' "$root/scripts/install-tools.sh")
  echo "$(go env GOMODCACHE)/github.com/temporalio/ui-server/v2@$v/config"
}

# schema_dir: the server module's schema directory, without downloading anything.
schema_dir() {
  local v; v=$(sed -n 's/^TEMPORAL_SERVER_VERSION=//p' "$root/scripts/install-tools.sh")
  echo "$(go env GOMODCACHE)/go.temporal.io/server@$v/schema"
}

pidfile() { echo "$dir/run/$1.pid"; }
alive() { local p; p=$(cat "$(pidfile "$1")" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }

# spawn NAME ENV... -- CMD...: starts CMD detached (setsid: its own process group, no terminal) with ENV added,
# logs to logs/NAME.log.
spawn() {
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if alive "$name"; then log "$name already running (pid $(cat "$(pidfile "$name")"))"; return; fi
  mkdir -p "$dir/run" "$dir/logs"
  env "${envs[@]}" setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$(pidfile "$name")"
  log "$name started (pid $!), log $dir/logs/$name.log"
}

pg_up() {
  local pgbin; pgbin=$(tool postgresql)
  mkdir -p "$dir"
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    mkdir -p "$pgdata"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$pgdata"; fi
    as_pg test -w "$pgdata" ||
      die "PostgreSQL runs as user postgres, which cannot write $pgdata: set RLSWEEP_TOPOLOGY_DIR to a directory it can reach"
    local pw; pw=$(mktemp); printf '%s\n' "$pg_password" >"$pw"; chmod 644 "$pw"
    as_pg "$pgbin/initdb" -D "$pgdata" --username=temporal --auth=scram-sha-256 --pwfile="$pw" >"$dir/initdb.log" 2>&1 ||
      { rm -f "$pw"; die "initdb failed, see $dir/initdb.log"; }
    rm -f "$pw"
    # The server may reach PostgreSQL on any of this machine's addresses (TOPOLOGY_HOST).
    echo "host all temporal samehost scram-sha-256" >>"$pgdata/pg_hba.conf"
  fi
  if as_pg "$pgbin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then
    log "postgresql already running"
  else
    mkdir -p "$dir/logs"; touch "$dir/logs/postgresql.log"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/logs/postgresql.log"; fi
    as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$dir/logs/postgresql.log" -w -t 60 \
      -o "-p $pg_port -c listen_addresses=$host -k $pgdata" start >/dev/null ||
      die "postgresql did not start, see $dir/logs/postgresql.log"
    log "postgresql started on $host:$pg_port, log $dir/logs/postgresql.log"
  fi
  head -1 "$pgdata/postmaster.pid" >"$dir/run/postgresql.pid" 2>/dev/null || true
}

schema_up() {
  local sql="$bin/temporal-sql-tool" schema
  schema=$(tool temporal-schema)
  local db
  for db in temporal temporal_visibility; do
    local dirname=temporal; [ "$db" = temporal_visibility ] && dirname=visibility
    local args=(--db "$db")
    if [ ! -f "$dir/schema-$db" ]; then
      env "${sql_env[@]}" "$sql" "${args[@]}" create-database >>"$dir/logs/schema.log" 2>&1 || die "create-database $db failed, see $dir/logs/schema.log"
      env "${sql_env[@]}" "$sql" "${args[@]}" setup-schema -v 0.0 >>"$dir/logs/schema.log" 2>&1 || die "setup-schema $db failed, see $dir/logs/schema.log"
      touch "$dir/schema-$db"
    fi
    env "${sql_env[@]}" "$sql" "${args[@]}" update-schema -d "$schema/postgresql/v12/$dirname/versioned" >>"$dir/logs/schema.log" 2>&1 ||
      die "update-schema $db failed, see $dir/logs/schema.log"
  done
  log "temporal schemas up to date (log $dir/logs/schema.log)"
}

binaries() {
  mkdir -p "$bin"
  ln -sf "$(tool temporal-server)" "$bin/temporal-server"
  ln -sf "$(tool temporal-sql-tool)" "$bin/temporal-sql-tool"
  ln -sf "$(tool minio)" "$bin/minio"
  ln -sf "$(tool temporal-ui)" "$bin/temporal-ui"
  tool temporal-ui-config >/dev/null
  (cd "$root" && go build -o "$bin/rlsweep" ./cmd/rlsweep && go build -o "$bin/topology-setup" ./infra/topology/setup) ||
    die "go build failed"
}

# start_worker NAME: starts a worker and waits until it serves its queues. A worker that cannot reach
# the server at start exits; like compose's restart policy, this starts it again (5 tries).
start_worker() {
  local name=$1 try i before
  alive "$name" && { log "$name already running (pid $(cat "$(pidfile "$name")"))"; return; }
  for try in 1 2 3 4 5; do
    before=$(grep -c 'worker: control=' "$dir/logs/$name.log" 2>/dev/null || true)
    # shellcheck disable=SC2046
    spawn "$name" "${rlsweep_env[@]}" -- $(worker_cmd "$name")
    for ((i = 0; i < 120; i++)); do
      [ "$(grep -c 'worker: control=' "$dir/logs/$name.log" 2>/dev/null || true)" -gt "${before:-0}" ] && return 0
      alive "$name" || break
      sleep 0.5
    done
    stop "$name" 5
    log "$name did not start (try $try), see $dir/logs/$name.log; starting it again"
    sleep 2
  done
  die "$name did not start in 5 tries; see $dir/logs/$name.log"
}

wait_http() { # URL SECONDS WHAT
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  die "$3 did not answer at $1 within $2 s"
}

up() {
  mkdir -p "$dir/logs" "$dir/run" "$dir/work"
  binaries
  pg_up
  schema_up
  spawn temporal "${server_env[@]}" -- "$bin/temporal-server" --config-file "$root/infra/temporal/config.yaml" --allow-no-auth start
  spawn temporal-ui "${ui_env[@]}" -- "$bin/temporal-ui" --root "$(ui_config_dir)" --config . --env docker start
  spawn minio "${minio_env[@]}" -- "$bin/minio" server "$dir/minio" --address "$minio_host:$minio_port" --console-address "$minio_host:$minio_console_port"
  wait_http "http://$minio_host:$minio_port/minio/health/ready" 60 minio
  wait_http "http://127.0.0.1:$ui_port/" 60 temporal-ui
  env "${rlsweep_env[@]}" "$bin/topology-setup" --address "$host:$temporal_port" --namespace "$namespace" --store "$store" --wait 3m ||
    die "setup failed; see $dir/logs/temporal.log"
  local w
  [ "$start_workers" = 1 ] || { log "up: services only (TOPOLOGY_START_WORKERS=$start_workers)"; return; }
  for w in rlsweep-control $(gpu_names); do start_worker "$w"; done
  log "up: TEMPORAL_ADDRESS=$host:$temporal_port, S3 http://$minio_host:$minio_port (eval \"\$(scripts/topology.sh env)\")"
}

stop() { # NAME SECONDS: SIGTERM, then SIGKILL after SECONDS
  local name=$1 p i
  p=$(cat "$(pidfile "$name")" 2>/dev/null) || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for ((i = 0; i < $2 * 10; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then log "$name did not stop in $2 s, killing it"; kill -KILL "$p" 2>/dev/null || true; fi
    log "$name stopped"
  fi
  rm -f "$(pidfile "$name")"
}

down() {
  local f name
  for f in "$dir"/run/rlsweep-*.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    stop "$name" 150 # above the workers' --stop-timeout (2m): trainers checkpoint first
  done
  stop temporal-ui 30
  stop temporal 30
  stop minio 30
  if [ -f "$pgdata/PG_VERSION" ]; then
    local pgbin; pgbin=$(tool postgresql)
    if as_pg "$pgbin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then
      as_pg "$pgbin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null && log "postgresql stopped"
    fi
    rm -f "$dir/run/postgresql.pid"
  fi
}

status() {
  local f name p state rc=0
  for name in postgresql temporal temporal-ui minio rlsweep-control $(gpu_names); do
    f=$(pidfile "$name")
    if alive "$name"; then p=$(cat "$f"); state=running; else p=-; state=stopped; rc=3; fi
    printf '%-18s %-8s pid %-8s log %s\n' "$name" "$state" "$p" "$dir/logs/$name.log"
  done
  return $rc
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  plan) plan ;;
  env) printf 'export %q\n' "${rlsweep_env[@]}" ;;
  *) echo "usage: scripts/topology.sh up|down|status|plan|env (got ${1:-nothing})" >&2; exit 2 ;;
esac
