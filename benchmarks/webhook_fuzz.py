"""Fuzz: ≥ 10,000 generated and mutated AdmissionReviews against the real TLS server; zero 5xx, zero crashes.

hypothesis generates three kinds of bodies: arbitrary bytes, arbitrary JSON, and real reviews (the
shared samples of every accounted kind, labelled for the benchmark queue) mutated by deleting keys,
replacing values with arbitrary JSON, and changing types. Every body is posted to ``/validate`` or
``/mutate``; the run fails on any 5xx, a well-formed review answered with anything but 200 and its
own uid, a 200 that is not an AdmissionReview, or a dead server; it reports how many reviews hit
the internal-error path (a decision that raised), which must be zero.

Then the attack classes of issue #11 (item 9), each against the same server: integer literals of 5,000
digits, quantities ``1e500000``/``1e900000`` in a RayJob, a 100 MB chunked body (must be refused with 413
while streaming; the server's peak RSS, ``VmHWM``, is reported), clients that disconnect mid-body, and a
concurrency probe: ``/healthz`` is polled every 10 ms while 4 threads post absurd reviews, and its worst
latency is reported. Usage::

    .venv/bin/python benchmarks/webhook_fuzz.py [--examples 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import ssl
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import yaml
from _common import NAMESPACE, QUEUE, SAMPLES, Server, review
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

KINDS = {"Job", "RayJob", "RayCluster", "RayService", "PyTorchJob", "AppWrapper", "JobSet"}
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)


def base_objects() -> list[dict[str, Any]]:
    out = []
    for path in sorted(glob.glob(str(SAMPLES / "*" / "*.yaml"))):
        for doc in yaml.safe_load_all(Path(path).read_text()):
            if isinstance(doc, dict) and doc.get("kind") in KINDS:
                meta = doc.setdefault("metadata", {})
                meta["namespace"] = NAMESPACE
                meta["labels"] = {**(meta.get("labels") or {}), "kueue.x-k8s.io/queue-name": QUEUE}
                out.append(doc)
    return out


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            found += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += paths(v, (*prefix, i))
    return found


@st.composite
def mutated_review(draw: st.DrawFn, objects: list[dict[str, Any]]) -> bytes:
    body = review(copy.deepcopy(draw(st.sampled_from(objects))))
    if draw(st.booleans()):
        body["request"]["object"]["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name")
    for _ in range(draw(st.integers(1, 6))):
        candidates = paths(body)[1:]
        if not candidates:
            break
        target = draw(st.sampled_from(candidates))
        parent = body
        for key in target[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["delete", "replace", "stringify"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[target[-1]]
        elif action == "replace":
            parent[target[-1]] = draw(JSON)
        else:
            parent[target[-1]] = str(parent[target[-1]])
    return json.dumps(body).encode()


def vm_hwm_kib(pid: int) -> int:
    """Peak resident set size of a process (KiB), from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def absurd_rayjob(objects: list[dict[str, Any]], quantity: str) -> bytes:
    """A RayJob review whose every container asks for ``quantity`` CPUs."""
    rayjob = copy.deepcopy(next(o for o in objects if o["kind"] == "RayJob"))
    for spec in paths(rayjob):
        if spec and spec[-1] == "containers":
            node: Any = rayjob
            for key in spec:
                node = node[key]
            for container in node:
                container.setdefault("resources", {})["requests"] = {"cpu": quantity}
    return json.dumps(review(rayjob)).encode()


