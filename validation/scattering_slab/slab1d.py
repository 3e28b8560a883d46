"""Reference solvers for a plane-parallel, gray, absorbing-emitting-scattering slab (azimuthally
symmetric problems), written for the dgrte validation. Optical depth tau = beta x (beta = kappa +
sigma_s), single-scattering albedo omega = sigma_s / beta, slab 0 <= tau <= tau_L.

1. `DOSlab`: discrete ordinates in mu with a double-Gauss set (N nodes per half range), solved
   EXACTLY in tau by the eigenvalue method (homogeneous solutions exp(lambda tau) of the 2N x 2N
   system, scaled so that no exponential exceeds 1; particular solutions for the isotropic emission
   and for a collimated beam). For omega = 1 the two vanishing eigenvalues are replaced by the
   exact constant and linear-in-tau solutions. Phase function: azimuthal average
   p0(mu, mu') = sum_l a_l P_l(mu) P_l(mu') (Legendre, a_0 = 1, HG: a_l = (2l+1) g^l, truncated at
   l <= 2N-1 where double-Gauss integrates it exactly), or the exact azimuthally averaged
   Henyey-Greenstein function (complete elliptic integral), normalised on the set.
   Boundaries: diffuse gray walls (emissivity, emissive power E = sigma T^4, or an incoming diffuse
   flux = a black wall with E = flux), a collimated beam F0 (W/m^2 normal to the beam) entering at
   tau = 0 with direction cosine mu0.

2. `integral_equation_slab`: isotropic scattering only, black walls: the source function
   S = (1 - omega) I_b + omega G / (4 pi) from the integral equation with the E1 kernel, piecewise
   linear S on a uniform grid with exact (product) integration of E_n against the hat functions.
   O(h^2), an independent check of the DO solver.

3. `chandrasekhar_H`: the H-function of isotropic scattering from its nonlinear integral equation,
   for the semi-infinite plane albedo A(mu0) = 1 - sqrt(1 - omega) H(mu0).

All G and q are in W/m^2 for the given E, F0, I_b (take them 1 for dimensionless results);
q is the net flux in +tau direction.
"""
import math

import numpy as np
from scipy.special import ellipe, eval_legendre, expn


# ---------------------------------------------------------------------------------------------
# Phase functions.

class Phase:
    """kind: 'isotropic' | 'hg' (g) | 'legendre' (coefficients a_0 = 1, a_1, ... of
    p(cos Theta) = sum a_l P_l(cos Theta), normalised (1/4pi) int p dOmega = 1) | 'linear' (a1)."""

    def __init__(self, kind="isotropic", g=0.0, coefficients=None, a1=0.0):
        self.kind, self.g = kind, float(g)
        if kind == "isotropic":
            self.coef = np.array([1.0])
        elif kind == "linear":
            self.coef = np.array([1.0, float(a1)])
        elif kind == "legendre":
            self.coef = np.asarray(coefficients, float)
            if abs(self.coef[0] - 1) > 1e-14:
                raise ValueError("Legendre phase function needs a_0 = 1")
        elif kind == "hg":
            if not abs(self.g) < 1:
                raise ValueError("HG needs |g| < 1")
            self.coef = None
        else:
            raise ValueError(f"unknown phase function {kind}")

    @property
    def label(self):
        if self.kind == "hg":
            return f"HG g={self.g:g}"
        if self.kind == "linear":
            return f"linear a1={self.coef[1]:g}"
        return self.kind

    def legendre_coefficients(self, L):
        """a_0 .. a_L."""
        if self.kind == "hg":
            return (2 * np.arange(L + 1) + 1) * self.g ** np.arange(L + 1)
        a = np.zeros(L + 1)
        m = min(L + 1, len(self.coef))
        a[:m] = self.coef[:m]
        return a

    def p0_legendre(self, mu, mup, L):
        """Azimuthally averaged phase function from the Legendre series truncated at L."""
        a = self.legendre_coefficients(L)
        mu, mup = np.asarray(mu, float), np.asarray(mup, float)
        out = np.zeros(np.broadcast(mu, mup).shape)
        for l in range(L + 1):
            if a[l] != 0:
                out += a[l] * eval_legendre(l, mu) * eval_legendre(l, mup)
        return out

    def p0_exact_hg(self, mu, mup):
        """(1/2pi) int_0^2pi p_HG(cos Theta) dphi, cos Theta = mu mu' + sqrt(1-mu^2) sqrt(1-mu'^2) cos phi:
        (1 - g^2) (2/pi) E(m) / ((a - b) sqrt(a + b)), a = 1 + g^2 - 2 g mu mu',
        b = 2 |g| sqrt(1-mu^2) sqrt(1-mu'^2), m = 2b / (a + b) (E: complete elliptic integral of the
        second kind, parameter m)."""
        g = self.g
        mu, mup = np.broadcast_arrays(np.asarray(mu, float), np.asarray(mup, float))
        a = 1 + g * g - 2 * g * mu * mup
        b = 2 * abs(g) * np.sqrt(np.clip(1 - mu * mu, 0, None) * np.clip(1 - mup * mup, 0, None))
        m = 2 * b / (a + b)
        return (1 - g * g) * (2 / math.pi) * ellipe(m) / ((a - b) * np.sqrt(a + b))

    def p_hg(self, cos_theta):
        g = self.g
        return (1 - g * g) / (1 + g * g - 2 * g * cos_theta) ** 1.5


