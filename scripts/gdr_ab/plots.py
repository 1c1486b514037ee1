"""The PNGs: bandwidth (with each path's ceiling) or latency against message
size, one line per path, one panel per verb. Each returns the PNG as bytes, so
that nothing is written until the whole image exists.

Every text drawn comes from a CSV or the command line and is drawn literally:
matplotlib's mathtext (which reads "$...$" as TeX and raises on a bad
formula) never sees a "$" that is not escaped.
"""

import io
import warnings

from .common import PATH_ORDER, fmt_size_short, ordered
from .table import (BW, first_status, path_ceilings, ratio_phrase, reason_lines,
                    summary_claim, summary_interval, summary_ratio, summary_window, title, varying_ceilings)

# Fixed colours so that a path looks the same in every plot.
STYLE = {
    "host": dict(color="black", linestyle="--", marker="s"),
    "dmabuf": dict(color="tab:blue", marker="o"),
    "peermem": dict(color="tab:green", marker="^"),
    "bounce": dict(color="tab:orange", marker="D"),
}
TITLE_MAX = 160


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.usetex"] = False
    # A character the font lacks is drawn as a box; the warning says nothing a
    # user can act on.
    warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from")
    import matplotlib.pyplot as plt

    return plt, literal


def literal(s):
    """S drawn as it is: with every "$" escaped, matplotlib finds no math in
    it and draws each "\\$" as "$" (unlike switching mathtext off for the
    whole figure, this keeps the log axes' tick labels, which are mathtext)."""
    return s.replace("$", r"\$")


def _short(s, limit=TITLE_MAX):
    return s if len(s) <= limit else s[:limit - 3] + "..."


def distinct(rows, col):
    vals = []
    for r in rows:
        v = (r.get(col) or "").strip()
        if v and v not in vals:
            vals.append(v)
    return vals


def plot_title(rows, head):
    ok = [r for r in rows if r["status"] == "ok"] or rows
    dist = distinct(ok, "distance")
    parts = [f"GPU-NIC distance: {'/'.join(dist) if dist else 'unknown'}"]
    gpu = distinct(ok, "gpu_name") or distinct(ok, "gpu")
    if gpu:
        parts.append(f"GPU: {', '.join(gpu[:2])}{' ...' if len(gpu) > 2 else ''}")
    nic = distinct(ok, "nic")
    if nic:
        parts.append(f"NIC: {', '.join(nic[:3])}{' ...' if len(nic) > 3 else ''}")
    return _short(head) + "\n" + _short("   ".join(parts))


def _ceilings(sizes, paths):
    """{ceiling Gb/s: [paths]}: the paths that share each ceiling (one that varies
    with the size has no line: see varying_ceilings)."""
    out = {}
    vary = varying_ceilings(sizes, paths)
    for p, v in path_ceilings(sizes, paths).items():
        if p not in vary:
            out.setdefault(round(v, 3), []).append(p)
    return out


def plot_table(table, rows, head, warnings=()):
    """The PNG of one Table (bandwidth or latency) as bytes."""
    plt, _ = _pyplot()
    return _png(figure(table, rows, head, warnings), plt)


# A ceiling is drawn when the data reach this share of it; above, the axis
# would squeeze the data into its bottom, so the ceiling is a note instead.
CEILING_REACH = 0.5


