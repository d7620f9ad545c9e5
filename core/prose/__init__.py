"""Natural-language memory: render the sources as prose, extract atoms back, measure, perturb.

Seed 000 §2.1 and §8.6 (stages 4–6): the deterministic renderer (:mod:`core.prose.render`),
a deterministic extractor that reads only the prose (:mod:`core.prose.extract`), the
extraction-faithfulness audit of §8.8 (:mod:`core.prose.faithfulness`) and extraction-noise
profiles after §12.5 (:mod:`core.prose.noise`). No submodule is imported here (see
``docs/architecture.md``).
"""

__all__: list[str] = []
