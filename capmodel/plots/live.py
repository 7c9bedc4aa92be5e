"""What-if controls for the report notebooks: ipywidgets that redraw figures and an answer whenever one moves.

``what_if(draw, utilization_target=slider(...), growth=slider(...))`` shows the controls above an output area and fills
it with what ``draw(**values)`` returns: plotly figures and markdown text, in order. The area's outputs are replaced as
a whole (no output capture), which is safe under papermill: run there, the cell draws once and its widget output is
left out of the static page (``capmodel.report.convert``), where the report's own figures stand instead.
"""
from __future__ import annotations

from collections.abc import Callable


def slider(value: float, low: float, high: float, step: float, description: str, fmt: str = ".3g"):
    """A float slider whose range always holds ``value`` (a parameter outside the usual range widens it)."""
    import ipywidgets as widgets

    return widgets.FloatSlider(value=value, min=min(low, value), max=max(high, value), step=step,
                               description=description, readout_format=fmt, continuous_update=False,
                               style={"description_width": "initial"}, layout={"width": "420px"})


def _bundle(item) -> dict:
    from capmodel.plots.render import figure_bundle

    if isinstance(item, str):
        return {"text/markdown": item, "text/plain": item}
    return figure_bundle(item)


def what_if(draw: Callable[..., list], **controls):
    """The controls (name -> widget, passed to ``draw`` by name) above an area holding ``draw(**values)``'s figures
    and markdown; every change of a control redraws it. Returns the widget box (display it)."""
    import ipywidgets as widgets

    area = widgets.Output()

    def redraw(change=None):
        items = draw(**{name: control.value for name, control in controls.items()})
        area.outputs = tuple({"output_type": "display_data", "data": _bundle(item), "metadata": {}}
                             for item in items)

    for control in controls.values():
        control.observe(redraw, "value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values()), layout={"flex_flow": "row wrap"}), area])
