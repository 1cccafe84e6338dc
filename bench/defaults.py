"""Issue 35's leave-one-set-out choice of every retrieval default, over every docs set.

For each docs set, every retrieval setting a question-time sweep can change is tried one at a time against the
defaults: the sweep is the product's own (`rag.eval.tune.start_sweep` / `run_sweep`: the values each setting
takes come from its `setting(...)` description, every configuration is a `run_eval`, per-question scores are
stored in the set's `tune.sqlite`, so a killed run resumes). Section gold, last stage, with final_k 10 so that
MRR@10 and hit@10 count ten places. Then, for each setting and each held-out set, the value with the best mean
MRR@10 over the OTHER sets is chosen (sets weigh the same, whatever their size), and its paired-bootstrap gain
(rag.eval.bootstrap) over the current default on the held-out set is reported, for MRR@10, recall@5, hit@10.

The rule (issue 35): a value "loses" on a set when one of the three gains has its whole interval below zero.
A default stays unless every fold chooses the same other value and that value loses on no set; then the other
value is proposed as the new default. A fold split between values, or a chosen value that loses somewhere,
keeps the default (and a default that itself loses to the fold's choice on some set is flagged).

Not swept, and why: `context` and `section_reads` change only what the answerer reads, never a ranking;
`min_score` only cuts the tail of the final list, so it can never raise a rank metric; `final_k` is fixed by the
metrics. `rrf_k`, `dense_weight` and the PRF numbers apply only under a fusion or a switch the defaults leave
off: with `--conditional` they are swept under that fusion or switch (and compared with it at its defaults).

Sets: the cached collections of /work/coord/bench-cache.md (product defaults, one data dir per set; how each
was built: tests/data/README.md). Each is copied into --work first and only the copy is opened.

Usage:
    python bench/defaults.py [--cache /work/bench-cache] [--work /tmp/defaults] [--sets fastapi,...]
        [--conditional] [--out results.json]
    python bench/defaults.py --report results.json     # the tables again, from a stored run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.components import build_components  # noqa: E402
from rag.eval.bootstrap import Interval, paired_interval  # noqa: E402
from rag.eval.qsets import read_question_set_file  # noqa: E402
from rag.eval.tune import list_sweeps, plan_configs, dimensions, run_sweep, start_sweep  # noqa: E402
from rag.settings.config import RetrievalConfig, Settings  # noqa: E402

DATA = ROOT / "tests" / "data"
SETS = {  # set -> question file; its documents: tests/data/README.md
    "fastapi": DATA / "fastapi_qa.jsonl",
    "starlette": DATA / "starlette_qa.jsonl",
    "diffutils": DATA / "diffutils_manual.jsonl",
    "click": DATA / "click_rst.jsonl",
    "zh": DATA / "debian_reference_zh.jsonl",
    "pdf_manuals": DATA / "pdf_manuals.jsonl",
}
# Every setting a question-time sweep can score; the rest: see the module docstring.
VARY = ("fusion", "candidates", "reranker", "prf", "dense_prf", "collapse", "dedupe", "mode")
# Settings that apply only under another's non-default value: swept there, against that value alone.
CONDITIONAL = (
    ({"fusion": "rrf"}, ("rrf_k",)),
    ({"fusion": "weighted_rrf"}, ("dense_weight",)),
    ({"prf": True}, ("prf_docs", "prf_terms", "prf_weight")),
    ({"dense_prf": True}, ("dense_prf_docs", "dense_prf_weight")),
)
METRICS = ("mrr@10", "recall@5", "hit@10")
CHOOSE_BY = "mrr@10"
BASE = RetrievalConfig(final_k=10)  # the product defaults; final_k fixed by the @10 metrics


@dataclass(frozen=True)
class Family:
    """One setting's values on every set, all against the same base (the defaults, or the defaults under a
    fusion or switch for the conditional ones): per set, value -> question id -> metric -> score."""

    setting: str
    under: str  # "" for the defaults, else e.g. "prf=True"
    default: Any
    scores: Mapping[str, Mapping[Any, Mapping[str, Mapping[str, float]]]]

    def values(self) -> list[Any]:
        seen: dict[str, Any] = {}
        for by_value in self.scores.values():
            for v in by_value:
                seen.setdefault(json.dumps(v), v)
        return list(seen.values())

    def mean(self, s: str, value: Any, metric: str) -> float:  # noqa: ANN401 - a setting's value
        per_q = self.scores[s][value]
        return sum(m[metric] for m in per_q.values()) / len(per_q)

    def gain(self, s: str, value: Any, metric: str) -> Interval:  # noqa: ANN401 - a setting's value
        pick = {q: m[metric] for q, m in self.scores[s][value].items()}
        base = {q: m[metric] for q, m in self.scores[s][self.default].items()}
        return paired_interval(base, pick)


@dataclass(frozen=True)
class Fold:
    held_out: str
    chosen: Any
    gains: Mapping[str, Interval]  # metric -> gain of `chosen` over the default on the held-out set


def sweep_set(name: str, data_dir: Path, vary: Sequence[str], conditional: bool) -> dict[str, Any]:
    """Run (or resume) the sweeps of one set; returns {base label: {"base": config, "results": [...]}}."""
    components = build_components(Settings(data_dir=data_dir))
    qset = read_question_set_file(SETS[name])
    out: dict[str, Any] = {}
    try:
        plans = [("", BASE, tuple(vary))]
        if conditional:
            plans += [(_under(u), dataclasses.replace(BASE, **u), names) for u, names in CONDITIONAL]
        for under, base, vary in plans:
            dims = dimensions(vary, base)
            plan = [c for d in dims for c in plan_configs(base, [d], budget=len(d.values))]
            plan = list(dict.fromkeys([base, *plan]))
            old = [s for s in list_sweeps(data_dir) if (s.base, s.vary, len(s.plan)) == (base, tuple(vary), len(plan))]
            sweep = (
                old[0] if old else start_sweep(components, qset, vary, base=base, budget=len(plan), metric=CHOOSE_BY)
            )
            t0 = time.perf_counter()

            def progress(done: int, total: int, message: str) -> None:
                if done % len(qset.questions) == 0:  # one line per configuration finished
                    print(f"{name} {under or 'defaults'} {done}/{total}: {message}", file=sys.stderr)

            sweep = run_sweep(components, sweep, progress=progress)
            took = time.perf_counter() - t0
            print(f"{name} {under or 'defaults'}: {len(sweep.results)} configurations, {took:.0f} s", file=sys.stderr)
            out[under] = {
                "under": under, "base": dataclasses.asdict(base), "vary": list(vary),
                "results": [{"config": dataclasses.asdict(r.config), "per_query": r.per_query} for r in sweep.results],
            }  # fmt: skip
    finally:
        components.close()
    return out


def _under(values: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items())


def families(runs: Mapping[str, Mapping[str, Any]]) -> list[Family]:
    """Regroup each set's sweeps by setting: the base and every configuration that changes that setting alone."""
    grouped: dict[tuple[str, str], dict[str, dict[Any, Any]]] = {}
    defaults: dict[tuple[str, str], Any] = {}
    for s, sweeps in runs.items():
        for key, sweep in sweeps.items():
            under = sweep.get("under", key)  # several sweeps of one set (runs merged by --report) share an "under"
            base = sweep["base"]
            results = sweep["results"]
            for name in sweep["vary"]:
                key = (name, under)
                defaults[key] = base[name]
                by_value = grouped.setdefault(key, {}).setdefault(s, {})
                by_value[base[name]] = results[0]["per_query"]
                for r in results[1:]:
                    changed = [k for k in sweep["vary"] if r["config"][k] != base[k]]
                    if changed == [name]:
                        by_value[r["config"][name]] = r["per_query"]
    return [Family(n, u, defaults[(n, u)], grouped[(n, u)]) for (n, u) in grouped]


