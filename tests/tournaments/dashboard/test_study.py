"""The ranking-quality study on the variants page comes from the summary the bench writes."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tournaments.dashboard.study import (
    DUPLICATE_CAVEAT,
    GROUP,
    PER_MATCH,
    SUMMARY,
    ranking_study,
)


def test_the_page_shows_the_committed_summary_as_a_sentence_and_a_chart(client, db) -> None:
    data = json.loads(SUMMARY.read_text())
    arms = data["results"]["tau = sigma/100 (default)"]
    body = client.get("/variants/").content.decode()
    assert "How fast ratings find the true order" in body
    group_tau = arms[GROUP]["tau"]["400"][1]
    single_tau = arms[PER_MATCH]["tau"]["400"][1]
    assert f"Kendall tau of {group_tau:.2f} when each duplicate group" in body
    assert f"{single_tau:.2f} when each random-deal match is rated on its own" in body
    assert html.escape(DUPLICATE_CAVEAT) in body  # the measured figures, and what they assume
    script = re.search(r'<script id="ranking-study-data"[^>]*>(.*?)</script>', body, re.S)
    assert script is not None
    chart = json.loads(script.group(1))
    assert chart["x"] == data["checkpoints"]
    assert [s["label"] for s in chart["series"]] == list(arms)
    assert chart["series"][0]["values"] == [arms[PER_MATCH]["tau"][str(c)][1] for c in chart["x"]]
    assert "study-chart.js" in body


def test_the_study_is_left_out_without_a_summary(tmp_path: Path) -> None:
    assert ranking_study(tmp_path / "missing.json") is None


@pytest.mark.parametrize("share", [0.25, 0.75])
def test_the_sentence_follows_the_numbers(tmp_path: Path, share: float) -> None:
    data = json.loads(SUMMARY.read_text())
    data["results"]["tau = sigma/100 (default)"][GROUP]["share_good"] = [0, share, 1]
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(data))
    study = ranking_study(path)
    assert study is not None
    assert f"{share:.0%} of the time with duplicate groups" in study.sentence
