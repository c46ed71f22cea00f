"""Grids of designs: one certified design per (epsilon, don't-know) pair, serial or in parallel.

A sweep answers "how does the optimum move with the budget?" (the curves of Cor 3.12 and Thm 3.10
for GWRR, and of any design problem). The grid is cut into blocks of ``BLOCK`` consecutive budgets, each
designed with one warm-start session, the same blocks whether they run in one process, on local worker
processes (joblib) or on a Dask cluster; the rows are assembled in grid order and hold no timing, so
every way of running gives the same table, value for value.
"""

from __future__ import annotations

import math
import re
import socket
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._internal.render import fmt, json_value, render_table
from .._internal.solvers import SolverError, WarmStart
from ..exceptions import DesignerError, DesignWarning, InfeasibleDesignError, InvalidArgumentError, InvalidProblemError
from ..results import FitStatus, Result, TableData
from .certify import CertificationError
from .engine import design
from .problem import DesignProblem

__all__ = ["SWEEP_COLUMNS", "SweepResult", "design_block", "design_point", "sweep", "sweep_grid", "sweep_result"]

#: Columns of a sweep table, in order.
SWEEP_COLUMNS = ("epsilon", "dont_know", "status", "objective_value", "eps_shafer", "eps_walley", "variance",
                 "path", "certificate", "message")


def sweep_grid(problem: DesignProblem, epsilons: Sequence[float],
               dont_know: Sequence[float] | None = None) -> list[DesignProblem]:
    """The problems of a sweep, epsilon varying fastest within each don't-know value.

    Parameters
    ----------
    problem : DesignProblem
        The base problem; its budget (and don't-know mass, when ``dont_know`` is given) is replaced.
    epsilons : sequence of float
        Budgets (nats), each finite and > 0.
    dont_know : sequence of float, optional
        Exact don't-know masses in ``[0, 1)`` (``structure.dont_know``); default: the problem's own.

    Returns
    -------
    list of DesignProblem
        ``len(dont_know) * len(epsilons)`` problems (``len(epsilons)`` without ``dont_know``).
    """
    eps = [float(e) for e in epsilons]
    if not eps:
        raise InvalidProblemError("a sweep needs at least one epsilon")
    for e in eps:
        if not math.isfinite(e) or e <= 0:
            raise InvalidProblemError(f"every epsilon of a sweep must be finite and > 0, got {e!r}")
    if dont_know is None:
        return [problem.replace(epsilon=e) for e in eps]
    masses = [float(d) for d in dont_know]
    for d in masses:
        if not math.isfinite(d) or not 0.0 <= d < 1.0:
            raise InvalidProblemError(f"every don't-know mass of a sweep must be in [0, 1), got {d!r}")
    return [problem.replace(epsilon=e, dont_know=d, dont_know_max=None) for d in masses for e in eps]


#: Consecutive budgets designed in one task, sharing one warm-start session (the same blocks in every way
#: of running, so serial, joblib and Dask runs pivot alike and agree to the last digit).
BLOCK = 10


#: Row status of a grid point without a design, by the error that ended it (first match wins).
_FAILURES = ((InfeasibleDesignError, "infeasible"), (CertificationError, "not certified"),
             (SolverError, "solver failed"), (DesignerError, "refused"))


def design_point(problem: DesignProblem, warm: WarmStart | None = None) -> dict[str, Any]:
    """One row of a sweep: the certified design of ``problem``, or why there is none.

    Infeasible problems and problems the engine refuses are rows with ``status`` ``"infeasible"`` /
    ``"refused"`` / ``"not certified"`` and the one-line reason in ``message``; numbers are NaN there
    (:func:`sweep` raises instead when every point is refused: then the problem itself is at fault).

    Returns
    -------
    dict
        Keys :data:`SWEEP_COLUMNS`.
    """
    row: dict[str, Any] = {"epsilon": problem.epsilon,
                           "dont_know": math.nan if problem.dont_know is None else problem.dont_know,
                           "status": "", "objective_value": math.nan, "eps_shafer": math.nan,
                           "eps_walley": math.nan, "variance": math.nan, "path": "", "certificate": "",
                           "message": ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DesignWarning)  # kept in the row's message instead
            result = design(problem, warm=warm)
    except DesignerError as exc:
        status = next(name for kind, name in _FAILURES if isinstance(exc, kind))
        row.update(status=status, message=" ".join(str(exc).split()))
        return row
    row.update(status=result.status.value, objective_value=result.objective_value, eps_shafer=result.eps_shafer,
               eps_walley=result.eps_walley, variance=math.nan if result.variance is None else result.variance,
               path=result.path, certificate=result.certificate.method,
               message=" ".join((*result.warnings, *([result.variance_note] if result.variance is None else []))))
    return row