def figure(table, rows, head, warnings=()):
    """The matplotlib figure of one Table (the tests look into it). Bandwidth:
    per verb a panel of Gb/s with the repeats' min-max bars and, below it, a
    panel of the ratio to host with its interval. WARNINGS (the anomalies)
    are printed on the figure in red."""
    plt, literal = _pyplot()
    kind = table.kind
    verbs = table.verbs()
    notes = []
    ncols = min(2, len(verbs))
    nrows = (len(verbs) + ncols - 1) // ncols
    bw = kind is BW
    per = 2 if bw else 1
    fig = plt.figure(figsize=(6.6 * ncols + 0.4, (6.4 if bw else 4.6) * nrows + 0.9))
    grid = fig.add_gridspec(nrows * per, ncols,
                            height_ratios=([3, 1.4] if bw else [1]) * nrows)
    for i, verb in enumerate(verbs):
        r, c = divmod(i, ncols)
        ax = fig.add_subplot(grid[r * per, c])
        sizes = table.cells[verb]
        paths = ordered({p for cs in sizes.values() for p in cs}, PATH_ORDER)
        _values_panel(ax, table, verb, sizes, paths, notes, literal)
        if bw:
            _ratio_panel(fig.add_subplot(grid[r * per + 1, c], sharex=ax), verb, sizes, paths,
                         literal)
    default = ("gdrperf: GPU-to-GPU RDMA bandwidth by path" if bw
               else "gdrperf: GPU-to-GPU RDMA latency by path (p50)")
    fig.suptitle(literal(plot_title(rows, head or default)), fontsize=11)
    _footer(fig, notes, literal, list(warnings))
    return fig


