"""The ranking-quality study for the variants page, read from the summary the bench writes.

``python -m bench.bench_ratings_quality --json tournaments/dashboard/ratings-quality.json`` writes
the file; the page shows its sentence and a chart of Kendall tau by matches played.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUMMARY = Path(__file__).with_name("ratings-quality.json")
DEFAULT_TAU = "tau = sigma/100 (default)"
PER_MATCH = "random deals, each match one update"
SUMMED = "random deals, 4 matches summed into one update"
DUPLICATE_PER_MATCH = "duplicate, each match one update"
GROUP = "duplicate, group as one update"
# The checkpoint the sentence quotes: early enough that the arms still differ.
QUOTED_MATCHES = 400
# Duplicate's figures hold for bots that play each match on its own, as the bench's do.
DUPLICATE_CAVEAT = (
    "These bots play each match on its own; a bot that remembers the deals of a group's "
    "earlier rotations knows the other seats' cards in the later ones, so duplicate groups "
    "suit only bots whose code the organiser trusts, and the ladders deal every table afresh "
    "unless staff switch duplicate on."
)


@dataclass(frozen=True, slots=True)
class RankingStudy:
    """What the page shows: one plain sentence and the chart's data."""

    sentence: str
    chart: dict[str, Any]


def _median(arm: dict[str, Any], measure: str, matches: int) -> float:
    return float(arm[measure][str(matches)][1])


def ranking_study(path: Path = SUMMARY) -> RankingStudy | None:
    """The study as the page shows it, or None when no summary has been written."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    arms = data["results"][DEFAULT_TAU]
    smaller = next(name for name in data["results"] if name != DEFAULT_TAU)
    at = QUOTED_MATCHES if QUOTED_MATCHES in data["checkpoints"] else data["checkpoints"][-1]
    tau = {name: _median(arm, "tau", at) for name, arm in arms.items()}
    share = {name: arm["share_good"][1] for name, arm in arms.items()}
    small_share = data["results"][smaller][PER_MATCH]["share_good"][1]
    sentence = (
        f"With {len(data['bots'])} bots of graded strength and {data['reps']} repetitions, "
        f"after {at} matches the board's order agrees with the true one at a median Kendall tau of "
        f"{tau[GROUP]:.2f} when each duplicate group is one rating update, "
        f"{tau[SUMMED]:.2f} when four random-deal matches are summed into one update, and "
        f"{tau[PER_MATCH]:.2f} when each random-deal match is rated on its own "
        f"({tau[DUPLICATE_PER_MATCH]:.2f} for duplicate deals rated match by match). "
        f"Summing matches is the aggregation effect; the step from summed random deals to "
        f"duplicate groups, same tables and same number of matches, is the luck of the cards "
        f"taken out. Over {data['horizon']:,} matches the board is at tau {data['threshold']} "
        f"or better a median {share[GROUP]:.0%} of the time with duplicate groups, "
        f"{share[SUMMED]:.0%} with summed random deals and {share[PER_MATCH]:.0%} match by "
        f"match; a smaller TrueSkill tau ({smaller.split(' ')[2]}) takes match-by-match "
        f"rating to {small_share:.0%}. {DUPLICATE_CAVEAT}"
    )
    marks = data["checkpoints"]
    chart = {
        "x": marks,
        "series": [
            {"label": name, "values": [_median(arm, "tau", m) for m in marks]}
            for name, arm in arms.items()
        ],
    }
    return RankingStudy(sentence=sentence, chart=chart)
