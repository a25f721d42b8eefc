"""motionctl: the engine behind the Blender extension (numpy, scipy, scikit-learn; never bpy).

The motion library (``bvh``, ``asfamc``, ``skeleton``, ``motion``, ``library``) is the ground
floor; the engines stand on it.
"""

__version__ = "0.1.0"
