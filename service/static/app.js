// mjtable web page: plain JavaScript, no build step. Status by server-sent events (/api/events);
// control and write requests carry the token (Authorization: Bearer) kept in this browser's storage.
"use strict";
const T = {
  zh: { title: "自动麻将机", offline: "离线", online: "在线", unpaired: "未配对", paired: "已配对", table: "牌桌",
    state: "状态", cycle: "开始洗牌", dice: "掷骰", liftUp: "升牌", liftDown: "降牌", refill: "补牌", stop: "全部停止",
    token: "令牌", pair: "配对", fault: "故障", noFault: "无故障", observed: "现象", causes: "可能原因",
    checks: "检查步骤", clear: "清除故障", inject: "模拟故障", injectBtn: "注入", selftest: "自检",
    runSelftest: "运行自检", scoring: "计分", hand: "手牌", photo: "照片", selfDrawn: "自摸", winner: "和牌者",
    discarder: "放炮者", score: "计分", fanName: "番种", points: "分", sheet: "记分表", total: "合计",
    legal: "和牌成立", notLegal: "不足起和分（8 分）", stacks: "墩", tiles: "张", needToken: "请先用令牌配对",
    totals: "局分", standard: "标准分", pass: "通过", fail: "不合格", selftestPassed: "自检通过", selftestFailed: "自检未通过",
    warning: "警告", running: "运行中…", receives: "和牌者得", pushOut: "推牌头未回原位", jam: "卡牌",
    linkUp: "主控板已连接", linkLost: "与主控板失去连接，正在自动重连", logDamaged: "事件日志已损坏，已移至一旁并新建日志：",
    annotatedAlt: "标出牌的照片" },
  en: { title: "Automatic mahjong table", offline: "offline", online: "live", unpaired: "not paired", paired: "paired",
    table: "Table", state: "State", cycle: "Start cycle", dice: "Roll dice", liftUp: "Lifts up", liftDown: "Lifts down",
    refill: "Refill", stop: "Stop all", token: "Token", pair: "Pair", fault: "Fault", noFault: "No fault",
    observed: "Observed", causes: "Likely causes", checks: "Next checks", clear: "Clear fault",
    inject: "Simulated fault", injectBtn: "Inject", selftest: "Self-test", runSelftest: "Run self-test",
    scoring: "Scoring", hand: "Hand", photo: "Photo", selfDrawn: "Self-drawn", winner: "Winner",
    discarder: "Discarder", score: "Score", fanName: "Fan", points: "Pts", sheet: "Score sheet", total: "Total",
    legal: "Legal win", notLegal: "Below the 8-point minimum", stacks: "stacks", tiles: "tiles",
    needToken: "Pair with the token first", totals: "Session points", standard: "Standard points", pass: "PASS",
    fail: "FAIL", selftestPassed: "Self-test passed", selftestFailed: "Self-test failed", warning: "Warning",
    running: "running…", receives: "winner receives", pushOut: "push head not home", jam: "tile jammed",
    linkUp: "board linked", linkLost: "link to the table's board lost, reconnecting by itself",
    logDamaged: "The event log was damaged: it was moved aside and a new log started. Kept as",
    annotatedAlt: "the photo with the tiles marked" },
};
let lang = localStorage.getItem("mjtable.lang") || "zh";
let status = null, lastScore = null, lastSelftest = null, live = false;
const $ = (id) => document.getElementById(id);
const t = (k) => (T[lang][k] ?? k);
const zh = () => lang === "zh";

// The token comes from the pairing link's fragment (#token=...; never sent to the server) or the form.
(function takeToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) { localStorage.setItem("mjtable.token", decodeURIComponent(m[1])); history.replaceState(null, "", location.pathname); }
})();
const token = () => localStorage.getItem("mjtable.token") || "";

