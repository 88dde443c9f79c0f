"""The status the pages get follows the sensors it shows, also while nothing moves."""

from __future__ import annotations

from firmware_bridge import catalogue as C
from service_support import status_until as _status_until


def test_a_jam_and_a_push_head_seen_while_idle_reach_the_page(api) -> None:
    client, control, log = api
    model = control.backend.model
    assert client.get("/api/status").json()["jam"] is False
    # a tile jams at the outlet while the machine is idle (a player's hand, a tile pushed in)
    control.call(lambda: model._phys(C.SENSOR_JAM, C.SIDE_NONE, 1)).result(5)
    st = _status_until(client, lambda s: s["jam"])
    assert st["state"] == "idle" and st["jam"] is True
    # the technician takes it out: the page must not keep showing the jam
    control.call(lambda: model._phys(C.SENSOR_JAM, C.SIDE_NONE, 0)).result(5)
    st = _status_until(client, lambda s: not s["jam"])
    assert st["jam"] is False
    # a push head pushed out by hand shows as out
    control.call(lambda: model._phys(C.SENSOR_PUSH_HOME, 2, 0)).result(5)
    st = _status_until(client, lambda s: s["walls"][2]["push_head"] == "out")
    assert [w["push_head"] == "out" for w in st["walls"]] == [False, False, True, False]


def test_a_simulated_jam_is_taken_out_when_the_fault_is_cleared(tmp_path) -> None:
    from service_support import make_client, wait_state
    client, control, log = make_client(tmp_path, faults=["tile-jam"], speed=2.0)
    with client:
        control.call(control.start_cycle).result(10)
        st = wait_state(client, {"fault"}, timeout=30)
        assert st["fault"]["code"] == "E53" and st["jam"] is True
        control.call(control.clear_fault).result(10)
        st = _status_until(client, lambda s: s["state"] != "fault" and s["jam"] is False)
        # re-homing (the fault stays injected: the disc jams again about a second into the shuffle)
        assert st["jam"] is False and st["state"] in ("homing", "shuffling")
    log.close()
