// The live page of informer-demo. It polls /api/state twice a second and
// redraws: the pipeline boxes, the counters, the charts and the timeline.
// The buttons POST /api/fault/{name}. No framework: the DOM, fetch and uPlot.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const colors = ["#7e57c2", "#26a69a", "#ef6c00", "#1565c0", "#c62828"];

let charts = null;         // {events, lag}: created on the first state with chart points
let lastTimeline = "";     // the newest entry drawn, to redraw only on change
const lastCounters = {};   // counter id -> last value, to flash on change

function fmtMicros(us) {
  if (us >= 1000) return (us / 1000).toPrecision(3) + " ms";
  if (us >= 1) return us.toPrecision(3) + " µs";
  return Math.round(us * 1000) + " ns";
}

function box(title, big, extra) {
  const b = el("div", "box");
  b.append(el("div", "title", title), big);
  if (extra) b.append(extra);
  return b;
}

// pipeline draws one row per informer: server → reflector → queue → cache → lanes.
function pipeline(s) {
  const root = $("#pipeline");
  root.replaceChildren();
  for (const inf of s.informers) {
    const row = el("div", "row");
    row.dataset.informer = inf.name;
    const server = el("div", "big", s.serverRV ? "RV " + s.serverRV : "–");
    const state = el("div", "big state " + inf.state, inf.state);
    state.id = "state-" + inf.name;
    const rv = el("div", "figures", "at RV " + (inf.rv || "–") + " · watches " + inf.watches + " · relists " + inf.relists);
    const queue = el("div", "big", String(inf.queueDepth));
    queue.id = "queue-" + inf.name;
    const cache = el("div", "big", String(inf.cached));
    cache.id = "cache-" + inf.name;
    const lanes = el("div", "lanes");
    for (const h of s.handlers.filter((h) => h.informer === inf.name)) {
      const lane = el("div", "lane");
      lane.id = "lane-" + h.name;
      const bar = el("div", "bar");
      const fill = el("div", "fill");
      fill.style.width = Math.min(100, (100 * h.pending) / Math.max(1, h.maxPending)) + "%";
      bar.append(fill);
      lane.append(el("div", "", h.name), bar,
        el("div", "figures", "lag " + h.pending + " (max " + h.maxPending + ") · avg " + fmtMicros(h.meanMicros)));
      lanes.append(lane);
    }
    row.append(box("server", server), el("span", "arrow", "→"),
      box("reflector · " + inf.name, state, rv), el("span", "arrow", "→"),
      box("queue", queue), el("span", "arrow", "→"),
      box("cache", cache), el("span", "arrow", "→"), lanes);
    root.append(row);
  }
}

function counter(id, value) {
  const e = $("#" + id);
  e.textContent = String(value);
  if (lastCounters[id] !== undefined && lastCounters[id] !== value) {
    const box = e.parentElement;
    box.classList.remove("flash");
    void box.offsetWidth; // restart the animation
    box.classList.add("flash");
  }
  lastCounters[id] = value;
}

function timeline(entries) {
  const newest = entries.length ? JSON.stringify(entries[entries.length - 1]) + entries.length : "";
  if (newest === lastTimeline) return;
  lastTimeline = newest;
  const list = $("#timeline");
  list.replaceChildren();
  for (const e of entries.slice().reverse()) {
    const li = el("li");
    li.dataset.kind = e.kind;
    li.dataset.who = e.who;
    li.append(el("span", "t", e.t.toFixed(1) + " s"), el("span", "who", e.who), el("span", "kind", e.kind), el("span", "what", e.what));
    list.append(li);
  }
}

const bandWindow = 120; // seconds of history in the state bands

// stateSegments turns an informer's state entries on the timeline ("Watching",
// then "Watching → BackingOff", ...) into [from, to, state] spans.
function stateSegments(entries, who, now) {
  const changes = entries.filter((e) => e.who === who && e.kind === "state")
    .map((e) => [e.t, e.what.split(" → ").pop().split(" ")[0]]); // "Relisting (between samples)" is Relisting
  return changes.map(([t, state], i) => [t, i + 1 < changes.length ? changes[i + 1][0] : now, state]);
}

