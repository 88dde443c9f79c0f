// mjtable web page: plain JavaScript, no build step. Status by server-sent events (/api/events);
// control and write requests carry the token (Authorization: Bearer) kept in this browser's storage.
// The match (/api/match): the winds of a hand come from the match's deal, never from the page.
"use strict";
const T = {
  zh: { title: "自动麻将机", offline: "离线", online: "在线", unpaired: "未配对", paired: "已配对", table: "牌桌",
    state: "状态", cycle: "开始洗牌", dice: "掷骰", liftUp: "升牌", liftDown: "降牌", refill: "补牌", stop: "全部停止",
    token: "令牌", pair: "配对", fault: "故障", noFault: "无故障", observed: "现象", causes: "可能原因",
    checks: "检查步骤", clear: "清除故障", inject: "模拟故障", injectBtn: "注入", repairBtn: "修复", injected: "已注入", none: "无", selftest: "自检",
    runSelftest: "运行自检", scoring: "计分", hand: "手牌", photo: "照片", winner: "和牌者",
    discarder: "放炮者", selfDrawnOpt: "（自摸）", score: "计分", fanName: "番种", sets: "组成", points: "分",
    sheet: "记分表", total: "合计", legal: "和牌成立", notLegal: "不足起和分（8 分）", stacks: "墩", tiles: "张",
    needToken: "请先用令牌配对", totals: "局分", matchPts: "比赛分", standard: "标准分", pass: "通过", fail: "不合格",
    warning: "警告", alsoFault: "同一循环的另一故障", running: "运行中…", receives: "和牌者得", pushOut: "推牌头未回原位", jam: "卡牌",
    linkUp: "主控板已连接", linkLost: "与主控板失去连接，正在自动重连", logDamaged: "事件日志已损坏，已移至一旁并新建日志：",
    annotatedAlt: "标出牌的照片", match: "比赛", side: "座位", player: "选手", seatWind: "门风", sessionPts: "局分",
    newMatch: "新比赛", sideE: "东", sideS: "南", sideW: "西", sideN: "北", seatChange: "换位",
    practiceMcr: "每圈换位（比赛规程）", practiceNone: "不换位", startMatch: "开始新比赛", cancelEdit: "取消修改",
    flowers: "花牌", lastTile: "海底（妙手回春/海底捞月）", kongRepl: "杠上开花", robKong: "抢杠和", fourthTile: "和绝张",
    draw: "荒牌", scorePhoto: "按照片计分", undo: "撤销上一盘", csv: "导出 CSV", mySeat: "本屏座位", settings: "设置",
    tileCount: "牌数", diceMethod: "掷骰方法", twoThrow: "两次掷骰", oneThrow: "一次掷骰", dealer: "庄家", save: "保存",
    rules: "规则", noRules: "未设（按国标计分）", scoredBy: "计分规则", payments: "收付",
    confirmBelow: "确认门槛", confirmBelowHint: "照片上识别可信度低于此值的牌，须玩家确认后才计分",
    confirmDefault: "默认", confirmMore: "多问：更少错误漏问",
    units: { fan: "番", han: "翻", tai: "台", points: "分", doubles: "倍" }, options: "本规则的选项", sumSmaller: "和数定方位，小点数墩", sumCount: "和数定方位并数墩",
    maintenance: "维护", liftTrend: "升牌时间（每次洗牌）", eventLog: "事件日志", kind: "类型", all: "全部",
    confirmTile: "确认无误", markWin: "设为和牌张", back: "返回", dealerMark: "庄", matchOver: "本局 16 盘已打完",
    round: (r, w) => `${w}风圈`, handNo: (n, k) => `第 ${k} 盘（全局第 ${n}/16 盘）`, dealerIs: "庄家", roundCol: "圈",
    editing: (n) => `正在修改第 ${n} 盘`, edit: "改", del: "删", drawRow: "荒牌", selfDrawn: "自摸",
    noHands: "还没有记录", choosePhoto: "选择照片", noFile: "未选照片", photoHint: "点一张牌可改正；红框的牌识别不确定，须先确认。和牌张没有单放时，点它并设为和牌张。",
    toConfirm: (n) => `还有 ${n} 张牌需要确认`, allChecked: "所有牌已确认", gapHere: "似乎少了一张牌",
    gapsToCheck: (n) => `有 ${n} 处似乎少了一张牌（虚线框），请查看照片`, unreadHere: "此处有牌未能识别，请查看照片",
    unreadToCheck: (n) => `有 ${n} 处有牌未能识别（虚线框），请查看照片`, corrected: "已改正", winTile: "和牌张",
    readAs: (t, c) => `识别为 ${t}（可信度 ${c}）`, seconds: "秒", cycles: "次洗牌", noTrend: "还没有洗牌记录",
    partsPassed: (k, n) => `${n} 个部件中 ${k} 个通过`, selftestAborted: "自检中止",
    faultTrace: "下载故障记录", selftestTrace: "下载自检记录", noTrace: "没有保存此事件的记录", newRunning: "新的局分",
    pays: "付", gets: "得", confirmDelete: "删除这一盘？", reading: "正在识别照片…", afterDice: "开牌处",
    changedSettings: "已保存", settingsProblem: "设置文件有误：下面是能读出的各项，请核对后按“保存”重写", appliesNext: "下一次洗牌起生效", up: "升", down: "降", moving: "动", centre: "中",
    flowerNames: ["春", "夏", "秋", "冬", "梅", "兰", "竹", "菊"] },
  en: { title: "Automatic mahjong table", offline: "offline", online: "live", unpaired: "not paired", paired: "paired",
    table: "Table", state: "State", cycle: "Start cycle", dice: "Roll dice", liftUp: "Lifts up", liftDown: "Lifts down",
    refill: "Refill", stop: "Stop all", token: "Token", pair: "Pair", fault: "Fault", noFault: "No fault",
    observed: "Observed", causes: "Likely causes", checks: "Next checks", clear: "Clear fault",
    inject: "Simulated fault", injectBtn: "Inject", repairBtn: "Repair", injected: "Injected", none: "none", selftest: "Self-test", runSelftest: "Run self-test",
    scoring: "Scoring", hand: "Hand", photo: "Photo", winner: "Winner", discarder: "Discarder",
    selfDrawnOpt: "(self-drawn)", score: "Score", fanName: "Fan", sets: "Sets", points: "Pts", sheet: "Score sheet",
    total: "Total", legal: "Legal win", notLegal: "Below the 8-point minimum", stacks: "stacks", tiles: "tiles",
    needToken: "Pair with the token first", totals: "Session points", matchPts: "Match points",
    standard: "Standard points", pass: "PASS", fail: "FAIL", warning: "Warning", alsoFault: "Also in this cycle", running: "running…",
    receives: "winner receives", pushOut: "push head not home", jam: "tile jammed", linkUp: "board linked",
    linkLost: "link to the table's board lost, reconnecting by itself",
    logDamaged: "The event log was damaged: it was moved aside and a new log started. Kept as",
    annotatedAlt: "the photo with the tiles marked", match: "Match", side: "Side", player: "Player",
    seatWind: "Seat wind", sessionPts: "Session pts", newMatch: "New match", sideE: "E", sideS: "S", sideW: "W",
    sideN: "N", seatChange: "Seat changes", practiceMcr: "every round (competition practice)",
    practiceNone: "none", startMatch: "Start a new match", cancelEdit: "Cancel edit", flowers: "Flowers",
    lastTile: "Last tile", kongRepl: "Kong replacement", robKong: "Robbing the kong", fourthTile: "Fourth tile",
    draw: "Drawn hand", scorePhoto: "Score the photo", undo: "Undo last hand", csv: "Export CSV",
    mySeat: "This screen's seat", settings: "Settings", tileCount: "Tile count", diceMethod: "Dice method",
    twoThrow: "two throws", oneThrow: "one throw", dealer: "Dealer", save: "Save", maintenance: "Maintenance",
    rules: "Rules", noRules: "not set (scored by MCR)", scoredBy: "scored by", payments: "payments",
    confirmBelow: "Confirm below", confirmBelowHint: "tiles read from a photo with a lower confidence are confirmed by the player before the hand is scored",
    confirmDefault: "default", confirmMore: "ask more: fewer errors go unasked",
    units: { fan: "points", han: "han", tai: "tai", points: "points", doubles: "doubles" }, options: "Options of these rules", sumSmaller: "sum points, small die counts",
    sumCount: "sum points and counts",
    liftTrend: "Lift-up time per cycle", eventLog: "Event log", kind: "Kind", all: "all",
    confirmTile: "Correct as read", markWin: "Mark as winning tile", back: "Back", dealerMark: "dealer",
    matchOver: "the session's 16 hands are played",
    round: (r, w) => `${w} round`, handNo: (n, k) => `hand ${k} (${n} of 16)`, dealerIs: "dealer", roundCol: "round",
    editing: (n) => `Editing hand ${n}`, edit: "Edit", del: "Del", drawRow: "drawn", selfDrawn: "self-drawn",
    noHands: "no hand yet",
    choosePhoto: "Choose a photo", noFile: "no photo chosen",
    photoHint: "Tap a tile to correct it; tiles in red were not read surely (a low confidence, or a box lying over another tile) and must be confirmed. If the winning tile was not laid apart, tap it and mark it.",
    toConfirm: (n) => `${n} tile(s) still to confirm`, allChecked: "all tiles checked", gapHere: "a tile seems to be missing here",
    gapsToCheck: (n) => `a tile seems to be missing at ${n} place(s) (dashed): check the photo`,
    unreadHere: "tiles here were not read: check the photo",
    unreadToCheck: (n) => `tiles were not read at ${n} place(s) (dashed): check the photo`, corrected: "corrected",
    winTile: "winning tile", readAs: (t, c) => `read as ${t} (confidence ${c})`, seconds: "s", cycles: "cycles",
    noTrend: "no cycle yet", partsPassed: (k, n) => `${k} of ${n} parts passed`, selftestAborted: "self-test aborted",
    faultTrace: "Download the fault's trace", selftestTrace: "Download the self-test's trace", noTrace: "no trace is kept for this event",
    newRunning: "new session points", pays: "pays", gets: "gets", confirmDelete: "Delete this hand?",
    reading: "reading the photo…", afterDice: "break", changedSettings: "saved", settingsProblem: "The settings file has a problem: the values that could be read are shown; check them and press Save to write it again", appliesNext: "applies from the next cycle",
    up: "up", down: "down", moving: "moving", centre: "C",
    flowerNames: ["spring", "summer", "autumn", "winter", "plum", "orchid", "bamboo", "chrysanthemum"] },
};
// a server error in Chinese when it has no message_zh: by its code
const CODE_ZH = { "wrong-state": "机器当前状态不允许此操作", unauthorized: "令牌不对或缺少令牌", "bad-value": "取值不允许",
  "not-found": "找不到", "too-large": "文件太大", "not-an-image": "不是可读的图片（请用 JPEG 或 PNG）",
  busy: "正在识别其他照片，请稍后再试", vision: "照片识别失败", timeout: "机器没有及时响应", stopped: "控制程序未运行",
  camera: "相机故障", "no-camera": "没有配置相机：请上传照片", "length-required": "上传照片需带长度",
  "no-such-code": "没有这个故障代码", "event-log": "事件日志无法打开" };
