/* Behaviour every staff page shares. It lives here, not in the templates,
   because the site's Content-Security-Policy runs no inline script and no
   inline event handler. Listeners sit on the document, so content that htmx
   swaps in later is covered too. */
(function () {
  "use strict";

  // The language switch applies as soon as a language is picked; without
  // script a <noscript> button does the same.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select && select.matches && select.matches("select[data-autosubmit]") && select.form) {
      select.form.submit();
    }
  });

  // A form with data-confirm asks its question first. Capture phase, so the
  // answer is known before htmx or anything else acts on the submit.
  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      var question = form && form.getAttribute ? form.getAttribute("data-confirm") : null;
      if (question && !window.confirm(question)) {
        event.preventDefault();
        event.stopPropagation();
      }
    },
    true
  );
})();
