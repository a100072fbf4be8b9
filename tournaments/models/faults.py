"""The kinds of bot fault, as the arena names them, for health checks and match seats."""

from django.db import models

from arena.faults import FaultKind as ArenaFaultKind

# The arena's kinds, stored verbatim, so its records need no translation.
# The stubs know only the one- and two-argument forms of the functional API, not the list of
# (name, (value, label)) members that Django's Choices accept like any enum's functional API.
FaultKind = models.TextChoices(  # type: ignore[call-overload]
    "FaultKind",
    [(kind.name, (kind.value, kind.value.replace("_", " "))) for kind in ArenaFaultKind],
)
