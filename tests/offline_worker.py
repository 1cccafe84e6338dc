"""Run by tests/test_offline.py in a fresh interpreter: guard the sockets before anything is imported,
do the work named on the command line, then print every non-local network attempt as one JSON list.

A guard inside the pytest process would miss what happens at import time (all imported long before)
and what a library tries and silently gives up on (telemetry); this one records each attempt.

    python tests/offline_worker.py engine DOCS_DIR   # ingest + search + ask through rag/ and the CLI
    python tests/offline_worker.py streamlit         # Streamlit's start-up banner with our config
"""

from __future__ import annotations

import json
import socket
import sys

ATTEMPTS: list[str] = []
_LOCAL = ("127.0.0.1", "localhost", "::1", "0.0.0.0")  # noqa: S104 - the wildcard is no remote host


def _is_local(host: object) -> bool:
    return host is None or (isinstance(host, str) and (host in _LOCAL or host.startswith("/")))


_connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def _guard(real):  # noqa: ANN001, ANN202
    def guarded(sock: socket.socket, address):  # noqa: ANN001, ANN202
        host = address[0] if isinstance(address, tuple) else address
        if sock.family != socket.AF_UNIX and not _is_local(host):
            ATTEMPTS.append(f"connect {address}")
            raise OSError(f"offline test: no connection to {address}")
        return real(sock, address)

    return guarded


def _getaddrinfo_guarded(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
    if not _is_local(host):
        ATTEMPTS.append(f"resolve {host}")
        raise socket.gaierror(socket.EAI_NONAME, f"offline test: no lookup of {host}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guard(_connect)
socket.socket.connect_ex = _guard(_connect_ex)
socket.getaddrinfo = _getaddrinfo_guarded


def engine(docs_dir: str) -> None:
    """The whole flow a first-time user runs: rag functions, then the same through the CLI."""
    from pathlib import Path

    from click.testing import CliRunner

    from rag.ask.answerer import answer_question
    from rag.cli import main
    from rag.components import build_components
    from rag.settings.config import Settings
    from rag.ingest.pipeline import ingest_files
    from rag.retrieval.retrieve import retrieve
    from rag.catalog.sample import sample_files

    components = build_components(Settings.from_env())
    assert not ingest_files(components, sample_files()).errors
    assert retrieve(components, "How long does a refund take?").final
    assert answer_question(components, "How long does a refund take?").text
    components.close()
    runner = CliRunner()
    for args in (
        ["ingest", "--collection", "cli", str(Path(docs_dir))],
        ["search", "--collection", "cli", "ferry ticket price", "--json"],
        ["ask", "--collection", "cli", "How much is a ferry ticket?", "--json"],
        ["collections", "--json"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (args, result.output)


def streamlit_banner() -> None:
    """What `streamlit run` prints at start, with the project's .streamlit/config.toml (run from the repo root)."""
    from streamlit import config
    from streamlit.web import bootstrap

    config.get_config_options(force_reparse=True)
    assert config.get_option("server.headless")
    bootstrap._print_url(is_running_hello=False)


if __name__ == "__main__":
    if sys.argv[1] == "engine":
        engine(sys.argv[2])
    else:
        streamlit_banner()
    print(json.dumps(ATTEMPTS))
