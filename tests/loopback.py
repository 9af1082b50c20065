"""Raw loopback servers for the tests: every byte a client sends is recorded, every reply is the
test's (faults included).  ``RawServer(respond)`` speaks whatever ``respond(conn, request)`` sends;
``PgRecorder`` plays the first steps of a PostgreSQL server and asks for a password."""
from __future__ import annotations

import socket
import socketserver
import struct
import threading

#: How often a test's ``serve_forever`` looks for ``shutdown()`` (socketserver's default is 0.5 s, which
#: every test paid on teardown).
POLL_S = 0.02


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """``server.serve_forever`` on a daemon thread that notices ``shutdown()`` within :data:`POLL_S`."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)
    thread.start()
    return thread


class RawServer:
    """A TCP server on 127.0.0.1 answering every connection with ``respond(conn, request_bytes)``;
    ``received`` keeps every byte each connection sent."""

    def __init__(self, respond):
        self.respond = respond
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/search"

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        conn.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                body += chunk
            data = head + b"\r\n\r\n" + body
            self.received.append(data)
            self.respond(conn, data)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def all_bytes(self) -> bytes:
        return b"".join(self.received)

    def close(self):
        self._stop = True
        self.sock.close()


def reply(status="200 OK", body=b"[]", headers=()):
    def respond(conn, _):
        hs = "".join(f"{h}\r\n" for h in headers)
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n{hs}\r\n".encode()
                     + body)
    return respond


class PgRecorder:
    """A TCP listener that answers a PostgreSQL startup: refuses SSL ('N'), then asks for a password
    (``auth`` 3 = cleartext, 5 = md5) and records every byte the client sends: ``received`` has one
    entry per connection, updated before each answer, so a client that got an answer is recorded."""

    def __init__(self, auth: int = 5) -> None:
        self.auth = auth
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        conn.settimeout(3)
        data = b""
        asked = False
        with self._lock:
            self.received.append(data)
            slot = len(self.received) - 1
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
                self.received[slot] = data  # before the answer: the client goes on only after it
                if data.endswith(struct.pack("!ii", 8, 80877103)) or data.endswith(struct.pack("!ii", 8, 80877104)):
                    conn.sendall(b"N")  # no SSL, no GSS encryption
                elif not asked and len(data) > 8:
                    asked = True
                    if self.auth == 5:
                        conn.sendall(b"R" + struct.pack("!ii", 12, 5) + b"salt")
                    else:
                        conn.sendall(b"R" + struct.pack("!ii", 8, self.auth))
        except OSError:
            pass
        finally:
            conn.close()

    def all_bytes(self) -> bytes:
        return b"".join(self.received)

    def close(self) -> None:
        self.sock.close()
