"""Retrieval that thinks: HyDE (hyde), multi-hop (multihop), corrective retrieval (corrective) and a tool-calling
search loop (agent); `run.run_mode` is the one entry point, `result` holds the values they return."""
