"""Words for codes: what the pages and the CLI say instead of internal names like `final_k`.

One place, so the inspector, the Eval tab's verdicts and the CLI name a stage the same way.
"""

from __future__ import annotations

# Retrieval stages, as table and chart labels.
STAGE_TITLES = {"dense": "dense", "sparse": "sparse", "fused": "hybrid (fused)", "rerank": "reranked"}
