"""What the tests and the benchmarks both need to drive a real deployment: starting and stopping
`python -m app` processes, a learner's HTTP session and stream follower, a throwaway PostgreSQL
database, whole deployments, and per-process CPU readings. The tests import it; so does bench/,
whose modules are the measurements themselves."""
