"""User-facing errors: the CLI prints their message on one line and exits with code 2."""


class DistrlError(Exception):
    """A problem the user can fix; the message names the problem and the fix."""


class ConfigError(DistrlError):
    """Bad flag, config key or value, unknown architecture, env id or preset."""


class CheckpointError(DistrlError):
    """A checkpoint that is missing, corrupt, or belongs to another run shape."""


class NotRestored(RuntimeError):
    """A role that Ray restarted was asked for work before the driver handed it its state: callers take it
    as "restarting" (the transport's `dead`) and try again."""
