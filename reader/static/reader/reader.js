// The chapter reader: paged (one page or a two-page spread), scroll (pages
// one under another) or webtoon (one continuous strip); fit width, fit
// height or original size; left-to-right or right-to-left. The choices are
// remembered per manga in this browser. Progress goes to the REST API
// (PUT /api/v1/progress/<chapter>/) whenever the reader gets further than it
// was; the server marks the chapter completed at its last page.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("reader-data").textContent);
  const body = document.body;
  const container = document.getElementById("pages");
  const position = document.getElementById("position");
  const slider = document.getElementById("slider");
  const endCard = document.getElementById("end-card");
  const spreadButton = document.getElementById("spread");
  const directionButton = document.getElementById("direction");
  const optionsToggle = document.getElementById("options-toggle");
  const help = document.getElementById("help");
  const count = data.pageCount;
  const requested = parseInt(new URLSearchParams(location.search).get("page") || "", 10);
  const storageKey = "reader.manga." + data.manga;
  const MODES = ["paged", "scroll", "webtoon"];
  const FITS = ["width", "height", "original"];

  function loadSettings() {
    try { return JSON.parse(localStorage.getItem(storageKey) || "{}") || {}; } catch (e) { return {}; }
  }
  const remembered = loadSettings();
  const settings = {
    mode: MODES.indexOf(remembered.mode) >= 0 ? remembered.mode : data.mode,
    fit: FITS.indexOf(remembered.fit) >= 0 ? remembered.fit : "",
    spread: remembered.spread === true,
    direction: remembered.direction === "rtl" || remembered.direction === "ltr" ? remembered.direction : data.direction,
  };
  function remember() {
    try { localStorage.setItem(storageKey, JSON.stringify(settings)); } catch (e) { /* private mode: not kept */ }
  }
  // Paged pages fit the screen's height unless the reader chose; strips fit its width.
  function fit() { return settings.fit || (settings.mode === "paged" ? "height" : "width"); }

  let current = Math.min(Math.max(requested || 1, 1), count);
  let saved = data.lastPage;
  let atEnd = false;
  const images = [];

  // Ask for the width the screen shows (device pixels), rounded up to one of
  // the widths the server keeps copies at; a page already narrower comes as stored.
  const copyWidths = data.copyWidths || [4000];
  function sourceFor(page) {
    if (fit() === "original") return page.full; // the page as stored, pixel for pixel
    const screen = Math.ceil((window.innerWidth || 800) * (window.devicePixelRatio || 1));
    const target = copyWidths.find((w) => w >= screen) || copyWidths[copyWidths.length - 1];
    return page.width && page.width <= target ? page.full : page.scaled + "?w=" + target;
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // One PUT at a time, and the next carries the furthest page reached: the API
  // stores what it is told, so two requests racing could land the older page last.
  let inFlight = false;
  function save(page) {
    if (page <= saved) return;
    saved = page;
    if (!inFlight) send();
  }

  function send() {
    if (!data.progressUrl) return; // an anonymous reader (the library opened to everyone) keeps no progress
    const page = saved;
    inFlight = true;
    fetch(data.progressUrl, {
      method: "PUT",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ last_page: page }),
    }).then(function (response) {
      container.dataset.saved = response.ok ? String(page) : "error";
    }, function () {
      container.dataset.saved = "error";
    }).finally(function () {
      inFlight = false;
      if (saved > page) send();
    });
  }

  function preload(index) {
    if (index >= 0 && index < count && !images[index].src) images[index].src = sourceFor(data.pages[index]);
  }

  // The next chapter's first pages, fetched once the reader nears this one's end,
  // so "Next chapter" opens on a page already in the cache.
  let nextPreloaded = false;
  const held = [];
  function preloadNextChapter() {
    if (nextPreloaded || !data.nextPages.length) return;
    nextPreloaded = true;
    data.nextPages.forEach(function (page) {
      const img = new Image();
      img.src = sourceFor(page);
      held.push(img);
    });
    container.dataset.nextPreloaded = String(data.nextPages.length);
  }

  // Spreads in paged mode: a list of page-index groups. The first page (the
  // cover) and every wide page stand alone; other pages pair up in order.
  function isWide(page) { return page.width > 0 && page.height > 0 && page.width > page.height; }
  function spreads() {
    const out = [];
    if (!settings.spread) {
      for (let i = 0; i < count; i++) out.push([i]);
      return out;
    }
    let i = 0;
    while (i < count) {
      const pairable = i > 0 && i + 1 < count && !isWide(data.pages[i]) && !isWide(data.pages[i + 1]);
      if (pairable) { out.push([i, i + 1]); i += 2; } else { out.push([i]); i += 1; }
    }
    return out;
  }
  let groups = spreads();
  function groupOf(page) {
    for (let g = 0; g < groups.length; g++) if (groups[g].indexOf(page - 1) >= 0) return g;
    return 0;
  }

  function describe(group) {
    const first = group[0] + 1;
    const last = group[group.length - 1] + 1;
    return (first === last ? "Page " + first : "Pages " + first + "–" + last) + " of " + count;
  }

  function showEnd(on) {
    atEnd = on;
    if (settings.mode === "paged") {
      endCard.hidden = !on;
      container.hidden = on;
      if (on) { endCard.focus({ preventScroll: true }); preloadNextChapter(); }
    }
    body.classList.toggle("at-end", on);
  }

  function show(page) {
    current = Math.min(Math.max(page, 1), count);
    if (settings.mode === "paged") {
      const group = groups[groupOf(current)];
      current = group[0] + 1;
      images.forEach(function (img, i) { img.hidden = group.indexOf(i) < 0; });
      group.forEach(preload);
      preload(group[group.length - 1] + 1); // the next page is ready before it is asked for
      position.textContent = describe(group);
      container.scrollTop = 0;
      container.scrollLeft = 0;
      save(group[group.length - 1] + 1);
      if (atEnd) showEnd(false);
    } else {
      position.textContent = "Page " + current + " of " + count;
      save(current);
    }
    slider.value = String(current);
    if (current >= count - 2) preloadNextChapter();
    if (current === count) container.dataset.end = "true";
  }

  function forward() {
    if (atEnd) { if (data.nextUrl) location.href = data.nextUrl; return; }
    const g = groupOf(current);
    if (g < groups.length - 1) show(groups[g + 1][0] + 1);
    else showEnd(true);
  }

  function back() {
    if (atEnd) { showEnd(false); show(current); return; }
    const g = groupOf(current);
    if (g > 0) show(groups[g - 1][0] + 1);
    else if (data.previousUrl) location.href = data.previousUrl;
  }

  function jumpTo(page) {
    if (settings.mode === "paged") { show(page); return; }
    images[page - 1].scrollIntoView({ block: "start" });
    preload(page - 1);
    show(page);
  }

  function build() {
    data.pages.forEach(function (page, i) {
      const img = document.createElement("img");
      img.alt = "Page " + (i + 1) + " of " + count;
      img.dataset.page = String(i + 1);
      if (page.width && page.height) { img.width = page.width; img.height = page.height; }
      if (isWide(page)) img.classList.add("wide");
      img.decoding = "async";
      container.appendChild(img);
      images.push(img);
    });
  }

  // A fit change may want other pixels (original size asks for the stored page).
  function refreshSources() {
    images.forEach(function (img, i) {
      const want = sourceFor(data.pages[i]);
      if (img.getAttribute("src") && img.getAttribute("src") !== want) img.src = want;
    });
  }

  function press(button, on) {
    button.setAttribute("aria-pressed", String(on));
  }

  let observer = null;
  function apply() {
    groups = spreads();
    const paged = settings.mode === "paged";
    container.classList.toggle("paged", paged);
    container.classList.toggle("rtl", settings.direction === "rtl");
    container.dataset.mode = settings.mode;
    container.dataset.fit = fit();
    container.dataset.spread = paged && settings.spread ? "double" : "single";
    body.dataset.mode = settings.mode;
    document.querySelectorAll("[data-mode]").forEach(function (button) {
      if (button.tagName === "BUTTON") press(button, button.dataset.mode === settings.mode);
    });
    document.querySelectorAll("button[data-fit]").forEach(function (button) {
      press(button, button.dataset.fit === fit());
      button.disabled = settings.mode === "webtoon"; // a strip always spans the column
    });
    press(spreadButton, paged && settings.spread);
    spreadButton.disabled = !paged;
    press(directionButton, settings.direction === "rtl");
    slider.dir = settings.direction === "rtl" ? "rtl" : "ltr";
    refreshSources();
    if (observer) { observer.disconnect(); observer = null; }
    container.hidden = false;
    endCard.hidden = paged;
    atEnd = false;
    body.classList.remove("at-end");
    if (!paged) {
      images.forEach(function (img, i) { img.hidden = false; img.loading = "lazy"; preload(i); });
      observer = new IntersectionObserver(function (seen) {
        seen.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          const page = parseInt(entry.target.dataset.page, 10);
          if (page > current || entry.target === images[count - 1]) show(page);
          preload(page); // the one after the page coming into view
        });
      }, { threshold: 0.4 });
      images.forEach(function (img) { observer.observe(img); });
      if (current > 1) images[current - 1].scrollIntoView();
      show(current);
    } else {
      show(current);
    }
  }

  function setMode(mode) { settings.mode = mode; remember(); apply(); }
  function setFit(value) { settings.fit = value; remember(); apply(); }
  function toggleSpread() { if (settings.mode === "paged") { settings.spread = !settings.spread; remember(); apply(); } }
  function toggleDirection() { settings.direction = settings.direction === "rtl" ? "ltr" : "rtl"; remember(); apply(); }
  function toggleImmersive() {
    const on = !body.classList.contains("immersive");
    body.classList.toggle("immersive", on);
    container.dataset.immersive = String(on);
  }

  document.querySelectorAll("button[data-mode]").forEach(function (button) {
    button.addEventListener("click", function () { setMode(button.dataset.mode); });
  });
  document.querySelectorAll("button[data-fit]").forEach(function (button) {
    button.addEventListener("click", function () { setFit(button.dataset.fit); });
  });
  spreadButton.addEventListener("click", toggleSpread);
  directionButton.addEventListener("click", toggleDirection);
  optionsToggle.addEventListener("click", function () {
    const open = optionsToggle.getAttribute("aria-expanded") !== "true";
    optionsToggle.setAttribute("aria-expanded", String(open));
    body.classList.toggle("options-open", open);
  });
  document.getElementById("help-open").addEventListener("click", function () { help.showModal(); });
  slider.addEventListener("input", function () { jumpTo(parseInt(slider.value, 10)); });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || help.open) return;
    if (event.target instanceof HTMLInputElement && event.target !== slider) return;
    const rtl = settings.direction === "rtl";
    const paged = settings.mode === "paged";
    const key = event.key;
    if (key === "?") { help.showModal(); }
    else if (key === "m") { setMode(MODES[(MODES.indexOf(settings.mode) + 1) % MODES.length]); }
    else if (key === "w") { setFit("width"); }
    else if (key === "h") { setFit("height"); }
    else if (key === "o") { setFit("original"); }
    else if (key === "d") { toggleSpread(); }
    else if (key === "r") { toggleDirection(); }
    else if (key === "i") { toggleImmersive(); }
    else if (event.target === slider) { return; } // the slider's own arrows move it
    else if (key === "Home") { jumpTo(1); }
    else if (key === "End") { jumpTo(count); }
    else if (!paged) { return; } // the page scrolls as it would anywhere
    else if (key === "ArrowRight") { rtl ? back() : forward(); }
    else if (key === "ArrowLeft") { rtl ? forward() : back(); }
    else if (key === " " || key === "PageDown") { forward(); }
    else if (key === "PageUp") { back(); }
    else return;
    event.preventDefault();
  });

  // A tap in the middle third hides or shows the toolbars; in paged mode the
  // outer thirds turn the page (the left one goes forward in right-to-left reading).
  container.addEventListener("click", function (event) {
    const box = container.getBoundingClientRect();
    const x = (event.clientX - box.left) / box.width;
    if (settings.mode !== "paged" || (x > 1 / 3 && x < 2 / 3)) { toggleImmersive(); return; }
    if ((x <= 1 / 3) === (settings.direction === "rtl")) forward(); else back();
  });

  build();
  apply();
})();
