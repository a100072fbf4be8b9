"""The kinds of bot fault, as the arena names them, for health checks and match seats."""

from django.db import models

from arena.faults import FaultKind as ArenaFaultKind

# The arena's kinds, stored verbatim, so its records need no translation.
FaultKind = models.TextChoices(
    "FaultKind",
    [(kind.name, (kind.value, kind.value.replace("_", " "))) for kind in ArenaFaultKind],
)
