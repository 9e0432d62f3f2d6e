"""End to end in a real browser: Debian's headless Chromium, driven by Playwright (no browser download).

A store (`inspector-demo --scripted`) does a scripted session; the test checks that the page lists the items in
order, that selecting a commit shows its state and its difference to the previous one, and that a time-travel
click moves the store (read from the store's own report of its states, on the Swift side), then back to live.

    python3 inspector_e2e.py PATH/TO/inspector-demo SCREENSHOT.png [README_COPY.png [PATH/TO/todo-server]]

Then the looping demo runs under load, and the page must keep up within its bounded window (SCREENSHOT-load.png).
Following the demo asked for 5,000, 20,000 and 100,000 commits a second, the page must not block its main thread
with over 100 ms of its own work (the trace's thread time: a task can wait for a core on a shared machine) and must
answer a row click, a move and "Back to live" within 200 ms, each the best of three tries (the numbers are printed;
INSPECTOR_E2E_MEASURE_ONLY=1 prints them without failing). Then, each on a fresh demo: a side effect's details,
the first column on selection, the search and hidden types, gap rows where commits were dropped, scrolling up
while following, the page's icon.
Given a todo-server binary (Examples/TodoServer), the last part starts it with TODO_INSPECTOR_PORT on a
throwaway SQLite file, sends it a short load of HTTP requests, and checks the page follows its store
(SCREENSHOT-todo-server.png). README_COPY gets the last screenshot taken.

Every wait is bounded; the script exits non-zero on the first failure and prints "N passed, N failed".
"""

import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import expect, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
TIMEOUT_MS = 15_000
LOAD_RATE = 3_000   # commits a second in the load part
LOAD_ITEMS = 6_000  # items the page must have received under load

# The scripted session's commits, in order (see Sources/inspector-demo/Sessions.swift), and its side effects.
EXPECTED_COMMITS = ["Increment", "AddTodo", "AddTodo", "EditDraft", "AddTodo", "ToggleTodo", "Increment", "Increment"]
EXPECTED_EFFECTS = ["LoadTodos", "SyncTodos"]


class Store:
    """The demo process, and the JSON lines it prints about its store."""

    def __init__(self, binary, arguments=("--scripted",)):
        self.process = subprocess.Popen(
            [binary, *arguments, "--port", "0"], stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            line = line.strip()
            if line.startswith("{"):
                self.lines.put(json.loads(line))
            elif line.startswith("Katana inspector at "):
                self.lines.put({"event": "ready", "url": line.split()[3]})

    def wait_for(self, predicate, what, timeout=TIMEOUT_MS / 1000):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the store never reported {what}")
            try:
                event = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if predicate(event):
                return event

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


TODO_CREATES = 400  # to-dos the load creates (each then completed, one in four deleted)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TodoServer:
    """Examples/TodoServer with the inspector mounted, on a throwaway SQLite file."""

    def __init__(self, binary):
        self.folder = tempfile.mkdtemp(prefix="inspector-e2e-")
        self.port, inspector_port = free_port(), free_port()
        environment = dict(os.environ, TODO_PORT=str(self.port), TODO_INSPECTOR_PORT=str(inspector_port),
                           TODO_DATABASE=os.path.join(self.folder, "todos.sqlite"), LOG_LEVEL="warning")
        self.process = subprocess.Popen([binary], env=environment, stdout=subprocess.PIPE, text=True, bufsize=1)
        # The server prints the inspector's address, with its token, on standard output.
        self.inspector_url = None
        ready = threading.Event()

        def read():
            for line in self.process.stdout:
                if line.startswith("Katana inspector") and self.inspector_url is None:
                    self.inspector_url = line.split(" at ", 1)[1].strip()
                    ready.set()
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(TIMEOUT_MS / 1000):
            raise AssertionError("todo-server never printed the inspector's address")
        assert f":{inspector_port}/?token=" in self.inspector_url, self.inspector_url
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2).read()
                urllib.request.urlopen(self.inspector_url, timeout=2).read()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("todo-server did not start")
                time.sleep(0.1)

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def load(self, creates):
        """Creates to-dos from 8 threads, completes each, deletes one in four; returns the requests sent."""
        def one(index):
            todo = self.request("POST", "/todos", {"title": f"load {index}"})
            self.request("POST", f"/todos/{todo['id']}/complete")
            if index % 4 == 0:
                self.request("DELETE", f"/todos/{todo['id']}")
            return 3 if index % 4 == 0 else 2
        with ThreadPoolExecutor(max_workers=8) as pool:
            return sum(pool.map(one, range(creates)))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


