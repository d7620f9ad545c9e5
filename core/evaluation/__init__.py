"""Evaluation of sources and resolvers: metrics, robustness grids, the walkthrough selection.

Modules are imported explicitly (``from core.evaluation.walkthrough import ...``); this
package file re-exports nothing, so importing one module never pulls in the others.
"""

__all__: list[str] = []
