"""Child process for the kill-before-ack test: a real `Worker` loop draining analyze_page jobs.

python ack_flush_child.py --runs FILE [--stall-before-ack MARKER]

Every handler run appends "job_id generation" to FILE (the job's side effect).
With --stall-before-ack the first done acks never reach the database: the
child writes the acked job ids to MARKER and stalls inside the ack, so the
test can kill -9 it between finishing those jobs and acking them.
Without it, the child drains the queue and exits 0.
"""

from __future__ import annotations

import argparse
import os
import threading


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", required=True)
    parser.add_argument("--stall-before-ack")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mangalord.settings")
    import django

    django.setup()
    from jobs import queue
    from jobs.worker.loop import Worker, WorkerConfig

    runs = os.open(args.runs, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def record_run(payload, ctx) -> None:
        # One write(2) per run on an O_APPEND file: lines from the job threads never interleave.
        os.write(runs, f"{ctx.lease.id} {ctx.lease.lease_generation}\n".encode())

    if args.stall_before_ack:
        marker = args.stall_before_ack

        ack_done_many, ack_done_many_and_lease = queue.ack_done_many, queue.ack_done_many_and_lease

        def stall(leases):
            if not leases:  # nothing to ack: not the window under test
                return
            with open(marker + ".tmp", "w") as out:
                out.writelines(f"{lease.id}\n" for lease in leases)
            os.replace(marker + ".tmp", marker)
            threading.Event().wait()  # until the test's SIGKILL

        def stalled_ack_done_many(leases):
            stall(leases)
            return ack_done_many(leases)

        def stalled_ack_done_many_and_lease(done, *args, **kwargs):
            stall(done)
            return ack_done_many_and_lease(done, *args, **kwargs)

        # Both ways the loop sends done acks: on their own, or with the claim of the next jobs.
        queue.ack_done_many = stalled_ack_done_many
        queue.ack_done_many_and_lease = stalled_ack_done_many_and_lease

    config = WorkerConfig(role="test", handlers={"analyze_page": record_run}, concurrency=4)
    Worker(config).run(drain=True, install_signals=False)


if __name__ == "__main__":
    main()
