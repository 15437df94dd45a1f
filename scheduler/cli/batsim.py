"""``serve`` (our scheduler for a real Batsim) and ``batsim-peer`` (our Batsim for any scheduler)."""

from __future__ import annotations

import argparse
import logging
import sys

from scheduler.cli.options import add_scheduling_options, file_options, option_overrides


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run as a Batsim 4 decision process over ZeroMQ (replaces batsched or pybatsim)",
        description="Bind a ZeroMQ REP socket and schedule the simulation Batsim drives. "
                    "Exits 0 after SIMULATION_ENDS, non-zero on any protocol violation.",
    )
    serve.add_argument("-s", "--socket-endpoint", default="tcp://*:28000", metavar="ENDPOINT",
                       help="socket to bind (default tcp://*:28000, as batsched and pybatsim)")
    add_scheduling_options(serve)
    serve.add_argument("--timeout", type=float, metavar="S",
                       help="fail if Batsim sends nothing for S seconds (default: wait forever)")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every ignored event and the latencies")
    serve.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from scheduler.batsim.server import DecisionServer

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    server = DecisionServer(args.socket_endpoint, file_options(args), option_overrides(args), args.timeout)
    stats = server.run()
    latency = stats.latency_percentiles()
    accounting = stats.core.accounting() if stats.core else {}
    print(f"simulation ended after {stats.messages} messages; jobs: "
          + ", ".join(f"{count} {state}" for state, count in sorted(accounting.items()))
          + f"; decision latency median {latency['median'] * 1e6:.0f} us, p99 {latency['p99'] * 1e6:.0f} us",
          file=sys.stderr)
    return 0
