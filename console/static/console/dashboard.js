// Live crawler dashboard: renders the SSE status stream, drives the control API,
// and keeps the backlog lists fresh. Plain JS, no build step.
(function () {
  "use strict";

  var root = document.getElementById("crawler-dashboard");
  if (!root) return;
  var urls = root.dataset;

  // After this many consecutive stream errors, ask the one-shot status endpoint
  // why: a 401/403 means the session is gone and the user must log in again.
  var PROBE_AFTER_ERRORS = 5;
  var RECONNECT_BASE_MS = 500;
  var RECONNECT_MAX_MS = 5000;
  var LIST_REFRESH_DEBOUNCE_MS = 500;
  var SEARCH_DEBOUNCE_MS = 300;

  // --- small helpers -------------------------------------------------------------

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "className") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  // Controls exist only for operators (the page leaves them out for read-only staff).
  function bind(node, event, handler) { if (node) node.addEventListener(event, handler); }

  function cell(text) { return el("td", { text: text == null ? "" : String(text) }); }

  function fill(tbody, rows, emptyText, columns) {
    tbody.replaceChildren();
    if (!rows.length) {
      tbody.appendChild(el("tr", { className: "cd-empty" }, [el("td", { colspan: String(columns), text: emptyText })]));
      return;
    }
    rows.forEach(function (row) { tbody.appendChild(row); });
  }

  function when(iso) {
    if (!iso) return "—";
    var date = new Date(iso);
    return isNaN(date) ? String(iso) : date.toLocaleString();
  }

  function debounce(fn, ms) {
    var timer = null;
    return function () {
      var args = arguments;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(null, args); }, ms);
    };
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function goToLogin() { window.location.assign(urls.loginUrl); }

  function errorText(body, fallback) {
    if (!body) return fallback;
    if (typeof body.detail === "string") return body.detail;
    var parts = [];
    Object.keys(body).forEach(function (field) {
      var value = body[field];
      parts.push(field + ": " + (Array.isArray(value) ? value.join(" ") : String(value)));
    });
    return parts.length ? parts.join("; ") : fallback;
  }

  // Every API call: same-origin cookies, CSRF header on mutations, JSON both
  // ways; a lost session sends the user to log in instead of failing quietly.
  function api(url, options) {
    options = options || {};
    var headers = { Accept: "application/json" };
    var init = { method: options.method || "GET", credentials: "same-origin", headers: headers, signal: options.signal };
    if (init.method !== "GET") {
      headers["Content-Type"] = "application/json";
      headers["X-CSRFToken"] = csrfToken();
      init.body = JSON.stringify(options.body || {});
    }
    return fetch(url, init).then(function (response) {
      if (response.status === 401) { goToLogin(); throw new Error("not logged in"); }
      return response.json().catch(function () { return null; }).then(function (body) {
        return { ok: response.ok, status: response.status, body: body };
      });
    });
  }

  function showResult(text, isError) {
    var node = $("cd-control-result");
    node.textContent = text;
    node.classList.toggle("cd-error", !!isError);
  }

  // --- status rendering --------------------------------------------------------------

  var PHASE_LABELS = {
    idle: "Idle",
    walking_list: "Walking the catalog list",
    fetching_metadata: "Fetching metadata",
    cover_backfill: "Backfilling covers",
    reconciling: "Reconciling",
    analysing: "Analysing pages",
  };

  function setProgress(bar, fraction, label) {
    var fill = bar.querySelector(".cd-progress-fill");
    if (fraction == null) {
      bar.classList.add("cd-indeterminate");
      bar.removeAttribute("aria-valuenow");
      fill.style.width = "";
    } else {
      var pct = Math.max(0, Math.min(100, Math.round(fraction * 100)));
      bar.classList.remove("cd-indeterminate");
      bar.setAttribute("aria-valuenow", String(pct));
      fill.style.width = pct + "%";
    }
    if (label) bar.setAttribute("aria-valuetext", label);
  }

  function renderPhase(phase) {
    phase = phase || { state: "idle" };
    var label = $("cd-phase");
    label.textContent = PHASE_LABELS[phase.state] || phase.state;
    label.dataset.phase = phase.state;
    var detail = "";
    var fraction = null;
    if (phase.state === "idle") {
      detail = phase.next_fire ? "Next pass " + when(phase.next_fire) : "No pass scheduled";
      fraction = 0;
    } else if (phase.state === "fetching_metadata") {
      detail = (phase.title || "") + " — " + phase.index + (phase.total ? " of " + phase.total : "");
      fraction = phase.total ? phase.index / phase.total : null;
    } else if (phase.state === "cover_backfill") {
      detail = "Cover " + phase.index + " of " + phase.total;
      fraction = phase.total ? phase.index / phase.total : null;
    } else if (phase.state === "reconciling") {
      detail = phase.walked + " walked, " + phase.enqueued + " missing enqueued";
    }
    $("cd-phase-detail").textContent = detail;
    setProgress($("cd-phase-progress"), fraction, detail || label.textContent);
  }

  function renderFlags(status) {
    var flags = [];
    (status.database_unavailable || []).forEach(function (outage) {
      flags.push(["cd-pill-bad", "Database unavailable since " + when(outage.since) + " (worker " + outage.worker + ", retrying)"]);
    });
    (status.session_expired || []).forEach(function (source) {
      flags.push(["cd-pill-bad", "Session expired: " + source]);
    });
    (status.challenges || []).forEach(function (c) {
      var text = "Challenge " + c.source_id + ": " + c.passes + " pass" + (c.passes === 1 ? "" : "es");
      if (c.last_pass_at) {
        text += ", last " + when(c.last_pass_at) + " via the " + c.via + ", cookie " +
          (c.valid ? (c.expires_at ? "until " + when(c.expires_at) : "until the next challenge") : "expired");
      }
      if (c.pass_in_flight) text += ", passing now";
      var failedLast = c.last_failure && (!c.last_pass_at || c.last_failure_at > c.last_pass_at);
      if (failedLast) text += "; last failure " + when(c.last_failure_at) + ": " + c.last_failure;
      flags.push([failedLast ? "cd-pill-bad" : "cd-pill-info", text]);
    });
    (status.cooling_down || []).forEach(function (cooling) {
      flags.push(["cd-pill-wait", "Cooling down: " + cooling.source_id + " until " + when(cooling.until)]);
    });
    if (status.storage && status.storage.downloads_paused) {
      flags.push(["cd-pill-bad", "Page downloads paused: " + status.storage.reason]);
    }
    if (status.circuit && status.circuit.open) {
      flags.push(["cd-pill-bad", "Circuit open until " + when(status.circuit.open_until)]);
    }
    Object.keys(status.browser || {}).forEach(function (worker) {
      var state = status.browser[worker];
      flags.push(["cd-pill-info", "Browser " + worker + ": " + (typeof state === "string" ? state : JSON.stringify(state))]);
    });
    var live = (status.workers || []).filter(function (w) { return w.state === "live"; }).length;
    flags.push([live ? "cd-pill-ok" : "cd-pill-wait", live + " live worker" + (live === 1 ? "" : "s")]);
    flags.push(["cd-pill-info", (status.busy || 0) + " busy / " + (status.worker_count || 0) + " chapter slots"]);
    $("cd-flags").replaceChildren.apply($("cd-flags"), flags.map(function (f) {
      return el("li", { className: "cd-pill " + f[0], text: f[1] });
    }));
  }

  function renderChapters(status) {
    var chapters = status.active_chapters || [];
    $("cd-busy").textContent = "(" + chapters.length + ")";
    var list = $("cd-active-chapters");
    list.replaceChildren();
    if (!chapters.length) list.appendChild(el("li", { className: "cd-muted", text: "No chapter downloading." }));
    chapters.forEach(function (c) {
      var label = c.manga_title + " — " + (c.chapter_label || "chapter " + c.chapter_number);
      var pages = c.pages_total != null ? c.pages_done + " / " + c.pages_total + " pages" : c.pages_done + " pages";
      var bar = el("div", { className: "cd-progress cd-progress-small", role: "progressbar", "aria-label": label + " page progress", "aria-valuemin": "0", "aria-valuemax": "100" }, [el("div", { className: "cd-progress-fill" })]);
      setProgress(bar, c.pages_total ? c.pages_done / c.pages_total : null, pages);
      list.appendChild(el("li", { "data-chapter-id": c.chapter_id }, [
        el("span", { className: "cd-chapter-title", text: label }),
        el("span", { className: "cd-chapter-pages", text: pages }),
        bar,
      ]));
    });
    var cover = status.current_cover;
    $("cd-cover").textContent = cover ? "Fetching cover: " + cover.manga_title : "";
  }

  function renderQueue(queue) {
    var rows = Object.keys(queue || {}).sort().map(function (kind) {
      var c = queue[kind];
      // Groups over the exact-count bound are the planner's estimate: marked "~".
      var shown = function (state) { return ((c.estimated || []).indexOf(state) >= 0 ? "~" : "") + c[state]; };
      var row = el("tr", { "data-kind": kind }, [el("th", { scope: "row", text: kind }), cell(shown("pending")), cell(shown("running")), cell(shown("dead"))]);
      if (c.dead) row.classList.add("cd-has-dead");
      return row;
    });
    fill($("cd-queue").tBodies[0], rows, "No queue data.", 4);
  }

  function bytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + units[i];
  }

  function renderSources(stats) {
    var rows = ((stats && stats.sources) || []).map(function (s) {
      return el("tr", { "data-source": s.source_id }, [
        el("th", { scope: "row", text: s.source_id }), cell(s.download), cell(s.downloaded), cell(s.waiting),
        cell(s.not_wanted), cell(s.failed), cell(bytes(s.stored_bytes)),
      ]);
    });
    fill($("cd-sources").tBodies[0], rows, "No source yet.", 7);
    var text = stats && stats.counted_at ? "Counted " + when(stats.counted_at) + "." : "";
    var space = stats && stats.disk;
    if (space) {
      text += " Disk: " + bytes(space.free_bytes) + " free of " + bytes(space.total_bytes) +
        "; page downloads pause under " + bytes(space.floor_bytes) + " (" + (space.floor_set_by || "CRAWLER_MIN_FREE_DISK") + ").";
    }
    var quota = stats && stats.s3_quota;
    if (quota) {
      text += " S3: " + bytes(quota.stored_bytes) + " stored of CRAWLER_S3_QUOTA " + bytes(quota.quota_bytes) +
        "; page downloads pause when less than " + bytes(quota.floor_bytes) + " is left (" + quota.floor_set_by + ").";
    }
    $("cd-sources-counted").textContent = text;
  }

  function renderWorkers(workers) {
    var rows = (workers || []).map(function (w) {
      var phase = w.phase || {};
      return el("tr", { className: "cd-worker-" + w.state }, [
        cell(w.role + " @ " + w.host + ":" + w.pid),
        cell(w.state),
        cell((PHASE_LABELS[phase.state] || phase.state || "") +
          (phase.state === "analysing" ? ": " + phase.analysed + " analysed, " + phase.failed + " failed" : "")),
        cell(when(w.heartbeat_at)),
      ]);
    });
    fill($("cd-workers").tBodies[0], rows, "No worker has reported.", 4);
  }

  var LAST_PASS_FIRST = ["at", "source_id", "discovered", "upserted", "covers_fetched", "mangas_failed"];

  function renderLastPass(last) {
    var dl = $("cd-last-pass");
    dl.replaceChildren();
    if (!last) { dl.appendChild(el("dd", { className: "cd-muted", text: "No pass has finished yet." })); return; }
    var keys = LAST_PASS_FIRST.filter(function (k) { return k in last; }).concat(
      Object.keys(last).filter(function (k) { return LAST_PASS_FIRST.indexOf(k) < 0; })
    );
    keys.forEach(function (key) {
      var value = last[key];
      var text = key === "at" ? when(value) : typeof value === "boolean" ? (value ? "yes" : "no") : String(value);
      dl.appendChild(el("dt", { text: key === "at" ? "finished" : key.replace(/_/g, " ") }));
      dl.appendChild(el("dd", { "data-key": key, text: text }));
    });
  }

  var lastQueueKey = null;
  var deadTotal = 0;

  function render(status) {
    if (status.database_unavailable_since) {
      // The web process itself cannot reach the database: nothing else is known.
      $("cd-flags").replaceChildren(el("li", {
        className: "cd-pill cd-pill-bad", "data-flag": "database", text: "Database unavailable since " + when(status.database_unavailable_since),
      }));
      return;
    }
    renderPhase(status.phase);
    renderFlags(status);
    renderChapters(status);
    renderQueue(status.queue);
    renderSources(status.sources);
    renderWorkers(status.workers);
    renderLastPass(status.last_pass);
    deadTotal = Object.keys(status.queue || {}).reduce(function (n, k) { return n + (status.queue[k].dead || 0); }, 0);
    var requeueAllCount = $("cd-requeue-all-count");
    if (requeueAllCount) requeueAllCount.textContent = String(deadTotal);
    // The lists follow the queue: refetch them when the counts move.
    var key = JSON.stringify(status.queue || {});
    if (lastQueueKey !== null && key !== lastQueueKey) refreshListsSoon();
    lastQueueKey = key;
  }

  // --- backlog lists ----------------------------------------------------------------

  var controllers = {};

  // One in-flight request per list: a newer load aborts the older one.
  function load(name, url, onData) {
    if (controllers[name]) controllers[name].abort();
    var controller = new AbortController();
    controllers[name] = controller;
    return api(url, { signal: controller.signal }).then(function (res) {
      if (res.ok) onData(res.body);
    }).catch(function (err) {
      if (err.name !== "AbortError") console.warn("crawler dashboard: loading " + name + " failed", err);
    });
  }

  function jobLabel(job) {
    if (job.label) return job.label;
    if (job.manga && job.manga.title) return job.manga.title;
    return job.kind + " " + job.id;
  }

  function loadBacklog() {
    return load("backlog", urls.backlogUrl, function (data) {
      var jobs = data.active_jobs || { results: [], count: 0 };
      $("cd-active-jobs-count").textContent = "(" + jobs.count + ")";
      fill($("cd-active-jobs").tBodies[0], jobs.results.map(function (job) {
        return el("tr", { "data-job-id": job.id }, [cell(jobLabel(job)), cell(job.kind), cell(job.state), cell(job.attempts + " / " + job.max_attempts), cell(when(job.scheduled_at))]);
      }), "No job pending or running.", 5);
      var covers = data.missing_covers || { results: [], count: 0 };
      $("cd-covers-count").textContent = "(" + covers.count + ")";
      fill($("cd-missing-covers").tBodies[0], covers.results.map(function (manga) {
        return el("tr", { "data-manga-id": manga.id }, [cell(manga.title), cell(manga.cover_state), cell(when(manga.updated_at))]);
      }), "Every manga has its cover.", 3);
    });
  }

  function deadJobRow(job) {
    var label = jobLabel(job);
    var button = null;
    if (root.dataset.canOperate === "true") {
      button = el("button", { type: "button", className: "button cd-requeue", "aria-label": "Requeue " + label, "data-job-id": job.id, text: "Requeue" });
      button.addEventListener("click", function () { requeueJob(job, button); });
    }
    return el("tr", { "data-job-id": job.id }, [
      cell(label), cell(job.kind), cell(job.attempts + " / " + job.max_attempts),
      el("td", { className: "cd-error-text", title: job.last_error || "", text: (job.last_error || "").slice(0, 120) }),
      cell(when(job.updated_at)), el("td", {}, [button]),
    ]);
  }

  function loadDeadJobs() {
    var q = $("cd-dead-search").value.trim();
    var url = urls.deadJobsUrl + (q ? "?q=" + encodeURIComponent(q) : "");
    return load("dead", url, function (data) {
      $("cd-dead-count").textContent = "(" + data.count + ")";
      fill($("cd-dead-jobs").tBodies[0], data.results.map(deadJobRow), q ? "No dead job matches." : "No dead job.", 6);
    });
  }

  function refreshLists() { loadBacklog(); loadDeadJobs(); }
  var refreshListsSoon = debounce(refreshLists, LIST_REFRESH_DEBOUNCE_MS);

  // After a control action the stream brings the new counts (and with them a
  // list refresh); only a dead stream needs the lists refetched by hand.
  function afterControl() { if (!streamAlive) refreshListsSoon(); }

  $("cd-dead-search").addEventListener("input", debounce(loadDeadJobs, SEARCH_DEBOUNCE_MS));

  // --- controls ----------------------------------------------------------------------

  function control(url, body, describe) {
    showResult("Working…", false);
    return api(url, { method: "POST", body: body }).then(function (res) {
      showResult(res.ok ? describe(res.body) : errorText(res.body, "Request failed (" + res.status + ")."), !res.ok);
      afterControl();
      return res;
    }).catch(function (err) {
      showResult("Request failed: " + err.message, true);
    });
  }

  function passResult(body) { return body && body.detail ? body.detail : "Enqueued."; }

  bind(root.querySelector('[data-action="run"]'), "click", function () { control(urls.runUrl, {}, passResult); });
  bind(root.querySelector('[data-action="reconcile"]'), "click", function () { control(urls.reconcileUrl, {}, passResult); });

  function requeueJob(job, button) {
    button.disabled = true;
    control(urls.requeueUrl, { scope: "job", target: job.id }, function (body) {
      return "Requeued " + body.requeued + " job" + (body.requeued === 1 ? "" : "s") + ": " + jobLabel(job) + ".";
    }).then(function (res) {
      if (res && res.ok) {
        var row = button.closest("tr");
        if (row) row.remove();
      } else {
        button.disabled = false;
      }
    });
  }

  // --- modals: role=dialog, Escape closes, focus trapped inside and returned -----------

  var openModal = null;
  var returnFocus = null;
  var backdrop = root.querySelector(".cd-backdrop");

  function focusables(modal) {
    return Array.prototype.filter.call(
      modal.querySelectorAll("button, input, select, textarea, a[href], [tabindex]:not([tabindex='-1'])"),
      function (node) { return !node.disabled && node.offsetParent !== null; }
    );
  }

  function showModal(modal, opener) {
    if (openModal) hideModal();
    returnFocus = opener || document.activeElement;
    openModal = modal;
    modal.hidden = false;
    backdrop.hidden = false;
    var first = modal.querySelector("[data-autofocus]") || focusables(modal)[0];
    if (first) first.focus();
  }

  function hideModal() {
    if (!openModal) return;
    openModal.hidden = true;
    backdrop.hidden = true;
    openModal = null;
    if (returnFocus && returnFocus.focus) returnFocus.focus();
    returnFocus = null;
  }

  document.addEventListener("keydown", function (event) {
    if (!openModal) return;
    if (event.key === "Escape") {
      event.preventDefault();
      hideModal();
    } else if (event.key === "Tab") {
      var items = focusables(openModal);
      if (!items.length) return;
      var first = items[0];
      var last = items[items.length - 1];
      var inside = openModal.contains(document.activeElement);
      if (event.shiftKey && (document.activeElement === first || !inside)) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && (document.activeElement === last || !inside)) {
        event.preventDefault();
        first.focus();
      }
    }
  });

  backdrop.addEventListener("click", hideModal);
  root.querySelectorAll("[data-open-modal]").forEach(function (button) {
    button.addEventListener("click", function () { showModal($(button.dataset.openModal), button); });
  });
  root.querySelectorAll("[data-close-modal]").forEach(function (button) {
    button.addEventListener("click", hideModal);
  });

  bind(root.querySelector('[data-confirm="restart"]'), "click", function () {
    hideModal();
    control(urls.restartUrl, {}, function (body) {
      return "Browser restart requested (generation " + body.generation + ").";
    });
  });

  bind(root.querySelector('[data-confirm="requeue-all"]'), "click", function () {
    hideModal();
    control(urls.requeueUrl, { scope: "all", confirm: true }, function (body) {
      return "Requeued " + body.requeued + " dead job" + (body.requeued === 1 ? "" : "s") + ".";
    }).then(function (res) { if (res && res.ok) loadDeadJobs(); });
  });

  bind($("cd-session-form"), "submit", function (event) {
    event.preventDefault();
    var input = $("cd-phpsessid");
    var error = $("cd-session-error");
    error.textContent = "";
    if (!input.value) { error.textContent = "Enter the PHPSESSID value."; input.focus(); return; }
    api(urls.sessionUrl, { method: "POST", body: { phpsessid: input.value } }).then(function (res) {
      if (!res.ok) { error.textContent = errorText(res.body, "The session was refused."); input.focus(); return; }
      input.value = "";
      hideModal();
      showResult("Session stored for " + res.body.source + ".", false);
      afterControl();
    }).catch(function (err) { error.textContent = "Request failed: " + err.message; });
  });

  // --- the status stream --------------------------------------------------------------

  var source = null;
  var streamAlive = false;
  var errors = 0;
  var reconnectTimer = null;

  function setStreamState(text, kind) {
    var node = $("cd-stream-state");
    node.textContent = text;
    node.className = "cd-pill " + kind;
    root.dataset.stream = kind === "cd-pill-ok" ? "live" : "down";
  }

  function openStream() {
    if (source) return;
    clearTimeout(reconnectTimer);
    source = new EventSource(urls.streamUrl, { withCredentials: true });
    source.addEventListener("open", function () {
      errors = 0;
      streamAlive = true;
      setStreamState("Live", "cd-pill-ok");
    });
    source.addEventListener("status", function (event) {
      errors = 0;
      streamAlive = true;
      setStreamState("Live", "cd-pill-ok");
      render(JSON.parse(event.data));
    });
    source.addEventListener("error", onStreamError);
  }

  function closeStream() {
    clearTimeout(reconnectTimer);
    if (source) { source.close(); source = null; }
    streamAlive = false;
  }

  function onStreamError() {
    errors += 1;
    streamAlive = false;
    setStreamState("Reconnecting…", "cd-pill-wait");
    if (errors >= PROBE_AFTER_ERRORS) {
      errors = 0;
      probe();
      return;
    }
    // A refused (401/403) or broken response closes the EventSource for good;
    // reopen it ourselves, backing off, so the errors keep being counted.
    if (source && source.readyState === EventSource.CLOSED) {
      source = null;
      reconnectTimer = setTimeout(openStream, Math.min(RECONNECT_BASE_MS * errors, RECONNECT_MAX_MS));
    }
  }

  function probe() {
    closeStream();
    fetch(urls.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (response) {
      if (response.status === 401 || response.status === 403) { goToLogin(); return; }
      setStreamState("Reconnecting…", "cd-pill-wait");
      reconnectTimer = setTimeout(openStream, RECONNECT_MAX_MS);
    }).catch(function () {
      setStreamState("Server unreachable", "cd-pill-bad");
      reconnectTimer = setTimeout(openStream, RECONNECT_MAX_MS);
    });
  }

  // Hidden tabs and pages in the back/forward cache hold no connection.
  function pauseStream() {
    closeStream();
    setStreamState("Paused", "cd-pill-wait");
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") pauseStream();
    else openStream();
  });
  window.addEventListener("pagehide", pauseStream);
  window.addEventListener("pageshow", function () { if (document.visibilityState !== "hidden") openStream(); });

  openStream();
  refreshLists();
})();
