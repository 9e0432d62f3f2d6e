// The Katana inspector's page: plain JavaScript, no build step, nothing fetched from elsewhere.
// It takes the server's batches over a WebSocket, acknowledges each once it is drawn (so that a page that cannot
// keep up gets fewer batches, and the server counts what it drops), and keeps a bounded window of items.
//
// The main thread must stay free to answer a click at any rate: each frame takes at most FRAME_BUDGET_MS of
// received items (the rest waits for the next frame, and its batch is acknowledged only once taken), and the
// table holds only the rows in view (the timeline's MAX_ROWS rows are an array; spacers stand for the others).
"use strict";

const MAX_ITEMS = 20000;     // items kept in memory
const MAX_ROWS = 2000;       // rows in the timeline (drawn as they scroll into view)
const FRAME_BUDGET_MS = 8;   // time per frame spent taking received items
const TAKE_CHUNK = 200;      // items taken between two looks at the clock
const OVERSCAN = 4;          // rows drawn above and below the ones in view
const FOLLOW_DRAW_MS = 100;  // following, the table moves at most this often (nobody reads rows passing faster)

const items = [];                 // kept items in timeline order (by start): commits, side effects and gaps
const effectsById = new Map();    // side effect id -> item
const scopes = new Set();
const types = new Set();
const hiddenTypes = new Set();    // types hidden from the timeline
const filters = { kind: "", scope: "", type: "", search: "" };
let rows = [];                    // the timeline: the last MAX_ROWS kept items that pass the filters, in order
let socket = null;
let received = 0;
let dropped = 0;                  // the server's cumulative count of dropped commits, as far as drawn
let gaps = 0;                     // gap rows made (their ids)
let lastCommitStart = -Infinity;  // where the next gap goes: after the last commit taken before it
let selected = null;              // selected commit sequence (state replies are for it only)
let selectedKey = null;           // the selected row: "commit:12" or "sideEffect:3"
let shown = null;                 // commit the store shows while away from live
let isLive = true;
let canTravel = true;             // false for a recording opened from a log (read-only)
let refused = 0;                  // what the store refused since it last went away from live
let marks = 0;                    // travel marks made (their ids)
let awayMark = null;              // the mark of the last move away, while its commit is not known yet
let lastAnswer = 0;               // the number of the last answer to a move or a return (a batch older than it
                                  // read whether the store is live before that move was done)
const skipped = new Set();        // commits the page shows the states without (view-only)
let pending = [];                 // batches waiting to be drawn; the first may be taken in part
let cursor = 0;                   // items of pending[0] taken so far
let frameScheduled = false;
let rowsChanged = true;           // the rows, or an item on one, changed since the last draw
let scrollToEnd = false;          // the next draw shows the last rows (after a redraw)
let effectShownStale = false;     // the side effect in the details pane changed
let rowHeight = 0;                // measured on the first row drawn
let headerHeight = 0;
let drawnFirst = -1, drawnLast = -1;
let drawnAt = 0;                  // when the table was last drawn
let drawNow = false;              // the reader did something (scrolled, resized): draw in this frame
let ownScrollTop = -1;            // where the last draw scrolled the table to (its scroll event is not the reader's)

const $ = (id) => document.getElementById(id);
const keyOf = (item) => `${item.kind}:${item.id}`;

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
      // A new connection: what is pending was the old one's (and is not acknowledged on this one).
      items.length = 0; effectsById.clear(); rows = []; received = 0; dropped = 0; lastCommitStart = -Infinity;
      pending = []; cursor = 0; rowsChanged = true;
      canTravel = message.canTravel !== false;
      $("read-only").hidden = canTravel;
      $("travel-button").hidden = !canTravel;
      $("live-button").hidden = !canTravel;
      const token = new URLSearchParams(location.search).get("token") || "";
      $("export").hidden = !message.canExport;
      $("export").href = `session.katana.jsonl?token=${encodeURIComponent(token)}`;
      refused = 0;
      lastAnswer = 0;  // a new connection numbers its answers from 0
      isLive = message.live;
      setLive(message.live, null);
      scheduleFrame();
      break;
    case "batch":
      // Whether the store is live is applied on arrival, in order with the replies to travel and live: a batch
      // drawn later must not undo a reply that came after it.
      if (message.refused !== undefined) refused = message.refused;
      if (!(message.answers < lastAnswer)) {
        if (message.live !== isLive) setLive(message.live, null);
        else if (!isLive) showAway();
      }
      pending.push(message);
      scheduleFrame();
      break;
    case "state":
      showState(message);
      break;
    case "effect":
      showEffectPayload(message);
      break;
    case "travelled":
      lastAnswer = Math.max(lastAnswer, message.answer || 0);
      if (message.refused !== undefined) refused = message.refused;
      setLive(false, message.sequence);
      break;
    case "live":
      lastAnswer = Math.max(lastAnswer, message.answer || 0);
      if (message.refused !== undefined) refused = message.refused;
      setLive(true, null, message.reason);
      break;
    case "test":
      showTest(message);
      break;
    case "error":
      $("message").textContent = message.message;
      break;
  }
}

