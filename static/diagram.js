// The process diagram of the inspector and the definition page: bpmn-js NavigatedViewer with
// markers and badges from the page's state URL, refreshed on every event of the page's stream.
// Where each badge goes is static/badges.js's business.

import { Badges } from "./badges.js";

const host = document.getElementById("diagram");

const OVERLAY = "interlock";
const GHOST = "interlock-ghost";

function el(tag, className, text, title) {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  if (title) {
    node.title = title;
  }
  return node;
}

function plural(count, word) {
  return count + " " + word + (count === 1 ? "" : "s");
}

// The line under the diagram that says what went wrong with it (role="alert"), made when the page
// has none.
function errorLine(container) {
  let line = document.getElementById("diagram-error");
  if (!line) {
    line = el("p", "diagram-error", "");
    line.id = "diagram-error";
    line.setAttribute("role", "alert");
    container.after(line);
  }
  return line;
}

// The diagram's XML; the server says whether its layout was generated at deployment (the
// model had none) or is the model's own.
async function source(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) {
    throw new Error("could not load the diagram (" + response.status + ")");
  }
  const generated = response.headers.get("X-Diagram-Layout") === "generated";
  return { xml: await response.text(), generated };
}

// The smallest default zoom: a task (100 units wide) stays at least 80 pixels wide. A diagram
// too large to fit at this zoom shows its start (left, and top when too tall) and pans.
const MIN_SCALE = 0.8;

// Fit the diagram with margins, the bottom one wide enough that nothing covers the watermark;
// `minScale`: the smallest zoom (a smaller pane shows the diagram's start and pans).
function fit(canvas, minScale = MIN_SCALE) {
  canvas.zoom("fit-viewport", "auto");
  const { inner, outer } = canvas.viewbox();
  const margin = { x: 28, top: 36, bottom: 60 };
  const scale = Math.max(
    minScale,
    Math.min(
      1.25,
      (outer.width - 2 * margin.x) / Math.max(inner.width, 1),
      (outer.height - margin.top - margin.bottom) / Math.max(inner.height, 1),
    ),
  );
  const width = outer.width / scale;
  const height = outer.height / scale;
  const spareX = width - inner.width - (2 * margin.x) / scale;
  const spareY = height - inner.height - (margin.top + margin.bottom) / scale;
  canvas.viewbox({
    x: inner.x - margin.x / scale - Math.max(0, spareX) / 2,
    y: inner.y - margin.top / scale - Math.max(0, spareY) / 2,
    width,
    height,
  });
}

class LiveDiagram {
  constructor(container) {
    this.container = container;
    this.kind = container.dataset.kind;
    this.markers = new Map();
    this.selected = null;
    this.serial = 0;
    this.applied = 0;
    this.timer = null;
    this.last = 0;
    this.mode = "tokens";
    this.state = null;
    this.throttle = Number(container.dataset.throttle || 100);
  }

  async start() {
    const { xml, generated } = await source(this.container.dataset.xml);
    this.container.dataset.layout = generated ? "generated" : "model";
    this.viewer = new window.BpmnJS({ container: this.container });
    await this.viewer.importXML(xml);
    this.canvas = this.viewer.get("canvas");
    this.registry = this.viewer.get("elementRegistry");
    this.badges = new Badges(this.viewer, this.container, (id) => this.clicked(this.registry.get(id)));
    fit(this.canvas);
    this.viewer.on("element.click", (event) => this.clicked(event.element));
    if (this.container.hasAttribute("data-part")) {
      // The page's live refresh brings the state (console.js): no request of its own.
      document.addEventListener("interlock:state", (event) => this.receive(event.detail));
    } else {
      document.addEventListener("interlock:event", () => this.schedule());
      document.addEventListener("interlock:resync", () => this.schedule());
    }
    document.addEventListener("interlock:node", (event) => this.select(event.detail || null));
    // The definition page's mode control (static/modes.js): "now" and "heatmap" switch here.
    const modes = document.querySelectorAll("#diagram-modes input[name=view]");
    const modeOf = (view) => (view === "heatmap" ? "heatmap" : "tokens");
    modes.forEach((input) => {
      if (input.checked) {
        this.mode = modeOf(input.value);
      }
      input.addEventListener("change", () => {
        if (input.value === "history") {
          return;
        }
        this.mode = modeOf(input.value);
        if (this.state) {
          this.apply(this.state);
        }
      });
    });
    await this.update();
  }

  // Say what went wrong under the diagram; null: nothing is wrong (any earlier message goes).
  report(text) {
    const line = errorLine(this.container);
    line.textContent = text || "";
    line.hidden = !text;
  }