# Installed before the page's own script (page.add_init_script): long tasks (over 50 ms) on the main thread, and the
# time from a real click (the input event's own time stamp) to the first frame painted after the page shows its
# answer: the details pane's title for a row, the "live" badge for "Back to live".
PROBE = """
window.__probe = { longTasks: [], answers: [] };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__probe.longTasks.push(entry.duration);
}).observe({ type: "longtask", buffered: true });
document.addEventListener("click", (event) => {
  if (!event.isTrusted) return;
  const t0 = event.timeStamp;
  let answered;
  const row = event.target.closest && event.target.closest("#timeline tbody tr");
  if (row && (row.dataset.kind === "commit" || row.dataset.kind === "sideEffect")) {
    const title = row.dataset.kind === "commit" ? `Commit ${row.dataset.id}` : `Side effect e${row.dataset.id}`;
    answered = () => document.getElementById("detail-title").textContent === title;
  } else if (event.target.id === "live-button") {
    answered = () => document.getElementById("live").textContent === "live";
  } else if (event.target.id === "travel-button") {
    answered = () => document.getElementById("live").textContent.startsWith("away from live: commit");
  } else {
    return;
  }
  const record = { what: row ? "row" : event.target.id === "live-button" ? "live" : "travel", latency: null };
  window.__probe.answers.push(record);
  const channel = new MessageChannel();
  // A message posted from a frame's callbacks is taken after that frame is painted.
  channel.port1.onmessage = () => { record.latency = performance.now() - t0; };
  const check = () => {
    if (answered()) channel.port2.postMessage(null);
    else if (performance.now() - t0 < 10000) requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}, true);
"""

RATES = (5_000, 20_000, 100_000)  # commits a second asked of the looping demo
FOLLOW_SECONDS = 4                 # following the demo at each rate before the clicks
WORST_LONG_TASK_MS = 100
WORST_ANSWER_MS = 200


def answered_latency(page, what):
    """Waits for the probe's answer to the last click; its latency in ms, or None if the page never answered."""
    try:
        page.wait_for_function(
            "() => { const a = window.__probe.answers; return a.length && a[a.length - 1].latency !== null }",
            timeout=11_000)
    except Exception:  # noqa: BLE001 - no answer within the probe's 10 s: reported as missed
        print(f"no answer to a click ({what}): {page.evaluate('() => window.__probe.answers.slice(-1)')}, the page "
              f"shows {page.locator('#detail-title').text_content()!r} and {page.locator('#live').text_content()!r}")
        return None
    record = page.evaluate("() => window.__probe.answers[window.__probe.answers.length - 1]")
    assert record["what"] == what, record
    return record["latency"]


def best_answer(measure, attempts):
    """The fastest of up to three measured answers from `measure` (a latency in ms, or None when a try got no answer
    to measure), in at most `attempts` tries; stops at the first within WORST_ANSWER_MS. None if none was measured."""
    measured = []
    for _ in range(attempts):
        latency = measure()
        if latency is None:
            continue
        measured.append(latency)
        if latency <= WORST_ANSWER_MS or len(measured) == 3:
            break
    if any(latency > WORST_ANSWER_MS for latency in measured):
        print(f"answers measured (ms): {', '.join(f'{latency:.0f}' for latency in measured)}")
    return min(measured, default=None)


