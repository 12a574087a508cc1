"""Run every benchmark: python -m bench [--database-url URL] (default: a new embedded server)."""

import argparse
import sys

from bench import (
    acquisition_bench,
    call_bench,
    decisions,
    dmn_deploy_bench,
    engine_throughput,
    external_tasks_bench,
    jobs_bench,
    login_bench,
    mi_bench,
    parse_bench,
)

parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
parser.add_argument("--database-url")
forward = ["--database-url", url] if (url := parser.parse_args().database_url) is not None else []
sys.argv = [sys.argv[0], *forward]

print("== engine throughput", flush=True)
engine_throughput.main()
print("\n== parallel multi-instance: 100 iterations and a join; cost at 10, 100, 1,000", flush=True)
mi_bench.main(forward)
print("\n== call activities: a tree against straight-through instances", flush=True)
call_bench.main(forward)
print("\n== decisions: a 50-rule table in process, through the engine, in a process", flush=True)
decisions.main(forward)
print("\n== DMN deployment against table size: 1,500 to 12,000 rules", flush=True)
dmn_deploy_bench.main(forward)
print("\n== external tasks", flush=True)
external_tasks_bench.main(forward)
print("\n== job executor: timer lateness", flush=True)
jobs_bench.main(forward)
print("\n== job acquisition among other active instances", flush=True)
acquisition_bench.main(forward)
print("\n== BPMN parsing against model size; a split of 5,000 branches", flush=True)
parse_bench.main(forward)
print("\n== failed log-ins: an existing user against an unknown one", flush=True)
login_bench.main(forward)