  // Refresh, and show a failure until a later refresh succeeds. Unreachable while the server
  // restarts: the stream's next event or resync asks again, and the diagram shows it is stale.
  async update() {
    try {
      await this.refresh();
    } catch (error) {
      this.stale(error.message);
      return;
    }
    this.stale(null);
  }

  // Mark the diagram out of date because of `problem`; null: it is up to date.
  stale(problem) {
    this.container.classList.toggle("stale", Boolean(problem));
    this.report(problem ? "The diagram is not up to date: " + problem + ". It is updated again with the next change." : null);
  }

  // A state, or the problem loading it ({state} or {error}), from the page's live refresh.
  receive(detail) {
    if (detail.error) {
      this.stale(detail.error);
      return;
    }
    const serial = ++this.serial;
    this.applied = serial;
    this.show(detail.state, serial);
    this.stale(null);
  }

  show(state, serial) {
    this.state = state;
    this.apply(state);
    this.container.dataset.ready = "true";
    this.container.dataset.serial = String(serial);
  }

  schedule() {
    if (this.timer) {
      return;
    }
    const delay = Math.max(0, this.last + this.throttle - Date.now());
    this.timer = window.setTimeout(() => {
      this.timer = null;
      this.last = Date.now();
      this.update();
    }, delay);
  }