def main_thread_tasks(trace):
    """The page's main-thread tasks in a Chromium trace (category "toplevel"): their (wall, thread) times in ms."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    return [(e["dur"] / 1000, e.get("tdur", e["dur"]) / 1000) for e in events
            if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X"
            and e.get("name") == "ThreadControllerImpl::RunTask" and "dur" in e]


def click_a_row(page, kind):
    """A real mouse click on a row of `kind` near the middle of the timeline, as it is drawn now (it may move
    before the click lands: the probe reads what was hit); the latency of the page's answer in ms."""
    box = page.evaluate("""(kind) => {
        const pane = document.getElementById('timeline-pane').getBoundingClientRect();
        const rows = [...document.querySelectorAll('#timeline tbody tr')].filter((r) => {
          const b = r.getBoundingClientRect();
          return r.dataset.kind === kind && b.top > pane.top + 30 && b.bottom < pane.bottom - 4;
        });
        if (!rows.length) return null;
        const b = rows[Math.floor(rows.length / 2)].cells[2].getBoundingClientRect();
        return { x: b.left + 5, y: b.top + b.height / 2 };
      }""", kind)
    if not box:
        state = page.evaluate("() => [document.querySelectorAll('#timeline tbody tr').length, rows.length,"
                              " document.getElementById('connection').textContent,"
                              " [...document.querySelectorAll('#timeline tbody tr')].map((r) => r.dataset.kind[0]).join('')]")
        print(f"no {kind} row in view to click: {state}")
        page.wait_for_timeout(200)
        return None
    before = page.evaluate("() => window.__probe.answers.length")
    page.mouse.click(box["x"], box["y"])
    try:
        page.wait_for_function("(n) => window.__probe.answers.length > n", arg=before, timeout=2_000)
    except Exception:  # noqa: BLE001 - the click landed on something else (a row that moved): no answer to wait for
        hit = page.evaluate("([x, y]) => { const e = document.elementFromPoint(x, y); const r = e && e.closest('tr');"
                            " return e ? `${e.tagName}.${e.className} in ${r ? r.className : '-'}` : null }",
                            [box["x"], box["y"]])
        print(f"a click on a {kind} row got no answer (there now: {hit})")
        return None
    return answered_latency(page, "row")


def check_responsive_under_any_rate(page, binary, enforce=True):
    """At each rate, following the looping demo: the worst long task, and how long a row click and "Back to live"
    take to show their answer. Prints them; fails if a long task passed WORST_LONG_TASK_MS or an answer took
    longer than WORST_ANSWER_MS (unless `enforce` is false: INSPECTOR_E2E_MEASURE_ONLY=1, to measure a page that
    does not pass)."""
    failures = []
    for rate in RATES:
        # A window of 200,000 commits (two seconds at the highest rate): travel needs the commit the page shows to
        # be kept, and the page is a fraction of a second behind (the default 10,000 hold a tenth of a second).
        store = Store(binary, ("--rate", str(rate), "--capacity", "200000"))
        try:
            ready = store.wait_for(lambda e: e["event"] == "ready", f"that the demo at {rate} is ready")
            page.goto(ready["url"])
            page.wait_for_function("() => Number(document.getElementById('received').textContent) > 1000")
            page.evaluate("() => { window.__probe.longTasks.length = 0; window.__probe.answers.length = 0; }")
            page.context.browser.start_tracing(page=page, categories=["toplevel"])
            tracing = True
            newest = "() => { for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === 'commit') " \
                "return [items[i].id, items[i].start]; return null; }"
            begin = page.evaluate(newest)
            time.sleep(FOLLOW_SECONDS)
            end = page.evaluate(newest)
            # What the demo managed (a shared machine may not reach the rate asked), from the commits the page took.
            achieved = (end[0] - begin[0]) / ((end[1] - begin[1]) / 1e6) if begin and end[1] > begin[1] else None
            # Each answer is the best of up to three measured tries (what was slow is printed): on a shared 2-core
            # machine running the demo, Chromium and this script, one try can wait for a core (a CI run measured
            # moves in 218 and 223 ms, where its other answers took 56 to 185 ms).
            rows = [best_answer(lambda kind=kind: click_a_row(page, kind), attempts=5)
                    for kind in ("commit", "sideEffect", "commit")]
            # Away from live, to the newest commit the page has (an older one may have left the recorder's window:
            # 10,000 commits, a quarter of a second at 40,000 a second), then a measured click on "Back to live".
            travels, lives = [], []
            for _ in range(5):
                # "Show commit" selects it (view-only); a measured click on "Move the store here" moves the store.
                target = page.evaluate(newest)[0]
                page.fill("#jump-input", str(target))
                page.click("#jump-button")
                expect(page.locator("#detail-title")).to_have_text(f"Commit {target}")
                # Its state on show first, as a person looks before moving the store (the window of 200,000 commits
                # keeps it meanwhile): the move's answer is then timed alone, not behind the state's.
                page.wait_for_function(
                    "() => document.getElementById('state').childElementCount > 0"
                    " || document.getElementById('message').textContent !== ''", timeout=10_000)
                box = page.locator("#travel-button").bounding_box()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                moved = answered_latency(page, "travel")
                if moved is None:
                    print(f"at {rate:,} commits/s, no travel: {page.locator('#message').text_content()!r}")
                    continue
                travels.append(moved)
                box = page.locator("#live-button").bounding_box()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                back = answered_latency(page, "live")
                if back is not None:
                    lives.append(back)
                # Best of three measured tries each, as the row clicks (a try that missed is not one).
                if len(travels) >= 3 or (min(travels) <= WORST_ANSWER_MS and lives and min(lives) <= WORST_ANSWER_MS):
                    break
            travel, live = min(travels, default=None), min(lives, default=None)
            slow = sum(1 for latency in [*travels, *lives] if latency > WORST_ANSWER_MS)
            received = int(page.locator("#received").text_content())
            dropped = int(page.locator("#dropped").text_content())
            worst = max(page.evaluate("() => window.__probe.longTasks"), default=0)
            tasks = main_thread_tasks(page.context.browser.stop_tracing())
            tracing = False
        finally:
            if tracing:
                page.context.browser.stop_tracing()
            store.stop()
        # A task counts against the page if it used the time: on a shared machine, a task that did 30 ms of work
        # can take 150 ms waiting for a core (the trace's thread time says which).
        # A fresh-clone run measured 141 ms of which 69 working: the page's own work, under the limit, stretched by
        # the demo and the browser's other processes on two cores.
        blocking = [(wall, cpu) for wall, cpu in tasks if wall > WORST_LONG_TASK_MS and cpu > WORST_LONG_TASK_MS]
        starved = [(wall, cpu) for wall, cpu in tasks if wall > WORST_LONG_TASK_MS and cpu <= WORST_LONG_TASK_MS]
        most_work = max((cpu for _, cpu in tasks), default=0)
        shown = ", ".join("missed" if r is None else f"{r:.0f} ms" for r in rows)
        print(f"at {rate:,} commits/s: worst long task {worst:.0f} ms (the most work in one task {most_work:.0f} ms"
              + "".join(f"; {wall:.0f} ms of which {cpu:.0f} ms working"
                        for wall, cpu in sorted(starved + blocking, reverse=True)[:3])
              + (f"; {len(starved + blocking)} over {WORST_LONG_TASK_MS} ms" if starved or blocking else "")
              + f"), row clicks answered in {shown}, "
              f"travel in {'missed' if travel is None else f'{travel:.0f} ms'}, "
              f"back to live in {'missed' if live is None else f'{live:.0f} ms'} "
              f"(best of {len(travels)} and {len(lives)}; {slow} tries over {WORST_ANSWER_MS} ms) "
              f"(received {received:,}, dropped {dropped:,}; the demo committed "
              f"{'?' if achieved is None else f'{achieved:,.0f}'} a second)")
        if blocking or (worst > WORST_LONG_TASK_MS and not starved):
            failures.append(f"a long task of {worst:.0f} ms at {rate}")
        for latency in [*rows, travel, live]:
            if latency is None or latency > WORST_ANSWER_MS:
                failures.append(f"an answer {'missed' if latency is None else f'in {latency:.0f} ms'} at {rate}")
    if enforce:
        assert not failures, "; ".join(failures)


