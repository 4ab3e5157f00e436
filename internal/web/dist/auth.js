// kiln's web UI: the API token. It comes from ?token= once (then leaves
// the address bar) or the header's form, and is kept in this browser
// until "Forget token" drops it. A request the server refuses for want of
// a good token (401, KLN-4003) shows a panel that says so, where the
// server's admin token is and how to make one, with the token box focused.
"use strict";

(function takeToken() {
  const q = new URLSearchParams(location.search);
  if (q.get("token")) {
    localStorage.setItem("kiln-token", q.get("token"));
    history.replaceState(null, "", location.pathname + location.hash);
  }
})();

// storedToken is the token this browser keeps, or "".
function storedToken() { return localStorage.getItem("kiln-token") || ""; }

// useToken keeps token t (none: forgets it) and reads everything again with it.
function useToken(t) {
  if (t) localStorage.setItem("kiln-token", t);
  else localStorage.removeItem("kiln-token");
  document.getElementById("token").value = "";
  document.getElementById("who").textContent = "";
  delete document.getElementById("who").dataset.me;
  role = "";
  showForget();
  start();
}

// showForget offers "Forget token" while the browser keeps one, and the
// token form only while it keeps none (or the server refused it: needToken).
function showForget() {
  document.getElementById("forget").hidden = !storedToken();
  document.getElementById("login").hidden = !!storedToken();
}

document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  useToken(document.getElementById("token").value.trim());
});
document.getElementById("forget").addEventListener("click", () => useToken(""));
showForget();

// needToken shows, once the server refused a request for its token
// (error e), what to do about it, and focuses the token box.
function needToken(e) {
  const box = document.getElementById("auth");
  const had = storedToken() !== "";
  box.replaceChildren(
    el("h3", {}, had ? "The server refused this browser's token" : "This kiln server needs an API token"),
    el("p", {}, had ? `It answered ${e.message}. Paste another token in the box above, or forget this one.` :
      "Paste a token in the box above and press Use token; this browser keeps it until you forget it."),
    el("p", {}, "Where kiln serve runs, it wrote an admin token to ", el("code", {}, "KILN_HOME/admin.token"),
      " when it first started (KILN_HOME is ~/.kiln unless set)."),
    el("p", {}, "To make a token that may only read, run ", el("code", {}, "kiln token create NAME --role viewer"),
      " there (--role editor may also submit and change runs)."));
  const wasHidden = box.hidden;
  box.hidden = false;
  document.getElementById("login").hidden = false;
  if (wasHidden) document.getElementById("token").focus();
}

// tokenAccepted hides the panel: the page reads again with a new token.
function tokenAccepted() { document.getElementById("auth").hidden = true; }
