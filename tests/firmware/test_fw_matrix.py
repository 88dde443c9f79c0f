"""The fault matrix and a clean cycle for each gear through the firmware under MicroPython, as
``mjtable diagnose --sim --backend mcu --device micropython --fault ...`` and ``mjtable cycle
--sim --backend mcu --device micropython --tile-count N`` run them (issue #17, "Must show").

Every injectable fault (``mjtable faults --list --json``) that applies to the mcu backend, on
every side it takes, must get the diagnosis code (and side) of the controller's catalogue for
its kind (``controller.faults.BY_KIND``), and the same code and side as the sim backend gives for
the same spec and seed (run here too: it takes a fraction of a second). Each case is a test of
its own.

Cost: a case runs in real time (the stand-in's virtual clock runs at real time's rate, at the
speed-up the simulated 115200-baud line carries, 4x), about 5 s of CPU and 10-20 s of wall time
for one cycle. The cases run in JOBS worker processes (``cli_worker.py``, several cases each, the
imports paid once), all started by the first test of this module that needs one: each test
then waits for its own case. ``MJTABLE_FW_JOBS`` sets JOBS (default 3): the cases spend most of
their wall time waiting for the virtual clock, not on the CPU.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
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
            proc.stdin.write(key + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            while line and not line.startswith("{"):   # a stray print of the worker: keep reading
                line = proc.stdout.readline()
            self.results[key] = json.loads(line) if line else {"code": -1, "out": "", "err": "the worker ended"}
            self.done[key].set()
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


@pytest.mark.parametrize("spec", ORDER)
def test_fault_through_the_firmware(pool, spec: str, monkeypatch, tmp_path) -> None:
    kind, _, rest = spec.partition(":")
    side = rest or None
    r = pool.result(diagnose_argv(spec))
    assert r["code"] == 0, f"{spec}: exit {r['code']} after {r.get('seconds')} s\n{r['out'][-2000:]}{r['err'][-2000:]}"
    data = json.loads(r["out"])
    d = data["diagnosis"]
    assert d["code"] == BY_KIND[kind].code, f"{spec}: {d['code']} {d['observed']}"
    if side:
        assert d["side"] == side, f"{spec}: {d['side']} {d['observed']}"
    if d["code"] in WARNINGS:
        assert data["state"] == "walls-up", data["state"]       # the cycle went on and finished
    else:
        assert data["state"] == ("safe-stop" if kind == "link-broken" else "fault"), data["state"]
    if "sim" in hardware.INJECTABLE[kind].backends:
        monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path))
        assert _sim_diagnosis(spec) == (d["code"], d["side"]), f"{spec}: the sim backend diagnoses otherwise"


@pytest.mark.parametrize("gear", GEARS)
def test_a_clean_cycle_of_each_gear_through_the_firmware(pool, gear: int) -> None:
    r = pool.result(cycle_argv(gear))
    assert r["code"] == 0, f"{gear}: exit {r['code']}\n{r['out'][-2000:]}{r['err'][-2000:]}"
    data = json.loads(r["out"])
    stacks = hardware.load_profile("default").stacks(gear)
    assert data["ok"] and data["state"] == "walls-up" and data["fault"] is None, data
    assert data["warnings"] == [], data["warnings"]           # no E63: the line carried every event
    assert list(data["stacks"].values()) == list(stacks) and data["tile_count"] == gear
    assert data["dice"] is not None
