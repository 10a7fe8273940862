// Keyboard shortcuts of the human scoring page (the legend on the page lists them).
// Listeners sit on the document and look the form up on every key, because
// htmx replaces the form with the next item's after each submit.
(function () {
  "use strict";

  function form() {
    return document.getElementById("scoring-form");
  }

  function dimensions(f) {
    return Array.prototype.slice.call(f.querySelectorAll("[data-dimension]"));
  }

  function current(f) {
    return f.querySelector("[data-dimension].is-current");
  }

  function setCurrent(f, dimension, focus) {
    dimensions(f).forEach(function (d) {
      d.classList.toggle("is-current", d === dimension);
      d.removeAttribute("aria-current");
    });
    if (!dimension) return;
    dimension.setAttribute("aria-current", "true");
    if (focus) {
      var input = dimension.querySelector("input:checked") || dimension.querySelector("input");
      if (input) input.focus({ preventScroll: true });
    }
    dimension.scrollIntoView({ block: "nearest" });
  }

  // Start on the first dimension without a score, so a fresh item reads top to bottom.
  function init() {
    var f = form();
    if (!f || current(f)) return;
    var all = dimensions(f);
    var open = all.filter(function (d) { return !d.querySelector("input:checked"); });
    setCurrent(f, open[0] || all[0] || null, false);
  }

  function move(f, step) {
    var all = dimensions(f);
    if (!all.length) return;
    var index = all.indexOf(current(f));
    setCurrent(f, all[Math.min(all.length - 1, Math.max(0, index + step))], true);
  }

  function score(f, value) {
    var dimension = current(f) || dimensions(f)[0];
    if (!dimension) return;
    var input = dimension.querySelector('input[type="radio"][value="' + value + '"]');
    if (!input || input.disabled) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    var all = dimensions(f);
    var index = all.indexOf(dimension);
    if (index < all.length - 1) setCurrent(f, all[index + 1], true);
    else setCurrent(f, dimension, true);
  }

  // One key on the form ``f``; ``key`` is a keydown event or a held key. True when handled.
  function act(f, key, target) {
    var number = window.VividKeys.digit(key);
    if (number !== null && !key.shiftKey) {
      if (Number(number) <= 5) score(f, number);
    } else if (key.key === "ArrowDown") {
      move(f, 1);
    } else if (key.key === "ArrowUp") {
      move(f, -1);
    } else if (key.key === "Enter") {
      if (target && target.tagName === "BUTTON") return false; // the button does its own thing
      f.requestSubmit();
    } else if (key.key === "?") {
      var rubric = document.querySelector(".scoring-rubric");
      if (rubric) rubric.open = !rubric.open;
    } else if (key.key === "n") {
      var note = f.querySelector('textarea[name="note"]');
      if (note) note.focus();
    } else {
      return false;
    }
    return true;
  }

  var swap = window.VividKeys.holdDuringSwap("scoring-panel", function (key) {
    var f = form();
    if (f) act(f, key, null);
  });

  document.addEventListener("keydown", function (event) {
    var f = form();
    if (!f || window.VividKeys.passThrough(event, f)) return;
    if (swap.busy()) {
      // Scores wait for the next item. Submitting or writing a note of an item
      // not yet on the screen is not what was meant.
      var number = window.VividKeys.digit(event);
      if ((number !== null && !event.shiftKey) || event.key === "ArrowDown" || event.key === "ArrowUp") {
        swap.hold(event);
        event.preventDefault();
      } else if (event.key === "Enter" || event.key === "n") {
        event.preventDefault();
      }
      return;
    }
    if (act(f, event, event.target)) event.preventDefault();
  });

  // Tabbing or clicking into a dimension makes it the current one.
  document.addEventListener("focusin", function (event) {
    var dimension = event.target.closest && event.target.closest("[data-dimension]");
    if (dimension) setCurrent(form(), dimension, false);
  });

  document.addEventListener("DOMContentLoaded", init);
  // After htmx brings the next item: start on its first dimension and move focus to
  // the new expression, so screen readers announce it and shortcuts apply to it.
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!event.detail || !event.detail.target || event.detail.target.id !== "scoring-panel") return;
    // htmx re-focuses an element with the old focused id in the new item, which would
    // make the old item's last dimension current: start the new item afresh.
    var f = form();
    if (f) setCurrent(f, null, false);
    init();
    var heading = document.getElementById("scoring-expression") || document.getElementById("queue-title");
    if (heading) heading.focus({ preventScroll: true });
    swap.release();
  });
})();
