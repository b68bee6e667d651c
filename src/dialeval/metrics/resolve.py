"""Metric names and ``-p`` parameters in, configured metric families out.

Every command that takes ``-m``/``-p`` resolves them here, and so does a Ray
worker that rebuilds a metric from its name and parameters. Names are family
names (``rouge``) or output names (``rougeL``), in ``-m`` and before the key of
a ``-p`` alike: ``-p rougeL.use_stemmer=yes`` sets the parameter of ``rouge``.
What values a parameter may take is declared on its config field
(:mod:`dialeval.metrics.rules`) and checked when the metric is built. A name with a prefix
(``judge:``, ``trained:``) is built by the factory registered for that prefix
in the ``dialeval.metric_prefixes`` entry-point group: the judges package
registers every ``judge:<protocol>`` family when imported, and
``trained:PATH`` registers the saved model in PATH. The resolver knows no
prefix and no metric by name.

Example:
    >>> parse_params(["bleu.smoothing=method1", "k=1"])
    {'bleu': {'smoothing': 'method1'}, '*': {'k': '1'}}
    >>> [f.name for f in resolve_metrics(["rougeL", "f1"])[0]]
    ['rouge', 'f1']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dialeval.errors import InputError, UnknownNameError, ensure_unique
from dialeval.metrics import METRICS, load_builtin_metrics
from dialeval.metrics.base import PREFIXES, Metric, configured, metric_by_output
from dialeval.registry import RegistryEntryError
from dialeval.words import one_line, some_of

if TYPE_CHECKING:
    from dialeval.schema import Candidate

_BOOLEANS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def parse_params(pairs: Sequence[str], option: str = "--param") -> dict[str, dict[str, str]]:
    """Parse ``family.key=value`` (or ``key=value`` for every family) into nested dicts.

    Raises:
        InputError: A pair without ``=``, with no key or an empty metric name (``.key=value``), or a parameter
            given twice (naming ``option``, the option that gave the pairs): the last one won, silently.

    Example:
        >>> parse_params(["bleu.smoothing=method1", "bleu.smoothing=method2"])
        Traceback (most recent call last):
        ...
        dialeval.errors.InputError: field "--param": parameter "bleu.smoothing" is given twice
    """
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        fam, dot, name = key.rpartition(".")
        # "=x" was "no metric of this run has the parameter " (no name); ".x=1" was x=1 for every metric
        if "=" not in pair or not name.strip() or (dot and not fam.strip()):
            what = "model" if option == "--model-param" else "metric"
            raise InputError(f'parameter "{pair}" is not of the form [{what}.]key=value', field=option)
        given = out.setdefault(fam or "*", {})
        if name in given:
            raise InputError(f'parameter "{key}" is given twice', field=option)
        given[name] = value
    return out


def coerce_params(cls: type[Metric], params: Mapping[str, str], *, strict: bool = False) -> dict[str, Any]:
    """Convert ``key=value`` strings to the types of ``cls.Config``'s fields.

    Unknown keys are dropped, or with ``strict`` an error naming the valid keys
    (a typo such as ``-p likelihood.modle=PATH`` must not silently run the default).

    Raises:
        InputError: A value of the wrong type, or (``strict``) an unknown key.

    Example:
        >>> coerce_params(family("judge:custom"), {"k": "1", "cache": "no", "nope": "x"})
        {'k': 1, 'cache': False}
    """
    fields = {f.name: f for f in dataclasses.fields(cls.Config)}
    out: dict[str, Any] = {}
    for key, raw in params.items():
        if key not in fields:
            if strict:
                have = ", ".join(sorted(fields)) or "none"
                raise InputError(
                    f'metric "{cls.name}" has no parameter "{key}"; its parameters: {have}',
                    field="--param",
                )
            continue
        default = fields[key].default
        value: Any = raw
        try:
            if isinstance(default, bool):
                if raw.lower() not in _BOOLEANS:
                    raise ValueError(f"not one of {', '.join(sorted(_BOOLEANS))}")
                value = _BOOLEANS[raw.lower()]
            elif isinstance(default, int):
                value = _number(raw, int, "a whole number")
            elif isinstance(default, float):
                value = _number(raw, float, "a number")
        except ValueError as exc:
            raise InputError(f"{cls.name}.{key}={raw!r}: {exc}", field="--param") from None
        out[key] = value
    return out


def _number(raw: str, kind: type[int] | type[float], what: str) -> int | float:
    """Return ``raw`` as ``kind``; else a ValueError saying what was expected.

    Python's own said "invalid literal for int() with base 10". A value with spaces around it is refused, as a
    yes/no or a choice is: ``int`` took " 5".

    Example:
        >>> _number("1.5", int, "a whole number")
        Traceback (most recent call last):
        ...
        ValueError: expected a whole number
        >>> _number(" 5", int, "a whole number")
        Traceback (most recent call last):
        ...
        ValueError: expected a whole number, without spaces (the value after = is taken as given)
    """
    if raw != raw.strip():
        raise ValueError(f"expected {what}, without spaces (the value after = is taken as given)")
    try:
        return kind(raw)
    except ValueError:
        raise ValueError(f"expected {what}") from None


def family_params(parsed: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Return :func:`parse_params`' result keyed by family: an output name's parameters go to its family.

    ``bleu4.smoothing=x`` is ``bleu.smoothing=x``; ``*`` (for every family) stays as it is.

    Raises:
        UnknownNameError: A name that is neither a family nor an output.
        InputError: The same parameter given two values under two names (``bleu`` and ``bleu4``).

    Example:
        >>> family_params({"bleu4": {"smoothing": "comperdial"}, "rougeL": {"use_stemmer": "yes"}})
        {'bleu': {'smoothing': 'comperdial'}, 'rouge': {'use_stemmer': 'yes'}}
    """
    out: dict[str, dict[str, str]] = {}
    given_as: dict[tuple[str, str], str] = {}
    for name, pairs in parsed.items():
        try:
            fam = name if name == "*" else family(name).name
        except UnknownNameError as exc:
            raise exc.given_by("--param") from None
        merged = out.setdefault(fam, {})
        for key, value in pairs.items():
            first = given_as.setdefault((fam, key), name)
            if key in merged and merged[key] != value:
                raise InputError(
                    f'{first}.{key}={merged[key]!r} and {name}.{key}={value!r} set the same parameter of "{fam}"',
                    field="--param",
                )
            merged[key] = value
    return out


