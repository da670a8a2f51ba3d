// Sigil's operators' console: a page over the admin API (PROTOCOL.md section 11), served by the
// admin port itself under a strict Content-Security-Policy (this file is its only script; no
// inline script, no eval, Trusted Types required, so no HTML sink can be used at all).
//
// Every value comes from the API and is put in the page as text (text nodes, attribute values),
// with what a reader could not see or could mistake made visible as `sigil admin` prints it (`\n`,
// `\u{202e}`): a user ID holding HTML, a newline or a right-to-left override shows as those characters. The admin token is held in this
// page's memory only and sent as `Authorization: Bearer`; it is never stored, and never a cookie,
// so no other site can make the browser act with it.
"use strict";

(() => {
  const session = { token: null, operator: null };
  const $ = (id) => document.getElementById(id);
  const pages = ["sign-in", "devices", "device", "audit", "keys", "rollout"];
  const svgNS = "http://www.w3.org/2000/svg";

  // ---- Building the page: text only ----

  /**
   * `text` with control, format (bidirectional overrides, zero-width characters) and separator
   * characters written out (`\n`, `\u{200b}`): as `sigil admin` shows them (OperatorText).
   */
  function visible(text) {
    const named = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
    return String(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => named[c] || `\\u{${c.codePointAt(0).toString(16)}}`);
  }

  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== undefined && value !== null) node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child === undefined || child === null) continue;
      node.append(typeof child === "string" || typeof child === "number" ? visible(child) : child);
    }
    return node;
  }

  function svg(tag, attributes, ...children) {
    const node = document.createElementNS(svgNS, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    for (const child of children) node.append(child);
    return node;
  }

  /** Unix seconds as ISO 8601 UTC, or a dash. */
  function time(seconds) {
    if (seconds === undefined || seconds === null) return "—";
    return new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
  }

  function row(...cells) {
    return el("tr", {}, ...cells.map((cell) => (cell instanceof Node ? el("td", {}, cell) : el("td", {}, cell ?? "—"))));
  }

  function say(text) { $("status").textContent = visible(text || ""); }
  function fail(text) { $("error").textContent = visible(text || ""); }

  // ---- The admin API ----

  class APIError extends Error {
    constructor(status, problem) {
      super(problem && problem.detail ? `${problem.code || status}: ${problem.detail}` : `the call failed (${status})`);
      this.status = status;
    }
  }

  /** Calls the admin API; answers `{body, next}` (`next`: the path of the next page, from `Link`). */
  async function api(method, path) {
    const headers = { Authorization: "Bearer " + session.token, Accept: "application/json" };
    if (session.operator) headers["Sigil-Operator"] = session.operator;
    const response = await fetch(path, { method, headers, cache: "no-store", credentials: "omit", redirect: "error" });
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (_) { body = null; }
    if (response.status === 401) {
      signOut("The admin token was refused.");
      throw new APIError(401, body);
    }
    if (!response.ok) throw new APIError(response.status, body);
    return { body, next: nextLink(response.headers.get("Link")) };
  }

  /** The same-origin path of an RFC 8288 `rel="next"` link, if any. */
  function nextLink(header) {
    if (!header) return null;
    for (const part of header.split(",")) {
      const match = /^\s*<([^>]*)>\s*;\s*rel="?next"?\s*$/.exec(part);
      if (match && match[1].startsWith("/admin/v1/")) return match[1];
    }
    return null;
  }

  const enc = encodeURIComponent;

  function query(parameters) {
    const pairs = Object.entries(parameters).filter(([, value]) => value !== undefined && value !== null && value !== "");
    return pairs.length ? "?" + pairs.map(([name, value]) => `${enc(name)}=${enc(value)}`).join("&") : "";
  }

  // ---- Signing in and out ----

  function signOut(message) {
    session.token = null;
    session.operator = null;
    $("token").value = "";
    $("tabs").hidden = true;
    $("sign-out").hidden = true;
    fail(message);
    show("sign-in");
  }

  $("sign-in-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    fail("");
    session.token = $("token").value.trim();
    session.operator = $("operator").value.trim() || null;
    $("token").value = "";
    try {
      await api("GET", "/admin/v1/devices?limit=1");
    } catch (error) {
      if (error.status !== 401) signOut(error.message);
      return;
    }
    $("tabs").hidden = false;
    $("sign-out").hidden = false;
    if (!location.hash || location.hash === "#sign-in") location.hash = "#devices";
    else route();
  });

  $("sign-out").addEventListener("click", () => signOut(""));

  // ---- Pages ----

  function show(name) {
    for (const page of pages) $("page-" + page).hidden = page !== name;
    for (const tab of ["devices", "audit", "keys", "rollout"]) {
      const link = $("tab-" + tab);
      if (tab === name || (tab === "devices" && name === "device")) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  async function route() {
    fail("");
    say("");
    if (!session.token) { show("sign-in"); return; }
    const [page, ...rest] = location.hash.replace(/^#/, "").split("/");
    try {
      // A link of someone else's making is only ever read as an ID (and a malformed one refused).
      const argument = rest.length ? decodeURIComponent(rest.join("/")) : null;
      switch (page) {
        case "device": show("device"); await loadDevice(argument); break;
        case "audit": show("audit"); await loadAudit(); break;
        case "keys": show("keys"); await loadKeys(); break;
        case "rollout": show("rollout"); await loadRollout(); break;
        default: show("devices"); await loadDevices(); break;
      }
    } catch (error) {
      if (error.status !== 401) fail(error.message);
    }
  }

  window.addEventListener("hashchange", route);

  /**
   * A list read page by page: answers `show(items, next, append)`, which draws `items` with
   * `draw(items, append)` and keeps `next` (the answer's Link) for the button `buttonId`.
   */
  function pager(buttonId, draw) {
    const button = $(buttonId);
    let next = null;
    const show = (items, link, append) => {
      next = link;
      draw(items, append);
      button.hidden = !next;
    };
    button.addEventListener("click", async () => {
      if (!next) return;
      try {
        const page = await api("GET", next);
        show(page.body, page.next, true);
      } catch (error) { fail(error.message); }
    });
    return show;
  }

  // ---- Devices ----

  function lastUsed(device) {
    const uses = device.keys.map((key) => key.lastUsed).filter((use) => use !== undefined && use !== null);
    return uses.length ? time(Math.max(...uses)) : "never";
  }

  function deviceRow(device) {
    const link = el("a", { href: "#device/" + enc(device.deviceId) }, device.deviceId);
    const state = el("span", { class: "state-" + device.state }, device.state);
    return row(link, device.user ?? "—", state, device.attestation, String(device.keys.length), lastUsed(device));
  }

  function listDevices(devices, append) {
    const body = $("devices-table").querySelector("tbody");
    if (!append) body.replaceChildren();
    for (const device of devices) body.append(deviceRow(device));
  }

  const showDevices = pager("devices-more", listDevices);

  async function loadDevices() {
    const search = $("search").value.trim();
    if (!search) {
      const page = await api("GET", "/admin/v1/devices" + query({ limit: 50 }));
      $("devices-caption").textContent = "Devices, by device ID";
      showDevices(page.body, page.next, false);
    } else {
      // A device or key ID, or a user: every match, once.
      const [one, ofUser] = await Promise.all([
        api("GET", "/admin/v1/devices/" + enc(search)).catch((error) => {
          if (error.status === 404) return { body: null };
          throw error;
        }),
        api("GET", "/admin/v1/devices" + query({ user: search, limit: 50 })),
      ]);
      const devices = (one.body ? [one.body] : []).concat(ofUser.body.filter((d) => !one.body || d.deviceId !== one.body.deviceId));
      $("devices-caption").textContent = visible(`Devices matching “${search}”: ${devices.length}${ofUser.next ? "+" : ""}`);
      showDevices(devices, ofUser.next, false);
    }
  }

  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (location.hash !== "#devices") location.hash = "#devices";
    else route();
  });

  // ---- One device ----

  /** A confirmation box under `container`: an optional `Reason` field and a `Confirm` button. */
  function confirmBox(container, question, needsReason, action) {
    container.replaceChildren();
    const box = el("form", { class: "confirm" });
    box.append(el("span", {}, question));
    let reason = null;
    if (needsReason) {
      reason = el("input", { id: "reason", type: "text", required: "", maxlength: "512" });
      box.append(el("label", { for: "reason" }, "Reason"), reason);
    }
    const cancel = el("button", { type: "button" }, "Cancel");
    box.append(el("button", { type: "submit", class: "danger" }, "Confirm"), cancel);
    cancel.addEventListener("click", () => container.replaceChildren());
    box.addEventListener("submit", async (event) => {
      event.preventDefault();
      fail("");
      try {
        await action(reason ? reason.value.trim() : null);
        container.replaceChildren();
      } catch (error) { fail(error.message); }
    });
    container.append(box);
    (reason || box.querySelector("button")).focus();
  }

  async function loadDevice(id) {
    // A device or any of its key IDs: the trail is read for the device found.
    const device = (await api("GET", "/admin/v1/devices/" + enc(id))).body;
    const trail = (await api("GET", "/admin/v1/audit" + query({ device: device.deviceId, limit: 100 }))).body;
    showDevice(device, trail);
  }

  function showDevice(device, trail) {
    $("device-title").textContent = visible("Device " + device.deviceId);
    const facts = $("device-facts");
    facts.replaceChildren();
    const fact = (name, value) => facts.append(el("dt", {}, name), el("dd", {}, value ?? "—"));
    fact("Device", device.deviceId);
    fact("User", device.user);
    fact("State", device.state + (device.revoked ? " since " + time(device.revoked) : ""));
    fact("Registered", time(device.created));
    fact("Attestation", device.attestation);
    fact("Sealing key", device.sealingKeyId);
    fact("Certificates", device.certificates.length
      ? device.certificates.map((c) => `${c.serial} (key ${c.keyId}, until ${time(c.notAfter)})`).join(", ") : "none");

    const revoke = $("device-revoke");
    revoke.replaceChildren();
    if (device.state !== "revoked") {
      const button = el("button", { type: "button", class: "danger" }, "Revoke");
      const box = el("div");
      button.addEventListener("click", () => confirmBox(box, `Revoke ${device.deviceId} and every key of it?`, true,
        async (reason) => {
          await api("POST", `/admin/v1/devices/${enc(device.deviceId)}/revoke` + query({ reason }));
          say(`Device ${device.deviceId} revoked.`);
          await loadDevice(device.deviceId);
        }));
      revoke.append(button, box);
    }

    const keys = $("device-keys").querySelector("tbody");
    keys.replaceChildren(...device.keys.map((key) =>
      row(key.keyId, key.alg, key.state, time(key.created), key.lastUsed ? time(key.lastUsed) : "never", key.thumbprint)));
    const rows = $("device-audit").querySelector("tbody");
    rows.replaceChildren(...trail.slice().reverse().map((entry) =>
      row(time(entry.time), entry.action, entry.key, entry.user, entry.actor, entry.client, entry.reason)));
  }

  // ---- Audit ----

  function auditRows(entries, append) {
    const body = $("audit-table").querySelector("tbody");
    if (!append) body.replaceChildren();
    // Each page is oldest first; shown newest first.
    for (const entry of entries.slice().reverse()) {
      const device = entry.device ? el("a", { href: "#device/" + enc(entry.device) }, entry.device) : "—";
      body.append(row(time(entry.time), entry.action, device, entry.key, entry.user, entry.actor, entry.client, entry.reason));
    }
  }

  async function loadAudit() {
    const since = $("audit-since").value;
    const sinceSeconds = since ? Math.floor(Date.parse(since + "Z") / 1000) : null;
    const page = await api("GET", "/admin/v1/audit" + query({
      device: $("audit-device").value.trim(), user: $("audit-user").value.trim(),
      since: Number.isFinite(sinceSeconds) ? sinceSeconds : null, limit: 100,
    }));
    showAudit(page.body, page.next, false);
  }

  const showAudit = pager("audit-more", auditRows);

  $("audit-form").addEventListener("submit", (event) => { event.preventDefault(); route(); });

  // ---- Keys ----

  async function loadKeys() {
    const keys = (await api("GET", "/admin/v1/keys")).body;
    const list = $("keys-list");
    list.replaceChildren();
    for (const kind of ["response", "sealing"]) {
      const ofKind = keys.filter((key) => key.kind === kind);
      const box = el("section", { class: "key-kind", "aria-label": kind + " keys" });
      box.append(el("h3", {}, kind === "response" ? "Response keys" : "Sealing keys"));
      const table = el("table", {},
        el("thead", {}, el("tr", {}, ...["Key", "Algorithm", "State", "Current from", "Created"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, ...ofKind.map((key) => row(key.keyId, key.alg, key.state, key.activatesAt ? time(key.activatesAt) : "from the start", time(key.createdAt)))));
      const confirm = el("div");
      const rotate = el("button", { type: "button" }, "Rotate");
      const promote = el("button", { type: "button" }, "Promote");
      const act = (verb) => confirmBox(confirm,
        verb === "rotate" ? `Publish a next ${kind} key?` : `Make the next ${kind} key current now?`, false,
        async () => {
          const answer = await api("POST", `/admin/v1/keys/${kind}/${verb}`);
          const key = answer.body[0];
          await loadKeys();
          say(`${kind} key ${key ? key.keyId : ""} ${verb === "rotate" ? "published" : "promoted"}.`);
        });
      rotate.addEventListener("click", () => act("rotate"));
      promote.addEventListener("click", () => act("promote"));
      box.append(table, el("div", {}, rotate, " ", promote), confirm);
      list.append(box);
    }
  }

  // ---- Rollout ----

  function hhmm(seconds) { return new Date(seconds * 1000).toISOString().slice(11, 16); }

  function chart(route, rollout, outcomes, classes) {
    const width = 720, height = 180, left = 40, bottom = 20, top = 10;
    const plotWidth = width - left - 10, plotHeight = height - top - bottom;
    const totals = route.steps.map((step) => Object.values(step).reduce((a, b) => a + b, 0));
    const most = Math.max(1, ...totals);
    const barWidth = plotWidth / route.steps.length;
    const image = svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": visible(`Requests per ${rollout.step / 60} minute(s) under ${route.route}, by outcome`) });
    image.append(svg("line", { class: "axis", x1: left, y1: top + plotHeight, x2: width - 10, y2: top + plotHeight }));
    image.append(svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: top + plotHeight }));
    const label = (x, y, text, anchor) => {
      const node = svg("text", { x, y, "text-anchor": anchor });
      node.textContent = visible(text);
      image.append(node);
    };
    label(left - 4, top + 8, String(most), "end");
    label(left - 4, top + plotHeight, "0", "end");
    label(left, height - 4, hhmm(rollout.start), "start");
    label(width - 10, height - 4, hhmm(rollout.start + rollout.step * route.steps.length) + " UTC", "end");
    route.steps.forEach((step, index) => {
      let y = top + plotHeight;
      for (const outcome of outcomes) {
        const count = step[outcome] || 0;
        if (!count) continue;
        const h = (count / most) * plotHeight;
        y -= h;
        const bar = svg("rect", { class: classes[outcome], x: left + index * barWidth + 0.5, y,
          width: Math.max(barWidth - 1, 0.5), height: h });
        const title = svg("title");
        title.textContent = visible(`${hhmm(rollout.start + rollout.step * index)} ${outcome}: ${count}`);
        bar.append(title);
        image.append(bar);
      }
    });
    return image;
  }

  async function loadRollout() {
    const rollout = (await api("GET", "/admin/v1/rollout" + query({ window: $("rollout-window").value }))).body;
    const container = $("rollout-routes");
    container.replaceChildren();
    for (const route of rollout.routes) {
      const outcomes = Object.keys(route.totals).sort((a, b) =>
        a === "verified" ? -1 : b === "verified" ? 1 : route.totals[b] - route.totals[a] || a.localeCompare(b));
      const classes = {};
      let next = 1;
      for (const outcome of outcomes) classes[outcome] = outcome === "verified" ? "o0" : "o" + (((next++ - 1) % 7) + 1);
      const all = outcomes.reduce((sum, outcome) => sum + route.totals[outcome], 0);
      const refused = all - (route.totals.verified || 0);
      const name = route.route === "other" ? "Every other protected route" : route.route;
      const box = el("section", { class: "route", "aria-label": "Route " + route.route });
      box.append(el("h3", {}, `${name} — ${route.mode === "monitor" ? "monitored" : "enforced"}`));
      box.append(el("p", {}, route.mode === "monitor"
        ? `Enforcing would refuse ${refused} of ${all} requests.`
        : `${refused} of ${all} requests refused.`));
      box.append(chart(route, rollout, outcomes, classes));
      box.append(el("ul", { class: "legend" }, ...outcomes.map((outcome) =>
        el("li", {}, el("span", { class: "swatch " + classes[outcome] }), outcome))));
      box.append(el("table", { "aria-label": "Outcomes under " + route.route },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Outcome"), el("th", { scope: "col" }, "Requests"))),
        el("tbody", {}, ...outcomes.map((outcome) => row(outcome, String(route.totals[outcome]))))));
      container.append(box);
    }
    say(`Counted by this replica, as of ${time(rollout.serverTime)}.`);
  }

  $("rollout-form").addEventListener("submit", (event) => { event.preventDefault(); route(); });

  route();
})();
