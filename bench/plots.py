"""The benchmarks' figures, drawn with matplotlib (a bench dependency: ``pip install -e .[bench]``;
never in the extension zip, whose Compare box draws its own small plot with numpy alone,
``motionctl.evaluate.plot``).

- ``scoreboard_figure``: each engine's median response to a new direction, a new speed and a stop
  against its foot skating, one marker per engine in its colour, the source capture's skating as a
  reference line; a hollow marker where fewer than 90% of the trials were reached, a marker on the
  top edge where none was.
- ``responses_figure``: one direction trial and one speed trial over time, what was asked against
  what every engine did.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from motionctl.evaluate.plot import PALETTE, colour_name  # noqa: E402

RESPONSES = (("direction_s", "new direction"), ("speed_s", "new speed"), ("stop_s", "stop"))


def _style(row: dict) -> dict:
    variant = ":" in row.get("variant", "")
    return {"color": PALETTE[colour_name(row["engine"])], "marker": "s" if variant else "o",
            "linestyle": "--" if variant else "-"}


def scoreboard_figure(r: dict, path: str) -> None:
    """Write the scoreboard's figure (responses against foot skating) to ``path`` (PNG)."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), sharex=True)
    src = 100 * r["source"]["skating"]
    x_max = max([100 * row["skating"] for row in r["rows"]] + [src]) * 1.25 + 0.1
    for ax, (key, title) in zip(axes, RESPONSES):
        meds = [row["stats"][key]["median"] for row in r["rows"] if row["stats"].get(key, {}).get("median") is not None]
        top = max(meds + [1.0]) * 1.2
        for row in r["rows"]:
            s, st = row["stats"].get(key, {}), _style(row)
            y = s.get("median")
            reached = s.get("reached") or 0.0
            ax.plot(100 * row["skating"], top if y is None else y, st["marker"], color=st["color"], markersize=9,
                    markerfacecolor=st["color"] if reached >= 0.9 else "none", markeredgewidth=2,
                    label=row["label"], clip_on=False)
        ax.axvline(src, color="0.4", linestyle=":", label="source capture's skating")
        ax.set_xlim(0, x_max)
        ax.set_ylim(0, top)
        ax.set_title(f"Response to a {title}" if title != "stop" else "Response to stop")
        ax.set_xlabel("foot skating (% of contact frames)")
        ax.set_ylabel("median response time (s)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, frameon=False)
    fig.suptitle("Every engine on CMU subject 16's locomotion: faster answers are lower, cleaner feet to the left "
                 "(hollow: under 90% of trials reached; on the top edge: none)", fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 0.95))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def responses_figure(r: dict, path: str) -> None:
    """Write one direction trial and one speed trial over time, asked against done, to ``path``."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    shown = False
    for row in r["rows"]:
        course = row.get("course") or {}
        st = _style(row)
        d, v = course.get("direction"), course.get("speed")
        if d:
            left.plot(d["t"], d["heading"], color=st["color"], linestyle=st["linestyle"], label=row["label"])
        if v:
            t = np.asarray(v["t"])
            right.plot(t, v["speed"], color=st["color"], linestyle=st["linestyle"], label=row["label"])
        if d and v and not shown:
            shown = True
            left.axhline(d["asked"], color="k", linestyle=(0, (4, 3)), label="asked")
            right.plot([t[0], 0, 0, t[-1]], [v["before"], v["before"], v["asked"], v["asked"]], color="k",
                       linestyle=(0, (4, 3)), label="asked")
    left.set_title("A new direction (asked at 0 s)")
    left.set_xlabel("time since the command (s)")
    left.set_ylabel("heading, from the one before (degrees, + left)")
    right.set_title("A new speed (asked at 0 s)")
    right.set_xlabel("time since the command (s)")
    right.set_ylabel("ground speed over a stride (m/s)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    handles, labels = right.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
