"""Scenes the Blender tests share: the demo library imported with some clips ticked, and a room
for the Evaluate panel."""

import os


def use_demo_clips(bpy, folder: str, names, fps: float | None = None):
    """Import every demo clip in ``folder`` (at the scene rate ``fps`` if given) and tick ``names``;
    returns the scene's motionctl settings."""
    if fps is not None:
        bpy.context.scene.render.fps = int(fps)
    assert bpy.ops.motionctl.import_bvh(directory=folder + os.sep, files=[]) == {"FINISHED"}
    st = bpy.context.scene.motionctl
    for c in st.clips:
        c.use = c.name in set(names)
    return st


def room_collection(bpy, size=(8.0, 6.0), walls=()):
    """A "room" collection: a floor plane from the origin to ``size`` (metres) and a unit wall cube
    at each of ``walls`` (x, y), tagged for the Evaluate panel."""
    room = bpy.data.collections.new("room")
    bpy.context.scene.collection.children.link(room)
    bpy.ops.mesh.primitive_plane_add(size=1)
    floor = bpy.context.active_object
    floor.name, floor.scale, floor.location = "floor", (size[0], size[1], 1), (size[0] / 2, size[1] / 2, 0)
    obs = [floor]
    for x, y in walls:
        bpy.ops.mesh.primitive_cube_add(size=1, location=(x, y, 0.5))
        obs.append(bpy.context.active_object)
        obs[-1]["motionctl_kind"] = "wall"
    for ob in obs:
        for c in list(ob.users_collection):
            c.objects.unlink(ob)
        room.objects.link(ob)
    return room
