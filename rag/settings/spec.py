"""One description per setting: its names, its words, and the values it accepts.

Every field of `Settings` and of its parts (`ChunkConfig`, `RetrievalConfig`, `AnswerConfig`) is declared
with `setting(default)` in rag/settings/config.py, which keeps the code's side of it (the type, the default,
and the choices or grammar a registry gives); its words, names and bounds (label, help, env variable, CLI
option, link parameter, range, form group) are its row in rag/settings/settings.toml, `[Class.field]`.
`knobs` joins the two into a `Spec` and refuses a row without a field, a key a `Spec` does not have,
or one given in both places (tests/test_settings_spec.py checks that every field here has its row).
Everything that reads or shows a setting is derived from the Spec:
`Settings.from_env`, the config objects' own checks, the CLI options (`rag/cli/options.py`), the inspector's
links (`rag/settings/links.py`), `config_label` and the Streamlit form (`ui/forms.py`). Adding a retrieval
setting is then one field, one row, and its use in `retrieve()`.

Parsing is strict everywhere: a value that is not of the field's kind, NaN, infinity, or outside the
range is a `ConfigError` naming where it came from, what was given, and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import typing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rag.errors import ConfigError

SPEC = "ragscope"  # the metadata key
_WORDS = Path(__file__).with_name("settings.toml")  # each setting's words, names and bounds
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Spec:
    """How one setting is named, explained and bounded, wherever it can be set.

    Attributes:
        env: environment / secrets.toml name; "" when it is not read from the environment.
        label: a few words for forms, legends and error messages.
        help: one sentence on what it does.
        cli: the CLI option names ("--k -k"); "" for none. A bool gets a --no- twin.
        link: the inspector link parameter (also the suffix of its form widget key); "" for none.
        lo, hi: the range (inclusive unless `lo_open`); None for unbounded, but never NaN or infinity.
        choices: the only values a text setting accepts (empty: any text).
        fusions: the fusions it applies to (empty: all); the form disables it under the others.
        needs: a bool field that must be on for it to apply (the PRF numbers need `prf`).
        group: the form section ("core", "fusion", "cut", "expansion").
        widget: "slider", "reranker" or "" (the kind's usual widget).
        tag: how `config_label` shows it, a format string of the value ("{} candidates"); "" to leave it out.
        pinned: always written into links, even at its default.
        step: the form's step for numbers.
        names: display names of some choices (("dense", "dense only"),).
        off: the value that means "not used" (like False for a switch): `config_label` leaves it out.
        grammar: for a text setting whose values have a form rather than a list (the reranker names), a
            function that raises ConfigError naming the accepted forms.
    """

    env: str = ""
    label: str = ""
    help: str = ""
    cli: str = ""
    link: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] = ()
    fusions: tuple[str, ...] = ()
    needs: str = ""
    group: str = ""
    widget: str = ""
    tag: str = ""
    pinned: bool = False
    step: float | None = None
    names: tuple[tuple[str, str], ...] = ()
    off: Any = None
    grammar: typing.Callable[[str], Any] | None = None


def setting(default: Any, **code: Any) -> Any:  # noqa: ANN401 - a dataclass field
    """A described dataclass field: its default, and the `Spec` keywords only code can give (`choices` and
    `fusions` from a registry's names, a `grammar` function); its other keywords are its row in
    settings.toml. A config class outside this package (a test's, an extension's) may give every keyword here
    and have no row."""
    return dataclasses.field(default=default, metadata={SPEC: code})


@lru_cache(maxsize=1)
def _rows() -> dict[str, dict[str, dict[str, Any]]]:
    """settings.toml, read once: {class name: {field name: Spec keywords}}."""
    with _WORDS.open("rb") as f:
        return tomllib.load(f)


def _spec(cls: type, name: str, code: dict[str, Any]) -> Spec:
    """The Spec of `cls.name`: its row in settings.toml (lists read as tuples) and the keywords of its code.

    Raises:
        ConfigError: a key the Spec does not have, or one given both in the row and in the code.
    """
    owner = next(c for c in cls.__mro__ if name in vars(c).get("__annotations__", {}))  # a subclass inherits its rows
    row = _rows().get(owner.__name__, {}).get(name, {})
    where = f"[{owner.__name__}.{name}] ({_WORDS.name} and its setting())"
    if unknown := sorted((set(row) | set(code)) - {f.name for f in dataclasses.fields(Spec)}):
        raise ConfigError(f"{where}: unknown keys {unknown}")
    if twice := sorted(set(row) & set(code)):
        raise ConfigError(f"{where}: {twice} given twice")
    return Spec(**{k: _frozen(v) for k, v in row.items()}, **code)


def _frozen(value: Any) -> Any:  # noqa: ANN401 - a TOML value
    """TOML arrays as tuples, so a Spec stays hashable and compares as it did when written in Python."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True)
class Knob:
    """One described field of a config class: its name, Spec, value kind and default."""

    name: str
    spec: Spec
    kind: type  # int, float, bool, str, Path, or another class built from the text (Secret)
    optional: bool  # None is a value ("no minimum score")
    default: Any

    @property
    def who(self) -> str:
        """How errors name it: "Candidates per stage (candidates)"."""
        return f"{self.spec.label} ({self.name})" if self.spec.label else self.name

    def __getattr__(self, item: str) -> Any:  # noqa: ANN401 - spec attributes read through
        if item == "spec":  # not set yet (copying): no recursion
            raise AttributeError(item)
        return getattr(self.spec, item)

    @property
    def allowed(self) -> str:
        """What the setting accepts, in words: "a whole number from 1 to 1000", "one of rrf, dbsf"."""
        if self.kind is bool:
            return "1 or 0 (true/false, yes/no and on/off work too)"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.kind in (int, float):
            what = "a whole number" if self.kind is int else "a number"
            lo, hi = (_num(x) for x in (self.lo, self.hi))
            if self.lo is not None and self.hi is not None:
                text = f"{what} above {lo} and at most {hi}" if self.lo_open else f"{what} from {lo} to {hi}"
            elif self.lo is not None:
                text = f"{what} above {lo}" if self.lo_open else f"{what} of at least {lo}"
            elif self.hi is not None:
                text = f"{what} of at most {hi}"
            else:
                text = f"a finite {what[2:]}"
            return text + (", or empty for none" if self.optional else "")
        return "text"

    def parse(self, raw: Any, who: str) -> Any:  # noqa: ANN401
        """The value a text (an env var, a link, a CLI argument, a TOML value) stands for, checked.

        Raises:
            ConfigError: "`who` must be <allowed>; got <raw>".
        """
        text = raw.strip() if isinstance(raw, str) else raw
        if self.optional and (text is None or (isinstance(text, str) and text.lower() in ("", "none"))):
            return None
        try:
            if self.kind is bool:
                value = _flag(text)
            elif self.kind is int:
                value = text if isinstance(text, int) and not isinstance(text, bool) else int(str(text))
            elif self.kind is float:
                value = float(text) if not isinstance(text, bool) else _refuse()
            else:  # text, a path, a Secret
                value = self.kind(str(text))
        except (ValueError, TypeError, OverflowError):
            raise ConfigError(f"{who} must be {self.allowed}; got {raw!r}") from None
        return self.check(value, who, shown=raw)

    def check(self, value: Any, who: str, shown: Any = None) -> Any:  # noqa: ANN401
        """`value` itself when the setting accepts it.

        Raises:
            ConfigError: wrong kind, NaN or infinity, out of range, or not one of the choices.
        """
        if value is None and self.optional:
            return value
        bad = ConfigError(f"{who} must be {self.allowed}; got {value if shown is None else shown!r}")
        if self.kind is bool:
            if not isinstance(value, bool):
                raise bad
        elif self.kind in (int, float):
            if isinstance(value, bool) or not isinstance(value, int if self.kind is int else (int, float)):
                raise bad
            if not math.isfinite(value):
                raise bad
            if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
                raise bad
            if self.hi is not None and value > self.hi:
                raise bad
        elif self.choices and value not in self.choices:
            raise bad
        elif self.grammar is not None:
            try:
                self.grammar(value)
            except ConfigError as e:
                raise ConfigError(f"{who}: {e}") from None
        return value

    def applies(self, values: typing.Mapping[str, Any]) -> str:
        """Why this setting does nothing under these other settings ("" when it applies)."""
        fusion = values.get("fusion")
        if self.fusions and fusion not in self.fusions:
            return f"only for fusion {', '.join(self.fusions)}; fusion is {fusion}"
        if self.needs and not values.get(self.needs):
            return f"only with {self.needs.replace('_', ' ')} on"
        return ""

    def shown(self, value: Any) -> str:  # noqa: ANN401
        """The value in words (a choice's display name, floats without trailing zeros)."""
        names = dict(self.names)
        if value in names:
            return names[value]
        return f"{value:g}" if isinstance(value, float) else str(value)


@lru_cache(maxsize=None)
def knobs(cls: type) -> tuple[Knob, ...]:
    """The described fields of a config dataclass, in declaration order."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if SPEC not in f.metadata:
            continue
        kind, optional = hints[f.name], False
        args = typing.get_args(kind)
        if type(None) in args:
            optional, kind = True, next(a for a in args if a is not type(None))
        out.append(Knob(f.name, _spec(cls, f.name, f.metadata[SPEC]), kind, optional, f.default))
    if extra := sorted(set(_rows().get(cls.__name__, {})) - {k.name for k in out}):
        raise ConfigError(f"{_WORDS.name} describes {cls.__name__} fields that do not exist: {extra}")
    return tuple(out)


def check_fields(config: Any) -> None:  # noqa: ANN401 - a config dataclass instance
    """Check every described field of `config` (its `__post_init__` calls this: one place for every range).

    Raises:
        ConfigError: naming the field, its value and what it accepts.
    """
    for knob in knobs(type(config)):
        knob.check(getattr(config, knob.name), knob.who)


def from_env(cls: type, get: typing.Callable[[str], Any]) -> Any:  # noqa: ANN401
    """Build `cls` from `get(env name)` ("" or None: the default); nested config dataclasses are read the same way.

    Raises:
        ConfigError: naming the variable, its value and what it accepts.
    """
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(f.default) and SPEC not in f.metadata:
            values[f.name] = from_env(type(f.default), get)
    for knob in knobs(cls):
        if knob.env and (raw := get(knob.env)) not in (None, ""):
            values[knob.name] = knob.parse(raw, knob.env)
    return cls(**values)


def _flag(text: Any) -> bool:  # noqa: ANN401
    if isinstance(text, bool):
        return text
    if isinstance(text, str) and text.lower() in _TRUE + _FALSE:
        return text.lower() in _TRUE
    raise ValueError(text)


def _refuse() -> float:
    raise TypeError("not a number")


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"
