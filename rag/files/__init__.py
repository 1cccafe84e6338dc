"""The files the product keeps under the data dir: written whole or not at all, one writer at a time, and read
back strictly (docs/reliability.md, "Stored files")."""