def open_scripted(page, binary):
    """A fresh scripted demo, its page open with all its rows drawn; the store, to stop."""
    store = Store(binary)
    ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
    page.goto(ready["url"])
    expect(page.locator("#timeline tbody tr")).to_have_count(len(EXPECTED_COMMITS) + len(EXPECTED_EFFECTS))
    return store


def check_side_effect_details(page, binary):
    """A side-effect row selects: its fields, the whole failure, the commits it dispatched (links); selecting a
    commit then resets the pane; an error message goes on selecting another row and on going back to live."""
    store = open_scripted(page, binary)
    try:
        rows = page.locator("#timeline tbody tr")
        page.locator("#timeline tbody tr.sideEffect").nth(1).click()  # e2: SyncTodos, failed
        expect(page.locator("#detail-title")).to_have_text("Side effect e2")
        expect(page.locator("#detail-actions")).to_be_hidden()
        expect(page.locator("#diff")).to_be_hidden()
        expect(page.locator("#timeline tbody tr.selected")).to_have_count(1)
        fields = page.locator("#effect-fields")
        expect(fields.locator("dd[data-field=type]")).to_have_text("SyncTodos")
        expect(fields.locator("dd[data-field=scope]")).to_have_text("(root)")
        expect(fields.locator("dd[data-field=outcome]")).to_have_text(
            "failed: the sync server is unreachable (scripted)")
        expect(fields.locator("dd[data-field=duration]")).to_contain_text(" ms")
        expect(page.locator("#effect-commits button")).to_have_text(["Commit 8: Increment"])
        page.locator("#timeline tbody tr.sideEffect").nth(0).click()  # e1: LoadTodos, dispatched commit 5
        expect(page.locator("#detail-title")).to_have_text("Side effect e1")
        expect(page.locator("#effect-fields dd[data-field=outcome]")).to_have_text("completed")
        page.locator("#effect-commits button", has_text="Commit 5").click()
        expect(page.locator("#detail-title")).to_have_text("Commit 5")
        expect(page.locator("#detail-actions")).to_be_visible()
        expect(page.locator("#effect-details")).to_be_hidden()
        expect(page.locator("#diff")).to_contain_text("eggs")
        expect(page.locator("#timeline tbody tr.selected")).to_have_attribute("data-id", "5")
        # An error (a commit out of the window), cleared by selecting a row, then by going back to live.
        for clear in ("row", "live"):
            page.fill("#jump-input", "999999")
            page.click("#jump-button")
            expect(page.locator("#message")).to_contain_text("999999")
            if clear == "row":
                rows.nth(0).click()
            else:
                page.click("#live-button")
            expect(page.locator("#message")).to_have_text("")
    finally:
        store.stop()


