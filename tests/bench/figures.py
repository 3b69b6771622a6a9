#!/usr/bin/env python3
"""Draws the tables under "### Figure: TITLE" in tests/bench/RESULTS.md
(a `| run | seconds |` table each) as horizontal bar charts,
docs/figures/TITLE.svg, with no library but Python's own.

    python3 tests/bench/figures.py           # write the drawings
    python3 tests/bench/figures.py --check   # exit 1 where one differs
"""
import html
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "tests", "bench", "RESULTS.md")
FIGURES = os.path.join(ROOT, "docs", "figures")


def figures(text):
    """(title, [(run, seconds)]) for each figure's table."""
    for part in re.split(r"^### Figure: ", text, flags=re.M)[1:]:
        title, body = part.split("\n", 1)
        rows = re.findall(r"^\| ([^|]+?) \| ([0-9.]+) \|$", body.split("\n### ")[0], re.M)
        yield title.strip(), [(run, float(seconds)) for run, seconds in rows]


def slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def svg(title, rows):
    bar_h, gap, left, width, top = 22, 8, 330, 360, 40
    most = max(seconds for _, seconds in rows)
    height = top + len(rows) * (bar_h + gap) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" '
           f'height="{height}" font-family="sans-serif" font-size="13">',
           f'<text x="10" y="22" font-size="15" font-weight="bold">{html.escape(title)}'
           ' (seconds, shorter is faster)</text>']
    for i, (run, seconds) in enumerate(rows):
        y = top + i * (bar_h + gap)
        w = max(1.0, width * seconds / most)
        colour = "#3b6ea5" if run.startswith("xpose") else "#9aa5b1"
        out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{html.escape(run)}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colour}"/>')
        out.append(f'<text x="{left + w + 6:.1f}" y="{y + 15}">{seconds:g} s</text>')
    out.append(f'<text x="10" y="{height - 8}" font-size="11" fill="#555">'
               'data: tests/bench/RESULTS.md, drawn by tests/bench/figures.py</text>')
    return "\n".join(out + ["</svg>", ""])


def main():
    check = "--check" in sys.argv[1:]
    with open(RESULTS, encoding="utf-8") as f:
        found = list(figures(f.read()))
    if not found or any(not rows for _, rows in found):
        sys.exit("figures.py: no figure tables found in " + RESULTS)
    stale = []
    for title, rows in found:
        path = os.path.join(FIGURES, slug(title) + ".svg")
        drawn = svg(title, rows)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == drawn
            except FileNotFoundError:
                same = False
            if not same:
                stale.append(path)
        else:
            os.makedirs(FIGURES, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(drawn)
            print(path)
    if stale:
        sys.exit("figures.py: not drawn from RESULTS.md's tables (run it again): " +
                 ", ".join(stale))


if __name__ == "__main__":
    main()
