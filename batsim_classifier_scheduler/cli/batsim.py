"""``serve`` (our scheduler for a real Batsim) and ``batsim-peer`` (our Batsim for any scheduler)."""

from __future__ import annotations

import argparse
import logging
import sys

from batsim_classifier_scheduler.cli.options import (
    DEFAULT_TIMEOUT,
    add_scheduling_options,
    machines_flag,
    file_options,
    option_overrides,
    timeout_flag,
)
from batsim_classifier_scheduler.cli.teardown import skip_teardown

#: ZeroMQ's transports, as an endpoint begins (``tcp://HOST:PORT``, ``ipc://PATH``...).
TRANSPORTS = ("tcp", "ipc", "inproc", "ws", "wss", "pgm", "epgm", "udp", "vmci")


def endpoint_flag(text: str) -> str:
    """The ``type`` of ``--socket-endpoint``: a ZeroMQ endpoint, ``tcp://HOST:PORT`` with a port number
    (``*`` for any host or any port), or another transport's ``TRANSPORT://ADDRESS``."""
    transport, separator, address = text.partition("://")
    host, colon, port = address.rpartition(":")
    if transport == "tcp" and host and colon and (port == "*" or port.isdigit() and 0 < int(port) < 65536):
        return text
    if separator and transport in TRANSPORTS[1:] and address:
        return text
    raise argparse.ArgumentTypeError(f"expected a ZeroMQ endpoint tcp://HOST:PORT (e.g. tcp://*:28000 or "
                                     f"tcp://localhost:28000), got {text!r}")


#: The knowledge reports ``serve -e PREFIX`` may write (``PREFIX_<name>.csv``).
KNOWLEDGE_REPORTS = ("classifier_weeks", "feature_importances", "predictions")


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run as a Batsim 4 decision process over ZeroMQ (replaces batsched or pybatsim)",
        description="Bind a ZeroMQ REP socket and schedule the simulation Batsim drives. "
                    "Exits 0 after SIMULATION_ENDS. On an error (a protocol violation, a refused option) it "
                    "replies with a NOTIFY carrying the error, on which Batsim aborts, and exits non-zero.",
        usage="%(prog)s [options]",
    )
    group = add_scheduling_options(serve)["run"]
    group.add_argument("-s", "--socket-endpoint", default="tcp://*:28000", metavar="ENDPOINT", type=endpoint_flag,
                     help="socket to bind (default tcp://*:28000, as batsched and pybatsim)")
    group.add_argument("--timeout", type=timeout_flag, default=DEFAULT_TIMEOUT, metavar="S",
                     help=f"fail if Batsim sends nothing for S seconds, the first message included (default "
                          f"{DEFAULT_TIMEOUT:g}; 0 waits forever)")
    group.add_argument("-e", "--export", metavar="PREFIX",
                     help="at the end, write what the scheduler learnt (PREFIX_classifier_weeks.csv, "
                          "PREFIX_feature_importances.csv, PREFIX_predictions.csv); give Batsim's -e prefix "
                          "so that 'report' finds them beside Batsim's PREFIX_jobs.csv")
    group.add_argument("--verbose", action="store_true", help="log every ignored event and the latencies")
    serve.set_defaults(func=run_serve)
    register_peer(subparsers)


def run_serve(args: argparse.Namespace) -> int:
    from batsim_classifier_scheduler.batsim.server import DecisionServer

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.export:
        from batsim_classifier_scheduler.util.output_files import check_distinct, check_outputs, prefixed

        reports = [prefixed(args.export, f"_{name}.csv") for name in KNOWLEDGE_REPORTS]
        check_outputs(reports, "--export")
        check_distinct([("--export", path) for path in reports],
                       [("--config", args.config), ("--model", getattr(args, "model", None))])
    server = DecisionServer(args.socket_endpoint, file_options(args), option_overrides(args), args.timeout)
    stats = server.run()
    outcome = stats.core.outcome() if stats.core else None
    if args.export and outcome is not None:
        from batsim_classifier_scheduler.sim.results import write_knowledge_reports

        for path in write_knowledge_reports(args.export, outcome):
            print(f"wrote {path}", file=sys.stderr)
    latency = stats.latency_percentiles()
    accounting = outcome.accounting if outcome else {}
    print(f"simulation ended after {stats.messages} messages; jobs: "
          + ", ".join(f"{accounting[state]} {state}" for state in ("completed", "killed", "rejected")
                      if accounting.get(state))
          + f"; decision latency median {latency['median'] * 1e6:.0f} us, p99 {latency['p99'] * 1e6:.0f} us",
          file=sys.stderr)
    skip_teardown()  # (the socket and its context are closed: the last reply is out)
    return 0