function scheduleFrame() {
  if (frameScheduled) return;
  frameScheduled = true;
  requestAnimationFrame(frame);
}

// One frame: take received items for at most FRAME_BUDGET_MS, draw the rows in view, acknowledge each batch
// taken in full (the server sends more only as the page keeps up), and come back next frame for the rest.
function frame() {
  frameScheduled = false;
  const begin = performance.now();
  let taken = 0;
  while (pending.length > 0 && performance.now() - begin < FRAME_BUDGET_MS) {
    if (takeSome(pending[0], TAKE_CHUNK)) {
      pending.shift();
      cursor = 0;
      taken++;
    }
  }
  trim();
  showCount("received", received);
  showCount("dropped", dropped);
  $("dropped").classList.toggle("nonzero", dropped > 0);
  if (effectShownStale) {
    effectShownStale = false;
    const effect = selectedKey && effectsById.get(Number(selectedKey.slice("sideEffect:".length)));
    if (effect && selectedKey === keyOf(effect)) showEffect(effect);
  }
  // New rows only (the reader did nothing): following, the table moves at most every FOLLOW_DRAW_MS, which
  // leaves the main thread free at high rates.
  if (drawNow || !following() || performance.now() - drawnAt >= FOLLOW_DRAW_MS) {
    drawNow = false;
    draw();
  }
  for (let i = 0; i < taken; i++) send({ type: "ack" });
  if (pending.length > 0 || rowsChanged) scheduleFrame();
}

function showCount(id, count) {
  const counter = $(id);
  const text = String(count);
  if (counter.textContent !== text) counter.textContent = text;
}

// Takes up to `count` more items of `batch`; true once all of it is taken.
function takeSome(batch, count) {
  if (batch.sorted === undefined) beginBatch(batch);
  const list = batch.sorted;
  const end = Math.min(list.length, cursor + count);
  for (; cursor < end; cursor++) take(list[cursor]);
  return cursor >= list.length;
}

function beginBatch(batch) {
  // Commits come in commit order and side effects in start order: they are drawn interleaved, by time.
  batch.sorted = batch.items.sort((a, b) => a.start - b.start);
  // Commits dropped since the last batch were the ones after the last commit taken: a gap row goes there, so
  // that the side effects of that time (sent ahead of their commits) are not shown as if nothing were missing.
  if (batch.dropped > dropped) {
    insert({ kind: "gap", id: ++gaps, count: batch.dropped - dropped, start: lastCommitStart });
    dropped = batch.dropped;
  }
}

function take(item) {
  if (item.update) {
    const known = effectsById.get(item.id);
    if (known) {
      Object.assign(known, item);
      known.version = (known.version || 0) + 1;
      known.text = undefined;
      rowsChanged = true;
      if (selectedKey === keyOf(known)) effectShownStale = true;
    }
    return;
  }
  received++;
  if (item.kind === "sideEffect") effectsById.set(item.id, item);
  else {
    if (item.start > lastCommitStart) lastCommitStart = item.start;
    if (item.cause !== null && item.cause !== undefined && selectedKey === `sideEffect:${item.cause}`) {
      effectShownStale = true;
    }
  }
  noteFilterValue("filter-scope", scopes, item.scope || "(root)");
  if (!types.has(item.type)) noteType(item.type);
  insert(item);
}

