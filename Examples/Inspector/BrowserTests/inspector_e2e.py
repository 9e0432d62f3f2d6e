"""End to end in a real browser: Debian's headless Chromium, driven by Playwright (no browser download).

A store (`inspector-demo --scripted`) does a scripted session; the test checks that the page lists the items in
order, that selecting a commit shows its state and its difference to the previous one, and that a time-travel
click moves the store (read from the store's own report of its states, on the Swift side), then back to live.

    python3 inspector_e2e.py PATH/TO/inspector-demo SCREENSHOT.png [README_COPY.png [PATH/TO/todo-server]]

Then the looping demo runs under load, and the page must keep up within its bounded window (SCREENSHOT-load.png).
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
        self.process = subprocess.Popen([binary], env=environment, stdout=subprocess.DEVNULL)
        self.inspector_url = f"http://127.0.0.1:{inspector_port}/"
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
            expect(page.locator("#live")).to_have_text("away from live: commit 2")
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

            # 6. The example server, in development mode, under a short load.
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
                page.locator("#timeline tbody tr.commit").last.click()
                expect(page.locator("#state")).to_contain_text("sequence")
                expect(page.locator("#diff")).to_contain_text("todos")
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
