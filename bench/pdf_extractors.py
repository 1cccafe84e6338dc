"""Which PDF library reads the manuals best: each one's text against the same manual's own text in another format.

    python bench/pdf_extractors.py [pypdf_plain pypdf_layout pdfminer pdfplumber]

Debian's bash-doc (bashref.pdf, with bashref.html) and gnuplot-doc (gnuplot.pdf, with gnuplot.gih.gz); pdfminer.six
and pdfplumber are not dependencies: install them apart (`pip install --target DIR pdfplumber`, then PYTHONPATH=DIR),
a library that is missing is skipped. For each: the share of the reference's words (r1) and adjacent word pairs (r2:
reading order, spacing) found in the library's text, the share of its own found in the reference (p1, p2), and how
many "words" run past 25 letters (words run together). The choice and the table: docs/pdf.md.
"""

from __future__ import annotations

import gzip
import argparse
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable

from bs4 import BeautifulSoup

PDFS = {"bash": "/usr/share/doc/bash/bashref.pdf", "gnuplot": "/usr/share/doc/gnuplot/gnuplot.pdf"}


def reference(doc: str) -> str:
    if doc == "bash":
        with open("/usr/share/doc/bash/bashref.html", encoding="utf-8", errors="replace") as f:
            return BeautifulSoup(f.read(), "html.parser").get_text(" ")
    with gzip.open("/usr/share/doc/gnuplot/gnuplot.gih.gz", "rt", errors="replace") as f:
        return f.read()


def words(text: str) -> list[str]:
    """Lowercased words, ligatures folded and a line-end hyphen joined for every library alike."""
    return re.findall(r"[a-z0-9]+", re.sub(r"-\n", "", unicodedata.normalize("NFKC", text).lower()))


def scores(found: list[str], wanted: list[str]) -> dict[str, float]:
    out = {}
    for n in (1, 2):
        a, b = Counter(zip(*[found[i:] for i in range(n)])), Counter(zip(*[wanted[i:] for i in range(n)]))
        both = sum((a & b).values())
        out[f"r{n}"], out[f"p{n}"] = round(both / sum(b.values()), 4), round(both / sum(a.values()), 4)
    return out


def pypdf_plain(path: str) -> list[str]:
    from pypdf import PdfReader

    return [p.extract_text() or "" for p in PdfReader(path).pages]


def pypdf_layout(path: str) -> list[str]:
    from pypdf import PdfReader

    return [p.extract_text(extraction_mode="layout") or "" for p in PdfReader(path).pages]


def pdfminer(path: str) -> list[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return ["".join(e.get_text() for e in page if isinstance(e, LTTextContainer)) for page in extract_pages(path)]


def pdfplumber(path: str) -> list[str]:
    import pdfplumber as plumber

    with plumber.open(path) as pdf:
        return [p.extract_text() or "" for p in pdf.pages]


READERS: dict[str, Callable[[str], list[str]]] = {
    "pypdf_plain": pypdf_plain,
    "pypdf_layout": pypdf_layout,
    "pdfminer": pdfminer,
    "pdfplumber": pdfplumber,
}


def main() -> None:
    parser = argparse.ArgumentParser(description="How well each PDF library reads the bash and gnuplot manuals.")
    parser.add_argument("libs", nargs="*", metavar="LIB", help=f"libraries to compare: {', '.join(READERS)} (default: all)")
    libs = parser.parse_args().libs
    if unknown := [lib for lib in libs if lib not in READERS]:
        parser.error(f"unknown library {', '.join(unknown)}; choose from {', '.join(READERS)}")
    refs = {doc: words(reference(doc)) for doc in PDFS}
    for name in libs or list(READERS):
        for doc, path in PDFS.items():
            try:
                text = "\n".join(READERS[name](path))
            except ImportError as e:
                print(json.dumps({"lib": name, "skipped": str(e)}))
                break
            run_on = sum(1 for w in re.findall(r"[A-Za-z]+", text) if len(w) > 25)
            print(json.dumps({"lib": name, "doc": doc, **scores(words(text), refs[doc]), "words>25": run_on}))


if __name__ == "__main__":
    main()
