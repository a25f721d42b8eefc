import itertools

import numpy as np
import pytest

from motionctl import quat

ORDERS = ["".join(p) for p in itertools.permutations("XYZ")]


def _mat(axis, a):
    c, s = np.cos(a), np.sin(a)
    return {
        "X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
        "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
        "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]),
    }[axis]


@pytest.mark.parametrize("order", ORDERS)
def test_from_euler_matches_matrix_product_in_channel_order(order):
    rng = np.random.default_rng(1)
    ang = rng.uniform(-np.pi, np.pi, 3)
    expected = _mat(order[0], ang[0]) @ _mat(order[1], ang[1]) @ _mat(order[2], ang[2])
    assert np.allclose(quat.to_matrix(quat.from_euler(ang, order)), expected, atol=1e-12)


@pytest.mark.parametrize("order", ORDERS)
def test_to_euler_inverts_from_euler_including_gimbal_lock(order):
    rng = np.random.default_rng(2)
    ang = rng.uniform(-np.pi, np.pi, (500, 3))
    ang[:10, 1] = np.pi / 2  # gimbal lock
    ang[10:20, 1] = -np.pi / 2
    q = quat.from_euler(ang, order)
    back = quat.from_euler(quat.to_euler(q, order), order)
    assert np.allclose(np.abs(np.sum(q * back, axis=-1)), 1.0, atol=1e-9)
    # margin: 1e-12 above pi/2 (gimbal-lock rows give pi/2 itself)
    assert np.all(np.abs(quat.to_euler(q, order)[:, 1]) <= np.pi / 2 + 1e-12)


def test_matrix_round_trip_and_rotation_of_vectors():
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.standard_normal((1000, 4)))
    m = quat.to_matrix(q)
    back = quat.from_matrix(m)
    assert np.allclose(np.abs(np.sum(q * back, -1)), 1.0, atol=1e-10)
    v = rng.standard_normal((1000, 3))
    assert np.allclose(quat.rotate(q, v), np.einsum("nij,nj->ni", m, v), atol=1e-12)


def test_multiplication_composes_rotations_right_first():
    a = quat.about_axis(2, np.pi / 2)
    b = quat.about_axis(0, np.pi / 2)
    v = np.array([0.0, 1.0, 0.0])
    # b first: Y -> Z; then a about Z leaves Z.
    assert np.allclose(quat.rotate(quat.mul(a, b), v), [0, 0, 1], atol=1e-12)


def test_slerp_endpoints_midpoint_and_shortest_path():
    a = quat.about_axis(2, 0.2)
    b = -quat.about_axis(2, 1.0)  # same rotation, other sign
    assert np.allclose(quat.slerp(a, b, 0.0), a)
    assert np.allclose(np.abs(np.sum(quat.slerp(a, b, 1.0) * b)), 1.0)
    mid = quat.slerp(a, b, 0.5)
    assert np.isclose(quat.angle(quat.mul(quat.conj(quat.about_axis(2, 0.6)), mid)), 0.0, atol=1e-9)


def test_make_continuous_removes_sign_flips_only():
    t = np.linspace(0, 6, 200)
    q = quat.about_axis(1, t)
    flipped = q * np.where(np.arange(200) % 3 == 0, -1.0, 1.0)[:, None]
    cont = quat.make_continuous(flipped)
    assert np.all(np.sum(cont[1:] * cont[:-1], -1) > 0)
    assert np.allclose(np.abs(np.sum(cont * q, -1)), 1.0)


def test_log_exp_and_between():
    rng = np.random.default_rng(4)
    r = rng.uniform(-1.5, 1.5, (100, 3))  # |r| < pi: log returns angles in [0, pi]
    assert np.allclose(quat.log(quat.exp(r)), r, atol=1e-10)
    u, v = rng.standard_normal((2, 100, 3))
    q = quat.between(u, v)
    got = quat.rotate(q, u / np.linalg.norm(u, axis=1, keepdims=True))
    assert np.allclose(got, v / np.linalg.norm(v, axis=1, keepdims=True), atol=1e-10)
    opposite = quat.between(np.array([1.0, 0, 0]), np.array([-1.0, 0, 0]))
    assert np.allclose(quat.rotate(opposite, np.array([1.0, 0, 0])), [-1, 0, 0], atol=1e-12)
