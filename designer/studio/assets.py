"""The studio's style sheet, its one script and its icon (served from the page itself: nothing is fetched from
elsewhere, and the browser's request for ``/favicon.ico`` is answered)."""

from __future__ import annotations

__all__ = ["CSS", "FAVICON_SVG", "SCRIPT"]

#: The icon: a die face, in the studio's blue (answered at /favicon.ico and linked from the page).
FAVICON_SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="2" width="28" height="28" '
               b'rx="6" fill="#1f4e79"/><circle cx="10" cy="10" r="3" fill="#fff"/><circle cx="22" cy="22" r="3" '
               b'fill="#fff"/><circle cx="16" cy="16" r="3" fill="#fff"/></svg>')

CSS = """
body { font-size: 1rem; }
.container-fluid { max-width: 1200px; padding: 0.5rem 1rem 3rem; }
.studio-row { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
.studio-row > * { flex: 1 1 18rem; min-width: 0; }
.shiny-input-container:not(.shiny-input-container-inline) { width: 100%; max-width: 40rem; }
.studio-matrix td, .studio-matrix th, .studio-scroll td { font-variant-numeric: tabular-nums; white-space: nowrap; }
.studio-scroll { overflow-x: auto; max-width: 100%; margin-bottom: 0.3rem;
  background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)),
              linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) 100% 0,
              radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), rgba(0,0,0,0)),
              radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), rgba(0,0,0,0)) 100% 0;
  background-repeat: no-repeat; background-size: 40px 100%, 40px 100%, 14px 100%, 14px 100%;
  background-attachment: local, local, scroll, scroll; }
.studio-scroll table { margin-bottom: 0; background: transparent; }
.studio-scroll th[scope=row], .studio-scroll thead th:first-child { position: sticky; left: 0; z-index: 1;
  background: #fff; box-shadow: 2px 0 0 #dee2e6; }
.studio-scroll-cue { font-size: 0.9rem; color: #1f4e79; margin: 0 0 0.8rem; }
.studio-frame { width: 100%; height: 26rem; border: 1px solid #888; background: #fff; }
.studio-note { color: #333; }
.studio-error { color: #a00000; font-weight: 600; margin: 0.2rem 0 0.6rem; }
.studio-warning { color: #6b3f00; background: #fff4e0; border-left: 4px solid #b36b00; padding: 0.3rem 0.6rem; }
.studio-ok { color: #1b5e20; }
.studio-flag { background: #fdecea; border: 2px solid #b00020; border-left-width: 8px; color: #5f0010;
  padding: 0.6rem 0.9rem; margin: 0.6rem 0; border-radius: 4px; }
.studio-flag strong { color: #8a0018; }
.studio-words { font-size: 1.05rem; background: #eef4fa; border-left: 4px solid #1f4e79; padding: 0.4rem 0.8rem; }
.studio-downloads { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-bottom: 1rem; }
.studio-downloads .studio-unavailable { color: #555; font-size: 0.9rem; flex-basis: 100%; margin: 0; }
.studio-steps { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 0.5rem;
  border-top: 1px solid #ccc; margin-top: 1.5rem; padding-top: 0.8rem; }
.studio-progress-line { margin: 0.4rem 0 0.6rem; }
.studio-bar { height: 8px; background: #e3e7ec; border-radius: 4px; overflow: hidden; margin-top: 0.25rem;
  max-width: 30rem; }
.studio-bar > span { display: block; height: 100%; background: #1f4e79; }
.studio-legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.2rem 1.2rem; font-size: 0.95rem; }
.studio-legend svg { vertical-align: middle; }
.studio-fig-narrow { display: none; }
@media (max-width: 600px) { .studio-fig-wide { display: none; } .studio-fig-narrow { display: block; } }
.studio-term { border-bottom: 2px dotted #1f4e79; cursor: help; position: relative; }
.studio-tip { display: none; position: absolute; left: 0; top: 1.6em; z-index: 20; width: min(22rem, 80vw);
  background: #222; color: #fff; padding: 0.5rem 0.7rem; border-radius: 4px; font-size: 0.9rem; font-weight: 400;
  line-height: 1.35; }
.studio-term:hover .studio-tip, .studio-term:focus .studio-tip, .studio-term:focus-within .studio-tip {
  display: block; }
.nav-tabs { flex-wrap: wrap; }
pre { white-space: pre-wrap; word-break: break-word; }
img { max-width: 100%; height: auto; }
:focus-visible { outline: 3px solid #1f4e79 !important; outline-offset: 2px; }
.btn-file:focus-within { outline: 3px solid #1f4e79; outline-offset: 2px; }
input[type=range].form-range:focus-visible { outline: 3px solid #1f4e79; outline-offset: 4px; }
input[type=range].form-range:focus::-webkit-slider-thumb { box-shadow: 0 0 0 4px #fff, 0 0 0 7px #1f4e79; }
input[type=range].form-range:focus::-moz-range-thumb { box-shadow: 0 0 0 4px #fff, 0 0 0 7px #1f4e79; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.35rem; } h3 { font-size: 1.1rem; margin-top: 1.2rem; }
h2:focus { outline: none; }
@media print { .nav-tabs, .studio-steps, .studio-downloads, .btn { display: none !important; } }
"""

