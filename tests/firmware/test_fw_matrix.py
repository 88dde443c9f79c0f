"""The fault matrix and a clean cycle for each gear through the firmware under MicroPython, as
``mjtable diagnose --sim --backend mcu --device micropython --fault ...`` and ``mjtable cycle
--sim --backend mcu --device micropython --tile-count N`` run them (issue #17, "Must show").

Every injectable fault (``mjtable faults --list --json``) that applies to the mcu backend, on
every side it takes, must get the diagnosis code (and side) of the controller's catalogue for
its kind (``controller.faults.BY_KIND``), and the same code and side as the sim backend gives for
the same spec and seed (run here too: it takes a fraction of a second). Each case is a test of
its own.

Cost: a case runs in real time (the stand-in's virtual clock runs at real time's rate, at the
speed-up the simulated 115200-baud line carries, 4x): about 3 s of CPU and 10-20 s of wall time
for one cycle; the 66 cases about 3.6 min of CPU and 5.5 min of wall time with 3 jobs on a
loaded PC. The cases run in JOBS worker processes (``cli_worker.py``, several cases each, the
imports paid once), all started by the first test of this module that needs one: each test
then waits for its own case. ``MJTABLE_FW_JOBS`` sets JOBS (default 3): the cases spend most of
their wall time waiting for the virtual clock, not on the CPU.

A loaded PC: the host process of a case may read or acknowledge the simulated line late, and the
firmware then drops sensor events its full queue cannot send (E63 "could not send") or the host
hears nothing for a heartbeat window (E62); the diagnosis may then differ (a dropped edge). Such
a run is a true report of that run, not of the firmware: a case that fails with one of those signs
runs once more alone, and the retry shows in pytest's warnings summary. A case that fails without
them, or fails twice, fails.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import hardware
from app.cli import main as mjtable
from controller.faults import BY_KIND

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SEED = 11
#: worker processes running cases side by side
JOBS = max(1, int(os.environ.get("MJTABLE_FW_JOBS", "3")))
#: wall seconds a test waits for its case after the ones before it finished (a lift-slow case
#: runs up to six cycles)
CASE_TIMEOUT_S = 420
#: kinds whose diagnosis does not stop the cycle (a warning), as in the controller's matrix
WARNINGS = {"E22", "E23", "E52", "E61", "E63"}


def _injectable() -> list[dict]:
    """``mjtable faults --list --json``'s injectable kinds (run in this process)."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert mjtable(["faults", "--list", "--json"]) == 0
    return json.loads(out.getvalue())["injectable"]


KINDS = [k for k in _injectable() if "mcu" in k["backends"]]
FAULTS = [f"{k['kind']}:{side}" for k in KINDS for side in k["sides"]] + \
         [k["kind"] for k in KINDS if not k["sides"]]
GEARS = sorted(hardware.load_profile("default").gears)


def _longest_first(spec: str) -> int:
    # lift-slow shows as a trend after several cycles: start those first so the pool ends together
    return 0 if spec.startswith("lift-slow") else 1


def diagnose_argv(spec: str) -> list[str]:
    return ["diagnose", "--sim", "--backend", "mcu", "--device", "micropython", "--fault", spec,
            "--seed", str(SEED), "--json"]


def cycle_argv(gear: int) -> list[str]:
    return ["cycle", "--sim", "--backend", "mcu", "--device", "micropython", "--tile-count", str(gear),
            "--seed", str(SEED), "--json"]


#: in the order the workers take them
ORDER = sorted(FAULTS, key=_longest_first)
CASES = [diagnose_argv(s) for s in ORDER] + [cycle_argv(g) for g in GEARS]


