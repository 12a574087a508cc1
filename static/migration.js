// The migration page: running tokens per node as badges on the source diagram, a line from each
// mapped source node to its target node across the two diagrams (drawn again whenever either
// diagram pans or zooms, the page resizes or the plan changes), both nodes highlighted while the
// pointer is on a plan row, and the migrate buttons armed only by an impact check, saying how
// many instances they migrate.

const section = document.querySelector(".migration-diagrams");
const sourceHost = document.getElementById("diagram-source");
const targetHost = document.getElementById("diagram-target");
const form = document.getElementById("migration-form");
const SVG = "http://www.w3.org/2000/svg";

function ready(container) {
  return new Promise((resolve) => {
    if (container.interlockViewer) {
      resolve(container.interlockViewer);
      return;
    }
    container.addEventListener("interlock:static-ready", () => resolve(container.interlockViewer), {
      once: true,
    });
  });
}

function plural(count, word) {
  return count + " " + word + (count === 1 ? "" : "s");
}

// -- token badges -------------------------------------------------------------------------------

function showTokens(viewer, counts) {
  const overlays = viewer.get("overlays");
  const registry = viewer.get("elementRegistry");
  overlays.remove({ type: "migration-tokens" });
  let shown = 0;
  Object.entries(counts || {}).forEach(([id, count]) => {
    if (!count || !registry.get(id)) {
      return;
    }
    const badge = document.createElement("span");
    badge.className = "migration-tokens";
    badge.textContent = String(count);
    badge.title = plural(count, "running token");
    badge.dataset.node = id;
    overlays.add(id, "migration-tokens", { position: { top: -10, right: 10 }, html: badge });
    shown += 1;
  });
  sourceHost.dataset.tokenBadges = String(shown);
}

// -- the mapping between the diagrams -----------------------------------------------------------

function pairs() {
  if (!form) {
    return [];
  }
  const found = [];
  form.querySelectorAll("select[name^='target:']").forEach((select) => {
    if (select.value) {
      found.push([select.name.slice("target:".length), select.value]);
    }
  });
  if (found.length === 0) {
    // Without controls (a reader's page) the rows name their targets.
    form.querySelectorAll("tr[data-node] td:nth-child(3) code").forEach((code) => {
      found.push([code.closest("tr").dataset.node, code.textContent.trim()]);
    });
  }
  return found;
}

function centre(container, id) {
  const shape = container.querySelector('.djs-element.djs-shape[data-element-id="' + CSS.escape(id) + '"] .djs-visual');
  if (!shape) {
    return null;
  }
  const box = shape.getBoundingClientRect();
  const pane = container.getBoundingClientRect();
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (x < pane.left || x > pane.right || y < pane.top || y > pane.bottom) {
    return null; // panned out of its pane
  }
  return { x, y };
}

let layer = null;

function drawLines() {
  if (!layer) {
    layer = document.createElementNS(SVG, "svg");
    layer.setAttribute("class", "migration-lines");
    layer.setAttribute("aria-hidden", "true");
    section.appendChild(layer);
  }
  const origin = section.getBoundingClientRect();
  layer.setAttribute("width", String(origin.width));
  layer.setAttribute("height", String(origin.height));
  layer.replaceChildren();
  let drawn = 0;
  pairs().forEach(([from, to]) => {
    const a = centre(sourceHost, from);
    const b = centre(targetHost, to);
    if (!a || !b) {
      return;
    }
    const line = document.createElementNS(SVG, "line");
    line.setAttribute("class", "mapping-line");
    line.setAttribute("x1", String(a.x - origin.left));
    line.setAttribute("y1", String(a.y - origin.top));
    line.setAttribute("x2", String(b.x - origin.left));
    line.setAttribute("y2", String(b.y - origin.top));
    line.dataset.source = from;
    line.dataset.target = to;
    layer.appendChild(line);
    drawn += 1;
  });
  section.dataset.lines = String(drawn);
}

let pending = false;
function scheduleLines() {
  if (pending) {
    return;
  }
  pending = true;
  window.requestAnimationFrame(() => {
    pending = false;
    drawLines();
  });
}

