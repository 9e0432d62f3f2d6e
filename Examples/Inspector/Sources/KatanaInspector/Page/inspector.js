// The Katana inspector's page: plain JavaScript, no build step, nothing fetched from elsewhere.
// It takes the server's batches over a WebSocket, acknowledges each once it is drawn (so that a page that cannot
// keep up gets fewer batches, and the server counts what it drops), and keeps a bounded window of items.
"use strict";

const MAX_ITEMS = 20000;  // items kept in memory
const MAX_ROWS = 2000;    // rows in the table

const items = [];                 // in arrival order: commits in commit order, side effects by start
const effectsById = new Map();    // side effect id -> item
const rowsByKey = new Map();      // "commit:12" -> <tr>
const scopes = new Set();
const types = new Set();
let socket = null;
let received = 0;
let selected = null;              // selected commit sequence
let shown = null;                 // commit the store shows while away from live
let pending = [];                 // batches waiting to be drawn
let drawScheduled = false;

const $ = (id) => document.getElementById(id);

function connect() {
  const token = new URLSearchParams(location.search).get("token");
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}/events` + (token ? `?token=${encodeURIComponent(token)}` : "");
  socket = new WebSocket(url);
  socket.onopen = () => setBadge("connection", "connected", "ok");
  socket.onclose = () => { setBadge("connection", "disconnected", "bad"); setTimeout(connect, 1000); };
  socket.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    handle(message);
  };
}

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function handle(message) {
  switch (message.type) {
    case "hello":
      items.length = 0; effectsById.clear(); rowsByKey.clear(); received = 0;
      $("timeline").tBodies[0].replaceChildren();
      setLive(message.live, null);
      break;
    case "batch":
      pending.push(message);
      scheduleDraw();
      break;
    case "state":
      showState(message);
      break;
    case "travelled":
      setLive(false, message.sequence);
      break;
    case "live":
      setLive(true, null);
      break;
    case "error":
      $("message").textContent = message.message;
      break;
  }
}

function scheduleDraw() {
  if (drawScheduled) return;
  drawScheduled = true;
  requestAnimationFrame(() => {
    drawScheduled = false;
    const batches = pending;
    pending = [];
    for (const batch of batches) take(batch);
    trimAndFollow();
    // One acknowledgement per batch drawn: the server sends more only as the page keeps up.
    for (let i = 0; i < batches.length; i++) send({ type: "ack" });
  });
}

function take(batch) {
  const dropped = $("dropped");
  dropped.textContent = batch.dropped;
  dropped.classList.toggle("nonzero", batch.dropped > 0);
  if (!batch.live && shown === null) setLive(false, null);
  if (batch.live && shown !== null) setLive(true, null);
  // Commits come in commit order and side effects in start order: draw them interleaved, by time.
  const batchItems = batch.items.slice().sort((a, b) => a.start - b.start);
  for (const item of batchItems) {
    if (item.update) {
      const known = effectsById.get(item.id);
      if (known) { Object.assign(known, item); updateRow(known); }
      continue;
    }
    received++;
    items.push(item);
    if (item.kind === "sideEffect") effectsById.set(item.id, item);
    noteFilterValue("filter-scope", scopes, item.scope || "(root)");
    noteFilterValue("filter-type", types, item.type);
    // Unchecking "follow" freezes the table (items are still kept); checking it again redraws.
    if (following() && matches(item)) appendRow(item);
  }
  $("received").textContent = received;
  if (items.length > MAX_ITEMS) {
    for (const old of items.splice(0, items.length - MAX_ITEMS)) {
      if (old.kind === "sideEffect") effectsById.delete(old.id);
    }
  }
}

function noteFilterValue(selectId, set, value) {
  if (set.has(value)) return;
  set.add(value);
  if (value === "(root)") return;
  const option = document.createElement("option");
  option.value = option.textContent = value;
  $(selectId).appendChild(option);
}

function matches(item) {
  const kind = $("filter-kind").value, scope = $("filter-scope").value, type = $("filter-type").value;
  if (kind && item.kind !== kind) return false;
  if (scope && (item.scope || "(root)") !== scope) return false;
  if (type && item.type !== type) return false;
  return true;
}

const ms = (us) => (us / 1000).toFixed(3);

function appendRow(item) {
  const row = document.createElement("tr");
  row.className = item.kind;
  row.dataset.kind = item.kind;
  row.dataset.id = item.id;
  fillRow(row, item);
  if (item.kind === "commit") {
    row.addEventListener("click", () => select(item.id));
    if (item.id === selected) row.classList.add("selected");
    if (item.id === shown) row.classList.add("shown");
  }
  row.dataset.start = item.start;
  // Usually the last row; a side effect that started before the last commits drawn goes above them.
  const body = $("timeline").tBodies[0];
  let before = null;
  for (let next = body.lastElementChild, steps = 0; next && steps < 200; next = next.previousElementSibling, steps++) {
    if (Number(next.dataset.start) <= item.start) break;
    before = next;
  }
  body.insertBefore(row, before);
  rowsByKey.set(`${item.kind}:${item.id}`, row);
}

function fillRow(row, item) {
  const outcome = item.outcome === null || item.outcome === undefined ? "running" : item.outcome;
  const cells = [
    item.kind === "commit" ? String(item.id) : `e${item.id}`,
    item.kind === "commit" ? "commit" : "side effect",
    item.type,
    item.scope || "",
    item.cause === null || item.cause === undefined ? "" : `e${item.cause}`,
    ms(item.start),
    item.duration === null || item.duration === undefined ? "" : ms(item.duration),
    outcome,
  ];
  row.replaceChildren(...cells.map((text) => {
    const cell = document.createElement("td");
    cell.textContent = text;
    return cell;
  }));
  const last = row.lastChild;
  if (outcome.startsWith("failed")) last.className = "failed";
  if (outcome === "cancelled") last.className = "cancelled";
}

function updateRow(item) {
  const row = rowsByKey.get(`${item.kind}:${item.id}`);
  if (row) fillRow(row, item);
}

const following = () => $("follow").checked;

function trimAndFollow() {
  if (!following()) return;
  const body = $("timeline").tBodies[0];
  while (body.rows.length > MAX_ROWS) {
    const row = body.rows[0];
    rowsByKey.delete(`${row.dataset.kind}:${row.dataset.id}`);
    row.remove();
  }
  const pane = $("timeline-pane");
  pane.scrollTop = pane.scrollHeight;
}

function redraw() {
  const body = $("timeline").tBodies[0];
  body.replaceChildren();
  rowsByKey.clear();
  const matching = items.filter(matches);
  for (const item of matching.slice(-MAX_ROWS)) appendRow(item);
  const pane = $("timeline-pane");
  pane.scrollTop = pane.scrollHeight;
}

function select(sequence) {
  selected = sequence;
  for (const row of document.querySelectorAll("tr.selected")) row.classList.remove("selected");
  const row = rowsByKey.get(`commit:${sequence}`);
  if (row) row.classList.add("selected");
  $("detail-title").textContent = `Commit ${sequence}`;
  $("detail-actions").hidden = false;
  $("jump-input").value = sequence;
  $("message").textContent = "";
  send({ type: "state", sequence });
}

function setLive(live, sequence) {
  if (live) {
    shown = null;
    setBadge("live", "live", "ok");
  } else {
    if (sequence !== null) shown = sequence;
    setBadge("live", shown === null ? "away from live" : `away from live: commit ${shown}`, "away");
  }
  for (const row of document.querySelectorAll("tr.shown")) row.classList.remove("shown");
  if (shown !== null) {
    const row = rowsByKey.get(`commit:${shown}`);
    if (row) row.classList.add("shown");
  }
}

function setBadge(id, text, kind) {
  const badge = $(id);
  badge.textContent = text;
  badge.className = `badge ${kind}`;
}

// MARK: state and difference

function showState(message) {
  if (message.sequence !== selected) return;
  $("state").replaceChildren(tree(message.state, "state", 0));
  const diff = $("diff");
  diff.replaceChildren();
  if (message.previous === null) {
    diff.textContent = "(the oldest state kept: no previous commit)";
    return;
  }
  const changes = [];
  difference(message.previous, message.state, "", changes);
  if (changes.length === 0) diff.textContent = "(no change)";
  for (const change of changes) {
    const line = document.createElement("div");
    line.className = change.kind;
    const before = change.kind === "added" ? "" : `${short(change.before)} → `;
    const after = change.kind === "removed" ? "(removed)" : short(change.after);
    line.textContent = `${change.path || "(state)"}: ${change.kind === "added" ? "+ " : ""}${before}${after}`;
    diff.appendChild(line);
  }
}

function short(value) {
  const text = JSON.stringify(value);
  return text.length > 120 ? text.slice(0, 117) + "…" : text;
}

const isContainer = (value) => value !== null && typeof value === "object";

// Arrays of objects that all have an "id" are compared by id (a removal is one change, not a shift of every
// element after it); other arrays, by index.
const identified = (array) => array.every((element) => isContainer(element) && "id" in element);

function differenceById(before, after, path, changes) {
  const label = (id) => `${path}[id: ${typeof id === "string" ? id : JSON.stringify(id)}]`;
  const old = new Map(before.map((element) => [JSON.stringify(element.id), element]));
  const seen = new Set();
  for (const element of after) {
    const key = JSON.stringify(element.id);
    seen.add(key);
    if (old.has(key)) difference(old.get(key), element, label(element.id), changes);
    else changes.push({ kind: "added", path: label(element.id), after: element });
  }
  for (const [key, element] of old) {
    if (!seen.has(key)) changes.push({ kind: "removed", path: label(element.id), before: element });
  }
}

function difference(before, after, path, changes) {
  if (changes.length > 500) return;
  if (Array.isArray(before) && Array.isArray(after) && (before.length || after.length)
      && identified(before) && identified(after)) {
    differenceById(before, after, path, changes);
    return;
  }
  if (isContainer(before) && isContainer(after) && Array.isArray(before) === Array.isArray(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) {
      const child = Array.isArray(after) ? `${path}[${key}]` : (path ? `${path}.${key}` : key);
      if (!(key in before)) changes.push({ kind: "added", path: child, after: after[key] });
      else if (!(key in after)) changes.push({ kind: "removed", path: child, before: before[key] });
      else difference(before[key], after[key], child, changes);
    }
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) changes.push({ kind: "changed", path, before, after });
}

function tree(value, key, depth) {
  if (!isContainer(value)) {
    const leaf = document.createElement("div");
    leaf.className = "leaf";
    leaf.append(span("key", `${key}: `), span(valueClass(value), JSON.stringify(value)));
    return leaf;
  }
  const node = document.createElement("details");
  node.open = depth < 3;
  const entries = Object.entries(value);
  const summary = document.createElement("summary");
  summary.append(span("key", `${key}`), ` ${Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}`);
  node.appendChild(summary);
  for (const [childKey, child] of entries.slice(0, 1000)) node.appendChild(tree(child, childKey, depth + 1));
  return node;
}

function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

function valueClass(value) {
  if (typeof value === "string") return "string";
  if (typeof value === "number") return "number";
  return "literal";
}

// MARK: controls

for (const id of ["filter-kind", "filter-scope", "filter-type", "follow"]) $(id).addEventListener("change", redraw);
$("travel-button").addEventListener("click", () => { if (selected !== null) send({ type: "travel", sequence: selected }); });
$("jump-button").addEventListener("click", () => {
  const sequence = Number.parseInt($("jump-input").value, 10);
  if (Number.isFinite(sequence)) send({ type: "travel", sequence });
});
$("live-button").addEventListener("click", () => send({ type: "live" }));
connect();