def design_block(problems: Sequence[DesignProblem]) -> list[dict[str, Any]]:
    """Rows of consecutive grid points, designed with one :class:`~designer._internal.solvers.WarmStart`."""
    warm = WarmStart()
    return [design_point(p, warm) for p in problems]


def _blocks(problems: list[DesignProblem], epsilons_per_curve: int) -> list[list[DesignProblem]]:
    out = []
    for start in range(0, len(problems), epsilons_per_curve):
        curve = problems[start:start + epsilons_per_curve]
        out += [curve[i:i + BLOCK] for i in range(0, len(curve), BLOCK)]
    return out


def _progress(items: Iterable[Any], total: int, show: bool) -> Iterable[Any]:
    if not show:
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, desc="designing", unit="block", file=sys.stderr, leave=False)


def _serial(blocks: list[list[DesignProblem]], show: bool) -> list[list[dict[str, Any]]]:
    return [design_block(b) for b in _progress(blocks, len(blocks), show)]


def _joblib(blocks: list[list[DesignProblem]], jobs: int, show: bool) -> list[list[dict[str, Any]]]:
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, return_as="generator")  # results in submission order
    rows = parallel(delayed(design_block)(b) for b in blocks)
    return list(_progress(rows, len(blocks), show))


_ADDRESS = re.compile(r"^(?:(tcp|tls|ws|wss)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")


def check_scheduler_address(address: str, *, timeout: float = 5.0) -> None:
    """Fail fast, with one clear message, unless a Dask scheduler could be listening at ``address``.

    Accepts ``[scheme://]host:port`` (schemes tcp, tls, ws, wss) and opens a plain TCP connection to it,
    so a typo does not wait for the Dask client's own (longer) timeouts.
    """
    hint = "start one with 'dask scheduler' and pass the address it prints (e.g. tcp://127.0.0.1:8786)"
    match = _ADDRESS.match(address.strip())
    if match is None:
        raise DesignerError(f"--scheduler {address!r} is not a scheduler address; write tcp://HOST:PORT "
                            f"({hint})")
    host, port = match.group(2).strip("[]"), int(match.group(3))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DesignerError(f"cannot reach the Dask scheduler at {address!r} ({reason}); {hint}") from None


