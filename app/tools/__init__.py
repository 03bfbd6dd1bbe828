"""Tool nodes usable standalone: polyview reranking and Mix-of-Granularity selection."""