def check_first_column_stays(page, binary):
    """Selecting a row (the one with the long failure, in a narrow window) does not scroll the first column out
    of view: the table is never wider than its pane."""
    store = open_scripted(page, binary)
    viewport = page.viewport_size
    try:
        page.set_viewport_size({"width": 900, "height": 600})
        for row in (page.locator("#timeline tbody tr.sideEffect").nth(1), page.locator("#timeline tbody tr").last):
            row.locator("td").nth(7).click()
            view = page.evaluate("""() => {
                const pane = document.getElementById('timeline-pane');
                const cell = document.querySelector('#timeline tbody tr.selected td');
                return { scrollLeft: pane.scrollLeft, wide: pane.scrollWidth - pane.clientWidth,
                         cell: cell.getBoundingClientRect().left - pane.getBoundingClientRect().left };
              }""")
            assert view["scrollLeft"] == 0 and view["wide"] <= 0 and 0 <= view["cell"] < 2, view
    finally:
        page.set_viewport_size(viewport)
        store.stop()


def check_search_and_hidden_types(page, binary):
    """The search (type, scope, outcome) and the list of types to hide filter the rows drawn."""
    store = open_scripted(page, binary)
    try:
        rows = page.locator("#timeline tbody tr")
        drawn = lambda: rows.evaluate_all("rows => rows.map(r => r.cells[2].textContent)")  # noqa: E731
        # Each step waits for the row it expects: the count alone is the previous step's too.
        page.fill("#search", "FAILED")  # the outcome, whatever the case
        expect(rows).to_have_count(1)
        expect(rows.first.locator("td").nth(2)).to_have_text("SyncTodos")
        page.fill("#search", "editor")  # the scope
        expect(rows.first.locator("td").nth(2)).to_have_text("EditDraft")
        expect(rows).to_have_count(1)
        page.fill("#search", "todo")  # the types
        expect(rows).to_have_count(6)
        page.fill("#search", "")
        expect(rows).to_have_count(len(EXPECTED_COMMITS) + len(EXPECTED_EFFECTS))
        page.click("#types summary")
        page.locator("#type-list input[data-type=Increment]").uncheck()
        page.locator("#type-list input[data-type=AddTodo]").uncheck()
        expect(page.locator("#types summary")).to_have_text("types (2 hidden)")
        expect(rows).to_have_count(len(EXPECTED_COMMITS) + len(EXPECTED_EFFECTS) - 6)
        assert "Increment" not in drawn() and "AddTodo" not in drawn(), drawn()
        page.fill("#search", "todo")  # both apply
        expect(rows).to_have_count(3)
        page.locator("#type-list input[data-type=Increment]").check()
        page.locator("#type-list input[data-type=AddTodo]").check()
        page.fill("#search", "")
        expect(rows).to_have_count(len(EXPECTED_COMMITS) + len(EXPECTED_EFFECTS))
        page.click("#types summary")
    finally:
        store.stop()


GAP_RATE = 20_000   # commits a second while the page is made to fall behind
STALL_MS = 1_500    # the page's main thread held this long (then longer): the recorder's 10,000 commits move on


