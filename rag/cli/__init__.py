"""`ragscope` command line: thin parsing and printing around the same functions the pages call.

`main` (rag.cli.main) is the group; each *_cmd module registers its commands on it when imported here.
"""

# Importing each command module registers its commands (F401 is off for this file: pyproject.toml).
from rag.cli import (
    ask_cmd,
    chunk_cmd,
    collections_cmd,
    doctor_cmd,
    eval_cmd,
    gen_cmd,
    ingest_cmds,
    search_cmd,
    track_cmd,
    tune_cmd,
    vectors_cmd,
    versions_cmd,
)
from rag.cli.main import main

__all__ = ["main"]
