#!/bin/sh
# A trainer that writes JSON lines under CleanRL's keys, never the objective episodic_return, and goes
# on training (until SIGTERM): TestTrialObjectiveNeverReported.
s=500
while :; do
	echo "{\"step\": $s, \"charts/episodic_return\": 12.5, \"losses/value_loss\": 0.3}" >> "$RLSWEEP_METRICS_FILE"
	s=$((s + 500))
	sleep 0.05
done