def check_gap_rows(page, binary):
    """When the page falls behind (its main thread held, as on a slow machine) and the server drops commits, a gap
    row marks the place: after the last commit the page took, saying how many were dropped, before any side
    effect of that time."""
    store = Store(binary, ("--rate", str(GAP_RATE)))
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that the demo is ready")
        page.goto(ready["url"])
        page.wait_for_function("() => Number(document.getElementById('received').textContent) > 5000")
        for stall in (STALL_MS, 2 * STALL_MS, 4 * STALL_MS):  # longer if the demo is slower than asked
            page.evaluate("(ms) => { const t = performance.now(); while (performance.now() - t < ms); }", stall)
            try:
                page.wait_for_function("() => Number(document.getElementById('dropped').textContent) > 0",
                                       timeout=3_000)
                break
            except Exception:  # noqa: BLE001 - nothing dropped yet: hold it again
                continue
        page.uncheck("#follow")  # the rows stay put while they are checked
        # The kept items, in timeline order: each jump in commit numbers has its gap right after the commit before
        # it (or after side effects that started no later than that commit), counting the commits between.
        report = page.evaluate("""() => {
            const problems = [];
            let gaps = 0, counted = 0, previous = null, between = [];
            for (const item of items) {
              if (item.kind === 'gap') { gaps++; counted += item.count; }
              if (item.kind !== 'commit') { between.push(item); continue; }
              if (previous) {
                const found = between.filter((x) => x.kind === 'gap');
                const missing = item.id - previous.id - 1;
                if (missing === 0 && found.length) problems.push(`a gap between ${previous.id} and ${item.id}`);
                if (missing > 0 && (found.length !== 1 || found[0].count !== missing))
                  problems.push(`${found.length} gaps between ${previous.id} and ${item.id}: ${JSON.stringify(found)}`);
                const early = between.slice(0, between.indexOf(found[0])).filter((x) => x.start > previous.start);
                if (missing > 0 && early.length) problems.push(`e${early[0].id} above the gap after ${previous.id}`);
              }
              previous = item;
              between = [];
            }
            return { problems, gaps, counted, dropped: Number(document.getElementById('dropped').textContent) };
          }""")
        assert report["dropped"] > 0, f"nothing was dropped: {report}"
        assert report["gaps"] > 0 and not report["problems"], report
        assert 0 < report["counted"] <= report["dropped"], report
        # A search that matches nothing leaves the gap rows: what is missing is shown whatever the filters.
        page.fill("#search", "matches no item")
        gap_rows = page.locator("#timeline tbody tr.gap")
        expect(gap_rows.first).to_contain_text("commits dropped")
        assert gap_rows.count() == page.locator("#timeline tbody tr").count(), "rows other than gaps drawn"
        page.fill("#search", "")
        page.check("#follow")
        print(f"gap rows: {report['gaps']} in the kept items, {report['counted']:,} of {report['dropped']:,} "
              f"dropped commits")
    finally:
        store.stop()


def check_scrolling_up_stops_following(page, binary):
    """Following a busy store, scrolling the timeline up stops following there: the rows in view are drawn (the
    table draws only those), and stay put."""
    store = Store(binary, ("--rate", "5000"))
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that the demo is ready")
        page.goto(ready["url"])
        page.wait_for_function("() => Number(document.getElementById('received').textContent) > 5000")
        expect(page.locator("#follow")).to_be_checked()
        box = page.locator("#timeline-pane").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, -3000)
        expect(page.locator("#follow")).not_to_be_checked()
        in_view = """() => {
            const pane = document.getElementById('timeline-pane').getBoundingClientRect();
            const middle = document.elementFromPoint(pane.left + 20, pane.top + pane.height / 2).closest('tr');
            return middle && middle.item ? middle.dataset.kind + ':' + middle.dataset.id : null;
          }"""
        page.wait_for_timeout(300)
        shown = page.evaluate(in_view)
        assert shown, "no row drawn in the middle of the timeline after scrolling up"
        page.wait_for_timeout(500)
        assert page.evaluate(in_view) == shown, "the rows moved after following stopped"
        page.check("#follow")
        expect(page.locator("#follow")).to_be_checked()
    finally:
        store.stop()


def check_favicon(page, binary):
    """The page links its icon, an SVG file the server serves beside it (the page's Content-Security-Policy allows it)."""
    store = open_scripted(page, binary)
    try:
        href = page.evaluate("() => document.querySelector('link[rel=icon]')?.href")
        assert href and href.endswith("/favicon.svg"), href
        # Served without the token (it holds nothing of the store), as an SVG.
        with urllib.request.urlopen(href, timeout=5) as response:
            assert "svg" in response.headers.get("Content-Type", ""), response.headers
            assert b"<svg" in response.read()
    finally:
        store.stop()


