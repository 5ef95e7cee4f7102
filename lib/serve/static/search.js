// The search page: reads q/day/to/lang from the address, fills the filters from /index-info,
// asks /search and lists the hits. No build step, no dependencies.
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const replay = document.body.dataset.replay;

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function fillFilters(info) {
  const days = (info.days || []).map(String);
  for (const id of ["day", "to"]) {
    const sel = $(id);
    for (const d of days) sel.appendChild(el("option", { value: d }, d));
  }
  $("day").value = params.get("day") || days[days.length - 1] || "";
  $("to").value = params.get("to") || $("day").value;
  const chosen = new Set((params.getAll("lang").join(",")).split(",").filter(Boolean));
  for (const lang of info.languages || []) {
    const name = typeof lang === "string" ? lang : lang.language;
    const box = el("input", { type: "checkbox", name: "lang", value: name });
    if (chosen.has(name)) box.setAttribute("checked", "");
    const label = el("label");
    label.append(box, " " + name);
    $("langs").appendChild(label);
  }
}

function renderHit(h) {
  const li = el("li", { class: "hit" });
  const a = el("a", { class: "title", href: h.url }, h.title || h.url);
  const url = el("div", { class: "url" }, h.url);
  const snip = el("div", { class: "snippet" });
  snip.innerHTML = h.snippet || "";  // the engine escapes the text and adds <em> around the query terms
  const meta = el("div", { class: "meta" });
  const when = (h.warc_date || h.day || "").toString().slice(0, 19).replace("T", " ");
  meta.append(`${h.language || ""} · ${when} · score ${Number(h.score).toFixed(3)} · `);
  const where = `${h.warc_file} offset ${h.warc_offset} length ${h.warc_length}`;
  meta.append(el("a", { class: "content", href: h.content_url, title: "the page as crawled: " + where }, "page"),
              " · ",
              el("a", { class: "capture", href: h.capture_url, title: "the WARC record: " + where }, "record"),
              " · ",
              el("a", { class: "captures", href: "/catalogue/captures?url=" + encodeURIComponent(h.url),
                        title: "every capture of this URL" }, "captures"));
  if (replay && h.warc_date) {
    const ts = String(h.warc_date).replace(/[^0-9]/g, "").slice(0, 14);
    meta.append(" · ", el("a", { class: "replay", href: `${replay}/${ts}/${h.url}` }, "replay"));
  }
  li.append(a, url, snip, meta);
  return li;
}

async function search() {
  const q = (params.get("q") || "").trim();
  $("q").value = q;
  if (!q) { status("Type a query."); return; }
  status("Searching…");
  const r = await fetch("/search?" + params.toString());
  const body = await r.json();
  if (!r.ok) { status(body.error || `error ${r.status}`, true); return; }
  const m = body.meta;
  status(`${m.total_results.toLocaleString("en")} results in ${m.query_time_ms.toFixed(1)} ms ` +
         `(${m.days.join(", ")}; ${m.shards} shards)`);
  document.body.dataset.total = m.total_results;
  for (const w of m.warnings || []) $("warnings").appendChild(el("li", {}, w));  // shards not served
  for (const h of body.results) $("results").appendChild(renderHit(h));
}

async function main() {
  try {
    const r = await fetch("/index-info");
    if (r.ok) fillFilters(await r.json());
    await search();
  } catch (e) {
    status("Search failed: " + e, true);
  }
  document.body.dataset.ready = "1";
}
main();