SCRIPT = r"""
(function () {
  function decimalMark() {
    try {
      var parts = new Intl.NumberFormat(navigator.language).formatToParts(1.5);
      for (var i = 0; i < parts.length; i++) { if (parts[i].type === 'decimal') { return parts[i].value; } }
    } catch (e) {}
    return '.';
  }
  var mark = decimalMark();
  function toBox(v) { return String(v).replace('.', mark === ',' ? ',' : '.'); }
  function fromBox(t) {
    t = String(t).trim();
    if (mark === ',') { t = t.replace(',', '.'); }
    return /^[+]?(\d+\.?\d*|\.\d+)$/.test(t) ? parseFloat(t) : NaN;
  }
  function setBar(v) {
    var bar = document.getElementById('epsilon_slider');
    if (!bar || !(v > 0)) { return; }
    bar.min = Math.min(0.05, v); bar.max = Math.max(8, v);
    bar.step = Math.abs(v / 0.05 - Math.round(v / 0.05)) < 1e-9 ? '0.05' : 'any';
    bar.value = v;
    bar.setAttribute('aria-valuetext', 'epsilon ' + toBox(v));
  }
  $(document).on('shiny:connected', function () {
    Shiny.setInputValue('client_decimal', mark);
    Shiny.setInputValue('client_group', group);
    if (mark === ',') {  // the fields' starting values in the locale too (0,95), read as typed
      document.querySelectorAll('input[inputmode=decimal]').forEach(function (el) {
        if (/^\d+\.\d+$/.test(el.value)) {
          el.value = el.value.replace('.', ',');
          el.dispatchEvent(new Event('change', {bubbles: true}));
        }
      });
    }
    Shiny.addCustomMessageHandler('studio_eps', function (m) { setBar(m.value); });
    Shiny.addCustomMessageHandler('studio_focus', function (m) {
      var tries = 0;
      (function focus() {  // once the step is shown: a hidden heading cannot take the focus
        var el = document.getElementById(m.id);
        if (el && el.offsetParent !== null) { el.focus(); return; }
        if (tries++ < 40) { setTimeout(focus, 25); }
      })();
    });
  });
  document.addEventListener('input', function (e) {
    if (e.target && e.target.id === 'epsilon_slider') {
      var box = document.getElementById('epsilon'), bar = e.target;
      bar.step = '0.05';
      box.value = toBox(Math.round(parseFloat(bar.value) * 100) / 100);
      bar.setAttribute('aria-valuetext', 'epsilon ' + box.value);
      box.dispatchEvent(new Event('change', {bubbles: true}));
    }
  });
  document.addEventListener('change', function (e) {
    if (e.target && e.target.id === 'epsilon') { var v = fromBox(e.target.value); if (v > 0) { setBar(v); } }
  });
  // a field's message: the field says it is invalid while the message is shown
  $(document).on('shiny:value', function (e) {
    if (!/_msg$/.test(e.name)) { return; }
    var field = document.getElementById(e.name.slice(0, -4));
    if (!field) { return; }
    var bad = !!(e.value && e.value.html && e.value.html.indexOf('studio-error') >= 0);
    if (bad) { field.setAttribute('aria-invalid', 'true'); } else { field.removeAttribute('aria-invalid'); }
  });
  // tables that scroll sideways say so while columns are out of view
  function cues() {
    document.querySelectorAll('.studio-scroll').forEach(function (box) {
      var cue = document.querySelector('.studio-scroll-cue[data-for="' + box.id + '"]');
      if (!cue) { return; }
      var more = box.scrollWidth - box.clientWidth - box.scrollLeft > 2;
      cue.hidden = !more;
    });
  }
  document.addEventListener('scroll', function (e) {
    if (e.target && e.target.classList && e.target.classList.contains('studio-scroll')) { cues(); }
  }, true);
  window.addEventListener('resize', cues);
  $(document).on('shiny:value shown.bs.tab', function () { setTimeout(cues, 0); });
  // Shiny's file boxes: the read-only name box beside the button is not a stop of its own
  function quietFileBoxes() {
    document.querySelectorAll('.input-group input[type=text][readonly]').forEach(function (el) {
      el.tabIndex = -1; el.setAttribute('aria-hidden', 'true');
    });
  }
  document.addEventListener('DOMContentLoaded', quietFileBoxes);
  $(document).on('shiny:value', function () { setTimeout(quietFileBoxes, 0); });
  // numbers the server wrote (1,234.5678) in the browser's locale (1.234,5678 in German); the field messages keep
  // the user's own typing, and code (command lines) stays as a terminal takes it
  var group = (function () {
    try {
      var parts = new Intl.NumberFormat(navigator.language).formatToParts(12345);
      for (var i = 0; i < parts.length; i++) { if (parts[i].type === 'group') { return parts[i].value; } }
    } catch (e) {}
    return ',';
  })();
  // a number: grouped thousands or a decimal point (4.49x is one too), not part of a name or a version
  var NUMBER = /(^|[^\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?:e[+-]?\d+)?)(?![A-Za-wyz0-9_]|[.,]\d)/g;
  function localText(t) {
    return t.replace(NUMBER, function (all, before, n) {
      return before + n.replace(/[.,]/g, function (c) { return c === '.' ? mark : group; });
    });
  }
  function localize(root) {
    if (mark === '.' && group === ',') { return; }
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, null);
    var node;
    while ((node = walker.nextNode())) {
      var el = node.parentElement;
      if (!el || el.closest('pre, code, input, textarea, script, style, .studio-error, .studio-keep')) { continue; }
      var t = node.nodeValue, u = localText(t);
      if (u !== t) { node.nodeValue = u; }
    }
  }
  window.studioLocalize = localText;
  $(document).on('shiny:value', function (e) {
    setTimeout(function () { var el = document.getElementById(e.name); if (el) { localize(el); } }, 0);
  });
})();
"""
