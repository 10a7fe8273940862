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

  return { digit: digit, isTyping: isTyping, passThrough: passThrough };
})();
