"""The supervision app: the only package that imports Textual.

Nothing is imported eagerly here, so `import ioh_tui.tui.launch` costs only what it needs.
"""