def _size_axis(ax, all_sizes):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    step = max(1, (len(all_sizes) + 9) // 10)
    ax.xaxis.set_major_locator(FixedLocator(all_sizes[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: fmt_size_short(int(x))))
    ax.set_xlim(all_sizes[0] / 1.5, all_sizes[-1] * 1.5)


def _values_panel(ax, table, verb, sizes, paths, notes, literal):
    kind = table.kind
    window, where = summary_window(sizes, kind)
    tops = []
    for p in paths:
        xs = [s for s in sorted(sizes) if p in sizes[s] and sizes[s][p].value is not None]
        style = STYLE.get(p, dict(marker="o"))
        # The verdict where it is read: the summary line's ratio in the legend.
        claim = summary_claim(table, verb, p) if kind is BW else None
        ratio = summary_ratio(p, sizes, window, claim) if p != "host" else None
        if ratio is not None and kind is BW:
            lo, hi, claimed = summary_interval(p, sizes, window, claim)
            label = (f"{p}: {ratio_phrase(ratio, lo, hi, claimed=claimed, word=claim.word if claim else None)}"
                     f" at {where}")
        else:
            label = ("host (NIC baseline)" if p == "host"
                     else f"{p}: {ratio:.2f}x host at {where}" if ratio is not None else p)
        if xs:
            cells = [sizes[s][p] for s in xs]
            ax.plot(xs, [c.value for c in cells], label=literal(label),
                    linewidth=1.8, markersize=5, **style)
            tops += [c.value for c in cells]
            bars = [(s, c) for s, c in zip(xs, cells) if c.lo is not None]
            if bars:
                # The repeats' min-max, drawn as bars (a collection: the lines stay the data).
                ax.vlines([s for s, _ in bars], [c.lo for _, c in bars], [c.hi for _, c in bars],
                          color=style.get("color", "grey"), linewidth=2.2, alpha=0.55)
                tops += [c.hi for _, c in bars]
            odd = [(s, c) for s, c in zip(xs, cells) if c.flags]
            if odd:
                ax.scatter([s for s, _ in odd], [c.value for _, c in odd], s=140,
                           facecolors="none", edgecolors="red", linewidths=1.6, zorder=5)
            holes = [s for s in sorted(sizes) if p in sizes[s] and sizes[s][p].value is None]
            if holes and kind is BW:
                ax.plot(holes, [0] * len(holes), linestyle="none", marker="x",
                        markersize=8, color=style.get("color", "grey"), clip_on=False)
        else:
            # Keep the path in the legend so that its absence is visible.
            ax.plot([], [], linestyle="none", marker="x", color=style.get("color", "grey"),
                    label=literal(f"{p}: {first_status(p, sizes)}"))
        for line in reason_lines(p, sizes):
            notes.append(f"{title(verb, kind)}: {line}")
    _size_axis(ax, sorted(sizes))
    base, _, bidir = verb.partition(" ")
    name = f"RDMA {base.upper()}" + (" (bidirectional)" if bidir else "")
    off = []
    if kind is BW:
        top = max(tops) if tops and max(tops) > 0 else None
        for p, (lo, hi) in varying_ceilings(sizes, paths).items():
            off.append(f"{p} ceiling {lo:g}-{hi:g} Gb/s, by size (ceiling_gbps)")
        for ceil, who in sorted(_ceilings(sizes, paths).items()):
            label = (f"ceiling {ceil:g} Gb/s"
                     + ("" if len(who) == len(paths) else f" ({', '.join(who)})"))
            if top is not None and top < CEILING_REACH * ceil:
                off.append(f"{label}: off the scale, the data reach {100 * top / ceil:.0f} %")
                continue
            color = STYLE.get(who[0], {}).get("color", "grey") if len(who) == 1 else "red"
            ax.axhline(ceil, color=color, linestyle=":", linewidth=1.5, label=literal(label))
            top = max(top or 0, ceil)
        # The axis fits the data (and a ceiling within reach), with room above.
        ax.set_ylim(bottom=0, top=top * 1.08 if top else None)
        ax.set_title(literal(name))
        ax.set_ylabel(f"Gb/s (median of {kind.column};\nbars: min-max of the repeats)",
                      fontsize=9)
    else:
        if any(c.value for s in sizes.values() for c in s.values()):
            _log_axis(ax)
        ax.set_title(literal(f"{name} latency"))
        ax.set_ylabel(f"latency, us (median of {kind.column})")
        ax.set_xlabel("message size (bytes)")
    ax.grid(True, which="major", alpha=0.35)
    # Where it hides the fewest points: rising curves leave the lower right free, a
    # slow path along the bottom (bounce under TCG) does not.
    # The ceilings that are not drawn head the legend, so that it never hides them.
    ax.legend(loc="best", fontsize=8, title=literal("\n".join(off)) if off else None,
              title_fontsize=8, alignment="left")


def _log_axis(ax):
    """A log y axis labelled at 1-2-5 steps, so that a short range still reads."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
    fmt = FuncFormatter(lambda y, _pos: f"{y:g}")
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(fmt)
    ax.tick_params(axis="y", which="minor", labelsize=8)
    ax.grid(True, which="minor", axis="y", alpha=0.15)


def _ratio_panel(ax, verb, sizes, paths, literal):
    """Each GPU path's ratio to host with its interval; host is the line at 1."""
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1.2)
    got = [1.0]
    for p in paths:
        if p == "host":
            continue
        xs = [s for s in sorted(sizes) if p in sizes[s] and sizes[s][p].ratio is not None]
        if not xs:
            continue
        style = STYLE.get(p, dict(marker="o"))
        cells = [sizes[s][p] for s in xs]
        ax.plot(xs, [c.ratio for c in cells], linewidth=1.4, markersize=4, **style)
        got += [c.ratio for c in cells]
        bars = [(s, c) for s, c in zip(xs, cells) if c.rlo is not None]
        if bars:
            ax.vlines([s for s, _ in bars], [c.rlo for _, c in bars], [c.rhi for _, c in bars],
                      color=style.get("color", "grey"), linewidth=2.2, alpha=0.55)
            got += [c.rlo for _, c in bars] + [c.rhi for _, c in bars]
    if len(got) == 1:
        ax.text(0.5, 0.5, "no host rows: no ratio", transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="dimgray")
    lo, hi = min(got), max(got)
    pad = max(0.05, 0.1 * (hi - lo))
    ax.set_ylim(max(0, lo - pad), hi + pad)
    ax.set_ylabel("ratio to host\n(bars: interval at the\nerror rate)", fontsize=9)
    ax.set_xlabel("message size (bytes)")
    ax.grid(True, which="major", alpha=0.35)


def _footer(fig, notes, literal, warnings=()):
    shown = notes[:6] + ([f"... and {len(notes) - 6} more (see the table)"]
                         if len(notes) > 6 else [])
    # About 14 characters of 8-point text per inch of figure.
    width = max(60, int(fig.get_figwidth() * 14))
    shown = [n if len(n) <= width else n[:width - 3] + "..." for n in shown]
    warn = [f"! {w}" for w in warnings[:6]] + (
        [f"! ... and {len(warnings) - 6} more anomalies (see the table)"]
        if len(warnings) > 6 else [])
    warn = [_wrap(w, width) for w in warn]
    lines = sum(w.count("\n") + 1 for w in warn) + len(shown)
    if shown:
        fig.text(0.01, 0.01, literal("\n".join(shown)), fontsize=8, va="bottom", ha="left",
                 color="dimgray")
    if warn:
        fig.text(0.01, 0.01 + 0.14 * len(shown) / fig.get_figheight(),
                 literal("\n".join(warn)), fontsize=8, va="bottom", ha="left", color="red")
    foot = min(0.45, (0.15 + 0.14 * lines) / fig.get_figheight()) if lines else 0.0
    fig.tight_layout(rect=(0, foot, 1, 1))


def _wrap(text, width=150):
    import textwrap

    return "\n".join(textwrap.wrap(text, width, subsequent_indent="    ")) or text


def _png(fig, plt):
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=110)
    finally:
        plt.close(fig)
    return buf.getvalue()


