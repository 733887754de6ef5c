"""A Ray cluster for the tests, run as its own process: ``python cluster.py TEMP_DIR NUM_CPUS``.

It starts Ray on this machine (the loopback interface only, with the token the environment
gives), prints the cluster's address, and stops Ray and exits once its standard input closes.
"""

import logging
import sys

import ray


def main(temp_dir: str, num_cpus: str) -> None:
    context = ray.init(
        address="local",
        num_cpus=int(num_cpus),
        include_dashboard=False,
        logging_level=logging.WARNING,
        log_to_driver=False,
        _temp_dir=temp_dir,
    )
    print(context.address_info["gcs_address"], flush=True)
    sys.stdin.read()
    ray.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
