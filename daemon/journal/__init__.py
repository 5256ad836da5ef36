"""Journal: the durable SQLite record of every document, its state and its outputs."""
