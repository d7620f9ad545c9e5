"""Seed 000's testbed: questions as data, generator, label functions, direct readout,
importer, the SQL audit and fidelity statistics.

Modules are imported explicitly (``from core.testbed.generate import generate``); this package
file re-exports nothing, so importing one module never pulls in the others.
"""

__all__: list[str] = []
