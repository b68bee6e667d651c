// dialeval annotation page. Every piece of dialogue text goes through textContent; nothing is
// ever assigned to innerHTML, so dialogue text can never become markup or script.
"use strict";
(function () {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  const $ = (id) => document.getElementById(id);
  let protocol = null, steps = [], index = 0, shownAt = 0, qualifying = false;
  const spent = new Map();

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  async function api(method, path, body) {
    const res = await fetch(path, {
      method, headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store",
      keepalive: method !== "GET",  // an answer sent as the page closes still arrives
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.detail || res.statusText);
    return data;
  }

  function buildSteps(units) {
    const out = [];
    for (const unit of units)
      for (const criterion of protocol.criteria)
        for (const item of unit.items) out.push({ unit, criterion, item });
    return out;
  }

  // protocol.visible's rule, which the server checks an explanation by: trim() kept a zero-width space (and such)
  const SEEN = /[^\p{Z}\p{Cc}\p{Cf}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/u;
  const visible = (text) => SEEN.test(text);
  const key = (s) => s.item.id + "\u0000" + s.criterion.name;
  const answerOf = (s) => s.item.answers[s.criterion.name];
  // an "I don't know" still to be explained is on the page only: it counted as answered
  const saved = (s) => { const a = answerOf(s); return a !== undefined && !a.unsaved; };

  function renderProgress() {
    const done = steps.filter(saved).length;
    const pct = steps.length ? Math.round((100 * done) / steps.length) : 100;
    $("progress-fill").style.width = pct + "%";
    $("progress").setAttribute("aria-valuenow", String(pct));
    $("progress-text").textContent = done + " / " + steps.length + " answered";
  }

  function leaveStep() {
    if (!steps.length) return;
    const k = key(steps[index]);
    spent.set(k, (spent.get(k) || 0) + (performance.now() - shownAt) / 1000);
    shownAt = performance.now();
  }

  function render() {
    const s = steps[index];
    shownAt = performance.now();
    $("step-label").textContent = "Item " + (index + 1) + " of " + steps.length + (s.unit.qualification ? " (qualification)" : "");
    const ctx = $("context");
    ctx.replaceChildren();
    for (const turn of s.unit.context) {
      const li = el("li");
      li.append(el("span", turn.speaker + ":", "speaker"), el("span", turn.text));
      ctx.append(li);
    }
    // e.g. the style the task asks for (the protocol's show_tag), always as text
    $("unit-note").textContent = s.unit.note ? (protocol.show_tag_label || protocol.show_tag) + ": " + s.unit.note : "";
    $("unit-note").hidden = !s.unit.note;
    $("knowledge").replaceChildren(...s.unit.knowledge.map((k) => el("li", k)));
    $("knowledge-box").hidden = s.unit.knowledge.length === 0;
    // protocols such as lmstyle-sliders show every response of the context together
    $("siblings").replaceChildren(...s.unit.items.map((it) => el("li", it.text, it.id === s.item.id ? "current" : "")));
    $("siblings-box").hidden = !protocol.show_unit_candidates;
    $("criterion").textContent = s.criterion.name;
    $("definition").textContent = s.criterion.definition;
    $("question").textContent = s.criterion.question;
    $("candidate").textContent = s.item.text || "(judge the whole dialogue)";
    renderAnswer(s);
    renderProgress();
  }

  function renderAnswer(s) {
    const a = s.criterion.answer, current = answerOf(s);
    const box = $("options");
    box.replaceChildren();
    const choices = a.type === "choice" ? a.options.map((o) => [o.value, o.label])
      : a.type === "scale" ? a.levels.map((v) => [String(v), String(v)]) : null;
    if (choices) {
      choices.forEach(([value, label], i) => {
        const input = el("input");
        input.type = "radio"; input.name = "answer"; input.value = value;
        input.checked = current !== undefined && current.value === value;
        input.addEventListener("change", () => save(s, value));
        const lab = el("label");
        lab.append(input, el("span", " " + (i < 9 ? "[" + (i + 1) + "] " : "") + label));
        box.append(lab);
      });
    } else {
      const input = el("input");
      input.type = "range"; input.min = a.min; input.max = a.max; input.id = "slider";
      input.value = current ? current.value : String(Math.round((a.min + a.max) / 2));
      const out = el("output", input.value);
      input.addEventListener("input", () => { out.textContent = input.value; });
      input.addEventListener("change", () => save(s, input.value));
      const lab = el("label");
      lab.append(input, out);
      box.append(lab);
    }
    renderReasons(s);
  }

  function renderReasons(s) {
    const current = answerOf(s);
    const offered = current ? s.criterion.explanations.filter((e) => e.when.includes(current.value)) : [];
    const show = current !== undefined && (offered.length > 0 || s.criterion.free_text);
    $("reasons-box").hidden = !show;
    const box = $("reasons");
    box.replaceChildren();
    for (const e of offered) {
      const input = el("input");
      input.type = "checkbox"; input.value = e.code;
      input.checked = current.reasons.includes(e.code);
      input.addEventListener("change", () => save(s, current.value));
      const lab = el("label");
      lab.append(input, el("span", " " + e.label));
      box.append(lab);
    }
    $("free-text").hidden = !s.criterion.free_text;
    $("free-text").value = current ? current.free_text : "";
  }

  let queue = Promise.resolve();

  async function save(s, value) {
    flushTyping();  // an explanation typed just before this answer or move goes out first, with its own step
    leaveStep();
    const prev = answerOf(s);
    const sameValue = prev && prev.value === value;
    const reasons = sameValue ? [...$("reasons").querySelectorAll("input:checked")].map((i) => i.value) : [];
    const freeText = sameValue || pendingText(s, value) ? $("free-text").value : "";
    const option = (s.criterion.answer.options || []).find((o) => o.value === value);
    if (option && option.dont_know && s.criterion.free_text && !visible(freeText)) {
      s.item.answers[s.criterion.name] = { value, reasons: [], free_text: "", unsaved: true };
      renderReasons(s);
      $("status").textContent = "Please explain why you don't know; it is saved once you write it.";
      $("free-text").focus();
      return;
    }
    const body = { item_id: s.item.id, criterion: s.criterion.name, value, reasons, free_text: freeText,
                   seconds: spent.get(key(s)) || 0 };
    // saves go out one at a time, in the order they were made: rapid slider moves send several,
    // and concurrent requests could land out of order and leave an older value in the database.
    const sent = queue.then(() => api("PUT", "/api/answers", body));
    queue = sent.catch(() => undefined);
    try {
      await sent;
      s.item.answers[s.criterion.name] = { value, reasons, free_text: freeText };
      // the annotator may have moved on while it was sent: this item's reasons and status are not that page's
      if (steps[index] === s) {
        $("status").textContent = "Saved.";
        if (!sameValue) renderReasons(s);
      }
      renderProgress();
      if (qualifying && steps.every(saved)) reloadIfQualified().catch(() => undefined);  // else: as it was
    } catch (err) {
      $("status").textContent = "Not saved: " + err.message;
    }
  }

  const FAILED = "You did not pass the qualification batch, so no main batch will open for you. Thank you for your time.";

  // the answer that completes the qualification batch decides it on the server; a worker who passed saw
  // the finished batch, and nothing else, until they thought of reloading the page
  async function reloadIfQualified() {
    const tasks = await api("GET", "/api/tasks");
    if (!qualifying) return;
    if (tasks.failed) { qualifying = false; $("message").textContent = FAILED; return; }
    if (!tasks.qualified) return;
    qualifying = false;
    leaveStep();
    load(tasks);
    $("message").textContent = "You qualified: the main batches follow.";
    render();
  }

  function load(tasks) {
    steps = buildSteps(tasks.units);
    const first = steps.findIndex((s) => !answerOf(s));
    index = first === -1 ? steps.length - 1 : first;
  }

  function pendingText(s, value) {
    const a = answerOf(s);
    return a && a.unsaved && a.value === value;
  }

  // typing is saved 400 ms after the last key; a move or another answer before then saves it at once: the
  // late save read the next step's explanation and reasons off the page and the typed text was lost
  let typing = null, typed = null;
  $("free-text").addEventListener("input", () => {
    const s = steps[index], a = answerOf(s);
    if (!a) return;
    clearTimeout(typing);
    typed = () => save(s, a.value);
    typing = setTimeout(flushTyping, 400);
  });

  function flushTyping() {
    if (typing === null) return;
    clearTimeout(typing);
    typing = null;
    typed();
  }

  window.addEventListener("pagehide", flushTyping);  // closed or reloaded while typing

  function go(delta) {
    const next = index + delta;
    if (next < 0 || next >= steps.length) return;
    flushTyping();
    leaveStep();
    index = next;
    render();
  }

  $("prev").addEventListener("click", () => go(-1));
  $("next").addEventListener("click", () => go(1));
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLTextAreaElement || !steps.length) return;
    // Enter on a focused button or link does what it says (Enter on "Previous" went to the next item)
    if (ev.key === "Enter" && ev.target instanceof Element && ev.target.closest("button, a")) return;
    // arrow keys move a focused slider; Enter still goes on
    if (ev.target instanceof HTMLInputElement && ev.target.type === "range" && ev.key !== "Enter") return;
    if (ev.key === "ArrowLeft") { go(-1); ev.preventDefault(); }
    else if (ev.key === "ArrowRight" || ev.key === "Enter") { go(1); ev.preventDefault(); }
    else if (/^[1-9]$/.test(ev.key)) {
      const radios = $("options").querySelectorAll("input[type=radio]");
      const r = radios[Number(ev.key) - 1];
      if (r) { r.checked = true; r.dispatchEvent(new Event("change")); r.focus(); }
    }
  });

  async function start() {
    if (!token) { $("message").textContent = "Open this page with your personal link."; return; }
    try {
      const me = await api("GET", "/api/me");
      protocol = me.protocol;
      $("title").textContent = protocol.name + " — " + me.annotator;
      $("guidelines").textContent = protocol.short_guidelines;
      if (protocol.full_guidelines_url) $("full-guidelines").href = protocol.full_guidelines_url;
      const tasks = await api("GET", "/api/tasks");
      load(tasks);
      if (!steps.length) { $("message").textContent = "Nothing to annotate right now."; return; }
      $("main").hidden = false;
      qualifying = !tasks.qualified && !tasks.failed;
      if (qualifying) $("message").textContent = "Qualification batch: main batches open once you pass it.";
      // a worker who failed read "main batches open once you pass it", which they no longer can
      if (tasks.failed) $("message").textContent = FAILED;
      render();
    } catch (err) {
      $("message").textContent = "Could not load: " + err.message;
    }
  }
  start();
})();
