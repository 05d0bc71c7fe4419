"""The report's plotly figures: every one titled, every axis named with its unit.

plotly.js reads trace names, tick labels and hover text as a small subset of HTML
(``<b>``, ``<br>``, ``<a href>``...), so every value that came from the platform passes
through :func:`plot_text` first: shortened, then HTML-escaped, which plotly shows as the
literal characters. Example::

    figures = report_figures(data)          # {"severity-trend": go.Figure, ...}
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from toolkit.audit import AREAS, SEVERITIES
from toolkit.report.trends import ACCESS_LEVELS

if TYPE_CHECKING:
    from collections.abc import Collection

    import pandas as pd

    from toolkit.report.report_data import ReportData

__all__ = ["FONT_STACK", "SEVERITY_COLOURS", "plot_text", "report_figures"]

FONT_STACK = (
    'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, '
    '"Noto Sans", "Liberation Sans", "DejaVu Sans", sans-serif'
)
SEVERITY_COLOURS = {
    "critical": "#9f1239",
    "high": "#dc2626",
    "medium": "#d97706",
    "low": "#2563eb",
    "info": "#64748b",
}
_LINE_COLOURS = ("#0f766e", "#7c3aed", "#b45309", "#be185d", "#1d4ed8", "#4d7c0f", "#475569")
_DASHES = ("solid", "dash", "dashdot", "longdash")
_MARKERS = ("circle", "square", "diamond", "triangle-up", "cross", "x")
_COLLECTOR_COLOUR = "#111827"
_HEAT_COLOURS = ("#f1f5f9", "#cbd5e1", "#93c5fd", "#f59e0b", "#b91c1c")
_TIME_AXIS = "snapshot taken (UTC)"
_MAX_SNAPSHOT_TICKS = 10


def plot_text(value: object, limit: int = 48) -> str:
    """Platform text made safe for a plotly label: shortened to ``limit``, then escaped."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return html.escape(text, quote=True)


def report_figures(data: ReportData) -> dict[str, go.Figure]:
    """Every figure of the HTML report by element id; a chart with no data is left out."""
    figures = {"open-by-area": open_by_area(data.unwaived_open)}
    trends = data.trends
    if not trends.empty:
        figures["severity-trend"] = severity_trend(trends.severity)
        figures["runtime-trend"] = runtime_trend(trends.runtime)
        figures["limits-trend"] = limits_trend(trends.runtime)
        if not trends.reach.empty:
            collectors = {s.credential_name for s in data.snapshots if s.credential_name}
            figures["reach-trend"] = reach_trend(trends.reach, collectors)
    if not data.reach.empty:
        figures["reach-heatmap"] = reach_heatmap(data.reach)
    return figures


def open_by_area(findings: pd.DataFrame) -> go.Figure:
    """Unwaived unresolved findings per area, stacked by severity (horizontal bars)."""
    areas = [a for a in AREAS if a in set(findings.area)] + sorted(set(findings.area) - set(AREAS))
    fig = go.Figure()
    for severity in SEVERITIES:
        counts = [
            int(((findings.area == a) & (findings.severity == severity)).sum()) for a in areas
        ]
        if any(counts):
            fig.add_bar(
                name=severity,
                y=[plot_text(a) for a in areas],
                x=counts,
                orientation="h",
                marker_color=SEVERITY_COLOURS[severity],
                hovertemplate="%{y}: %{x} " + severity + " finding(s)<extra></extra>",
            )
    fig.update_layout(barmode="stack", height=max(260, 60 + 34 * len(areas)))
    fig.update_yaxes(autorange="reversed", title_text="area")
    return _finish(
        fig, "Unresolved findings by area and severity", "unresolved findings (count)", None
    )


