/* Keyboard handling shared by the review queue and the scoring page:
   which digit was pressed (any layout or the keypad), and the keys that
   belong to a text field, the header or a link rather than to the form. */
window.VividKeys = (function () {
  "use strict";

  function digit(event) {
    var match = /^(?:Digit|Numpad)([0-9])$/.exec(event.code || "");
    if (match) return match[1];
    return /^[0-9]$/.test(event.key) ? event.key : null;
  }

  function isTyping(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
    return target.tagName === "INPUT" && !/^(radio|checkbox|button|submit|reset|hidden)$/.test(target.type);
  }

  // True when the page's shortcuts must leave this key alone. While typing,
  // Escape leaves the field and Ctrl+Enter submits the form.
  function passThrough(event, f) {
    if (event.altKey || event.metaKey || event.defaultPrevented) return true;
    var target = event.target;
    if (isTyping(target)) {
      if (event.key === "Escape") {
        target.blur();
        event.preventDefault();
      } else if (event.key === "Enter" && event.ctrlKey && f.contains(target)) {
        f.requestSubmit();
        event.preventDefault();
      }
      return true;
    }
    if (event.ctrlKey) return true;
    // The header (language, sign out) and links keep their own keys.
    return Boolean(target && target.closest && target.closest("body > header, a, summary"));
  }

  // Between the submit of an item and the settle of the next one, the form on the
  // page is the old item's (or the new one, not yet initialised): a key acting on
  // it would be lost with the swap. Keys of that window are held by the page and
  // replayed, in order, on the new item once it has settled.
  function holdDuringSwap(panelId, replay) {
    var busy = false;
    var held = [];
    function ours(event) {
      var target = event.detail && event.detail.target;
      return Boolean(target && target.id === panelId);
    }
    function release() {
      busy = false;
      var keys = held;
      held = [];
      keys.forEach(replay);
    }
    document.addEventListener("htmx:beforeRequest", function (event) {
      if (ours(event)) busy = true;
    });
    // A request that fails or is aborted brings no next item: the keys go to this one.
    document.addEventListener("htmx:afterRequest", function (event) {
      if (ours(event) && !event.detail.successful) release();
    });
    return {
      busy: function () { return busy; },
      hold: function (event) {
        held.push({ key: event.key, code: event.code, shiftKey: event.shiftKey });
      },
      // The page calls this once it has initialised the new item.
      release: release,
    };
  }

  return { digit: digit, isTyping: isTyping, passThrough: passThrough, holdDuringSwap: holdDuringSwap };
})();
