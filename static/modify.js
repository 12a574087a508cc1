// The inspector's token modification, for operators: pick a token (its row in the tokens panel,
// the select, or its node on the diagram) and a target node, collect instructions, preview where
// the tokens would be (dashed badges on the diagram), then apply them in one step. The server
// checks the role and the CSRF token; htmx sends the token with every POST (console.js).
//
// Only what the engine would accept is offered: the card's `data-choices` say, per node, why a
// token cannot start before or after it (in the operator's words) and which flows to start on
// instead (a parallel join's incoming flows); nodes where nothing can start are not pickable.
// The card follows the instance's state live: gone once it ended, idle while suspended.

const card = document.getElementById("modify");

if (card) {
  const instance = card.dataset.instance;
  const tokenSelect = document.getElementById("modify-token");
  const targetSelect = document.getElementById("modify-target");
  const pick = document.getElementById("modify-pick");
  const list = document.getElementById("modify-instructions");
  const hint = document.getElementById("modify-hint");
  const preview = document.getElementById("modify-preview");
  const apply = document.getElementById("modify-apply");
  const result = document.getElementById("modify-result");
  const flowRow = document.getElementById("modify-flow-row");
  const flowSelect = document.getElementById("modify-flow");
  const refusal = document.getElementById("modify-refusal");
  const choices = JSON.parse(card.dataset.choices || "{}");
  const instructions = [];
  const button = (op) => card.querySelector('button[data-modify-op="' + op + '"]');

  const diagram = () => window.InterlockDiagram;
  const ghosts = (tokens) => diagram() && diagram().ghosts && diagram().ghosts(tokens);

  // The live tokens the tokens panel lists (kept current by the page's live refresh).
  const liveTokens = () =>
    Array.from(document.querySelectorAll("#tokens-body tr.token-live[data-token]")).map((row) => ({
      id: row.dataset.token,
      node: row.dataset.node,
      label: (row.cells[1] ? row.cells[1].textContent : row.dataset.node).trim().replace(/\s+/g, " "),
    }));

  const fillTokens = () => {
    const chosen = tokenSelect.value;
    tokenSelect.replaceChildren(new Option("choose a token", ""));
    liveTokens().forEach((token) => {
      tokenSelect.add(new Option(token.id.slice(-8) + " at " + token.label, token.id));
    });
    tokenSelect.value = Array.from(tokenSelect.options).some((o) => o.value === chosen) ? chosen : "";
  };

  const say = (text) => {
    hint.textContent = text;
  };

  const render = () => {
    list.replaceChildren();
    instructions.forEach((entry, index) => {
      const item = document.createElement("li");
      item.className = "modify-instruction";
      item.dataset.op = entry.op;
      item.textContent = entry.text + " ";
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "link";
      remove.textContent = "remove";
      remove.addEventListener("click", () => {
        instructions.splice(index, 1);
        ghosts(null);
        render();
      });
      item.append(remove);
      list.append(item);
    });
    preview.disabled = apply.disabled = instructions.length === 0;
  };

  const chosenToken = () => liveTokens().find((t) => t.id === tokenSelect.value);
  const target = () => targetSelect.value;
  const targetLabel = () => targetSelect.selectedOptions[0].textContent;
  const flowLabel = () => (flowSelect.selectedOptions[0] ? flowSelect.selectedOptions[0].textContent : "");

  // Why `op` cannot go to the chosen target (null: it can): the refusal the server words.
  const refused = (op) => {
    const choice = choices[target()];
    if (!choice) {
      return null;
    }
    if (op === "move" || op === "before") {
      return choice.before;
    }
    return op === "after" ? choice.after : null;
  };

  // The chosen target's refusals shown at once, the ops it refuses disabled, and the flows to
  // start on instead offered.
  const showTarget = () => {
    const choice = choices[target()] || { before: null, after: null, flows: [] };
    const reasons = [];
    ["move", "before", "after"].forEach((op) => {
      const why = refused(op);
      button(op).disabled = Boolean(why);
      button(op).title = why || "";
      if (why && reasons.indexOf(why) < 0) {
        reasons.push(why);
      }
    });
    refusal.textContent = reasons.join(" ");
    refusal.hidden = reasons.length === 0;
    const chosen = flowSelect.value;
    flowSelect.replaceChildren();
    choice.flows.forEach(([id, text]) => flowSelect.add(new Option(text + " (" + id + ")", id)));
    if (choice.flows.some(([id]) => id === chosen)) {
      flowSelect.value = chosen;
    }
    flowRow.hidden = choice.flows.length === 0;
  };

  const add = (op) => {
    const token = chosenToken();
    if ((op === "move" || op === "move-flow" || op === "cancel") && !token) {
      say("Choose a token first.");
      return;
    }
    if (op !== "cancel" && !target()) {
      say("Choose a target node first.");
      return;
    }
    if ((op === "flow" || op === "move-flow") && !flowSelect.value) {
      say("Choose a flow to start on first.");
      return;
    }
    const why = refused(op);
    if (why) {
      say(why);
      return;
    }
    const name = token ? "token " + token.id.slice(-8) + " at " + token.label : "";
    if (op === "move-flow") {
      instructions.push({ op: "cancel", token: token.id, text: "Move " + name + " onto the flow " + flowLabel() + ":" });
      instructions.push({ op: "flow", flow: flowSelect.value, text: "…start on the flow " + flowLabel() });
    } else if (op === "flow") {
      instructions.push({ op: "flow", flow: flowSelect.value, text: "Add a token on the flow " + flowLabel() });
    } else if (op === "move") {
      instructions.push({ op: "cancel", token: token.id, text: "Move " + name + " to " + targetLabel() + ":" });
      instructions.push({ op: "before", node: target(), text: "…start before " + targetLabel() });
    } else if (op === "cancel") {
      instructions.push({ op: "cancel", token: token.id, text: "Cancel " + name });
    } else {
      instructions.push({ op, node: target(), text: "Add a token " + op + " " + targetLabel() });
    }
    say(instructions.length + " instruction" + (instructions.length === 1 ? "" : "s") + ": preview or apply them.");
    ghosts(null);
    render();
  };

  const body = () => JSON.stringify(instructions.map(({ op, token, node, flow }) => ({ op, token, node, flow })));

  const post = (path, values) =>
    window.htmx.ajax("POST", "/instances/" + encodeURIComponent(instance) + path, {
      target: "#modify-result",
      swap: "innerHTML",
      values,
    });

  card.querySelectorAll("button[data-modify-op]").forEach((button) => {
    button.addEventListener("click", () => add(button.dataset.modifyOp));
  });
  preview.addEventListener("click", () => post("/modify/preview", { instructions: body() }));
  apply.addEventListener("click", () =>
    post("/modify", { instructions: body(), annotation: document.getElementById("modify-annotation").value }),
  );
  document.getElementById("modify-clear").addEventListener("click", () => {
    instructions.length = 0;
    ghosts(null);
    result.replaceChildren();
    say("Cleared.");
    render();
  });

  // A preview draws its positions on the diagram; an applied modification starts afresh.
  result.addEventListener("htmx:afterSettle", () => {
    const shown = document.getElementById("modify-preview-result");
    ghosts(shown ? JSON.parse(shown.dataset.tokens) : null);
    if (result.querySelector(".flash.ok")) {
      instructions.length = 0;
      render();
    }
  });

  // Clicking a live token's row in the tokens panel picks it.
  document.addEventListener("click", (event) => {
    const row = event.target.closest && event.target.closest("#tokens-body tr.token-live[data-token]");
    if (row && !event.target.closest("a, button")) {
      fillTokens();
      tokenSelect.value = row.dataset.token;
      say("Token " + row.dataset.token.slice(-8) + " picked.");
    }
  });

  // With "pick on the diagram" on, a click on a node picks its token (when none is picked yet and
  // one is there), else makes the node the target.
  document.addEventListener("interlock:pick", (event) => {
    if (!pick.checked || !event.detail) {
      return;
    }
    event.preventDefault();
    const node = event.detail;
    const here = liveTokens().find((t) => t.node === node);
    const option = Array.from(targetSelect.options).find((o) => o.value === node);
    // A flow offered to start on (an incoming flow of a join): its node becomes the target.
    const via = Object.keys(choices).find((id) => choices[id].flows.some(([flow]) => flow === node));
    if (!tokenSelect.value && here) {
      fillTokens();
      tokenSelect.value = here.id;
      say("Token " + here.id.slice(-8) + " at " + here.label + " picked; now click the target node.");
    } else if (option && option.disabled) {
      say(choices[node].before || choices[node].after);
    } else if (option) {
      targetSelect.value = node;
      showTarget();
      say("Target: " + targetLabel() + ".");
    } else if (via) {
      targetSelect.value = via;
      showTarget();
      flowSelect.value = node;
      say("Flow: " + flowLabel() + ".");
    }
  });

  // In pick mode the diagram marks the nodes nothing can start at, and the ones started through
  // a flow (a parallel join).
  const marked = [];
  const markTargets = () => {
    const canvas = diagram() && diagram().canvas;
    if (!canvas) {
      return;
    }
    marked.splice(0).forEach(([id, name]) => canvas.removeMarker(id, name));
    if (!pick.checked) {
      return;
    }
    Object.entries(choices).forEach(([id, choice]) => {
      const name = !choice.pickable ? "modify-not-pickable" : choice.before ? "modify-via-flow" : null;
      if (name && diagram().registry.get(id)) {
        canvas.addMarker(id, name);
        marked.push([id, name]);
      }
    });
  };
  pick.addEventListener("change", markTargets);
  targetSelect.addEventListener("change", showTarget);

  // The instance's state, as the live header shows it: an ended instance has nothing to modify
  // (the card goes), a suspended one must be resumed first (the card idles).
  const follow = () => {
    const shown = document.getElementById("instance-state");
    const state = shown ? shown.textContent.trim() : card.dataset.state;
    card.dataset.state = state;
    if (state === "Completed" || state === "Terminated") {
      card.hidden = true;
      ghosts(null);
      return;
    }
    const idle = state === "Suspended";
    if (idle === card.classList.contains("modify-idle")) {
      return;
    }
    card.classList.toggle("modify-idle", idle);
    card.querySelectorAll("button, select, input").forEach((control) => {
      control.disabled = idle;
    });
    if (idle) {
      say("The instance is suspended: resume it to modify its tokens.");
    } else {
      say("The instance runs again: add instructions, preview, then apply them.");
      showTarget();
      render();
    }
  };

  tokenSelect.addEventListener("focus", fillTokens);
  // The live refresh swaps the tokens panel's and the header's content (out of band, inner):
  // the token list follows the panel, the card the instance's state.
  // htmx names the part swapped in the event's detail (the event itself goes to the request's
  // element).
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    const swapped = event.detail && event.detail.target;
    if (swapped && swapped.id === "tokens-body" && document.activeElement !== tokenSelect) {
      fillTokens();
    }
    if (swapped && swapped.id === "inspector-header") {
      follow();
    }
  });
  if (diagram() && diagram().ready) {
    diagram().ready.then(markTargets);
  }
  fillTokens();
  showTarget();
  follow();
  render();
}
