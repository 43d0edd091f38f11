"""Double DQN with a dueling head and Adam: DQN (its package, distrl.architectures.dqn) with the Double
DQN target (van Hasselt et al. 2016), the dueling head (Wang et al. 2016) and Adam (as Rainbow, Hessel et
al. 2018), under a name of its own. What the registry (distrl.architectures) takes from this package; the
package is the whole of it, and no other file of distrl names it."""

from distrl.architectures.double_dqn.config import DoubleDQNConfig as CONFIG
from distrl.architectures.double_dqn.presets import PRESETS

NAME = "double-dqn"
BUILDER = "distrl.architectures.double_dqn.builder:DoubleDQN"
__all__ = ["CONFIG", "NAME", "PRESETS", "BUILDER"]
