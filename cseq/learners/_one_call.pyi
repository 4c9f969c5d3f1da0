from typing import Any

import numpy as np

MAX_SEQUENCES: int

class OneCall:
    def __init__(self, table: Any, crfsuite: bool, index: Any, params: np.ndarray,
                 labels: list[str]) -> None: ...
    def predict(self, X: object) -> list[list[str]] | None: ...
