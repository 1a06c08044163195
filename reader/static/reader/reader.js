// The chapter reader: vertical scroll or paged, left-to-right or right-to-left.
// Progress goes to the REST API (PUT /api/v1/progress/<chapter>/) whenever the
// reader gets further than it was; the server marks the chapter completed at
// its last page.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("reader-data").textContent);
  const container = document.getElementById("pages");
  const position = document.getElementById("position");
  const modeButton = document.getElementById("mode");
  const directionButton = document.getElementById("direction");
  const count = data.pageCount;
  const requested = parseInt(new URLSearchParams(location.search).get("page") || "", 10);
  let current = Math.min(Math.max(requested || 1, 1), count);
  let saved = data.lastPage;
  let mode = localStorage.getItem("reader.mode") || "scroll";
  let direction = localStorage.getItem("reader.direction." + data.chapter) || data.direction;
  const images = [];

  // The toggles keep their labels ("Paged mode", "Right to left"); aria-pressed says whether they are on.

  // Ask for the width the screen shows (device pixels, rounded up to 200 so
  // caches see few sizes); a page already narrower comes as stored.
  function sourceFor(page) {
    const target = Math.min(4000, Math.ceil((container.clientWidth || window.innerWidth) * (window.devicePixelRatio || 1) / 200) * 200);
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

  function show(page) {
    current = Math.min(Math.max(page, 1), count);
    position.textContent = "Page " + current + " of " + count;
    if (mode === "paged") {
      images.forEach(function (img, i) { img.hidden = i !== current - 1; });
      preload(current - 1);
      preload(current); // the next page is ready before it is asked for
      container.scrollTop = 0;
    }
    save(current);
    if (current === count) container.dataset.end = "true";
  }

  function forward() {
    if (current < count) show(current + 1);
    else if (data.nextUrl) location.href = data.nextUrl;
  }

  function back() {
    if (current > 1) show(current - 1);
    else if (data.previousUrl) location.href = data.previousUrl;
  }

  function build() {
    data.pages.forEach(function (page, i) {
      const img = document.createElement("img");
      img.alt = "Page " + (i + 1) + " of " + count;
      img.dataset.page = String(i + 1);
      if (page.width && page.height) { img.width = page.width; img.height = page.height; }
      img.decoding = "async";
      container.appendChild(img);
      images.push(img);
    });
  }

  let observer = null;
  function applyMode() {
    container.classList.toggle("paged", mode === "paged");
    container.classList.toggle("rtl", direction === "rtl");
    modeButton.setAttribute("aria-pressed", String(mode === "paged"));
    directionButton.setAttribute("aria-pressed", String(direction === "rtl"));
    if (observer) { observer.disconnect(); observer = null; }
    if (mode === "scroll") {
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

  modeButton.addEventListener("click", function () {
    mode = mode === "paged" ? "scroll" : "paged";
    localStorage.setItem("reader.mode", mode);
    applyMode();
  });
  directionButton.addEventListener("click", function () {
    direction = direction === "rtl" ? "ltr" : "rtl";
    localStorage.setItem("reader.direction." + data.chapter, direction);
    applyMode();
  });

  document.addEventListener("keydown", function (event) {
    if (mode !== "paged" || event.altKey || event.ctrlKey || event.metaKey) return;
    const rtl = direction === "rtl";
    if (event.key === "ArrowRight") { rtl ? back() : forward(); }
    else if (event.key === "ArrowLeft") { rtl ? forward() : back(); }
    else if (event.key === " " || event.key === "PageDown") { forward(); }
    else if (event.key === "PageUp") { back(); }
    else return;
    event.preventDefault();
  });

  // Tap the left or right half of the page; in right-to-left reading the left half goes forward.
  container.addEventListener("click", function (event) {
    if (mode !== "paged") return;
    const box = container.getBoundingClientRect();
    const leftHalf = event.clientX - box.left < box.width / 2;
    if (leftHalf === (direction === "rtl")) forward(); else back();
  });

  build();
  applyMode();
})();
