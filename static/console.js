// Interlock console: CSRF on mutations, live refresh from the page's event stream, bulk retry.
(function () {
  "use strict";

  var csrf = function () {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  };

  // Every event seen on this page, oldest first ({seq, event, instance_id, node_id}); `received`
  // keeps every delivery as [seq, type], repeats included.
  var Interlock = (window.Interlock = { events: [], received: [], lastSeq: 0, cursor: null, opens: 0 });

  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "[45]..", swap: true, error: true },
  ];

  document.addEventListener("htmx:configRequest", function (evt) {
    if (evt.detail.verb !== "get") {
      evt.detail.headers["X-CSRF-Token"] = csrf();
    }
  });

  // -- database unavailable banner ----------------------------------------------------------------

  // Shown while requests answer 503 or the event stream reports the database down; hidden again
  // by the first answer that is not a 503 and by the stream's `ready` or `database` event.
  function showUnavailable(down) {
    var banner = document.getElementById("db-banner");
    if (banner) {
      banner.hidden = !down;
    }
  }
  Interlock.showUnavailable = showUnavailable;

  function checkHealth() {
    fetch("/health", { credentials: "same-origin", cache: "no-store" }).then(function (response) {
      showUnavailable(response.status === 503);
    }, function () {});
  }

  document.addEventListener("htmx:afterRequest", function (evt) {
    var xhr = evt.detail.xhr;
    if (xhr && xhr.status === 503) {
      showUnavailable(true);
    } else if (xhr && xhr.status > 0 && xhr.status < 500) {
      showUnavailable(false);
    }
  });

  document.addEventListener("htmx:afterRequest", function (evt) {
    var then = evt.detail.elt && evt.detail.elt.getAttribute("data-then");
    var xhr = evt.detail.xhr;
    // HX-Redirect (log-out to the identity provider) goes first: htmx has navigated already.
    if (then && evt.detail.successful && !(xhr && xhr.getResponseHeader("HX-Redirect"))) {
      window.location.assign(then);
    }
  });

  // -- live refresh ------------------------------------------------------------------------------

  // A part is being edited while the focus is in one of its fields, or while it shows a form
  // whose submission was refused (drawn with `data-refused`: a task form with the errors next
  // to what was typed), one that holds what was typed, or one the user unfolded to fill in: a
  // refresh would take them away. Such a form is kept through refreshes (or, when it cannot be,
  // holds its part) until it is folded, its fields are as it was drawn, or an answer draws it
  // accepted.
  function editing(el) {
    return typing(el) !== null || edited(el).length > 0;
  }

  // The field the focus is in, if it is in `el` and takes typing (else null).
  function typing(el) {
    var active = document.activeElement;
    var field = active && el.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
    return field && active.type !== "checkbox" ? active : null;
  }

  // The forms in `el` that hold it: refused with their errors, holding what was typed, or
  // opened by the user to fill in.
  function edited(el) {
    return Array.from(el.querySelectorAll("form")).filter(function (form) {
      if (form.closest("details:not([open])")) {
        return false;
      }
      return form.hasAttribute("data-refused") || changed(form) || Boolean(form.closest("details[open]"));
    });
  }

  // Whether a form holds something typed or picked that it was not drawn with.
  function changed(form) {
    for (var i = 0; i < form.elements.length; i++) {
      var field = form.elements[i];
      if (!field.name || field.disabled) {
        continue;  // only what the form would send
      }
      if (field.type === "checkbox" || field.type === "radio") {
        if (field.checked !== field.defaultChecked) {
          return true;
        }
      } else if (field.tagName === "SELECT") {
        for (var j = 0; j < field.options.length; j++) {
          if (field.options[j].selected !== field.options[j].defaultSelected) {
            return true;
          }
        }
      } else if ("defaultValue" in field && field.type !== "hidden" && field.value !== field.defaultValue) {
        return true;
      }
    }
    return false;
  }

  // What a form holds once its submission was accepted is what it was drawn with from then on.
  function settle(form) {
    for (var i = 0; i < form.elements.length; i++) {
      var field = form.elements[i];
      if (field.type === "checkbox" || field.type === "radio") {
        field.defaultChecked = field.checked;
      } else if (field.tagName === "SELECT") {
        for (var j = 0; j < field.options.length; j++) {
          field.options[j].defaultSelected = field.options[j].selected;
        }
      } else if ("defaultValue" in field) {
        field.defaultValue = field.value;
      }
    }
  }

  // An accepted submission leaves the form in place (the answer goes elsewhere): it no longer
  // holds its part, and one the user unfolded to fill in folds again.
  document.addEventListener("htmx:afterRequest", function (evt) {
    var elt = evt.detail.elt;
    var form = elt && elt.closest ? elt.closest("form") : null;
    if (form && evt.detail.successful) {
      form.removeAttribute("data-refused");
      settle(form);
      var config = evt.detail.requestConfig;
      var unfolded = form.closest("details[open]");
      if (unfolded && config && config.verb !== "get") {
        unfolded.open = false;  // done with: it no longer holds its part
      }
    }
  });

  // Look again at `el` when the focus leaves it, a form in it is folded, or a request from it is
  // answered (a form saved, or completed and gone); `fire` (or the guard of the parts that
  // refresh themselves, below) defers it again while still edited.
  function deferUntilEdited(el) {
    if (deferred.has(el)) {
      return;
    }
    deferred.add(el);
    var events = ["focusout", "toggle", "htmx:afterSwap", "htmx:afterRequest"];
    function again() {
      events.forEach(function (name) { el.removeEventListener(name, again, true); });
      deferred.delete(el);
      if (el.hasAttribute("data-live")) {
        refresh(el);
      } else if (document.body.contains(el)) {
        htmx.ajax("GET", el.getAttribute("hx-get"), { source: el });
      }
    }
    events.forEach(function (name) { el.addEventListener(name, again, true); });
  }

  // A part that refreshes itself: its hx-trigger names nothing a user does, only the live
  // refresh, a poll (`every 3s`) or a change the page announces (`interlock:changed`). Every
  // request of such a part is a refresh, and is held like a live one while the part is edited.
  function selfRefreshing(el) {
    var trigger = el && el.getAttribute ? el.getAttribute("hx-trigger") : null;
    if (!trigger || !el.hasAttribute("hx-get")) {
      return false;
    }
    return trigger.split(",").every(function (spec) {
      return /^\s*(every\s|live-refresh\b|interlock:changed\b)/.test(spec);
    });
  }

  // A poll or an announced change of a part being edited is asked for only when its answer may
  // carry the forms being edited; otherwise the part is asked for once the edit ends (a live
  // refresh never gets here: `fire` decided already).
  document.addEventListener("htmx:beforeRequest", function (evt) {
    var elt = evt.detail.elt;
    var config = evt.detail.requestConfig;
    var cause = config && config.triggeringEvent;
    if (cause && cause.type === "live-refresh") {
      return;
    }
    var part = evt.detail.target || elt;
    if (!selfRefreshing(elt)) {
      return;
    }
    if (!editing(part)) {
      uncarried.delete(part);
    } else if (!carriable(part)) {
      evt.preventDefault();
      deferUntilEdited(elt);
    }
  });

  // A part's hx-sync orders its own refreshes. A control inside it (a button, a form) does not
  // queue behind a refresh: the refresh's answer would replace the control, and its request,
  // still queued, would never be sent.
  function ownSync(root) {
    var found = Array.from(root.querySelectorAll ? root.querySelectorAll("[hx-sync]") : []);
    if (root.matches && root.matches("[hx-sync]")) {
      found.push(root);
    }
    found.forEach(function (el) {
      if (selfRefreshing(el) && !el.hasAttribute("hx-disinherit")) {
        el.setAttribute("hx-disinherit", "hx-sync");
      }
    });
  }
  htmx.onLoad(ownSync);

  // One request per page per burst of events. The first event of a burst asks at once (once the
  // events delivered with it are in); events that arrive while that request runs are gathered
  // into one request after it ends, at least `data-throttle` ms after the previous one began.
  // A page with a live source ([data-live-source]) asks for every changed part ([data-live] with
  // its `data-part`) in one request, whose answer swaps them out of band; any other [data-live]
  // element asks for itself (the other pages have one each). A part the user is typing in, or
  // that holds an open form, is refreshed around that form, kept as it is (`carry`), or when
  // that cannot be, left alone until the edit ends (`deferUntilEdited`).
  var live = { wanted: new Set(), timer: null, busy: 0, since: 0, last: 0, parts: [] };
  var deferred = new WeakSet();
  // Parts whose last refresh could not carry the forms edited in them (`carry`).
  var uncarried = new WeakSet();
  Interlock.live = live;

  function liveSource() {
    return document.querySelector("[data-live-source]");
  }

  function schedule() {
    if (live.busy && Date.now() - live.since > 15000) {
      live.busy = 0;  // an answer that never came: do not stop refreshing
    }
    if (live.timer || live.busy || !live.wanted.size) {
      return;
    }
    var paced = liveSource() || live.wanted.values().next().value;
    var wait = Number(paced.getAttribute("data-throttle") || 150);
    live.timer = window.setTimeout(fire, Math.max(0, live.last + wait - Date.now()));
  }

  function refresh(el) {
    live.wanted.add(el);
    schedule();
  }

  function fire() {
    live.timer = null;
    var ready = [];
    live.wanted.forEach(function (el) {
      if (!document.body.contains(el)) {
        return;
      }
      if (!editing(el)) {
        uncarried.delete(el);
        ready.push(el);
      } else if (carriable(el)) {
        ready.push(el);  // its answer carries the forms being edited (`keepEdited`)
      } else {
        deferUntilEdited(el);
      }
    });
    live.wanted.clear();
    if (!ready.length) {
      return;
    }
    live.last = live.since = Date.now();
    var source = liveSource();
    var parts = source ? ready.filter(function (el) { return el.hasAttribute("data-part"); }) : [];
    var own = ready.filter(function (el) { return parts.indexOf(el) < 0; });
    live.busy = own.length + (parts.length ? 1 : 0);
    // A refresh whose request htmx drops (an hx-sync queue keeps only the last) never answers:
    // look again once it is overdue, so that what was wanted meanwhile is still asked for.
    window.setTimeout(schedule, 15100);
    if (parts.length) {
      live.parts = parts.map(function (el) { return el.getAttribute("data-part"); });
      htmx.trigger(source, "live-refresh");
    }
    own.forEach(function (el) { htmx.trigger(el, "live-refresh"); });
  }

  // The answer to a refresh of a part being edited (its own swap or an out-of-band one). When
  // every form being edited in the part is drawn again by the answer (the same form: its id, or
  // its action and hidden fields), the answer is swapped in around them: each one, with what it
  // holds (what was typed, the focus, its errors) and its unfolded <details>, takes the place of
  // its new drawing (htmx's hx-preserve). Otherwise (a form the answer no longer draws, a field
  // typed in outside a form) the part keeps what it shows and is asked for again once the edit
  // ends.
  var liveSwap = false;
  var carried = 0;
  function keepEdited(evt, target) {
    var part = target && target.hasAttribute && (target.hasAttribute("data-live") || selfRefreshing(target));
    if (!part || !editing(target)) {
      return;
    }
    var oob = evt.type === "htmx:oobBeforeSwap";
    var holder = oob ? null : document.createElement("template");
    if (holder) {
      holder.innerHTML = evt.detail.serverResponse;
    }
    if (carry(target, oob ? evt.detail.fragment : holder.content)) {
      if (holder) {
        evt.detail.serverResponse = holder.innerHTML;
      }
      return;
    }
    evt.detail.shouldSwap = false;
    deferUntilEdited(target);
  }

  function formKey(form) {
    if (form.id) {
      return "#" + form.id;
    }
    var key = form.getAttribute("hx-post") || form.getAttribute("action") || "";
    form.querySelectorAll("input[type=hidden]").forEach(function (field) {
      key += "|" + field.name + "=" + field.value;
    });
    return key;
  }

  // What is kept of an edited form: its unfolded <details> (inside the part), or the form.
  function keeper(form, part) {
    var details = form.closest("details");
    return details && part.contains(details) ? details : form;
  }

  // The forms a refresh of `part` must keep: those edited and the one typed in; null when the
  // focus is in a field of no form (nothing could carry it).
  function kept(part) {
    var active = typing(part);
    var forms = edited(part);
    if (active && !active.form) {
      return null;
    }
    if (active && forms.indexOf(active.form) < 0) {
      forms.push(active.form);
    }
    return forms;
  }

  // Whether a refresh of the part being edited `el` is worth asking for: its answer can carry the
  // forms being edited, unless the last one could not (until the edit ends).
  function carriable(el) {
    var forms = kept(el);
    return !uncarried.has(el) && forms !== null && forms.length > 0;
  }

  function carry(part, fragment) {
    var forms = kept(part);
    if (!forms || !forms.length || !fragment) {
      uncarried.add(part);
      return false;
    }
    var fresh = Array.from(fragment.querySelectorAll("form"));
    var pairs = [];
    for (var i = 0; i < forms.length; i++) {
      var key = formKey(forms[i]);
      var match = fresh.filter(function (form) { return formKey(form) === key; });
      if (match.length !== 1) {
        uncarried.add(part);
        return false;
      }
      var drawn = match[0].closest("details") || match[0];
      pairs.push([keeper(forms[i], part), drawn]);
    }
    pairs.forEach(function (pair) {
      if (!pair[0].id) {
        carried += 1;
        pair[0].id = "kept-" + carried;
      }
      pair[1].id = pair[0].id;
      pair[1].setAttribute("hx-preserve", "true");
    });
    return true;
  }
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var config = evt.detail.requestConfig;
    var cause = config && config.triggeringEvent;
    liveSwap = Boolean(cause && cause.type === "live-refresh") || selfRefreshing(evt.detail.elt);
    if (liveSwap) {
      keepEdited(evt, evt.detail.target);
    }
  });
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    if (liveSwap) {
      keepEdited(evt, evt.detail.target);
    }
  });

  document.addEventListener("htmx:configRequest", function (evt) {
    if (evt.detail.elt && evt.detail.elt.hasAttribute("data-live-source")) {
      evt.detail.parameters.parts = live.parts.join(",");
    }
  });

  // The diagram's state comes with the live source's answer, in #diagram-state.
  function liveState(evt) {
    if (live.parts.indexOf("diagram") < 0) {
      return;
    }
    var holder = document.getElementById("diagram-state");
    var detail = null;
    if (!evt.detail.successful) {
      var status = evt.detail.xhr ? evt.detail.xhr.status : 0;
      detail = { error: "its state could not be loaded (" + status + ")" };
    } else if (holder && holder.hasAttribute("data-state")) {
      try {
        detail = { state: JSON.parse(holder.getAttribute("data-state")) };
      } catch (e) {
        detail = { error: "its state could not be read" };
      }
      holder.removeAttribute("data-state");
    }
    if (detail) {
      document.dispatchEvent(new CustomEvent("interlock:state", { detail: detail }));
    }
  }

  document.addEventListener("htmx:afterRequest", function (evt) {
    var config = evt.detail.requestConfig;
    var cause = config && config.triggeringEvent;
    if (!cause || cause.type !== "live-refresh" || !evt.detail.elt) {
      return;
    }
    liveSwap = false;
    if (evt.detail.elt.hasAttribute("data-live-source")) {
      liveState(evt);
    }
    live.busy = Math.max(0, live.busy - 1);
    if (!live.busy) {
      schedule();
    }
  });

  // `foreign`: the event is another instance's of the family the page follows (the inspector
  // follows its instance's whole family); only elements that list "family" want those.
  function refreshAll(eventName, foreign) {
    document.querySelectorAll("[data-live]").forEach(function (el) {
      var wanted = el.getAttribute("data-live").split(/\s+/);
      if (foreign) {
        if (wanted.indexOf("family") >= 0) {
          refresh(el);
        }
        return;
      }
      if (!eventName || wanted.indexOf("*") >= 0 || wanted.indexOf(eventName) >= 0) {
        refresh(el);
      }
    });
  }

  // The instance the page shows, if it shows one (the inspector).
  function pageInstance() {
    var host = document.querySelector("[data-page-instance]");
    return host ? host.getAttribute("data-page-instance") : null;
  }
  Interlock.refreshAll = refreshAll;

  function setStatus(state, text) {
    var status = document.getElementById("live-status");
    if (status) {
      status.setAttribute("data-state", state);
      status.textContent = text;
    }
  }

  function onMessage(evt) {
    var seq = Number(evt.lastEventId || 0);
    Interlock.received.push([seq, evt.type]);
    if (evt.type === "database") {
      var state = {};
      try {
        state = JSON.parse(evt.data || "{}") || {};
      } catch (e) {
        state = {};
      }
      showUnavailable(state.up === false);
      if (state.up === true) {
        refreshAll(null);
      }
      return;
    }
    if (evt.type === "ready") {
      showUnavailable(false);
      // Subscribed and caught up: what the page shows may predate the subscription.
      Interlock.cursor = seq;
      Interlock.lastSeq = Math.max(Interlock.lastSeq, seq);
      setStatus("live", "live");
      refreshAll(null);
      document.dispatchEvent(new CustomEvent("interlock:resync"));
      return;
    }
    if (evt.type === "reconnect") {
      // The server is shutting down: the stream ends and the browser opens it again (to
      // another replica), resuming after this id.
      Interlock.lastSeq = Math.max(Interlock.lastSeq, seq);
      setStatus("down", "reconnecting…");
      return;
    }
    if (seq && seq <= Interlock.lastSeq) {
      return;
    }
    if (seq) {
      Interlock.lastSeq = seq;
    }
    var data = {};
    try {
      data = JSON.parse(evt.data || "{}") || {};
    } catch (e) {
      data = {};
    }
    if (evt.type === "resync") {
      refreshAll(null);
      document.dispatchEvent(new CustomEvent("interlock:resync"));
      return;
    }
    Interlock.events.push({
      seq: seq,
      event: evt.type,
      instance_id: data.instance_id || null,
      node_id: data.node_id || null,
    });
    if (Interlock.events.length > 20000) {
      Interlock.events.splice(0, 10000);
      Interlock.received.splice(0, 10000);
    }
    var own = pageInstance();
    refreshAll(evt.type, Boolean(own && data.instance_id && data.instance_id !== own));
    document.dispatchEvent(new CustomEvent("interlock:event", { detail: data }));
  }

  // A stream opened again after a break resumes after the last event this page saw.
  htmx.createEventSource = function (url) {
    if (Interlock.lastSeq > 0) {
      var target = new URL(url, window.location.href);
      target.searchParams.set("after", String(Interlock.lastSeq));
      url = target.pathname + target.search;
    }
    return new EventSource(url, { withCredentials: true });
  };

  var wired = new WeakSet();
  document.addEventListener("htmx:sseOpen", function (evt) {
    var source = evt.detail.source;
    var host = evt.detail.elt || evt.target;
    Interlock.source = source;
    Interlock.opens += 1;
    if (source && !wired.has(source)) {
      wired.add(source);
      ("ready reconnect database " + (host.getAttribute("data-events") || "")).split(/\s+/).forEach(function (name) {
        if (name) {
          source.addEventListener(name, onMessage);
        }
      });
    }
  });
  document.addEventListener("htmx:sseError", function () {
    setStatus("down", "reconnecting…");
    checkHealth();  // the stream cannot say why it broke; /health can
  });

  document.addEventListener("interlock:changed", function () {
    refreshAll(null);
    document.dispatchEvent(new CustomEvent("interlock:resync"));
  });

  // -- node filter (inspector) -------------------------------------------------------------------

  document.addEventListener("change", function (evt) {
    if (evt.target && evt.target.id === "node-filter") {
      refreshAll(null);
      document.dispatchEvent(new CustomEvent("interlock:node", { detail: evt.target.value }));
    }
  });

  // -- selections that survive live refreshes, and bulk retry ------------------------------------

  var selected = new Set();
  document.addEventListener("change", function (evt) {
    var box = evt.target;
    if (box && box.matches && box.matches("input[data-select]")) {
      if (box.checked) { selected.add(box.value); } else { selected.delete(box.value); }
    }
    if (box && box.matches && box.matches("input[data-select-all]")) {
      document.querySelectorAll("input[data-select]").forEach(function (b) {
        b.checked = box.checked;
        if (box.checked) { selected.add(b.value); } else { selected.delete(b.value); }
      });
    }
  });
  // After any swap (an out-of-band one's event target is not the part swapped in), the boxes on
  // the page show the selection kept across refreshes.
  function reselect() {
    document.querySelectorAll("input[data-select]").forEach(function (b) {
      b.checked = selected.has(b.value);
    });
  }
  document.addEventListener("htmx:afterSwap", reselect);
  document.addEventListener("htmx:oobAfterSwap", reselect);

  function postRetry(id) {
    return fetch("/incidents/" + encodeURIComponent(id) + "/retry", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf(), "HX-Request": "true" },
      credentials: "same-origin",
    }).then(function (response) {
      return response.text().then(function (text) {
        return { id: id, ok: response.ok, text: text };
      });
    }, function () {
      return { id: id, ok: false, text: "network error" };
    });
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("button[data-bulk-retry]");
    if (!button) {
      return;
    }
    var ids = Array.from(selected).filter(function (id) {
      return document.querySelector('input[data-select][value="' + CSS.escape(id) + '"]');
    });
    var out = document.getElementById(button.getAttribute("data-bulk-retry"));
    var bar = out.querySelector("progress");
    var text = out.querySelector("[data-progress-text]");
    var errors = out.querySelector("[data-progress-errors]");
    if (!ids.length) {
      text.textContent = "Select incidents first.";
      return;
    }
    var done = 0, failed = 0, next = 0;
    bar.max = ids.length;
    bar.value = 0;
    bar.hidden = false;
    errors.textContent = "";
    button.disabled = true;
    out.setAttribute("data-running", "true");
    var show = function () {
      bar.value = done;
      text.textContent = done + " of " + ids.length + " retried" + (failed ? ", " + failed + " failed" : "");
    };
    show();
    var worker = function () {
      if (next >= ids.length) {
        return Promise.resolve();
      }
      var id = ids[next++];
      return postRetry(id).then(function (result) {
        done += 1;
        if (result.ok) {
          selected.delete(id);
        } else {
          failed += 1;
          var item = document.createElement("li");
          var doc = new DOMParser().parseFromString(result.text, "text/html");
          item.textContent = id.slice(0, 8) + ": " + (doc.body.textContent || "").trim().replace(/\s+/g, " ");
          errors.appendChild(item);
        }
        show();
        return worker();
      });
    };
    Promise.all([worker(), worker(), worker(), worker()]).then(function () {
      button.disabled = false;
      out.setAttribute("data-running", "false");
      text.textContent = "Done: " + (done - failed) + " of " + ids.length + " retried" + (failed ? ", " + failed + " failed" : "") + ".";
      refreshAll(null);
    });
  });

  // Tests and tools can tell when the page's controls answer: the console's handlers and htmx's
  // are in place once the document is parsed.
  document.addEventListener("DOMContentLoaded", function () {
    document.documentElement.setAttribute("data-console", "ready");
  });
})();
