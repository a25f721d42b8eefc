"""Engines' own panels, one module per engine that has any, named after the engine (``active.py``:
the Active Learning panel, its lists and the property groups it keeps on the scene).  Loaded for
the engines registered now (``operators.engines.extras``)."""
