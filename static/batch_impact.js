// The impact dialog of a list's batch menu (templates/_batch_impact.html): the server's preview
// is swapped into the dialog's body, then the dialog opens; "Back" and "Close" close it.
(function () {
  "use strict";
  document.addEventListener("htmx:afterSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    if (!target || target.id !== "batch-impact-body") return;
    var dialog = document.getElementById("batch-impact");
    if (dialog && !dialog.open) dialog.showModal();
  });
  document.addEventListener("click", function (evt) {
    var button = evt.target instanceof Element ? evt.target.closest("[data-close-dialog]") : null;
    if (!button) return;
    var dialog = button.closest("dialog");
    if (dialog) dialog.close();
  });
})();
