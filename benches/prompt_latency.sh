#!/usr/bin/env bash
# How soon herd answers a permission prompt: from the moment an agent has written a Bash dialog
# (the simulator's Claude-style one, read and allowed by the guard under auto_press_1) to the
# moment the agent reads the answer key on its terminal. The agents measure it themselves, so the
# figure covers both PTY directions, the emulator, the detectors and the guard.
#   benches/prompt_latency.sh              TASKS=40 tasks x 5 prompts, 4 at once
#   TASKS=100 CONCURRENCY=8 benches/prompt_latency.sh
# Prints p50 / p90 / p99 / max in milliseconds. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."

TASKS=${TASKS:-40}
CONCURRENCY=${CONCURRENCY:-4}

# HERD_BIN: a herd built elsewhere (another version, to compare), instead of this tree's.
[ -n "${HERD_BIN:-}" ] || cargo build --release --quiet
herd=${HERD_BIN:-$PWD/target/release/herd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/agent.py" <<'PY'
import os, select, sys, termios, time, tty
task, out_file = sys.argv[1], sys.argv[2]
fd = sys.stdin.fileno()
tty.setraw(fd)
samples = []
for i in range(5):  # herd's cap of automatic answers per key and attempt is 5
    sys.stdout.write("\x1b[2J\x1b[H● Bash(echo latency-%d)\r\n\r\nBash command\r\n\r\n"
                     "   echo latency-%d\r\n   Print a line\r\n\r\nDo you want to proceed?\r\n"
                     "❯ 1. Yes\r\n  2. No\r\n" % (i, i))
    sys.stdout.flush()
    start = time.perf_counter()
    ready, _, _ = select.select([fd], [], [], 10)
    if not ready:
        break
    os.read(fd, 64)
    samples.append((time.perf_counter() - start) * 1000)
    sys.stdout.write("\x1b[2J\x1b[HWorking…\r\n")
    sys.stdout.flush()
    time.sleep(0.45)  # gone for longer than herd's settle time: the next dialog is a new one
with open(out_file, "a") as f:
    f.write("".join("%.3f\n" % s for s in samples))
sys.stdout.write("TASK_COMPLETE:%s\r\n" % task)
sys.stdout.flush()
PY

python3 - "$TASKS" "$work" > "$work/tasks.json" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
tasks = [{"task_id": f"p{i:03}", "agent": "sim", "timeout_sec": 60,
          "permission_policy": {"auto_press_1": True},
          "command": ["python3", f"{work}/agent.py", "{task_id}", f"{work}/samples.txt"],
          "prompt_template": "answer the prompts"} for i in range(n)]
print(json.dumps({"run_id": "latency", "tasks": tasks}))
PY

"$herd" run --headless --tasks "$work/tasks.json" --runs-dir "$work/runs" \
  --concurrency "$CONCURRENCY" > "$work/run.out" || { tail -20 "$work/run.out"; exit 1; }
python3 - "$work/samples.txt" "$TASKS" <<'PY'
import sys
samples = sorted(float(l) for l in open(sys.argv[1]))
n = len(samples)
pick = lambda q: samples[min(n - 1, int(q * n))]
print(f"prompt latency over {n} answers ({sys.argv[2]} tasks x 5 prompts): "
      f"p50 {pick(0.5):.2f} ms, p90 {pick(0.9):.2f} ms, p99 {pick(0.99):.2f} ms, max {samples[-1]:.2f} ms")
PY
