// Keyboard shortcuts of the human scoring page (the legend on the page lists them).
// Listeners sit on the document and look the form up on every key, because
// htmx replaces the form with the next item's after each submit.
//
// A digit scores the highlighted dimension and moves to the next dimension still
// without a score; once every dimension has one, focus goes to the submit button,
// never into the note. Raters who were told "Tab moves on" press Tab after each
// digit: that Tab confirms the move the digit already made instead of skipping a
// dimension, and a digit with no dimension highlighted changes nothing.
(function () {
  "use strict";

  // What the last digit moved focus to (a dimension or the submit button): the Tab
  // right after it stays there.
  var advanced = null;

  function form() {
    return document.getElementById("scoring-form");
  }

  function dimensions(f) {
    return Array.prototype.slice.call(f.querySelectorAll("[data-dimension]"));
  }

  function current(f) {
    return f.querySelector("[data-dimension].is-current");
  }

  function scored(dimension) {
    return Boolean(dimension.querySelector("input:checked"));
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

  // Start on the first dimension without a score, so a fresh item reads top to bottom
  // (and an item refused for a blank dimension starts on that dimension).
  function init() {
    var f = form();
    advanced = null;
    if (!f || current(f)) return;
    var all = dimensions(f);
    var open = all.filter(function (d) { return !scored(d); });
    setCurrent(f, open[0] || all[0] || null, false);
  }

  function move(f, step) {
    var all = dimensions(f);
    if (!all.length) return;
    var index = all.indexOf(current(f));
    if (index < 0) index = step > 0 ? -1 : all.length;
    setCurrent(f, all[Math.min(all.length - 1, Math.max(0, index + step))], true);
  }

  // The next dimension without a score after ``dimension``, wrapping round; null when all have one.
  function nextOpen(f, dimension) {
    var all = dimensions(f);
    var start = all.indexOf(dimension);
    for (var step = 1; step <= all.length; step++) {
      var candidate = all[(start + step) % all.length];
      if (!scored(candidate)) return candidate;
    }
    return null;
  }

  function choose(f, value) {
    var dimension = current(f);
    // No highlighted dimension (every one was scored and the focus moved on): a stray
    // digit must not overwrite a score. Arrows, Shift+Tab or a click pick one again.
    if (!dimension) return;
    var input = dimension.querySelector('input[type="radio"][value="' + value + '"]');
    if (!input || input.disabled) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    var following = nextOpen(f, dimension);
    if (following) {
      setCurrent(f, following, true);
      advanced = following;
    } else {
      setCurrent(f, null, false);
      var button = f.querySelector("[data-scoring-submit]");
      if (button) button.focus({ preventScroll: true });
      advanced = button;
    }
  }

  // One key on the form ``f``; ``key`` is a keydown event or a held key. True when handled.
  function act(f, key, target) {
    var number = window.VividKeys.digit(key);
    var moved = advanced;
    advanced = null;
    if (number !== null && !key.shiftKey) {
      if (Number(number) <= 5) choose(f, number);
    } else if (key.key === "x" || key.key === "X") {
      choose(f, "na");
    } else if (key.key === "Tab") {
      // The Tab right after a digit: the digit moved on already.
      return Boolean(!key.shiftKey && moved && target && moved.contains(target));
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
    if (!f) return;
    if (window.VividKeys.passThrough(event, f)) {
      advanced = null;
      return;
    }
    if (swap.busy()) {
      // Scores wait for the next item. Submitting or writing a note of an item
      // not yet on the screen is not what was meant.
      var number = window.VividKeys.digit(event);
      if ((number !== null && !event.shiftKey) || event.key === "ArrowDown" || event.key === "ArrowUp") {
        swap.hold(event);
        event.preventDefault();
      } else if (event.key === "Enter" || event.key === "n" || event.key === "Tab") {
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
  document.addEventListener("mousedown", function () {
    advanced = null;
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
