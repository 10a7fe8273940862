// Participant pages: keep unsent answers across a refresh or a crash (localStorage, per
// participant and page), make "None of these" exclusive, stop a double click from sending a
// page twice (the server ignores a second send anyway), and send each page with fetch so that
// a dropped connection means a retry, not the browser's error page and a lost page.
(function () {
  "use strict";
  // Waits between attempts while the connection is down; the last one repeats. The jitter keeps
  // participants who lost the same network from all coming back in the same second.
  var RETRY_DELAYS = [1000, 2000, 4000, 8000];
  // A request that has not answered by then is taken as lost; resending is safe, as the server
  // stores a page once and answers a page it already has with the current one.
  var ATTEMPT_TIMEOUT = 45000;
  // A proxy or load balancer in front of the app answering for it: the page did not arrive.
  var GATEWAY_ERRORS = [502, 503, 504];
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
      statusBox(form);
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
        if (!window.fetch || !window.FormData || !window.URLSearchParams) return;  // the browser sends it
        event.preventDefault();
        if (key) save(form, key);
        send(form, key);
      });
    });
    // Lets a test (or another script) know the page's handlers are in place.
    document.documentElement.setAttribute("data-study-ready", "");
  });

  // Under the page's button, and placed before anything is said in it: a live region that is
  // moved or created just before it speaks is not announced by every screen reader.
  function statusBox(form) {
    var box = document.querySelector("[data-send-status]");
    if (box && box.parentNode !== form) form.appendChild(box);
    return box;
  }

  function show(box, state) {
    if (!box) return;
    var message = box.querySelector("[data-send-message]");
    var text = state ? box.getAttribute("data-" + state) : "";
    if (message.textContent !== text) message.textContent = text;
    message.className = state === "sending" ? "message" : state ? "message message-warning" : "";
    box.querySelector("[data-send-retry]").hidden = state !== "retrying" && state !== "offline";
  }

  // Send the page until an answer arrives. The answers stay in the draft meanwhile, so a reload
  // or a closed tab loses nothing either.
  function send(form, key) {
    var url = form.action || location.href;
    var box = document.querySelector("[data-send-status]");
    var attempt = 0, timer = null, inFlight = false, finished = false;
    // After the page is stored (or found stored already) the server redirects to the run page;
    // that page is asked for with the same retries, so a drop there is no error page either.
    var stored = false;

    function tryOnce() {
      if (finished || inFlight) return;
      clearTimeout(timer);
      inFlight = true;
      show(box, "sending");
      var controller = window.AbortController ? new AbortController() : null;
      var watchdog = controller ? setTimeout(function () { controller.abort(); }, ATTEMPT_TIMEOUT) : null;
      var request = {
        method: "GET", credentials: "same-origin", cache: "no-store",
        // Redirects are not followed here: the last one leads to Prolific, another site whose
        // answer fetch may not read. The browser itself goes there (arrive below).
        redirect: "manual", signal: controller ? controller.signal : undefined
      };
      if (!stored) {
        request.method = "POST";
        // Read at each attempt: an answer changed while the connection was down is the one sent.
        // Encoded as the browser encodes the form itself (no file fields): smaller than multipart.
        request.body = new URLSearchParams(new FormData(form));
      }
      fetch(url, request).then(function (response) {
        if (response.type === "opaqueredirect") return { redirect: true };
        if (GATEWAY_ERRORS.indexOf(response.status) !== -1) throw new Error("gateway " + response.status);
        return response.text().then(function (html) { return { html: html, ok: response.ok, url: response.url }; });
      }).then(function (result) {
        clearTimeout(watchdog);
        inFlight = false;
        arrive(result);
      }, function () {
        clearTimeout(watchdog);
        inFlight = false;
        lost();
      });
    }

    function lost() {
      var delay = RETRY_DELAYS[Math.min(attempt, RETRY_DELAYS.length - 1)];
      attempt += 1;
      show(box, navigator.onLine === false ? "offline" : "retrying");
      timer = setTimeout(tryOnce, delay * (0.8 + Math.random() * 0.4));
    }

    function arrive(result) {
      if (result.redirect || result.ok) forget(key);
      if (result.redirect && !stored) {
        stored = true;
        attempt = 0;
        tryOnce();
        return;
      }
      finished = true;
      if (result.redirect) {
        // The run page sends the browser on (the end of the study): one entry per page, so the
        // page sent is replaced by wherever that leads.
        location.replace(url);
        return;
      }
      // The next page (or this one with its errors) is the answer itself, as without JavaScript;
      // it gets its own history entry, which like the pages before shows the current page.
      if (window.history && history.pushState) history.pushState(null, "", result.url || url);
      document.open();
      document.write(result.html);
      document.close();
      window.scrollTo(0, 0);
    }

    window.addEventListener("online", tryOnce);
    if (box) box.querySelector("[data-send-retry]").addEventListener("click", tryOnce);
    tryOnce();
  }

  function forget(key) {
    if (!key) return;
    try { localStorage.removeItem(key); } catch (e) { /* private mode */ }
  }
})();
