"""The LMStyle benchmark end to end: Fig. 3 styled-response generation, the paper's metrics, Tables 2/4/5.

Importing this package imports no model library.
"""
