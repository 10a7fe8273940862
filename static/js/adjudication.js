/* The adjudication page. Keyboard first: 1–7 pick the theme, Enter resolves; typing in a text field or the removal form is left alone. */
document.addEventListener("keydown", function (event) {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
  var form = document.getElementById("resolve-form");
  var target = event.target;
  if (!form || target.closest("textarea, select, input[type=text], #remove-form, a, button, summary")) return;
  var submit = form.querySelector("button[type=submit]");
  if (!submit || submit.disabled) return;
  if (/^[1-7]$/.test(event.key)) {
    var radio = form.querySelectorAll("input[type=radio]")[Number(event.key) - 1];
    if (radio) { radio.checked = true; radio.focus(); event.preventDefault(); }
  } else if (event.key === "Enter") {
    event.preventDefault();
    form.requestSubmit();
  }
});