def register_peer(subparsers: argparse._SubParsersAction) -> None:
    peer = subparsers.add_parser(
        "batsim-peer",
        help="play Batsim's side: simulate a workload with any Batsim scheduler over ZeroMQ",
        description="The embedded Batsim 4.2.1-compatible engine, driving a decision process over a "
                    "ZeroMQ socket (ours, batsched, pybatsim). Writes PREFIX_jobs.csv and PREFIX_schedule.csv.",
    )
    peer.add_argument("-p", "--platform", required=True, metavar="XML", help="SimGrid platform file")
    peer.add_argument("-w", "--workload", required=True, metavar="FILE", help="Batsim JSON workload (or SWF trace, or a trace's name in the trace cache)")
    peer.add_argument("-e", "--export", default="out", metavar="PREFIX", help="output prefix (default 'out')")
    peer.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000", metavar="ENDPOINT", type=endpoint_flag,
                      help="the decision process's socket (default tcp://localhost:28000)")
    size = peer.add_mutually_exclusive_group()
    size.add_argument("--mmax", type=machines_flag, metavar="N", help="use only the first N machines")
    size.add_argument("--mmax-workload", action="store_true", help="use as many machines as the workload's nb_res")
    peer.add_argument("--enable-dynamic-jobs", action="store_true", help="allow REGISTER_JOB / REGISTER_PROFILE")
    peer.add_argument("--acknowledge-dynamic-jobs", action="store_true", help="echo JOB_SUBMITTED for registered jobs")
    peer.add_argument("--enable-profile-reuse", action="store_true", help="do not garbage-collect profiles")
    peer.add_argument("--sched-cfg", default="", type=str, metavar="STR", help="string passed as config.sched-config")
    peer.add_argument("--timeout", type=timeout_flag, default=DEFAULT_TIMEOUT, metavar="S",
                      help=f"fail if the scheduler does not answer within S s, the first message included (default "
                           f"{DEFAULT_TIMEOUT:g}; 0 waits forever)")
    peer.set_defaults(func=run_peer_command)


def run_peer_command(args: argparse.Namespace) -> int:
    import time

    from batsim_classifier_scheduler.cli import workload_argument
    from batsim_classifier_scheduler.errors import ConfigError
    from batsim_classifier_scheduler.util.output_files import check_distinct, check_outputs, prefixed
    from batsim_classifier_scheduler.platforms import read_platform
    from batsim_classifier_scheduler.sim.engine import SimulationOptions
    from batsim_classifier_scheduler.sim.batsim_files import schedule_summary, write_jobs_csv, write_schedule_csv
    from batsim_classifier_scheduler.sim.peer import run_peer
    from batsim_classifier_scheduler.workloads import load_workload

    started = time.perf_counter()
    args.workload = workload_argument(args.workload)
    jobs_csv, schedule_csv = prefixed(args.export, "_jobs.csv"), prefixed(args.export, "_schedule.csv")
    check_outputs([jobs_csv, schedule_csv], "--export")
    check_distinct([("--export", jobs_csv), ("--export", schedule_csv)],
                   [("--platform", args.platform), ("--workload", args.workload)])
    platform = read_platform(args.platform)
    workload = load_workload(args.workload)
    nb_machines = platform.nb_compute_hosts
    if args.mmax_workload:
        nb_machines = min(nb_machines, workload.nb_res)
    elif args.mmax:
        nb_machines = min(nb_machines, args.mmax)
    if nb_machines <= 0:
        raise ConfigError("no compute machine to simulate on")
    options = SimulationOptions(args.enable_dynamic_jobs, args.acknowledge_dynamic_jobs,
                                args.enable_profile_reuse, args.sched_cfg)
    result = run_peer(workload, args.socket_endpoint, nb_machines, platform.host_names, options, args.timeout)
    write_jobs_csv(jobs_csv, result.jobs)
    write_schedule_csv(schedule_csv, schedule_summary(result.jobs, nb_machines, scheduling_time=result.scheduling_time,
                                                      simulation_time=time.perf_counter() - started))
    print(f"simulation ended at {result.makespan:g} after {result.nb_messages} messages; "
          f"wrote {jobs_csv} and {schedule_csv}", file=sys.stderr)
    if result.unfinished:
        print(f"error: {len(result.unfinished)} job(s) never finished: {', '.join(result.unfinished[:5])}",
              file=sys.stderr)
        return 1
    return 0
