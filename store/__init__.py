"""Storage behind memlane: the store protocol (protocol.py) and its engines (SQLite: sqlite.py)."""

from store.protocol import Filter, Neighbours, NewChunk, QueuedChunk, Store, chunk_filter

__all__ = ["Filter", "Neighbours", "NewChunk", "QueuedChunk", "Store", "chunk_filter"]