def double_gauss(N):
    """N Gauss-Legendre nodes and weights on (0, 1) (weights sum to 1)."""
    x, w = np.polynomial.legendre.leggauss(N)
    return (x + 1) / 2, w / 2


def _sinkhorn_symmetric(P, w, target=2.0, iters=200):
    """Scale P_ij -> d_i P_ij d_j so that sum_j P_ij w_j = target for every i (keeps symmetry)."""
    d = np.ones(P.shape[0])
    for _ in range(iters):
        r = d * (P @ (w * d))
        if np.max(np.abs(r - target)) < 1e-15 * target:
            break
        d = d * np.sqrt(target / r)
    return P * np.outer(d, d)


# ---------------------------------------------------------------------------------------------
# Discrete ordinates, exact in tau.

class DOSlab:
    """Solve the slab; afterwards G(tau), q(tau), intensity(tau), dqdtau(tau) are available.

    bottom / top: dict(eps=emissivity, E=emissive power sigma T^4 of the wall) at tau = 0 / tau_L
    (a black wall with E = F is an opening with incoming diffuse flux F). Ib: blackbody intensity
    of the medium. F0, mu0: collimated beam entering at tau = 0 (flux normal to the beam).
    phase_mode: 'legendre' (truncated at L, default 2N - 1) or 'exact' (exact azimuthal HG)."""

    def __init__(self, tau_L, omega, phase, N=64, phase_mode="legendre", L=None, bottom=None, top=None,
                 Ib=0.0, F0=0.0, mu0=1.0):
        self.tau_L, self.omega, self.phase, self.N = float(tau_L), float(omega), phase, N
        self.bottom = {"eps": 1.0, "E": 0.0, **(bottom or {})}
        self.top = {"eps": 1.0, "E": 0.0, **(top or {})}
        self.Ib, self.F0, self.mu0 = float(Ib), float(F0), float(mu0)
        m, a = double_gauss(N)
        self.mu = np.concatenate([m, -m])
        self.w = np.concatenate([a, a])
        mu, w = self.mu, self.w
        if phase_mode == "exact" and phase.kind == "hg":
            P = phase.p0_exact_hg(mu[:, None], mu[None, :])
            P = _sinkhorn_symmetric(P, w)
            pc = phase.p0_exact_hg(mu, self.mu0) if self.F0 else np.zeros_like(mu)
        else:
            Lt = 2 * N - 1 if L is None else L
            P = phase.p0_legendre(mu[:, None], mu[None, :], Lt)
            if Lt > 2 * N - 1:
                P = _sinkhorn_symmetric(P, w)
            pc = phase.p0_legendre(mu, self.mu0, Lt) if self.F0 else np.zeros_like(mu)
        if self.F0:
            pc = pc / (0.5 * np.sum(w * pc))  # the scattered beam power is exactly omega F0
        self.P = P
        n2 = 2 * N
        K = -np.eye(n2) + 0.5 * omega * P * w[None, :]          # I' = M^-1 (K I + S)
        A = K / mu[:, None]
        lam, V = np.linalg.eig(A)
        if np.max(np.abs(lam.imag)) > 1e-8 * np.max(np.abs(lam)) or np.max(np.abs(V.imag)) > 1e-8:
            raise RuntimeError("complex eigenvalues in the DO slab system")
        lam, V = lam.real, V.real
        self.conservative = abs(1 - omega) < 1e-13
        if self.conservative:
            keep = np.argsort(np.abs(lam))[2:]
            lam, V = lam[keep], V[:, keep]
            # exact solutions of the conservative system: I = 1 and I = (tau - tau_L/2) 1 + b,
            # K b = M 1 (solvable: w is a left null vector of K and sum w mu = 0)
            b = np.linalg.lstsq(K, mu, rcond=None)[0]
            self.b_lin = b - np.dot(w, b) / np.sum(w)  # remove the null-space component (any works)
        self.lam, self.V = lam, V
        self.tref = np.where(lam < 0, 0.0, self.tau_L)
        # particular solution: I_p = Ib 1 + Z exp(-tau / mu0)
        if self.F0:
            sc = omega * self.F0 / (4 * math.pi) * pc
            self.Z = np.linalg.solve(-K - np.diag(mu) / self.mu0, sc)
        else:
            self.Z = np.zeros(n2)
        self._solve_bc()

    # basis functions at tau (n_tau, 2N, n_basis) times coefficients
    def _homog(self, tau):
        tau = np.atleast_1d(np.asarray(tau, float))
        E = np.exp(self.lam[None, :] * (tau[:, None] - self.tref[None, :]))  # (nt, nb)
        cols = [E[:, None, :] * self.V[None, :, :]]
        dcols = [(E * self.lam[None, :])[:, None, :] * self.V[None, :, :]]
        if self.conservative:
            one = np.ones(2 * self.N)
            c1 = np.broadcast_to(one, (len(tau), 2 * self.N))
            c2 = (tau[:, None] - self.tau_L / 2) * one[None, :] + self.b_lin[None, :]
            cols += [c1[:, :, None], c2[:, :, None]]
            dcols += [np.zeros((len(tau), 2 * self.N, 1)), np.broadcast_to(one, (len(tau), 2 * self.N))[:, :, None]]
        return np.concatenate(cols, axis=2), np.concatenate(dcols, axis=2)

    def _particular(self, tau):
        tau = np.atleast_1d(np.asarray(tau, float))
        e = np.exp(-tau / self.mu0)
        Ip = self.Ib * np.ones((len(tau), 2 * self.N)) + e[:, None] * self.Z[None, :]
        dIp = -(e / self.mu0)[:, None] * self.Z[None, :]
        return Ip, dIp

    def _solve_bc(self):
        N, mu, w = self.N, self.mu, self.w
        B0, _ = self._homog([0.0])
        B1, _ = self._homog([self.tau_L])
        P0, _ = self._particular([0.0])
        P1, _ = self._particular([self.tau_L])
        B0, B1, P0, P1 = B0[0], B1[0], P0[0], P1[0]
        up, dn = slice(0, N), slice(N, 2 * N)
        # reflection: (1 - eps)/pi * H, H = 2 pi sum a mu I_incoming
        r0 = 2 * (1 - self.bottom["eps"]) * (w[dn] * np.abs(mu[dn]))
        r1 = 2 * (1 - self.top["eps"]) * (w[up] * mu[up])
        rows0 = B0[up, :] - np.outer(np.ones(N), r0 @ B0[dn, :])
        rhs0 = self.bottom["eps"] * self.bottom["E"] / math.pi - (P0[up] - r0 @ P0[dn])
        rows1 = B1[dn, :] - np.outer(np.ones(N), r1 @ B1[up, :])
        beam = (1 - self.top["eps"]) / math.pi * self.mu0 * self.F0 * math.exp(-self.tau_L / self.mu0)
        rhs1 = self.top["eps"] * self.top["E"] / math.pi + beam - (P1[dn] - r1 @ P1[up])
        M = np.vstack([rows0, rows1])
        self.c = np.linalg.solve(M, np.concatenate([rhs0, rhs1]))

    def intensity(self, tau):
        """Azimuthally averaged diffuse intensity at the 2N ordinates (mu = self.mu), (n_tau, 2N)."""
        B, _ = self._homog(tau)
        Ip, _ = self._particular(tau)
        return B @ self.c + Ip

    def G(self, tau):
        tau = np.atleast_1d(np.asarray(tau, float))
        return 2 * math.pi * self.intensity(tau) @ self.w + self.F0 * np.exp(-tau / self.mu0)

    def q(self, tau):
        tau = np.atleast_1d(np.asarray(tau, float))
        return 2 * math.pi * self.intensity(tau) @ (self.w * self.mu) + self.mu0 * self.F0 * np.exp(-tau / self.mu0)

    def dqdtau(self, tau):
        """d q / d tau from the derivative of the solution (not from the balance)."""
        tau = np.atleast_1d(np.asarray(tau, float))
        _, dB = self._homog(tau)
        _, dIp = self._particular(tau)
        dI = dB @ self.c + dIp
        return 2 * math.pi * dI @ (self.w * self.mu) - self.F0 * np.exp(-tau / self.mu0)

    def balance(self, tau):
        """(1 - omega)(4 pi I_b - G): what dq/dtau must equal."""
        return (1 - self.omega) * (4 * math.pi * self.Ib - self.G(tau))


