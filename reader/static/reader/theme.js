// The theme toggle says what a press does from what is on screen: under
// "follow the system" a dark system shows dark, so the press stores "light".
(function () {
  "use strict";
  const button = document.getElementById("theme-toggle");
  if (!button) return;
  const stored = document.documentElement.dataset.theme;
  const dark = stored === "dark" || (stored === "system" && window.matchMedia("(prefers-color-scheme: dark)").matches);
  button.setAttribute("aria-pressed", String(dark));
  button.value = dark ? "light" : "dark";
})();
