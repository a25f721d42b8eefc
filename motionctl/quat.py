"""Vectorised unit-quaternion maths on arrays shaped [..., 4] in (w, x, y, z) order.

Every function broadcasts over leading axes, so a whole clip ([F, J, 4]) is one call.
Conventions match Blender's: a quaternion rotates column vectors, ``qmul(a, b)`` applies
``b`` first, and an Euler order "ZYX" means the matrix Rz @ Ry @ Rx (BVH channel order).
"""

from __future__ import annotations

import numpy as np

from . import fmath

_AXIS = {"X": 0, "Y": 1, "Z": 2}


def identity(shape=()) -> np.ndarray:
    """Identity quaternions of ``shape`` + [4]."""
    q = np.zeros(tuple(shape) + (4,))
    q[..., 0] = 1.0
    return q


def normalize(q: np.ndarray) -> np.ndarray:
    """Quaternions [..., 4] scaled to unit length."""
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return q / np.where(n > 0, n, 1.0)


def conj(q: np.ndarray) -> np.ndarray:
    """Conjugates (inverses of unit quaternions) [..., 4]."""
    return q * np.array([1.0, -1.0, -1.0, -1.0])


SMALL = 64  # quaternions: at most this many are multiplied from one outer product (fewer numpy calls)
# out[k] = Σ_t sign[t, k] a[i] b[j] with 4 i + j = _TERMS[t, k], summed in t order: the same terms in
# the same order as the component formulas below, so both ways give the same bits (a BLAS table
# product did not: its kernels round by CPU).
_TERMS = np.array([[0, 1, 2, 3], [5, 4, 7, 6], [10, 11, 8, 9], [15, 14, 13, 12]])
_SIGNS = np.array([[1, 1, 1, 1], [-1, 1, -1, 1], [-1, 1, 1, -1], [-1, -1, 1, 1]], dtype=float)


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a * b (apply b, then a)."""
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if np.prod(shape[:-1], dtype=np.int64) <= SMALL:  # a live decision's few joints: one outer product
        dtype = np.result_type(a, b, np.float32)
        outer = (a[..., :, None] * b[..., None, :]).reshape(shape[:-1] + (16,))
        t = outer[..., _TERMS] * _SIGNS.astype(dtype, copy=False)  # [..., term, k]
        return (((t[..., 0, :] + t[..., 1, :]) + t[..., 2, :]) + t[..., 3, :]).astype(dtype, copy=False)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b, np.float32))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v [..., 3] by unit quaternions q [..., 4]."""
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross of [..., 3] vectors, the same arithmetic without its axis shuffling (which costs
    more than the products on the small arrays of a decision)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations by ``angle`` [...] radians about ``axis`` [..., 3]."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    half = 0.5 * angle[..., None]
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    axis = axis / np.where(n > 0, n, 1.0)
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def about_axis(axis: int, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` radians about coordinate axis 0, 1 or 2."""
    angle = np.asarray(angle, dtype=float)
    q = np.zeros(angle.shape + (4,))
    q[..., 0] = np.cos(0.5 * angle)
    q[..., 1 + axis] = np.sin(0.5 * angle)
    return q


def from_euler(angles: np.ndarray, order: str) -> np.ndarray:
    """Quaternion of R_order[0](a0) @ R_order[1](a1) @ ... ; angles [..., len(order)] radians.

    ``order`` lists axes as letters ("ZYX", "XZY", "ZX", ...), the BVH channel order.
    """
    angles = np.asarray(angles, dtype=float)
    q = identity(angles.shape[:-1])
    for i, letter in enumerate(order):
        q = mul(q, about_axis(_AXIS[letter], angles[..., i]))
    return q


def to_matrix(q: np.ndarray, columns: int = 3) -> np.ndarray:
    """Rotation matrices [..., 3, 3] of quaternions [..., 4]; with ``columns`` < 3 only the first
    columns [..., 3, columns] (the rotated unit x, y vectors)."""
    q = np.asarray(q)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, columns), dtype=np.result_type(q, np.float32))
    m[..., 0, 0], m[..., 1, 0], m[..., 2, 0] = 1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)
    if columns > 1:
        m[..., 0, 1], m[..., 1, 1], m[..., 2, 1] = 2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)
    if columns > 2:
        m[..., 0, 2], m[..., 1, 2], m[..., 2, 2] = 2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)
    return m


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Quaternion of rotation matrices [..., 3, 3] (Shepperd's method, w >= 0)."""
    m = np.asarray(m, dtype=float)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    trace = m00 + m11 + m22
    cand = np.stack(
        (
            np.stack((1 + trace, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]), -1),
            np.stack((m[..., 2, 1] - m[..., 1, 2], 1 + m00 - m11 - m22, m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]), -1),
            np.stack((m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0], 1 - m00 + m11 - m22, m[..., 1, 2] + m[..., 2, 1]), -1),
            np.stack((m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1], 1 - m00 - m11 + m22), -1),
        ),
        axis=-2,
    )
    pick = np.argmax(np.stack((trace, m00, m11, m22), -1), axis=-1)
    q = np.take_along_axis(cand, pick[..., None, None], axis=-2)[..., 0, :]
    q = normalize(q)
    return q * np.where(q[..., :1] < 0, -1.0, 1.0)


def to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """Angles [..., 3] (radians, in ``order``) with from_euler(angles, order) == q.

    The middle angle lies in [-pi/2, pi/2]; at gimbal lock the last angle is set to 0.
    """
    i, j, k = (_AXIS[c] for c in order)
    if len({i, j, k}) != 3:
        raise ValueError(f"Euler order {order!r} must name three different axes")
    s = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0
    m = to_matrix(normalize(q))
    sb = np.clip(s * m[..., i, k], -1.0, 1.0)
    b = fmath.arcsin(sb)
    a = fmath.arctan2(-s * m[..., j, k], m[..., k, k])
    c = fmath.arctan2(-s * m[..., i, j], m[..., i, i])
    lock = np.abs(sb) > 1.0 - 1e-12
    if np.any(lock):
        # R_i(a) R_j(+-90) R_k(0): the remaining freedom is one angle about i.
        a_lock = fmath.arctan2(s * m[..., k, j], m[..., j, j])
        a = np.where(lock, a_lock, a)
        c = np.where(lock, 0.0, c)
    return np.stack((a, b, c), axis=-1)


def make_continuous(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` so consecutive quaternions lie in the same hemisphere."""
    q = np.moveaxis(np.asarray(q, dtype=float), axis, 0)
    if q.shape[0] < 2:
        return np.moveaxis(q.copy(), 0, axis)
    dots = np.sum(q[1:] * q[:-1], axis=-1)
    flips = np.concatenate((np.ones((1,) + dots.shape[1:]), np.where(dots < 0, -1.0, 1.0)), axis=0)
    sign = np.cumprod(flips, axis=0)
    return np.moveaxis(q * sign[..., None], 0, axis)


def slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical interpolation from a to b; t broadcasts against a[..., 0]."""
    t = np.asarray(t, dtype=float)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    dot = np.abs(dot)
    theta = fmath.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    small = sin_theta < 1e-6
    safe = np.where(small, 1.0, sin_theta)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe)
    return normalize(wa * a + wb * b)


