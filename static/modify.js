// The inspector's token modification, for operators: pick a token (its row in the tokens panel,
// the select, or its node on the diagram) and a target node, collect instructions, preview where
// the tokens would be (dashed badges on the diagram), then apply them in one step. The server
// checks the role and the CSRF token; htmx sends the token with every POST (console.js).

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
  const instructions = [];

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

  const add = (op) => {
    const token = chosenToken();
    if ((op === "move" || op === "cancel") && !token) {
      say("Choose a token first.");
      return;
    }
    if (op !== "cancel" && !target()) {
      say("Choose a target node first.");
      return;
    }
    const name = token ? "token " + token.id.slice(-8) + " at " + token.label : "";
    if (op === "move") {
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

  const body = () => JSON.stringify(instructions.map(({ op, token, node }) => ({ op, token, node })));

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
    if (!tokenSelect.value && here) {
      fillTokens();
      tokenSelect.value = here.id;
      say("Token " + here.id.slice(-8) + " at " + here.label + " picked; now click the target node.");
    } else if (Array.from(targetSelect.options).some((o) => o.value === node)) {
      targetSelect.value = node;
      say("Target: " + targetLabel() + ".");
    }
  });

  tokenSelect.addEventListener("focus", fillTokens);
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    if (event.target && event.target.id === "tokens-body" && document.activeElement !== tokenSelect) {
      fillTokens();
    }
  });
  fillTokens();
  render();
}