def _dask(blocks: list[list[DesignProblem]], scheduler: str, show: bool) -> list[list[dict[str, Any]]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise DesignerError("--scheduler needs Dask's distributed scheduler: pip install 'designer[dask]' "
                            "(or pip install distributed)") from None
    check_scheduler_address(scheduler)
    try:
        client = Client(scheduler, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise DesignerError(f"cannot connect to the Dask scheduler at {scheduler!r} ({type(exc).__name__}: "
                            f"{' '.join(str(exc).split())}); check the address (e.g. tcp://127.0.0.1:8786)") from None
    try:
        futures = client.map(design_block, blocks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        rows: list[list[dict[str, Any]] | None] = [None] * len(blocks)
        done = as_completed(futures, loop=client.loop, with_results=True)
        try:
            for future, row in _progress(done, len(futures), show):
                rows[index[future.key]] = row
        except Exception as exc:  # raised on a worker: report it, do not dump a remote traceback
            raise DesignerError(f"a Dask worker failed ({type(exc).__name__}: {' '.join(str(exc).split())}); "
                                "the workers need designer and its dependencies installed") from None
        return [r for r in rows if r is not None]
    finally:
        client.close()


def sweep(problem: DesignProblem, epsilons: Sequence[float], dont_know: Sequence[float] | None = None, *,
          jobs: int = 1, scheduler: str | None = None, progress: bool = False) -> pd.DataFrame:
    """Design every point of an (epsilon x don't-know) grid and tabulate the optima.

    Parameters
    ----------
    problem : DesignProblem
        Base problem (budget and don't-know mass are replaced per point).
    epsilons : sequence of float
        Budgets in nats.
    dont_know : sequence of float, optional
        Exact don't-know masses in ``[0, 1)``; default: the problem's own structure.
    jobs : int, default 1
        Local worker processes (joblib; ``-1`` = one per core). ``1`` runs in this process.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``); overrides ``jobs``. The workers need
        ``designer`` installed.
    progress : bool, default False
        tqdm progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        One row per grid point with :data:`SWEEP_COLUMNS`, in grid order (epsilon fastest). Identical
        whichever way it was run: blocks of ``BLOCK`` consecutive budgets share a warm-start session
        (:class:`~designer._internal.solvers.WarmStart`) in every mode, and no timing is recorded.

    Examples
    --------
    >>> from designer.optimal import DesignProblem
    >>> from designer.optimal.sweep import sweep
    >>> problem = DesignProblem(inputs=("yes", "no"), epsilon=1.0, objective="truthful")
    >>> df = sweep(problem, [0.5, 1.0], dont_know=[0.0, 0.2])
    >>> df[["epsilon", "dont_know", "objective_value"]].round(4).values.tolist()
    [[0.5, 0.0, 0.6225], [1.0, 0.0, 0.7311], [0.5, 0.2, 0.498], [1.0, 0.2, 0.5848]]
    """
    problems = sweep_grid(problem, epsilons, dont_know)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise InvalidArgumentError(f"jobs must be a positive number of processes or -1 (all cores), got {jobs!r}")
    blocks = _blocks(problems, len(epsilons))
    if scheduler is not None:
        done = _dask(blocks, scheduler, progress)
    elif jobs == 1 or len(blocks) == 1:
        done = _serial(blocks, progress)
    else:
        done = _joblib(blocks, jobs, progress)
    rows = [row for block in done for row in block]
    if len(rows) != len(problems):
        raise DesignerError(f"the sweep returned {len(rows)} rows for {len(problems)} grid points")
    refused = [r["message"] for r in rows if r["status"] == "refused"]
    if len(refused) == len(rows):
        raise InvalidProblemError(refused[0])  # the problem itself, not a grid point, is the trouble
    return pd.DataFrame(rows, columns=list(SWEEP_COLUMNS))


#: Notes (distinct row messages) a sweep's table output shows at most.
MAX_NOTES = 5


@dataclass(frozen=True, eq=False)
class SweepResult(Result):
    """A sweep's table as a result (``designer sweep``).

    Attributes
    ----------
    problem : DesignProblem
        The base problem.
    frame : pandas.DataFrame
        :func:`sweep`'s table: one row per grid point, :data:`SWEEP_COLUMNS`.
    status : FitStatus
        ``OPTIMAL``: every design in the table is certified (the other rows say why there is none).
    warnings : tuple of str
    """

    problem: DesignProblem
    frame: pd.DataFrame
    status: FitStatus = FitStatus.OPTIMAL
    warnings: tuple[str, ...] = ()

    title = "Sweep"

    def __post_init__(self) -> None:
        self._check_status()

    def to_dict(self) -> dict[str, Any]:
        """The ``designer sweep --format json`` object: ``problem``, ``semantics``, ``objective`` and ``rows`` (NaN
        cells ``null``)."""
        rows = [{k: None if isinstance(v, float) and math.isnan(v) else json_value(v) for k, v in r.items()}
                for r in self.frame.to_dict(orient="records")]
        return {"problem": self.problem.name, "semantics": self.problem.semantics,
                "objective": self.problem.objective, "rows": rows}

    def table(self) -> TableData:
        """:data:`SWEEP_COLUMNS` and the rows, every digit (the ``--format csv`` table and ``--out`` file)."""
        return list(SWEEP_COLUMNS), [list(row) for row in self.frame.itertuples(index=False)]

    @property
    def certified(self) -> str:
        """``"n of N designs certified"``."""
        done = int((self.frame["status"] == "optimal").sum())
        return f"{done} of {len(self.frame)} designs certified"

    @property
    def notes(self) -> list[str]:
        """The distinct messages of the rows (at most :data:`MAX_NOTES`), sorted."""
        return sorted({r for r in self.frame["message"] if r})[:MAX_NOTES]

    def summary(self) -> str:
        """The ``designer sweep`` table output: the table without its messages (8 digits), the count of certified
        designs and the notes."""
        pretty = [[fmt(v, 8) if isinstance(v, float) else v for v in row[:-1]]
                  for row in self.frame.itertuples(index=False)]
        return "\n".join([render_table(list(SWEEP_COLUMNS)[:-1], pretty), self.certified,
                          *(f"note: {n}" for n in self.notes)])


def sweep_result(problem: DesignProblem, epsilons: Sequence[float], dont_know: Sequence[float] | None = None, *,
                 jobs: int = 1, scheduler: str | None = None, progress: bool = False) -> SweepResult:
    """:func:`sweep` (same parameters) as a :class:`SweepResult`."""
    return SweepResult(problem, sweep(problem, epsilons, dont_know, jobs=jobs, scheduler=scheduler,
                                      progress=progress))