def severity_trend(series: pd.DataFrame) -> go.Figure:
    """Alarms per snapshot, one small panel per severity (critical on top), each on its own
    scale: stacked in one bar, 6 critical findings under 240 others were a 1-2 pixel sliver;
    in their own panel they are as tall and as readable as the 120 high ones."""
    shown = [s for s in SEVERITIES if series[series.severity == s].alarms.any()]
    rows = max(1, len(shown))
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.05)
    for row, severity in enumerate(shown, start=1):
        part = series[series.severity == severity]
        fig.add_bar(
            name=severity,
            x=part.snapshot_at,
            y=part.alarms,
            marker_color=SEVERITY_COLOURS[severity],
            text=part.alarms,
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{x|%Y-%m-%d %H:%M}: %{y} " + severity + "<extra></extra>",
            row=row,
            col=1,
        )
        top = max(1, int(part.alarms.max()))
        fig.update_yaxes(title_text=severity, range=[0, top * 1.3], nticks=3, row=row, col=1)
    fig.update_layout(showlegend=False, height=110 + 105 * rows, bargap=0.25)
    _snapshot_ticks(fig, series.snapshot_at)
    _finish(fig, "Findings in alarm, by severity", _TIME_AXIS, None)
    fig.update_xaxes(title_text=None)
    fig.update_xaxes(title_text=_TIME_AXIS, row=rows, col=1)  # under the bottom panel only
    fig.update_yaxes(title_font={"color": "#1e293b", "size": 12})
    return fig


def runtime_trend(runtime: pd.DataFrame) -> go.Figure:
    """Crashing replicas and OOM-killed services per snapshot."""
    fig = go.Figure()
    lines = (
        ("crashing_replicas", "crashing replicas"),
        ("oom_killed_services", "services OOM-killed in the 24 h before"),
    )
    for n, (column, name) in enumerate(lines):
        fig.add_scatter(
            name=name,
            x=runtime.snapshot_at,
            y=runtime[column],
            mode="lines+markers",
            line={"color": _LINE_COLOURS[n], "width": 2},
            hovertemplate="%{x|%Y-%m-%d %H:%M}: %{y} " + name + "<extra></extra>",
        )
    fig.update_yaxes(rangemode="tozero")
    _snapshot_ticks(fig, runtime.snapshot_at)
    return _finish(
        fig, "Crashing replicas and OOM kills", _TIME_AXIS, "replicas or services (count)"
    )


def limits_trend(runtime: pd.DataFrame) -> go.Figure:
    """The share of services that set both a CPU and a memory limit."""
    fig = go.Figure()
    fig.add_scatter(
        name="services with CPU and memory limits",
        x=runtime.snapshot_at,
        y=runtime.limits_share,
        customdata=runtime.services,
        mode="lines+markers",
        line={"color": _LINE_COLOURS[0], "width": 2},
        hovertemplate="%{x|%Y-%m-%d %H:%M}: %{y:.1f}% of %{customdata} services<extra></extra>",
    )
    fig.update_yaxes(range=[0, 105], ticksuffix="%")
    fig.update_layout(showlegend=False)
    _snapshot_ticks(fig, runtime.snapshot_at)
    return _finish(fig, "Services with CPU and memory limits", _TIME_AXIS, "share of services (%)")


def reach_trend(reach: pd.DataFrame, collectors: Collection[str] = ()) -> go.Figure:
    """Services each audited key can read, per snapshot; ``collectors``: the keys that
    took the snapshots, named so in the legend.

    Keys often read the same services (a viewer and the collecting key: everything), so
    one line would lie on another: each key has its own marker and dash, a line that a
    later one covers is drawn wide and pale beneath it (a halo), the collecting key is
    drawn last, on top, and the legend gives every key's newest count.
    """
    fig = go.Figure()
    names = sorted(set(reach.credential_name), key=lambda n: (n in collectors, str(n)))
    series = {n: reach[reach.credential_name == n].set_index("snapshot_id").services for n in names}
    for n, name in enumerate(names):
        part = reach[reach.credential_name == name]
        label, collecting = plot_text(name, 32), name in collectors
        role = ", collecting key" if collecting else ""
        covered = any(_same_line(series[name], series[later]) for later in names[n + 1 :])
        colour = _COLLECTOR_COLOUR if collecting else _LINE_COLOURS[n % len(_LINE_COLOURS)]
        fig.add_scatter(
            name=f"{label}{role}: {int(part.services.iloc[-1])}",
            x=part.snapshot_at,
            y=part.services,
            mode="lines+markers",
            opacity=0.55 if covered else 1.0,
            line={
                "color": colour,
                "width": 8 if covered else 2,
                "dash": "dot" if collecting else _DASHES[n % len(_DASHES)],
            },
            marker={
                "symbol": "star" if collecting else _MARKERS[n % len(_MARKERS)],
                "size": 15 if covered else 9,
                "line": {"width": 1, "color": "#ffffff"},
            },
            hovertemplate=label + role + ": %{y} services<extra></extra>",
        )
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(hovermode="x unified", height=400)
    _snapshot_ticks(fig, reach.snapshot_at)
    _finish(fig, "Key reach: services each key reads", _TIME_AXIS, "services (count)")
    fig.update_layout(margin={"t": 110})  # room for a legend of several lines
    return fig


