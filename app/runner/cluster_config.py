"""What every Drillbook cluster is configured with: the embedded LocalCluster
(`app/runner/cluster.py`) and an external one started with `python -m app scheduler | worker`
(`app/runner/dask_commands.py`) read it from here."""

from typing import Any

# Every worker imports this before it registers: warm torch, lower the CPU priority.
WARM_PRELOAD = "app.runner.warm_preload"

CLUSTER_CONFIG: dict[str, Any] = {
    # A task whose worker dies is reported lost at once instead of being retried elsewhere: the
    # learner sees "worker lost" and decides; a retry would silently re-run a crashing job.
    "distributed.scheduler.allowed-failures": 0,
    # LocalCluster closes a nanny whose worker stays unregistered this long (and never starts
    # another: AttemptRunner's pool check does). A restarted worker warms up before it
    # registers, which takes well over the default 15 s on a machine busy with a class.
    # (Only LocalCluster reads it; `dask worker` nannies restart their worker without a limit.)
    "distributed.deploy.lost-worker-timeout": "120s",
    # No HTTP pages: the app uses none of them, and /info, /json, /metrics and /eventstream
    # answer anyone who can reach the port.
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
    # The system monitor samples CPU, memory and disk twice a second for the dashboard, which
    # these clusters do not serve; in the embedded set-up the scheduler's sampling ran in the web
    # process (about 4% of its CPU under load). Memory limits do not depend on it.
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    # Every Dask server (the scheduler, each nanny) times a callback every 20 ms by default, only
    # to warn when its event loop was blocked for seconds. In the embedded set-up they all share
    # the web process: at idle that took 24 of its 47 ms of CPU per second (measured with psutil
    # per thread, two workers); once a second still catches a blocked loop.
    "distributed.admin.tick.interval": "1s",
    # The nannies (in the web process when embedded) read their worker's memory every 100 ms by
    # default to kill one past 95% of its limit; a run's own memory limit is checked by the drill
    # at every reported step, so the nanny is the backstop and twice a second is soon enough
    # (a further 10 ms of the web process's CPU per second at idle).
    "distributed.worker.memory.monitor-interval": "500ms",
    # A worker holds only the run it is running; the rest wait on the scheduler, which hands
    # out the highest priority first (app/runs/fair_share.py: each learner's runs in turn). Dask's
    # default of 1.1 gives a one-thread worker two runs at once: it ran one learner's second
    # run while another learner's first waited behind a long run on the other worker.
    # (Dask assigns at once while it holds no more runs than twice the threads.)
    "distributed.scheduler.worker-saturation": 1.0,
    # Each worker has one thread and the scheduler queues what no worker can start yet, so there
    # is never a second task on a worker to steal; the balancing pass ran ten times a second.
    "distributed.scheduler.work-stealing": False,
    # Every worker samples its threads' stacks every 10 ms for the dashboard's profile page,
    # which these clusters do not serve: in its event loop, taking the interpreter from the run
    # it interrupts, and all the time, busy or idle. An idle worker spent 30 ms of CPU per
    # second on it (psutil, per thread).
    "distributed.worker.profile.enabled": False,
}

# Dask loggers whose INFO lines say less than they seem to: a connection that closed under a
# send (a worker stopping or killed, a scheduler shutting down) comes with a traceback an
# operator would take for a crash; what it means for a run, the runner reports itself ("worker
# lost"). Their failed writes stay: ERROR. The web process sets these levels on its own loggers
# (`app.__main__.configure_logging`); an external scheduler and its workers read them from
# their configuration (Dask adds them to its defaults when it sets up its logging).
QUIET_DASK_LOGGERS: dict[str, str] = {"distributed.batched": "warning"}

# An external cluster listens on the network: besides speaking TLS, its scheduler and workers
# refuse any peer that tries plain TCP. (Not part of CLUSTER_CONFIG, which the web process also
# sets for itself: there it would refuse the tcp:// address a developer may use.)
EXTERNAL_CLUSTER_CONFIG: dict[str, Any] = CLUSTER_CONFIG | {
    "distributed.comm.require-encryption": True,
    "distributed.logging": QUIET_DASK_LOGGERS,
}
