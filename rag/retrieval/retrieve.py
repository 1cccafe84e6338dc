"""The one retrieval code path: what the inspector shows is exactly what Ask and Eval run.

`retrieve()` records, for every candidate chunk, its rank and score in each stage (dense, sparse,
fused, reranked) and whether it reached the final top-k, so a person can see where a chunk was lost.

Fusion (`RetrievalConfig.fusion`), each list holding `candidates` chunks:
- rrf, dbsf, weighted_rrf: one Qdrant query, a dense and a sparse prefetch fused by Qdrant. Its RRF
  scores 1 / (k + rank - 1); weighted RRF divides the rank by the weight, 1 / (k + rank / w - 1), so
  weights 0.5/0.5 are not plain RRF. DBSF normalises each list by its mean +- 3 standard deviations.
- union: every chunk either list found, in RRF order, all handed to the reranker ("let it decide").
- dense, sparse: that list alone (the baselines the inspector compares against).

Section-level results: `collapse` keeps each section's best chunk (the others are marked with the
chunk that stands for them, and those that outrank the next section are carried with it: shown, read
and counted at its rank; rag/retrieval/collapse.py), `dedupe` keeps one of the chunks whose text is the
same in several places (rag/retrieval/dedupe.py: the others are marked, and listed on it as "also
in"), and `context="section"` hands the answerer the section around each final chunk (small-to-big,
rag/retrieval/context.py); ranking and metrics still see the chunk itself.
"""

from __future__ import annotations

import time
from typing import Sequence

from rag.components import Components
from rag.errors import QuestionError
from rag.retrieval.collapse import carried_siblings, fold_sections
from rag.retrieval.context import section_contexts
from rag.retrieval.dedupe import Repeats, find_repeats
from rag.retrieval.fusion import fused_search
from rag.retrieval.prf import expand_query, rocchio
from rag.retrieval.rerank import RerankContext, get_reranker
from rag.retrieval.result import Candidate, QueryVectors, RetrievalResult, StageScore
from rag.settings.config import RetrievalConfig
from rag.store.base import stored_chunk
from rag.types import Chunk, ChunkFilter, Hit

MAX_QUESTION_CHARS = 2000


def check_question(question: str) -> str:
    """The question with its whitespace collapsed, when it can be searched.

    Raises:
        QuestionError: it is empty (or only whitespace), or longer than MAX_QUESTION_CHARS.
    """
    question = " ".join(question.split())
    if not question:
        raise QuestionError("type a question first")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(question):,} characters long; keep it under {MAX_QUESTION_CHARS:,}")
    return question


