"""The service keeps the last cycles' trace and saves it with every fault:
``GET /api/faults/{event id}/trace`` (token-protected), replayed to the same diagnosis (issue #16 s.4)."""

from __future__ import annotations

from controller.replay import replay
from controller.tracing import CycleRing
from hardware.trace import parse_trace
from service_support import AUTH, wait_state


def test_a_faults_trace_is_kept_beside_it_and_replays_to_the_same_diagnosis(api) -> None:
    c, control, log = api
    c.post("/api/cycle", headers=AUTH)
    wait_state(c, ["walls-up"])
    c.post("/api/cycle", headers=AUTH)  # a second clean cycle: the ring keeps both
    wait_state(c, ["walls-up"])
    assert c.post("/api/sim/fault", headers=AUTH, json={"fault": "lift-short:W"}).status_code == 200
    c.post("/api/cycle", headers=AUTH)
    st = wait_state(c, ["fault"])
    assert (st["fault"]["code"], st["fault"]["side"]) == ("E21", "W")
    eid = c.get("/api/faults").json()["recent"][0]["id"]
    r = c.get(f"/api/faults/{eid}/trace")
    assert r.status_code == 401  # a trace is the machine's log: the token is asked, as for a write
    r = c.get(f"/api/faults/{eid}/trace", headers=AUTH)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert f"fault-{eid}.jsonl" in r.headers["content-disposition"]
    trace = parse_trace(r.text.splitlines(True), f"fault-{eid}.jsonl")
    assert trace.header.backend == "sim" and trace.header.tile_count == 136
    got = replay(trace)
    assert got.cycles == 3 and got.divergence is None and got.ends is None
    assert got.diagnoses[0].to_dict() == st["fault"] == control.rt.table.fault.to_dict()
    # not a fault, or no such event: 404 with one line; a bad id: 422
    cycle_id = log.events("cycle", 1)[0]["id"]
    r = c.get(f"/api/faults/{cycle_id}/trace", headers=AUTH)
    assert r.status_code == 404 and r.json()["error"]["code"] == "no-trace"
    assert c.get("/api/faults/0/trace", headers=AUTH).status_code == 422
    assert c.get("/api/faults/x/trace", headers=AUTH).status_code == 422


def test_the_ring_keeps_the_last_cycles_and_replays_alone() -> None:
    ring = CycleRing(cycles=2)
    ring.add({"mjtable_trace": 1})
    for n in range(4):
        ring.add({"t": n, "op": "start_cycle", "dice": [1, 1, 1, 1], "carry": {"cycles": n}})
        ring.add({"t": n + 0.5, "op": "tick"})
    lines = ring.text().splitlines()
    assert lines[0] == '{"mjtable_trace":1}' and len(lines) == 5 and '"cycles":2' in lines[1]
    small = CycleRing(cycles=5, max_records=3)
    small.add({"mjtable_trace": 1})
    for n in range(3):
        small.add({"t": n, "op": "start_cycle", "dice": [1]})
        small.add({"t": n, "op": "tick"})
    # over the record cap the oldest cycles go, never the running one
    assert small.text().count("start_cycle") == 1
