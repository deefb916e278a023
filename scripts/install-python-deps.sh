#!/bin/sh
# Installs Debian's python3-numpy for /usr/bin/python3 (the example numpy trainer of examples/probes).
# Idempotent: does nothing when /usr/bin/python3 already imports numpy.
set -eu
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-numpy >/dev/null
/usr/bin/python3 -c 'import numpy'
