// The Tether inspector's page: polls GET /api/v1/inspection once a second while the tab is visible, and renders
// every value with textContent — nothing from a resource or a document is ever parsed as HTML.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const api = "api/v1/inspection" + (token ? "?token=" + encodeURIComponent(token) : "");
const firstCounts = new Map();   // owner type → observations when the page opened
const history = new Map();       // owner type → the last counts, oldest first
const HISTORY = 10;

function reportError(message) {
  const errors = document.getElementById("errors");
  errors.hidden = false;
  errors.textContent = (errors.textContent ? errors.textContent + "\n" : "") + message;
}
window.addEventListener("error", (event) => reportError(String(event.message)));
window.addEventListener("unhandledrejection", (event) => reportError(String(event.reason)));

function cell(row, value, options = {}) {
  const td = document.createElement("td");
  if (options.field) td.dataset.field = options.field;
  if (options.className) td.className = options.className;
  if (value instanceof Node) td.appendChild(value); else td.textContent = value === undefined || value === null ? "" : String(value);
  row.appendChild(td);
  return td;
}

function list(items) {
  const ul = document.createElement("ul");
  ul.className = "observers";
  for (const item of items) {
    const li = document.createElement("li");
    li.textContent = item.text;
    if (item.className) li.className = item.className;
    ul.appendChild(li);
  }
  return ul;
}

function yesNo(value) { return value ? "yes" : "no"; }

function owners(owners) {
  return owners.map((owner) => owner.type + (owner.isAlive ? "" : " (gone)")).join(", ");
}

function replaceRows(id, rows) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren(...rows);
}

const DEFAULT_THRESHOLD = 60;

function threshold() {
  const value = localStorage.getItem("tether.threshold");
  return value === null ? DEFAULT_THRESHOLD : Number(value);
}

const thresholdInput = document.getElementById("threshold");
thresholdInput.value = String(threshold());
thresholdInput.addEventListener("change", () => {
  if (thresholdInput.value === "") localStorage.removeItem("tether.threshold");
  else localStorage.setItem("tether.threshold", thresholdInput.value);
});

function seconds(value) { return Math.round(value) + " s"; }

function expectedCount(type) {
  const value = localStorage.getItem("tether.expected." + type);
  return value === null ? null : Number(value);
}

function renderOwners(document_) {
  const rows = [];
  for (const owner of document_.owners) {
    if (!firstCounts.has(owner.type)) firstCounts.set(owner.type, owner.observations);
    const counts = history.get(owner.type) || [];
    counts.push(owner.observations);
    if (counts.length > HISTORY) counts.shift();
    history.set(owner.type, counts);
    const growing = counts.length >= 3 && counts.every((count, index) => index === 0 || count >= counts[index - 1])
      && counts[counts.length - 1] > counts[0];
    const expected = expectedCount(owner.type);
    const row = document.createElement("tr");
    row.dataset.owner = owner.type;
    cell(row, owner.type, { field: "type" });
    cell(row, owner.observations, { field: "observations", className: "number" });
    const change = owner.observations - firstCounts.get(owner.type);
    cell(row, (change > 0 ? "+" : "") + change, { className: "number" });
    cell(row, seconds(owner.oldestSeconds), { field: "oldest", className: "number" });
    const input = document.createElement("input");
    input.className = "expected";
    input.type = "number";
    input.min = "0";
    input.value = expected === null ? "" : String(expected);
    input.addEventListener("change", () => {
      if (input.value === "") localStorage.removeItem("tether.expected." + owner.type);
      else localStorage.setItem("tether.expected." + owner.type, input.value);
    });
    cell(row, input);
    let flag = "";
    if (expected !== null && owner.observations > expected) {
      flag = owner.observations + " " + owner.type + " owners alive, " + expected + " expected";
    } else if (growing && owner.oldestSeconds > threshold()) {
      flag = "growing: " + counts.join(" → ") + "; the oldest alive " + seconds(owner.oldestSeconds)
        + ", over the " + seconds(threshold()) + " threshold";
    } else if (growing) {
      flag = "growing: " + counts.join(" → ");
    }
    cell(row, flag, { field: "flag", className: flag ? "flag" : "" });
    rows.push(row);
  }
  replaceRows("owners", rows);
  const kept = document.getElementById("kept");
  kept.replaceChildren(...document_.keptFromOutside.map((url) => {
    const li = document.createElement("li");
    li.textContent = url;
    return li;
  }));
}