# ---------------------------------------------------------------------------------------------
# Integral equation (isotropic scattering, black walls).

def _product_weights(nodes, targets, n):
    """W (n_targets, n_nodes) with sum_j W_ij S_j = int E_n(|tau_i - t|) S(t) dt for piecewise-linear
    S on `nodes`, split into (left part t < tau_i, right part t > tau_i)."""
    t = np.asarray(nodes)
    h = np.diff(t)
    tau = np.asarray(targets)[:, None]
    t0, t1 = t[None, :-1], t[None, 1:]
    Wl = np.zeros((len(targets), len(t)))
    Wr = np.zeros((len(targets), len(t)))

    def moments(ua, ub):
        I0 = expn(n + 1, ua) - expn(n + 1, ub)
        I1 = (ua * expn(n + 1, ua) + expn(n + 2, ua)) - (ub * expn(n + 1, ub) + expn(n + 2, ub))
        return I0, I1
    left = tau >= t1 - 1e-14 * (1 + np.abs(t1))   # interval entirely at t <= tau
    ua, ub = np.clip(tau - t1, 0, None), np.clip(tau - t0, 0, None)
    I0, I1 = moments(ua, ub)
    wj = np.where(left, (I1 - ua * I0) / h, 0.0)   # weight of S_j (node t0)
    wj1 = np.where(left, (ub * I0 - I1) / h, 0.0)  # weight of S_{j+1} (node t1)
    Wl[:, :-1] += wj
    Wl[:, 1:] += wj1
    right = ~left
    ua, ub = np.clip(t0 - tau, 0, None), np.clip(t1 - tau, 0, None)
    I0, I1 = moments(ua, ub)
    wj = np.where(right, (ub * I0 - I1) / h, 0.0)
    wj1 = np.where(right, (I1 - ua * I0) / h, 0.0)
    Wr[:, :-1] += wj
    Wr[:, 1:] += wj1
    return Wl, Wr