def folds(f: Family) -> list[Fold]:
    """Leave one set out: the value with the best mean over the other sets, scored on the held-out one."""
    sets = list(f.scores)
    out: list[Fold] = []
    if len(sets) < 2:  # nothing to choose on
        return out
    for held in sets:
        others = [s for s in sets if s != held]
        values = [v for v in f.values() if all(v in f.scores[s] for s in sets)]

        def mean_gain(v: Any) -> float:  # noqa: ANN401 - a setting's value
            return sum(f.mean(s, v, CHOOSE_BY) - f.mean(s, f.default, CHOOSE_BY) for s in others) / len(others)

        # The default wins ties: a change must be better on the others, not level.
        chosen = max(values, key=lambda v: (round(mean_gain(v), 6), v == f.default))
        out.append(Fold(held, chosen, {m: f.gain(held, chosen, m) for m in METRICS}))
    return out


def loses(f: Family, value: Any) -> list[str]:  # noqa: ANN401 - a setting's value
    """The sets where `value` is worse than the default beyond noise on some metric."""
    return [s for s in f.scores if value in f.scores[s] and any(f.gain(s, value, m).hi < 0 for m in METRICS)]


def verdict(f: Family, fs: Sequence[Fold]) -> tuple[str, Any]:
    """The rule of issue 35, in words, and the value it proposes (the default when it stays)."""
    chosen = {json.dumps(x.chosen) for x in fs}
    if chosen == {json.dumps(f.default)}:
        return "keep: every fold chooses the default", f.default
    beaten = [x.held_out for x in fs if x.chosen != f.default and x.gains[CHOOSE_BY].lo > 0]
    flag = f"; the default loses to the fold's choice on {', '.join(beaten)}" if beaten else ""
    if len(chosen) > 1:
        return f"keep: the folds disagree{flag}", f.default
    value = fs[0].chosen
    lost = loses(f, value)
    if lost:
        return f"keep: {value} loses on {', '.join(lost)}{flag}", f.default
    return f"change to {value}: chosen by every fold, loses on no set", value


