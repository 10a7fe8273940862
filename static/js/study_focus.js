// Participant pages: when a step's page appears, focus moves to its heading, so a screen reader
// starts reading the new page at its top and the next Tab starts at the page's first control
// instead of wherever the browser left off (WCAG 2.4.3). Done on every step page, the first too:
// nothing has focus yet then, and the heading is where a reader would begin anyway.
// A page may arrive by a normal load or be written over the previous one (document.open/write);
// in both cases this script runs again with the new document.
(function () {
  "use strict";
  function focusHeading() {
    if (!document.querySelector("form[data-step-form]")) return;
    // Someone already inside a control (e.g. typing while the page came) keeps their place.
    var active = document.activeElement;
    if (active && active !== document.body && active !== document.documentElement) return;
    var heading = document.querySelector("main h1, main h2");
    if (!heading) return;
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    heading.classList.add("step-heading");
    heading.focus({ preventScroll: true });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", focusHeading);
  } else {
    focusHeading();
  }
})();
