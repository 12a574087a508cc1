// Badges on a bpmn-js diagram (counts, figures, incidents), placed so that none covers another
// badge, a label, a task's type icon, an event, a gateway or the bpmn.io watermark, at any zoom.
//
// A node's badges of one layer live in one overlay at the node's top-left corner that keeps its
// size at every zoom: inside it, badges are laid out in screen pixels. After every render and
// every zoom or pan, `place` gives each badge, most important first, the first spot around its
// node that covers nothing it must not: next to the shape with its full text, then a row or two
// further out, then in its compact form (the full text stays in its title). A badge with no such
// spot takes the one that covers least; one that would cover a badge, a label or an icon
// wherever it went is hidden until a later pass finds it room.

const GAP = 3;
// Pixels kept free around each badge, so that neighbours never touch.
const MARGIN = 1;
// How many rows further out a badge may go above or below its node.
const RINGS = 2;

// Where each kind of badge would rather be, most wanted first ("+1": a row further out); every
// badge then tries the rest.
const SPOTS = [
  "top", "top-left", "top-right", "bottom", "bottom-left", "bottom-right",
  "right", "right-top", "right-bottom", "left", "left-top", "left-bottom",
];
const PREFERRED = {
  token: ["corner-top-right", "top-right", "right-top"],
  incident: ["top-left", "left-top", "bottom-left"],
  join: ["left-top", "top-left", "top-right"],
  loop: ["corner-bottom-right", "bottom-right", "right-bottom"],
  call: ["bottom-left", "bottom"],
  "called-incident": ["bottom-right", "bottom"],
  ghost: ["corner-bottom-left", "bottom-left", "left-bottom"],
  figure: ["top", "top-left", "top-right", "top+1", "top-left+1", "top-right+1", "bottom", "right", "left"],
  flow: ["center", "top", "bottom", "right", "left"],
};
// The order badges are placed in: what an operator must see first gets the best spots.
const RANK = ["incident", "called-incident", "token", "join", "loop", "call", "ghost", "flow", "figure"];

function rect(x, y, w, h) {
  return { x, y, w, h, right: x + w, bottom: y + h };
}

