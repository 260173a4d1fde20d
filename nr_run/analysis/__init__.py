"""Whole-fabric analyses of the compiled intent: properties no single device's config shows.

Each analysis is a function `analyse(fabric, options) -> AnalysisResult` in its own module, listed in
`registry.ANALYSES`. They are pure functions of the intent (and, when given, of collected state), so they run
from Python as well as from `nr-run analyze`.
"""