class Pool:
    """JOBS ``cli_worker.py`` processes taking the cases from one queue; ``result(argv)`` waits
    for the case's result (dict of cli_worker)."""

    def __init__(self, cases: list[list[str]], env: dict) -> None:
        self.env = env
        self.todo: queue.Queue = queue.Queue()
        for argv in cases:
            self.todo.put(argv)
        self.results: dict[str, dict] = {}
        self.done = {json.dumps(a): threading.Event() for a in cases}
        self.procs = [subprocess.Popen([sys.executable, str(HERE / "cli_worker.py")], cwd=str(REPO), env=env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, bufsize=1)
                      for _ in range(min(JOBS, len(cases)))]
        self.threads = [threading.Thread(target=self._feed, args=(p,), daemon=True) for p in self.procs]
        for t in self.threads:
            t.start()

    def _feed(self, proc: subprocess.Popen) -> None:
        while True:
            try:
                argv = self.todo.get_nowait()
            except queue.Empty:
                break
            key = json.dumps(argv)
            try:
                proc.stdin.write(key + "\n")
                proc.stdin.flush()
            except OSError:       # the worker has gone
                self.todo.put(argv)
                return
            line = proc.stdout.readline()
            while line and not line.startswith("{"):   # a stray print of the worker: keep reading
                line = proc.stdout.readline()
            self.results[key] = json.loads(line) if line else {"code": -1, "out": "", "err": "the worker ended"}
            self.done[key].set()
            if not line:          # the worker has gone: the others take the rest
                return
        proc.stdin.close()

    def result(self, argv: list[str]) -> dict:
        key = json.dumps(argv)
        end = time.monotonic() + CASE_TIMEOUT_S
        while not self.done[key].wait(5):
            if any(self.done[k].is_set() for k in self.done if k != key):
                end = max(end, time.monotonic() + CASE_TIMEOUT_S / 2)   # the pool is moving
            if time.monotonic() > end:
                pytest.fail(f"no result for {' '.join(argv)} within {CASE_TIMEOUT_S} s")
        return self.results[key]

    def close(self) -> None:
        """The cases not started are dropped; the workers end after their current one."""
        while True:
            try:
                self.todo.get_nowait()
            except queue.Empty:
                break
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _selected(session) -> list[list[str]]:
    """The cases of this module's tests that the session runs (``-k``, a single test id), in
    CASES' order."""
    wanted = set()
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module.__name__ == __name__:
            if "spec" in params:
                wanted.add(json.dumps(diagnose_argv(params["spec"])))
            elif "gear" in params:
                wanted.add(json.dumps(cycle_argv(params["gear"])))
    return [a for a in CASES if json.dumps(a) in wanted]


@pytest.fixture(scope="module")
def pool(request, micropython, tmp_path_factory):
    state = tmp_path_factory.mktemp("mjtable-state")
    env = dict(os.environ, HOME=str(state), XDG_CONFIG_HOME=str(state), XDG_STATE_HOME=str(state),
               MJTABLE_STATE_DIR=str(state),
               PATH=str(Path(micropython).parent) + os.pathsep + os.environ.get("PATH", ""))
    p = Pool(_selected(request.session), env)
    yield p
    p.close()


