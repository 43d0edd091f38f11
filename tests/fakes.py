"""Stand-ins an actor under test sends to and pulls from: a sink that keeps what it is given, and a
parameter source with nothing new."""


class RecordingSink:
    def __init__(self):
        self.batches = []

    def add(self, batch, priorities=None):
        self.batches.append((batch, priorities))


class NoParameters:
    def latest(self):
        return None