const SIDES = ["E", "S", "W", "N"];
const SIDE_ZH = { E: "东", S: "南", W: "西", N: "北" };
const KINDS = ["start", "stop", "cycle", "fault", "warning", "fault-cleared", "selftest", "score", "draw", "session",
  "settings", "operator", "match"];
const KIND_ZH = { start: "启动", stop: "停止", cycle: "洗牌", fault: "故障", warning: "警告", "fault-cleared": "故障清除",
  selftest: "自检", score: "计分", draw: "荒牌", session: "旧记分", settings: "设置", operator: "操作", match: "比赛" };
const ACTION_ZH = { cycle: "开始洗牌", "clear-fault": "清除故障", "lift-up": "升牌", "lift-down": "降牌", refill: "补牌",
  dice: "掷骰", "stop-all": "全部停止", inject: "模拟故障" };
let lang = localStorage.getItem("mjtable.lang") || "zh";
let status = null, lastScore = null, lastSelftest = null, live = false, match = null, settings = null;
let diceTouched = false;  // the dice method was changed by hand in the settings form
let photo = null, editing = null;
let seating = null;  // the hall's seating for this table (/api/seating), null without a tournament
let simFaults = null;  // the simulator's injected faults as last read (shown again when the language changes)
const $ = (id) => document.getElementById(id);
const t = (k, ...a) => { const v = T[lang][k] ?? k; return typeof v === "function" ? v(...a) : v; };
const zh = () => lang === "zh";
const sideName = (s) => (zh() ? SIDE_ZH[s] : s);
function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }

// The token comes from the pairing link's fragment, exactly "#token=<value>" (never sent to the
// server), or from the form. The fragment is removed from the address bar either way; a malformed
// one (bad percent-encoding) is dropped, not fatal.
(function takeToken() {
  const m = /^#token=([^&#]+)$/.exec(location.hash);
  if (location.hash.startsWith("#token=")) history.replaceState(null, "", location.pathname + location.search);
  if (!m) return;
  try { localStorage.setItem("mjtable.token", decodeURIComponent(m[1])); } catch (e) { /* malformed: ignored */ }
})();
const token = () => localStorage.getItem("mjtable.token") || "";

class ApiError extends Error { constructor(msg, body) { super(msg); this.body = body; } }
function errorText(data, status) {
  const e = data && data.error;
  if (!e) return zh() ? `请求失败（${status}）` : `request failed (${status})`;
  if (!zh()) return e.message;
  return e.message_zh || CODE_ZH[e.code] || `请求被拒绝（${status}）`;
}
// fetch JSON; a refusal shows its message (in the page's language) in `where` (default: the top line)
async function api(method, path, body, opts = {}) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  let payload;
  if (opts.form) payload = body; else if (body !== undefined) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  const r = await fetch(path, { method, headers, body: payload });
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  const where = opts.where || showMessage;
  if (!r.ok) {
    const msg = errorText(data, r.status);
    where(r.status === 401 ? t("needToken") + " (" + msg + ")" : msg);
    throw new ApiError(msg, data);
  }
  where("");
  return data;
}
function showMessage(m) { $("message").textContent = m; $("message").hidden = !m; }
function scoreError(m) { $("score-error").textContent = m; }

function applyLang() {
  document.documentElement.lang = lang;
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("lang").textContent = zh() ? "English" : "中文";
  for (const sel of [$("my-seat"), $("set-dealer")]) for (const o of sel.options) o.textContent = sideName(o.value);
  if (settings) { renderRulesOptions($("set-rules").value); renderConfirmOptions($("set-confirm").value); }
  renderLogKinds();
  showLive();
  checkPairing();
  if (status) renderStatus(status);
  if (lastScore) renderResult(lastScore);
  renderAnalysis();
  $("seen").title = t("seenHint");
  if (lastSelftest) renderSelftest(lastSelftest);
  if (photo) renderPhoto();
  if (simFaults) showSimFaults(simFaults);
  renderFlowerInputs();
  showFileName();
  loadMatch();
  loadTrends();
  loadLog();
}

// ---- tiles in words ----
const NUM_ZH = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
const SUIT_ZH = { m: "万", p: "饼", s: "条" };
const HONOR_ZH = { E: "东", S: "南", W: "西", N: "北", C: "中", F: "发", P: "白" };
function tileZh(x) {
  if (x === "back") return zh() ? "牌背" : "back";
  if (/^[1-8]f$/.test(x)) return zh() ? T.zh.flowerNames[+x[0] - 1] : x;
  if (/^[1-9][mps]$/.test(x)) return zh() ? NUM_ZH[+x[0]] + SUIT_ZH[x[1]] : x;
  return zh() ? (HONOR_ZH[x] || x) : x;
}
// a set in notation ("123m", "[EEE]", "5s", "1f") in the page's language
function setText(s) {
  if (!zh()) return s;
  return s.replace(/(\d+)([mpsf])/g, (_, d, suit) => suit === "f" ? [...d].map((x) => T.zh.flowerNames[+x - 1]).join("")
    : [...d].map((x) => NUM_ZH[+x]).join("") + SUIT_ZH[suit]).replace(/[ESWNCFP]/g, (c) => HONOR_ZH[c])
    .replace(/\[/g, "【").replace(/\]/g, "】").replace(/,\d/g, "");
}

// ---- the table ----
function renderStatus(s) {
  status = s;
  $("state").textContent = zh() ? s.state_zh : s.state;
  $("state").dataset.state = s.state;
  $("gear").textContent = ` · ${s.tiles_in_play.count} ${t("tiles")} (${zh() ? s.tiles_in_play.zh : s.tiles_in_play.en})` +
    (s.pending_tile_count ? ` → ${s.pending_tile_count}` : "");
  drawTable(s);
  const txt = [];
  for (const w of s.walls) txt.push(`<span class="wall-count" data-side="${w.side}">${sideName(w.side)}: ${w.stacks}/${w.expected} ${t("stacks")}, ${t(w.lift)}</span>`);
  for (const w of s.walls) if (w.push_head === "out" && !s.busy) txt.push(`<span class="wall-count">${sideName(w.side)}: ${t("pushOut")}</span>`);
  if (s.jam) txt.push(`<span class="wall-count jam">${t("jam")}</span>`);
  $("walls-text").innerHTML = txt.join(" · ");
  $("dice-text").textContent = s.dice ? (zh() ? s.dice.text_zh : s.dice.text_en) : "";
  if (s.sim && $("sim-tools").hidden) refreshSimFaults();
  $("sim-tools").hidden = !s.sim;
  const f = s.fault;
  $("fault").hidden = !f; $("fault-none").hidden = !!f;
  if (f) {
    $("fault-title").textContent = `${f.code} ${f.side ? "(" + sideName(f.side) + ") " : ""}${zh() ? f.meaning_zh : f.meaning}`;
    $("fault-observed").textContent = zh() ? f.observed_zh : f.observed;
    $("fault-causes").innerHTML = (zh() ? f.causes_zh : f.causes).map((c) => `<li>${esc(c)}</li>`).join("");
    $("fault-checks").innerHTML = (zh() ? f.checks_zh : f.checks).map((c) => `<li>${esc(c)}</li>`).join("");
  }
  // every other fault of the same cycle, each with its own diagnosis (the first one stopped the motion)
  $("fault-also").innerHTML = (f ? (s.diagnoses || []).slice(1) : []).map((d) =>
    `<div class="fault-also">${t("alsoFault")} ${d.code} ${d.side ? "(" + sideName(d.side) + ") " : ""}` +
    `<b>${esc(zh() ? d.meaning_zh : d.meaning)}</b><br>${esc(zh() ? d.observed_zh : d.observed)}</div>`).join("");
  $("warnings").innerHTML = (s.warnings || []).map((w) =>
    `<div class="warning">${t("warning")} ${w.code}: ${esc(zh() ? w.observed_zh : w.observed)}</div>`).join("");
  if (s.selftest_running) { $("selftest-summary").textContent = t("running"); $("selftest").querySelector("tbody").innerHTML = ""; }
  renderNotices(s);
  renderFlowerInputs();
}
// The table from above: play runs counter-clockwise (E, S, W, N); this screen's seat at the bottom.
// Positions 0-3: bottom, right, top, left. Each wall lies in front of its player; its stack 1 is at
// the player's right end (controller.dice), so the break is drawn from the dice's wall and stack.
function drawTable(s) {
  const me = localStorage.getItem("mjtable.seat") || "E";
  const rel = (side) => (SIDES.indexOf(side) - SIDES.indexOf(me) + 4) % 4;
  const box = [[70, 250, 160, 22], [250, 70, 22, 160], [70, 28, 160, 22], [28, 70, 22, 160]];
  // the player's right along the wall: bottom -> +x, right -> -y, top -> -x, left -> +y
  const g = $("walls"); g.innerHTML = "";
  const cur = match && match.current;
  for (const w of s.walls) {
    const p = rel(w.side);
    const [x, y, wd, ht] = box[p];
    const frac = w.expected ? Math.min(1, w.stacks / w.expected) : 0;
    const horiz = p % 2 === 0;
    const isDealer = cur ? cur.dealer === w.side : (settings && settings.dealer === w.side);
    const label = `${sideName(w.side)}${isDealer ? "·" + t("dealerMark") : ""} ${w.stacks}/${w.expected} ${t(w.lift)}`;
    const lx = [150, 290, 150, 10][p], ly = [292, 150, 14, 150][p];
    const rot = p === 1 ? `transform="rotate(90 ${lx} ${ly})"` : p === 3 ? `transform="rotate(-90 ${lx} ${ly})"` : "";
    g.insertAdjacentHTML("beforeend",
      `<rect class="wall" x="${x}" y="${y}" width="${wd}" height="${ht}"/>` +
      `<rect class="wall filled ${w.lift === "up" ? "up" : ""}" data-side="${w.side}" data-lift="${w.lift}" x="${x}" y="${y}" ` +
      `width="${horiz ? wd * frac : wd}" height="${horiz ? ht : ht * frac}"/>` +
      `<text class="lift-label${isDealer ? " dealer" : ""}" data-side="${w.side}" text-anchor="middle" x="${lx}" y="${ly}" ${rot}>${esc(label)}</text>`);
  }
  const b = s.dice;
  if (b && b.wall) {
    const w = s.walls.find((x) => x.side === b.wall);
    const n = (w && w.expected) || 17;
    const p = rel(b.wall);
    const [x, y, wd, ht] = box[p];
    const f = Math.min(1, b.stack / n);  // from the player's right end
    let mx, my;
    if (p === 0) { mx = x + wd - wd * f; my = y + ht / 2; } else if (p === 1) { mx = x + wd / 2; my = y + ht * f; }
    else if (p === 2) { mx = x + wd * f; my = y + ht / 2; } else { mx = x + wd / 2; my = y + ht - ht * f; }
    const horiz = p % 2 === 0;
    g.insertAdjacentHTML("beforeend", `<line id="break" class="break" data-wall="${b.wall}" data-stack="${b.stack}" ` +
      (horiz ? `x1="${mx}" y1="${y - 8}" x2="${mx}" y2="${y + ht + 8}"` : `x1="${x - 8}" y1="${my}" x2="${x + wd + 8}" y2="${my}"`) + `/>` +
      `<text class="break-label" text-anchor="middle" x="150" y="205">${t("afterDice")}: ${sideName(b.wall)} ${b.stack}</text>`);
  }
  const c = s.centre_lift || "?";
  g.insertAdjacentHTML("beforeend",
    `<rect class="centre ${c}" data-centre="${c}" x="125" y="125" width="50" height="50"/>` +
    `<text class="lift-label" text-anchor="middle" x="150" y="154">${t("centre")} ${esc(t(c))}</text>`);
}
function renderNotices(s) {
  const L = s.link;
  $("link").hidden = !L;
  if (L) { $("link").textContent = L.connected ? t("linkUp") : t("linkLost"); $("link").className = L.connected ? "pill ok" : "pill bad"; }
  const notes = [];
  if (L && !L.connected) notes.push(`<div class="warning" id="link-lost">${t("linkLost")}: ${esc(L.detail || "")}</div>`);
  if (s.log_damaged) notes.push(`<div class="warning" id="log-damaged">${t("logDamaged")} ${esc(s.log_damaged.file)}</div>`);
  $("notices").innerHTML = notes.join("");
}

