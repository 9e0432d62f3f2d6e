"""The inspector's safety and its session tools, end to end in a real browser (Debian's headless Chromium, driven by
Playwright, as inspector_e2e.py).

    python3 inspector_session_e2e.py PATH/TO/inspector-demo ARTIFACTS_FOLDER PATH/TO/Examples/Inspector [SCRATCH_PATH]

SCRATCH_PATH, if given, is where the package's build is (`swift build --scratch-path`): the generated test is built
there, next to the rest of the build, instead of in the package's own .build folder.

1. Safe by default: the page and its events refuse a request without the token or with another one; a page served
   by another local server cannot open the WebSocket, even knowing the token; a host name that resolves to
   127.0.0.1 (DNS rebinding, mapped with Chromium's host resolver rules) is refused.
2. Looking back is view-only: selecting and showing commits never moves the store (as the store itself reports);
   a commit shows its payload, a side effect its own; skipping a commit shows the states without it.
3. Moving the store is explicit, marked in the timeline with what the store refused meanwhile; a page that closes
   while the store is away brings it back to live, and so does the travel timeout (2 s here).
4. The session downloads as a log, which `inspector-demo --open` shows read-only.
5. A range of commits becomes a Swift Testing test, which compiles and passes as generated (built and run in the
   package's InspectorDemoSessionTests target, then removed).

Every wait is bounded; the script exits non-zero on the first failure and prints "N passed".
"""

import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

from playwright.sync_api import expect, sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inspector_e2e import CHROMIUM, TIMEOUT_MS, Store  # noqa: E402


