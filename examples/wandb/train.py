#!/usr/bin/env python3
"""A small trainer swept by examples/wandb/sweep.yaml, with nothing but the standard library.

It fits a noisy linear regression by SGD with momentum, taking its hyperparameters as W&B's agent passes
them (--lr=0.03 --momentum=0.9 --batch_size=16 --steps=300), and logs `train/loss` and `eval/loss` where
rlsweep reads a W&B config's metrics by default: TensorBoard event files under $RLSWEEP_TB_DIR (the
trainer contract, docs/trainer-contract.md). The event file is written by hand (TFRecord framing with
CRC-32C, an Event protobuf with one scalar), so no tensorboard package is needed. Without RLSWEEP_TB_DIR
it writes under ./runs.
"""
import argparse
import os
import random
import socket
import struct
import time


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num: int, wire: int, payload: bytes) -> bytes:
    return varint(num << 3 | wire) + payload


def length_delimited(num: int, payload: bytes) -> bytes:
    return field(num, 2, varint(len(payload)) + payload)


class EventWriter:
    """TensorBoard's tfevents format: records of (length, masked CRC of length, Event, masked CRC)."""

    def __init__(self, logdir: str):
        os.makedirs(logdir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}"
        self.f = open(os.path.join(logdir, name), "wb")
        self._write(field(1, 1, struct.pack("<d", time.time())) + length_delimited(3, b"brain.Event:2"))

    def _write(self, event: bytes):
        header = struct.pack("<Q", len(event))
        self.f.write(header + struct.pack("<I", masked_crc(header)) + event + struct.pack("<I", masked_crc(event)))
        self.f.flush()

    def scalar(self, tag: str, value: float, step: int):
        val = length_delimited(1, tag.encode()) + field(2, 5, struct.pack("<f", value))  # Summary.Value
        summary = length_delimited(1, val)
        self._write(field(1, 1, struct.pack("<d", time.time())) + field(2, 0, varint(step)) + length_delimited(5, summary))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--batch_size", type=lambda s: int(float(s)), default=16)  # W&B's q_uniform gives 16.0
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seed", type=int, default=int(os.environ.get("RLSWEEP_SEED", "0")))
    args = p.parse_args()

    rng = random.Random(args.seed)
    true_w = [rng.uniform(-2, 2) for _ in range(8)]

    def sample(n):
        xs = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(n)]
        return [(x, sum(a * b for a, b in zip(x, true_w)) + rng.gauss(0, 0.1)) for x in xs]

    def loss(w, data):
        return sum((sum(a * b for a, b in zip(x, w)) - y) ** 2 for x, y in data) / len(data)

    held_out = sample(256)
    w, v = [0.0] * 8, [0.0] * 8
    writer = EventWriter(os.environ.get("RLSWEEP_TB_DIR", "runs"))
    for step in range(1, args.steps + 1):
        batch = sample(args.batch_size)
        grad = [0.0] * 8
        for x, y in batch:
            err = sum(a * b for a, b in zip(x, w)) - y
            for i in range(8):
                grad[i] += 2 * err * x[i] / len(batch)
        v = [args.momentum * vi + g for vi, g in zip(v, grad)]
        w = [wi - args.lr * vi for wi, vi in zip(w, v)]
        if step % 10 == 0:
            writer.scalar("train/loss", loss(w, batch), step)
            writer.scalar("eval/loss", loss(w, held_out), step)
    print(f"lr={args.lr} momentum={args.momentum} batch_size={args.batch_size}: eval/loss {loss(w, held_out):.5f}")


if __name__ == "__main__":
    main()
