"""python-fido2, a host independent of authkeyd and libfido2, asks a
virtual key served on a socket for its getInfo N times and prints one JSON
line: the outcome of each call ("ok", or python-fido2's CTAP error name)
and how many ERR_CHANNEL_BUSY answers python-fido2 waited out. A key told
`--fault busy` answers CTAPHID ERROR ERR_CHANNEL_BUSY, as a key busy with
another host's transaction does; python-fido2 (fido2.hid's call) waits a
tenth of a second and asks again, logging each retry.

    busy_key.py SOCKET N"""
import json
import logging
import sys

from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2

from socket_key import open_device


class BusyAnswers(logging.Handler):
    """Counts python-fido2's "CTAP channel busy, trying again" records."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        if "channel busy" in record.getMessage():
            self.count += 1


def main():
    path, count = sys.argv[1], int(sys.argv[2])
    busy = BusyAnswers()
    hid_logger = logging.getLogger("fido2.hid")
    hid_logger.addHandler(busy)
    hid_logger.propagate = False
    device = open_device(path)
    outcomes = []
    for _ in range(count):
        try:
            Ctap2(device).get_info()
            outcomes.append("ok")
        except CtapError as error:
            outcomes.append(error.code.name)
    device.close()
    print(json.dumps({"outcomes": outcomes, "busyAnswers": busy.count}))


if __name__ == "__main__":
    main()