def main():
    binary, screenshot = sys.argv[1], sys.argv[2]
    readme_copy = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    todo_server = sys.argv[4] if len(sys.argv) > 4 else None
    load_screenshot = screenshot.removesuffix(".png") + "-load.png"
    todo_screenshot = screenshot.removesuffix(".png") + "-todo-server.png"
    passed = 0
    store = Store(binary)
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        live_state = store.wait_for(lambda e: e["event"] == "state", "its state")["state"]
        assert live_state["counter"] == 3, live_state
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 760})
            page.add_init_script(PROBE)
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(ready["url"])

            # 1. The timeline lists the session's items, commits in commit order.
            commits = page.locator("#timeline tbody tr.commit")
            expect(commits).to_have_count(len(EXPECTED_COMMITS))
            ids = [int(x) for x in commits.evaluate_all("rows => rows.map(r => r.dataset.id)")]
            assert ids == list(range(1, len(EXPECTED_COMMITS) + 1)), ids
            types = commits.evaluate_all("rows => rows.map(r => r.cells[2].textContent)")
            assert types == EXPECTED_COMMITS, types
            effects = page.locator("#timeline tbody tr.sideEffect")
            expect(effects).to_have_count(len(EXPECTED_EFFECTS))
            assert effects.evaluate_all("rows => rows.map(r => r.cells[2].textContent)") == EXPECTED_EFFECTS
            expect(effects.nth(1).locator("td").nth(7)).to_contain_text("failed")
            expect(commits.nth(4).locator("td").nth(4)).to_have_text("e1")  # AddTodo("eggs"), caused by LoadTodos
            expect(commits.nth(3).locator("td").nth(3)).to_contain_text("editor")
            expect(page.locator("#dropped")).to_have_text("0")
            passed += 1

            # 2. Selecting a commit shows its state and the difference to the previous commit.
            commits.nth(2).click()  # commit 3: AddTodo("bread")
            expect(page.locator("#detail-title")).to_have_text("Commit 3")
            expect(page.locator("#state")).to_contain_text('"bread"')
            expect(page.locator("#diff .added")).to_contain_text("todos[1]")
            expect(page.locator("#diff")).to_contain_text('"bread"')
            passed += 1

            # 3. Filters: by scope, then by type.
            editor_scope = page.locator("#filter-scope option", has_text="editor").get_attribute("value")
            page.select_option("#filter-scope", editor_scope)
            expect(page.locator("#timeline tbody tr")).to_have_count(1)
            page.select_option("#filter-scope", "")
            page.select_option("#filter-type", "AddTodo")
            expect(page.locator("#timeline tbody tr")).to_have_count(3)
            page.select_option("#filter-type", "")
            expect(commits).to_have_count(len(EXPECTED_COMMITS))
            passed += 1

            # 4. A time-travel click moves the store (as the store itself reports), and back to live.
            commits.nth(1).click()  # commit 2: one to-do, the counter at 1
            expect(page.locator("#detail-title")).to_have_text("Commit 2")
            page.click("#travel-button")
            moved = store.wait_for(
                lambda e: e["event"] == "state" and e["awayFromLive"], "a move away from live")["state"]
            assert moved["counter"] == 1 and [t["title"] for t in moved["todos"]] == ["milk"], moved
            expect(page.locator("#live")).to_contain_text("away from live: commit 2")
            expect(page.locator("#timeline tbody tr.mark")).to_have_text("store moved to commit 2")
            commits.nth(2).click()
            expect(page.locator("#diff")).to_contain_text("bread")
            os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
            page.screenshot(path=screenshot)
            assert os.path.getsize(screenshot) > 10_000, "the screenshot is empty"
            page.click("#live-button")
            # (The recorder marks the store live once the move is committed, so the state comes first.)
            store.wait_for(lambda e: e["event"] == "state" and e["state"] == live_state, "a return to live")
            expect(page.locator("#live")).to_have_text("live")
            passed += 1
            store.stop()

            # 5. Under load (the looping demo at LOAD_RATE commits a second): the page keeps up within its bounded
            # window, says what it dropped, and still answers a click.
            store = Store(binary, ("--rate", str(LOAD_RATE)))
            ready = store.wait_for(lambda e: e["event"] == "ready", "that the loaded demo is ready")
            page.goto(ready["url"])
            page.wait_for_function(
                "(least) => Number(document.getElementById('received').textContent) > least", arg=LOAD_ITEMS)
            rows = page.locator("#timeline tbody tr").count()
            assert rows <= 2000, f"{rows} rows: the window is not bounded"
            page.uncheck("#follow")  # freezes the table, so that a row stays put to be clicked
            page.locator("#timeline tbody tr.commit").last.click()
            expect(page.locator("#state")).to_contain_text("counter")
            # Travel under load: the session's dispatches are refused meanwhile; back to live, it goes on.
            page.click("#travel-button")
            expect(page.locator("#live")).to_contain_text("away from live")
            page.click("#live-button")
            expect(page.locator("#live")).to_have_text("live")
            before = int(page.locator("#received").text_content())
            page.wait_for_function(
                "(least) => Number(document.getElementById('received').textContent) > least", arg=before + 1000)
            received = int(page.locator("#received").text_content())
            dropped = int(page.locator("#dropped").text_content())
            print(f"under load: the page received {received} items and counted {dropped} dropped commits")
            page.screenshot(path=load_screenshot)
            assert os.path.getsize(load_screenshot) > 10_000, "the screenshot under load is empty"
            if readme_copy:
                shutil.copyfile(load_screenshot, readme_copy)
            passed += 1
            store.stop()

            # 6. Responsive under any rate: no long task over 100 ms, and clicks answered within 200 ms.
            check_responsive_under_any_rate(page, binary, enforce=not os.environ.get("INSPECTOR_E2E_MEASURE_ONLY"))
            passed += 1

            # 7. Side-effect details, the first column on selection, search and hidden types, gap rows, the icon.
            check_side_effect_details(page, binary)
            check_first_column_stays(page, binary)
            check_search_and_hidden_types(page, binary)
            check_gap_rows(page, binary)
            check_scrolling_up_stops_following(page, binary)
            check_favicon(page, binary)
            passed += 1

            # 8. The example server, in development mode, under a short load.
            if todo_server:
                server = TodoServer(todo_server)
                store = server
                page.goto(server.inspector_url)
                requests = server.load(creates=TODO_CREATES)
                # Each request is a side effect (its database transaction) and the commit it sends.
                page.wait_for_function(
                    "(least) => Number(document.getElementById('received').textContent) >= least", arg=2 * requests)
                expect(page.locator("#timeline tbody tr.sideEffect").first).to_be_visible()
                page.uncheck("#follow")
                # The last commit, by number ("Show commit"): a click on its row could land on another row if a
                # redraw already under way moves the rows under the pointer.
                last_commit = page.locator("#timeline tbody tr.commit").last.get_attribute("data-id")
                page.fill("#jump-input", last_commit)
                page.click("#jump-button")
                expect(page.locator("#detail-title")).to_have_text(f"Commit {last_commit}")
                expect(page.locator("#state")).to_contain_text("sequence")
                expect(page.locator("#diff")).to_contain_text("todos")
                # The commit's payload names the HTTP request that made it; so does its side effect's, and a
                # side effect is never its own cause.
                expect(page.locator("#payload")).to_contain_text('request: "')
                own = page.locator("#timeline tbody tr.sideEffect").evaluate_all(
                    "rows => rows.filter(r => r.cells[4].textContent === 'e' + r.dataset.id).length")
                assert own == 0, f"{own} side effects name themselves as their cause"
                # A side effect's row (retried if a redraw under way moved another row under the pointer).
                for _ in range(3):
                    page.locator("#timeline tbody tr.sideEffect").last.click()
                    if page.locator("#detail-title").text_content().startswith("Side effect"):
                        break
                expect(page.locator("#detail-title")).to_contain_text("Side effect")
                expect(page.locator("#effect-payload")).to_contain_text('request: "')
                page.click("#jump-button")  # the last commit again, for the screenshot
                expect(page.locator("#payload")).to_contain_text('request: "')
                page.screenshot(path=todo_screenshot)
                assert os.path.getsize(todo_screenshot) > 10_000, "the todo-server screenshot is empty"
                if readme_copy:
                    shutil.copyfile(todo_screenshot, readme_copy)
                passed += 1
            browser.close()
    except Exception as error:  # noqa: BLE001 - reported as the failing check
        print(f"FAILED after {passed} checks: {error!r}")
        print(f"{passed} passed, 1 failed")
        return 1
    finally:
        store.stop()
    print(f"screenshots: {screenshot} ({os.path.getsize(screenshot)} bytes), {load_screenshot}"
          + (f", {todo_screenshot}" if todo_server else ""))
    print(f"{passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
