"""Points python-fido2's device suite (tests/device/ of its sdist) at the
virtual key.

The suite is written for a real authenticator on USB: it lists HID devices,
opens the one the user touches, and asks the user to unplug and replug it
before a factory reset (CTAP 2.1 allows a reset only just after plug-in).
This plugin stands in for the USB bus and the user:

- the HID bus is one device, `authkeyd-virtkey --socket PATH`: its
  SOCK_SEQPACKET socket carries one 64-byte CTAPHID report per message, with
  no report-ID byte, which is what `CtapHidConnection` reads and writes;
- unplugging stops that process (the socket disappears, as a removed key's
  hidraw node does) and plugging in starts it again on the same state file,
  so the credentials and the PIN survive and the reset window opens afresh;
- the simulated user touches at once (`--presence immediate`) and has a
  fingerprint that matches (`--uv match`).

Nothing of the suite is changed: its own conftest finds the key through
`fido2.hid`, which this module replaces before that conftest is imported
(pytest imports `-p` plugins first), and its printer, which asks a human
to remove and insert the key, is given hands.

Options: --virtkey PATH (the built authkeyd-virtkey; required) and
--virtkey-dir DIR (where the socket, the state file and the key's log go).
"""

import os
import signal
import socket
import subprocess
import tempfile
import time

import fido2.hid
import pytest
from fido2.hid.base import HidDescriptor
from socket_key import REPORT_SIZE, SocketConnection

# What the virtual key reports over USB (authkeyd-virtkey --uhid uses the
# same ids: pid.codes' test vendor 0x1209, product 0x0001).
VENDOR_ID = 0x1209
PRODUCT_ID = 0x0001
PRODUCT_NAME = "authkeyd Virtual Key (device suite)"

START_TIMEOUT_SECONDS = 10


class VirtualKeyProcess:
    """One authkeyd-virtkey process at a time, on one socket and state file."""

    def __init__(self, binary, directory):
        self.binary = binary
        self.socket_path = os.path.join(directory, "key.sock")
        self.state_path = os.path.join(directory, "key.state")
        self.log_path = os.path.join(directory, "key.log")
        # For scripts/device-tests, to stop a key left by a run cut short.
        self.pid_path = os.path.join(directory, "key.pid")
        self._process = None

    @property
    def plugged_in(self):
        return self._process is not None and os.path.exists(self.socket_path)

    def plug_in(self):
        """Starts the key and returns once it is listening."""
        if self._process is not None:
            return
        command = [
            self.binary,
            "--socket", self.socket_path,
            "--state", self.state_path,
            "--name", PRODUCT_NAME,
            "--presence", "immediate",
            "--uv", "match",
        ]
        log = open(self.log_path, "ab")
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        with open(self.pid_path, "w") as pid_file:
            pid_file.write(f"{self._process.pid}\n")
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self._accepts_connections():
            if self._process.poll() is not None:
                status = self._process.returncode
                self._process = None
                raise RuntimeError(f"authkeyd-virtkey exited with status {status}; see {self.log_path}")
            if time.monotonic() > deadline:
                self.unplug()
                raise RuntimeError(f"authkeyd-virtkey did not listen on {self.socket_path} within {START_TIMEOUT_SECONDS} s")
            time.sleep(0.01)

    def unplug(self):
        """Stops the key (SIGTERM: it removes its socket) and waits for it."""
        if self._process is None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout=START_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None
        os.unlink(self.pid_path)
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)

    def _accepts_connections(self):
        if not os.path.exists(self.socket_path):
            return False
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            probe.connect(self.socket_path)
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def descriptor(self):
        return HidDescriptor(
            path=self.socket_path,
            vid=VENDOR_ID,
            pid=PRODUCT_ID,
            report_size_in=REPORT_SIZE,
            report_size_out=REPORT_SIZE,
            product_name=PRODUCT_NAME,
            serial_number=None,
        )


def _open_connection(descriptor):
    """The suite's connection to the key: the project's shared one."""
    return SocketConnection(descriptor.path)


# The one key on this machine's "HID bus"; set by pytest_configure.
_key = None
# Whether the suite's printer was found and given hands.
_hands_given = False


def _list_descriptors():
    return [_key.descriptor()] if _key is not None and _key.plugged_in else []


def _get_descriptor(path):
    for descriptor in _list_descriptors():
        if descriptor.path == path:
            return descriptor
    raise ValueError(f"no virtual key at {path!r}")


# The suite's conftest does `from fido2.hid import list_descriptors,
# open_connection, open_device`; open_device looks get_descriptor and
# open_connection up in fido2.hid when called.
fido2.hid.list_descriptors = _list_descriptors
fido2.hid.get_descriptor = _get_descriptor
fido2.hid.open_connection = _open_connection


def pytest_addoption(parser):
    group = parser.getgroup("virtkey", "the virtual key as the device under test")
    group.addoption("--virtkey", metavar="PATH", help="the authkeyd-virtkey binary to run")
    group.addoption("--virtkey-dir", metavar="DIR",
                    help="where the key's socket, state file and log go (default: a new temporary directory)")


def pytest_configure(config):
    global _key
    binary = config.getoption("virtkey")
    if not binary:
        raise pytest.UsageError("virtkey_plugin: --virtkey PATH (the built authkeyd-virtkey) is required")
    directory = config.getoption("virtkey_dir") or tempfile.mkdtemp(prefix="device-suite-")
    os.makedirs(directory, exist_ok=True)
    # A key fresh from the factory: the suite refuses a key with a PIN.
    for stale in ("key.state", "key.log", "key.pid"):
        path = os.path.join(directory, stale)
        if os.path.exists(path):
            os.unlink(path)
    _key = VirtualKeyProcess(os.path.abspath(binary), directory)
    _key.plug_in()


def pytest_unconfigure(config):
    if _key is not None:
        _key.unplug()


def pytest_plugin_registered(plugin, manager):
    """Gives the suite's printer hands once its conftest is loaded.

    The suite's `printer` fixture builds a `Printer` (named in its conftest)
    that only tells a human what to do; this swaps in a subclass that also
    does it, so that every message still shows in the output.
    """
    printer_class = getattr(plugin, "Printer", None)
    if printer_class is None or not hasattr(plugin, "DeviceManager"):
        return
    if getattr(printer_class, "virtual_key_hands", False):
        return

    class PrinterWithHands(printer_class):
        virtual_key_hands = True

        def remove(self, nfc=False):
            super().remove(nfc)
            _key.unplug()

        def insert(self, nfc=False):
            super().insert(nfc)
            _key.plug_in()

    plugin.Printer = PrinterWithHands
    global _hands_given
    _hands_given = True


def pytest_collection_finish(session):
    # Without hands, the first replug would wait for a human forever.
    if session.items and not _hands_given:
        pytest.exit("virtkey_plugin: the suite's conftest has no Printer and DeviceManager to drive", returncode=4)
