// Participant pages: the artwork's "full size" links open the image in a dialog over the page
// (the answers being typed stay where they are). Without this script, or a browser without
// <dialog>, the links open the image itself in a new tab.
(function () {
  "use strict";
  var dialog = null;
  function build(closeLabel) {
    dialog = document.createElement("dialog");
    dialog.className = "artwork-dialog";
    var body = document.createElement("div");
    body.className = "artwork-dialog-body";
    var form = document.createElement("form");
    form.method = "dialog";
    var close = document.createElement("button");
    close.type = "submit";
    close.className = "artwork-dialog-close";
    close.textContent = closeLabel;
    form.appendChild(close);
    var image = document.createElement("img");
    image.className = "artwork-dialog-image";
    // A tap on the image shows it at its own pixel size (scroll to pan); another tap fits it again.
    image.addEventListener("click", function () { body.classList.toggle("is-zoomed"); });
    body.appendChild(form);
    body.appendChild(image);
    dialog.appendChild(body);
    // A tap on the dark backdrop around the image closes, as on most image viewers.
    dialog.addEventListener("click", function (event) { if (event.target === dialog) dialog.close(); });
    document.body.appendChild(dialog);
    return dialog;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-enlarge]") : null;
    if (!link || typeof HTMLDialogElement !== "function" || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    var opened = dialog || build(link.getAttribute("data-close-label") || "Close");
    var image = opened.querySelector("img");
    var thumbnail = link.closest("figure") ? link.closest("figure").querySelector("img") : null;
    image.src = link.href;
    image.alt = thumbnail ? thumbnail.alt : "";
    opened.querySelector(".artwork-dialog-body").classList.remove("is-zoomed");
    opened.showModal();
  });
})();
