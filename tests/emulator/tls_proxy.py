#!/usr/bin/env python3
"""tls_proxy.py PORT_FILE UPSTREAM_HOST UPSTREAM_PORT CERT KEY [CLIENT_CA]

A TLS front for a plain-HTTP service (the emulator tier's `shape schema-registry`),
so the registry client's https:// path — CA verification, a refused
certificate, client certificates — is tested against a real TLS handshake.
Listens on 127.0.0.1 (any port, written to PORT_FILE once listening),
terminates TLS with CERT/KEY, and when CLIENT_CA is given requires a client
certificate signed by it; bytes are then relayed both ways unchanged. Python's
standard library only (ssl, socket, threading)."""
import socket
import ssl
import sys
import threading


def relay(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, ctx, upstream):
    try:
        tls = ctx.wrap_socket(conn, server_side=True)
    except (ssl.SSLError, OSError):
        conn.close()
        return
    try:
        up = socket.create_connection(upstream)
    except OSError:
        tls.close()
        return
    threading.Thread(target=relay, args=(up, tls), daemon=True).start()
    relay(tls, up)


def main():
    port_file, host, port, cert, key = sys.argv[1:6]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if len(sys.argv) > 6:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(sys.argv[6])
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    import os
    os.rename(port_file + ".tmp", port_file)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, ctx, (host, int(port))), daemon=True).start()


if __name__ == "__main__":
    main()