def retrieve(  # noqa: PLR0915 - the one retrieval path, stage by stage; its split into steps is open (issue 36)
    components: Components, question: str, config: RetrievalConfig | None = None, flt: ChunkFilter | None = None,
    encoded: QueryVectors | None = None,
) -> RetrievalResult:  # fmt: skip
    """Run dense, sparse, fusion and reranking for `question`.

    Args:
        components: store and encoders.
        question: the user's question (refused when empty, as Ask refuses it).
        config: retrieval settings; None means the configured defaults.
        flt: source/tag restrictions, applied inside Qdrant for every stage.
        encoded: the question's vectors from an earlier retrieval of the same question (compare,
            the tracker's verified fixes); only their `dense` and `sparse` are used.

    Returns:
        A RetrievalResult holding every candidate's per-stage rank and score. With reranker "none" the
        rerank stage repeats the fused ranks and scores, so `min_score` always cuts on the last stage.

    Raises:
        QuestionError: the question is empty or too long.
        RagError: a setting names an unknown reranker, a model cannot load, or the store fails.
    """
    check_question(question)
    config = config or components.settings.retrieval
    flt = flt or ChunkFilter()
    components.check_models()
    reranker = get_reranker(config.reranker)
    timings: dict[str, float] = {}
    cold = [
        m for m in (components.dense, components.sparse) if not getattr(m, "loaded", True)
    ]  # LazyModel or CollectionDense
    if encoded is None and cold:  # a first query loads the models: timed apart, or "encode" would read seconds
        t0 = time.perf_counter()
        for model in cold:
            model.load()
        timings["load models"] = _ms(t0)
    t0 = time.perf_counter()
    if encoded is None:
        own_dense, own_sparse = components.dense.encode_query(question), components.sparse.encode_query(question)
    else:
        own_dense, own_sparse = encoded.dense, encoded.sparse
    dense_vec, sparse_vec = own_dense, own_sparse
    timings["encode"] = _ms(t0)

    t0 = time.perf_counter()
    store = components.store
    n = config.candidates
    dense_hits = store.search_dense(dense_vec, n, flt)
    sparse_hits = store.search_sparse(sparse_vec, n, flt)
    expansion: tuple[str, ...] = ()
    dense_feedback: tuple[str, ...] = ()
    if config.prf and sparse_hits:
        feedback = [(stored_chunk(h.id, h.payload).chunk.embed_text, h.score) for h in sparse_hits[: config.prf_docs]]
        expanded = expand_query(components.sparse, sparse_vec, feedback, config.prf_terms, config.prf_weight)
        sparse_vec, expansion = expanded.vector, expanded.terms
        sparse_hits = store.search_sparse(sparse_vec, n, flt)
    fused_hits = fused_search(store, config, dense_vec, sparse_vec, flt, lists=(dense_hits, sparse_hits))
    if config.dense_prf and fused_hits:
        dense_feedback = tuple(h.id for h in fused_hits[: config.dense_prf_docs])
        top = ChunkFilter(
            ids=dense_feedback, include_quarantined=flt.include_quarantined, include_unranked=flt.include_unranked
        )
        vectors = [r.dense for r in store.records(top, with_vectors=True) if r.dense is not None]
        dense_vec = rocchio(dense_vec, vectors, config.dense_prf_weight)
        dense_hits = store.search_dense(dense_vec, n, flt)
        fused_hits = fused_search(store, config, dense_vec, sparse_vec, flt, lists=(dense_hits, sparse_hits))
    timings["search"] = _ms(t0)

    payloads: dict[str, Hit] = {}
    for hits in (dense_hits, sparse_hits, fused_hits):
        for h in hits:
            payloads.setdefault(h.id, h)
    stages: dict[str, dict[str, StageScore]] = {
        "dense": _ranks(dense_hits),
        "sparse": _ranks(sparse_hits),
        "fused": _ranks(fused_hits),
    }

    t0 = time.perf_counter()
    pool = [stored_chunk(h.id, payloads[h.id].payload) for h in fused_hits]
    context = RerankContext(
        question, dense_vec, sparse_vec, store, components.dense, flt, tuple(h.score for h in fused_hits)
    )
    scores = reranker.score(question, pool, context) if pool else []
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    stages["rerank"] = {pool[i].chunk.id: StageScore(r, scores[i]) for r, i in enumerate(order, 1)}
    timings["rerank"] = _ms(t0)

    ranked = [pool[i].chunk for i in order]
    collapsed = fold_sections(ranked) if config.collapse else {}
    # Among the chunks collapsing left standing: a chunk folded behind its section never stands for a repeat.
    standing = [c for c in ranked if c.id not in collapsed]
    repeats = find_repeats(standing) if config.dedupe else Repeats()
    score = {pool[i].chunk.id: scores[i] for i in order}

    def shown(cid: str) -> bool:
        return cid not in repeats.repeat_of and (config.min_score is None or score[cid] >= config.min_score)

    carried = carried_siblings(ranked, collapsed, config.final_k, shown) if collapsed else frozenset()
    final_ids: list[str] = []
    for chunk in ranked:
        if chunk.id in collapsed or not shown(chunk.id):
            continue
        final_ids.append(chunk.id)
        if len(final_ids) == config.final_k:
            break
    final_rank = {cid: r for r, cid in enumerate(final_ids, 1)}
    contexts: dict[str, Chunk] = {}
    if config.context == "section" and final_ids:
        contexts = section_contexts(components, [stored_chunk(cid, payloads[cid].payload).chunk for cid in final_ids])

    candidates = tuple(
        Candidate(
            chunk=stored_chunk(cid, hit.payload),
            dense=stages["dense"].get(cid, StageScore()),
            sparse=stages["sparse"].get(cid, StageScore()),
            fused=stages["fused"].get(cid, StageScore()),
            rerank=stages["rerank"].get(cid, StageScore()),
            final_rank=final_rank.get(cid),
            collapsed_into=collapsed.get(cid),
            carried_at=final_rank.get(collapsed.get(cid, "")) if cid in carried else None,
            carried=cid in carried,
            repeat_of=repeats.repeat_of.get(cid),
            also_in=repeats.also_in.get(cid, ()),
            context=contexts.get(cid),
        )
        for cid, hit in payloads.items()
    )
    candidates = tuple(sorted(candidates, key=_display_order))
    query = QueryVectors(own_dense, own_sparse, dense_vec, sparse_vec)
    return RetrievalResult(question, config, reranker.name, candidates, flt, timings, expansion, dense_feedback, query)


def _display_order(c: Candidate) -> tuple:
    big = 10**9
    return (
        c.shown_rank or big,
        c.final_rank is None,  # a section's chunk first, then the siblings it carries
        c.rerank.rank or big,
        c.fused.rank or big,
        min(c.dense.rank or big, c.sparse.rank or big),
    )


def _ranks(hits: Sequence[Hit]) -> dict[str, StageScore]:
    return {h.id: StageScore(r, h.score) for r, h in enumerate(hits, 1)}


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)
