"""mjtable cycle / diagnose / dice / config / faults, and the persisted settings."""

from __future__ import annotations

import json

import pytest

from cli_support import run
from controller import settings as ST


def test_cycle_json(capsys) -> None:
    code, out, err = run(["cycle", "--sim", "--seed", "3", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["state"] == "walls-up" and data["fault"] is None
    assert data["stacks"] == {"E": 17, "S": 17, "W": 17, "N": 17}
    assert data["dice"]["wall"] in "ESWN" and 1 <= data["dice"]["stack"] <= 17


def test_cycle_with_a_fault_shows_the_diagnosis(capsys) -> None:
    code, out, _ = run(["cycle", "--sim", "--seed", "3", "--fault", "feeder-jammed:N", "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and not data["ok"] and data["state"] == "fault"
    f = data["fault"]
    assert (f["code"], f["side"]) == ("E32", "N") and f["causes"] and f["checks"] and "N" in f["observed"]
    code, out, _ = run(["cycle", "--sim", "--seed", "3", "--fault", "feeder-jammed:N"], capsys)
    assert "FAULT E32" in out and "故障 E32" in out and "turn the conveyor wheel by hand" in out


def test_diagnose_runs_cycles_until_a_trend_shows(capsys) -> None:
    code, out, _ = run(["diagnose", "--sim", "--seed", "2", "--fault", "lift-slow:E", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["diagnosis"]["code"] == "E23" and data["cycles"] >= 2


def test_several_faults_at_once_are_all_reported(capsys) -> None:
    # two lifts stopping short: the first stops the motion, both are listed with their own diagnosis
    code, out, _ = run(["diagnose", "--sim", "--fault", "lift-short:E", "--fault", "lift-short:W", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and (data["diagnosis"]["code"], data["diagnosis"]["side"]) == ("E21", "E")
    assert [(d["code"], d["side"]) for d in data["diagnoses"]] == [("E21", "E"), ("E21", "W")]
    assert all("Lift " + d["side"] in d["observed"] for d in data["diagnoses"])
    code, out, _ = run(["diagnose", "--sim", "--fault", "lift-short:E", "--fault", "lift-short:W"], capsys)
    assert "2 faults in this cycle (E21 E, E21 W)" in out and "故障 E21（西边）" in out
    # two feeders that stall in the same moment: the first is stopped and diagnosed at once, the other with it
    code, out, _ = run(["cycle", "--sim", "--fault", "feeder-wire-loose:S", "--fault", "push-head-jammed:N", "--json"],
                       capsys)
    data = json.loads(out)
    assert sorted((d["code"], d["side"]) for d in data["diagnoses"]) == [("E31", "S"), ("E34", "N")]
    assert data["fault"] == data["diagnoses"][0]
    code, out, _ = run(["diagnose", "--sim", "--fault", "lift-short:W", "--json"], capsys)
    assert [d["code"] for d in json.loads(out)["diagnoses"]] == ["E21"]  # one fault: a list of one


@pytest.mark.parametrize("argv, words", [
    (["cycle"], "add --sim"),
    (["cycle", "--sim", "--fault", "lift-short:X"], "lift-short"),
    (["cycle", "--sim", "--fault", "wrong-gear:E"], "wrong-gear"),
    (["cycle", "--sim", "--fault", "link-noise"], "link-noise"),
    (["cycle", "--sim", "--tile-count", "150"], "allowed are 136, 144, 152, 108"),
    (["diagnose", "--sim"], "--fault KIND"),
    (["dice", "--values", "3,4,9,1"], "1 to 6"),
    (["dice", "--values", "3,4"], "needs 4"),
    (["config", "set", "tile-count", "140"], "allowed are 136, 144, 152, 108"),
    (["config", "set", "colour", "red"], "unknown setting"),
])
def test_bad_input_is_one_line(capsys, argv, words) -> None:
    code, out, err = run(argv, capsys)
    assert code == 1 and words in err and err.count("\n") == 1 and "Traceback" not in err


def test_config_persists_the_tile_count(capsys, state_dir) -> None:
    assert run(["config", "get", "tile-count"], capsys)[1] == "136\n"
    code, out, _ = run(["config", "set", "tile-count", "108"], capsys)
    assert code == 0 and "next cycle" in out
    assert ST.load().tile_count == 108 and (state_dir / "settings.json").exists()
    code, out, _ = run(["cycle", "--sim", "--seed", "1", "--json"], capsys)
    assert json.loads(out)["stacks"] == {"E": 14, "S": 13, "W": 14, "N": 13}


def test_config_sets_and_shows_the_flag_threshold(capsys, state_dir) -> None:
    code, out, _ = run(["config", "show"], capsys)
    assert code == 0 and out.splitlines() == ["tile-count = 136", "profile = default", "dice-method = two-throw",
                                              "dealer = E", "rules = none", "confirm-below = 0.6"]
    code, out, _ = run(["config", "set", "confirm-below", "0.75"], capsys)
    assert code == 0 and out.startswith("confirm-below = 0.75 (saved in") and "applies to the next photo read" in out
    assert run(["config", "get", "confirm-below"], capsys)[1] == "0.75\n"
    assert "confirm-below = 0.75" in run(["config", "show"], capsys)[1]
    assert json.loads((state_dir / "settings.json").read_text())["confirm_below"] == 0.75
    for bad in ("0.3", "+0.7", "0.7_5", "7e-1", "0x1", "٠.٧", "０.７"):  # only a number as it is written: not Python's other spellings
        code, out, err = run(["config", "set", "confirm-below", bad], capsys)
        assert code == 1 and err.count("\n") == 1 and "give a confidence from 0.5 to 0.95" in err, bad
    assert ST.load().confirm_below == 0.75
    for argv, says in ((["config", "show", "dealer"], "config show takes no key"),
                       (["config", "get"], "config get needs a key: tile-count, profile, dice-method, dealer, rules, "
                        "confirm-below")):
        code, out, err = run(argv, capsys)
        assert code == 1 and says in err and err.count("\n") == 1


def test_a_broken_settings_file_is_named(capsys, state_dir) -> None:
    state_dir.mkdir(parents=True)
    (state_dir / "settings.json").write_text('{"tile_count": 999}')
    code, _, err = run(["config", "get", "tile-count"], capsys)
    assert code == 1 and "tile-count '999'" in err


def test_dice_with_motor_dice_values(capsys) -> None:
    code, out, _ = run(["dice", "--values", "3,4,2,5", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and (data["wall"], data["stack"]) == ("W", 14) and data["source"].startswith("motor")
    code, out, _ = run(["dice", "--method", "one-throw"], capsys)
    assert code == 0 and "one-throw, electronic dice" in out


def test_faults_list_json(capsys) -> None:
    code, out, _ = run(["faults", "--list", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and {f["code"] for f in data["faults"]} >= {"E11", "E21", "E31", "E32", "E41", "E42", "E61"}
    kinds = {k["kind"]: k["sides"] for k in data["injectable"]}
    assert kinds["lift-short"] == ["E", "S", "W", "N"] and kinds["wrong-gear"] == []
    assert all(set(f) >= {"code", "meaning_en", "meaning_zh"} for f in data["faults"])


def test_one_fault_code_in_full(capsys) -> None:
    from controller.faults import CATALOGUE
    code, out, _ = run(["faults", "E21"], capsys)
    assert code == 0 and "lift-not-reaching-top" in out and "SAFETY:" in out and "安全：" in out
    assert "Connectors:" in out and "--fault lift-short:W" in out
    for f in CATALOGUE:  # every code has its parts, connectors and safety note, in both languages
        code, out, _ = run(["faults", f.code.lower(), "--json"], capsys)
        d = json.loads(out)
        assert code == 0 and d["code"] == f.code
        assert d["parts"] and d["parts_zh"] and d["connectors"] and d["connectors_zh"] and d["safety"] and d["safety_zh"]
    code, _, err = run(["faults", "E99"], capsys)
    assert code == 1 and err.count("\n") == 1 and "E21" in err and "Traceback" not in err


def test_a_broken_settings_file_can_be_repaired_with_config_set(capsys, state_dir) -> None:
    state_dir.mkdir(parents=True)
    (state_dir / "settings.json").write_bytes(b"\xff\xfe")
    code, _, err = run(["cycle", "--sim", "--seed", "1"], capsys)
    assert code == 1 and "settings.json" in err and "config set" in err and "Traceback" not in err
    code, out, _ = run(["config", "set", "dealer", "东"], capsys)
    assert code == 0 and ST.load().dealer == "E"


def test_an_unwritable_state_folder_is_one_line(capsys, monkeypatch) -> None:
    monkeypatch.setenv("MJTABLE_STATE_DIR", "/proc/no-such-folder")
    code, _, err = run(["config", "set", "tile-count", "144"], capsys)
    assert code == 1 and "cannot write settings file" in err and "MJTABLE_STATE_DIR" in err


@pytest.mark.parametrize("argv", [["cycle", "--sim", "--speed", "-1"], ["cycle", "--sim", "--speed", "nan"],
                                  ["diagnose", "--sim", "--fault", "disc-stall", "--max-cycles", "0"]])
def test_bad_numbers_are_refused(capsys, argv) -> None:
    code, _, err = run(argv, capsys)
    assert code == 1 and err.count("\n") == 1


def test_sides_accept_the_wind_spellings(capsys) -> None:
    code, out, _ = run(["cycle", "--sim", "--seed", "3", "--fault", "feeder-jammed:north", "--json"], capsys)
    assert json.loads(out)["fault"]["side"] == "N"
    code, out, _ = run(["dice", "--values", "3,4,2,5", "--dealer", "南", "--json"], capsys)
    assert code == 0 and json.loads(out)["dealer"] == "S"


def test_warnings_are_labelled_as_warnings(capsys) -> None:
    code, out, _ = run(["cycle", "--sim", "--seed", "3", "--fault", "lift-late:S"], capsys)
    assert code == 0 and "WARNING E22" in out and "警告 E22（南边）" in out and "FAULT" not in out


def _captured_spec(monkeypatch) -> list:
    """Make ``hardware.open_table`` record the spec it is given and open nothing."""
    import hardware
    specs = []

    def record(spec):
        specs.append(spec)
        raise KeyboardInterrupt  # stops the command before any table exists
    monkeypatch.setattr(hardware, "open_table", record)
    return specs


@pytest.mark.parametrize("argv", [["cycle", "--sim", "--backend", "mcu"],
                                  ["diagnose", "--sim", "--backend", "mcu", "--fault", "lift-short:W"]])
def test_a_simulated_mcu_runs_by_default_at_the_speed_its_line_carries(capsys, monkeypatch, argv) -> None:
    """The default speed-up of a simulated microcontroller is the whole speed-up below what its
    115200-baud line carries (4x for the default profile, not the 8x that dropped sensor events)."""
    from hardware.sim.mcu_device import link_speed_limit
    import hardware
    specs = _captured_spec(monkeypatch)
    code, _, _ = run(argv, capsys)
    assert code == 130 and len(specs) == 1
    assert specs[0].speed == 4.0 <= link_speed_limit(hardware.load_profile("default"))


@pytest.mark.parametrize("command", [["cycle"], ["diagnose", "--fault", "lift-short:W"]])
def test_a_simulated_mcu_faster_than_its_line_is_refused_naming_the_limit(capsys, monkeypatch, command) -> None:
    specs = _captured_spec(monkeypatch)
    code, _, err = run([*command, "--sim", "--backend", "mcu", "--speed", "8"], capsys)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err and not specs
    assert "115200-baud" in err and "up to 4.2x" in err and "--speed 4.2 or less" in err and "E63" in err
    code, _, _ = run([*command, "--sim", "--backend", "mcu", "--speed", "4.2"], capsys)
    assert code == 130 and specs[-1].speed == 4.2      # at the limit: allowed


def test_diagnose_reports_the_injected_faults_diagnosis_not_one_met_on_the_way(capsys, monkeypatch) -> None:
    """A warning of another kind in the first cycle (here an E63: the simulated line could not keep
    up, as a loaded PC makes it on the mcu backend) is listed apart; diagnose runs on until the
    injected lift-slow shows its trend (E23)."""
    import dataclasses

    from app import table_cli
    from controller.diagnosis import events_dropped
    real = table_cli.TableRuntime.run_cycle
    calls = []

    def with_a_late_line(self):
        t = real(self)
        calls.append(t)
        if len(calls) == 1:
            t = dataclasses.replace(t, warnings=t.warnings + (events_dropped(3),))
        return t
    monkeypatch.setattr(table_cli.TableRuntime, "run_cycle", with_a_late_line)
    code, out, _ = run(["diagnose", "--sim", "--seed", "2", "--fault", "lift-slow:E", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["diagnosis"]["code"] == "E23" and data["cycles"] >= 2
    assert [d["code"] for d in data["others"]] == ["E63"] and data["others"][0]["observed"].startswith(
        "The microcontroller could not send 3 sensor events")
    calls.clear()
    code, out, _ = run(["diagnose", "--sim", "--seed", "2", "--fault", "lift-slow:E"], capsys)
    assert "WARNING E23" in out and "Also seen on the way:" in out and "WARNING E63" in out