def status_of(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def serve_other_page(html):
    """Another local server (as a developer's other app would be), serving one page; returns it and its URL."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://localhost:{server.server_address[1]}/"


def check_safe_by_default(browser, binary):
    store = Store(binary)
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        url = ready["url"]
        parts = urllib.parse.urlsplit(url)
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        port = parts.port
        assert len(token) == 32, token
        # Without the token, or with another, the page is refused; its script holds nothing of the store.
        assert status_of(f"http://127.0.0.1:{port}/") == 401
        assert status_of(f"http://127.0.0.1:{port}/?token={'0' * 32}") == 401
        assert status_of(f"http://127.0.0.1:{port}/inspector.js") == 200
        assert status_of(url) == 200

        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        expect(page.locator("body")).to_contain_text("A token is required")

        # Another local server's page opens the inspector's WebSocket, with the token even: refused.
        other, other_url = serve_other_page(f"""<!doctype html><script>
          window.outcome = new Promise((resolve) => {{
            const socket = new WebSocket("ws://127.0.0.1:{port}/events?token={token}");
            socket.onopen = () => resolve("opened");
            socket.onmessage = (event) => resolve("read: " + event.data.slice(0, 40));
            socket.onerror = () => resolve("refused");
          }});
        </script>""")
        page.goto(other_url)
        assert page.evaluate("window.outcome") == "refused"
        other.shutdown()
        page.close()

        # DNS rebinding: a name that resolves to 127.0.0.1 is not the inspector's host.
        rebound = browser.new_context()
        rebound_page = rebound.new_page()
        response = rebound_page.goto(f"http://rebound.test:{port}/?token={token}")
        assert response.status == 403, response.status
        expect(rebound_page.locator("body")).to_contain_text("Loopback hosts only")
        rebound.close()
    finally:
        store.stop()


def open_page(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 800})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    return page


def check_view_only_payloads_and_skip(browser, binary):
    store = Store(binary)
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        store.wait_for(lambda e: e["event"] == "state", "its state")
        page = open_page(browser, ready["url"])
        commits = page.locator("#timeline tbody tr.commit")
        expect(commits).to_have_count(8)

        # A commit's payload: AddTodo("milk") is Codable, so its fields.
        commits.nth(1).click()
        expect(page.locator("#detail-title")).to_have_text("Commit 2")
        expect(page.locator("#payload")).to_contain_text('title: "milk"')
        # Showing a commit by number is view-only too.
        page.fill("#jump-input", "5")
        page.click("#jump-button")
        expect(page.locator("#detail-title")).to_have_text("Commit 5")
        expect(page.locator("#payload")).to_contain_text('title: "eggs"')
        expect(page.locator("#live")).to_have_text("live")

        # A side effect's payload: LoadTodos(titles: ["eggs"]) is not Encodable, so its description.
        page.locator("#timeline tbody tr.sideEffect").nth(0).click()
        expect(page.locator("#effect-payload")).to_contain_text('LoadTodos(titles: ["eggs"])')

        # Skipping commit 3 (AddTodo "bread"): commit 8's state has no bread; the row is struck through.
        commits.nth(2).click()
        page.check("#skip-box")
        expect(page.locator("#skipping")).to_contain_text("1 commit")
        expect(commits.nth(2)).to_have_class("commit selected skipped")
        commits.nth(7).click()
        expect(page.locator("#message")).to_contain_text("As if commit 3 had not happened")
        expect(page.locator("#state")).not_to_contain_text('"bread"')
        expect(page.locator("#state")).to_contain_text('"eggs"')
        page.click("#skip-clear")
        expect(page.locator("#state")).to_contain_text('"bread"')
        expect(page.locator("#skipping")).to_be_hidden()

        # None of it moved the store: the first move it reports is the explicit one.
        page.click("#travel-button")  # commit 8 selected
        first_away = store.wait_for(lambda e: e["event"] == "state", "a state after the explicit move")
        assert first_away["awayFromLive"], first_away
        expect(page.locator("#timeline tbody tr.mark")).to_have_text("store moved to commit 8")

        # The page that moved the store closes: the store comes back to live.
        page.close()
        back = store.wait_for(lambda e: e["event"] == "state", "its return to live after the page closed")
        assert not back["awayFromLive"], back
        assert back["state"]["counter"] == 3, back
    finally:
        store.stop()


def check_refused_while_away(browser, binary):
    """The looping demo goes on dispatching while the store is away: the page counts what it refused, and marks
    the move and the return in the timeline."""
    store = Store(binary, arguments=("--rate", "40"))
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        page = open_page(browser, ready["url"])
        commits = page.locator("#timeline tbody tr.commit")
        expect(commits.nth(2)).to_be_visible()
        page.uncheck("#follow")
        commits.nth(2).click()
        page.click("#travel-button")
        expect(page.locator("#away-banner")).to_be_visible()
        expect(page.locator("#live")).to_contain_text("away from live: commit")
        # The session retries every 250 ms while refused.
        page.wait_for_function(
            "() => /([1-9][0-9]*) refused/.test(document.getElementById('live').textContent)", timeout=TIMEOUT_MS)
        page.click("#live-button")
        expect(page.locator("#live")).to_have_text("live")
        page.check("#follow")
        marks = page.locator("#timeline tbody tr.mark")
        expect(marks.last).to_contain_text("store back to live")
        text = marks.last.text_content()
        refused = int(text.split(": ")[1].split(" ")[0].replace(",", ""))
        assert refused >= 1, text
        page.close()
    finally:
        store.stop()


def check_travel_timeout(browser, binary):
    """A move nobody ends (the page stays open) ends after the travel timeout: the store reports it is back, and
    the page marks why."""
    store = Store(binary, arguments=("--scripted", "--travel-timeout", "2"))
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        store.wait_for(lambda e: e["event"] == "state", "its state")
        page = open_page(browser, ready["url"])
        commits = page.locator("#timeline tbody tr.commit")
        expect(commits).to_have_count(8)
        commits.nth(1).click()
        page.click("#travel-button")
        assert store.wait_for(lambda e: e["event"] == "state", "the move")["awayFromLive"]
        back = store.wait_for(lambda e: e["event"] == "state", "the return after the timeout", timeout=30)
        assert not back["awayFromLive"], back
        expect(page.locator("#timeline tbody tr.mark").last).to_contain_text("the move timed out")
        expect(page.locator("#live")).to_have_text("live")
        page.close()
    finally:
        store.stop()


def check_export_and_open(browser, binary, artifacts):
    store = Store(binary)
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        page = open_page(browser, ready["url"])
        expect(page.locator("#timeline tbody tr.commit")).to_have_count(8)
        expect(page.locator("#export")).to_be_visible()
        with page.expect_download() as download:
            page.click("#export")
        path = os.path.join(artifacts, "session.katana.jsonl")
        download.value.save_as(path)
        page.close()
    finally:
        store.stop()
    with open(path) as log:
        lines = log.read().splitlines()
    assert json.loads(lines[0])["format"] == "katana.recording", lines[0]
    assert sum(1 for line in lines if '"commit"' in line) == 8, lines

    opened = Store(binary, arguments=("--open", path))
    try:
        ready = opened.wait_for(lambda e: e["event"] == "ready", "that it opened the log")
        page = open_page(browser, ready["url"])
        expect(page.locator("#read-only")).to_be_visible()
        commits = page.locator("#timeline tbody tr.commit")
        expect(commits).to_have_count(8)
        expect(page.locator("#timeline tbody tr.sideEffect")).to_have_count(2)
        commits.nth(3).click()
        expect(page.locator("#state")).to_contain_text('"hello"')
        expect(page.locator("#travel-button")).to_be_hidden()
        page.close()
    finally:
        opened.stop()


def check_session_becomes_a_test(browser, binary, package, scratch):
    store = Store(binary)
    generated = os.path.join(package, "Tests", "InspectorDemoSessionTests", "BrowserSession.swift")
    try:
        ready = store.wait_for(lambda e: e["event"] == "ready", "that it is ready")
        page = open_page(browser, ready["url"])
        commits = page.locator("#timeline tbody tr.commit")
        expect(commits).to_have_count(8)
        commits.nth(0).click()
        page.click("#test-from-here")
        commits.nth(2).click()
        page.click("#test-to-here")
        page.click("#test-button")
        expect(page.locator("#test-output")).to_be_visible()
        source = page.locator("#test-source").text_content()
        assert "@Test func recordedSessionCommits1To3()" in source, source
        # A range with a commit made through a scope cannot name it: the page says why.
        page.fill("#test-from", "3")
        page.fill("#test-to", "4")
        page.click("#test-button")
        expect(page.locator("#message")).to_contain_text("through a scope")
        page.close()
    finally:
        store.stop()
    with open(generated, "w") as file:
        file.write(source)
    where = ["--package-path", package] + (["--scratch-path", scratch] if scratch else [])
    try:
        subprocess.run(["swift", "build", "--build-tests"] + where, check=True)
        run = subprocess.run(
            ["swift", "test", "--skip-build"] + where + ["--filter", "recordedSessionCommits1To3"],
            capture_output=True, text=True)
        print(run.stdout[-2000:])
        assert run.returncode == 0 and "passed" in run.stdout, run.stdout + run.stderr
    finally:
        os.remove(generated)


def main():
    binary, artifacts, package = sys.argv[1], sys.argv[2], sys.argv[3]
    scratch = sys.argv[4] if len(sys.argv) > 4 else None
    os.makedirs(artifacts, exist_ok=True)
    checks = [
        ("safe by default", lambda browser: check_safe_by_default(browser, binary)),
        ("view-only, payloads, skip, a closed page returns the store", lambda browser:
            check_view_only_payloads_and_skip(browser, binary)),
        ("refused while away, marked", lambda browser: check_refused_while_away(browser, binary)),
        ("a move ends after the travel timeout", lambda browser: check_travel_timeout(browser, binary)),
        ("export, then open read-only", lambda browser: check_export_and_open(browser, binary, artifacts)),
        ("a session becomes a test", lambda browser: check_session_becomes_a_test(browser, binary, package, scratch)),
    ]
    passed = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--host-resolver-rules=MAP rebound.test 127.0.0.1"])
        try:
            for name, check in checks:
                print(f"--- {name}", flush=True)
                check(browser)
                passed += 1
        finally:
            browser.close()
            print(f"{passed} passed, {len(checks) - passed} failed")
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
