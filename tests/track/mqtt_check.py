"""hybridpublish to MQTT against a real broker (Debian's mosquitto) on
localhost: what subscribers receive equals the JSON lines of the file,
and a broker that goes away never stalls the pipeline and is found again
when it comes back.  TAP output.

  mqtt_check.py --gst-launch gst-launch-1.0 --work DIR --model BALL-symbol.json
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Broker:
    def __init__(self, port):
        self.port = port
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["mosquitto", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_listening(self.port):
            raise RuntimeError(f"mosquitto did not listen on port {self.port}")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


PROBE = "probe"


class Subscriber:
    """mosquitto_sub on the topic, its messages (one JSON object each).

    Started only once it receives a probe published to the topic, so that
    a loaded machine cannot make it miss the first frames."""

    def __init__(self, port, topic, path):
        self.path = path
        self.out = open(path, "w")
        self.proc = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port),
                                      "-t", topic], stdout=self.out,
                                     stderr=subprocess.DEVNULL)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", topic,
                            "-m", PROBE], check=True)
            time.sleep(0.1)
            with open(path) as f:
                if PROBE in f.read():
                    return
        raise RuntimeError("mosquitto_sub received nothing within 20 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        self.out.close()
        with open(self.path) as f:
            return [line.rstrip("\n") for line in f
                    if line.strip() and line.strip() != PROBE]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what):
        self.n += 1
        self.failed += not ok
        print(f"{'ok' if ok else 'not ok'} {self.n} - {what}", flush=True)


def pipeline(args, frames, out, port, topic, live):
    return [args.gst_launch, "-q", "videotestsrc", f"num-buffers={frames}", "pattern=ball",
            f"is-live={'true' if live else 'false'}", "!",
            "video/x-raw,format=RGB,width=160,height=120,framerate=30/1", "!",
            "hybridinfer", f"model={args.model}", "interval=2", "!", "hybridtrack", "!",
            "hybridpublish", f"location={out}", "mqtt-host=127.0.0.1",
            f"mqtt-port={port}", f"mqtt-topic={topic}", "!", "fakesink", "sync=false"]


def read_lines(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gst-launch", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    if not all(shutil.which(p) for p in ("mosquitto", "mosquitto_sub", "mosquitto_pub")):
        print("1..0 # SKIP mosquitto, mosquitto_sub and mosquitto_pub are not installed "
              "(tools/setup.sh test)")
        return 0
    os.makedirs(args.work, exist_ok=True)
    tap = Tap()
    topic = "hybridinfer/test"

    # 1. Every message a subscriber gets is a line of the file, in order.
    port = free_port()
    broker = Broker(port)
    broker.start()
    try:
        sub = Subscriber(port, topic, os.path.join(args.work, "sub1.txt"))
        out = os.path.join(args.work, "mqtt1.jsonl")
        subprocess.run(pipeline(args, 45, out, port, topic, live=True), check=True,
                       timeout=60)
        time.sleep(0.3)
        got = sub.stop()
        lines = read_lines(out)
        frames = [json.loads(m)["frame"] for m in got]
        tap.check(len(lines) == 45 and len(got) >= 35 and all(m in lines for m in got)
                  and frames == sorted(frames) and any(json.loads(m)["objects"] for m in got),
                  f"broker up: {len(got)} of {len(lines)} frames received, each a line "
                  "of the file, in order (the first ones go before the connection is up)")
    finally:
        broker.kill()

    # 2. The broker dies at 2 s and comes back at once: the 7 s live
    # pipeline ends on time with every line in its file, and messages flow
    # again once the client has reconnected (its first retry, 1 s after
    # the loss; the next would come 4 s after that).
    broker = Broker(port)
    broker.start()
    try:
        out = os.path.join(args.work, "mqtt2.jsonl")
        sub = Subscriber(port, topic, os.path.join(args.work, "sub2a.txt"))
        start = time.monotonic()
        proc = subprocess.Popen(pipeline(args, 210, out, port, topic, live=True))
        time.sleep(2.0)
        broker.kill()
        before = sub.stop()
        time.sleep(0.1)
        broker.start()
        sub = Subscriber(port, topic, os.path.join(args.work, "sub2b.txt"))
        rc = proc.wait(timeout=60)
        took = time.monotonic() - start
        time.sleep(0.3)
        after = sub.stop()
        lines = read_lines(out)
        last_before = max((json.loads(m)["frame"] for m in before), default=-1)
        first_after = min((json.loads(m)["frame"] for m in after), default=-1)
        tap.check(rc == 0 and took < 9.5 and len(lines) == 210,
                  f"broker lost at 2 s: the 7 s pipeline took {took:.1f} s, "
                  f"{len(lines)} of 210 lines in the file")
        tap.check(len(before) >= 30 and len(after) >= 60 and first_after > last_before,
                  f"{len(before)} messages before the loss (last frame {last_before}), "
                  f"{len(after)} after the reconnection (from frame {first_after})")
    finally:
        broker.kill()

    # 3. No broker at all: frames never wait (300 frames as fast as they come).
    out = os.path.join(args.work, "mqtt3.jsonl")
    start = time.monotonic()
    rc = subprocess.run(pipeline(args, 300, out, free_port(), topic, live=False),
                        timeout=60).returncode
    took = time.monotonic() - start
    tap.check(rc == 0 and len(read_lines(out)) == 300 and took < 8.0,
              f"no broker: 300 frames in {took:.1f} s, every line in the file")

    # 4. A topic no one may publish to is an error at start naming it.
    res = subprocess.run(pipeline(args, 5, out, port, "results/#", live=False),
                         capture_output=True, text=True, timeout=60)
    tap.check(res.returncode != 0 and "results/#" in res.stdout + res.stderr,
              "a wildcard topic fails the start, naming the topic")

    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
