"""Playing any engine: what the player asks (``session.Command``) and the ``Session`` that turns an
engine's decisions into a continuous pose stream (``synth``); the tasks engines plan for (``tasks``).
"""