def _same_line(one: pd.Series, other: pd.Series) -> bool:
    """Whether two keys' counts (by snapshot id) are equal in most snapshots both have."""
    both = one.index.intersection(other.index)
    return len(both) > 0 and int((one[both] == other[both]).sum()) * 2 >= len(both)


def reach_heatmap(reach: pd.DataFrame) -> go.Figure:
    """Credential x project: the most each key may do there, with resources it can read."""
    projects = _unique_labels(reach[["project_id", "project_name"]].drop_duplicates())
    keys = sorted(set(reach.credential_name))
    key_labels = {k: plot_text(k, 32) for k in keys}
    cells = list(
        zip(reach.credential_name, reach.project_id, reach.level, reach.resources, strict=True)
    )
    level = {(str(k), str(p)): int(n) for k, p, n, _ in cells}
    count = {(str(k), str(p)): int(n) for k, p, _, n in cells}
    z = [[level[(k, p)] for p in projects] for k in keys]
    text = [[str(count[(k, p)]) if level[(k, p)] else "" for p in projects] for k in keys]
    hover = [
        [f"{ACCESS_LEVELS[level[(k, p)]]}; {count[(k, p)]} resource(s) readable" for p in projects]
        for k in keys
    ]
    top = len(ACCESS_LEVELS) - 1
    band = 1 / len(_HEAT_COLOURS)  # one flat colour per level: a stepped scale
    scale = [[edge, c] for i, c in enumerate(_HEAT_COLOURS) for edge in (i * band, (i + 1) * band)]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(projects.values()),
            y=[key_labels[k] for k in keys],
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            hovertemplate="%{y} in %{x}: %{customdata}<extra></extra>",
            zmin=-0.5,
            zmax=top + 0.5,
            colorscale=scale,
            xgap=2,
            ygap=2,
            colorbar={
                "title": {"text": "most the key may do"},
                "tickvals": list(range(top + 1)),
                "ticktext": list(ACCESS_LEVELS),
            },
        )
    )
    fig.update_layout(height=max(300, 120 + 34 * len(keys)))
    fig.update_yaxes(autorange="reversed")
    return _finish(fig, "Key scope: what each key may do per project", "project", "credential")


def _unique_labels(projects: pd.DataFrame) -> dict[str, str]:
    """project id -> label; a name shared by two projects gets the id's start appended."""
    names = list(projects.project_name.fillna(""))
    labels = {}
    for pid, name in zip(projects.project_id, names, strict=True):
        shown = name or pid
        if names.count(name) > 1 or not name:
            shown = f"{name} ({str(pid)[:8]})" if name else str(pid)
        labels[str(pid)] = plot_text(shown, 36)
    return labels


def _snapshot_ticks(fig: go.Figure, times: pd.Series) -> None:
    """With few snapshots, one tick per snapshot instead of plotly's hourly ones."""
    moments = sorted(set(times))
    if 1 < len(moments) <= _MAX_SNAPSHOT_TICKS:
        fig.update_xaxes(tickmode="array", tickvals=moments, tickformat="%b %d<br>%H:%M")


def _finish(fig: go.Figure, title: str, x_title: str, y_title: str | None) -> go.Figure:
    fig.update_layout(
        title={
            "text": title,
            "x": 0.01,
            "xanchor": "left",
            "y": 0.98,
            "yref": "container",
            "yanchor": "top",
            "font": {"size": 16},
        },
        font={"family": FONT_STACK, "size": 13, "color": "#1e293b"},
        template="plotly_white",
        margin={"l": 64, "r": 24, "t": 84, "b": 56},
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "traceorder": "normal",
        },
        hoverlabel={"font": {"family": FONT_STACK}},
    )
    if "height" not in fig.layout or fig.layout.height is None:
        fig.update_layout(height=360)
    fig.update_xaxes(title_text=x_title, automargin=True)
    if y_title is not None:
        fig.update_yaxes(title_text=y_title, automargin=True)
    return fig
