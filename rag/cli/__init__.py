"""`ragscope` command line: thin parsing and printing around the same functions the pages call.

`main` (rag.cli.main) is the group; each *_cmd module registers its commands on it when imported here.
"""

from rag.cli import ask_cmd, collections_cmd, doctor_cmd, eval_cmd, gen_cmd, ingest_cmds, search_cmd, track_cmd, tune_cmd  # noqa: F401,E501 (registers)
from rag.cli.main import main

__all__ = ["main"]
