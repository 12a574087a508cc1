// Interlock console: the colour theme. Loaded in <head> without `defer`, so the chosen theme is
// on <html> before the page is first painted. "system" (no data-theme) follows the browser's
// prefers-color-scheme through console.css's light-dark() colours; "light" and "dark" pin one.
(function () {
  "use strict";

  var KEY = "interlock-theme";
  var CHOICES = ["system", "light", "dark"];
  var root = document.documentElement;

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return CHOICES.indexOf(value) > 0 ? value : "system";
    } catch (e) {
      return "system";  // storage refused (privacy settings): follow the system
    }
  }

  function label(choice) {
    document.querySelectorAll("[data-theme-toggle]").forEach(function (button) {
      var next = CHOICES[(CHOICES.indexOf(choice) + 1) % CHOICES.length];
      button.setAttribute("data-choice", choice);
      button.setAttribute("aria-label", "Theme: " + choice);
      button.title = "Colour theme: " + choice + " (click for " + next + ")";
    });
  }

  function apply(choice) {
    if (choice === "system") {
      root.removeAttribute("data-theme");
    } else {
      root.setAttribute("data-theme", choice);
    }
    label(choice);
  }

  function choose(choice) {
    try {
      if (choice === "system") {
        window.localStorage.removeItem(KEY);
      } else {
        window.localStorage.setItem(KEY, choice);
      }
    } catch (e) {
      // not remembered, but still applied to this page
    }
    apply(choice);
  }

  apply(stored());
  document.addEventListener("DOMContentLoaded", function () { label(stored()); });
  // Another tab chose a theme: follow it.
  window.addEventListener("storage", function (evt) {
    if (evt.key === KEY || evt.key === null) {
      apply(stored());
    }
  });
  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("[data-theme-toggle]");
    if (button) {
      var current = button.getAttribute("data-choice") || stored();
      choose(CHOICES[(CHOICES.indexOf(current) + 1) % CHOICES.length]);
    }
  });
})();
