"""Local indexing: loaders, chunking, embeddings, the dense and lexical stores."""