// The first index whose item starts after `start` (items with the same start keep their arrival order).
function upperBound(list, start) {
  let low = 0, high = list.length;
  if (high === 0 || list[high - 1].start <= start) return high;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle].start <= start) low = middle + 1;
    else high = middle;
  }
  return low;
}

function insertAt(list, item) {
  const at = upperBound(list, item.start);
  if (at === list.length) list.push(item);
  else list.splice(at, 0, item);
}

function insert(item) {
  insertAt(items, item);
  // Unchecking "follow" freezes the table (items are still kept); checking it again redraws.
  if (following() && matches(item)) {
    insertAt(rows, item);
    rowsChanged = true;
  }
}

function trim() {
  if (items.length > MAX_ITEMS) {
    for (const old of items.splice(0, items.length - MAX_ITEMS)) {
      if (old.kind === "sideEffect" && effectsById.get(old.id) === old) effectsById.delete(old.id);
    }
  }
  if (rows.length > MAX_ROWS) {
    rows.splice(0, rows.length - MAX_ROWS);
    rowsChanged = true;
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

// A new type: an option of the type filter, and a line with its "shown" box in the list of types.
function noteType(type) {
  noteFilterValue("filter-type", types, type);
  const box = document.createElement("input");
  box.type = "checkbox";
  box.checked = !hiddenTypes.has(type);
  box.dataset.type = type;
  const label = document.createElement("label");
  label.append(box, ` ${type}`);
  $("type-list").appendChild(label);
}

function matches(item) {
  // A gap is shown whatever the filters (it says what is missing), and so is a move in time.
  if (item.kind === "gap" || item.kind === "mark") return true;
  if (filters.kind && item.kind !== filters.kind) return false;
  if (filters.scope && (item.scope || "(root)") !== filters.scope) return false;
  if (filters.type && item.type !== filters.type) return false;
  if (hiddenTypes.size > 0 && hiddenTypes.has(item.type)) return false;
  if (filters.search) {
    if (item.text === undefined) item.text = `${item.type}\n${item.scope || ""}\n${outcomeOf(item)}`.toLowerCase();
    if (!item.text.includes(filters.search)) return false;
  }
  return true;
}

const ms = (us) => (us / 1000).toFixed(3);
const outcomeOf = (item) => (item.outcome === null || item.outcome === undefined ? "running" : item.outcome);
const following = () => $("follow").checked;

// MARK: the timeline's rows

// Draws the rows in view (or the last ones, when following), reusing the table's rows; spacers above and below
// stand for the others. Does nothing if neither the rows nor the part in view changed.
function draw() {
  const pane = $("timeline-pane");
  const height = rowHeight || 22;
  const viewHeight = pane.clientHeight;
  const toEnd = following() || scrollToEnd;
  const top = toEnd ? Math.max(0, headerHeight + rows.length * height - viewHeight) : pane.scrollTop;
  const first = Math.max(0, Math.floor(top / height) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((top + viewHeight) / height) + OVERSCAN);
  if (!rowsChanged && !scrollToEnd && first === drawnFirst && last === drawnLast) return;
  rowsChanged = false;
  drawnAt = performance.now();
  drawnFirst = first;
  drawnLast = last;
  $("spacer-top").style.height = `${first * height}px`;
  $("spacer-bottom").style.height = `${(rows.length - last) * height}px`;
  const body = $("timeline").tBodies[0];
  // Following, the rows move up by the few added: the table's rows that showed the first ones go to the end, and
  // only they are filled again.
  const firstItem = rows[first];
  for (let k = 1; k < body.children.length && k <= OVERSCAN * 4; k++) {
    if (body.children[k].item === firstItem) {
      const moved = [];
      for (let j = 0; j < k; j++) moved.push(body.children[j]);
      body.append(...moved);
      break;
    }
  }
  for (let i = first; i < last; i++) {
    let row = body.children[i - first];
    if (!row) row = body.appendChild(document.createElement("tr"));
    fillRow(row, rows[i]);
  }
  while (body.children.length > last - first) body.lastElementChild.remove();
  if (toEnd) {
    pane.scrollTop = top + height;  // past the end: the browser stops at the end
    ownScrollTop = pane.scrollTop;
  }
  scrollToEnd = false;
  if (!rowHeight && body.children.length > 0) {
    rowHeight = body.children[0].getBoundingClientRect().height;
    headerHeight = $("timeline").tHead.rows[0].getBoundingClientRect().height;
    rowsChanged = true;
    scheduleFrame();
  }
}

function rowClass(item) {
  let name = item.kind;
  if (selectedKey !== null && keyOf(item) === selectedKey) name += " selected";
  if (item.kind === "commit" && item.id === shown) name += " shown";
  if (item.kind === "commit" && skipped.has(item.id)) name += " skipped";
  return name;
}

function fillRow(row, item) {
  const name = rowClass(item);
  if (row.className !== name) row.className = name;
  if (row.item === item && row.version === item.version) return;
  row.item = item;
  row.version = item.version;
  row.dataset.kind = item.kind;
  row.dataset.id = item.id;
  if (item.kind === "gap" || item.kind === "mark") {
    const cell = row.cells.length === 1 ? row.cells[0] : document.createElement("td");
    cell.colSpan = 8;
    cell.textContent = item.kind === "gap" ? `… ${item.count.toLocaleString("en")} commits dropped …` : item.text;
    if (row.cells.length !== 1) row.replaceChildren(cell);
    return;
  }
  if (row.cells.length !== 8) {
    row.replaceChildren(...Array.from({ length: 8 }, () => document.createElement("td")));
  }
  const outcome = outcomeOf(item);
  const texts = [
    item.kind === "commit" ? String(item.id) : `e${item.id}`,
    item.kind === "commit" ? "commit" : "side effect",
    item.type,
    item.scope || "",
    item.cause === null || item.cause === undefined ? "" : `e${item.cause}`,
    ms(item.start),
    item.duration === null || item.duration === undefined ? "" : ms(item.duration),
    outcome,
  ];
  for (let i = 0; i < 8; i++) row.cells[i].textContent = texts[i];
  const last = row.cells[7];
  last.className = outcome.startsWith("failed") ? "failed" : outcome === "cancelled" ? "cancelled" : "";
  last.title = outcome;
}

// Marks the selected row and the one the store shows, among the rows drawn.
function markRows() {
  for (const row of $("timeline").tBodies[0].children) {
    if (row.item) {
      const name = rowClass(row.item);
      if (row.className !== name) row.className = name;
    }
  }
}

// Rebuilds the rows from the kept items (the filters changed, or "follow" was checked again), showing the last.
function redraw() {
  rows = [];
  for (const item of items) if (matches(item)) rows.push(item);
  if (rows.length > MAX_ROWS) rows = rows.slice(-MAX_ROWS);
  rowsChanged = true;
  scrollToEnd = true;
  draw();
}

// Scrolls the timeline to a row, if it is one (when not following: then the timeline shows the last rows).
function reveal(item) {
  if (following()) return;
  const at = upperBound(rows, item.start);
  for (let i = at - 1; i >= 0 && rows[i].start === item.start; i--) {
    if (rows[i] === item) {
      const pane = $("timeline-pane");
      pane.scrollTop = Math.max(0, i * (rowHeight || 22) - pane.clientHeight / 2);
      scheduleFrame();
      return;
    }
  }
}

// MARK: selection and the details pane

function select(sequence) {
  selected = sequence;
  selectedKey = `commit:${sequence}`;
  markRows();
  $("detail-pane").classList.remove("effect");
  $("detail-title").textContent = `Commit ${sequence}`;
  $("detail-actions").hidden = false;
  $("skip-box").checked = skipped.has(sequence);
  $("jump-input").value = sequence;
  $("message").textContent = "";
  // Until the state comes: not the previous selection's.
  $("diff").replaceChildren();
  $("state").replaceChildren();
  $("payload").replaceChildren();
  requestState();
}

// Asks for the selected commit's state (without the skipped commits, if any): view-only, the app runs on.
function requestState() {
  if (selected === null) return;
  const before = [...skipped].filter((sequence) => sequence <= selected);
  send(before.length ? { type: "state", sequence: selected, skipped: before } : { type: "state", sequence: selected });
}

function selectEffect(effect) {
  selected = null;
  selectedKey = keyOf(effect);
  markRows();
  $("detail-pane").classList.add("effect");
  $("detail-title").textContent = `Side effect e${effect.id}`;
  $("detail-actions").hidden = true;
  $("message").textContent = "";
  $("effect-payload").replaceChildren();
  showEffect(effect);
  send({ type: "effect", id: effect.id });
}

function showEffectPayload(message) {
  if (selectedKey !== `sideEffect:${message.id}`) return;
  $("effect-payload").replaceChildren(payloadView(message.payload));
}

// A commit's or a side effect's payload: its fields as a tree, or its description.
function payloadView(payload) {
  if (!payload) return document.createTextNode("(none: the state before the oldest commit kept)");
  if (payload.form === "fields") return tree(payload.value, "fields", 0);
  const text = document.createElement("div");
  text.className = "description";
  text.textContent = payload.value;
  return text;
}

// A side effect's details: what it is, how it ended (the whole failure), and the commits it dispatched that
// are kept (each selects its commit).
function showEffect(effect) {
  const fields = [
    ["type", effect.type],
    ["scope", effect.scope || "(root)"],
    ["cause", effect.cause === null || effect.cause === undefined ? "(none)" : `e${effect.cause}`],
    ["start", `${ms(effect.start)} ms`],
    ["duration", effect.duration === null || effect.duration === undefined ? "(running)" : `${ms(effect.duration)} ms`],
    ["outcome", outcomeOf(effect)],
  ];
  const list = $("effect-fields");
  list.replaceChildren();
  for (const [name, value] of fields) {
    const term = document.createElement("dt");
    term.textContent = name;
    const description = document.createElement("dd");
    description.dataset.field = name;
    const cause = effectsById.get(effect.cause);
    if (name === "cause" && cause) {
      description.appendChild(link(value, () => { selectEffect(cause); reveal(cause); }));
    } else {
      description.textContent = value;
    }
    if (name === "outcome") description.className = value.startsWith("failed") ? "failed outcome" : "outcome";
    list.append(term, description);
  }
  const caused = [];
  for (let i = upperBound(items, effect.start - 1); i < items.length; i++) {
    const item = items[i];
    if (item.kind === "commit" && item.cause === effect.id) caused.push(item);
  }
  const commits = $("effect-commits");
  commits.replaceChildren();
  if (caused.length === 0) commits.textContent = "(none kept)";
  for (const commit of caused.slice(0, 200)) {
    const line = document.createElement("li");
    line.appendChild(link(`Commit ${commit.id}: ${commit.type}`, () => { select(commit.id); reveal(commit); }));
    commits.appendChild(line);
  }
  if (caused.length > 200) commits.append(`… and ${caused.length - 200} more`);
}

function link(text, action) {
  const button = document.createElement("button");
  button.className = "link";
  button.textContent = text;
  button.addEventListener("click", action);
  return button;
}

// The store went away from live, moved again, or came back: the badge, the banner, and a mark in the timeline.
function setLive(live, sequence, reason) {
  const wasLive = isLive;
  const moved = !live && sequence !== null && sequence !== shown;
  isLive = live;
  if (live) {
    shown = null;
    setBadge("live", "live", "ok");
    $("message").textContent = "";
    $("away-banner").hidden = true;
    if (!wasLive) {
      const why = reason === "timeout" ? " (the move timed out)" : "";
      mark(`store back to live${why}: ${refused.toLocaleString("en")} dispatches refused while away`);
    }
  } else {
    if (sequence !== null) shown = sequence;
    const text = shown === null ? "store moved away from live" : `store moved to commit ${shown}`;
    if (moved && awayMark !== null) {
      // The batch that saw the store away came before the reply that says where it went: one mark.
      awayMark.text = text;
      awayMark.version = (awayMark.version || 0) + 1;
      rowsChanged = true;
      scheduleFrame();
    } else if (wasLive || moved) {
      mark(text);
    }
    awayMark = shown === null ? items.find((item) => item.kind === "mark" && item.id === marks) || null : null;
    showAway();
  }
  markRows();
}

// While away from live: what the store shows, and what it has refused so far.
function showAway() {
  const at = shown === null ? "away from live" : `away from live: commit ${shown}`;
  setBadge("live", `${at} · ${refused.toLocaleString("en")} refused`, "away");
  const banner = $("away-banner");
  banner.hidden = false;
  banner.textContent = `The store is away from live${shown === null ? "" : ` (commit ${shown})`}: the app's dispatches `
    + `are refused (${refused.toLocaleString("en")} so far). It comes back on "Back to live", when this page closes, `
    + "or after the travel timeout.";
}

// A row in the timeline, after the last commit taken, saying what happened to the store.
function mark(text) {
  insert({ kind: "mark", id: ++marks, text, start: lastCommitStart });
  scheduleFrame();
}

function setBadge(id, text, kind) {
  const badge = $(id);
  badge.textContent = text;
  badge.className = `badge ${kind}`;
}

// MARK: state and difference

function showState(message) {
  if (message.sequence !== selected) return;
  $("payload").replaceChildren(payloadView(message.payload));
  const without = message.skipped && message.skipped.length ? message.skipped : null;
  $("message").textContent = without ? `As if commit${without.length > 1 ? "s" : ""} ${without.join(", ")} had not happened.` : "";
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
  if (changes.length > 500 || before === after) return;
  if (Array.isArray(before) && Array.isArray(after) && (before.length || after.length)
      && identified(before) && identified(after)) {
    differenceById(before, after, path, changes);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    // By index, without listing the keys: a state may hold long arrays.
    const length = Math.max(before.length, after.length);
    for (let index = 0; index < length && changes.length <= 500; index++) {
      if (index >= before.length) changes.push({ kind: "added", path: `${path}[${index}]`, after: after[index] });
      else if (index >= after.length) changes.push({ kind: "removed", path: `${path}[${index}]`, before: before[index] });
      else if (before[index] !== after[index]) difference(before[index], after[index], `${path}[${index}]`, changes);
    }
    return;
  }
  if (isContainer(before) && isContainer(after) && !Array.isArray(before) && !Array.isArray(after)) {
    // The keys before, in order, then the new ones; a path is made only for a change or a container to visit
    // (an array of many small objects is many of these).
    const child = (key) => (path ? `${path}.${key}` : key);
    for (const key of Object.keys(before)) {
      if (!(key in after)) changes.push({ kind: "removed", path: child(key), before: before[key] });
      else if (before[key] !== after[key]) difference(before[key], after[key], child(key), changes);
    }
    for (const key of Object.keys(after)) {
      if (!(key in before)) changes.push({ kind: "added", path: child(key), after: after[key] });
    }
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) changes.push({ kind: "changed", path, before, after });
}

const TREE_CHUNK = 50;   // children a node shows at first, and per "more" click

// A collapsible tree of a value. A closed node builds its children when first opened, and a node shows its
// children TREE_CHUNK at a time: a large state costs little until it is looked at.
function tree(value, key, depth) {
  if (!isContainer(value)) {
    const leaf = document.createElement("div");
    leaf.className = "leaf";
    leaf.append(span("key", `${key}: `), span(valueClass(value), JSON.stringify(value)));
    return leaf;
  }
  const node = document.createElement("details");
  const isArray = Array.isArray(value);
  const keys = isArray ? null : Object.keys(value);  // an array's are its indices (not listed: it may be long)
  const count = isArray ? value.length : keys.length;
  const keyAt = (index) => (isArray ? String(index) : keys[index]);
  const summary = document.createElement("summary");
  summary.append(span("key", `${key}`), ` ${isArray ? `[${count}]` : `{${count}}`}`);
  node.appendChild(summary);
  let next = 0;
  const more = () => {
    const end = Math.min(count, next + TREE_CHUNK);
    const children = [];
    for (; next < end; next++) children.push(tree(value[keyAt(next)], keyAt(next), depth + 1));
    if (next < count) {
      const button = document.createElement("button");
      button.className = "link more";
      button.textContent = `${count - next} more`;
      button.addEventListener("click", () => { button.remove(); more(); });
      children.push(button);
    }
    node.append(...children);
  };
  if (depth < 3) {
    node.open = true;
    more();
  } else {
    node.addEventListener("toggle", more, { once: true });
  }
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

const redrawSoon = (() => {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => { scheduled = false; redraw(); });
  };
})();

for (const [id, name] of [["filter-kind", "kind"], ["filter-scope", "scope"], ["filter-type", "type"]]) {
  $(id).addEventListener("change", () => { filters[name] = $(id).value; redrawSoon(); });
}
$("follow").addEventListener("change", redrawSoon);
$("search").addEventListener("input", () => { filters.search = $("search").value.trim().toLowerCase(); redrawSoon(); });
$("type-list").addEventListener("change", (event) => {
  const type = event.target.dataset.type;
  if (type === undefined) return;
  if (event.target.checked) hiddenTypes.delete(type);
  else hiddenTypes.add(type);
  $("types-summary").textContent = hiddenTypes.size ? `types (${hiddenTypes.size} hidden)` : "types";
  redrawSoon();
});
$("timeline").tBodies[0].addEventListener("click", (event) => {
  const row = event.target.closest("tr");
  if (!row || !row.item) return;
  if (row.item.kind === "commit") select(row.item.id);
  else if (row.item.kind === "sideEffect") selectEffect(row.item);
});
$("timeline-pane").addEventListener("scroll", () => {
  const pane = $("timeline-pane");
  if (pane.scrollTop === ownScrollTop) return;
  ownScrollTop = -1;
  // Following keeps the table at its end; a reader who scrolls up stops it there, as unchecking "follow" does.
  if (following() && pane.scrollTop + pane.clientHeight < pane.scrollHeight - 3 * (rowHeight || 22)) {
    $("follow").checked = false;
    rowsChanged = true;
  }
  drawNow = true;
  scheduleFrame();
}, { passive: true });
new ResizeObserver(() => { rowsChanged = true; drawNow = true; scheduleFrame(); }).observe($("timeline-pane"));
$("travel-button").addEventListener("click", () => { if (selected !== null) send({ type: "travel", sequence: selected }); });
// Showing a commit is view-only: the page asks for its state, and the store runs on.
$("jump-button").addEventListener("click", () => {
  const sequence = Number.parseInt($("jump-input").value, 10);
  if (!Number.isFinite(sequence)) return;
  select(sequence);
  const commit = items.find((item) => item.kind === "commit" && item.id === sequence);
  if (commit) reveal(commit);
});
$("skip-box").addEventListener("change", () => {
  if (selected === null) return;
  if ($("skip-box").checked) skipped.add(selected);
  else skipped.delete(selected);
  showSkipping();
  requestState();
});
$("skip-clear").addEventListener("click", () => {
  skipped.clear();
  $("skip-box").checked = false;
  showSkipping();
  requestState();
});
$("test-from-here").addEventListener("click", () => { if (selected !== null) $("test-from").value = selected; });
$("test-to-here").addEventListener("click", () => { if (selected !== null) $("test-to").value = selected; });
$("test-button").addEventListener("click", () => {
  const from = Number.parseInt($("test-from").value, 10), to = Number.parseInt($("test-to").value, 10);
  if (!Number.isFinite(from) || !Number.isFinite(to)) {
    $("message").textContent = "Give the first and the last commit of the test.";
    return;
  }
  send({ type: "test", from, to });
});
$("test-copy").addEventListener("click", () => {
  if (navigator.clipboard) navigator.clipboard.writeText($("test-source").textContent);
});
$("live-button").addEventListener("click", () => send({ type: "live" }));
$("live-button").addEventListener("click", () => { $("message").textContent = ""; });
connect();

function showSkipping() {
  $("skipping").hidden = skipped.size === 0;
  $("skip-count").textContent = `${skipped.size} commit${skipped.size === 1 ? "" : "s"}`;
  rowsChanged = true;
  markRows();
  scheduleFrame();
}

// A generated test: shown, and offered as a file.
function showTest(message) {
  $("test-output").hidden = false;
  $("test-title").textContent = `Generated test: commits ${message.from} to ${message.to}`;
  $("test-source").textContent = message.source;
  const link = $("test-download");
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([message.source], { type: "text/x-swift" }));
  link.download = `RecordedSessionCommits${message.from}To${message.to}Test.swift`;
  $("message").textContent = "";
}