def metric_params(
    families: Sequence[type[Metric]],
    parsed: Mapping[str, Mapping[str, str]],
    defaults: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Return each family's constructor parameters from ``-p`` (``key=value`` for all, ``family.key=value``).

    ``family`` may be an output name (``bleu4``): its family gets the parameter. A ``family.key``
    the family does not have is an error, and so is one for a family that is not in the run, and
    a ``key`` (for all) that no family of the run has, and a ``family.key`` that would change no score
    (:meth:`~dialeval.metrics.base.Metric.idle_params`). ``defaults`` (e.g. ``--device``) go to the
    families that have such a parameter and are no error for the others.

    Raises:
        InputError: An unknown key, a family not in the run, a value of the wrong type, or one that changes nothing.
        UnknownNameError: An unknown family.

    Example:
        >>> fams, _ = resolve_metrics(["bleu"])
        >>> metric_params(fams, {"bleu": {"smoothing": "method1"}}, {"device": "cpu"})
        {'bleu': {'smoothing': 'method1'}}
    """
    by_family = family_params(parsed)
    shared = by_family.get("*", {})
    names = [f.name for f in families]
    absent = next((fam for fam in by_family if fam != "*" and fam not in names), None)
    if absent is not None:
        run = ", ".join(names) or "none"
        raise InputError(f'no metric of this run is "{absent}" (this run\'s metrics: {run})', field="--param")
    out: dict[str, dict[str, Any]] = {}
    for f in families:
        out[f.name] = {
            **coerce_params(f, dict(defaults or {})),
            **coerce_params(f, shared),
            **coerce_params(f, by_family.get(f.name, {}), strict=True),
        }
        named = by_family.get(f.name, {})
        if idle := {k: why for k, why in f.idle_params(out[f.name]).items() if k in named}:
            each = "; ".join(f'{f.name}.{k}="{named[k]}" changes no score: {why}' for k, why in idle.items())
            raise InputError(f"{each}: drop {'them' if len(idle) > 1 else 'it'}", field="--param")
    known = {fld.name for f in families for fld in dataclasses.fields(f.Config)}
    unused = sorted(set(shared) - known)
    if unused:
        raise InputError(
            f'no metric of this run has the parameter{"s" if len(unused) > 1 else ""} {", ".join(unused)}',
            field="--param",
        )
    return out


def family(name: str) -> type[Metric]:
    """Return the family called ``name`` (or with the output ``name``), registering a prefixed one first.

    Raises:
        UnknownNameError: No such family or output (with the closest names).

    Example:
        >>> family("rougeL").name
        'rouge'
        >>> family("judge")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dialeval.errors.UnknownNameError: unknown metric "judge": its metrics are named "judge:...", e.g. judge:...
    """
    load_builtin_metrics()
    prefix, sep, _ = name.partition(":")
    if not sep and name in PREFIXES and name not in METRICS:  # "judge" read as a family: it suggested "rouge"
        known = [n for n in METRICS.names() if n.startswith(f"{name}:")]
        saved = f"{name}:PATH (a model folder dialeval train saved)"
        example = f"{known[0]} (dialeval metrics lists them)" if known else saved
        raise UnknownNameError(f'unknown metric "{name}": its metrics are named "{name}:...", e.g. {example}')
    if sep and name not in METRICS and prefix in PREFIXES:
        factory = PREFIXES.get(prefix)
        if callable(factory):
            factory(name)
    by_output = metric_by_output()
    return by_output[name] if name in by_output and name not in METRICS else METRICS.get(name)


def outputs_in(names: Sequence[str], present: Collection[str]) -> list[str]:
    """Return the outputs ``names`` picks of those ``present`` (scored): a family's name stands for its outputs there.

    As ``score -m`` reads a family's name, so does ``meta -m``: ``distinct`` is ``distinct1, distinct2``. A name
    in ``present`` (``length``, a family's and its output's), or no family's, stays as it is, and so does a
    family none of whose outputs is present (the caller says it has no scores). An output named twice (a family
    and one of its outputs) is kept once, where it first comes.

    Example:
        >>> outputs_in(["distinct", "length", "distinct2", "bleu"], ["length", "distinct2", "distinct1"])
        ['distinct1', 'distinct2', 'length', 'bleu']
    """
    load_builtin_metrics()
    picked: list[str] = []
    for name in names:
        outputs = METRICS.get(name).outputs if name not in present and name in METRICS else ()
        picked.extend([o for o in outputs if o in present] or [name])
    return list(dict.fromkeys(picked))


def resolve_metrics(
    names: Sequence[str] | None,
    *,
    candidates: Sequence[Candidate] | None = None,
    params: Mapping[str, Mapping[str, str]] | None = None,
    sources: Mapping[str, str] | None = None,
) -> tuple[list[type[Metric]], dict[str, str]]:
    """Return metric families for ``names`` (families or output names).

    ``names=None`` means every registered metric without a prefix that can run
    here (judges and trained evaluators are asked for by name), a family that is
    ``listed_first`` (``quality``) first, the others by name; the ones that
    cannot run (a missing extra, references that ``candidates`` lack, or a plugin
    that cannot be imported) are returned in the second value with the reason. A family asked for by name
    that cannot run is an error. ``params`` are the :func:`parse_params` result
    (a ``model=PATH`` can make a metric runnable). ``sources``: where each item of a user's table came from
    (:attr:`~dialeval.data.benchmark.Benchmark.sources`), to name the first item without a reference by. An empty
    name (``-m ""``, ``-m bleu,,length``) or an empty list is an error, never the default set.

    Raises:
        InputError: An empty name, a name given twice, or a family asked for by name that cannot run here.
    """
    skip_unavailable = names is None
    if names is not None and not names:
        raise InputError("an empty list names no metric; name families or outputs, e.g. bleu,length (the default, "
                         "every metric that runs here, is no list at all)", field="--metrics")  # fmt: skip
    if names is not None and any(not n.strip() for n in names):
        raise InputError("empty metric name; name families or outputs, e.g. bleu,length", field="--metrics")
    if names is not None:
        ensure_unique(names, "--metrics", "metric")
    load_builtin_metrics()
    by_family = family_params(params or {})
    chosen: list[type[Metric]] = []
    missing: dict[str, str] = {}
    loaded: list[type[Metric]] = []
    for name in [] if names else [n for n in METRICS.names() if ":" not in n]:  # a plugin that cannot load is skipped
        try:
            cls = METRICS.get(name)
        except RegistryEntryError as exc:
            missing[name] = str(exc)
            continue
        loaded.append(cls)  # the registry refuses a plugin whose class has another name
    for name in names or [cls.name for cls in sorted(loaded, key=lambda cls: not cls.listed_first)]:
        try:
            cls = family(name)
        except UnknownNameError as exc:
            raise exc.given_by("--metrics") from None
        if cls not in chosen:
            chosen.append(cls)
    ready: list[type[Metric]] = []
    for cls in chosen:
        given = {**by_family.get("*", {}), **by_family.get(cls.name, {})}
        reason = cls.unavailable_reason(given)
        if reason is None and candidates is not None and cls.needs_references:
            lacking = [c for c in candidates if not c.references]
            if lacking:  # its row (a table's ids are made up), else its id; and its response, to search for
                item = (sources or {}).get(lacking[0].id) or f'item "{lacking[0].id}"'
                said = f'{item}, response "{one_line(lacking[0].text, 40)}"'
                first = f" (the first: {said})" if len(lacking) < len(candidates) else ""
                reason = f"{some_of(len(lacking), len(candidates), 'item')} no reference{first}"
        if reason is None:
            ready.append(cls)
        elif skip_unavailable:
            missing[cls.name] = reason
        else:
            raise InputError(f'metric "{cls.name}" cannot run here: {reason}', field="--metrics")
    return ready, missing


def build_metric(name: str, params: Mapping[str, Any]) -> Metric:
    """Build the family ``name`` with typed ``params`` (what a Ray worker gets from the driver).

    Example:
        >>> build_metric("bleu", {"smoothing": "method1"}).config.smoothing
        'method1'
    """
    return configured(family(name), params)