function renderResources(document_) {
  const rows = [];
  for (const named of document_.services) {
    for (const resource of named.service.resources) {
      const row = document.createElement("tr");
      row.dataset.url = resource.url;
      cell(row, named.name);
      cell(row, resource.url, { field: "url" });
      cell(row, yesNo(resource.isObserved), { field: "observed" });
      cell(row, yesNo(resource.isCached), { field: "cached" });
      cell(row, yesNo(resource.isReferencedElsewhere), { field: "referenced" });
      cell(row, yesNo(resource.wouldBeReleasedByFlush), { field: "flush" });
      const data = resource.data;
      cell(row, data ? [
        data.contentType, data.bytes === undefined ? "" : data.bytes + " B", Math.round(data.ageSeconds) + " s old",
        data.etag ? "ETag " + data.etag : "", data.isFresh ? "fresh" : "stale",
      ].filter(Boolean).join(", ") : "none", { field: "data" });
      cell(row, resource.loadsInFlight, { field: "loads", className: "number" });
      cell(row, resource.lastError || "", { field: "error" });
      cell(row, list(resource.observers.map((observer) => ({
        text: (observer.flavour === "closure" ? "closure" : observer.flavour + " " + observer.observerType)
          + (observer.owners.length ? " owned by " + owners(observer.owners) : "")
          + ", " + observer.policy
          + (observer.delivery ? ", " + observer.delivery.delivered + " delivered, " + observer.delivery.coalesced
            + " coalesced, at most " + observer.delivery.heldHighWater + " held" : ""),
        className: observer.isObserving ? "" : "dead",
      }))), { field: "observers" });
      rows.push(row);
    }
  }
  replaceRows("resources", rows);
  const mutationRows = [];
  for (const named of document_.services) {
    const mutations = named.service.mutations;
    for (const [mutation, refused] of mutations.pending.map((m) => [m, false])
      .concat(mutations.failed.map((m) => [m, true]))) {
      const row = document.createElement("tr");
      row.dataset.key = mutation.key;
      if (refused) row.className = "dead";
      cell(row, named.name);
      cell(row, mutation.method);
      cell(row, mutation.url);
      cell(row, mutation.isDurable ? "yes" : "no");
      cell(row, (refused ? "refused: " : "") + mutation.state, { field: "state" });
      cell(row, seconds(mutation.ageSeconds));
      cell(row, mutation.key);
      mutationRows.push(row);
    }
  }
  replaceRows("mutations", mutationRows);
  document.getElementById("pressure").replaceChildren(...document_.services.map((named) => {
    const pressure = named.service.memoryPressure;
    const last = pressure.last;
    const li = document.createElement("li");
    li.dataset.service = named.name;
    li.textContent = named.name + ": " + pressure.events + " events, " + pressure.released + " resources released"
      + (last ? "; the last " + seconds(last.ageSeconds) + " ago: " + last.level + " from " + last.source + " ("
        + last.reason + "), " + last.released + " released" : "");
    return li;
  }));
}

function renderQueries(document_) {
  const rows = [];
  const statistics = [];
  for (const named of document_.stores) {
    const store = named.store;
    for (const query of store.liveQueries) {
      const row = document.createElement("tr");
      row.dataset.query = query.query;
      cell(row, named.name);
      cell(row, query.collection, { field: "collection" });
      cell(row, query.query, { field: "query" });
      cell(row, query.documents, { field: "documents", className: "number" });
      cell(row, query.commit + " of " + store.lastCommit, { field: "commit" });
      cell(row, [query.isHeldBack ? "held back" : "", query.isFailing ? "failing" : ""].filter(Boolean).join(", "));
      cell(row, list(query.observers.map((observer) => ({
        text: observer.kind + (observer.owners.length ? " owned by " + owners(observer.owners) : "")
          + ", " + observer.delivery.delivered + " delivered, " + observer.delivery.coalesced + " coalesced"
          + (observer.isBusy ? ", busy" : "")
          + (observer.waiting ? ", waiting: " + observer.waiting.documents + " documents ("
            + observer.waiting.bytes + " B) at commit " + observer.waiting.commit
            + (observer.waiting.ageSeconds === undefined ? "" : ", " + seconds(observer.waiting.ageSeconds) + " old")
            : "")
          + (observer.commitsBehind === undefined ? "" : ", " + observer.commitsBehind + " commits behind"),
        className: observer.isObserving ? (observer.isBusy ? "busy" : "") : "dead",
      }))), { field: "observers" });
      rows.push(row);
    }
    const s = store.statistics;
    const row = document.createElement("tr");
    cell(row, named.name);
    // Reruns by reason add up to the evaluations that ran a query again (the API has each reason).
    const reruns = Object.values(s.reruns).reduce((sum, count) => sum + count, 0);
    for (const [field, value] of [["lastCommit", store.lastCommit], ["observers", s.observers], ["queries", s.queries],
      ["evaluations", s.evaluations], ["reruns", reruns], ["incrementalUpdates", s.incrementalUpdates],
      ["deferrals", s.deferrals], ["computedAhead", s.computedAhead], ["aheadLeftToSignal", s.aheadLeftToSignal],
      ["aheadLeftWhileWriting", s.aheadLeftWhileWriting], ["quietCatchUps", s.quietCatchUps],
      ["failures", s.failures], ["retries", s.retries]]) cell(row, value, { field, className: "number" });
    statistics.push(row);
  }
  replaceRows("queries", rows);
  replaceRows("statistics", statistics);
}

async function refresh() {
  if (document.hidden) return;   // a paused tab asks nothing of the process
  try {
    const response = await fetch(api, { cache: "no-store" });
    if (!response.ok) throw new Error("the inspector answered " + response.status);
    const document_ = await response.json();
    renderOwners(document_);
    renderResources(document_);
    renderQueries(document_);
    document.getElementById("status").textContent = "Updated " + new Date(document_.takenAt * 1000).toLocaleTimeString()
      + " · API version " + document_.version;
    document.body.dataset.loaded = "true";
  } catch (error) {
    document.getElementById("status").textContent = "Not updated: " + error;
  }
}

refresh();
setInterval(refresh, 1000);
document.addEventListener("visibilitychange", refresh);