def _sim_diagnosis(spec: str) -> tuple[str, str | None]:
    """(code, side) of ``mjtable diagnose --sim --fault spec`` on the sim backend, same seed."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mjtable(["diagnose", "--sim", "--fault", spec, "--seed", str(SEED), "--json"])
    d = json.loads(out.getvalue())["diagnosis"]
    return d["code"], d["side"]


def test_the_matrix_is_every_injectable_fault_on_every_side() -> None:
    import hardware.sim.faults as F
    kinds = {k.name for k in F.INJECTABLE.values() if "mcu" in k.backends}
    assert kinds == set(F.INJECTABLE)      # every kind applies to the mcu backend
    assert len(FAULTS) == sum(4 if F.INJECTABLE[k].sides else 1 for k in kinds)


def _late_host(diagnoses: list[dict], kind: str | None) -> str | None:
    """What in a run's diagnoses says that the host process ran late on a loaded PC (not what the
    firmware did): an E63 whose microcontroller dropped sensor events its full queue could not
    send (the host read or acknowledged late), or an E62 (no frame heard for a heartbeat window)
    without a link-broken fault. None when there is no such sign."""
    for d in diagnoses:
        if d["code"] == "E63" and "could not send" in d["observed"] and kind != "link-noise":
            return d["observed"]
        if d["code"] == "E62" and kind != "link-broken":
            return d["observed"]
    return None


def _once_more_if_late(pool, argv: list[str], problem, late) -> dict:
    """The case's result, or, when it failed (``problem(result)`` says why) in a run whose host ran
    late (``late(result)``), the result of a second run of it alone; the retry is printed."""
    r = pool.result(argv)
    why, sign = problem(r), late(r)
    if why is None or sign is None:
        return r
    again = Pool([argv], pool.env)
    try:
        r2 = again.result(argv)
    finally:
        again.close()
    warnings.warn(f"{' '.join(argv)}: ran again alone: the first run failed ({why}) with the host late "
                  f"({sign})", stacklevel=2)
    return r2


def _diagnose_problem(spec: str):
    kind, _, side = spec.partition(":")

    def problem(r: dict) -> str | None:
        if r["code"] != 0:
            return f"exit {r['code']} after {r.get('seconds')} s: {r['out'][-1500:]}{r['err'][-1500:]}"
        data = json.loads(r["out"])
        d = data["diagnosis"]
        if d["code"] != BY_KIND[kind].code or (side and d["side"] != side):
            return f"{d['code']} side {d['side']}: {d['observed']}"
        state = "walls-up" if d["code"] in WARNINGS else "safe-stop" if kind == "link-broken" else "fault"
        if data["state"] != state:       # a warning lets the cycle finish; a fault stops it
            return f"ended in {data['state']}, not {state}"
        return None
    return problem


def _diagnose_late(spec: str):
    kind = spec.partition(":")[0]

    def late(r: dict) -> str | None:
        if r["code"] not in (0, 1):
            return None
        data = json.loads(r["out"])
        return _late_host([d for d in [data["diagnosis"], *data["others"]] if d], kind)
    return late


@pytest.mark.parametrize("spec", ORDER)
def test_fault_through_the_firmware(pool, spec: str, monkeypatch, tmp_path) -> None:
    kind, _, side = spec.partition(":")
    argv = diagnose_argv(spec)
    r = _once_more_if_late(pool, argv, _diagnose_problem(spec), _diagnose_late(spec))
    why = _diagnose_problem(spec)(r)
    assert why is None, f"{spec}: {why}"
    d = json.loads(r["out"])["diagnosis"]
    if "sim" in hardware.INJECTABLE[kind].backends:
        monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path))
        assert _sim_diagnosis(spec) == (d["code"], d["side"]), f"{spec}: the sim backend diagnoses otherwise"


def _cycle_problem(gear: int):
    def problem(r: dict) -> str | None:
        if r["code"] not in (0, 1):
            return f"exit {r['code']}: {r['out'][-1500:]}{r['err'][-1500:]}"
        data = json.loads(r["out"])
        if not data["ok"] or data["state"] != "walls-up" or data["fault"] or data["warnings"]:
            return f"{data['state']}, fault {data['fault']}, warnings {data['warnings']}"
        return None
    return problem


def _cycle_late(r: dict) -> str | None:
    if r["code"] not in (0, 1):
        return None
    data = json.loads(r["out"])
    return _late_host([d for d in [data["fault"], *data["warnings"]] if d], None)


@pytest.mark.parametrize("gear", GEARS)
def test_a_clean_cycle_of_each_gear_through_the_firmware(pool, gear: int) -> None:
    r = _once_more_if_late(pool, cycle_argv(gear), _cycle_problem(gear), _cycle_late)
    why = _cycle_problem(gear)(r)
    assert why is None, f"{gear} tiles: {why}"       # no warning either: the line carried every event
    data = json.loads(r["out"])
    assert list(data["stacks"].values()) == list(hardware.load_profile("default").stacks(gear))
    assert data["tile_count"] == gear and data["dice"] is not None