function highlight(sourceViewer, targetViewer, row, on) {
  const from = row.dataset.node;
  const to = pairs().find(([s]) => s === from);
  const toggle = (viewer, id) => {
    if (id && viewer.get("elementRegistry").get(id)) {
      const canvas = viewer.get("canvas");
      if (on) {
        canvas.addMarker(id, "mapping-hover");
      } else {
        canvas.removeMarker(id, "mapping-hover");
      }
    }
  };
  toggle(sourceViewer, from);
  toggle(targetViewer, to && to[1]);
  if (layer) {
    layer.querySelectorAll("line").forEach((line) => {
      line.classList.toggle("hover", on && line.dataset.source === from);
    });
  }
  row.classList.toggle("mapping-hover", on);
}

// -- the buttons, armed by an impact check --------------------------------------------------------

const buttons = document.getElementById("migration-buttons");
const expected = document.getElementById("migration-expected");

function disarm() {
  if (!buttons) {
    return;
  }
  expected.value = "";
  ["migration-run", "migration-batch"].forEach((id) => {
    const button = document.getElementById(id);
    button.disabled = true;
    button.textContent = id === "migration-run" ? "Migrate" : "Migrate as a batch";
  });
  const panel = document.querySelector("#migration-impact .migration-impact");
  if (panel) {
    panel.classList.add("stale");
  }
}

function arm(panel) {
  if (!buttons) {
    return;
  }
  const count = Number(panel.dataset.count || 0);
  const valid = panel.dataset.planValid === "true";
  const version = buttons.dataset.targetVersion;
  const most = Number(buttons.dataset.maxInstances || 0);
  const what = plural(count, "instance");
  expected.value = String(count);
  const run = document.getElementById("migration-run");
  run.disabled = !valid || count === 0 || count > most;
  run.textContent = "Migrate " + what;
  run.setAttribute("hx-confirm", "Migrate " + what + " to version " + version + "?");
  const batch = document.getElementById("migration-batch");
  batch.disabled = !valid || count === 0 || count > Number(buttons.dataset.maxItems || 0);
  batch.textContent = "Migrate " + what + " as a batch";
  batch.setAttribute("hx-confirm", "Migrate " + what + " to version " + version + " as a batch?");
}

async function start() {
  const [sourceViewer, targetViewer] = await Promise.all([ready(sourceHost), ready(targetHost)]);
  showTokens(sourceViewer, JSON.parse(sourceHost.dataset.tokens || "{}"));
  [sourceViewer, targetViewer].forEach((viewer) => {
    viewer.on("canvas.viewbox.changed", scheduleLines);
  });
  window.addEventListener("resize", scheduleLines);
  new ResizeObserver(scheduleLines).observe(section);
  if (form) {
    form.addEventListener("change", scheduleLines);
    form.querySelectorAll("tr[data-node]").forEach((row) => {
      row.addEventListener("mouseenter", () => highlight(sourceViewer, targetViewer, row, true));
      row.addEventListener("mouseleave", () => highlight(sourceViewer, targetViewer, row, false));
    });
  }
  drawLines();
  document.body.addEventListener("htmx:afterSwap", (event) => {
    const panel = event.detail.target.querySelector(".migration-impact");
    if (event.detail.target.id === "migration-impact" && panel) {
      showTokens(sourceViewer, JSON.parse(panel.dataset.tokens || "{}"));
    }
  });
}

if (section && sourceHost && targetHost) {
  start().catch((error) => {
    section.dataset.lines = "error";
    console.error(error);
  });
}

if (form) {
  form.addEventListener("change", disarm);
  form.addEventListener("input", disarm);
  document.body.addEventListener("htmx:afterSwap", (event) => {
    const target = event.detail.target;
    const panel = target.querySelector(".migration-impact");
    if (target.id === "migration-impact" && panel) {
      arm(panel);
    } else if (target.id === "migration-result") {
      disarm(); // what was checked has changed: check again before the next run
    }
  });
}