async function api(method, path, body, isForm) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  let payload;
  if (isForm) payload = body; else if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  const r = await fetch(path, { method, headers, body: payload });
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) {
    const msg = (data && data.error && data.error.message) || r.statusText;
    if (r.status === 401) showMessage(t("needToken") + " (" + msg + ")"); else showMessage(msg);
    throw new Error(msg);
  }
  showMessage("");
  return data;
}
function showMessage(m) { $("message").textContent = m; }

function applyLang() {
  document.documentElement.lang = lang;
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("lang").textContent = zh() ? "English" : "中文";
  showLive();
  checkPairing();
  if (status) renderStatus(status);
  if (lastScore) renderScore(lastScore);
  if (lastSelftest) renderSelftest(lastSelftest);
  loadSheet();
}

// ---- the table ----
const SIDE_ZH = { E: "东", S: "南", W: "西", N: "北" };
function renderStatus(s) {
  status = s;
  $("state").textContent = zh() ? s.state_zh : s.state;
  $("state").dataset.state = s.state;
  $("gear").textContent = ` · ${s.tiles_in_play.count} ${t("tiles")} (${zh() ? s.tiles_in_play.zh : s.tiles_in_play.en})` +
    (s.pending_tile_count ? ` → ${s.pending_tile_count}` : "");
  const g = $("walls"); g.innerHTML = "";
  const pos = { S: [70, 250, 160, 22], N: [70, 28, 160, 22], W: [28, 70, 22, 160], E: [250, 70, 22, 160] };
  const txt = [];
  for (const w of s.walls) {
    const [x, y, wd, ht] = pos[w.side];
    const frac = w.expected ? Math.min(1, w.stacks / w.expected) : 0;
    const horiz = wd > ht;
    g.insertAdjacentHTML("beforeend",
      `<rect class="wall" x="${x}" y="${y}" width="${wd}" height="${ht}"/>` +
      `<rect class="wall filled ${w.lift === "up" ? "up" : ""}" data-side="${w.side}" data-lift="${w.lift}" x="${x}" y="${y}" ` +
      `width="${horiz ? wd * frac : wd}" height="${horiz ? ht : ht * frac}"/>` +
      `<text class="lift-label" x="${x + (horiz ? wd / 2 - 30 : -2)}" y="${y + (horiz ? (w.side === "N" ? -4 : 36) : ht + 14)}">` +
      `${zh() ? SIDE_ZH[w.side] : w.side} ${w.stacks}/${w.expected} ${w.lift}</text>`);
    txt.push(`<span class="wall-count" data-side="${w.side}">${zh() ? SIDE_ZH[w.side] : w.side}: ${w.stacks}/${w.expected} ${t("stacks")}, ${w.lift}</span>`);
  }
  const c = s.centre_lift || "?";
  g.insertAdjacentHTML("beforeend",
    `<rect class="centre ${c}" data-centre="${c}" x="125" y="125" width="50" height="50"/>` +
    `<text class="lift-label" x="128" y="154">${zh() ? "中" : "C"} ${c}</text>`);
  for (const w of s.walls) if (w.push_head === "out" && !s.busy) txt.push(`<span class="wall-count">${zh() ? SIDE_ZH[w.side] : w.side}: ${t("pushOut")}</span>`);
  if (s.jam) txt.push(`<span class="wall-count jam">${t("jam")}</span>`);
  $("walls-text").innerHTML = txt.join(" · ");
  $("dice-text").textContent = s.dice ? (zh() ? s.dice.text_zh : s.dice.text_en) : "";
  $("sim-tools").hidden = !s.sim;
  const f = s.fault;
  $("fault").hidden = !f; $("fault-none").hidden = !!f;
  if (f) {
    $("fault-title").textContent = `${f.code} ${f.side ? "(" + f.side + ") " : ""}${zh() ? f.meaning_zh : f.meaning}`;
    $("fault-observed").textContent = zh() ? f.observed_zh : f.observed;
    $("fault-causes").innerHTML = (zh() ? f.causes_zh : f.causes).map((c) => `<li>${esc(c)}</li>`).join("");
    $("fault-checks").innerHTML = (zh() ? f.checks_zh : f.checks).map((c) => `<li>${esc(c)}</li>`).join("");
  }
  $("warnings").innerHTML = (s.warnings || []).map((w) =>
    `<div class="warning">${t("warning")} ${w.code}: ${esc(zh() ? w.observed_zh : w.observed)}</div>`).join("");
  if (s.selftest_running) $("selftest").querySelector("tbody").innerHTML = `<tr><td>${t("running")}</td></tr>`;
  renderNotices(s);
}
// the link to the table's board (MCU backend only) and a damaged event log moved aside at start
function renderNotices(s) {
  const L = s.link;
  $("link").hidden = !L;
  if (L) { $("link").textContent = L.connected ? t("linkUp") : t("linkLost"); $("link").className = L.connected ? "pill ok" : "pill bad"; }
  const notes = [];
  if (L && !L.connected) notes.push(`<div class="warning" id="link-lost">${t("linkLost")}: ${esc(L.detail || "")}</div>`);
  if (s.log_damaged) notes.push(`<div class="warning" id="log-damaged">${t("logDamaged")} ${esc(s.log_damaged.file)}</div>`);
  $("notices").innerHTML = notes.join("");
}
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }

