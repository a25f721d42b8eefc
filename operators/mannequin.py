"""A low-poly mannequin skinned to a motionctl armature, so motion is visible and renderable
without a character mesh: one tapered octagonal limb per bone, a ball for the head."""

from __future__ import annotations

import bpy
import numpy as np

from .common import report_error, target_armature
from .compat import enable_material_nodes

SIDES = 8


def limb_mesh(heads: np.ndarray, tails: np.ndarray, radii: np.ndarray):
    """Vertices [B * 2 * SIDES + 2B, 3], quad/tri faces, and the bone of every vertex, for tapered
    octagonal prisms from each head to its tail (capped), all bones at once."""
    b = len(heads)
    axis = tails - heads
    length = np.linalg.norm(axis, axis=1, keepdims=True)
    d = axis / np.maximum(length, 1e-9)
    helper = np.where(np.abs(d[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.cross(d, u)
    ang = 2 * np.pi * np.arange(SIDES) / SIDES
    ring = np.cos(ang)[None, :, None] * u[:, None] + np.sin(ang)[None, :, None] * v[:, None]  # [B, S, 3]
    r_head = radii[:, None, None]
    r_tail = 0.7 * radii[:, None, None]
    verts = np.concatenate((heads[:, None] + r_head * ring, tails[:, None] + r_tail * ring,
                            heads[:, None], tails[:, None]), axis=1)  # [B, 2S + 2, 3]
    per = 2 * SIDES + 2
    base = (np.arange(b) * per)[:, None]
    k = np.arange(SIDES)
    k1 = (k + 1) % SIDES
    sides = np.stack((k, k1, k1 + SIDES, k + SIDES), axis=1)  # [S, 4]
    cap0 = np.stack((np.full(SIDES, 2 * SIDES), k1, k), axis=1)
    cap1 = np.stack((np.full(SIDES, 2 * SIDES + 1), k + SIDES, k1 + SIDES), axis=1)
    quads = (sides[None] + base[:, :, None]).reshape(-1, 4)
    tris = np.concatenate(((cap0[None] + base[:, :, None]).reshape(-1, 3), (cap1[None] + base[:, :, None]).reshape(-1, 3)))
    bone_of = np.repeat(np.arange(b), per)
    return verts.reshape(-1, 3), quads, tris, bone_of


def add_mannequin(context, ob):
    """Build the mannequin for armature ``ob`` (rest pose), parent and skin it; returns the object."""
    bones = list(ob.data.bones)
    heads = np.array([bn.head_local for bn in bones])
    tails = np.array([bn.tail_local for bn in bones])
    length = np.linalg.norm(tails - heads, axis=1)
    height = max(np.ptp(np.concatenate((heads, tails))[:, 2]), 1e-3)
    radii = np.clip(0.22 * length, 0.025 * height, 0.07 * height)
    keep = length > 0.02 * height
    for i, bn in enumerate(bones):
        if "head" in bn.name.lower() and not bn.children:
            radii[i] = 0.07 * height  # a ball-ish head
            keep[i] = True
    idx = np.flatnonzero(keep)
    verts, quads, tris, bone_of = limb_mesh(heads[idx], tails[idx], radii[idx])
    mesh = bpy.data.meshes.new(ob.name + "_mannequin")
    faces = [tuple(f) for f in quads.tolist()] + [tuple(f) for f in tris.tolist()]
    mesh.from_pydata(verts.tolist(), [], faces)
    mesh.update()
    body = bpy.data.objects.new(ob.name + "_mannequin", mesh)
    context.collection.objects.link(body)
    body.parent = ob
    for k, i in enumerate(idx):
        vg = body.vertex_groups.new(name=bones[i].name)
        vg.add(np.flatnonzero(bone_of == k).tolist(), 1.0, "REPLACE")
    mod = body.modifiers.new("Armature", "ARMATURE")
    mod.object = ob
    body.data.materials.append(solid_material("motionctl_mannequin", (0.8, 0.55, 0.35, 1.0)))
    return body


def solid_material(name: str, color) -> "bpy.types.Material":
    """A plain material with the same colour in the viewport and in renders."""
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat.diffuse_color = color
    enable_material_nodes(mat)
    bsdf = mat.node_tree.nodes.get("Principled BSDF") if mat.node_tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = color
        bsdf.inputs["Roughness"].default_value = 0.6
    return mat


class MOTIONCTL_OT_add_mannequin(bpy.types.Operator):
    """Add a simple low-poly body skinned to the active armature (or the clip group's)"""

    bl_idname = "motionctl.add_mannequin"
    bl_label = "Add Mannequin"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        try:
            ob = context.active_object  # any armature: a retargeted character without a mesh too
            if ob is None or ob.type != "ARMATURE":
                ob = target_armature(context, what="Add Mannequin")
        except Exception as exc:  # noqa: BLE001
            return report_error(self, context, exc, "Add Mannequin")
        body = add_mannequin(context, ob)
        self.report({"INFO"}, f"added {body.name} ({len(body.data.vertices)} vertices)")
        return {"FINISHED"}


classes = (MOTIONCTL_OT_add_mannequin,)
