"""The table's own buttons reach the service: the same actions and refusals as the page's, logged."""

from __future__ import annotations

import time

from firmware_bridge import catalogue as C
from service_support import wait_state


def _press(control, sensor):
    model = control.backend.model
    control.call(lambda: model.press(sensor, True)).result(5)
    control.call(lambda: None).result(5)  # a turn of the loop reads the press
    time.sleep(0.6)                       # an idle loop looks at the machine every 0.5 s
    control.call(lambda: model.press(sensor, False)).result(5)


def _button_rows(log):
    return [e["data"] for e in log.events("operator", limit=20) if e["data"].get("source") == "button"]


def test_lift_button_starts_a_cycle_and_the_dice_button_throws_again(api) -> None:
    client, control, log = api
    _press(control, C.SENSOR_DICE_BUTTON)  # idle: refused, and the refusal is logged
    end = time.monotonic() + 5
    while not _button_rows(log) and time.monotonic() < end:
        time.sleep(0.05)
    assert _button_rows(log)[0]["action"] == "dice" and "walls up" in _button_rows(log)[0]["refused"]
    _press(control, C.SENSOR_LIFT_BUTTON_A)
    st = wait_state(client, {"walls-up"}, timeout=60)
    assert st["cycles"] == 1
    assert any(r == {"action": "cycle", "source": "button"} for r in _button_rows(log))
    _press(control, C.SENSOR_DICE_BUTTON)
    end = time.monotonic() + 20
    while not any(r.get("action") == "dice" and "refused" not in r for r in _button_rows(log)):
        assert time.monotonic() < end
        time.sleep(0.05)
    st = wait_state(client, {"walls-up"}, timeout=30)
    assert st["cycles"] == 1