function overlap(a, b) {
  const w = Math.min(a.right, b.right) - Math.max(a.x, b.x);
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function grown(r, by) {
  return rect(r.x - by, r.y - by, r.w + 2 * by, r.h + 2 * by);
}

// The top-left corner of a w x h badge at `name` around box `b`, `ring` rows further out; own:
// the spot may cover its own node's shape (a chip on its corner).
function spot(name, b, w, h, ring) {
  const up = b.y - h - GAP - ring * (h + GAP);
  const down = b.bottom + GAP + ring * (h + GAP);
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  const table = {
    top: [cx - w / 2, up],
    "top-left": [b.x, up],
    "top-right": [b.right - w, up],
    bottom: [cx - w / 2, down],
    "bottom-left": [b.x, down],
    "bottom-right": [b.right - w, down],
    right: [b.right + GAP, cy - h / 2],
    "right-top": [b.right + GAP, b.y],
    "right-bottom": [b.right + GAP, b.bottom - h],
    left: [b.x - w - GAP, cy - h / 2],
    "left-top": [b.x - w - GAP, b.y],
    "left-bottom": [b.x - w - GAP, b.bottom - h],
    "corner-top-right": [b.right - w / 2, b.y - h / 2],
    "corner-bottom-right": [b.right - w / 2, b.bottom - h / 2],
    "corner-bottom-left": [b.x - w / 2, b.bottom - h / 2],
    center: [cx - w / 2, cy - h / 2],
  };
  const [x, y] = table[name];
  return { ...rect(x, y, w, h), own: name.startsWith("corner") || name === "center" };
}

function stacks(name) {
  return name.startsWith("top") || name.startsWith("bottom");
}

// A task's visual: its outline, its name, then its icon and markers.
const ACTIVITY = /(Task|SubProcess|CallActivity|Transaction)$/;

export class Badges {
  // `clicked(id)`: a click on a badge (not a link) is a click on its node.
  constructor(viewer, container, clicked) {
    this.canvas = viewer.get("canvas");
    this.overlays = viewer.get("overlays");
    this.registry = viewer.get("elementRegistry");
    this.container = container;
    this.clicked = clicked;
    this.items = [];
    this.groups = new Map();
    this.passes = 0;
    this.measure = document.createElement("div");
    this.measure.className = "badge-measure";
    this.measure.setAttribute("aria-hidden", "true");
    // Beside the overlays, so that badges are measured in the font they are drawn in.
    this.canvas.getContainer().append(this.measure);
    // After bpmn-js has moved its overlays (priority 1000).
    viewer.on("canvas.viewbox.changed", 500, () => this.place());
    viewer.on("canvas.resized", 500, () => this.place());
  }

  // Add `node` (a badge element) to element `id`'s badges of `layer`; `kind` picks its spots and
  // rank; `compact`: its shorter text, when it has one. False when the diagram has no `id`.
  add(id, layer, kind, node, compact) {
    const element = this.registry.get(id);
    if (!element) {
      return false;
    }
    const key = layer + " " + id;
    let group = this.groups.get(key);
    if (!group) {
      group = document.createElement("div");
      group.className = "badge-group";
      this.overlays.add(id, layer, { position: { top: 0, left: 0 }, html: group, scale: false });
      this.groups.set(key, group);
    }
    const full = node.textContent;
    if (!node.title) {
      node.title = full;
    }
    node.dataset.kind = kind;
    if (this.clicked && node.tagName !== "A" && !element.waypoints) {
      node.addEventListener("click", () => this.clicked(id));
    }
    group.append(node);
    this.items.push({ id, layer, kind, node, full, compact: compact && compact !== full ? compact : null, size: null });
    return true;
  }

  // Take away the badges of `layer` (their overlays go with them).
  remove(layer) {
    this.overlays.remove({ type: layer });
    this.items = this.items.filter((item) => item.layer !== layer);
    Array.from(this.groups.keys())
      .filter((key) => key.startsWith(layer + " "))
      .forEach((key) => this.groups.delete(key));
  }

  // Each badge's size, full and compact, measured where no overlay hides it.
  sizes() {
    const todo = this.items.filter((item) => !item.size);
    if (!todo.length) {
      return;
    }
    const homes = todo.map((item) => item.node.parentNode);
    todo.forEach((item) => {
      item.node.textContent = item.full;
      item.node.style.left = "0px";
      item.node.style.top = "0px";
      this.measure.append(item.node);
    });
    todo.forEach((item) => {
      item.size = { full: [item.node.offsetWidth, item.node.offsetHeight] };
    });
    todo.forEach((item) => {
      if (item.compact) {
        item.node.textContent = item.compact;
      }
    });
    todo.forEach((item) => {
      item.size.compact = [item.node.offsetWidth, item.node.offsetHeight];
    });
    todo.forEach((item, index) => homes[index].append(item.node));
  }

  // The element's box on screen, relative to the canvas; a connection's is its middle.
  box(element, viewbox) {
    const s = viewbox.scale;
    if (element.waypoints) {
      const points = element.waypoints;
      const a = points[Math.floor((points.length - 1) / 2)];
      const b = points[Math.floor(points.length / 2)];
      return rect(((a.x + b.x) / 2 - viewbox.x) * s, ((a.y + b.y) / 2 - viewbox.y) * s, 0, 0);
    }
    return rect((element.x - viewbox.x) * s, (element.y - viewbox.y) * s, element.width * s, element.height * s);
  }

  // Where the overlay of `element` puts its top-left corner (bpmn-js: the element's bounding
  // box, a connection's waypoints').
  origin(element, viewbox) {
    const s = viewbox.scale;
    if (element.waypoints) {
      const x = Math.min(...element.waypoints.map((p) => p.x));
      const y = Math.min(...element.waypoints.map((p) => p.y));
      return [(x - viewbox.x) * s, (y - viewbox.y) * s];
    }
    return [(element.x - viewbox.x) * s, (element.y - viewbox.y) * s];
  }

  // What badges must not cover (hard) and would rather not (soft), in canvas pixels.
  obstacles(viewbox, frame) {
    const hard = [];
    const shapes = [];
    const lines = [];
    const relative = (r) => rect(r.left - frame.left, r.top - frame.top, r.width, r.height);
    this.container.querySelectorAll(".djs-element text.djs-label").forEach((text) => {
      const r = text.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) {
        hard.push({ ...relative(r), owner: null });
      }
    });
    const watermark = this.container.querySelector(".bjs-powered-by");
    if (watermark) {
      hard.push({ ...grown(relative(watermark.getBoundingClientRect()), 4), owner: null });
    }
    this.registry.getAll().forEach((element) => {
      if (element.waypoints) {
        const s = viewbox.scale;
        element.waypoints.slice(1).forEach((b, index) => {
          const a = element.waypoints[index];
          const x = (Math.min(a.x, b.x) - viewbox.x) * s;
          const y = (Math.min(a.y, b.y) - viewbox.y) * s;
          const line = grown(rect(x, y, Math.abs(a.x - b.x) * s, Math.abs(a.y - b.y) * s), 1.5);
          lines.push({ ...line, owner: element.id });
        });
        return;
      }
      if (element.type === "label" || !element.parent || element.labelTarget) {
        return;
      }
      const box = this.box(element, viewbox);
      const type = element.type || "";
      if (ACTIVITY.test(type)) {
        shapes.push({ ...box, owner: element.id });
        const visual = this.canvas.getGraphics(element).querySelector(".djs-visual");
        Array.from(visual ? visual.children : []).slice(1).forEach((part) => {
          if (part.tagName.toLowerCase() === "text") {
            return;
          }
          const r = part.getBoundingClientRect();
          if (r.width > 0 && r.height > 0) {
            hard.push({ ...relative(r), owner: null });
          }
        });
      } else if (/(Event|Gateway)$/.test(type)) {
        hard.push({ ...box, owner: element.id });
      } else if (!/(Process|Collaboration)$/.test(type)) {
        shapes.push({ ...box, owner: element.id });
      }
    });
    return { hard, shapes, lines };
  }

  // Lay every badge out again for the current zoom and scroll.
  place() {
    if (!this.items.length) {
      this.done();
      return;
    }
    const frame = this.canvas.getContainer().getBoundingClientRect();
    if (frame.width === 0 || frame.height === 0) {
      return; // not shown: the next zoom or render places them
    }
    this.sizes();
    const viewbox = this.canvas.viewbox();
    const { hard, shapes, lines } = this.obstacles(viewbox, frame);
    const view = rect(0, 0, frame.width, frame.height);
    const placed = [];
    // By rank, then left to right and top to bottom: the same state always looks the same.
    const order = this.items
      .map((item) => ({ item, box: this.box(this.registry.get(item.id), viewbox) }))
      .sort(
        (a, b) =>
          RANK.indexOf(a.item.kind) - RANK.indexOf(b.item.kind) ||
          a.box.x - b.box.x ||
          a.box.y - b.box.y ||
          a.item.id.localeCompare(b.item.id),
      );
    order.forEach(({ item, box }) => {
      const element = this.registry.get(item.id);
      // A badge may land a few badge sizes away from its node: near enough, it is placed.
      const [w, h] = item.size.full;
      const seen = overlap(grown(box, 2 * w + (RINGS + 2) * (h + GAP)), view) > 0;
      const chosen = seen ? this.choose(item, box, { hard, shapes, lines, placed, view }) : this.first(item, box);
      const [ox, oy] = this.origin(element, viewbox);
      if (!chosen) {
        item.node.hidden = true;
        item.node.dataset.placed = "none";
        return;
      }
      item.node.hidden = false;
      item.node.textContent = chosen.compact ? item.compact : item.full;
      item.node.classList.toggle("compact", chosen.compact);
      item.node.style.left = chosen.x - ox + "px";
      item.node.style.top = chosen.y - oy + "px";
      item.node.dataset.placed = chosen.name + (chosen.ring ? "+" + chosen.ring : "");
      if (seen) {
        placed.push(grown(chosen, MARGIN));
      }
    });
    this.done();
  }

  // Say on the container that a pass ended (data-badges counts them) and at which zoom.
  done() {
    this.passes += 1;
    this.container.dataset.badges = String(this.passes);
    this.container.dataset.badgesScale = String(this.canvas.viewbox().scale);
  }

  // Off screen: the first spot, no questions asked.
  first(item, box) {
    const name = (PREFERRED[item.kind] || SPOTS)[0];
    const [w, h] = item.size.full;
    return { ...spot(name, box, w, h, 0), name, ring: 0, compact: false };
  }

  // Every spot `item` may take around `box`, in the order it tries them; `wanted`: one of its
  // kind's preferred spots.
  candidates(item, box) {
    const preferred = PREFERRED[item.kind] || [];
    const spots = [...preferred];
    for (let ring = 0; ring <= RINGS; ring += 1) {
      SPOTS.filter((name) => !ring || stacks(name)).forEach((name) => spots.push(ring ? name + "+" + ring : name));
    }
    const found = [];
    [false, true].forEach((compact) => {
      if (compact && !item.compact) {
        return;
      }
      const [w, h] = compact ? item.size.compact : item.size.full;
      spots
        .filter((key, index) => spots.indexOf(key) === index)
        .forEach((key) => {
          const [name, ring] = key.split("+");
          if (box.w === 0 && name.startsWith("corner")) {
            return;
          }
          const rings = Number(ring || 0);
          const wanted = preferred.includes(key);
          found.push({ ...spot(name, box, w, h, rings), name, ring: rings, compact, wanted });
        });
    });
    return found;
  }

  // The spot for `item` around `box`, or null when every spot covers a badge, label or icon.
  choose(item, box, { hard, shapes, lines, placed, view }) {
    const scored = [];
    for (const c of this.candidates(item, box)) {
      const outer = grown(c, MARGIN);
      if (placed.some((r) => overlap(outer, r)) || hard.some((r) => r.owner !== item.id && overlap(outer, r))) {
        continue;
      }
      if (!c.own && hard.some((r) => r.owner === item.id && overlap(outer, r))) {
        continue;
      }
      let covered = 0;
      shapes.forEach((r) => {
        // The subprocess or pool around the node is no obstacle; its own shape is for a chip.
        const around = r.x <= box.x && r.y <= box.y && box.right <= r.right && box.bottom <= r.bottom;
        if ((r.owner !== item.id || !c.own) && !(around && r.owner !== item.id)) {
          covered += overlap(c, r);
        }
      });
      const crossed = lines.reduce((sum, r) => sum + (r.owner === item.id ? 0 : overlap(c, r)), 0);
      const outside = c.w * c.h - overlap(c, view);
      scored.push({ c, covered, crossed, outside });
    }
    const clean = (s) => s.covered === 0 && s.outside === 0;
    const near = (s) => s.c.ring === 0 || s.c.wanted;
    const levels = [
      (s) => !s.c.compact && near(s) && clean(s) && s.crossed === 0,
      (s) => !s.c.compact && near(s) && clean(s),
      (s) => !s.c.compact && clean(s),
      (s) => s.c.compact && clean(s),
    ];
    for (const level of levels) {
      const found = scored.find(level);
      if (found) {
        return found.c;
      }
    }
    let best = null;
    let least = Infinity;
    scored.forEach((s) => {
      const cost = s.covered + 0.2 * s.crossed + 3 * s.outside + 50 * s.c.ring + (s.c.compact ? 0 : 100);
      if (cost < least) {
        least = cost;
        best = s.c;
      }
    });
    return best;
  }
}
