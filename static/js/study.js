// Participant pages: keep unsent answers across a refresh or a crash (localStorage, per
// participant and page), make "None of these" exclusive, and stop a double click from
// sending a page twice (the server ignores a second send anyway).
(function () {
  "use strict";
  // Pages arrive as the answer to the previous page's POST: make this history entry a GET,
  // so a refresh or the back button asks for the current page instead of resending answers.
  if (window.history && history.replaceState) history.replaceState(null, "", location.href);
  function save(form, key) {
    var data = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit") return;
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) return;
      (data[el.name] = data[el.name] || []).push(el.value);
    });
    try { localStorage.setItem(key, JSON.stringify(data)); } catch (e) { /* private mode: no drafts */ }
  }
  function restore(form, key) {
    var raw = null;
    try { raw = localStorage.getItem(key); } catch (e) { return; }
    if (!raw) return;
    var data = JSON.parse(raw);
    Array.prototype.forEach.call(form.elements, function (el) {
      var values = data[el.name];
      if (!values || el.type === "hidden") return;
      if (el.type === "radio" || el.type === "checkbox") {
        if (!form.querySelector("[name='" + el.name + "']:checked") || el.type === "checkbox") {
          el.checked = values.indexOf(el.value) !== -1;
        }
      } else if (!el.value) {
        el.value = values[0];
      }
    });
  }
  // Answers of pages already sent stay in the database, not in this browser (shared computers).
  function forgetOtherPages(key) {
    var parts = key.split(":");
    var prefix = parts[0] + ":" + parts[1] + ":";
    try {
      for (var i = localStorage.length - 1; i >= 0; i--) {
        var stored = localStorage.key(i);
        if (stored && stored.indexOf(prefix) === 0 && stored !== key) localStorage.removeItem(stored);
      }
    } catch (e) { /* private mode */ }
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-step-form]").forEach(function (form) {
      var key = form.getAttribute("data-draft-key");
      if (key) {
        forgetOtherPages(key);
        restore(form, key);
        form.addEventListener("change", function () { save(form, key); });
      }
      var none = form.querySelector("input[name='none']");
      if (none) {
        form.addEventListener("change", function (event) {
          var target = event.target;
          if (target === none && none.checked) {
            form.querySelectorAll("input[name='symbols']").forEach(function (box) { box.checked = false; });
          } else if (target.name === "symbols" && target.checked) {
            none.checked = false;
          }
        });
      }
      form.addEventListener("submit", function (event) {
        if (form.dataset.sent) { event.preventDefault(); return; }
        form.dataset.sent = "1";
        // The clicked button's value (consent yes/no) must still be sent.
        var submitter = event.submitter;
        if (submitter && submitter.name) {
          var hidden = document.createElement("input");
          hidden.type = "hidden"; hidden.name = submitter.name; hidden.value = submitter.value;
          form.appendChild(hidden);
        }
        form.querySelectorAll("button[type='submit']").forEach(function (b) { b.disabled = true; });
      });
    });
  });
})();