// bands draws each reflector's states over the last bandWindow seconds as
// coloured spans: a relist or a backoff is a visible mark.
function bands(s) {
  const root = $("#bands");
  root.replaceChildren();
  const from = Math.max(0, s.elapsed - bandWindow), span = Math.max(1, s.elapsed - from);
  for (const inf of s.informers) {
    const strip = el("div", "strip");
    strip.id = "band-" + inf.name;
    for (const [t0, t1, state] of stateSegments(s.timeline, inf.name, s.elapsed)) {
      const a = Math.max(t0, from), b = Math.max(t1, from);
      if (b <= a) continue;
      const seg = el("div", "seg " + state);
      seg.dataset.state = state;
      seg.style.width = (100 * (b - a)) / span + "%";
      seg.title = state + " from " + t0.toFixed(1) + " s to " + t1.toFixed(1) + " s";
      strip.append(seg);
    }
    const band = el("div", "band");
    band.append(el("span", "", inf.name), strip);
    root.append(band);
  }
}

function makeCharts(s) {
  const width = (id) => Math.max(300, $(id).clientWidth);
  const axes = [{ label: "seconds since start" }, {}];
  const scales = { x: { time: false } };
  const events = new uPlot({ width: width("#chart-events"), height: 190, axes, scales,
    series: [{}, { label: "events/s", stroke: colors[1], width: 2 }] }, [[], []], $("#chart-events"));
  const names = s.handlers.map((h) => h.name);
  const lag = new uPlot({ width: width("#chart-lag"), height: 190, axes, scales,
    series: [{}].concat(names.map((n, i) => ({ label: n, stroke: colors[i % colors.length], width: 2 }))) },
    [[]].concat(names.map(() => [])), $("#chart-lag"));
  return { events, lag, names };
}

function drawCharts(s) {
  if (!s.chart.t || s.chart.t.length === 0) return;
  if (!charts) charts = makeCharts(s);
  charts.events.setData([s.chart.t, s.chart.eventsPerSec]);
  charts.lag.setData([s.chart.t].concat(charts.names.map((n) => s.chart.lag[n] || [])));
}

function render(s) {
  $("#server").textContent = s.server + (s.synced ? "" : " (syncing)");
  $("#elapsed").textContent = s.elapsed.toFixed(0);
  $("#server-rv").textContent = s.serverRV ? String(s.serverRV) : "–";
  pipeline(s);
  let restarts = 0, relists = 0;
  for (const inf of s.informers) {
    restarts += Math.max(0, inf.watches - 1 - inf.relists); // each relist opens one watch too
    relists += inf.relists;
  }
  counter("events-per-sec", Math.round(s.eventsPerSec));
  counter("restarts", restarts);
  counter("relists", relists);
  counter("tombstones", s.tombstones);
  drawCharts(s);
  bands(s);
  timeline(s.timeline);
}

async function poll() {
  try {
    const r = await fetch("api/state", { cache: "no-store" });
    if (r.ok) render(await r.json());
  } catch (e) {
    $("#server").textContent = "the demo has stopped (" + e.message + ")";
  }
  setTimeout(poll, 500);
}

async function setupFaults() {
  const r = await fetch("api/faults");
  const { available, faults } = await r.json();
  const root = $("#fault-buttons");
  for (const f of faults) {
    const b = el("button", "", f.label);
    b.dataset.fault = f.name;
    b.title = f.expect;
    b.disabled = !available;
    b.addEventListener("click", async () => {
      const res = await fetch("api/fault/" + f.name, { method: "POST", headers: { "Content-Type": "application/json" } });
      $("#fault-note").textContent = res.ok ? f.label + ": " + f.expect : (await res.json()).error;
    });
    root.append(b);
  }
  if (!available) $("#fault-note").textContent = "Faults need the embedded fake API server: this demo is watching a real cluster, read-only.";
}

setupFaults();
poll();
