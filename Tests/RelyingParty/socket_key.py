"""python-fido2 reaching the virtual key over `authkeyd-virtkey --socket`:
one 64-byte CTAPHID report per SOCK_SEQPACKET message, no report ID. The
one connection the project's Python hosts share (prf_client.py,
largeblob_read.py, Tests/DeviceSuite/virtkey_plugin.py)."""
import socket

from fido2.hid import CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor

REPORT_SIZE = 64
# A read that waits this long is a hung key, not a slow one: the key sends
# a keepalive at least every 100 ms while it works, and a touch comes at
# once. Failing the call beats hanging make test.
READ_TIMEOUT_SECONDS = 30


class SocketConnection(CtapHidConnection):
    """CTAPHID reports over a SOCK_SEQPACKET socket: one report per message."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.socket.settimeout(READ_TIMEOUT_SECONDS)
        self.socket.connect(path)

    def write_packet(self, data):
        if self.socket.send(data) != len(data):
            raise OSError("short write to the key's socket")

    def read_packet(self):
        report = self.socket.recv(REPORT_SIZE)
        if len(report) != REPORT_SIZE:
            # Empty: the key was unplugged (its process stopped) under us.
            raise OSError("the key's socket closed or sent a short report")
        return report

    def close(self):
        self.socket.close()


def descriptor(path, product="authkeyd virtual key"):
    return HidDescriptor(path, 0x1209, 0x0001, REPORT_SIZE, REPORT_SIZE, product, None)


def open_device(path):
    return CtapHidDevice(descriptor(path), SocketConnection(path))
