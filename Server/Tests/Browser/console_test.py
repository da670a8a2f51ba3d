#!/usr/bin/env python3
"""Drives Sigil's operators' console in a real browser: Debian's Chromium, through Playwright
(launched with executable_path: no browser is downloaded). Called by ConsoleBrowserTests, in two
steps around requests the Swift test makes on the public port:

  console_test.py devices URL TOKEN_FILE SCREENSHOTS USER DEVICE HOSTILE_USER
      sign in, list devices (the hostile user shows as text), find DEVICE by USER, open it, revoke it
      with a reason and a confirmation.
  console_test.py pages URL TOKEN_FILE SCREENSHOTS DEVICE KEY ROUTE EXPECTED_JSON
      the audit trail filtered by DEVICE shows the revocation, and so does the device's page found
      by its KEY; the keys page rotates and promotes the response key; the rollout page counts,
      under ROUTE, the outcomes EXPECTED_JSON gives.

Prints what it saw as one JSON line; exits non-zero (with the reason on stderr) on any failure, a
Content-Security-Policy violation or a page error included. A screenshot of each page is saved in
SCREENSHOTS.
"""

import json
import os
import sys

from playwright.sync_api import expect, sync_playwright

CHROMIUM = next(
    (path for path in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if os.path.exists(path)),
    None,
)


def main() -> int:
    step, url, token_file, shots = sys.argv[1:5]
    rest = sys.argv[5:]
    with open(token_file, encoding="utf-8") as handle:
        token = handle.read().strip()
    os.makedirs(shots, exist_ok=True)
    problems = []
    seen = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        # The admin port's certificate is the test server's own; the console itself is what is tested.
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        # A policy violation is reported on the console; a refused call (a search's 404) is not a problem.
        page.on(
            "console",
            lambda message: message.type == "error"
            and not message.text.startswith("Failed to load resource")
            and problems.append(message.text),
        )
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.set_default_timeout(15_000)

        page.goto(url + "/")
        csp = page.evaluate("() => document.querySelector('meta[http-equiv]') === null")
        seen["noMetaPolicy"] = csp
        page.screenshot(path=os.path.join(shots, f"{step}-0-sign-in.png"), full_page=True)
        page.get_by_label("Admin token").fill(token)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("link", name="Devices")).to_be_visible()
        # The token is in the page's memory only: no cookie, nothing stored.
        seen["cookies"] = len(context.cookies())
        seen["stored"] = page.evaluate("() => localStorage.length + sessionStorage.length")
        if seen["cookies"] or seen["stored"]:
            problems.append("the token left the page's memory")

        if step == "devices":
            user, device, hostile = rest
            devices_page(page, shots, user, device, hostile, seen)
        else:
            device, key, route, expected = rest
            other_pages(page, shots, device, key, route, json.loads(expected), seen)
        browser.close()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(json.dumps(seen))
    return 0


def devices_page(page, shots, user, device, hostile, seen):
    table = page.locator("#devices-table")
    expect(table.get_by_role("link", name=device)).to_be_visible()
    # A page of 50, then the next by the answer's Link.
    expect(table.locator("tbody tr")).to_have_count(50)
    page.get_by_role("button", name="More devices").click()
    expect(table.locator("tbody tr")).to_have_count(58)
    expect(page.get_by_role("button", name="More devices")).to_be_hidden()
    # A user ID holding HTML and a newline is shown as those characters, never as markup.
    cell = table.locator("td", has_text="onerror")
    expect(cell).to_have_count(1)
    seen["hostileText"] = cell.text_content()
    if seen["hostileText"] != hostile:
        raise SystemExit(f"the hostile user shows as {seen['hostileText']!r}")
    if page.locator("#devices-table img").count() != 0 or page.title() == "pwned":
        raise SystemExit("the hostile user became markup")
    page.screenshot(path=os.path.join(shots, "devices-1-list.png"), full_page=True)

    page.get_by_label("Search").fill(user)
    page.get_by_role("button", name="Find").click()
    expect(page.locator("#devices-caption")).to_contain_text("matching")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(1)
    page.screenshot(path=os.path.join(shots, "devices-2-search.png"), full_page=True)
    table.get_by_role("link", name=device).click()

    expect(page.get_by_role("heading", name=f"Device {device}")).to_be_visible()
    expect(page.locator("#device-keys tbody tr")).to_have_count(1)
    page.screenshot(path=os.path.join(shots, "devices-3-device.png"), full_page=True)
    page.get_by_role("button", name="Revoke").click()
    page.get_by_label("Reason").fill("lost phone <b>not bold</b>")
    page.screenshot(path=os.path.join(shots, "devices-4-confirm.png"), full_page=True)
    page.get_by_role("button", name="Confirm").click()
    expect(page.locator("#device-facts")).to_contain_text("revoked since")
    expect(page.get_by_role("button", name="Revoke")).to_have_count(0)
    expect(page.locator("#device-audit")).to_contain_text("lost phone <b>not bold</b>")
    seen["revoked"] = device
    page.screenshot(path=os.path.join(shots, "devices-5-revoked.png"), full_page=True)


