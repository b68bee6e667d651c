// Admin dashboard: progress and live agreement, refreshed 10 s after the last refresh ended (a large study's
// agreement takes seconds: a fixed interval piled requests up on the server). Text goes through textContent only.
"use strict";
(function () {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  const fmt = (x) => (x === null || x === undefined ? "–" : typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(3)) : String(x));
  async function get(path) {
    const res = await fetch(path, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
    if (!res.ok) throw new Error((await res.json().catch(() => ({}))).detail || res.statusText);
    return res.json();
  }
  function fill(id, rows) {
    const body = document.querySelector("#" + id + " tbody");
    body.replaceChildren(...rows.map((cells) => {
      const tr = document.createElement("tr");
      for (const c of cells) { const td = document.createElement("td"); td.textContent = fmt(c); tr.append(td); }
      return tr;
    }));
  }
  async function refresh() {
    try {
      const p = await get("/api/admin/progress");
      fill("progress-table", p.annotators.map((a) => [a.annotator, a.answered, a.due, a.seconds / 60, a.qualified, a.qualification_kappa]));
      const g = await get("/api/admin/agreement");
      fill("agreement-table", g.batches.map((b) => [b.batch, b.criterion, b.ratings, b.alpha, b.fleiss_kappa, b.note]));
    } catch (err) { document.getElementById("message").textContent = err.message; }
    setTimeout(refresh, 10000);
  }
  refresh();
})();
