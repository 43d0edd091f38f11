"""The README's animation: one greedy episode of a run's latest checkpoint (`distrl.evaluate(..., video=)`,
the video extra), its mp4 turned into a GIF that a README shows inline.

    bench/peers/.venv/bin/python -m bench.agent_gif RUN_DIR --out bench/figures/minatar-breakout-a3c.gif

Prints the episode's return and the GIF's frames. Asserts nothing."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import imageio
import numpy as np

import distrl


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--out", type=Path, required=True, help="the GIF to write")
    p.add_argument("--max-frames", type=int, default=400, help="at most this many frames of the episode")
    p.add_argument("--every", type=int, default=1, help="keep every Nth frame (a smaller file)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = distrl.evaluate(args.run_dir, episodes=1, video=folder)
        with imageio.get_reader(result["videos"][0]) as reader:
            fps = reader.get_meta_data()["fps"]
            frames = [frame for i, frame in enumerate(reader) if i % args.every == 0][: args.max_frames]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(args.out, np.stack(frames), duration=1000 * args.every / fps, loop=0)
    print(f"return {result['mean']:.1f} over {len(frames)} frames at {fps / args.every:.0f}/s "
          f"(checkpoint after {result['updates']} updates): wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
