// The list pages' compact bar and the header's menus: a menu (details.menu) closes when another
// opens, on a click outside it and on Escape; the incident page's groups unfold to their
// incidents and stay unfolded across live refreshes.
(function () {
  "use strict";

  function menus() {
    return Array.prototype.slice.call(document.querySelectorAll("details.menu[open]"));
  }

  document.addEventListener("toggle", function (evt) {
    var menu = evt.target;
    if (!menu.matches || !menu.matches("details.menu") || !menu.open) {
      return;
    }
    menus().forEach(function (other) {
      if (other !== menu && !other.contains(menu)) {
        other.open = false;
      }
    });
  }, true);

  document.addEventListener("click", function (evt) {
    menus().forEach(function (menu) {
      if (!menu.contains(evt.target)) {
        menu.open = false;
      }
    });
  });

  document.addEventListener("keydown", function (evt) {
    if (evt.key !== "Escape") {
      return;
    }
    menus().forEach(function (menu) {
      menu.open = false;
      var summary = menu.querySelector("summary");
      if (summary && menu.contains(document.activeElement)) {
        summary.focus();
      }
    });
  });

  // -- incident groups ----------------------------------------------------------------------------

  var unfolded = new Set();

  function show(group, open) {
    var button = group.querySelector("button.group-toggle");
    var row = document.getElementById(button.getAttribute("aria-controls"));
    button.setAttribute("aria-expanded", open ? "true" : "false");
    row.hidden = !open;
    var key = group.getAttribute("data-group-key");
    if (open) { unfolded.add(key); } else { unfolded.delete(key); }
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("button.group-toggle");
    if (!button) {
      return;
    }
    var group = button.closest("tbody.incident-group");
    show(group, button.getAttribute("aria-expanded") !== "true");
  });

  // A live refresh draws the groups again, folded: unfold those that were, and load their
  // incidents again (once settled, when htmx has wired the new buttons).
  document.addEventListener("htmx:afterSettle", function (evt) {
    if (!evt.target || evt.target.id !== "incident-rows" || !unfolded.size) {
      return;
    }
    var keep = new Set(unfolded);
    unfolded.clear();
    evt.target.querySelectorAll("tbody.incident-group").forEach(function (group) {
      if (keep.has(group.getAttribute("data-group-key"))) {
        group.querySelector("button.group-toggle").click();
      }
    });
  });
})();
