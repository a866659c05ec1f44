"""The paths of one product call through a channel (mixed into
:class:`~jaxdp.channels.ChannelNetwork`).

A call's rows go through the transforms up to the first random one per sender, then per directed
message (or per sender when broadcast), and the product combines them
(:meth:`ProductPaths._release`); a noise added last is added by linearity instead
(:meth:`ProductPaths._additive`: the rounded row per sender, the noise per edge), or, for a float
Gaussian, drawn by its receiver sums (:meth:`ProductPaths._aggregate`). Each path leaves what it
released in ``released`` and its standard draws in ``draws``; the proxy counts the call, and its
marker in the traced program (:func:`~jaxdp.channels._program.mark`) says what it released.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxdp._precision import tensordot
from jaxdp.channels._chain import Channel

GIVEN_SUM_STREAM = 0x67697665
"""``fold_in`` constant of the key of per-message Gaussian draws given their receiver sums."""
PRODUCTS = {"mix": "W", "apply_P": "P", "apply_L": "L", "apply_A": "A"}
"""Product method → the matrix it multiplies by."""


class ProductPaths:
    """The per-product paths of :class:`~jaxdp.channels.ChannelNetwork` (which provides
    ``_net``, ``_params``, ``_k``, ``_key``, ``calls``, ``memory``, ``released``, ``draws``,
    ``_nested`` and ``_values``)."""

    def _noisy_product(self, channel: Channel):
        """The path adding a last noise by linearity (``None`` unless one applies)."""
        if not channel.additive_tail or channel.broadcast:
            return None
        return self._aggregate if channel.tail.sums_exactly else self._additive

    def _combine(self, channel: Channel, product: str, message, flat, keep):
        """``M T(X)`` of one call (``M`` with its lost edges moved to the diagonal when ``keep``
        is given): the self term stays clean unless ``self_term="released"``."""
        diag, edge = self._net._parts(PRODUCTS[product])
        if keep is not None:  # a lost M_ij T(X_j) becomes M_ij X_i
            diag = diag + self._net.scatter_sum(edge * (1 - keep))
            edge = edge * keep
        noisy_product = self._noisy_product(channel)  # aggregate=True is one of these
        if noisy_product is not None:
            return noisy_product(channel, product, message, flat, diag, edge, keep)
        rows = self._release(channel, product, message, flat)
        if self._per_sender(channel):  # M R (+ diag (X − R): the self term stays clean)
            out = self._clean(PRODUCTS[product], rows, diag, edge, keep)
            if channel.self_term == "clean":
                out = out + diag[:, None] * (flat - rows)
            return out
        return diag[:, None] * flat + self._net.scatter_sum(edge[:, None] * rows)

    def _gathered(self, channel: Channel, message, flat, keep):
        """Each directed edge's received row of one ``gather`` call (the receiver's own row
        where the message is lost)."""
        rows = self._release(channel, "gather", message, flat)
        if self._per_sender(channel):
            rows = rows[self._net.senders]
        if keep is not None:
            rows = keep[:, None] * rows + (1 - keep[:, None]) * flat[self._net.receivers]
        return rows

    def _nested_product(self, channel: Channel, product: str, message, flat):
        """The product of rows released by this (inner, broadcast) channel on the outer network
        (:meth:`_check_nestable` first)."""
        self._check_nestable(channel)
        rows = self._release(channel, product, message, flat)
        out = getattr(self._net, product)(rows, message=message)
        if channel.self_term == "clean":
            diag, _ = self._net._parts(PRODUCTS[product])
            out = out + diag[:, None] * (flat - rows)
        return out

    def _check_nestable(self, channel: Channel) -> None:
        """Refuse a per-message or lossy channel inside another (its releases are not one row
        per sender).

        Raises:
          ValueError: naming the channel.
        """
        if channel.losses or not self._per_sender(channel):
            raise ValueError(f"channel {channel.name!r} sends per-message draws or loses messages, "
                             "so it cannot run inside another channel; only a broadcast channel "
                             "without losses nests")

    @staticmethod
    def _per_sender(channel: Channel) -> bool:
        """Whether every neighbour of a sender receives the same row (broadcast, or no random
        transform): then products run on the ``(N, D)`` rows (a GEMM on the dense backend)."""
        return channel.broadcast or channel.first_random == len(channel.transforms)

    def _clean(self, name: str, v, diag, edge, keep):
        """``M v`` (``M`` with its lost edges moved to the diagonal when ``keep`` is given)."""
        if keep is None:
            return self._net._product(name, v)
        if self._net.backend == "dense":
            return tensordot(self._net._dense(diag, edge), v, axes=1)
        return diag[:, None] * v + self._net.scatter_sum(edge[:, None] * v[self._net.senders])

    def _pre_noise(self, channel: Channel, product: str, message, flat):
        """Sender rows through every row transform before the (last) noise, and that noise's
        index."""
        last = channel.rows[-1]
        pre = channel.apply(flat, self._params, jnp.arange(flat.shape[0]), self._k, {}, 0, last,
                            memory=self.memory, tag=self._tag(product, message))
        return pre, last

    def _additive(self, channel: Channel, product: str, message, flat, diag, edge,
                  keep):
        """Per-message noise added last, ``R_e = v_{s(e)} + s ξ_e``, by linearity:
        ``M v + diag (X − v) + Σ_e M_e s ξ_e`` (a GEMM for the clean part; the released rows
        are recorded and cost nothing when nobody reads them).

        On the lattice ``R_e = γ_s (a_s + K_e)``: the rounded row ``γ_s a_s`` depends on the
        sender only, so ``v`` is that row and ``s ξ_e = γ_s K_e`` the integer noise; the models
        are the same function of the integer releases (up to float summation order)."""
        call, senders = self.calls, self._net.senders
        pre, last = self._pre_noise(channel, product, message, flat)
        noise = channel.transforms[last]
        values = self._values(noise)
        z = channel.standard_draws(self._key, call, (senders.shape[0], flat.shape[1]),
                                   flat.dtype)[last]
        scaled = noise.scale(values, senders, z, self._k) * z
        label = self._label(product, message)
        released = noise.apply(pre[senders], values, senders, self._k, z)  # add_noise
        if noise.lattice:
            pre = noise.apply(pre, values, jnp.arange(flat.shape[0]), self._k, jnp.zeros_like(pre))
        self.released[label], self.draws[label] = released, {last: z}
        return (self._clean(PRODUCTS[product], pre, diag, edge, keep)
                + diag[:, None] * (flat - pre) + self._net.scatter_sum(edge[:, None] * scaled))

    def _aggregate(self, channel: Channel, product: str, message, flat, diag, edge,
                   keep):
        """Per-message Gaussian noise added last, by its receiver sums:
        ``M v + diag (X − v) + T`` with ``T_i = √V_i z_i``, ``V_i = Σ_e M_e² s_e²`` over the
        edges e into i (``s_e`` the sender's scale, ``z`` one ``(N, D)`` standard draw): the sum
        of independent ``N(0, s_e² I)`` message noises weighted by ``M_e`` has exactly this law.
        Unless the channel is ``aggregate``, the messages are then drawn from their law given
        the sums (:meth:`_given_sums`) and recorded: messages and models have the joint law of
        independent per-message draws, and a run that never reads the messages pays for the
        sums only (XLA drops the rest)."""
        n = flat.shape[0]
        pre, last = self._pre_noise(channel, product, message, flat)
        noise = channel.transforms[last]
        scale = noise.scale(self._values(noise), jnp.arange(n), flat, self._k)
        edge_scale = jnp.broadcast_to(scale, (n, 1))[self._net.senders]  # s_e
        weight = edge[:, None] * edge_scale  # M_e s_e
        var = self._net.scatter_sum(weight * weight)
        std = jnp.where(var > 0, jnp.sqrt(jnp.where(var > 0, var, 1.0)), 0.0)
        z = channel.standard_draws(self._key, self.calls, flat.shape, flat.dtype)[last]
        sums, label = std * z, self._label(product, message)
        if channel.aggregate:
            self.draws[label] = {last: z}
        else:
            xi = self._given_sums(channel, last, sums, weight, var, flat)
            self.released[label] = pre[self._net.senders] + edge_scale * xi
            self.draws[label] = {last: xi}
        return (self._clean(PRODUCTS[product], pre, diag, edge, keep)
                + diag[:, None] * (flat - pre) + sums)

    def _given_sums(self, channel: Channel, last: int, sums, weight, var, flat):
        """Standard per-message draws ``ξ`` ``(2E, D)`` given their receiver sums
        ``T_i = Σ_e M_e s_e ξ_e``: ``ξ_e = ζ_e + (M_e s_e / V_i)(T_i − Σ_f M_f s_f ζ_f)`` with
        ``ζ`` fresh standard draws. ``T − Σ M s ζ`` is independent of every ``ζ_e −
        E[ζ_e | Σ M s ζ]``, so ``ξ`` is i.i.d. ``N(0, 1)`` and sums to ``T`` (exact Gaussian
        conditioning); with ``V_i = 0`` (no noisy edge into i) ``ξ = ζ``."""
        net = self._net
        zeta = channel.standard_draws(jax.random.fold_in(self._key, GIVEN_SUM_STREAM),
                                      self.calls, (net.senders.shape[0], flat.shape[1]),
                                      flat.dtype)[last]
        residual = sums - net.scatter_sum(weight * zeta)
        coef = jnp.where(var > 0, 1.0 / jnp.where(var > 0, var, 1.0), 0.0)[net.receivers]
        return zeta + weight * coef * residual[net.receivers]

    def _release(self, channel: Channel, product: str, message, flat):
        """The rows of one call: ``(N, D)`` per sender when :meth:`_per_sender`, else
        ``(2E, D)`` per edge (recorded per edge unless broadcast)."""
        n, call = flat.shape[0], self.calls
        cut, tag, label = channel.first_random, self._tag(product, message), self._label(
            product, message)
        senders = jnp.arange(n) if channel.broadcast else self._net.senders
        pre = channel.apply(flat, self._params, jnp.arange(n), self._k, {}, 0, cut,
                            memory=self.memory, tag=tag)
        if self._per_sender(channel) and not channel.broadcast:  # deterministic: the same row
            self.released[label] = pre if self._nested else pre[senders]
            return pre
        rows = pre if channel.broadcast else pre[senders]
        draws = channel.standard_draws(self._key, call, rows.shape, rows.dtype,
                                       None if channel.broadcast else self._net)
        self.draws[label] = draws
        rows = channel.apply(rows, self._params, senders, self._k, draws, cut,
                             memory=self.memory, tag=tag)
        self.released[label] = rows
        return rows

    def _tag(self, product: str, message) -> str:
        """The error-feedback memory prefix of this call."""
        return f"{message or product}{self.calls}"

    def _label(self, product: str, message) -> str:
        """The :attr:`released` key of this call: the message name, unique within the step."""
        if message is not None and message not in self.released:
            return message
        return f"{message or product}{self.calls}"
