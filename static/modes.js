// The definition page's one mode control (templates/_history_switch.html). "Now" and "Heatmap"
// switch the diagram in place (static/diagram.js listens to the same radios) and keep the URL in
// step; "History" and a period load the page of that period. The period shows only for the
// history, from and to only for a custom period (and are sent only then).

const form = document.getElementById("history-switch");

// The page's URL for `view` ("now" or "heatmap"), of the version shown.
function address(view) {
  const params = new URLSearchParams({ version: form.elements.version.value });
  if (view !== "now") {
    params.set("view", view);
  }
  return form.getAttribute("action") + "?" + params.toString();
}

if (form) {
  const period = form.elements.period;
  const historyFields = form.querySelector("[data-for-view=history]");
  const custom = form.querySelector("[data-for-period=custom]");
  const customInputs = custom.querySelectorAll("input");
  const showCustom = () => {
    custom.hidden = period.value !== "custom";
    customInputs.forEach((input) => {
      input.disabled = custom.hidden;
    });
  };
  showCustom();
  form.querySelectorAll("input[name=view]").forEach((radio) => {
    radio.addEventListener("change", () => {
      const view = radio.value;
      historyFields.hidden = view !== "history";
      if (view === "history") {
        // A custom period waits for its dates and the Show button.
        if (period.value !== "custom") {
          form.requestSubmit();
        }
      } else if (form.dataset.view === "history") {
        window.location.assign(address(view));
      } else {
        window.history.replaceState(window.history.state, "", address(view));
      }
    });
  });
  period.addEventListener("change", () => {
    showCustom();
    if (period.value !== "custom") {
      form.requestSubmit();
    }
  });
}
