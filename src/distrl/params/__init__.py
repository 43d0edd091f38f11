"""Parameter stores: the sharded parameter server (Gorila, BA3C, A3C sharded), shared memory with
Hogwild (A3C on one host), and BA3C's synchronous chief in front of the shards."""
