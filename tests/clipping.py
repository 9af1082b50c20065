"""What a projector shows: nothing clipped at 1024x768 and 1280x720 (issue 27), measured in Chromium.

The check of one page (:func:`check_sizes`), shared by the page walk of ``test_browser.py`` (every page
of the app in English) and by ``test_browser_projector_pages.py`` (the lesson in Danish, the teacher's
pages in class mode).  What counts as clipped is measured on the real layout by :data:`CLIPPED_JS`:

- any text whose own box (its text nodes, laid out in full: an ellipsis is only painted) does not fit
  inside an ancestor that hides overflow (``hidden``/``clip``, or ``auto``/``scroll``: text behind a
  scroll bar is cut too) or ends in ``text-overflow: ellipsis``; vertically only for small boxes (a
  card, a button, a chart), since the page and the sidebar scroll;
- any text that spills out of the window horizontally;
- a chart's text (Vega-Lite draws SVG ``<text>``): an axis title, label or legend entry cut by the
  chart's box, or truncated by Vega itself (ending in "…");
- ``st.dataframe``: a canvas grid, so no text boxes.  Its own column model (glide-data-grid's
  ``columns``, read from the grid's React props) gives each column's width; each header title is
  measured with the grid's header font and must fit its column.  Columns beyond the grid's visible
  width (behind its horizontal scroll bar) are listed but not failed: a wide table scrolls.

Buttons, metric cards, tab labels, expander headers, captions, sidebar items and table headers are
all covered by the first rule (they are text in the DOM).  What is not checked: text inside a grid's
cells (a grid truncates long cells by design), the content of closed expanders and of tabs not shown,
and overlaps between elements (see the screenshots, saved where the test says).
"""
from __future__ import annotations

from pathlib import Path

from app_helpers import wait_until_idle

SIZES = [(1024, 768), (1280, 720)]
#: Every page of the app by its URL path (the Dashboard is "/"), checked in English.
PAGES = ["", "lesson", "learn", "exercises", "failures", "compare", "answers", "ragas", "golden_set",
         "corpus_explorer", "corpus_map", "health", "history", "systems", "bring_your_system", "tune", "presenter"]
SCROLLED = "behind the grid's horizontal scroll"

