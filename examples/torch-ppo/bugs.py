"""Bugs the trainer can be broken with on purpose (--inject-bug), so the probe checks can be shown to
catch each one (docs/probes.md). The names and effects are those of the built-in trainer's
(`rlsweep train --inject-bug`). Never use them for real training.
"""

import enum


class Bug(str, enum.Enum):
    NONE = ""
    NO_DISCOUNT = "no-discount"  # GAE and the truncation bootstrap use γ = 1: probe 3 fails
    DETACH_VALUE = "detach-value"  # the value network gets no gradient: probe 1 fails
    FLIP_ADVANTAGE = "flip-advantage"  # the policy ascends −A: probe 4 fails
    STALE_BATCH = "stale-batch"  # minibatch observations paired with other samples' data: probe 2 fails


NAMES = [b.value for b in Bug if b is not Bug.NONE]
