"""Least squares for fitting cost parameters: ordinary (numpy lstsq) and
non-negative (Lawson and Hanson, "Solving Least Squares Problems", 1974,
ch. 23), since cycle costs, per-byte costs and overheads cannot be negative.
scipy is not a dependency, so NNLS is implemented here."""

from __future__ import annotations

import numpy as np


def lstsq(A, b) -> tuple[np.ndarray, float]:
    """x minimising ||A x - b||_2 and that residual norm."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    return x, float(np.linalg.norm(A @ x - b))


def nnls(A, b, max_iter: int | None = None) -> tuple[np.ndarray, float]:
    """x >= 0 minimising ||A x - b||_2 (active-set method of Lawson and
    Hanson) and that residual norm."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    m, n = A.shape
    if b.shape != (m,):
        raise ValueError(f"b has shape {b.shape}, expected ({m},)")
    max_iter = max_iter if max_iter is not None else 3 * n + 30
    tol = 10.0 * np.finfo(float).eps * max(m, n) * max(np.abs(A).sum(axis=0).max(initial=0.0), 1.0)
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)  # P: variables free to be positive
    w = A.T @ (b - A @ x)  # negative gradient of the objective / 2
    iterations = 0
    while (~passive).any() and w[~passive].max() > tol:
        iterations += 1
        if iterations > max_iter:
            raise RuntimeError("nnls did not converge")
        j = np.flatnonzero(~passive)[np.argmax(w[~passive])]
        passive[j] = True
        while True:
            s = np.zeros(n)
            s[passive] = np.linalg.lstsq(A[:, passive], b, rcond=None)[0]
            if s[passive].min() > tol:
                break
            # Step from x toward s as far as feasibility allows, then drop the
            # variables that hit zero back into the active (zero) set.
            blocking = passive & (s <= tol)
            alpha = np.min(x[blocking] / (x[blocking] - s[blocking]))
            x = x + alpha * (s - x)
            passive &= x > tol
            x[~passive] = 0.0
        x = s
        w = A.T @ (b - A @ x)
    return x, float(np.linalg.norm(A @ x - b))
