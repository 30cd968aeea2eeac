// herd's web view: the batch read through /api/state and /api/events (server-sent events),
// prompts answered through /api/answer with the session's CSRF token. No build step.
"use strict";
const $ = (id) => document.getElementById(id);
let csrf = "";
let paneTask = null;
let refreshing = null;

const LABELS = { approve: "Approve", approve_always: "Approve always", deny: "Deny" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node[k] = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child ?? "");
  return node;
}

async function signIn(token) {
  const answer = await fetch("/api/login", {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }), credentials: "same-origin",
  });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(body.error || answer.statusText);
  csrf = body.csrf;
}

function showSignIn(message) {
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message || "";
}

async function refresh() {
  const answer = await fetch("/api/state", { credentials: "same-origin" });
  if (answer.status === 401) return showSignIn();
  const state = await answer.json();
  csrf = state.csrf;
  $("signin").hidden = true;
  $("app").hidden = false;
  drawPrompts(state.prompts || []);
  drawQueue(state.tasks || []);
  $("digest").textContent = (state.digest || []).join("\n");
  drawEvents(state.events || []);
  if (paneTask) drawPane();
}

function later() {
  clearTimeout(refreshing);
  refreshing = setTimeout(refresh, 150);
}

function drawPrompts(prompts) {
  const box = $("prompts");
  box.replaceChildren();
  if (!prompts.length) box.append(el("p", { class: "empty" }, "Nothing waits for you."));
  for (const p of prompts) {
    const why = p.guard ? `${p.guard.decision}: ${p.guard.reason}` : "";
    const buttons = el("div", { class: "buttons" });
    for (const option of p.options) {
      buttons.append(el("button", {
        type: "button", class: option === "deny" ? "deny" : "approve",
        "data-testid": `answer-${option}`, "data-prompt": p.prompt_id,
        onclick: () => answer(p.prompt_id, option),
      }, LABELS[option] || option));
    }
    buttons.append(el("button", { type: "button", onclick: () => openPane(p.task_id) }, "Pane"));
    box.append(el("div", { class: "prompt", "data-testid": "prompt", "data-prompt": p.prompt_id },
      el("div", { class: "task" }, `${p.task_id} · attempt ${p.attempt}`),
      el("code", {}, p.request),
      el("div", { class: "why" }, why),
      buttons));
  }
}

function took(row) {
  if (row.live) return row.live.state.replaceAll("_", " ");
  const s = row.duration_sec;
  if (s == null) return "";
  return s < 60 ? `${Math.round(s)} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

function drawQueue(tasks) {
  const body = $("queue").tBodies[0];
  body.replaceChildren();
  for (const t of tasks) {
    const status = t.live ? "running" : t.status;
    const row = el("tr", { "data-task": t.task_id, class: t.live ? "clickable" : "" },
      el("td", {}, t.task_id),
      el("td", { class: `status-${status}` }, t.live && t.live.state === "waiting_for_operator" ? "waiting" : status),
      el("td", {}, `${t.attempts}/${t.max_attempts}`),
      el("td", {}, took(t)),
      el("td", {}, t.failure_type || ""));
    if (t.live) row.onclick = () => openPane(t.task_id);
    body.append(row);
  }
  const counts = {};
  for (const t of tasks) counts[t.live ? "running" : t.status] = (counts[t.live ? "running" : t.status] || 0) + 1;
  $("counts").textContent = Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(" · ");
}

function drawEvents(events) {
  const list = $("events");
  list.replaceChildren();
  for (const line of events.slice().reverse()) {
    let text = line;
    try {
      const e = JSON.parse(line).params || JSON.parse(line);
      text = e.text || [e.task_id, e.note || e.event].filter(Boolean).join("  ");
    } catch (_) { /* shown as it came */ }
    list.append(el("li", {}, text));
  }
}

async function answer(promptId, option) {
  const note = $("answer-note");
  note.textContent = "…";
  const reply = await fetch("/api/answer", {
    method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "x-herd-csrf": csrf },
    body: JSON.stringify({ prompt_id: promptId, answer: option }),
  });
  const body = await reply.json().catch(() => ({}));
  note.textContent = reply.ok ? body.message : `refused: ${body.error || reply.statusText}`;
  note.dataset.testid = "answer-note";
  later();
}

function openPane(task) {
  paneTask = task;
  $("pane-box").hidden = false;
  $("pane-task").textContent = task;
  drawPane();
}

async function drawPane() {
  if (!paneTask) return;
  const reply = await fetch(`/api/screen/${encodeURIComponent(paneTask)}`, { credentials: "same-origin" });
  const body = await reply.json().catch(() => ({}));
  if (!reply.ok) return ($("pane").textContent = body.error || "no pane");
  if (!body.lines) return ($("pane").textContent = body.text);
  $("pane").replaceChildren(...body.lines.flatMap((runs) => [...runs.map(span), "\n"]));
}

// One run of a pane's row: its text in its colours (inverse swaps them).
function span(run) {
  const node = el("span", {}, run.text);
  let [fg, bg] = [run.fg, run.bg];
  if (run.inverse) [fg, bg] = [bg || "#111", fg || "#ddd"];
  if (fg) node.style.color = fg;
  if (bg) node.style.backgroundColor = bg;
  if (run.bold) node.style.fontWeight = "bold";
  if (run.italic) node.style.fontStyle = "italic";
  if (run.underline) node.style.textDecoration = "underline";
  return node;
}

function listen() {
  const source = new EventSource("/api/events");
  source.onopen = () => $("link").classList.add("live");
  source.onerror = () => $("link").classList.remove("live");
  source.onmessage = () => later();
}

$("pane-close").onclick = () => { paneTask = null; $("pane-box").hidden = true; };
$("signin-form").onsubmit = async (event) => {
  event.preventDefault();
  try { await signIn($("token").value.trim()); await start(); } catch (e) { showSignIn(e.message); }
};

async function start() {
  await refresh();
  if (!$("app").hidden) listen();
}

(async () => {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (token) {
    history.replaceState(null, "", location.pathname);
    try { await signIn(token); } catch (e) { return showSignIn(e.message); }
  }
  await start();
  setInterval(() => { if (paneTask) drawPane(); }, 1000);
})();
