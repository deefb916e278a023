"""BROKEN ON PURPOSE: numpy_ppo.py with the discount dropped from GAE, so probe 3 fails.

It runs the same trainer as numpy_ppo.py; only the bug differs (docs/probes.md).
"""

import sys

import numpy_ppo

if __name__ == "__main__":
    sys.exit(numpy_ppo.main(discount_in_gae=False))
