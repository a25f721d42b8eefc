"""Reading and writing capture: BVH (``bvh``) and ASF/AMC (``asfamc``) readers, units, up axis and
floor decided from the body (``orient``), extra roots folded (``roots``), whole folders grouped by
skeleton (``library``), and the demo's generated clips (``demo_data``).
"""