  async refresh() {
    const serial = ++this.serial;
    const response = await fetch(this.container.dataset.state, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (serial < this.applied) {
      return;
    }
    if (!response.ok) {
      throw new Error("its state could not be loaded (" + response.status + ")");
    }
    const state = await response.json();
    if (serial < this.applied) {
      return;
    }
    this.applied = serial;
    this.show(state, serial);
  }

  mark(id, className) {
    if (!this.registry.get(id)) {
      return false;
    }
    this.canvas.addMarker(id, className);
    if (!this.markers.has(id)) {
      this.markers.set(id, new Set());
    }
    this.markers.get(id).add(className);
    return true;
  }

  clear() {
    this.badges.remove(OVERLAY);
    this.markers.forEach((classes, id) => {
      classes.forEach((className) => this.canvas.removeMarker(id, className));
    });
    this.markers.clear();
    if (this.selected) {
      this.mark(this.selected, "selected");
    }
  }

  // A badge of `kind` (see static/badges.js) on node `id`; `compact`: its shorter text.
  badge(id, kind, node, compact) {
    node.dataset.node = id;
    return this.badges.add(id, OVERLAY, kind, node, compact);
  }

  apply(state) {
    this.clear();
    if (this.kind === "instance") {
      this.applyInstance(state);
    } else {
      this.applyDefinition(state);
    }
    this.badges.place();
  }

  applyInstance(state) {
    (state.completed || []).forEach((id) => this.mark(id, "done"));
    (state.flows || []).forEach((id) => this.mark(id, "taken"));
    Object.entries(state.flow_counts || {}).forEach(([id, count]) => this.flowCount(id, count));
    Object.entries(state.tokens || {}).forEach(([id, info]) => {
      // Tokens running a compensation handler are drawn in their own colour.
      const compensating = info.compensation > 0;
      if (this.mark(id, compensating ? "has-compensation" : "has-token")) {
        const states = Object.entries(info.states).map(([s, n]) => n + " " + s).join(", ");
        const title = plural(info.count, "token") + ": " + states + (compensating ? ", " + info.compensation + " compensating" : "");
        const badge = el("div", "badge token-badge" + (compensating ? " compensation-badge" : ""), String(info.count), title);
        this.badge(id, "token", badge);
      }
    });
    Object.entries(state.joins || {}).forEach(([id, join]) => {
      const expected = join.expected === null ? "?" : join.expected;
      const inclusive = join.upstream !== null && join.upstream !== undefined;
      const badge = inclusive
        ? el("div", "badge join-badge", join.arrived + "/?", join.arrived + " arrived, waiting for " + plural(join.upstream, "live upstream token"))
        : el("div", "badge join-badge", join.arrived + "/" + expected, join.arrived + " of " + expected + " branches arrived");
      this.mark(id, "join-waiting");
      this.badge(id, "join", badge);
    });
    Object.entries(state.gateway_waits || {}).forEach(([id, events]) => {
      const badge = el("div", "badge wait-badge", plural(events.length, "event"), "waiting for: " + events.join(", "));
      this.badge(id, "join", badge, String(events.length));
    });
    Object.entries(state.loops || {}).forEach(([id, loop]) => {
      const total = loop.total === null ? "?" : loop.total;
      const title = loop.completed + " of " + total + " iterations completed, " + loop.active + " active";
      const badge = el("div", "badge loop-badge", loop.completed + "/" + total, title);
      this.badge(id, "loop", badge);
    });
    Object.entries(state.incidents || {}).forEach(([id, count]) => {
      if (this.mark(id, "has-incident")) {
        const badge = el("div", "badge incident-badge", plural(count, "incident"), plural(count, "open incident"));
        this.badge(id, "incident", badge, String(count));
      }
    });
    Object.entries(state.calls || {}).forEach(([id, call]) => this.applyCall(id, call));
  }

  // How often a sequence flow taken more than once was taken: a label at its middle.
  flowCount(id, count) {
    const connection = this.registry.get(id);
    if (!connection || !connection.waypoints || !connection.waypoints.length) {
      return;
    }
    const points = connection.waypoints;
    const a = points[Math.floor((points.length - 1) / 2)];
    const b = points[Math.floor(points.length / 2)];
    const badge = el("div", "badge flow-count-badge", "\u00d7" + count, "taken " + count + " times");
    badge.dataset.flow = id;
    this.badges.add(id, OVERLAY, "flow", badge);
  }

  // A call activity: a link to the instance it called (to the list of them when it called
  // several), and the open incidents of the called instances and those below them.
  applyCall(id, call) {
    const instances = call.instances || [];
    if (!instances.length || !this.registry.get(id)) {
      return;
    }
    const link = document.createElement("a");
    link.className = "badge call-badge";
    link.dataset.node = id;
    if (instances.length === 1) {
      const only = instances[0];
      link.href = "/instances/" + encodeURIComponent(only.id);
      link.textContent = "called " + only.id.slice(-8);
      link.title = "Open the called instance " + only.id + " (" + only.state + ")";
      link.dataset.instance = only.id;
    } else {
      const caller = this.state ? this.state.instance_id : "";
      link.href = "/instances?called_by=" + encodeURIComponent(caller);
      link.textContent = plural(instances.length, "called instance");
      link.title = "List the " + instances.length + " instances this call activity called";
    }
    this.badge(id, "call", link, "called");
    if (call.incidents) {
      this.mark(id, "has-incident");
      const badge = el(
        "div",
        "badge incident-badge called-incident-badge",
        plural(call.incidents, "incident") + " in called",
        plural(call.incidents, "open incident") + " in the called instances",
      );
      this.badge(id, "called-incident", badge, String(call.incidents));
    }
  }

  applyDefinition(state) {
    const nodes = state.nodes || {};
    if (state.history) {
      this.applyHistory(nodes);
      return;
    }
    if (this.mode === "heatmap") {
      const max = Math.max(1, ...Object.values(nodes).map((n) => n.visits));
      Object.entries(nodes).forEach(([id, n]) => {
        if (!n.visits) {
          return;
        }
        const level = Math.min(5, Math.max(1, Math.ceil((n.visits / max) * 5)));
        if (this.mark(id, "heat-" + level)) {
          const text = n.visits + (n.average ? " · " + n.average : "");
          const badge = el("div", "badge heat-badge", text, plural(n.visits, "visit") + (n.average ? ", average " + n.average : ""));
          this.badge(id, "figure", badge, String(n.visits));
        }
      });
      return;
    }
    Object.entries(nodes).forEach(([id, n]) => {
      if (n.active_tokens && this.mark(id, "has-token")) {
        const badge = el("div", "badge token-badge", String(n.active_tokens), plural(n.active_tokens, "active token"));
        this.badge(id, "token", badge);
      }
      if (n.open_incidents && this.mark(id, "has-incident")) {
        const badge = el("div", "badge incident-badge", plural(n.open_incidents, "incident"), plural(n.open_incidents, "open incident"));
        this.badge(id, "incident", badge, String(n.open_incidents));
      }
    });
  }

  // The history of a period: a heat level by visits, the visits with their average and 95th
  // percentile durations, and the incidents created in the period.
  applyHistory(nodes) {
    const max = Math.max(1, ...Object.values(nodes).map((n) => n.visits));
    Object.entries(nodes).forEach(([id, n]) => {
      if (n.visits) {
        const level = Math.min(5, Math.max(1, Math.ceil((n.visits / max) * 5)));
        if (this.mark(id, "heat-" + level)) {
          const times = n.average ? " · " + n.average + " · p95 " + n.p95 : "";
          const title = plural(n.visits, "visit") + (n.average ? ", average " + n.average + ", 95th percentile " + n.p95 : "");
          const badge = el("div", "badge heat-badge history-badge", n.visits + times, title);
          this.badge(id, "figure", badge, String(n.visits));
        }
      }
      if (n.incidents && this.mark(id, "has-incident")) {
        const badge = el("div", "badge incident-badge", plural(n.incidents, "incident"), plural(n.incidents, "incident") + " in the period");
        this.badge(id, "incident", badge, String(n.incidents));
      }
    });
  }

  select(id) {
    if (this.selected) {
      this.canvas.removeMarker(this.selected, "selected");
    }
    this.selected = id && this.registry.get(id) ? id : null;
    if (this.selected) {
      this.canvas.addMarker(this.selected, "selected");
    }
  }

  // Where the tokens would be after a modification the operator previews (modify.js): a
  // dashed badge per node with its count; null takes them away.
  ghosts(tokens) {
    if (!this.badges) {
      return; // not drawn (yet): nothing to show them on
    }
    this.badges.remove(GHOST);
    Object.entries(tokens || {}).forEach(([id, count]) => {
      const badge = el("div", "badge ghost-badge", String(count), "after the modification: " + plural(count, "token"));
      badge.dataset.node = id;
      this.badges.add(id, GHOST, "ghost", badge);
    });
    this.badges.place();
  }

  clicked(element) {
    const filter = document.getElementById("node-filter");
    if (!filter || !element || element.type === "label") {
      return;
    }
    const id = element.businessObject && element.businessObject.id;
    // A modification being put together may take the click (modify.js), not the panel filter.
    if (!document.dispatchEvent(new CustomEvent("interlock:pick", { detail: id, cancelable: true }))) {
      return;
    }
    const known = Array.from(filter.options).some((option) => option.value === id);
    filter.value = known && this.selected !== id ? id : "";
    filter.dispatchEvent(new Event("change", { bubbles: true }));
  }
}

if (host) {
  const diagram = new LiveDiagram(host);
  window.InterlockDiagram = diagram;
  diagram.ready = diagram.start().catch((error) => {
    host.classList.add("failed");
    diagram.report("The diagram could not be drawn: " + error.message);
    host.dataset.ready = "error";
  });
}

// Diagrams drawn without state ([data-diagram-static]: the migration page's source and target,
// side by side): the viewer alone, the whole diagram fitted into its pane, again when the pane
// changes size. The viewer is the container's `interlockViewer`, and the container says
// `interlock:static-ready` when it is drawn (migration.js adds to it).
async function drawStatic(container) {
  const { xml } = await source(container.dataset.xml);
  const viewer = new window.BpmnJS({ container });
  await viewer.importXML(xml);
  const canvas = viewer.get("canvas");
  fit(canvas, 0);
  let width = container.clientWidth;
  let height = container.clientHeight;
  new ResizeObserver(() => {
    if (container.clientWidth !== width || container.clientHeight !== height) {
      width = container.clientWidth;
      height = container.clientHeight;
      canvas.resized();
      fit(canvas, 0);
    }
  }).observe(container);
  markUnmapped(viewer, container);
  container.interlockViewer = viewer;
  container.dataset.ready = "true";
  container.dispatchEvent(new CustomEvent("interlock:static-ready", { bubbles: true }));
  return viewer;
}

// The source diagram of a plan ([data-plan-form]: the form with a `target:<node>` select per
// node) marks the nodes that have no mapping, again whenever a select changes.
function markUnmapped(viewer, container) {
  const form = document.getElementById(container.dataset.planForm || "");
  if (!form) {
    return;
  }
  const canvas = viewer.get("canvas");
  const registry = viewer.get("elementRegistry");
  const marked = new Set();
  const update = () => {
    marked.forEach((id) => canvas.removeMarker(id, "unmapped"));
    marked.clear();
    form.querySelectorAll("select[name^='target:']").forEach((select) => {
      const id = select.name.slice("target:".length);
      if (!select.value && registry.get(id)) {
        canvas.addMarker(id, "unmapped");
        marked.add(id);
      }
    });
    container.dataset.unmapped = Array.from(marked).sort().join(" ");
  };
  form.addEventListener("change", update);
  update();
}

document.querySelectorAll("[data-diagram-static]").forEach((container) => {
  drawStatic(container).catch((error) => {
    const line = el("p", "diagram-error", "The diagram could not be drawn: " + error.message);
    line.setAttribute("role", "alert");
    container.after(line);
    container.dataset.ready = "error";
  });
});
