"""Words for codes: what the pages and the CLI say instead of internal names like `final_k`.

One place, so the inspector, the Eval tab's verdicts and the CLI name a stage the same way.
"""

from __future__ import annotations

# Retrieval stages, as table and chart labels.
STAGE_TITLES = {"dense": "dense", "sparse": "sparse", "fused": "hybrid (fused)", "rerank": "reranked"}

# Where a tracked chunk was lost (rag.inspect.track's `dropped_at` codes), completing "Lost at …".
LOST_AT = {
    "filter": "the filter",
    "candidates": "the candidate lists (in neither the dense nor the sparse top candidates)",
    "fused": "fusion (cut from the fused list)",
    "final_k": "the final k (reranked below the last kept rank)",
    "min_score": "the minimum score (its final score is below it)",
    "collapsed": "one hit per section (another chunk of its section stands for it)",
}


def lost_at(code: str) -> str:
    """'Lost at …' in words for a tracking stage code."""
    return f"Lost at {LOST_AT.get(code, code)}"
