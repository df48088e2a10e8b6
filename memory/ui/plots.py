"""The stats page's plots as inline SVG, drawn here (no charting library, nothing fetched): stacked bars
per day, bars against a limit line, and a filled gauge."""

from __future__ import annotations

import math
from html import escape

W, H, LEFT, BOTTOM, TOP = 720, 220, 56, 28, 12
# Colour-blind-safe (Okabe-Ito), one per series in order; more series cycle.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
           "#999999", "#882255", "#44AA99")


def _short(n: float) -> str:
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}".replace(".0", "")
    return f"{n:g}"


def nice_top(value: float) -> float:
    """The axis top: the first of 1.5, 3, 6, 9 (x 10^k) at or above the value, so its three gridlines are
    round numbers (0.5, 1, 2 or 3 x 10^k apart)."""
    value = max(value, 1.0)
    scale = 10 ** math.floor(math.log10(value))
    for step in (1.5, 3, 6, 9, 15):
        if value <= step * scale:
            return step * scale
    return 15 * scale


def _frame(name: str, label: str, body: list[str], top: float, empty: bool = False) -> str:
    """Axes, three gridlines with their values, and the body, in one <svg>."""
    plot_h = H - BOTTOM - TOP
    if empty:
        body = [*body, f'<text x="{(LEFT + W) / 2:.0f}" y="{TOP + plot_h / 2:.0f}" class="none" '
                       'text-anchor="middle">nothing recorded in these days</text>']
    grid = []
    for i in range(4):
        y = TOP + plot_h * (1 - i / 3)
        grid.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - 8}" y2="{y:.1f}" class="grid"/>'
                    f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{_short(top * i / 3)}</text>')
    return (f'<svg class="plot" data-plot="{escape(name)}" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>'
            + "".join(grid) + "".join(body) + "</svg>")


def _x(i: int, n: int) -> tuple[float, float]:
    step = (W - 8 - LEFT) / max(n, 1)
    return LEFT + i * step + step * 0.12, step * 0.76


def _day_ticks(days: list[str]) -> list[str]:
    every = max(1, len(days) // 6)
    out = []
    for i, d in enumerate(days):
        if i % every == 0 or i == len(days) - 1:
            x, w = _x(i, len(days))
            out.append(f'<text x="{x + w / 2:.1f}" y="{H - 8}" class="tick" text-anchor="middle">{d[5:]}</text>')
    return out


def stacked_bars(name: str, label: str, days: list[str], series: dict[str, dict[str, float]]) -> str:
    """One bar a day, one coloured segment a series (a memory type), with a legend."""
    totals = [sum(s.get(d, 0) for s in series.values()) for d in days]
    top = nice_top(max(totals + [1]))
    scale = (H - BOTTOM - TOP) / top
    body: list[str] = []
    for i, d in enumerate(days):
        x, w = _x(i, len(days))
        y = H - BOTTOM
        for k, (sname, values) in enumerate(sorted(series.items())):
            v = values.get(d, 0)
            if v:
                h = v * scale
                y -= h
                body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                            f'fill="{PALETTE[k % len(PALETTE)]}"><title>{d} {escape(sname)}: {v:g}</title></rect>')
    legend = [f'<g transform="translate({LEFT + 8 + 92 * (k % 7)},{TOP + 4 + 14 * (k // 7)})">'
              f'<rect width="10" height="10" fill="{PALETTE[k % len(PALETTE)]}"/>'
              f'<text x="14" y="9" class="legend">{escape(s)}</text></g>' for k, s in enumerate(sorted(series))]
    return _frame(name, label, body + _day_ticks(days) + legend, top, not any(totals))


def bars_against(name: str, label: str, days: list[str], values: dict[str, float], limit: float | None,
                 limit_label: str = "") -> str:
    """One bar a day and, when there is one, the daily limit as a red line: a bar past it is red too."""
    top = nice_top(max([*(values.get(d, 0) for d in days), (limit or 0) * 1.05, 1]))
    scale = (H - BOTTOM - TOP) / top
    body: list[str] = []
    for i, d in enumerate(days):
        v = values.get(d, 0)
        if v:
            x, w = _x(i, len(days))
            over = limit is not None and v > limit
            body.append(f'<rect x="{x:.1f}" y="{H - BOTTOM - v * scale:.1f}" width="{w:.1f}" height="{v * scale:.1f}" '
                        f'class="{"bar over" if over else "bar"}"><title>{d}: {v:,.0f}</title></rect>')
    if limit:
        y = H - BOTTOM - limit * scale
        body.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - 8}" y2="{y:.1f}" class="limit"/>'
                    f'<text x="{LEFT + 4}" y="{y - 4:.1f}" class="limit-label">'
                    f'{escape(limit_label)} {_short(limit)}</text>')
    return _frame(name, label, body + _day_ticks(days), top, not any(values.get(d, 0) for d in days))


def gauge(name: str, label: str, used: float, cap: float, parts: dict[str, float], unit: str = "") -> str:
    """A horizontal bar filled to used/cap, split into its parts, with the cap at the right end."""
    width = W - 2 * LEFT
    share = min(1.0, used / cap) if cap else 0.0
    body, x = [], float(LEFT)
    for k, (pname, v) in enumerate(parts.items()):
        w = width * (min(v, cap) / cap if cap else 0)
        body.append(f'<rect x="{x:.1f}" y="20" width="{w:.1f}" height="28" fill="{PALETTE[k % len(PALETTE)]}">'
                    f'<title>{escape(pname)}: {_short(v)}{unit}</title></rect>')
        body.append(f'<g transform="translate({LEFT + 150 * k},70)"><rect width="10" height="10" '
                    f'fill="{PALETTE[k % len(PALETTE)]}"/><text x="14" y="9" class="legend">{escape(pname)} '
                    f'{_short(v)}{unit}</text></g>')
        x += w
    text = f"{_short(used)}{unit} of {_short(cap)}{unit} ({share:.0%})" if cap else f"{_short(used)}{unit} (no cap)"
    return (f'<svg class="plot" data-plot="{escape(name)}" viewBox="0 0 {W} 90" role="img" '
            f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>'
            f'<rect x="{LEFT}" y="20" width="{width}" height="28" class="track"/>' + "".join(body)
            + f'<text x="{LEFT}" y="14" class="tick">{escape(text)}</text></svg>')
