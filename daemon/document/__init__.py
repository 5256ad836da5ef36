"""Document model: the parsed form of a document (blocks, inline runs, tables) that every writer renders."""
