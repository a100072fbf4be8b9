"""One timer cuts every call in flight at its own deadline, like ``asyncio.timeout`` would."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.deadlines import Deadlines

# Timers fire a little late on a loaded machine; never early.
SLACK_S = 0.08


async def _cut_after(deadlines: Deadlines, seconds: float, work_s: float) -> tuple[bool, float]:
    """Run ``work_s`` of sleeping under a deadline: (cut?, seconds it took)."""
    started = time.perf_counter()
    try:
        with deadlines.cut_after(seconds):
            await asyncio.sleep(work_s)
    except TimeoutError:
        return True, time.perf_counter() - started
    return False, time.perf_counter() - started


def test_calls_of_mixed_durations_are_each_cut_at_their_own_deadline() -> None:
    async def main() -> list[tuple[bool, float]]:
        deadlines = Deadlines(asyncio.get_running_loop())
        # A long deadline first, then shorter ones: the timer must re-arm for the earlier.
        plan = [(0.30, 10), (0.05, 10), (0.15, 0.01), (0.10, 10), (0.05, 10), (0.20, 0.12)]
        results = await asyncio.gather(*(_cut_after(deadlines, s, w) for s, w in plan))
        deadlines.close()
        return results

    results = asyncio.run(main())
    expected = [(True, 0.30), (True, 0.05), (False, 0.01), (True, 0.10), (True, 0.05)]
    expected.append((False, 0.12))
    for (cut, took), (want_cut, want_s) in zip(results, expected, strict=True):
        assert cut == want_cut
        assert want_s - 0.005 <= took <= want_s + SLACK_S


def test_a_call_that_ended_in_time_is_never_cancelled_later() -> None:
    async def main() -> None:
        deadlines = Deadlines(asyncio.get_running_loop())
        for _ in range(50):
            with deadlines.cut_after(0.05):
                await asyncio.sleep(0)
        # The timer still fires for the first call's deadline; nothing may be cancelled.
        await asyncio.sleep(0.12)
        assert not deadlines._queues
        assert deadlines._timer is None

    asyncio.run(main())


def test_sequential_calls_are_each_cut_after_the_previous_ended_in_time() -> None:
    async def main() -> list[bool]:
        deadlines = Deadlines(asyncio.get_running_loop())
        cuts = []
        for work_s in (0.01, 0.2, 0.01, 0.2):
            cut, took = await _cut_after(deadlines, 0.06, work_s)
            assert took <= 0.06 + SLACK_S
            cuts.append(cut)
        return cuts

    assert asyncio.run(main()) == [False, True, False, True]


def test_a_cancellation_from_outside_is_not_turned_into_a_timeout() -> None:
    async def main() -> None:
        deadlines = Deadlines(asyncio.get_running_loop())
        task = asyncio.create_task(_cut_after(deadlines, 5.0, 10))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadlines.close()

    asyncio.run(main())


def test_a_task_can_go_on_after_its_call_was_cut() -> None:
    async def main() -> int:
        deadlines = Deadlines(asyncio.get_running_loop())
        cut, _ = await _cut_after(deadlines, 0.02, 10)
        assert cut
        await asyncio.sleep(0.01)  # the cancellation was consumed, not left pending
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    assert asyncio.run(main()) == 0
