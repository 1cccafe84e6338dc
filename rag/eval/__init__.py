"""Evaluation: question sets, retrieval and answer metrics, failure verdicts, stored runs, BEIR import."""
