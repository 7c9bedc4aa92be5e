"""A report notebook's live what-if: one control panel at the top, every section below it redrawn in place.

In JupyterLab, ``LivePage`` shows the controls (ipywidgets sliders) where ``panel()`` is called, and each
``section(draw)`` as an output area holding ``draw(result)``: the headline, the tables, the figures. When a control
moves, the result is computed once for the new values and every section is drawn again where it stands, so the
headline and the figures always say the same plan. On a rendered report (the pipeline's kernel, which injects
``capmodel_report``) and with ``live=False``, there is no panel and each section is displayed once, as any cell's
output: the static page shows exactly the parameters it was rendered with.

    page = LivePage(report_for, sliders, users=slider(users, 10_000, 200_000, 1_000, "target users", ",.0f"))
    page.panel()
    page.section(lambda result: headline(result.question, result.answer, result.evidence))
    page.section(lambda result: [Markdown(result.intro), users_figure(result)])

The first result is computed from the controls' given values, never from the widgets' (a slider rounds to its step:
a κ of 0.0005 on a log slider would read 0.000501).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Slider:
    """A control's declaration: its value (the parameter's), its usual range and step, its label and readout format.
    ``log``: the range and step are powers of ten (for figures such as κ that span decades)."""
    value: float
    low: float
    high: float
    step: float
    description: str
    fmt: str = ".3g"
    log: bool = False
    #: where the slider starts when ``value`` is not a position on it (0 for "derived from the baseline"): a figure,
    #: or a function of the first result giving the figure derived; the result is computed from ``value`` until this
    #: control itself is moved
    shown: float | Callable[[Any], float] | None = None

    def widget(self, result=None):
        """The ipywidgets slider; its range always holds where it starts (a parameter outside the usual range widens
        it). ``result``: the first result, for a ``shown`` that derives from it."""
        import math

        import ipywidgets as widgets

        common = {"description": self.description, "readout_format": self.fmt, "continuous_update": False,
                  "style": {"description_width": "initial"}, "layout": {"width": "420px"}}
        value = self.value if self.shown is None else float(self.shown(result) if callable(self.shown) else self.shown)
        if self.log:
            exponent = math.log10(value) if value > 0 else self.low
            return widgets.FloatLogSlider(value=10 ** exponent, base=10,
                                          min=min(self.low, exponent), max=max(self.high, exponent), step=self.step,
                                          **common)
        return widgets.FloatSlider(value=value, min=min(self.low, value), max=max(self.high, value), step=self.step,
                                   **common)


def slider(value: float, low: float, high: float, step: float, description: str, fmt: str = ".3g",
           log: bool = False, shown: float | Callable[[Any], float] | None = None) -> Slider:
    """A slider control for ``LivePage`` (see ``Slider``)."""
    return Slider(float(value), low, high, step, description, fmt, log, shown)


def _bundle(item) -> dict:
    """The display data of one item of a section: a plotly figure, a string (markdown), or anything IPython can
    display (a headline, a table, ``Markdown``)."""
    from plotly.basedatatypes import BaseFigure

    from capmodel.plots.render import figure_bundle

    if isinstance(item, BaseFigure):
        return figure_bundle(item)
    if isinstance(item, str):
        return {"text/markdown": item, "text/plain": item}
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(item)
    return data


def _items(drawn) -> list:
    if drawn is None:
        return []
    return list(drawn) if isinstance(drawn, (list, tuple)) else [drawn]


class LivePage:
    """The live what-if of one report notebook (see the module's docstring).

    Parameters
    ----------
    compute : callable
        ``compute(**values)`` -> the result every section draws from; ``values`` are the controls' by name.
    live : bool
        Show the controls (the notebook's ``sliders`` parameter); a rendered report never does.
    **controls : Slider
        The controls, by the name ``compute`` takes them.
    """

    def __init__(self, compute: Callable[..., Any], live: bool = True, **controls: Slider):
        from capmodel.report.headline import kernel_context

        self._compute = compute
        self._controls = controls
        self.values = {name: control.value for name, control in controls.items()}
        self.result = compute(**self.values)
        self.live = bool(live and controls) and not kernel_context()
        self._sections: list[tuple[Callable[[Any], Any], Any]] = []
        self._widgets: dict = {}

    def panel(self) -> None:
        """Display the controls (live only): every change recomputes the result and redraws each section."""
        if not self.live:
            return
        import ipywidgets as widgets
        from IPython.display import display

        self._widgets = {name: control.widget(self.result) for name, control in self._controls.items()}
        for widget in self._widgets.values():
            widget.observe(self._changed, "value")
        display(widgets.HBox(list(self._widgets.values()), layout={"flex_flow": "row wrap"}))

    def section(self, draw: Callable[[Any], Any]) -> None:
        """Display ``draw(result)`` (one item or a list: figures, markdown strings, tables, a headline); live, in an
        area that is drawn again whenever a control moves."""
        from IPython.display import Markdown, display

        if not self.live:
            for item in _items(draw(self.result)):
                display(Markdown(item) if isinstance(item, str) else item)
            return
        import ipywidgets as widgets

        area = widgets.Output()
        self._sections.append((draw, area))
        self._fill(draw, area)
        display(area)

    def update(self, **values) -> None:
        """Compute the result for these control values (the others kept) and redraw every section."""
        self.values = {**self.values, **values}
        self.result = self._compute(**self.values)
        for draw, area in self._sections:
            self._fill(draw, area)

    def _changed(self, change) -> None:
        """The control that moved takes its widget's value; the others keep theirs (a slider that has not moved
        still computes from its parameter, not from the position its step rounded it to)."""
        self.update(**{name: change["new"] for name, widget in self._widgets.items() if widget is change["owner"]})

    def _fill(self, draw, area) -> None:
        area.outputs = tuple({"output_type": "display_data", "data": _bundle(item), "metadata": {}}
                             for item in _items(draw(self.result)))
