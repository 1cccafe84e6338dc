"""`track` and `eval` agree on every question of a docs set: found exactly when the gold section is a hit in the
final top k, at the same rank, lost at the stage Eval's verdict names (one classifier, rag.retrieval.loss).

tests/test_track_eval_agree.py checks this on the sample set under several configs; this runs it on the docs
sets, whose collections take minutes to ingest:

    python bench/track_agree.py --set tests/data/fastapi_qa.jsonl --docs DIR [--data DIR] [--k 5 --candidates 50]

Prints the number of single-section questions checked, found, lost by stage, and every disagreement (none
expected). Exit 1 when any disagrees.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    from rag.cli.track_cmd import report_json
    from rag.components import build_components
    from rag.eval.gold import SectionGold
    from rag.eval.qsets import read_question_set_file
    from rag.eval.runner import run_eval
    from rag.ingest.pipeline import ingest_files
    from rag.inspect.target import find_target
    from rag.inspect.track import track
    from rag.settings.config import Settings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", required=True, type=Path)
    parser.add_argument("--docs", type=Path, help="documents to ingest when --data holds no collection yet")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--k", type=int, default=None)
    parser.add_argument("--candidates", type=int, default=None)
    args = parser.parse_args(argv)
    data = args.data or Path(f"/tmp/track-agree-{args.set.stem}")
    components = build_components(Settings(data_dir=data))
    try:
        if components.store.count() == 0:
            files = [(p.relative_to(args.docs).as_posix(), p.read_bytes()) for p in sorted(args.docs.rglob("*")) if p.is_file()]
            ingest_files(components, files)
        config = components.settings.retrieval
        changes = {"final_k": args.k, "candidates": args.candidates}
        config = dataclasses.replace(config, **{k: v for k, v in changes.items() if v is not None})
        qset = read_question_set_file(args.set)
        run = run_eval(components, qset, config, save=False)
        by_id = {q.id: q for q in qset.questions}
        stages: collections.Counter[str] = collections.Counter()
        disagree = []
        for row in run.questions:
            gold = by_id[row.id].gold
            if not row.scored or not isinstance(gold, SectionGold) or len(gold.sections) != 1:
                continue
            (ref,) = gold.sections
            target = find_target(components, source=ref.source, heading=ref.heading, question=row.question)
            out = report_json(track(components, row.question, target, config))
            hit = row.gold_ranks["final"]
            verdict = row.verdict.code if row.verdict and hit is None else None
            stages[out["lost_at"] or "found"] += 1
            if out["found"] != (hit is not None) or out["final_rank"] != hit or out["lost_at"] != verdict:
                disagree.append((row.id, out["found"], out["final_rank"], out["lost_at"], hit, verdict))
        print(f"{args.set.name}: {sum(stages.values())} single-section questions; {dict(stages)}")
        for d in disagree:
            print("  disagree: %s track found=%s rank=%s lost_at=%s | eval rank=%s verdict=%s" % d)
        print(f"disagreements: {len(disagree)}")
        return 1 if disagree else 0
    finally:
        components.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
