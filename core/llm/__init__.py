"""The optional live LLM path: extraction (prose → μ̂) and answering through a chat endpoint.

Seed 000 §8.6 stages 5–6 and §9.6–9.7: the prompts (:mod:`core.llm.prompts`), the reply
shapes and their validation (:mod:`core.llm.schema`), an OpenAI-compatible chat client on the
standard library (:mod:`core.llm.client`), the on-disk call cache (:mod:`core.llm.cache`) and
the runner that writes the release's formats (:mod:`core.llm.run`). Nothing in the app needs
an endpoint: the pages read frozen outputs. No submodule is imported here (see
``docs/architecture.md``).
"""

__all__: list[str] = []