def other_pages(page, shots, device, key, route, expected, seen):
    page.get_by_role("link", name="Audit").click()
    page.locator("#audit-form").get_by_label("Device", exact=True).fill(device)
    page.get_by_role("button", name="Filter").click()
    audit = page.locator("#audit-table")
    expect(audit.locator("tbody tr", has_text="revoked")).to_have_count(1)
    expect(audit).to_contain_text("lost phone <b>not bold</b>")
    seen["auditRows"] = audit.locator("tbody tr").count()
    page.screenshot(path=os.path.join(shots, "pages-1-audit.png"), full_page=True)

    # A link naming one of the device's keys opens the device, with the device's own trail.
    page.evaluate("(key) => { location.hash = '#device/' + encodeURIComponent(key); }", key)
    expect(page.get_by_role("heading", name=f"Device {device}")).to_be_visible()
    expect(page.locator("#device-audit tbody tr", has_text="revoked")).to_have_count(1)

    page.get_by_role("link", name="Keys").click()
    response_keys = page.get_by_role("region", name="response keys")
    expect(response_keys.locator("tbody tr")).to_have_count(1)
    response_keys.get_by_role("button", name="Rotate").click()
    response_keys.get_by_role("button", name="Confirm").click()
    expect(response_keys.locator("tbody tr", has_text="next")).to_have_count(1)
    page.screenshot(path=os.path.join(shots, "pages-2-keys-rotated.png"), full_page=True)
    response_keys.get_by_role("button", name="Promote").click()
    response_keys.get_by_role("button", name="Confirm").click()
    expect(response_keys.locator("tbody tr", has_text="previous")).to_have_count(1)
    seen["keyStates"] = response_keys.locator("tbody tr td:nth-child(3)").all_text_contents()
    page.screenshot(path=os.path.join(shots, "pages-3-keys-promoted.png"), full_page=True)

    page.get_by_role("link", name="Rollout").click()
    region = page.get_by_role("region", name=f"Route {route}")
    expect(region).to_be_visible()
    counts = {}
    for cells in region.get_by_role("table").locator("tbody tr").all():
        outcome, number = cells.locator("td").all_text_contents()
        counts[outcome] = int(number)
    seen["rollout"] = counts
    if counts != expected:
        raise SystemExit(f"the rollout counts {counts}, not {expected}")
    bars = region.locator("svg rect").count()
    seen["bars"] = bars
    if bars == 0:
        raise SystemExit("the rollout chart drew no bar")
    page.screenshot(path=os.path.join(shots, "pages-4-rollout.png"), full_page=True)
    page.get_by_label("Window").select_option("day")
    page.get_by_role("button", name="Refresh").click()
    expect(region.locator("svg rect").first).to_be_visible()
    page.screenshot(path=os.path.join(shots, "pages-5-rollout-day.png"), full_page=True)


if __name__ == "__main__":
    sys.exit(main())