def heatmap(verb, paths, names, head):
    """The node x node matrix of one verb as a heatmap PNG (bytes): one panel
    per path, one colour scale for all, each cell's Gb/s written in it; a pair
    without a number is grey and says so."""
    plt, literal = _pyplot()
    import numpy as np

    order = ordered(paths, PATH_ORDER)
    n = len(names)
    vals = [v for p in order for v in paths[p].values() if v is not None]
    top = max(vals) if vals else 1.0
    cols = min(3, len(order))
    rows_ = (len(order) + cols - 1) // cols
    side = max(3.8, 0.7 * n + 2.0)
    fig, axes = plt.subplots(rows_, cols, figsize=(side * cols + 1.4, side * rows_ + 1.0),
                             squeeze=False, constrained_layout=True)
    flat = [ax for line in axes for ax in line]
    for ax in flat[len(order):]:
        ax.set_visible(False)
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("lightgrey")
    image = None
    for k, (ax, path) in enumerate(zip(flat, order)):
        cells = paths[path]
        grid = np.full((n, n), np.nan)
        for i, h in enumerate(names):
            for j, p in enumerate(names):
                v = cells.get((h, p))
                if v is not None:
                    grid[i, j] = v
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=top)
        for i, h in enumerate(names):
            for j, p in enumerate(names):
                v = cells.get((h, p))
                text = f"{v:.1f}" if v is not None else ("no data" if (h, p) in cells else "")
                if text:
                    dark = v is not None and v < 0.6 * top
                    ax.text(j, i, text, ha="center", va="center", fontsize=8,
                            color="white" if dark else "black")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels([literal(x) for x in names], rotation=45, ha="right", fontsize=8)
        ax.set_yticklabels([literal(x) for x in names], fontsize=8)
        ax.set_xlabel("peer")
        if k % cols == 0:
            ax.set_ylabel("host (measuring node)")
        ax.set_title(literal(path))
    if image is not None:
        fig.colorbar(image, ax=[a for a in flat if a.get_visible()], shrink=0.8,
                     label=f"Gb/s (median of bw_avg_gbps at >= 1 MiB)")
    base, _, bidir = verb.partition(" ")
    default = f"gdrperf: node x node RDMA {base.upper()}{' (bidirectional)' if bidir else ''}"
    fig.suptitle(literal(_short(head or default)), fontsize=11)
    return _png(fig, plt)
