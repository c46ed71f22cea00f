"""Firth's penalty for a multinomial logit observed through a mechanism (three or more inputs).

The penalty is ``1/2 log det I(beta)``, ``I`` the expected information of the recorded answers (docs/fits.md).
With ``pi_i`` the ``(k,)`` input probabilities of respondent ``i``, ``D_i = diag(pi_i) - pi_i pi_i'`` restricted to
the non-reference columns (``d pi_i / d eta_i``), ``G_i = M' D_i`` ``(F, k-1)`` (the answer probabilities'
derivatives) and ``q_i = M' pi_i``, respondent ``i`` adds ``K_i (x) z_i z_i'`` with ``K_i = G_i' diag(1/q_i) G_i``.
The gradient of ``log det I`` in ``beta_{s}`` is ``sum_i z_i tr(L_i dK_i / d eta_is)`` with ``L_i[a, b] = z_i'
(I^-1)_{ab} z_i``. For two inputs this is :class:`~designer.regression.likelihood.FirthPenalty`'s penalty.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .design import weighted_gram
from .likelihood import Likelihood

__all__ = ["MultinomialFirthPenalty"]


class MultinomialFirthPenalty:
    """Firth's penalty for ``k >= 2`` inputs: ``value``, ``information`` (the scoring metric) and ``gradient``, as
    :class:`~designer.regression.likelihood.FirthPenalty` has them. ``groups``: the row and column group indices
    of stacked designs (a respondent gives only its own group's answers)."""

    def __init__(self, lik: Likelihood, channel: NDArray[np.float64], *,
                 groups: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None) -> None:
        keep = channel.sum(axis=0) > 0
        self.lik, self.m = lik, channel[:, keep]
        self.mask = None if groups is None else groups[0][:, None] == groups[1][keep][None, :]
        self._cache: tuple[bytes, tuple[NDArray[np.float64], ...]] | None = None

    def _parts(self, params: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        key = np.asarray(params, dtype=np.float64).tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        lik, m = self.lik, self.m
        pi = lik.probabilities(params).T  # (n, k)
        others = lik.others
        full = pi[:, :, None] * (np.eye(lik.k)[None] - pi[:, None, :])  # d pi_x / d eta_y, (n, k, k)
        d = full[:, :, others]  # (n, k, k-1)
        g = np.einsum("xe,nxs->nes", m, d)  # (n, F, k-1)
        q = pi @ m  # (n, F)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.where(q > 0, 1.0 / q, 0.0)
        if self.mask is not None:
            inv = np.where(self.mask, inv, 0.0)
        if lik.weights is not None:
            inv = inv * lik.weights[:, None]  # a row of weight f is f respondents
        kmat = np.einsum("nes,ne,net->nst", g, inv, g)  # (n, k-1, k-1)
        info = self._blocks(kmat)
        self._cache = (key, (pi, full, g, q, inv, kmat, info))
        return self._cache[1]

    def _blocks(self, kmat: NDArray[np.float64]) -> NDArray[np.float64]:
        z = self.lik.z
        r, qz = kmat.shape[1], z.shape[1]
        out = np.zeros((r * qz, r * qz))
        for s in range(r):
            for t in range(s, r):
                block = weighted_gram(z, kmat[:, s, t])
                out[s * qz:(s + 1) * qz, t * qz:(t + 1) * qz] = block
                out[t * qz:(t + 1) * qz, s * qz:(s + 1) * qz] = block.T
        return out

    def value(self, params: NDArray[np.float64]) -> float:
        sign, logdet = np.linalg.slogdet(self._parts(params)[-1])
        return 0.5 * float(logdet) if sign > 0 else -np.inf

    def information(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """The expected information ``I`` of the recorded answers, ``(P, P)``."""
        return self._parts(params)[-1]

    def gradient(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        pi, full, g, q, inv, _, info = self._parts(params)
        lik, m = self.lik, self.m
        z = np.asarray(lik.z.toarray() if hasattr(lik.z, "toarray") else lik.z)
        others, r, qz = lik.others, len(lik.others), z.shape[1]
        inverse = np.linalg.inv(info)
        lev = np.empty((z.shape[0], r, r))  # L_i[a, b] = z_i' (I^-1)_ab z_i
        for a in range(r):
            for b in range(r):
                block = inverse[a * qz:(a + 1) * qz, b * qz:(b + 1) * qz]
                lev[:, a, b] = np.einsum("ni,ij,nj->n", z, block, z)
        out = np.empty(r * qz)
        for s in range(r):
            ds = full[:, :, others[s]]  # d pi / d eta_s, (n, k)
            dfull = (ds[:, :, None] * np.eye(lik.k)[None] - ds[:, :, None] * pi[:, None, :]
                     - pi[:, :, None] * ds[:, None, :])  # d (diag pi - pi pi') / d eta_s
            dg = np.einsum("xe,nxs->nes", m, dfull[:, :, others])
            dq = ds @ m  # (n, F)
            dinv = -dq * inv * np.where(q > 0, 1.0 / np.where(q > 0, q, 1.0), 0.0)
            dk = (np.einsum("nes,ne,net->nst", dg, inv, g) + np.einsum("nes,ne,net->nst", g, inv, dg)
                  + np.einsum("nes,ne,net->nst", g, dinv, g))
            out[s * qz:(s + 1) * qz] = 0.5 * z.T @ np.einsum("nab,nab->n", lev, dk)
        return out
