"""An SMTP submission sink for Metnos tests: aiosmtpd on 127.0.0.1, AUTH
PLAIN/LOGIN required (no TLS on loopback), every accepted message written to
a folder as <n>.eml with <n>.json (envelope and the authenticated user).
Recipients at rejected.example are refused with 550.

usage: python3 smtp-sink.py <port> <user> <password> <folder> [<cert.pem> <key.pem>]
With a certificate, STARTTLS is offered and required before AUTH.
Prints "READY <port>" once listening; stops on SIGTERM or when stdin closes.
"""

import asyncio
import json
import logging
import os
import signal
import ssl
import sys
import warnings

# loopback without TLS is the point of a test sink: no warnings about it on stderr
warnings.simplefilter("ignore")
logging.getLogger("mail.log").setLevel(logging.CRITICAL)

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, user, password, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
tls_context = None
if len(sys.argv) > 6:
    tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_context.load_cert_chain(sys.argv[5], sys.argv[6])


def authenticator(server, session, envelope, mechanism, auth_data):
    if not isinstance(auth_data, LoginPassword):
        return AuthResult(success=False, handled=False)
    good = auth_data.login.decode() == user and auth_data.password.decode() == password
    return AuthResult(success=good, handled=False, auth_data=auth_data.login.decode() if good else None)


class Sink:
    def __init__(self):
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # a domain that refuses every recipient, for tests of a refused send
        if address.lower().endswith("@rejected.example"):
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(folder, f"{self.count:04d}")
        with open(base + ".eml", "wb") as out:
            out.write(envelope.original_content or envelope.content)
        meta = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "user": session.auth_data if isinstance(session.auth_data, str) else None,
        }
        with open(base + ".json.tmp", "w") as out:
            json.dump(meta, out)
        os.rename(base + ".json.tmp", base + ".json")
        return "250 Message accepted for delivery"


controller = Controller(
    Sink(),
    hostname="127.0.0.1",
    port=port,
    auth_required=True,
    auth_require_tls=tls_context is not None,
    tls_context=tls_context,
    require_starttls=tls_context is not None,
    authenticator=authenticator,
    server_hostname="smtp.metnos.test",
)
controller.start()
print(f"READY {port}", flush=True)

stop = asyncio.Event()
loop = asyncio.new_event_loop()
loop.add_signal_handler(signal.SIGTERM, stop.set)
loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(4096) else None)
loop.run_until_complete(stop.wait())
controller.stop()
