// memory ui: the little the pages script. Every page works without it.
document.addEventListener("submit", (event) => {
  const ask = event.target.getAttribute("data-confirm");
  if (ask && !window.confirm(ask)) event.preventDefault();
});
document.addEventListener("change", (event) => {
  if (event.target.hasAttribute("data-autosubmit")) event.target.form.submit();
});