def beaten_words(f: Family) -> str:
    """Where some value the folds did not choose still beats the default beyond noise on MRR@10: what a set
    would gain from its own tuning (`ragscope tune`), not a default for every set."""
    found = [
        f"{s} ({', '.join(str(v) for v in by_value if v != f.default and f.gain(s, v, CHOOSE_BY).lo > 0)})"
        for s, by_value in f.scores.items()
        if any(v != f.default and f.gain(s, v, CHOOSE_BY).lo > 0 for v in by_value)
    ]
    return f"; beaten on its own set by: {', '.join(found)}" if found else ""


def cell(x: Fold, metric: str, default: Any) -> str:  # noqa: ANN401 - a setting's value
    if x.chosen == default:
        return "default"
    g = x.gains[metric]
    return f"{x.chosen}: {g.mean:+.3f} [{g.lo:+.3f}, {g.hi:+.3f}]" + (" *" if g.excludes_zero else "")


def tables(runs: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The leave-one-set-out table (Markdown) and the proposals, one line per setting that would change."""
    fams = families(runs)
    sets = [s for s in SETS if s in runs]
    if len(sets) < 2:
        return ["(leaving one set out needs two sets or more)"], []
    head = "| setting | default | " + " | ".join(f"held out: {s}" for s in sets) + " | verdict |"
    lines = [
        f"Cells: the value the other sets choose by mean {CHOOSE_BY}, and its {CHOOSE_BY} gain over the default on the "
        "held-out set [95% paired interval] (* excludes 0); recall@5 and hit@10 in the rows below it.",
        "", head, "|---|---|" + "---|" * len(sets) + "---|",
    ]  # fmt: skip
    proposals = []
    for f in fams:
        fs = folds(f)
        words, value = verdict(f, fs)
        name = f"{f.setting}" + (f" (under {f.under})" if f.under else "")
        held = {x.held_out: x for x in fs}

        def row(metric: str, held: dict[str, Fold] = held, default: Any = f.default) -> str:  # noqa: ANN401
            return " | ".join(cell(held[s], metric, default) if s in held else "not swept" for s in sets)

        lines.append(f"| {name} | {f.default} | {row(CHOOSE_BY)} | {words}{beaten_words(f)} |")
        for m in METRICS[1:]:
            if any(x.chosen != f.default for x in fs):
                lines.append(f"| ↳ {m} | | {row(m)} | |")
        if value != f.default:
            proposals.append(f"- `{f.setting}`{f' (under {f.under})' if f.under else ''}: {f.default} → {value}")
    return lines, proposals


def value_matrix(runs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every value tried, per set: its mean MRR@10 gain over the default (the folds' raw material)."""
    sets = [s for s in SETS if s in runs]
    lines = ["| setting = value | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    for f in families(runs):
        for v in f.values():
            if v == f.default:
                continue
            cells = [f.gain(s, v, CHOOSE_BY).words() if v in f.scores.get(s, {}) else "-" for s in sets]
            lines.append(f"| {f.setting}{f' ({f.under})' if f.under else ''} = {v} | " + " | ".join(cells) + " |")
    return lines


def run_words(stored: Mapping[str, Any]) -> str:
    before, after = stored["load_before"][0], stored["load_after"][0]
    return f"{stored['date']} · load average before {before:.2f}, after {after:.2f} · sets: {', '.join(stored['runs'])}"


def merged(stored: Sequence[Mapping[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Several --out files as one: each set's sweeps from every file (a set swept again in a later file, on
    other settings, adds those settings), and one line per file saying when and at what load it ran."""
    runs: dict[str, dict[str, Any]] = {}
    for i, one in enumerate(stored):
        for s, sweeps in one["runs"].items():
            for key, sweep in sweeps.items():
                runs.setdefault(s, {})[f"{i}:{key}"] = {"under": key, **sweep}
    return runs, [run_words(one) for one in stored]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path("/work/bench-cache"), help="cached data dirs, one per set")
    p.add_argument("--work", type=Path, default=Path("/tmp/defaults"), help="where each cached dir is copied, opened")
    p.add_argument("--done", type=Path, default=Path("/work/coord"), help="where the builder marks a set ready")
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated; a set without a cached dir is skipped")
    p.add_argument("--vary", default=",".join(VARY), help="settings swept against the defaults (comma-separated)")
    p.add_argument("--conditional", action="store_true", help="also sweep those applying only under another value")
    p.add_argument("--out", type=Path, help="write every per-question score here (JSON), for --report")
    p.add_argument("--report", type=Path, nargs="+", help="print the tables of stored --out files, merged")
    args = p.parse_args(argv)
    load = os.getloadavg()
    if args.report:
        runs, heads = merged([json.loads(path.read_text("utf-8")) for path in args.report])
    else:
        runs = {}
        for name in args.sets.split(","):
            cached = args.cache / name
            if not (args.done / f"cache-{name}.done").exists():  # absent, or still being built
                print(f"{name}: no {args.done}/cache-{name}.done for {cached}; skipped", file=sys.stderr)
                continue
            work = args.work / name
            if not work.exists():
                shutil.copytree(cached, work)
            runs[name] = sweep_set(name, work, args.vary.split(","), args.conditional)
        now = datetime.now(UTC).isoformat(timespec="minutes")
        stored = {"date": now, "load_before": load, "load_after": os.getloadavg(), "runs": runs}
        if args.out:
            args.out.write_text(json.dumps(stored), "utf-8")
        heads = [run_words(stored)]
    lines, proposals = tables(runs)
    print("\n".join(heads) + "\n")
    print("\n".join(lines))
    print("\nEvery value, per set: mean MRR@10 gain over the default [95% paired interval]\n")
    print("\n".join(value_matrix(runs)))
    print("\nProposed default changes:\n" + ("\n".join(proposals) or "- none"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
