"""The PrefRAG LangGraph: state, context, nodes and graph builders."""
