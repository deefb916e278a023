#!/bin/sh
# Runs BenchmarkStopLatency (integration/stop_bench_test.go) against two builds of rlsweep in turns,
# the earlier first, with one test binary: heartbeats per trial-hour and the latency of a cancel, a
# prune and a diagnostics stop (docs/BENCHMARKS.md, "Heartbeats and stop latency").
#
#   scripts/stop-bench.sh BEFORE [AFTER]
#
# BEFORE and AFTER are git revisions (AFTER: the working tree). Each is built into a directory of its
# own (rlsweep, scripted-trainer, replay-trainer) and handed to the test binary as RLSWEEP_IT_BINDIR.
# RLSWEEP_BENCH_ROUNDS (default 2) repeats the stops; RLSWEEP_BENCH_TURNS (default 1) repeats the pair.
set -eu
before=${1:?usage: scripts/stop-bench.sh BEFORE [AFTER]}
after=${2:-}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src-before" >/dev/null 2>&1 || true; git -C "$root" worktree remove --force "$work/src-after" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # build SRC OUT
	mkdir -p "$2"
	(cd "$1" && go build -o "$2/rlsweep" ./cmd/rlsweep &&
		go build -o "$2/scripted-trainer" ./integration/testdata/scripted-trainer &&
		go build -o "$2/replay-trainer" ./integration/testdata/replay-trainer)
}
git -C "$root" worktree add --detach "$work/src-before" "$before" >/dev/null
build "$work/src-before" "$work/before"
if [ -n "$after" ]; then
	git -C "$root" worktree add --detach "$work/src-after" "$after" >/dev/null
	build "$work/src-after" "$work/after"
else
	build "$root" "$work/after"
fi
(cd "$root" && go test -c -tags integration -o "$work/integration.test" ./integration)
turns=${RLSWEEP_BENCH_TURNS:-1}
i=1
while [ "$i" -le "$turns" ]; do
	for b in before after; do
		echo "== $b ($(if [ "$b" = before ]; then echo "$before"; else echo "${after:-working tree}"; fi)), turn $i, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
		(cd "$root/integration" && RLSWEEP_IT_BINDIR="$work/$b" "$work/integration.test" -test.run '^$' \
			-test.bench '^BenchmarkStopLatency$' -test.benchtime 1x -test.timeout 60m)
	done
	i=$((i + 1))
done