def mean(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """The mean rotation of quaternions ``q`` along ``axis``: their sum with each turned into the
    first one's hemisphere, normalised (a step of the chordal mean's power iteration).  Follows
    every fixed rotation applied on either side (mean(A q B) = A mean(q) B), so a feature taken
    about it does not depend on the frame a joint rests in."""
    return mean_of([np.moveaxis(np.asarray(q, dtype=float), axis, 0)])


def mean_of(parts) -> np.ndarray:
    """``mean`` along axis 0 of the concatenation of arrays ``parts`` [N_i, ..., 4], summed part by
    part (a library's frames need not be copied into one array)."""
    first = parts[0][:1]
    total = sum(np.sum(p * np.where(np.sum(p * first, axis=-1, keepdims=True) < 0, -1.0, 1.0), axis=0) for p in parts)
    return normalize(total)


def log(q: np.ndarray) -> np.ndarray:
    """Rotation vectors [..., 3] (axis * angle, angle in [0, pi]) of unit quaternions."""
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * fmath.arctan2(s, q[..., :1])
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0)
    return v * scale


def exp(r: np.ndarray) -> np.ndarray:
    """Unit quaternions from rotation vectors [..., 3]."""
    angle = np.linalg.norm(r, axis=-1, keepdims=True)
    half = 0.5 * angle
    scale = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    return np.concatenate((np.cos(half), r * scale), axis=-1)


def angle(q: np.ndarray) -> np.ndarray:
    """Rotation angle in [0, pi] of unit quaternions."""
    return 2.0 * fmath.arccos(np.clip(np.abs(q[..., 0]), 0.0, 1.0))


def between(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation taking direction u to direction v ([..., 3] each)."""
    u = u / np.maximum(np.linalg.norm(u, axis=-1, keepdims=True), 1e-12)
    v = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)
    d = np.sum(u * v, axis=-1, keepdims=True)
    c = np.cross(u, v)
    q = np.concatenate((1.0 + d, c), axis=-1)
    # Opposite directions: any axis perpendicular to u.
    opposite = d[..., 0] < -1.0 + 1e-9
    if np.any(opposite):
        helper = np.where(np.abs(u[..., :1]) < 0.9, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
        perp = np.cross(u, helper)
        perp /= np.linalg.norm(perp, axis=-1, keepdims=True)
        q = np.where(opposite[..., None], np.concatenate((np.zeros_like(d), perp), axis=-1), q)
    return normalize(q)


def yaw_about_z(q: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """Heading angle (radians, about +Z from +Y, positive = turn left) of ``forward`` rotated by q."""
    f = rotate(q, np.broadcast_to(forward, q.shape[:-1] + (3,)))
    return fmath.arctan2(-f[..., 0], f[..., 1])
