"""``hardware.open_table(TableSpec)``: the one way the command line and the service open a table."""

from __future__ import annotations

import pytest

import hardware
from hardware import BackendError, TableSpec, open_table


@pytest.mark.parametrize("fields, words", [
    ({"backend": "can"}, "backend must be one of sim, gpio, mcu, got 'can'"),
    ({"device": "c"}, "device must be one of python, micropython"),
    ({"simulated": "yes"}, "simulated must be true or false"),
    ({"simulated": False}, "backend sim is the simulated machine: a real table's backend is gpio or mcu"),
    ({"simulated": False, "backend": "gpio", "faults": ("lift-short:W",)}, "simulated machine only"),
    ({"backend": "mcu", "speed": 80}, "speed must be 1..50"),
    ({"backend": "mcu", "speed": float("nan")}, "speed must be 1..50"),
    ({"backend": "gpio", "speed": 4}, "speed applies to a simulated mcu table only"),
    ({"backend": "gpio", "device": "micropython"}, "device micropython is the device end of a simulated mcu"),
    ({"seed": 1.5}, "seed must be a whole number"),
    ({"seed": True}, "seed must be a whole number"),
    ({"faults": "lift-short:W"}, "faults must be a list"),
    ({"simulated": False, "backend": "mcu", "port": ""}, "port must be a serial device path"),
    ({"profile": ""}, "profile must be a profile name"),
    ({"reconnect": True}, "reconnect applies to a real mcu table only"),
    ({"simulated": False, "backend": "gpio", "reconnect": True}, "reconnect applies to a real mcu table only"),
])
def test_a_bad_spec_names_the_field_and_the_allowed_values(fields, words) -> None:
    with pytest.raises(BackendError) as e:
        TableSpec(**fields)
    assert words in str(e.value)


@pytest.mark.parametrize("kind", ["sim", "gpio"])
def test_a_simulated_table_of_each_virtual_clock_backend(kind) -> None:
    b = open_table(TableSpec(backend=kind, seed=5, faults=["lift-short:W"]))
    try:
        assert b.kind == kind and [f.kind for f in b.model.faults] == ["lift-short"]
        assert b.model.faults[0].side.name == "W"
    finally:
        b.close()


def test_the_spec_reaches_the_simulated_machine_and_no_seed_draws_one(monkeypatch) -> None:
    seen = []
    monkeypatch.setattr(hardware, "open_backend", lambda kind, **kw: seen.append((kind, kw)))
    open_table(TableSpec(backend="mcu", seed=11, speed=6, device="micropython", profile="default"))
    assert seen[-1] == ("mcu", {"profile": "default", "seed": 11, "faults": (), "speed": 6,
                                "device": "micropython"})
    open_table(TableSpec())
    open_table(TableSpec())
    first, second = seen[-2][1]["seed"], seen[-1][1]["seed"]
    assert isinstance(first, int) and isinstance(second, int) and first != second  # 1 in 2**30 to collide


def test_a_fault_that_is_not_one_is_refused_at_open() -> None:
    with pytest.raises(hardware.FaultSpecError):
        open_table(TableSpec(faults=("gremlins",)))


def test_a_real_mcu_table_without_its_port_is_one_error(tmp_path) -> None:
    with pytest.raises(BackendError) as e:
        open_table(TableSpec(simulated=False, backend="mcu", port=str(tmp_path / "ttyNONE")))
    assert "ttyNONE" in str(e.value)


def test_a_real_mcu_table_with_reconnect_starts_without_its_board(tmp_path) -> None:
    b = open_table(TableSpec(simulated=False, backend="mcu", port=str(tmp_path / "ttyNONE"), reconnect=True))
    try:
        assert b.kind == "mcu"
    finally:
        b.close()


def test_open_table_takes_only_a_spec() -> None:
    with pytest.raises(BackendError, match="TableSpec"):
        open_table("sim")  # type: ignore[arg-type]