#: Every clipped text of the page: ``[{where, text, why}]`` (see the module docstring).
CLIPPED_JS = """() => {
  const SCROLLED = "behind the grid's horizontal scroll";
  const vw = document.documentElement.clientWidth;
  const bad = [];
  const tol = 1;
  const hides = v => v === 'hidden' || v === 'clip' || v === 'auto' || v === 'scroll';
  const shown = el => {
    for (let a = el; a && a.nodeType === 1; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return false;
    }
    return el.getClientRects().length > 0;
  };
  const name = el => {
    const t = el.closest('[data-testid]');
    return t ? t.getAttribute('data-testid') : el.tagName.toLowerCase();
  };
  // the box of an element's own text (its text nodes), laid out in full (an ellipsis is only painted)
  const textBox = el => {
    let l = Infinity, r = -Infinity, t = Infinity, b = -Infinity, s = '';
    for (const n of el.childNodes) {
      if (n.nodeType !== 3 || !n.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const rc of range.getClientRects()) {
        if (rc.width < 0.5) continue;
        l = Math.min(l, rc.left); r = Math.max(r, rc.right); t = Math.min(t, rc.top); b = Math.max(b, rc.bottom);
      }
      s += n.textContent;
    }
    return r > l ? {l, r, t, b, s: s.trim().replace(/\\s+/g, ' ')} : null;
  };
  const roots = [...document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"]')];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = walker.nextNode(); el; el = walker.nextNode()) {
      if (el.closest('canvas, [data-testid="stTooltipContent"], [role="tooltip"]')) continue;
      const svgText = el instanceof SVGElement && el.tagName.toLowerCase() === 'text';
      if (el instanceof SVGElement && !svgText) continue;
      const box = svgText ? (() => { const r = el.getBoundingClientRect();
        return {l: r.left, r: r.right, t: r.top, b: r.bottom, s: el.textContent.trim()}; })() : textBox(el);
      if (!box || !box.s || !shown(el)) continue;
      let why = null;
      // a chart's text is measured by its em box, taller than its ink: a few pixels of slack across the
      // line (vertically, or horizontally for a rotated axis title at the chart's edge)
      const turned = svgText && /rotate/.test(el.getAttribute('transform') || '');
      const tlx = turned ? 4 : tol, tly = svgText && !turned ? 4 : tol;
      if (svgText && /…$/.test(box.s)) why = 'truncated by the chart';
      {
        for (let a = el; a && a !== document.body; a = a.parentElement) {
          const cs = getComputedStyle(a);
          const isSvgRoot = a.tagName.toLowerCase() === 'svg';
          const ellipsis = cs.textOverflow === 'ellipsis';
          if (!(hides(cs.overflowX) || hides(cs.overflowY) || ellipsis || isSvgRoot)) continue;
          if (a instanceof SVGElement && !isSvgRoot) continue;
          const r = a.getBoundingClientRect();
          if (r.width <= 2 || r.height <= 2) { why = 'sr-only'; break; }  // visually hidden on purpose
          const left = r.left + (a.clientLeft || 0), right = left + (a.clientWidth || r.width);
          const top = r.top + (a.clientTop || 0), bottom = top + (a.clientHeight || r.height);
          if (hides(cs.overflowX) || ellipsis || isSvgRoot) {
            const over = Math.max(box.r - right, left - box.l);
            if (over > tlx) {
              why = `cut by ${name(a)} (${cs.overflowX}${ellipsis ? ', ellipsis' : ''}) by ${Math.round(over)} px`;
              break;
            }
          }
          const vy = cs.overflowY;
          // vertically only a small box (a card, a button, a chart): the page and sidebar scroll
          if ((vy === 'hidden' || vy === 'clip' || isSvgRoot) && r.height < 200) {
            const over = Math.max(box.b - bottom, top - box.t);
            if (over > tly + 2) { why = `cut vertically by ${name(a)} by ${Math.round(over)} px`; break; }
          }
        }
      }
      if (!why && (box.r > vw + tol || box.l < -tol)) why = 'outside the window';
      if (why && why !== 'sr-only') bad.push({where: name(el), text: box.s.slice(0, 80), why});
    }
  }
  // a control (a button, a segment of a segmented control, a tab) must be whole, not only its text
  const controls = '[data-testid="stMain"] button, [data-testid="stSidebar"] button, [role="tab"]';
  document.querySelectorAll(controls).forEach(el => {
    if (!shown(el)) return;
    const box = el.getBoundingClientRect();
    if (box.width < 2 || box.height < 2) return;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (!hides(cs.overflowX)) continue;
      const r = a.getBoundingClientRect();
      const left = r.left + a.clientLeft, right = left + a.clientWidth;
      if (box.right > right + tol || box.left < left - tol) {
        const label = (el.innerText || el.getAttribute('aria-label') || '').trim().replace(/\\s+/g, ' ');
        bad.push({where: name(el), text: label.slice(0, 80), why: `control cut by ${name(a)}`});
        break;
      }
    }
  });
  // a select box shows its choice, a text box its value, as an input's value (no text node): cut when it
  // is wider than the input
  document.querySelectorAll('[data-testid="stMain"] input, [data-testid="stSidebar"] input').forEach(el => {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (!['text', 'search', 'url', 'email', 'number'].includes(type) || !el.value || !shown(el)) return;
    if (el.scrollWidth > el.clientWidth + tol) bad.push({where: name(el), text: el.value, why: 'wider than its box'});
  });
  // st.dataframe is a canvas grid: its own column model (glide's columns, read from React) gives each
  // column's width; its header must fit its title, and no column may lie past the grid's visible width
  const ctx = document.createElement('canvas').getContext('2d');
  document.querySelectorAll('canvas[data-testid="data-grid-canvas"]').forEach(cv => {
    if (!shown(cv)) return;
    const key = Object.keys(cv).find(k => k.startsWith('__reactFiber'));
    let f = key && cv[key], cols = null, theme = null;
    for (let i = 0; f && i < 20; i++, f = f.return) {
      const p = f.memoizedProps;
      if (p && Array.isArray(p.columns) && p.headerHeight !== undefined) { cols = p.columns; theme = p.theme; break; }
    }
    if (!cols) { bad.push({where: 'stDataFrame', text: '(column model not found)', why: 'cannot check'}); return; }
    const gridW = cv.getBoundingClientRect().width;
    const gridL = cv.getBoundingClientRect().left;
    const total = cols.reduce((s, c) => s + c.width, 0);
    const grow = cols.reduce((s, c) => s + (c.grow || 0), 0);
    const extra = total < gridW && grow > 0 ? gridW - total : 0;
    const font = (theme && theme.headerFontStyle || '400 14px') + ' ' + (theme && theme.fontFamily || 'sans-serif');
    const pad = theme && theme.cellHorizontalPadding !== undefined ? theme.cellHorizontalPadding : 8;
    ctx.font = font;
    let x = 0;
    for (const c of cols) {
      const w = c.width + (extra ? extra * (c.grow || 0) / grow : 0);
      const title = c.title || '';
      const need = ctx.measureText(title).width + 2 * pad;
      const where = 'stDataFrame header';
      const short = `needs ${Math.ceil(need)} px, has ${Math.round(w)}`;
      if (title && need > w + tol) bad.push({where, text: title, why: short});
      else if (x + w > gridW + tol) bad.push({where, text: title, why: SCROLLED});
      else if (gridL + x + w > vw + tol) bad.push({where, text: title, why: 'outside the window'});
      x += w;
    }
  });
  return bad;
}"""


def check_sizes(page, path: str, tag: str, found: dict, scrolled: dict, shots: Path, at_size=None) -> None:
    """The page open at ``/path``: at each projector size, wait until at rest, collect what is clipped
    (into ``found`` and ``scrolled``, keyed by page, tag and size) and save a screenshot into ``shots``;
    then ``at_size(w, h)``, if given (a caller's own check of the page at that size)."""
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        wait_until_idle(page, 120)
        exc = page.locator('[data-testid="stException"]')
        assert exc.count() == 0, f"exception on /{path}: {exc.first.inner_text()[:1000]}"
        where = f"/{path} ({tag}) at {w}x{h}"
        bad = page.evaluate(CLIPPED_JS)
        found[where] = [b for b in bad if b["why"] != SCROLLED]
        scrolled[where] = [b["text"] for b in bad if b["why"] == SCROLLED]
        page.screenshot(path=str(shots / f"{path or 'dashboard'}-{tag}-{w}x{h}.png"))
        if at_size is not None:
            at_size(w, h)


def report(found: dict, scrolled: dict) -> str:
    """Each page's count of clipped texts, then each clipped text, then the grid columns behind a scroll."""
    lines = [f"{where}: {len(bad)} clipped" for where, bad in found.items()]
    lines += [f"  {b['where']}: {b['text']!r} ({b['why']})" for bad in found.values() for b in bad]
    lines += [f"{where}: grid columns behind a horizontal scroll: {cols}" for where, cols in scrolled.items() if cols]
    return "\n".join(lines)
