"""A cross-encoder supplied by local folder (`cross-encoder:<path>`) runs as the rerank stage.

No trained cross-encoder ships in a PyPI package we can reach offline, so the test builds a small
one: a 2-layer BERT sequence classifier with MiniLM's tokenizer and seeded random weights, saved as a
Hugging Face folder, exactly what a user copies in from a machine with internet. Its scores mean
nothing, so the tests check the wiring, not quality: the rerank stage holds that model's scores for
those (question, chunk) pairs, the final order follows them, and a bad path is a clear error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.settings.config import RetrievalConfig
from rag.encoders.base import resolve_dense_path
from rag.errors import EncoderError
from rag.retrieval.retrieve import retrieve

QUESTION = "How long do refunds take to reach my card?"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(resolve_dense_path("all-MiniLM-L6-v2"))
    torch.manual_seed(7)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_local_cross_encoder_folder_is_the_rerank_stage(sample_components, tiny_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    config = RetrievalConfig(candidates=10, final_k=5, fusion="dbsf", reranker=f"cross-encoder:{tiny_cross_encoder}")
    result = retrieve(sample_components, QUESTION, config)

    assert result.reranker == f"cross-encoder:{tiny_cross_encoder}"
    pool = result.ranked("fused")
    expected = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict([(QUESTION, c.chunk.chunk.embed_text) for c in pool])
    for candidate, score in zip(pool, expected, strict=True):
        assert candidate.rerank.score == pytest.approx(float(score), abs=1e-5)
    final_scores = [c.rerank.score for c in result.final]
    assert final_scores == sorted(final_scores, reverse=True)
    assert [c.id for c in result.final] == [c.id for c in result.ranked("rerank")[:5]]


def test_a_missing_cross_encoder_folder_is_a_clear_error(sample_components, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(EncoderError, match="could not load cross-encoder"):
        retrieve(sample_components, QUESTION, RetrievalConfig(reranker=f"cross-encoder:{missing}"))
