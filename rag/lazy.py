"""Models that load on first use, once per instance, even when several threads ask at once."""

from __future__ import annotations

import threading
from typing import Any


class LazyModel:
    """Holds a model that `_build()` loads the first time `_load()` is called.

    Constructors stay cheap (settings can be checked and the app can start without loading
    hundreds of MB), and Streamlit sessions sharing one cached instance never load it twice.
    Subclasses write `_build()` only.
    """

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _build(self) -> Any:  # noqa: ANN401 - the model's own type
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load now (so the caller can time loading apart from the first use)."""
        self._load()

    def _load(self) -> Any:  # noqa: ANN401
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._build()
        return self._model
