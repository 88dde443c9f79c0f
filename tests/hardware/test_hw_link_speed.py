"""The speed-up a simulated microcontroller's serial line carries (hardware.sim.mcu_device):
the sensor event rate it is computed from agrees with what the machine model makes."""

from __future__ import annotations

import pytest

import hardware
from controller import cycle as CY
from controller.runtime import TableRuntime
from hardware.sim.mcu_device import LINE_BAUD, link_speed_limit, sensor_event_rate
from hardware.vocabulary import Sensor, SensorChanged


def build_events(seed: int, gear: int) -> tuple[int, float]:
    """Sensor events of one cycle's build on the sim backend while all four feeders run: (count,
    machine seconds) from the first STACK pulse to the last one of the side that finished first."""
    b = hardware.open_backend("sim", seed=seed)
    seen: list[tuple[float, object]] = []
    advance = b.advance

    def watch(dt):
        events = advance(dt)
        seen.extend((b.now(), e) for e in events if isinstance(e, SensorChanged))
        return events
    b.advance = watch
    t = TableRuntime(b, CY.Settings.from_profile(b.profile, gear), dice=lambda: (3, 4, 2, 5)).run_cycle()
    b.close()
    assert t.phase is CY.Phase.WALLS_UP
    stacks = [(at, e.side) for at, e in seen if e.sensor is Sensor.STACK]
    start = stacks[0][0]
    end = min(max(at for at, s in stacks if s == side) for side in {s for _, s in stacks})
    return sum(start <= at <= end for at, _ in seen), end - start


@pytest.mark.parametrize("gear", [136, 108])
def test_the_event_rate_is_the_models(gear: int) -> None:
    n, span = zip(*(build_events(seed, gear) for seed in (1, 2, 3)))
    measured = sum(n) / sum(span)
    expected = sensor_event_rate(hardware.load_profile("default"))
    assert abs(measured - expected) <= 0.05 * expected, (measured, expected)


def test_the_default_profile_runs_at_4x_not_8x() -> None:
    p = hardware.load_profile("default")
    assert 4.0 <= link_speed_limit(p) < 6.0          # 6x dropped a pulse in a full run, 8x overflows
    assert link_speed_limit(p, LINE_BAUD * 2) == pytest.approx(2 * link_speed_limit(p))
