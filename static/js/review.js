// Keyboard shortcuts of the review page (the legend on the page lists them).
// Listeners sit on the document and look the form up on every key, because
// htmx replaces the form with the next item's after each submit or skip.
(function () {
  "use strict";

  var DECISIONS = { a: "accept", r: "reject", u: "unsure" };
  var MARKING = { a: true, r: true, u: true, j: true, k: true, f: true };

  function form() {
    return document.getElementById("review-form");
  }

  function rows(f) {
    return Array.prototype.slice.call(f.querySelectorAll("[data-trait-row]"));
  }

  function currentRow(f) {
    return f.querySelector("[data-trait-row].is-current");
  }

  function setCurrent(f, row) {
    rows(f).forEach(function (r) {
      r.classList.toggle("is-current", r === row);
      r.removeAttribute("aria-current");
    });
    if (row) {
      row.setAttribute("aria-current", "true");
      row.scrollIntoView({ block: "nearest" });
    }
  }

  // Start on the first trait still undecided, so a fresh item reads top to bottom.
  function initRows() {
    var f = form();
    if (!f || currentRow(f)) return;
    var all = rows(f);
    var open = all.filter(function (r) { return !r.querySelector("input:checked"); });
    setCurrent(f, open[0] || all[0] || null);
  }

  function changed(input) {
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function choose(input) {
    if (!input || input.disabled) return;
    if (input.type === "checkbox") {
      input.checked = !input.checked;
    } else {
      input.checked = true;
    }
    changed(input);
  }

  function move(f, step) {
    var all = rows(f);
    if (!all.length) return;
    var index = all.indexOf(currentRow(f));
    var next = all[Math.min(all.length - 1, Math.max(0, index + step))];
    setCurrent(f, next);
  }

  function decide(f, decision) {
    var row = currentRow(f);
    if (!row) return;
    choose(row.querySelector('input[type="radio"][value="' + decision + '"]'));
    var all = rows(f);
    var after = all.slice(all.indexOf(row) + 1).filter(function (r) { return !r.querySelector("input:checked"); });
    if (after.length) setCurrent(f, after[0]);
  }

  // Shift+1..5: a suggested trait becomes the current row; any other trait is ticked or unticked.
  function trait(f, number) {
    var row = f.querySelector('[data-trait-row][data-trait-number="' + number + '"]');
    if (row) {
      setCurrent(f, row);
      return;
    }
    var label = f.querySelector('label[data-trait-number="' + number + '"]');
    if (label) choose(label.querySelector('input[type="checkbox"]'));
  }

  // One key on the form ``f``; ``key`` is a keydown event or a held key. True when handled.
  function act(f, key, target) {
    var number = window.VividKeys.digit(key);
    if (number && key.shiftKey) {
      trait(f, number);
    } else if (number) {
      choose(f.querySelector('[data-theme-number="' + number + '"] input'));
    } else if (key.key === "Enter") {
      if (target && target.tagName === "BUTTON") return false; // the button does its own thing
      f.requestSubmit();
    } else if (DECISIONS[key.key]) {
      decide(f, DECISIONS[key.key]);
    } else if (key.key === "j") {
      move(f, 1);
    } else if (key.key === "k") {
      move(f, -1);
    } else if (key.key === "f") {
      choose(f.querySelector('input[name="flagged"]'));
    } else if (key.key === "n") {
      var note = f.querySelector('textarea[name="note"]');
      if (note) note.focus();
    } else if (key.key === "s") {
      var skip = f.querySelector("[data-review-skip]");
      if (skip) skip.click();
    } else {
      return false;
    }
    return true;
  }

  function usable(f) {
    return f && !f.querySelector("fieldset[disabled]");
  }

  var swap = window.VividKeys.holdDuringSwap("review-panel", function (key) {
    var f = form();
    if (usable(f)) act(f, key, null);
  });

  document.addEventListener("keydown", function (event) {
    var f = form();
    if (!usable(f)) return;
    if (window.VividKeys.passThrough(event, f)) return;
    if (swap.busy()) {
      // Keys that mark the form wait for the next item. Submitting, skipping or
      // writing a note of an item not yet on the screen is not what was meant.
      if (window.VividKeys.digit(event) || MARKING[event.key]) {
        swap.hold(event);
        event.preventDefault();
      } else if (event.key === "Enter" || event.key === "s" || event.key === "n") {
        event.preventDefault();
      }
      return;
    }
    if (act(f, event, event.target)) event.preventDefault();
  });

  // Clicking or tabbing into a trait row makes it the current one.
  document.addEventListener("focusin", function (event) {
    var row = event.target.closest && event.target.closest("[data-trait-row]");
    if (row) setCurrent(form(), row);
  });

  // The answer's time by the page's own clock: from the moment the item is on screen to its
  // submit, leaving out the time the tab was hidden. Sent in the form's hidden "seconds" field;
  // the server checks and caps it. A panel shown again for the same item (an error) keeps its clock.
  var clock = { assignment: null, start: 0, hiddenSince: null, hidden: 0 };

  function startClock() {
    var card = document.querySelector("[data-assignment]");
    var id = card ? card.getAttribute("data-assignment") : null;
    if (id === clock.assignment) return;
    clock = { assignment: id, start: performance.now(), hiddenSince: null, hidden: 0 };
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      clock.hiddenSince = performance.now();
    } else if (clock.hiddenSince !== null) {
      clock.hidden += performance.now() - clock.hiddenSince;
      clock.hiddenSince = null;
    }
  });

  // Capture phase: runs before htmx reads the form's values for its request.
  document.addEventListener("submit", function (event) {
    var f = event.target;
    if (!f || f.id !== "review-form") return;
    var field = f.querySelector('input[name="seconds"]');
    if (!field || clock.assignment === null) return;
    var hidden = clock.hidden + (clock.hiddenSince !== null ? performance.now() - clock.hiddenSince : 0);
    field.value = Math.max(0, (performance.now() - clock.start - hidden) / 1000).toFixed(2);
  }, true);

  document.addEventListener("DOMContentLoaded", function () {
    initRows();
    startClock();
  });
  // After htmx brings the next item: start its rows and move focus to the new
  // expression, so screen readers announce it and shortcuts apply to it.
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!event.detail || !event.detail.target || event.detail.target.id !== "review-panel") return;
    // htmx may re-focus an element of the new item that has the old focused id:
    // start the new item's rows afresh rather than where the last item ended.
    var f = form();
    if (f) setCurrent(f, null);
    initRows();
    startClock();
    var heading = document.getElementById("review-expression") || document.getElementById("queue-title");
    if (heading) heading.focus({ preventScroll: true });
    swap.release();
  });
})();
