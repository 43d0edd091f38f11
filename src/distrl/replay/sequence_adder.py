"""R2D2's sequence adder: an actor's steps cut into fixed-length, overlapping sequences for recurrent replay."""

from __future__ import annotations

from typing import Any

import numpy as np

STEP_KEYS = ("prev_action", "prev_reward", "action", "reward", "discount")


class SequenceAdder:
    """Sequences of burn_in + trace steps, a new one every `period` steps (default: trace, so that the
    traces tile an episode and each step is learned from once, its burn-in the previous trace's tail;
    Kapturowski et al. 2019: trace 80, burn-in 40, adjacent sequences overlapping by 40), each with the
    recurrent state the actor had before its first real step (the "stored state" strategy).

    Sequences never cross an episode's end. An episode's first sequence starts at its first step with no
    burn-in (the state there is the initial one, exact): its burn_in leading steps are padding. The last
    sequences are padded after the end. `mask` marks the real steps; obs holds one more observation than
    steps (the state after the last real step, for the last target's bootstrap), zeros where padded; the
    step after the last real one carries that step's action and reward as its previous ones."""

    def __init__(self, burn_in: int, trace: int, period: int | None = None):
        if burn_in < 0 or trace < 1:
            raise ValueError(f"need burn_in >= 0 and trace >= 1, got {burn_in} and {trace}")
        self.burn_in, self.trace = burn_in, trace
        self.period = trace if period is None else period
        if not 1 <= self.period <= trace:
            raise ValueError(f"period must be in [1, trace={trace}] (no step left out of every trace), "
                             f"got {self.period}")
        self.length = burn_in + trace
        self.reset()

    def reset(self) -> None:
        """A new episode: the next step is its first."""
        self._steps: list[dict] = []  # this episode's steps from index self._offset on
        self._states: list[Any] = []
        self._offset = 0
        self._t = 0  # steps added in this episode
        self._next = 0  # the next sequence to emit: it starts (virtually) at next * period - burn_in

    def add(self, obs: np.ndarray, state: Any, next_obs: np.ndarray, end: bool, **step: float) -> list[dict]:
        """One step: the observation, the actor's recurrent state before it, the observation after it,
        whether the episode ended there (terminated or truncated), and STEP_KEYS (discount: 0 at a
        terminal, gamma otherwise, a truncation included). Returns the sequences it completes."""
        if set(step) != set(STEP_KEYS):
            raise ValueError(f"a step needs exactly {', '.join(STEP_KEYS)}; got {', '.join(sorted(step))}")
        self._steps.append({"obs": np.asarray(obs), **step})
        self._states.append(state)
        self._t += 1
        self._last_next_obs = np.asarray(next_obs)
        out = []
        while self._start(self._next) + self.length <= self._t:  # a whole sequence is in
            out.append(self._emit(self._next))
            self._next += 1
        if end:
            while self._start(self._next) + self.burn_in < self._t:  # its trace holds real steps
                out.append(self._emit(self._next))
                self._next += 1
            self.reset()
        else:
            self._trim()
        return out

    def _start(self, k: int) -> int:
        return k * self.period - self.burn_in

    def _emit(self, k: int) -> dict:
        start = self._start(k)
        first = max(start, 0)  # the first real step (before it, an episode's first sequence is padding)
        real = range(first, min(start + self.length, self._t))
        template = self._steps[0]
        obs = np.zeros((self.length + 1, *template["obs"].shape), template["obs"].dtype)
        mask = np.zeros(self.length, bool)
        fields = {key: np.zeros(self.length, np.float32) for key in STEP_KEYS}
        for i in real:
            j = i - start
            step = self._steps[i - self._offset]
            obs[j] = step["obs"]
            mask[j] = True
            for key in STEP_KEYS:
                fields[key][j] = step[key]
        last = real[-1] - start
        obs[last + 1] = self._steps[real[-1] + 1 - self._offset]["obs"] if real[-1] + 1 < self._t \
            else self._last_next_obs
        if last + 1 < self.length:  # the state after the end is fed its own previous action and reward
            fields["prev_action"][last + 1] = fields["action"][last]
            fields["prev_reward"][last + 1] = fields["reward"][last]
        return {"obs": obs, **fields, "mask": mask, "state": self._states[first - self._offset], "start": first}

    def _trim(self) -> None:
        """Keep only the steps that a sequence still to come holds."""
        keep_from = max(self._start(self._next), 0)
        drop = keep_from - self._offset
        if drop > 0:
            del self._steps[:drop], self._states[:drop]
            self._offset = keep_from
