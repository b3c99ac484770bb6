# Opens N connections to 127.0.0.1:PORT, each sending a request line and a
# User-Agent of SIZE bytes with no closing CRLF (an unfinished header), and
# holds them for HOLD seconds. Connections the server does not accept wait
# in the kernel's backlog; the script opens what it can within HOLD seconds.
# Usage: python3 bench/slowconn.py N HOLD [PORT] [SIZE]
import random, socket, string, sys, time
n, hold = int(sys.argv[1]), float(sys.argv[2])
port = int(sys.argv[3]) if len(sys.argv) > 3 else 18181
size = int(sys.argv[4]) if len(sys.argv) > 4 else 62000
hdr = b'GET /f HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ' + ''.join(
    random.choice(string.ascii_letters) for _ in range(size)).encode()
t0, socks = time.time(), []
for i in range(n):
    if time.time() - t0 > hold:
        break
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.setblocking(False)
        try:
            s.send(hdr)
        except BlockingIOError:
            pass
        socks.append(s)
    except Exception as e:
        print("connect:", e); sys.stdout.flush()
print("opened", len(socks), "in", round(time.time() - t0, 1), "s"); sys.stdout.flush()
time.sleep(max(0, hold - (time.time() - t0)))