function showLive() { $("conn").textContent = live ? t("online") : t("offline"); $("conn").className = live ? "pill ok" : "pill"; }
function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("status", (e) => renderStatus(JSON.parse(e.data)));
  es.addEventListener("event", (e) => { const m = JSON.parse(e.data); if (m.kind === "score") loadSheet(); });
  es.onopen = () => { live = true; showLive(); };
  // a refused stream (503: too many open, Retry-After) closes the EventSource for good: open it again later
  es.onerror = () => { live = false; showLive(); if (es.readyState === EventSource.CLOSED) setTimeout(connect, 5000); };
}

async function checkPairing() {
  let ok = false;
  if (token()) { const r = await fetch("/api/auth", { headers: { Authorization: "Bearer " + token() } }); ok = r.status === 204; }
  $("paired").textContent = ok ? t("paired") : t("unpaired");
  $("paired").className = ok ? "pill ok" : "pill";
  $("pair-form").hidden = ok;
}

// ---- self-test ----
function renderSelftest(r) {
  lastSelftest = r;
  const rows = (r.parts || []).map((p) =>
    `<tr class="${p.passed ? "pass" : "fail"}"><td>${p.passed ? t("pass") : t("fail")}</td><td>${esc(zh() ? p.part_zh : p.part)}</td>` +
    `<td>${p.side || "-"}</td><td>${esc(zh() ? p.evidence_zh : p.evidence)}${p.code ? " [" + p.code + "]" : ""}</td></tr>`);
  rows.unshift(`<tr><td colspan="4" id="selftest-verdict" class="${r.passed ? "pass" : "fail"}">${r.passed ? t("selftestPassed") : t("selftestFailed")}${r.aborted ? ": " + esc(r.aborted) : ""}</td></tr>`);
  $("selftest").querySelector("tbody").innerHTML = rows.join("");
}