def attack_classes(server: Server, client: httpx.Client, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue #11 item 9 classes; returns status counts, worst /healthz latency and peak RSS."""
    import socket
    import threading
    import time

    statuses: Counter[str] = Counter()
    job = json.dumps(review(next(o for o in objects if o["kind"] == "Job"))).encode()
    huge_int = job.replace(b'"apiVersion": "batch/v1"', b'"apiVersion": "batch/v1", "n": ' + b"9" * 5000, 1)
    attacks = [
        huge_int,
        absurd_rayjob(objects, "1e500000"),
        absurd_rayjob(objects, "1e900000"),
        absurd_rayjob(objects, "9" * 70),
    ]
    for body in attacks:
        statuses[str(client.post("/validate", content=body).status_code)] += 1

    def chunks() -> Any:
        piece = b"x" * (1024 * 1024)
        for _ in range(100):
            yield piece

    try:
        statuses[str(client.post("/validate", content=chunks()).status_code)] += 1
    except httpx.HTTPError:  # the server may close the connection after the 413, before the client reads it
        statuses["413-closed"] += 1
    context = ssl.create_default_context(cafile=str(server.cert))
    for _ in range(50):  # clients that go away mid-body
        with (
            socket.create_connection(("127.0.0.1", server.port)) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            tls.sendall(b'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{"apiVersion":')
        statuses["disconnected"] += 1
    worst = 0.0
    stop = threading.Event()

    def hammer() -> None:
        with httpx.Client(base_url=server.url, verify=context, timeout=30) as c:
            while not stop.is_set():
                for body in attacks:
                    c.post("/validate", content=body)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    probe = httpx.Client(base_url=server.url, verify=context, timeout=30)
    deadline = time.monotonic() + 10
    polls = 0
    while time.monotonic() < deadline:
        started = time.perf_counter()
        assert probe.get("/healthz").status_code == 200
        worst = max(worst, time.perf_counter() - started)
        polls += 1
        time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join()
    probe.close()
    assert server.proc.poll() is None, "server died"
    return {
        "statuses": dict(statuses),
        "healthz_polls": polls,
        "healthz_worst_ms": round(worst * 1000, 1),
        "server_peak_rss_mib": round(vm_hwm_kib(server.proc.pid) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compiled",
        type=Path,
        help="run the server from a `webhook/compile.py --out` directory (as the image does)",
    )
    args = parser.parse_args()
    objects = base_objects()
    stats: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), args.compiled.resolve() if args.compiled else None)
        client = httpx.Client(
            base_url=server.url, verify=ssl.create_default_context(cafile=str(server.cert)), timeout=10
        )
        bodies = st.one_of(
            st.binary(max_size=200),
            JSON.map(lambda v: json.dumps(v).encode()),
            JSON.map(
                lambda v: json.dumps(
                    review(v if isinstance(v, dict) else {"kind": "Job", "spec": v})
                ).encode()
            ),
            mutated_review(objects),
            mutated_review(objects),
            mutated_review(objects),
        )

        @seed(args.seed)
        @settings(max_examples=args.examples, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(body=bodies, endpoint=st.sampled_from(["/validate", "/mutate"]))
        def post(body: bytes, endpoint: str) -> None:
            response = client.post(endpoint, content=body, headers={"content-type": "application/json"})
            stats[str(response.status_code)] += 1
            assert response.status_code < 500, (response.status_code, body[:300])
            if response.status_code == 200:
                answer = response.json()
                assert answer["kind"] == "AdmissionReview"
                assert answer["response"]["uid"] == json.loads(body)["request"]["uid"]
                stats["allowed" if answer["response"]["allowed"] else "denied"] += 1
            else:
                assert response.status_code in (400, 413) and "reason" in response.json()
            assert server.proc.poll() is None, "server died"

        try:
            post()
            metrics = client.get("/metrics").text
            internal = sum(
                float(line.rsplit(" ", 1)[1])
                for line in metrics.splitlines()
                if line.startswith("batchplane_webhook_reviews_total{") and 'reason="internal-error"' in line
            )
            stats["internal-error"] = int(internal)
            attacks = attack_classes(server, client, objects)
        finally:
            client.close()
            server.stop()
    total = sum(v for k, v in stats.items() if k.isdigit())
    print(f"{total} reviews posted: " + ", ".join(f"{k}: {v}" for k, v in sorted(stats.items())))
    ok = all(not k.startswith("5") for k in stats) and stats["internal-error"] == 0
    ok = ok and all(not k.startswith("5") for k in attacks["statuses"])
    print(f"attack classes: {json.dumps(attacks)}")
    print("5xx: 0, crashes: 0, internal errors: 0" if ok else "FAILED")


if __name__ == "__main__":
    main()
