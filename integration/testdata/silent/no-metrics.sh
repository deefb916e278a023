#!/bin/sh
# A trainer that trains and exits 0 but logs with wandb.log (offline), so it writes no record where
# rlsweep reads: TestTrialWithoutMetricsFails.
echo "wandb: Tracking run with wandb version 0.17.0"
echo "wandb: W&B syncing is set to \`offline\` in this directory."
echo "training done"
exit 0