// ---- scoring ----
function scoreOptions() {
  const o = { self_drawn: $("self-drawn").checked };
  if ($("winner").value) o.winner = $("winner").value;
  if ($("discarder").value) o.discarder = $("discarder").value;
  return o;
}
function renderScore(d) {
  lastScore = d;
  // the annotated photo is a JPEG at its own URL (/api/score/photo/<id>.jpg), the last few kept by the service
  $("annotated").hidden = !d.annotated;
  if (d.annotated) { $("annotated").src = d.annotated; $("annotated").alt = t("annotatedAlt"); }
  const sc = d.score;
  const hand = sc ? sc.hand : (d.recognition && d.recognition.hand) || "";
  $("score-hand").textContent = (hand ? t("hand") + ": " + hand : "") + (d.problem ? " — " + d.problem : "");
  $("fans").querySelector("tbody").innerHTML = sc ? sc.fans.map((f) =>
    `<tr class="fan"><td>${f.number ?? "-"}</td><td>${esc(zh() ? f.name_zh + " " + f.name_en : f.name_en + " " + f.name_zh)}</td>` +
    `<td>${f.points}</td><td>${f.count}</td></tr>`).join("") : "";
  $("score-total").textContent = sc ? `${t("total")}: ${sc.total} — ${sc.legal ? t("legal") : t("notLegal")}` : "";
  const p = sc && sc.payments;
  $("payments").textContent = p ? `${t("receives")} ${p.winner_receives}` +
    (p.self_drawn ? ` (3 × ${p.from_each_other})` : ` (${p.from_discarder} + 2 × ${p.from_each_other})`) : "";
}
async function loadSheet() {
  const s = await (await fetch("/api/session")).json();
  $("sheet").querySelector("tbody").innerHTML = s.hands.map((h, i) =>
    `<tr><td>${i + 1}</td><td>${h.winner || "-"}${h.discarder ? " ← " + h.discarder : ""}</td><td>${h.total}</td>` +
    ["E", "S", "W", "N"].map((x) => `<td>${h.points[x]} (${h.running[x]})</td>`).join("") + "</tr>").join("");
  $("sheet-totals").innerHTML = `<td colspan="3">${t("totals")}</td>` + ["E", "S", "W", "N"].map((x) => `<td>${s.totals[x]}</td>`).join("");
  $("sheet-standard").innerHTML = `<td colspan="3">${t("standard")}</td>` + ["E", "S", "W", "N"].map((x) => `<td>${s.standard_points[x]}</td>`).join("");
}

// ---- buttons ----
const quiet = (p) => p.catch(() => {});
$("btn-cycle").onclick = () => quiet(api("POST", "/api/cycle"));
$("btn-dice").onclick = () => quiet(api("POST", "/api/dice", {}).then((b) => { $("dice-text").textContent = zh() ? b.text_zh : b.text_en; }));
$("btn-up").onclick = () => quiet(api("POST", "/api/lift", { direction: "up" }));
$("btn-down").onclick = () => quiet(api("POST", "/api/lift", { direction: "down" }));
$("btn-refill").onclick = () => quiet(api("POST", "/api/refill"));
$("btn-stop").onclick = () => quiet(api("POST", "/api/stop"));
$("btn-clear").onclick = () => quiet(api("POST", "/api/faults/clear"));
$("btn-inject").onclick = () => quiet(api("POST", "/api/sim/fault", { fault: $("fault-spec").value }).then((r) => showMessage("✓ " + r.injected)));
$("btn-selftest").onclick = () => quiet(api("POST", "/api/selftest").then(renderSelftest));
$("lang").onclick = () => { lang = zh() ? "en" : "zh"; localStorage.setItem("mjtable.lang", lang); applyLang(); };
$("pair-form").onsubmit = (e) => { e.preventDefault(); localStorage.setItem("mjtable.token", $("token-input").value.trim()); $("token-input").value = ""; checkPairing(); };
$("score-form").onsubmit = (e) => {
  e.preventDefault();
  const file = $("photo").files[0];
  if (file) {
    const fd = new FormData();
    fd.append("photo", file);
    fd.append("options", JSON.stringify(scoreOptions()));
    quiet(api("POST", "/api/score/photo", fd, true).then((d) => { renderScore(d); loadSheet(); }));
  } else {
    quiet(api("POST", "/api/score", { hand: $("hand").value.trim(), ...scoreOptions() }).then((d) => { renderScore(d); loadSheet(); }));
  }
};
fetch("/api/selftest").then((r) => r.json()).then((d) => { if (d.report) renderSelftest(d.report); });
applyLang();
connect();