function showLive() { $("conn").textContent = live ? t("online") : t("offline"); $("conn").className = live ? "pill ok" : "pill"; }
function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("status", (e) => renderStatus(JSON.parse(e.data)));
  es.addEventListener("event", (e) => {
    const m = JSON.parse(e.data);
    if (m.kind === "score") loadMatch();
    if (m.kind === "settings") { loadSettings(); loadCamera(); }
    if (m.kind === "cycle") loadTrends();
    loadLog();
  });
  es.addEventListener("seating", (e) => { seating = JSON.parse(e.data).seating; renderSeating(); });
  es.onopen = () => { live = true; showLive(); loadSeating(); };
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

// ---- traces: a fault's or a self-test's recording, for `mjtable diagnose --trace FILE` (docs/trace.md) ----
async function downloadTrace(id, name) {
  const headers = token() ? { Authorization: "Bearer " + token() } : {};
  const r = await fetch(`/api/faults/${id}/trace`, { headers });
  if (!r.ok) { showMessage(r.status === 401 ? t("needToken") : t("noTrace")); return; }
  const a = document.createElement("a");
  a.href = URL.createObjectURL(await r.blob());
  a.download = name;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
$("btn-fault-trace").onclick = async () => {
  const r = await (await fetch("/api/faults?limit=1")).json();  // the latched fault is the last one logged
  if (r.recent && r.recent.length) downloadTrace(r.recent[0].id, `fault-${r.recent[0].id}.jsonl`); else showMessage(t("noTrace"));
};
$("btn-selftest-trace").onclick = async () => {
  const r = await (await fetch("/api/selftest")).json();
  if (r.id) downloadTrace(r.id, `selftest-${r.id}.jsonl`); else showMessage(t("noTrace"));
};

// ---- self-test: the summary first, then the failed parts with their checks ----
async function renderSelftest(r) {
  lastSelftest = r;
  $("btn-selftest-trace").hidden = !(r.parts && r.parts.length);
  const parts = r.parts || [];
  const ok = parts.filter((p) => p.passed).length;
  $("selftest-summary").textContent = t("partsPassed", ok, parts.length) + (r.aborted ? ` — ${t("selftestAborted")}` : "");
  $("selftest-summary").className = r.passed ? "pass" : "fail";
  const failed = parts.filter((p) => !p.passed);
  const sheets = await Promise.all(failed.map((p) => p.code ? fetch(`/api/faults/codes/${p.code}`).then((x) => x.ok ? x.json() : null) : null));
  $("selftest").querySelector("tbody").innerHTML = failed.map((p, i) => {
    const sh = sheets[i];
    const checks = sh ? (zh() ? sh.checks_zh : sh.checks) : [];
    return `<tr class="fail"><td>${t("fail")}</td><td>${esc(zh() ? p.part_zh : p.part)}${p.side ? " (" + sideName(p.side) + ")" : ""}</td>` +
      `<td>${esc(zh() ? p.evidence_zh : p.evidence)}${p.code ? " [" + p.code + "]" : ""}` +
      (checks.length ? `<ol>${checks.map((c) => `<li>${esc(c)}</li>`).join("")}</ol>` : "") + `</td></tr>`;
  }).join("");
}

// ---- the match ----
async function loadMatch() {
  match = await (await fetch("/api/match")).json();
  renderMatch();
  renderSheet();
  renderSeating();
  if (status) drawTable(status);
}
function playerAt(side) { return match.current ? match.current.names[side] : side; }
function renderMatch() {
  const c = match.current;
  $("match-line").innerHTML = c
    ? `<b id="round">${esc(t("round", c.round, sideName(c.prevalent_wind)))}</b> · <span id="hand-no">${esc(t("handNo", c.number, c.hand))}</span>` +
      ` · ${t("dealerIs")}: <b id="dealer">${sideName(c.dealer)} ${esc(c.names[c.dealer])}</b>`
    : `<b id="round">${t("matchOver")}</b>`;
  $("match-line").insertAdjacentHTML("beforeend", ` · ${t("scoredBy")}: <b id="match-rules">${esc(zh() ? match.rules_zh : match.rules_en)}</b>`);
  renderSystemOptions();
  const last = match.hands.length ? match.hands[match.hands.length - 1] : null;
  const running = last ? last.running : match.totals;
  $("seats").querySelector("tbody").innerHTML = SIDES.map((s) => {
    const who = c ? c.players[s] : null;
    return `<tr data-side="${s}"${c && c.dealer === s ? ' class="dealer"' : ""}><td>${sideName(s)}</td>` +
      `<td class="name">${esc(c ? c.names[s] : "")}</td><td class="wind">${c ? sideName(c.seat_winds[s]) + (c.dealer === s ? " (" + t("dealerMark") + ")" : "") : ""}</td>` +
      `<td>${who !== null ? running[who] : ""}</td></tr>`;
  }).join("");
  for (const s of SIDES) $("p-" + s).placeholder = match.players[SIDES.indexOf(s)];
  // winner and discarder by seat, with the player's name and seat wind
  for (const [id, blank] of [["winner", null], ["discarder", t("selfDrawnOpt")]]) {
    const sel = $(id), keep = sel.value;
    sel.innerHTML = (blank ? `<option value="">${esc(blank)}</option>` : "") + SIDES.map((s) =>
      `<option value="${s}">${sideName(s)} ${esc(playerAt(s))}${c ? " · " + t("seatWind") + (zh() ? "" : " ") + sideName(c.seat_winds[s]) : ""}</option>`).join("");
    sel.value = keep || (blank ? "" : "E");
  }
}
function renderSheet() {
  const names = match.players;
  $("sheet-head").innerHTML = `<th>#</th><th>${t("winner")}</th><th>${t("points")}</th>` +
    names.map((n) => `<th>${esc(n)}</th>`).join("") + "<th></th>";
  const rows = match.hands.map((h) => {
    const d = h.deal;
    const res = h.winner ? `${esc(names[h.winner_player])}${h.discarder ? " ← " + esc(names[h.discarder_player]) : " " + t("selfDrawn")}` : t("drawRow");
    const dealer = `${t("dealer")}: ${names[d.players[d.dealer]]}`;
    return `<tr data-id="${h.id}" data-deal="${d.number}" class="${h.kind}"><td class="no" title="${esc(dealer)}">${d.number}` +
      `<small>${sideName(d.prevalent_wind)}${d.hand}</small></td><td class="res">${res}</td><td class="total">${h.total}</td>` +
      h.points.map((p, i) => `<td class="pts" data-player="${i}">${p > 0 ? "+" + p : p}<small>${h.running[i]}</small></td>`).join("") +
      `<td class="acts"><button type="button" class="edit" data-id="${h.id}">${t("edit")}</button>` +
      `<button type="button" class="del" data-id="${h.id}">${t("del")}</button></td></tr>`;
  });
  $("sheet").querySelector("tbody").innerHTML = rows.length ? rows.join("") : `<tr><td colspan="8">${t("noHands")}</td></tr>`;
  const foot = (id, label, vals) => { $(id).innerHTML = `<th colspan="3">${label}</th>` + vals.map((v) => `<td>${v}</td>`).join("") + "<td></td>"; };
  foot("sheet-totals", t("totals"), match.totals);
  foot("sheet-match", t("matchPts"), match.match_points);
  foot("sheet-standard", t("standard"), match.standard_points);
  $("sheet").parentElement.scrollLeft = 0;
  $("sheet").querySelectorAll("button.edit").forEach((b) => { b.onclick = () => startEdit(+b.dataset.id); });
  $("sheet").querySelectorAll("button.del").forEach((b) => { b.onclick = () => {
    if (confirm(t("confirmDelete"))) quiet(api("DELETE", `/api/match/hands/${b.dataset.id}`).then(afterChange));
  }; });
}
function afterChange(d) { if (d && d.sheet) { match = d.sheet; renderMatch(); renderSheet(); renderSeating(); if (status) drawTable(status); } }
function startEdit(id) {
  const h = match.hands.find((x) => x.id === id);
  if (!h) return;
  editing = h;
  $("editing").hidden = false;
  $("editing-text").textContent = t("editing", h.deal.number);
  $("hand").value = h.hand || "";
  if (h.winner) { $("winner").value = h.winner; $("discarder").value = h.discarder || ""; }
  const f = h.flags || {};
  $("f-last").checked = !!f.last_tile; $("f-kong").checked = !!f.kong_replacement;
  $("f-rob").checked = !!f.robbing_kong; $("f-fourth").checked = !!f.fourth_tile;
  setFlowers(f.flowers ?? 0);
  for (const [k, v] of Object.entries(h.options || {})) {
    const el = $(`opt-${k}`);
    if (!el) continue;
    if (el.dataset.kind === "bool") el.checked = !!v; else el.value = v ?? "";
  }
  $("score-view").scrollIntoView();
}
function stopEdit() { editing = null; $("editing").hidden = true; }

// ---- the score form ----
const bigSet = () => status && status.tile_count >= 144;
function renderFlowerInputs() {
  const big = bigSet();
  $("flower-list").hidden = !big;
  $("flower-count-label").hidden = big;
  if (big && !$("flower-list").children.length || big && $("flower-list").dataset.lang !== lang) {
    const keep = flowerValue();
    $("flower-list").dataset.lang = lang;
    $("flower-list").innerHTML = `<span>${t("flowers")}</span> ` + [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
      `<label class="flower"><input type="checkbox" value="${i}f"> ${t("flowerNames")[i - 1]}</label>`).join("");
    setFlowers(keep);
  }
}
function flowerValue() {
  if (!$("flower-list").hidden) return [...$("flower-list").querySelectorAll("input:checked")].map((x) => x.value);
  // sent as typed (a count outside 0-8 is refused by the server with its reason, not changed here)
  const n = parseInt($("flowers").value || "0", 10);
  return Number.isNaN(n) ? 0 : n;
}
function setFlowers(v) {
  if (Array.isArray(v)) { $("flowers").value = v.length; $("flower-list").querySelectorAll("input").forEach((x) => { x.checked = v.includes(x.value); }); }
  else { $("flowers").value = v; $("flower-list").querySelectorAll("input").forEach((x) => { x.checked = false; }); }
}
// ---- the match's rules: MCR uses the form's flowers and flags; another system its own options ----
const isMcr = () => !match || match.rules === "mcr" || match.rules === "mcr-1998";
function optionInput(o) {
  const id = `opt-${o.name}`, title = esc(zh() ? o.help_zh : o.help);
  const name = esc(zh() ? o.label_zh : o.label_en);
  if (o.kind === "bool")
    return `<label title="${title}"><input type="checkbox" id="${id}" data-opt="${o.name}" data-kind="bool"${o.default ? " checked" : ""}> ${name}</label>`;
  if (o.kind === "int")
    return `<label title="${title}">${name} <input type="number" id="${id}" data-opt="${o.name}" data-kind="int" class="num" ` +
      `min="${o.choices[0] ?? 0}" max="${o.choices[1] ?? 1000000}" value="${o.default}" inputmode="numeric"></label>`;
  if (o.kind === "choice" || o.kind === "seat" || o.kind === "seat?") {
    // [value, English, Chinese]: a choice's words come with the option (scoring.systems.base.CHOICE_LABELS), a seat's are its wind's
    const vals = o.kind === "choice" ? o.choice_labels
      : (o.kind === "seat?" ? [["", "—", "—"]] : []).concat(SIDES.map((w) => [w, w, SIDE_ZH[w]]));
    return `<label title="${title}">${name} <select id="${id}" data-opt="${o.name}" data-kind="${o.kind}">` +
      vals.map(([v, en, cn]) => `<option value="${esc(v)}"${v === (o.default ?? "") ? " selected" : ""}>${esc(zh() ? cn : en)}</option>`).join("") + "</select></label>";
  }
  return `<label title="${title}">${name} <input id="${id}" data-opt="${o.name}" data-kind="tiles" value="${esc(o.default ?? "")}" ` +
    `autocomplete="off" autocapitalize="off" spellcheck="false" placeholder="3m7z"></label>`;
}
function renderSystemOptions() {
  const mcr = isMcr(), box = $("sys-options");
  $("mcr-flowers").hidden = mcr ? false : true;
  $("mcr-flags").hidden = !mcr;
  $("btn-waits").hidden = $("seen-row").hidden = !mcr;  // the waits are scored by MCR (POST /api/waits)
  box.hidden = mcr;
  const key = mcr ? "" : `${match.rules}/${lang}`;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.innerHTML = mcr ? "" : `<span>${t("options")}</span> ` + match.options.map(optionInput).join("");
}
function systemOptions() {
  const o = {};
  $("sys-options").querySelectorAll("[data-opt]").forEach((el) => {
    const k = el.dataset.kind;
    o[el.dataset.opt] = k === "bool" ? el.checked : k === "int" ? (parseInt(el.value || "0", 10) || 0)
      : k === "seat?" ? (el.value || null) : el.value.trim();
  });
  return o;
}
function winOptions() {
  if (!isMcr()) {
    const o = { winner: $("winner").value, options: systemOptions() };
    if ($("discarder").value) o.discarder = $("discarder").value;
    return o;
  }
  const o = { winner: $("winner").value, flowers: flowerValue(), last_tile: $("f-last").checked,
    kong_replacement: $("f-kong").checked, robbing_kong: $("f-rob").checked, fourth_tile: $("f-fourth").checked };
  if ($("discarder").value) o.discarder = $("discarder").value;
  return o;
}
function showFileName() {
  const fs = $("photo").files;
  $("photo-name").textContent = fs.length > 1 ? t("nFrames", fs.length) : fs.length ? fs[0].name : t("noFile");
}
function clearResult() { lastScore = null; $("result").hidden = true; clearAnalysis(); }
function resetForm() {
  $("hand").value = ""; $("photo").value = ""; showFileName(); setFlowers(0);
  for (const id of ["f-last", "f-kong", "f-rob", "f-fourth"]) $(id).checked = false;
  if (match) { $("sys-options").dataset.key = ""; renderSystemOptions(); }  // the system's defaults again
  $("discarder").value = "";
}
function renderResult(d) {
  lastScore = d;
  const sc = d.score;
  $("result").hidden = !sc;
  if (!sc) return;
  $("score-hand").textContent = `${t("hand")}: ${setText(sc.hand)}` + (d.deal ? ` · ${t("handNo", d.deal.number, d.deal.hand)}` : "");
  if (sc.elements) return renderSystemResult(d, sc);
  $("fans").querySelector("tbody").innerHTML = sc.fans.map((f) =>
    `<tr class="fan"><td>${f.number ?? "-"}</td><td>${esc(zh() ? f.name_zh : f.name_en)}</td>` +
    `<td class="sets">${esc(f.tiles.map(setText).join(" "))}</td><td>${f.points}</td><td>${f.count}</td></tr>`).join("");
  $("score-total").textContent = `${t("total")}: ${sc.total} — ${sc.legal ? t("legal") : t("notLegal")}`;
  const p = sc.payments;
  let pay = p ? `${t("receives")} ${p.winner_receives}` + (p.self_drawn ? ` (3 × ${p.from_each_other})` : ` (${p.from_discarder} + 2 × ${p.from_each_other})`) : "";
  const h = d.sheet && d.sheet.hands.find((x) => x.id === (d.recorded ?? d.edited));
  if (h) pay += ` · ${t("newRunning")}: ` + d.sheet.players.map((n, i) => `${n} ${h.running[i]}`).join(", ");
  $("payments").textContent = pay;
}
// A hand scored by another rule system: its elements (台, han, fu, doublings ...) and payments per side.
function renderSystemResult(d, sc) {
  const unit = (u) => t("units")[u] || u;
  $("fans").querySelector("tbody").innerHTML = sc.elements.map((e) =>
    `<tr class="fan"><td>-</td><td>${esc(zh() ? e.name_zh : (e.name_ja ? `${e.name_en} (${e.name_ja})` : e.name_en))}</td>` +
    `<td class="sets">${esc(e.tiles.map(setText).join(" "))}</td><td>${e.value} ${esc(unit(e.unit))}</td><td>${e.count}</td></tr>`).join("");
  const notes = zh() && sc.notes_zh ? sc.notes_zh : sc.notes;  // each note in both languages (scoring.systems.base.Note)
  $("score-total").textContent = `${t("total")}: ${sc.total} ${unit(sc.unit)}` + (notes.length ? ` — ${notes.join(" ")}` : "");
  const deal = d.deal, h = d.sheet && d.sheet.hands.find((x) => x.id === (d.recorded ?? d.edited));
  let pay = "";
  if (sc.payments && deal) {
    const sideOf = Object.fromEntries(Object.entries(deal.seat_winds).map(([side, w]) => [w, side]));
    pay = `${t("payments")}: ` + SIDES.map((w) => [sideOf[w], sc.payments[w]])
      .map(([side, v]) => `${sideName(side)} ${esc(playerAt(side))} ${v > 0 ? "+" + v : v}`).join(", ");
  }
  if (h) pay += ` · ${t("newRunning")}: ` + d.sheet.players.map((n, i) => `${n} ${h.running[i]}`).join(", ");
  $("payments").textContent = pay;
}
async function submitScore(e) {
  e.preventDefault();
  scoreError("");
  clearResult();
  const files = [...$("photo").files];
  if (files.length && !editing) {
    if (files.length === 1) return readPhoto(files[0]);
    if (files.length >= 3 && files.length <= 5) return readCapture(files);
    return scoreError(t("framesCount", files.length));
  }
  const body = { hand: $("hand").value.trim(), ...winOptions() };
  const req = editing ? api("PUT", `/api/match/hands/${editing.id}`, body, { where: scoreError })
    : api("POST", "/api/match/hand", body, { where: scoreError });
  quiet(req.then((d) => { afterChange(d); renderResult(d); stopEdit(); resetForm(); }));
}
function recordDraw() {
  scoreError(""); clearResult();
  const req = editing ? api("PUT", `/api/match/hands/${editing.id}`, { draw: true }, { where: scoreError })
    : api("POST", "/api/match/draw", {}, { where: scoreError });
  quiet(req.then((d) => { afterChange(d); stopEdit(); resetForm(); }));
}

// ---- the photo: checked tile by tile before it is scored ----
const readOptions = () => (isMcr() ? {} : { rules: match.rules });  // read as a hand of the match's rules (its size, flowers)
async function readPhoto(file) {
  const fd = new FormData();
  fd.append("photo", file);
  if (!isMcr()) fd.append("options", JSON.stringify(readOptions()));
  return showReading(api("POST", "/api/score/photo", fd, { form: true, where: scoreError }));
}
// several frames of one hand, voted per tile (POST /api/score/capture): uploaded (3-5 files), or
// taken by the table's camera (files null: 5 frames; read in its calibrated view, the seat reported)
async function readCapture(files) {
  let req;
  if (files) {
    const fd = new FormData();
    for (const f of files) fd.append("frames", f);
    if (!isMcr()) fd.append("options", JSON.stringify(readOptions()));
    req = api("POST", "/api/score/capture", fd, { form: true, where: scoreError });
  } else req = api("POST", "/api/score/capture", { frames: 5, ...readOptions() }, { where: scoreError });
  return showReading(req);
}
async function showReading(req) {
  $("photo-check").hidden = true; $("seat-note").hidden = true;
  scoreError(t("reading"));
  const d = await req.catch(() => null);
  if (!d) return;
  const rec = d.recognition;
  const doubtful = new Set(rec.uncertain.map((u) => u.box.join(",")));
  photo = { id: d.photo, url: d.annotated, size: rec.image_size, problem: d.problem, frames: rec.frames || 1,
    tiles: rec.tiles.map((x, i) => ({ ...x, index: i, read: x.tile, doubtful: doubtful.has(x.box.join(",")) || !!x.changed,
      checked: false })), gaps: rec.gaps || [], win: null, seat: rec.seat };
  // the seat whose zone held the hand (the table's calibrated camera) is the winner's: the player can change it
  if (rec.seat) $("winner").value = rec.seat;
  renderPhoto();
}
// where the table's camera saw the hand; the winner's seat (and with it the seat wind) set from it
function renderSeatNote() {
  const p = photo, el = $("seat-note");
  el.hidden = !p || p.seat === undefined;
  if (el.hidden) return;
  const c = match && match.current;
  el.textContent = p.seat ? t("seatSeen", sideName(p.seat), c ? sideName(c.seat_winds[p.seat]) : null) : t("seatNone");
}
function renderPhoto() {
  const p = photo;
  $("photo-check").hidden = false;
  $("photo-hint").textContent = t("photoHint");
  $("annotated").src = p.url; $("annotated").alt = t("annotatedAlt");
  const [W, H] = p.size;
  // wide enough that a tile is at least 44 px across (a finger's width): scroll sideways beyond the screen
  const tileW = Math.min(...p.tiles.map((x) => Math.min(x.box[2] - x.box[0], x.box[3] - x.box[1])).filter((v) => v > 0), W);
  $("photo-inner").style.width = `max(100%, ${Math.ceil(44 * W / tileW)}px)`;
  $("photo-inner").style.aspectRatio = `${W} / ${H}`;
  $("overlay").innerHTML = p.tiles.map((x) => {
    const [x1, y1, x2, y2] = x.box;
    const cls = ["tile", x.doubtful && !x.checked ? "doubtful" : "", x.changed ? "changed" : "", x.tile !== x.read ? "corrected" : "",
      p.win === x.index ? "win" : ""].join(" ");
    return `<button type="button" class="${cls}" data-index="${x.index}" data-tile="${x.tile}"><span>${esc(tileZh(x.tile))}</span></button>`;
  }).join("") + p.gaps.map((g, i) => g.kind === "unread"
    ? `<div class="gap unread" data-gap="${i}" title="${esc(t("unreadHere"))}"><span>${esc(t("unreadHere"))}</span></div>`
    : `<div class="gap" data-gap="${i}" title="${esc(t("gapHere"))}"><span>?</span></div>`).join("");
  // where the layout check says a tile seems to be missing, or where tiles were not read (kind
  // "unread": the detector responds weakly there; vision.assemble.Gap): placed like the tiles
  $("overlay").querySelectorAll("div.gap").forEach((el) => {
    const [x1, y1, x2, y2] = p.gaps[+el.dataset.gap].box;
    Object.assign(el.style, { left: `${100 * x1 / W}%`, top: `${100 * y1 / H}%`, width: `${100 * (x2 - x1) / W}%`,
                              height: `${100 * (y2 - y1) / H}%` });
  });
  // placed through the CSSOM: the Content-Security-Policy refuses style attributes in markup
  $("overlay").querySelectorAll("button.tile").forEach((b) => {
    const [x1, y1, x2, y2] = p.tiles[+b.dataset.index].box;
    Object.assign(b.style, { left: `${100 * x1 / W}%`, top: `${100 * y1 / H}%`, width: `${100 * (x2 - x1) / W}%`,
                             height: `${100 * (y2 - y1) / H}%` });
    b.onclick = () => openPicker(+b.dataset.index);
  });
  const left = p.tiles.filter((x) => x.doubtful && !x.checked).length;
  const changed = p.tiles.filter((x) => x.changed).length;
  const unread = p.gaps.filter((g) => g.kind === "unread").length, missing = p.gaps.length - unread;
  $("photo-status").textContent = (p.frames > 1 ? t("framesVoted", p.frames) + (changed ? t("changedTiles", changed) : "") + " · " : "") +
    (left ? t("toConfirm", left) : t("allChecked")) + (missing ? " · " + t("gapsToCheck", missing) : "") +
    (unread ? " · " + t("unreadToCheck", unread) : "");
  renderSeatNote();
  $("btn-photo-score").disabled = left > 0;
}
let picking = null;
function openPicker(i) {
  picking = i;
  const x = photo.tiles[i];
  $("picker-title").textContent = t("readAs", tileZh(x.read), x.confidence.toFixed(2)) + (x.votes && photo.frames > 1 ?
    " · " + t("votes", Object.entries(x.votes).map(([k, n]) => `${tileZh(k)}×${n}`).join(zh() ? "，" : ", "), photo.frames) : "");
  const all = [..."123456789"].map((n) => n + "m").concat([..."123456789"].map((n) => n + "p"), [..."123456789"].map((n) => n + "s"),
    [..."ESWNCFP"], [1, 2, 3, 4, 5, 6, 7, 8].map((n) => n + "f"), ["back"]);
  $("picker-tiles").innerHTML = all.map((c) => `<button type="button" class="pick${c === x.tile ? " current" : ""}" data-tile="${c}">${esc(tileZh(c))}</button>`).join("");
  $("picker-tiles").querySelectorAll("button").forEach((b) => { b.onclick = () => { setTile(b.dataset.tile); }; });
  $("pick-win").textContent = photo.win === i ? t("winTile") + " ✓" : t("markWin");
  $("picker").showModal();
}
function setTile(c) { const x = photo.tiles[picking]; x.tile = c; x.checked = true; $("picker").close(); renderPhoto(); }
async function scorePhoto() {
  scoreError(""); clearResult();
  const p = photo;
  const body = { photo: p.id, ...winOptions(),
    corrections: p.tiles.filter((x) => x.tile !== x.read).map((x) => ({ index: x.index, tile: x.tile })),
    confirmed: p.tiles.filter((x) => x.checked && x.tile === x.read).map((x) => x.index) };
  if (p.win !== null) body.win = p.win;
  if (body.flowers === 0 || (Array.isArray(body.flowers) && !body.flowers.length)) delete body.flowers;  // the photo's own
  const d = await api("POST", "/api/match/photo", body, { where: scoreError }).catch(() => null);
  if (!d) return;
  photo = null; $("photo-check").hidden = true; $("seat-note").hidden = true;
  afterChange(d); renderResult(d); resetForm();
}

// ---- waits and shanten (听牌/向听, issue 19): a referee checks whether a hand was ready and on what.
// 13 tiles: POST /api/waits with the form's win options (the winds of the match's deal for the winner's
// seat); not ready, or 14 tiles (waits answers tile-count): POST /api/shanten. Analysis only: no token,
// nothing recorded. The answers are those of `mjtable waits --json` and `mjtable shanten --json`. ----
Object.assign(T.zh, { waitsBtn: "听牌 · 向听", seenTiles: "已见的牌", seenHint: "分析用：别家的弃牌和吃碰杠的牌，如 5s5s1pE",
  analysing: "正在分析…", ready: (n, k) => `听牌：听 ${n} 种，未见 ${k} 张`, waitTile: "和牌张", unseen: "未见",
  onDiscard: "点和", onSelf: "自摸", below8: "不够八番起和", cannotWin: "不能和",
  below8Note: "✗ 不够八番起和：不能和这张（花牌不算起和番）", dead: "已绝", bare: (n) => `不计花 ${n}`, fansOf: "番种",
  winds: (s, p, f) => `按 门风${s} · 圈风${p} · 花牌 ${f} 计`, shantenN: (n) => `${n} 向听`,
  shantenWhat: (n) => `（还差 ${n} 张听牌）`, usefulN: (n, k) => `有效牌 ${n} 种，未见 ${k} 张`,
  heldAll: "听牌，但所听的牌四张都在自己手里：无牌可和", discardHead: (b) => `14 张：打出一张后最好${b}`,
  readyWord: "听牌", discardTile: "打出", afterIt: "打后", useful: "有效牌", copies: "未见",
  more: (n) => `更多（还有 ${n} 种打法）`, fewer: "收起", alreadyWins: "这手牌已经和了：请按“计分”。",
  byShape: "各牌型向听：", shapeNames: { regular: "一般型", seven_pairs: "七对", thirteen_orphans: "十三幺", honors_and_knitted: "全不靠",
    knitted_straight: "组合龙" } });
Object.assign(T.en, { waitsBtn: "Waits · shanten", seenTiles: "Seen tiles", seenHint: "for the analysis: others' discards and melds, e.g. 5s5s1pE",
  analysing: "analysing…", ready: (n, k) => `Ready: waits on ${n} tile${n > 1 ? "s" : ""}, ${k} unseen`, waitTile: "Wait",
  unseen: "Unseen", onDiscard: "Discard", onSelf: "Self-drawn", below8: "below 8 points", cannotWin: "may not win",
  below8Note: "✗ below the 8-point minimum: may not win on it (flowers do not count)", dead: "none left", bare: (n) => `${n} w/o flowers`,
  fansOf: "Fans", winds: (s, p, f) => `scored with seat wind ${s}, prevalent wind ${p}, ${f} flower${f === 1 ? "" : "s"}`,
  shantenN: (n) => `${n}-shanten`, shantenWhat: (n) => ` (${n} tile${n > 1 ? "s" : ""} from ready)`,
  usefulN: (n, k) => `useful tiles: ${n} kind${n > 1 ? "s" : ""}, ${k} unseen`,
  heldAll: "Ready, but the hand holds all four of each tile it waits on: nothing to win on",
  discardHead: (b) => `14 tiles: at best ${b} after a discard`, readyWord: "ready", discardTile: "Discard",
  afterIt: "Then", useful: "Useful tiles", copies: "Unseen", more: (n) => `more (${n} other discards)`, fewer: "fewer",
  alreadyWins: "This hand already wins: press Score.",
  byShape: "shanten by shape: ", shapeNames: { regular: "regular", seven_pairs: "seven pairs", thirteen_orphans: "thirteen orphans",
    honors_and_knitted: "honors and knitted", knitted_straight: "knitted straight" } });
const DISCARDS_SHOWN = 5;  // a 14-tile hand's best discards listed before "more"
let analysis = null;  // the analysis shown: {waits, shanten, opts} or {wins}; drawn again when the language changes
let analysisSeq = 0;  // a later press wins over an earlier answer still on its way
function clearAnalysis() { analysis = null; analysisSeq++; $("analysis").hidden = true; }
// the win options of the score form that the waits take (WaitsBody): the winds of the match's deal for
// the winner's seat (east and east outside a match), the flowers, the flags; 和绝张 the analysis sets itself
function waitsOptions() {
  const c = match && match.current, f = flowerValue();
  const o = { seat_wind: c ? c.seat_winds[$("winner").value || "E"] : "E", prevalent_wind: c ? c.prevalent_wind : "E",
    flowers: Array.isArray(f) ? f.length : f, last_tile: $("f-last").checked, kong_replacement: $("f-kong").checked,
    robbing_kong: $("f-rob").checked };
  if (match && match.rules === "mcr-1998") o.rules = match.rules;
  return o;
}
async function analyseHand() {
  scoreError(""); clearResult();
  const seq = analysisSeq, hand = $("hand").value.trim(), seen = $("seen").value.trim(), opts = waitsOptions();
  scoreError(t("analysing"));
  let waits = null;
  try {
    waits = await api("POST", "/api/waits", { hand, seen, ...opts }, { where: () => {} });
  } catch (e) {
    if (seq !== analysisSeq) return;
    const code = e.body && e.body.error ? e.body.error.code : null;
    if (code === "already-winning") { scoreError(""); return showAnalysis({ wins: true }); }
    if (code !== "tile-count") return scoreError(e.message);  // 14 tiles (or a wrong count): the shanten says
  }
  if (seq !== analysisSeq) return;
  if (waits && waits.shanten === 0 && waits.waits.length) { scoreError(""); return showAnalysis({ waits, opts }); }
  const shanten = await api("POST", "/api/shanten", { hand, seen }, { where: scoreError }).catch(() => null);
  if (shanten && seq === analysisSeq) showAnalysis({ waits, shanten, opts });
}
function showAnalysis(a) { analysis = a; renderAnalysis(); }
// a tile as a small tile face, in the page's words for it (tileZh, as the photo's corrections show it)
const chip = (x) => `<span class="tile-chip ${/^[1-9][mps]$/.test(x) ? "suit-" + x[1] : "honor"}" data-tile="${esc(x)}">${esc(tileZh(x))}</span>`;
const fanList = (fans) => fans.map((f) => `${esc(zh() ? f.name_zh : f.name_en)} ${f.points}${f.count > 1 ? "×" + f.count : ""}`).join(" · ");
function renderAnalysis() {
  const a = analysis, box = $("analysis");
  box.hidden = !a;
  if (!a) return;
  if (a.wins) { box.innerHTML = `<div class="an-head" id="an-wins">${esc(t("alreadyWins"))}</div>`; return; }
  const winds = a.opts ? `<div class="note" id="an-winds">${esc(t("winds", sideName(a.opts.seat_wind), sideName(a.opts.prevalent_wind), a.opts.flowers))}</div>` : "";
  if (!a.shanten) { box.innerHTML = renderWaits(a.waits, a.open || (a.open = new Set())) + winds; bindWaits(a.open); return; }
  const s = a.shanten;
  const shapes = `<div class="note an-shapes">${esc(t("byShape"))}` + Object.entries(s.by_shape).filter(([, v]) => v !== null)
    .map(([k, v]) => `${esc(t("shapeNames")[k])} ${v < 0 ? "✓" : v}`).join(" · ") + `</div>`;
  const head = (n) => n === 0 ? t("readyWord") : t("shantenN", n);
  if (s.useful) {  // 13 tiles, not ready (or every wait held four times)
    const held = s.shanten === 0 ? `<div class="an-head" id="an-shanten" data-shanten="0">${esc(t("heldAll"))}</div>` :
      `<div class="an-head" id="an-shanten" data-shanten="${s.shanten}">${esc(t("shantenN", s.shanten))}${esc(t("shantenWhat", s.shanten))}</div>`;
    box.innerHTML = held + `<div id="an-useful"><span class="an-count">${esc(t("usefulN", s.useful.length, s.unseen))}</span> ` +
      s.useful.map(chip).join("") + `</div>` + shapes;
    return;
  }
  const all = s.discards, open = box.dataset.more === s.hand;
  const shown = open ? all : all.slice(0, DISCARDS_SHOWN);
  box.innerHTML = `<div class="an-head" id="an-discards-head" data-shanten="${s.shanten}">${esc(t("discardHead", head(s.shanten)))}</div>` +
    `<table id="an-discards"><thead><tr><th>${t("discardTile")}</th><th>${t("afterIt")}</th><th>${t("useful")}</th>` +
    `<th class="num">${t("copies")}</th></tr></thead><tbody>` + shown.map((d) =>
      `<tr class="discard" data-tile="${esc(d.tile)}" data-shanten="${d.shanten}"><td class="out" data-label="${esc(t("discardTile"))}">${chip(d.tile)}</td>` +
      `<td class="after${d.shanten === 0 ? " ready" : ""}">${esc(head(d.shanten))}</td><td class="useful">${d.useful.map(chip).join("")}</td>` +
      `<td class="num unseen" data-label="${esc(t("copies"))}">${d.unseen}</td></tr>`).join("") + `</tbody></table>` +
    (all.length > DISCARDS_SHOWN ? `<button type="button" id="an-more">${esc(open ? t("fewer") : t("more", all.length - DISCARDS_SHOWN))}</button>` : "") +
    shapes;
  if ($("an-more")) $("an-more").onclick = () => { box.dataset.more = open ? "" : s.hand; renderAnalysis(); };
}
// the waits of a ready hand: each tile, its unseen copies, the total on a discard and self-drawn (✗ below
// the 8-point minimum); its fans one tap away (``open``: the rows whose fans are shown)
function renderWaits(w, open) {
  const cell = (sc, cls) => !sc ? `<td class="num ${cls}">—</td>` :
    `<td class="num ${cls}${sc.legal ? "" : " short"}" data-total="${sc.total}" data-legal="${sc.legal}"` +
    `${sc.legal ? "" : ` title="${esc(t("below8"))}"`}>${sc.total}${sc.legal ? "" : " ✗"}` +
    // the points the minimum is counted on, where flowers make the total look enough (fan_points, when the API gives it)
    (!sc.legal && sc.fan_points !== undefined && sc.fan_points !== sc.total ? `<small class="bare">${esc(t("bare", sc.fan_points))}</small>` : "") + `</td>`;
  const unseen = w.waits.reduce((k, x) => k + x.unseen, 0);
  const short = w.waits.some((x) => !x.self_drawn.legal || (x.discard && !x.discard.legal));
  return `<div class="an-head" id="an-ready">${esc(t("ready", w.waits.length, unseen))}</div>` +
    `<table id="an-waits"><thead><tr><th>${t("waitTile")}</th><th class="num">${t("unseen")}</th><th class="num">${t("onDiscard")}</th>` +
    `<th class="num">${t("onSelf")}</th><th></th></tr></thead><tbody>` + w.waits.map((x, i) => {
      const never = !x.self_drawn.legal && !(x.discard && x.discard.legal);
      return `<tr class="wait${never ? " cannot" : ""}" data-tile="${esc(x.tile)}" data-i="${i}"><td>${chip(x.tile)}` +
        (never ? `<span class="tag-short">${esc(t("cannotWin"))}</span>` : "") + `</td>` +
        `<td class="num unseen">${x.unseen}${x.unseen ? "" : ` <small>${esc(t("dead"))}</small>`}</td>` +
        cell(x.discard, "discard") + cell(x.self_drawn, "self") +
        `<td><button type="button" class="fans-toggle" aria-expanded="${open.has(i)}" aria-label="${esc(t("fansOf"))}">` +
        `<span class="lbl">${esc(t("fansOf"))} </span>${open.has(i) ? "▾" : "▸"}</button></td></tr>` +
        `<tr class="wait-fans" data-i="${i}"${open.has(i) ? "" : " hidden"}><td colspan="5">` +
        (x.discard ? `<div><b>${t("onDiscard")} ${x.discard.total}</b>: ${fanList(x.discard.fans)}</div>` : "") +
        `<div><b>${t("onSelf")} ${x.self_drawn.total}</b>: ${fanList(x.self_drawn.fans)}</div></td></tr>`;
    }).join("") + `</tbody></table>` + (short ? `<div class="an-short" id="an-below8">${esc(t("below8Note"))}</div>` : "");
}
function bindWaits(open) {
  $("analysis").querySelectorAll("tr.wait").forEach((row) => {
    row.onclick = () => {
      const i = +row.dataset.i;
      if (open.has(i)) open.delete(i); else open.add(i);
      renderAnalysis();
    };
  });
}
$("btn-waits").onclick = analyseHand;
$("score-form").addEventListener("input", clearAnalysis);  // a changed hand or option: the analysis shown is no longer its

// ---- settings, trends, log ----
async function loadSettings() {
  settings = await (await fetch("/api/settings")).json();
  $("set-tiles").innerHTML = settings.allowed_tile_counts.map((n) => `<option value="${n}">${n}</option>`).join("");
  renderRulesOptions(settings.rules || "none");
  renderConfirmOptions(settings.confirm_below);
  diceTouched = false;
  $("set-tiles").value = settings.tile_count; $("set-dice").value = settings.dice_method; $("set-dealer").value = settings.dealer;
  // a settings file that could not be read whole: the values shown are the readable ones (GET /api/settings)
  const note = $("settings-note");
  if (settings.problem) {  // the sentence in the page's language, the server's detail (for a technician) under it
    note.innerHTML = `${esc(t("settingsProblem"))}<br><small class="hint">${esc(settings.problem)}</small>`;
    note.dataset.problem = "1";
  }
  else if (note.dataset.problem) { note.textContent = ""; delete note.dataset.problem; }
}
// The flag threshold (confirm_below): the default, the steps vision/README.md measured, and the
// stored value when it is another (set with mjtable config set confirm-below)
const CONFIRM_STEPS = [0.7, 0.75, 0.8];
function renderConfirmOptions(value) {
  const d = settings.confirm_below_default;
  const values = [...new Set([d, ...CONFIRM_STEPS, +value])].sort((a, b) => a - b);
  const note = (v) => (v === d ? t("confirmDefault") : v === 0.75 ? t("confirmMore") : "");
  const label = (v) => (note(v) ? (zh() ? `${v}（${note(v)}）` : `${v} (${note(v)})`) : String(v));
  $("set-confirm").innerHTML = values.map((v) => `<option value="${v}">${esc(label(v))}</option>`).join("");
  $("set-confirm").value = String(+value);
}
function renderRulesOptions(value) {
  $("set-rules").innerHTML = `<option value="none">${esc(t("noRules"))}</option>` + settings.rules_choices.map((c) =>
    `<option value="${esc(c.name)}">${esc(zh() ? c.name_zh : c.name_en)} · ${c.tile_count}</option>`).join("");
  $("set-rules").value = value;
}
// Picking rules shows the tile count and dice method they are played with (the server sets the same).
function rulesPicked() {
  const c = (settings.rules_choices || []).find((x) => x.name === $("set-rules").value);
  if (!c) return;
  $("set-tiles").value = c.tile_count;
  $("set-dice").value = c.dice_method || settings.dice_method;
  diceTouched = false;
}
async function saveSettings(e) {
  e.preventDefault();
  // the dice method is sent only when changed by hand: rules that name none keep the table's own (server side)
  const body = { rules: $("set-rules").value, tile_count: +$("set-tiles").value, dealer: $("set-dealer").value,
    confirm_below: +$("set-confirm").value };
  if (diceTouched) body.dice_method = $("set-dice").value;
  const r = await api("PUT", "/api/settings", body).catch(() => null);
  if (r) { $("settings-note").textContent = r.note ? t("appliesNext") : t("changedSettings"); delete $("settings-note").dataset.problem; }
}
const TREND_COLOURS = { E: "#c62828", S: "#1565c0", W: "#2e7d32", N: "#6a1b9a" };
async function loadTrends() {
  const tr = await (await fetch("/api/trends?last=50")).json();
  const series = SIDES.map((s) => [s, tr.lift_up_s[s].times]);
  const all = series.flatMap(([, v]) => v);
  const svg = $("trend");
  if (!all.length) { svg.innerHTML = `<text x="160" y="75" text-anchor="middle" class="axis">${t("noTrend")}</text>`; $("trend-legend").textContent = ""; return; }
  const lo = Math.min(...all) * 0.95, hi = Math.max(...all) * 1.05 || 1, n = Math.max(...series.map(([, v]) => v.length));
  const X = (i) => 40 + (n > 1 ? (270 * i) / (n - 1) : 135), Y = (v) => 130 - (110 * (v - lo)) / (hi - lo || 1);
  let out = `<line class="axis-line" x1="40" y1="130" x2="310" y2="130"/><line class="axis-line" x1="40" y1="20" x2="40" y2="130"/>` +
    `<text class="axis" x="36" y="24" text-anchor="end">${hi.toFixed(2)}</text><text class="axis" x="36" y="130" text-anchor="end">${lo.toFixed(2)}</text>` +
    `<text class="axis" x="310" y="145" text-anchor="end">${n} ${t("cycles")}</text><text class="axis" x="44" y="14">${t("seconds")}</text>`;
  for (const [s, v] of series) if (v.length)
    out += `<polyline class="trend-line" data-side="${s}" fill="none" stroke="${TREND_COLOURS[s]}" stroke-width="2" points="${v.map((y, i) => `${X(i).toFixed(1)},${Y(y).toFixed(1)}`).join(" ")}"/>` +
      v.map((y, i) => `<circle cx="${X(i).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="2.5" fill="${TREND_COLOURS[s]}"/>`).join("");
  svg.innerHTML = out;
  $("trend-legend").innerHTML = SIDES.map((s) => {
    const m = tr.lift_up_s[s];
    return `<span data-side="${s}">■ ${sideName(s)} ${m.mean ?? "-"} ${t("seconds")}${m.growth ? " ×" + m.growth : ""}</span>`;
  }).join(" ");
  $("trend-legend").querySelectorAll("span").forEach((el) => { el.style.color = TREND_COLOURS[el.dataset.side]; });
}
function renderLogKinds() {
  const sel = $("log-kind"), keep = sel.value;
  sel.innerHTML = `<option value="">${t("all")}</option>` + KINDS.map((k) => `<option value="${k}">${zh() ? KIND_ZH[k] : k}</option>`).join("");
  sel.value = keep;
}
function eventSummary(e) {
  const d = e.data;
  if (e.kind === "fault" || e.kind === "warning") return `${d.code || ""} ${zh() ? (d.meaning_zh || d.observed_zh || "") : (d.meaning || d.observed || d.message || "")}`;
  if (e.kind === "score") return `${d.hand ? setText(d.hand) : ""} ${d.total ?? ""}${d.winner ? " " + sideName(d.winner) : ""}`;
  if (e.kind === "match") return d.action === "new" ? `${t("newMatch")}: ${(d.players || []).join(", ")}` : `${zh() ? { undo: "撤销", delete: "删除", edit: "修改" }[d.action] : d.action} #${d.target}`;
  if (e.kind === "cycle") return d.dice && (zh() ? d.dice.text_zh : d.dice.text_en) || "";
  if (e.kind === "settings") return Object.entries(d.changes || {}).map(([k, v]) => `${zh() ? { tile_count: "牌数", dice_method: "掷骰方法", dealer: "庄家", rules: "规则", camera: "相机", confirm_below: T.zh.confirmBelow }[k] || k : k}=${k === "dealer" ? sideName(v) : k === "camera" && zh() ? "已校准" : v}`).join(" ");
  if (e.kind === "selftest") return d.passed ? t("pass") : t("fail");
  if (e.kind === "operator") return (zh() ? ACTION_ZH[d.action] || "" : d.action + (d.fault ? " " + d.fault : "")) +
    (d.source === "button" ? (zh() ? "（按键）" : " (button)") : "") + (d.refused ? (zh() ? " 被拒绝" : " refused") : "");
  return "";
}
async function loadLog() {
  const k = $("log-kind").value;
  const r = await (await fetch("/api/log?limit=30" + (k ? "&kind=" + k : ""))).json();
  $("log").querySelector("tbody").innerHTML = r.events.map((e) =>
    `<tr data-kind="${e.kind}"><td>${new Date(e.t * 1000).toLocaleTimeString(zh() ? "zh-CN" : "en-GB")}</td><td>${zh() ? KIND_ZH[e.kind] : e.kind}</td>` +
    `<td>${esc(eventSummary(e))}</td></tr>`).join("");
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
// simulated faults: KIND[:SIDE][:NAME=VALUE,...]; Repair takes KIND[:SIDE] (or "all") and the part works again
function showSimFaults(list) { simFaults = list; $("sim-faults").textContent = t("injected") + ": " + (list.length ? list.join(", ") : t("none")); }
function refreshSimFaults() { return quiet(api("GET", "/api/sim/fault", undefined, { where: () => {} }).then((r) => showSimFaults(r.faults))); }
$("btn-inject").onclick = () => quiet(api("POST", "/api/sim/fault", { fault: $("fault-spec").value })
  .then((r) => { showMessage("✓ " + r.injected); refreshSimFaults(); }));
$("btn-repair").onclick = () => quiet(api("DELETE", "/api/sim/fault?fault=" + encodeURIComponent($("fault-spec").value))
  .then((r) => { showMessage("✓ " + r.repaired.join(", ")); showSimFaults(r.faults); }));
$("btn-selftest").onclick = () => quiet(api("POST", "/api/selftest").then(renderSelftest));
$("lang").onclick = () => { lang = zh() ? "en" : "zh"; localStorage.setItem("mjtable.lang", lang); applyLang(); };
$("pair-form").onsubmit = (e) => { e.preventDefault(); localStorage.setItem("mjtable.token", $("token-input").value.trim()); $("token-input").value = ""; checkPairing(); };
$("score-form").onsubmit = submitScore;
$("btn-draw").onclick = recordDraw;
$("photo").onchange = showFileName;
$("btn-cancel-edit").onclick = () => { stopEdit(); resetForm(); };
$("btn-undo").onclick = () => quiet(api("POST", "/api/match/undo").then(afterChange));
$("btn-photo-score").onclick = scorePhoto;
$("pick-same").onclick = () => setTile(photo.tiles[picking].read);
$("pick-win").onclick = () => { photo.win = photo.win === picking ? null : picking; $("picker").close(); renderPhoto(); };
$("pick-back").onclick = () => $("picker").close();
$("match-form").onsubmit = (e) => {
  e.preventDefault();
  const players = SIDES.map((s) => $("p-" + s).value.trim() || $("p-" + s).placeholder);
  quiet(api("POST", "/api/match/new", { players, practice: $("practice").value }).then((d) => {
    afterChange(d); $("new-match").open = false; clearResult(); stopEdit();
  }));
};
$("settings-form").onsubmit = saveSettings;
$("set-rules").onchange = rulesPicked;
$("set-dice").onchange = () => { diceTouched = true; };
$("log-kind").onchange = loadLog;
$("my-seat").value = localStorage.getItem("mjtable.seat") || "E";
$("my-seat").onchange = () => { localStorage.setItem("mjtable.seat", $("my-seat").value); if (status) drawTable(status); };
// ---- installation check: mjtable doctor's report of the Pi (GET /api/doctor, with the token) ----
Object.assign(T.zh, { doctor: "安装检查", runDoctor: "检查树莓派", doctorOk: "没有不合格项", doctorFail: "有不合格项，请按修复方法处理",
  PASS: "通过", WARN: "注意", FAIL: "不合格", SKIP: "跳过", fix: "修复" });
Object.assign(T.en, { doctor: "Installation check", runDoctor: "Check the Pi", doctorOk: "No check failed",
  doctorFail: "Some checks failed: see the fixes", PASS: "PASS", WARN: "WARN", FAIL: "FAIL", SKIP: "SKIP", fix: "Fix" });
let lastDoctor = null;
function renderDoctor(r) {
  lastDoctor = r;
  const c = r.counts;
  $("doctor-summary").className = r.ok ? "pass" : "fail";
  $("doctor-summary").textContent = `${r.ok ? t("doctorOk") : t("doctorFail")} (${t("PASS")} ${c.PASS}, ${t("WARN")} ${c.WARN}, ` +
    `${t("FAIL")} ${c.FAIL}, ${t("SKIP")} ${c.SKIP})`;
  $("doctor").querySelector("tbody").innerHTML = r.findings.map((f) => {
    const fix = zh() ? f.fix_zh : f.fix_en;
    return `<tr class="doctor-${f.status.toLowerCase()}" data-check="${esc(f.id)}"><td>${t(f.status)}</td>` +
      `<td>${esc(zh() ? f.title_zh : f.title_en)}</td><td>${esc(f.seen)}` +
      (fix && f.status !== "PASS" ? `<div class="doctor-fix">${t("fix")}: ${esc(fix)}</div>` : "") + "</td></tr>";
  }).join("");
}
$("btn-doctor").onclick = () => quiet(api("GET", "/api/doctor").then(renderDoctor));
$("lang").addEventListener("click", () => { if (lastDoctor) renderDoctor(lastDoctor); });

// ---- the tournament: the hall's seating for this table's current round (GET /api/seating; the
// hall publishes it on the broker, docs/mqtt.md), and a button that starts the match with it ----
Object.assign(T.zh, { tourney: "赛事", tRound: (r, n) => `第 ${r} 轮（共 ${n} 轮）`, tTable: "本桌", tPlayer: "本轮选手",
  tOut: "本轮本桌没有比赛", tStart: "按本轮座位开始比赛", tSeated: "本桌当前比赛即本轮座位",
  tDiffers: "本桌当前比赛的选手与本轮座位不同" });
Object.assign(T.en, { tourney: "Tournament", tRound: (r, n) => `round ${r} of ${n}`, tTable: "table", tPlayer: "This round",
  tOut: "no session at this table this round", tStart: "Start the match with this round's seating",
  tSeated: "the match at the table is this round's seating", tDiffers: "the match at the table is not this round's seating" });
async function loadSeating() {
  const r = await fetch("/api/seating").catch(() => null);
  if (r && r.ok) { seating = (await r.json()).seating; renderSeating(); }
}
function renderSeating() {
  const s = seating;
  $("tourney").hidden = !s;
  if (!s) return;
  $("t-line").innerHTML = `${t("tourney")}: <b id="t-name">${esc(s.tournament)}</b> · ` +
    `<b id="t-round">${esc(t("tRound", s.round, s.rounds.length))}</b> · ${t("tTable")} <b>${esc(s.table)}</b>`;
  $("t-seats").querySelector("tbody").innerHTML = s.players ? SIDES.map((side, i) =>
    `<tr data-side="${side}"><td>${sideName(side)}</td><td class="name">${esc(s.players[i])}</td></tr>`).join("") : "";
  $("t-seats").hidden = !s.players;
  const same = !!(s.players && match && match.players.join("\u0000") === s.players.join("\u0000"));
  $("t-note").textContent = !s.players ? t("tOut") : same ? t("tSeated") : t("tDiffers");
  $("t-note").className = s.players && !same ? "warning" : "note";
  $("btn-t-start").hidden = !s.players || same;
}
$("btn-t-start").onclick = () => quiet(api("POST", "/api/match/new", { players: seating.players, practice: "mcr" })
  .then((d) => { afterChange(d); clearResult(); stopEdit(); }));
$("lang").addEventListener("click", renderSeating);

// ---- the table's own camera (issue 21): its calibration step (POST /api/camera/calibrate, the use-case
// of `mjtable camera calibrate`) and, once there is a camera, scoring by several frames voted ----
Object.assign(T.zh, { tableCamera: "牌桌相机", calibrateCamera: "校准相机", stepEmpty: "清空桌面，拍一张空桌",
  stepHand: "在一个座位前摆好一手牌，再拍一张", takeWithCamera: "用牌桌相机拍", uploadPicture: "上传照片",
  bottomSeat: "画面下方的座位", calibrateSave: "校准并保存", captureHand: "用牌桌相机拍（5 帧）",
  camNone: "没有配置牌桌相机（可上传照片校准）", camNotCalibrated: "未校准：计分时不会判断座位",
  camCalibrated: (b, w, h) => `已校准：画面下方是${b}座，牌约 ${w}×${h} 像素`, camTaking: "正在拍照…", camWorking: "正在校准…",
  camDone: (s) => s ? `已保存。手牌在${s}座的摆牌区。` : "已保存，但手牌不在任何座位的区域内：请在座位前摆牌再校准。",
  camLegend: "俯视图：画出了四个座位的摆牌区（E 东、S 南、W 西、N 北），深色的是手牌所在的座位", camTaken: "已拍", camFile: "已选",
  framesCount: (n) => `选了 ${n} 张照片：请选 1 张，或同一手牌的 3-5 张`, nFrames: (n) => `${n} 张（同一手牌，逐张投票）`,
  framesVoted: (n) => `${n} 帧投票`, changedTiles: (n) => `，${n} 张牌各帧读法不同（须确认）`,
  votes: (v, n) => `${n} 帧中：${v}`, seatSeen: (s, w) => `相机看到手牌摆在${s}座：和牌者已设为${s}${w ? `（门风${w}）` : ""}，不对可改。`,
  seatNone: "手牌不在任何座位的摆牌区：请选择和牌者。" });
Object.assign(T.en, { tableCamera: "Table camera", calibrateCamera: "Calibrate camera", stepEmpty: "Clear the table and take the empty table",
  stepHand: "Lay a hand out in front of one seat and take it", takeWithCamera: "Take with the table camera", uploadPicture: "Upload a picture",
  bottomSeat: "Seat at the picture's bottom", calibrateSave: "Calibrate and save", captureHand: "Table camera (5 frames)",
  camNone: "no table camera configured (calibrate from uploaded pictures)", camNotCalibrated: "not calibrated: scoring will not tell the seat",
  camCalibrated: (b, w, h) => `calibrated: ${b} at the picture's bottom, tiles about ${w}×${h} px`, camTaking: "taking the picture…",
  camWorking: "calibrating…",
  camDone: (s) => s ? `Saved. The hand lies in seat ${s}'s zone.` : "Saved, but the hand lies in no seat's zone: lay it in front of a seat and calibrate again.",
  camLegend: "Seen from above: the four seats' layout zones, the hand's seat shaded", camTaken: "taken", camFile: "chosen",
  framesCount: (n) => `${n} photos chosen: choose 1, or 3-5 of the same hand`, nFrames: (n) => `${n} frames of one hand (voted)`,
  framesVoted: (n) => `${n} frames voted`, changedTiles: (n) => `, ${n} tile(s) read differently between frames (to confirm)`,
  votes: (v, n) => `in ${n} frames: ${v}`, seatSeen: (s, w) => `The camera saw the hand at seat ${s}: winner set to ${s}${w ? ` (seat wind ${w})` : ""}; change it if wrong.`,
  seatNone: "The hand lies in no seat's zone: choose the winner." });
CODE_ZH.calibration = "相机校准失败";
let cam = null;  // GET /api/camera: {available, calibration}
const camPics = { empty: null, hand: null };  // each {key} (taken by the camera) or {file}, with its preview
let camResult = null;
async function loadCamera() {
  const r = await fetch("/api/camera").catch(() => null);
  if (r && r.ok) { cam = await r.json(); renderCamera(); }
}
function renderCamera() {
  if (!cam) return;
  const c = cam.calibration;
  $("cam-state").textContent = (cam.available ? "" : t("camNone") + " · ") +
    (c ? t("camCalibrated", sideName(c.bottom_seat), Math.round(c.tile[0]), Math.round(c.tile[1])) : t("camNotCalibrated"));
  $("cam-state").dataset.calibrated = c ? "yes" : "no";
  document.querySelectorAll("#cam-steps button.take").forEach((b) => { b.hidden = !cam.available; });
  $("btn-capture").hidden = !cam.available;
  for (const o of $("cam-bottom").options) o.textContent = sideName(o.value);
  if (c && !$("cam-bottom").dataset.touched) $("cam-bottom").value = c.bottom_seat;
  $("btn-calibrate").disabled = !(camPics.empty && camPics.hand);
  if (camResult) {
    $("cam-summary").textContent = t("camDone", camResult.seat ? sideName(camResult.seat) : null);
    $("cam-view").alt = $("cam-legend").textContent = t("camLegend");
  }
}
function showPicture(which, pic) {
  camPics[which] = pic;
  $("prev-" + which).src = pic.preview; $("prev-" + which).hidden = false;
  $("prev-" + which).dataset.source = pic.key ? "camera" : "file";
  renderCamera();
}
const camError = (m) => { $("cam-error").textContent = m; };
async function takePicture(which) {
  camError(t("camTaking"));
  const r = await api("POST", "/api/camera/picture", undefined, { where: camError }).catch(() => null);
  if (r) showPicture(which, { key: r.picture, preview: r.preview });
}
function pictureChosen(which) {
  const f = $("file-" + which).files[0];
  if (!f) return;
  if (camPics[which] && camPics[which].file) URL.revokeObjectURL(camPics[which].preview);
  showPicture(which, { file: f, preview: URL.createObjectURL(f) });
  $("file-" + which).value = "";
}
async function calibrateCamera() {
  const fd = new FormData();
  for (const w of ["empty", "hand"]) { const p = camPics[w]; if (p.file) fd.append(w, p.file); else fd.append(w, p.key); }
  fd.append("bottom_seat", $("cam-bottom").value);
  $("cam-result").hidden = true; camResult = null;
  camError(t("camWorking"));
  $("btn-calibrate").disabled = true;
  const r = await api("POST", "/api/camera/calibrate", fd, { form: true, where: camError }).catch(() => null);
  $("btn-calibrate").disabled = false;
  if (!r) return;
  camResult = r;
  $("cam-view").src = r.view; $("cam-result").hidden = false;
  cam = { ...(cam || { available: false }), calibration: r.camera };
  renderCamera();
}
// the two pictures' steps: taken by the table's camera, or uploaded
$("cam-steps").insertAdjacentHTML("afterbegin", ["empty", "hand"].map((w) =>
  `<li data-step="${w}"><span data-i18n="${w === "empty" ? "stepEmpty" : "stepHand"}"></span><div class="buttons">` +
  `<button type="button" id="btn-take-${w}" class="take" data-i18n="takeWithCamera"></button>` +
  `<label class="file"><input id="file-${w}" type="file" accept="image/*"><span class="file-button" data-i18n="uploadPicture"></span></label>` +
  `</div><img id="prev-${w}" class="cam-preview" alt="" hidden></li>`).join(""));
for (const w of ["empty", "hand"]) {
  $("btn-take-" + w).onclick = () => takePicture(w);
  $("file-" + w).onchange = () => pictureChosen(w);
}
$("btn-calibrate").onclick = calibrateCamera;
$("cam-bottom").onchange = () => { $("cam-bottom").dataset.touched = "1"; };
$("btn-capture").onclick = () => { scoreError(""); clearResult(); readCapture(null); };
$("lang").addEventListener("click", () => { renderCamera(); if (photo) renderSeatNote(); });
loadCamera();

fetch("/api/selftest").then((r) => r.json()).then((d) => { if (d.report) renderSelftest(d.report); });
showMessage("");
loadSettings();
applyLang();
connect();
