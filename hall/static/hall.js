// The hall's page: every table at a glance, the faults of the last days, the maintenance list.
// Reads /api/fleet, /api/faults and /api/maintenance with the hall's token (Authorization: Bearer),
// kept in this browser's storage from the pairing link "#token=<value>". No inline style or handler
// is ever written (the CSP forbids them): elements are built with the DOM and classes.
"use strict";
const $ = (id) => document.getElementById(id);
const KEY = "mjtable.hall.token";
const POLL_MS = 2000;
const SOON_CYCLES = 200;

(function takeToken() {
  const m = /^#token=([^&#]+)$/.exec(location.hash);
  if (location.hash.startsWith("#token=")) history.replaceState(null, "", location.pathname + location.search);
  if (m) { try { localStorage.setItem(KEY, decodeURIComponent(m[1])); } catch (e) { /* malformed: ignored */ } }
})();
const token = () => localStorage.getItem(KEY) || "";

async function get(path) {
  const r = await fetch(path, { headers: { Authorization: "Bearer " + token() } });
  if (r.status === 401) { const e = new Error("unauthorized"); e.status = 401; throw e; }
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function when(t) {
  if (!t) return "";
  const d = new Date(t * 1000);
  return d.toLocaleString(undefined, { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" });
}

function renderTables(fleet) {
  const box = $("tables");
  box.replaceChildren();
  let online = 0, faults = 0;
  for (const t of fleet.tables) {
    const card = el("div", "card");
    if (!t.online) card.classList.add("offline");
    else if (t.fault_code) card.classList.add("fault");
    if (t.online) online++;
    if (t.fault_code) faults++;
    card.append(el("div", "id", t.table));
    card.append(el("div", "state", t.online ? `${t.state || "?"} ${t.state_zh || ""}` : "offline 离线"));
    if (t.fault_code) {
      const f = el("div");
      f.append(el("span", "code", t.fault_code + " "));
      f.append(document.createTextNode(t.fault ? `${t.fault.side ? t.fault.side + ": " : ""}${t.fault.meaning || ""}` : ""));
      card.append(f);
    }
    card.append(el("div", "meta", `${t.cycles ?? "?"} cycles · ${t.tile_count ?? "?"} tiles` +
                                  (t.pending_events ? ` · ${t.pending_events} waiting` : "")));
    box.append(card);
  }
  $("summary").textContent = `${fleet.tables.length} tables · ${online} online · ${faults} in fault`;
  const b = fleet.broker;
  $("broker").textContent = b ? (b.connected ? `broker ${b.broker}` : `broker ${b.broker} unreachable`) : "no broker";
  $("broker").classList.toggle("ok", Boolean(b && b.connected));
  $("broker").classList.toggle("bad", Boolean(b && !b.connected));
  $("updated").textContent = "updated " + new Date(fleet.t * 1000).toLocaleTimeString();
}

function renderFaults(data) {
  $("days").textContent = data.days;
  const body = $("faults").tBodies[0];
  body.replaceChildren();
  for (const f of data.faults) {
    const tr = el("tr");
    tr.append(el("td", "", when(f.t)), el("td", "", f.table), el("td", "code", f.code), el("td", "", f.side || ""));
    const what = el("td");
    what.append(el("div", "", f.meaning || f.name || ""));
    if (f.observed) what.append(el("div", "muted", f.observed));
    tr.append(what);
    body.append(tr);
  }
  $("no-faults").hidden = data.faults.length > 0;
}

function renderMaintenance(data) {
  const body = $("maintenance").tBodies[0];
  body.replaceChildren();
  data.lifts.forEach((m, i) => {
    const tr = el("tr", m.cycles_left !== null && m.cycles_left < SOON_CYCLES ? "soon" : "");
    tr.append(el("td", "num", i + 1), el("td", "", m.table), el("td", "", m.side),
              el("td", "num", m.now_s.toFixed(2) + " s"), el("td", "num", "+" + (m.slope_s_per_cycle * 1000).toFixed(1) + " ms"),
              el("td", "num", m.deadline_s !== null ? m.deadline_s.toFixed(1) + " s" : "?"),
              el("td", "num", m.cycles_left !== null ? Math.round(m.cycles_left) : "?"));
    body.append(tr);
  });
  $("no-maintenance").hidden = data.lifts.length > 0;
}

function renderTournament(t) {
  $("tournament").hidden = !t.name;
  if (!t.name) return;
  $("t-name").textContent = t.name;
  const started = t.sessions.filter((s) => s.match !== null).length;
  const done = t.sessions.filter((s) => s.finished).length;
  $("t-progress").textContent = `${t.sessions.length} sessions: ${started} started, ${done} finished.`;
  const sel = $("t-round");
  if (document.activeElement !== sel) {
    sel.replaceChildren(...Object.keys(t.rounds).map((n) => { const o = el("option", "", `${n}`); o.value = n; return o; }));
    sel.value = String(t.round);
  }
  const body = $("standings").tBodies[0];
  body.replaceChildren();
  for (const s of t.standings) {
    const tr = el("tr");
    tr.append(el("td", "num", s.rank), el("td", "", s.player), el("td", "num", s.standard_points),
              el("td", "num", s.match_points), el("td", "", s.sessions.join(" · ")));
    body.append(tr);
  }
}

async function downloadCsv() {
  const r = await fetch("/api/tournament/csv", { headers: { Authorization: "Bearer " + token() } });
  if (!r.ok) { $("message").textContent = "CSV: HTTP " + r.status; return; }
  const a = document.createElement("a");
  a.href = URL.createObjectURL(await r.blob());
  a.download = "mjtable-standings.csv";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function refresh() {
  if (!token()) { $("pair-form").hidden = false; $("main").hidden = true; return; }
  try {
    const [fleet, faults, maint, tour] = await Promise.all([get("/api/fleet"), get("/api/faults"),
                                                           get("/api/maintenance"), get("/api/tournament")]);
    $("pair-form").hidden = true;
    $("main").hidden = false;
    $("message").textContent = "";
    renderTables(fleet);
    renderFaults(faults);
    renderMaintenance(maint);
    renderTournament(tour);
  } catch (e) {
    if (e.status === 401) { $("pair-form").hidden = false; $("main").hidden = true; $("message").textContent = "Wrong token 令牌错误"; }
    else $("message").textContent = "The hall does not answer: " + e.message;
  }
}

$("t-csv").addEventListener("click", downloadCsv);
$("t-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $("t-form-name").value.trim();
  const r = await fetch("/api/tournament/csv?name=" + encodeURIComponent(name), {
    method: "POST", headers: { Authorization: "Bearer " + token(), "Content-Type": "text/csv" },
    body: $("t-form-csv").value });
  const body = await r.json().catch(() => ({}));
  if (r.ok) { $("message").textContent = ""; $("t-register").open = false; refresh(); }
  else $("message").textContent = "Not registered: " + ((body.error && body.error.message) || "HTTP " + r.status);
});
$("t-round-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const r = await fetch("/api/tournament/round", {
    method: "POST", headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
    body: JSON.stringify({ round: Number($("t-round").value) }) });
  const body = await r.json().catch(() => ({}));
  if (r.ok) { $("message").textContent = ""; refresh(); }
  else $("message").textContent = "Round not set: " + ((body.error && body.error.message) || "HTTP " + r.status);
});
$("pair-form").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem(KEY, $("token-input").value.trim());
  $("token-input").value = "";
  refresh();
});
refresh();
setInterval(refresh, POLL_MS);
