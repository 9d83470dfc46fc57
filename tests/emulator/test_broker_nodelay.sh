# `shape broker` sets TCP_NODELAY on every client connection, as a Kafka
# broker does (src/plugins/kafka/broker_nodelay.c): without it a response
# written in pieces waits up to 40 ms for the client's delayed ACK (seen as
# ~45 ms stalls at the end of produce sends and in paced lateness).
# How: a cluster of two brokers with a control socket; a client (kcat -L)
# uses it; then connections held open to each broker's port are looked up
# in the broker process (/proc/PID/fd and /proc/PID/net/tcp{,6}), each
# accepted socket is copied out with pidfd_getfd(2) and its TCP_NODELAY read:
# every connection the broker accepted must have it. The same after
# `down 1` / `up 1`, which re-create broker 1's listener.
source "$(dirname "$0")/lib.sh"
skip_on_real_kafka "tests shape broker itself (TCP_NODELAY on its sockets)"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
# Python starts the broker itself: a parent may read its child's descriptors
# even where ptrace is limited to descendants (Yama ptrace_scope 1).
python3 - "$SHAPE_BIN" "$TEST_TMP" <<'PY' || fail "a client connection of shape broker has no TCP_NODELAY"
import ctypes, os, socket, subprocess, sys, time
shape, tmp = sys.argv[1], sys.argv[2]
control, bootstrap_file = os.path.join(tmp, "control"), os.path.join(tmp, "bootstrap")
with open(os.path.join(tmp, "broker.err"), "w") as err:
    broker = subprocess.Popen([shape, "broker", "--brokers", "2", "--topic", "nd:2", "--control", control,
                               "--bootstrap-file", bootstrap_file], stdout=subprocess.DEVNULL, stderr=err)
pid = broker.pid
for _ in range(100):
    if os.path.exists(bootstrap_file) and os.path.exists(control):
        break
    if broker.poll() is not None:
        raise SystemExit("shape broker exited: " + open(os.path.join(tmp, "broker.err")).read())
    time.sleep(0.1)
else:
    broker.kill()
    raise SystemExit("shape broker did not start in 10 s")
bootstraps = open(bootstrap_file).read().strip()
ports = [int(hp.rsplit(":", 1)[1]) for hp in bootstraps.split(",")]
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_getfd = 438  # the same number on every Linux architecture

def tcp_inodes(local_port, remote_port):
    found = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = open("/proc/%d/net/%s" % (pid, table)).read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            f = line.split()
            if int(f[1].rsplit(":", 1)[1], 16) == local_port and int(f[2].rsplit(":", 1)[1], 16) == remote_port:
                found.add(f[9])
    return found

def accepted_fd(port, client):
    """The broker's descriptor of the connection accepted from client."""
    for _ in range(100):
        # A connection not yet accepted is listed with inode 0: look again.
        inodes = tcp_inodes(port, client.getsockname()[1]) - {"0"}
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, name))
            except OSError:
                continue
            if link.startswith("socket:[") and link[8:-1] in inodes:
                return int(name)
        time.sleep(0.05)
    raise SystemExit("port %d: the broker accepted no connection from %s" % (port, client.getsockname()))

def check_all(when):
    pidfd = os.pidfd_open(pid)
    try:
        for port in ports:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
                fd = accepted_fd(port, client)
                copy = libc.syscall(SYS_pidfd_getfd, pidfd, fd, 0)
                if copy < 0:
                    raise SystemExit("pidfd_getfd: %s" % os.strerror(ctypes.get_errno()))
                with socket.socket(fileno=copy) as s:
                    nodelay = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                if not nodelay:
                    raise SystemExit("%s: the connection accepted on port %d has no TCP_NODELAY" % (when, port))
    finally:
        os.close(pidfd)
    print("ok: %s: %d connections accepted, each with TCP_NODELAY" % (when, len(ports)))

def command(line):
    with socket.socket(socket.AF_UNIX) as c:
        c.connect(control)
        c.sendall((line + "\n").encode())
        reply = c.makefile().readline().strip()
    if not reply.startswith("ok"):
        raise SystemExit("control %r: %s" % (line, reply))

try:
    meta = subprocess.run(["kcat", "-b", bootstraps, "-L", "-t", "nd"], capture_output=True, text=True, timeout=30)
    if 'topic "nd" with 2 partitions' not in meta.stdout:
        raise SystemExit("kcat -L did not see the topic: " + meta.stdout + meta.stderr)
    check_all("at start")
    command("down 1")
    command("up 1")
    check_all("after down 1 / up 1")
finally:
    broker.terminate()
    try:
        broker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        broker.kill()
        raise SystemExit("shape broker did not stop on SIGTERM")
PY
