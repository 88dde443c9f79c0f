"""Diagnosis after a build in which sensor events were lost on the link (the device's queue was full)."""

from __future__ import annotations

import dataclasses

import hardware
from controller import cycle as CY
from controller import diagnosis as D
from hardware.vocabulary import Outcome, Sensor, Side


def test_a_feed_that_ended_at_its_deadline_with_every_stack_is_not_passed_when_events_were_lost() -> None:
    s = CY.Settings.from_profile(hardware.load_profile("default"), 136)
    obs = dataclasses.replace(D.Observations().start_feeding(), stacks=(17,) * 4, events_dropped=5,
                              feed_outcome=(Outcome.COMPLETED, Outcome.DEADLINE, Outcome.COMPLETED,
                                            Outcome.COMPLETED))
    sensors = {(Sensor.PUSH_HOME, Side(i)): 1 for i in range(4)} | {(Sensor.PUSH_HOME, Side.S): 0}
    diag = D.after_build(obs, sensors, s)
    assert diag is not None and (diag.code, diag.side) == ("E35", "S")
    # and a clean build with lost events still passes
    ok = dataclasses.replace(obs, feed_outcome=(Outcome.COMPLETED,) * 4)
    assert D.after_build(ok, sensors, s) is None
