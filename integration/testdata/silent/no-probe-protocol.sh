#!/bin/sh
# A trainer that follows the trainer contract but not the probe protocol: it appends a line to the file
# $1 names on every run, trains and exits 0 without writing RLSWEEP_PROBE_RESULT:
# TestProbeStageStopsAfterOneRun.
echo "run probe=${RLSWEEP_PROBE:-none}" >> "$1"
echo "{\"step\": 1000, \"reward\": 1}" >> "$RLSWEEP_METRICS_FILE"
exit 0
