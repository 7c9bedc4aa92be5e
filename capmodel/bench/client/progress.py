"""The progress bar of a benchmark step (tqdm), shown only when asked for."""
from __future__ import annotations


class StepProgress:
    """A tqdm bar over a step's seconds with the live rate of measured operations; does nothing when not shown."""

    def __init__(self, show: bool, warmup: float, duration: float | None, label: str):
        self.bar = None
        self.shown = bool(show)
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=round(warmup + duration, 1) if duration else None, unit="s", desc=label,
                            leave=False, bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}")
        self._last_elapsed, self._last_count, self._done = 0.0, 0, 0.0

    def update(self, elapsed: float, count: int | None) -> None:
        """``elapsed`` seconds since the step started, ``count`` operations measured so far (None: not known)."""
        if self.bar is None:
            return
        if count is not None and elapsed - self._last_elapsed >= 0.5:
            rate = (count - self._last_count) / (elapsed - self._last_elapsed)
            self.bar.set_postfix_str(f"{rate:,.0f} ops/s", refresh=False)
            self._last_elapsed, self._last_count = elapsed, count
        elapsed = min(elapsed, self.bar.total or elapsed)
        self.bar.update(max(0.0, elapsed - self._done))
        self._done = max(self._done, elapsed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