def integral_equation_slab(tau_L, omega, n, Iw0=0.0, Iw1=0.0, Ib=0.0, F0=0.0, mu0=1.0):
    """Isotropic scattering, black walls with outgoing intensities Iw0 (tau = 0), Iw1 (tau_L),
    medium blackbody intensity Ib, collimated beam F0 at mu0 into tau = 0. Returns (tau, G, q) on a
    uniform grid of n intervals."""
    t = np.linspace(0.0, tau_L, n + 1)
    Wl, Wr = _product_weights(t, t, 1)
    K = Wl + Wr
    beam = F0 * np.exp(-t / mu0)
    G0 = 2 * math.pi * (Iw0 * expn(2, t) + Iw1 * expn(2, tau_L - t)) + beam
    S = np.linalg.solve(np.eye(n + 1) - 0.5 * omega * K, (1 - omega) * Ib + omega / (4 * math.pi) * G0)
    G = G0 + 2 * math.pi * K @ S
    Wl2, Wr2 = _product_weights(t, t, 2)
    q = 2 * math.pi * (Iw0 * expn(3, t) - Iw1 * expn(3, tau_L - t)) + mu0 * beam + 2 * math.pi * (Wl2 - Wr2) @ S
    return t, G, q


# ---------------------------------------------------------------------------------------------
# Chandrasekhar's H-function (isotropic scattering).

def chandrasekhar_H(omega, n=400, tol=1e-15, max_iter=200000):
    """H on n Gauss nodes of (0, 1) from 1/H(mu) = sqrt(1 - omega) + (omega/2) int_0^1 mu' H(mu') / (mu + mu') dmu'.
    Returns a function H(mu) (Nystrom interpolation) and the nodes/weights/values."""
    x, a = double_gauss(n)
    s = math.sqrt(max(1 - omega, 0.0))
    H = np.ones(n)
    Kmat = a[None, :] * x[None, :] / (x[:, None] + x[None, :])
    for _ in range(max_iter):
        Hn = 1.0 / (s + 0.5 * omega * Kmat @ H)
        if omega >= 1:  # the conservative iteration converges slowly; accelerate by averaging
            Hn = 0.5 * (Hn + H)
        if np.max(np.abs(Hn - H)) < tol:
            H = Hn
            break
        H = Hn

    def Hf(mu):
        mu = np.atleast_1d(np.asarray(mu, float))
        return 1.0 / (s + 0.5 * omega * (a[None, :] * x[None, :] / (mu[:, None] + x[None, :])) @ H)
    return Hf, x, a, H
