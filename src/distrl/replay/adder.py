"""The n-step adder: turns a stream of steps into (s_t, a_t, R_t^(k), gamma^k, s_{t+k}) transitions."""

from __future__ import annotations

from collections import deque
from typing import Any


class NStepAdder:
    """Ape-X builds n-step transitions on the actor (appendix F); transitions are cut short at
    episode end. At a true terminal the bootstrap discount is 0; at a time-limit truncation it
    stays gamma^k, because the state after it still has value."""

    def __init__(self, n: int, gamma: float):
        if n < 1:
            raise ValueError(f"n-step must be >= 1, got {n}")
        self.n, self.gamma = n, gamma
        self._pending: deque[tuple[Any, Any, float, Any]] = deque()

    def reset(self) -> None:
        self._pending.clear()

    def add(self, obs, action, reward: float, next_obs, terminated: bool, truncated: bool,
            extra: Any = None) -> list[dict]:
        """Feed one step; returns the transitions it completes (zero, one, or all pending at an end).

        `extra` travels with s_t (the actor keeps its Q-values there for the priorities)."""
        self._pending.append((obs, action, float(reward), extra))
        if terminated or truncated:
            out = [self._emit(i, next_obs, terminated) for i in range(len(self._pending))]
            self._pending.clear()
            return out
        if len(self._pending) == self.n:
            out = [self._emit(0, next_obs, False)]
            self._pending.popleft()
            return out
        return []

    def _emit(self, start: int, next_obs, terminated: bool) -> dict:
        ret, k = 0.0, 0
        for i in range(start, len(self._pending)):
            ret += self.gamma ** k * self._pending[i][2]
            k += 1
        obs, action, _, extra = self._pending[start]
        return {"obs": obs, "action": action, "reward": ret,
                "discount": 0.0 if terminated else self.gamma ** k, "next_obs": next_obs, "extra": extra}
