#!/bin/sh
# Installs the Debian packages the Python example trainers need, for /usr/bin/python3:
#   python3-numpy  examples/probes (the numpy probe-protocol trainer)
#   python3-torch  examples/torch-ppo (the PyTorch PPO trainer; Debian's build is CPU-only) and the
#                  rlsweep package's tests with torch (python/tests)
#   python3-setuptools, python3-wheel, python3-pip, python3-venv  the package's offline install test
#                  (pip install --no-build-isolation --no-index ./python into a venv)
#   python3-optuna scripts/optuna-replay.py (Optuna's own pruners in the prune replay,
#                  scheduler's TestPruneReplayOptuna) and scripts/optuna-sampler.py (Optuna's own
#                  samplers beside method bayes, TestTPEPeersBenchmark, TestOptunaSamplerProtocol)
# Idempotent and non-interactive: does nothing when /usr/bin/python3 already imports them all.
set -eu
if /usr/bin/python3 -c 'import numpy, torch, setuptools, wheel, pip, ensurepip, optuna' 2>/dev/null; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-numpy python3-torch \
	python3-setuptools python3-wheel python3-pip python3-venv python3-optuna >/dev/null
/usr/bin/python3 -c 'import numpy, torch, setuptools, wheel, pip, ensurepip, optuna'
