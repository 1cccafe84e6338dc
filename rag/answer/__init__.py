"""Answer primitives: the prompt, citation parsing and checks, the relevance gate, the offline extractive
answerer, the Anthropic generator, and `build.build_answer`, which turns a generation into a checked Answer.
The front door that retrieves and answers a question is rag.ask."""
