// Interlock console: copy buttons (`data-copy`) and keyboard navigation through list pages.
(function () {
  "use strict";

  // -- copy buttons ------------------------------------------------------------------------------

  // navigator.clipboard needs a secure context (https, or http on localhost); elsewhere the text
  // is selected in a hidden textarea and copied with execCommand.
  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "sr";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }

  var feedback = new WeakMap();
  function tell(button, word) {
    button.setAttribute("data-copied", word);
    window.clearTimeout(feedback.get(button));
    feedback.set(button, window.setTimeout(function () { button.removeAttribute("data-copied"); }, 1500));
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("button[data-copy]");
    if (!button) {
      return;
    }
    evt.preventDefault();
    evt.stopPropagation();  // a copy button inside a <summary> must not toggle its <details>
    copyText(button.getAttribute("data-copy")).then(
      function () { tell(button, "copied"); },
      function () { tell(button, "failed"); }
    );
  });

  // -- keyboard navigation through lists ---------------------------------------------------------

  // The rows a list page lets the keys move through, each known by its id attribute, so the
  // highlight finds its row again after a live refresh re-renders the list.
  var ROW_IDS = ["data-instance", "data-incident", "data-task", "data-key", "data-external", "data-topic"];
  var LIST_PAGES = /^\/(instances|incidents|tasks|definitions|workers)\/?$/;
  var ROWS = ROW_IDS.map(function (name) { return "main table tbody tr[" + name + "]"; }).join(", ");
  var current = null;  // [attribute, value] of the highlighted row

  function listPage() {
    return LIST_PAGES.test(window.location.pathname);
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll(ROWS));
  }

  function keyOf(row) {
    for (var i = 0; i < ROW_IDS.length; i++) {
      if (row.hasAttribute(ROW_IDS[i])) {
        return [ROW_IDS[i], row.getAttribute(ROW_IDS[i])];
      }
    }
    return null;
  }

  function find(key) {
    if (!key) {
      return null;
    }
    return document.querySelector("main table tbody tr[" + key[0] + '="' + CSS.escape(key[1]) + '"]');
  }

  function highlight(row, scroll) {
    document.querySelectorAll("tr.kb-current").forEach(function (old) {
      old.classList.remove("kb-current");
      old.removeAttribute("aria-selected");
    });
    current = row ? keyOf(row) : null;
    if (row) {
      row.classList.add("kb-current");
      row.setAttribute("aria-selected", "true");
      if (scroll) {
        row.scrollIntoView({ block: "nearest" });
      }
    }
  }

  function move(step) {
    var all = rows();
    if (!all.length) {
      return;
    }
    var at = all.indexOf(find(current));
    var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    highlight(all[next], true);
  }

  function open() {
    var row = find(current);
    var link = row && row.querySelector("a[href]");
    if (link) {
      link.click();
    }
  }

  function focusFilter() {
    var field = document.querySelector(
      "main form.filters input:not([type=hidden]):not([type=checkbox]), main form.filters select"
    );
    var target = field || document.getElementById("jump-q");
    if (target) {
      target.focus();
      if (target.select) {
        target.select();
      }
    }
  }

  function typing(target) {
    return (
      target &&
      (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))
    );
  }

  document.addEventListener("keydown", function (evt) {
    if (evt.defaultPrevented || evt.ctrlKey || evt.metaKey || evt.altKey || typing(evt.target)) {
      return;
    }
    var help = document.getElementById("keys-help");
    if (help && help.open) {
      return;  // the dialog handles Escape itself
    }
    var key = evt.key;
    if (key === "?") {
      if (help && help.showModal) {
        evt.preventDefault();
        help.showModal();
      }
      return;
    }
    if (key === "/") {
      evt.preventDefault();
      focusFilter();
      return;
    }
    if (key === "g") {
      var jump = document.getElementById("jump-q");
      if (jump) {
        evt.preventDefault();
        jump.focus();
      }
      return;
    }
    if (!listPage()) {
      return;
    }
    if (key === "j" || key === "ArrowDown") {
      evt.preventDefault();
      move(1);
    } else if (key === "k" || key === "ArrowUp") {
      evt.preventDefault();
      move(-1);
    } else if (key === "Enter" && current && (!evt.target.closest || !evt.target.closest("a, button, summary"))) {
      evt.preventDefault();
      open();
    }
  });

  // A live refresh re-renders the rows: the highlight goes back on the row with the same id.
  document.addEventListener("htmx:afterSwap", function () {
    if (!current) {
      return;
    }
    var row = find(current);
    if (row) {
      highlight(row, false);
    }
  });
})();
