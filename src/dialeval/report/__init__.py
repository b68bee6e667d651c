"""``dialeval report``: one self-contained HTML page (or Markdown / LaTeX tables) from results folders.

Importing this package imports neither matplotlib nor pandas; drawing does, lazily.
"""
