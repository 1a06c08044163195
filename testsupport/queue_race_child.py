"""Child process for the queue's multi-process tests: a real, separate OS process and connection.

python queue_race_child.py drain --batch N --ack single|many --out FILE
    After printing "ready", wait for "go" on stdin, then lease analyze_page
    jobs in batches until none is leasable, acking each batch; every leased
    "id generation" pair is appended to FILE before the ack.

python queue_race_child.py serve
    Line protocol on stdin/stdout for scripted races: "lease SECONDS" leases
    one job (prints {"id", "generation"} or {"id": null}), "ack" acks the
    held lease with ack_done (prints {"acked": bool}), "enqueue" enqueues an
    analyze_page job (prints {"id"}), "wait SECONDS" opens a JobListener
    (prints {"listening": bool}, whether it holds a LISTEN session), waits
    and prints {"woken": bool, "secs": float}, "quit" exits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from datetime import timedelta


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    import django

    django.setup()


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def drain(batch: int, ack: str, out_path: str) -> None:
    from jobs import queue

    _say("ready")
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("expected 'go'")
    with open(out_path, "a") as out:
        while leases := queue.lease(["analyze_page"], batch, timedelta(minutes=5)):
            out.writelines(f"{lease.id} {lease.lease_generation}\n" for lease in leases)
            out.flush()
            if ack == "many":
                acked = queue.ack_done_many(leases)
            else:
                acked = sum(queue.ack_done(lease) for lease in leases)
            if acked != len(leases):
                raise SystemExit(f"only {acked} of {len(leases)} current leases were acked")


def serve() -> None:
    from analysis.payloads import AnalyzePage
    from jobs import queue, wakeup
    from jobs.wakeup import can_listen

    held = None
    _say("ready")
    for line in sys.stdin:
        command, *args = line.split()
        if command == "lease":
            leases = queue.lease(None, 1, timedelta(seconds=float(args[0])))
            held = leases[0] if leases else None
            _say(json.dumps({"id": str(held.id), "generation": held.lease_generation} if held else {"id": None}))
        elif command == "ack":
            if held is None:
                raise SystemExit("ack without a held lease")
            _say(json.dumps({"acked": queue.ack_done(held)}))
        elif command == "enqueue":
            _say(json.dumps({"id": str(queue.enqueue(AnalyzePage(page_id=uuid.uuid4())).id)}))
        elif command == "wait":
            with wakeup.JobListener(None) as listener:
                _say(json.dumps({"listening": can_listen()}))
                started = time.monotonic()
                woken = listener.wait(float(args[0]))
                _say(json.dumps({"woken": woken, "secs": round(time.monotonic() - started, 3)}))
        elif command == "quit":
            return
        else:
            raise SystemExit(f"unknown command {command!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    drain_args = sub.add_parser("drain")
    drain_args.add_argument("--batch", type=int, required=True)
    drain_args.add_argument("--ack", choices=["single", "many"], required=True)
    drain_args.add_argument("--out", required=True)
    sub.add_parser("serve")
    args = parser.parse_args()
    _setup_django()
    if args.mode == "drain":
        drain(args.batch, args.ack, args.out)
    else:
        serve()


if __name__ == "__main__":
    main()
