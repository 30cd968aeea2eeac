#!/usr/bin/env bash
# What a live agent costs herd beside what it costs tmux, at fleet sizes (issue #29): N agents,
# each printing RATE coloured agent-style lines a second (a tool line scrolls up, the spinner
# status row below it is redrawn in place, as Claude Code does), held for WINDOW seconds by
#   1. a tmux server (one window per agent, 120x40): the server's CPU and RSS;
#   2. herd headless (`sim` profile, Claude-style detector rules, 120x40): herd's CPU and RSS;
#   3. herd's dashboard in a 200x60 tmux window: herd's CPU and RSS, and meanwhile the time from
#      a key (`?`, sent through a tmux control client) to the first frame showing the help
#      window (its footer, read from the pane's output), then Esc, every ~0.3 s.
# CPU is the time the scheduler ran the one process (threads included, agents not) over the
# window, as % of one core (see `cpu_of` for why not /proc/PID/stat's tick count, which each
# round still prints beside); also the agents' own CPU in each setup (the check that every
# setup's agents did the same work). The three are measured in the same round, ROUNDS times per N; the table gives
# medians and the median of each round's ratio. Needs tmux and python3; not a test.
#   benches/fleet.sh                           AGENTS="40 200" ROUNDS=3 WINDOW=20 RATE=10
#   AGENTS=40 ROUNDS=1 WINDOW=10 benches/fleet.sh    a quick look
set -euo pipefail
cd "$(dirname "$0")/.."

AGENTS=${AGENTS:-"40 200"}
ROUNDS=${ROUNDS:-3}
WINDOW=${WINDOW:-20}
WARMUP=${WARMUP:-5}
RATE=${RATE:-10}

command -v tmux >/dev/null || { echo "tmux is not installed (apt-get install tmux)" >&2; exit 2; }
# HERD_BIN: a herd built elsewhere (another version, to compare), instead of this tree's.
[ -n "${HERD_BIN:-}" ] || cargo build --release --quiet
herd=${HERD_BIN:-$PWD/target/release/herd}
work=$(mktemp -d)
tsock=herd-fleet-tmux-$$
dsock=herd-fleet-dash-$$
cleanup() {
  tmux -L "$tsock" kill-server 2>/dev/null || true
  tmux -L "$dsock" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# The interpreter itself, not a wrapper script (pyenv's shims) started per agent.
python=$(python3 -c 'import sys; print(sys.executable)')

# One agent: a tool line every 1/RATE s from a random phase, the spinner row redrawn below it.
cat > "$work/agent.py" <<'PY'
import os, random, sys, time
rate = float(sys.argv[1])
out = os.fdopen(sys.stdout.fileno(), "wb", buffering=0)
spin = "·✢✳✶✻✽"
start = time.monotonic()
next_at = start + random.random() / rate
n = 0
while True:
    time.sleep(max(0.0, next_at - time.monotonic()))
    next_at += 1 / rate
    if n % 5 == 0:
        line = f"\x1b[1m●\x1b[0m Bash(cargo test --package herd --lib core::stream::{n})"
    else:
        line = (f"  ⎿  test core::stream::tests::case_{n:07} ... \x1b[32mok\x1b[0m"
                f"   \x1b[2m│ {'x' * 24} │\x1b[0m")
    status = (f"\x1b[38;5;174m{spin[n % 6]}\x1b[0m Working… ({int(time.monotonic() - start)}s"
              f" · ↑ {n % 97}k tokens · esc to interrupt)")
    out.write(f"\r\x1b[2K{line}\r\n{status}".encode())
    n += 1
PY

# The dashboard's key latency: `?` through a control client, then the help's footer in the
# pane's output; Esc closes it. Prints one sample (ms) a line, "miss" for no frame within 1 s.
cat > "$work/probe.py" <<'PY'
import random, re, subprocess, sys, threading, time
sock, session, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
ctl = subprocess.Popen(["tmux", "-L", sock, "-C", "attach", "-t", session],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
seen = threading.Event()
armed = threading.Event()
octal = re.compile(rb"\\([0-7]{3})")
def read():
    tail = b""
    for line in ctl.stdout:
        if not line.startswith(b"%output "):
            continue
        data = octal.sub(lambda m: bytes([int(m.group(1), 8)]), line.split(b" ", 2)[2].rstrip(b"\n"))
        window = tail + data  # the word may straddle two pieces
        tail = window[-8:]
        if armed.is_set() and b"closes" in window:
            armed.clear()
            seen.set()
threading.Thread(target=read, daemon=True).start()
def send(keys):
    ctl.stdin.write(f"send-keys -t {session} {keys}\n".encode())
end = time.monotonic() + seconds
time.sleep(0.5)
while time.monotonic() < end:
    seen.clear()
    armed.set()
    start = time.perf_counter()
    send("'?'")
    ok = seen.wait(1.0)
    took = (time.perf_counter() - start) * 1000
    armed.clear()
    print(f"{took:.3f}" if ok else "miss", flush=True)
    time.sleep(0.05)
    send("Escape")
    time.sleep(0.2 + random.random() * 0.1)
ctl.stdin.close()
ctl.wait(timeout=5)
PY

# A fresh tasks file of N agents (herd writes each run's statuses into it).
tasks_for() {
  python3 - "$1" "$python" "$work/agent.py" "$RATE" > "$work/tasks_$1.json" <<'PY'
import json, sys
n, python, agent, rate = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
tasks = [{"task_id": f"a{i:03}", "agent": "sim", "timeout_sec": 3600,
          "command": [python, agent, rate], "prompt_template": "x"} for i in range(n)]
print(json.dumps({"run_id": "fleet", "tasks": tasks}))
PY
}

# CPU seconds of one process (threads included, children not), as the scheduler counts them:
# the sum of its threads' run time in `/proc/PID/task/*/schedstat` (nanoseconds). Not the user +
# system time of `/proc/PID/stat`: on a kernel with tick-based accounting that is a count of the
# timer ticks (every 4 ms here) that found the process running, and a process woken for ~60 us
# right after an agent's timer fired, as the tmux server is 650 times a second, is seldom running
# at a tick: on this VM it gave the tmux server 0.7-1.9 % where the scheduler, `perf stat -e
# task-clock` and system-wide `perf record` sampling all gave 4.2-4.4 %, while for herd the two
# agree within a tenth. `ticks_of` keeps that count, printed beside for comparison. A thread
# that ends within the window is missed (none does while the agents run).
cpu_of() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ns += $1} END {printf "%.6f\n", ns / 1e9}'
}
ticks_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
pct() { echo "scale=2; 100 * ($2 - $1) / $WINDOW" | bc; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
# Waits until N agents of a herd run have written output (their recordings are flushed).
wait_agents() {
  for _ in $(seq 600); do
    local started
    started=$({ find "$1" -name 'attempt_*.log' -size +0 2>/dev/null || true; } | wc -l)
    [ "$started" -ge "$2" ] && return 0
    sleep 0.2
  done
  echo "only $started of $2 agents started" >&2
  return 1
}
# CPU seconds of every agent process (all of them run agent.py; one setup runs at a time).
agents_cpu() {
  local total=0 pid
  for pid in $(pgrep -f "$work/agent.py" || true); do
    total=$(echo "$total + $(cpu_of "$pid" 2>/dev/null || echo 0)" | bc)
  done
  echo "$total"
}
# Measures process $1 over the window: prints "cpu% rss_mb agents_cpu%". The agents' CPU is the
# check that each setup's agents did the same work: an agent that stalls or died costs its
# holder nothing.
measure() {
  local before after agents_before agents_after ticks_before ticks_after
  agents_before=$(agents_cpu)
  before=$(cpu_of "$1")
  ticks_before=$(ticks_of "$1")
  sleep "$WINDOW"
  after=$(cpu_of "$1")
  ticks_after=$(ticks_of "$1")
  agents_after=$(agents_cpu)
  echo "$(pct "$before" "$after") $(rss_mb "$1") $(pct "$agents_before" "$agents_after")" \
    "$(pct "$ticks_before" "$ticks_after")"
}
stop_pid() {
  kill -INT "$1" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -INT "$1" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
}

results=$work/results.txt
: > "$results"
for n in $AGENTS; do
  for round in $(seq "$ROUNDS"); do
    # 1. tmux
    tmux -L "$tsock" -f /dev/null new-session -d -x 120 -y 40 -s fleet "sleep 3600"
    for _ in $(seq "$n"); do tmux -L "$tsock" new-window -d "exec $python $work/agent.py $RATE"; done
    server=$(tmux -L "$tsock" display -p '#{pid}')
    sleep "$WARMUP"
    read -r t_cpu t_rss t_agents t_ticks < <(measure "$server")
    tmux -L "$tsock" kill-server

    # 2. herd headless
    rm -rf "$work/runs"
    tasks_for "$n"
    "$herd" run --headless --tasks "$work/tasks_$n.json" --runs-dir "$work/runs" \
      --concurrency "$n" --pty-size 120x40 > "$work/headless.out" 2>&1 &
    hpid=$!
    wait_agents "$work/runs" "$n"
    sleep "$WARMUP"
    read -r h_cpu h_rss h_agents h_ticks < <(measure "$hpid")
    stop_pid "$hpid"
    wait "$hpid" 2>/dev/null || true

    # 3. herd's dashboard in tmux, 200x60, with the key probe running meanwhile
    rm -rf "$work/runs"
    tasks_for "$n"
    tmux -L "$dsock" -f /dev/null new-session -d -x 200 -y 60 -s dash \
      "exec env TERM=xterm-256color $herd run --tasks $work/tasks_$n.json --runs-dir $work/runs --concurrency $n"
    dpid=$(tmux -L "$dsock" display -p -t dash '#{pane_pid}')
    wait_agents "$work/runs" "$n"
    sleep "$WARMUP"
    python3 "$work/probe.py" "$dsock" dash "$WINDOW" > "$work/keys_${n}_$round.txt" &
    probe=$!
    read -r d_cpu d_rss d_agents d_ticks < <(measure "$dpid")
    wait "$probe" || true
    stop_pid "$dpid"
    tmux -L "$dsock" kill-server 2>/dev/null || true

    keys=$(python3 - "$work/keys_${n}_$round.txt" <<'PY'
import sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip()]
s = sorted(float(l) for l in lines if l != "miss")
miss = len(lines) - len(s)
pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")
print(f"{pick(0.5):.1f} {pick(0.99):.1f} {len(s)} {miss}")
PY
)
    echo "$n $round $t_cpu $t_rss $h_cpu $h_rss $d_cpu $d_rss $keys $t_agents $h_agents $d_agents $t_ticks $h_ticks $d_ticks" | tee -a "$results" >&2
  done
done

printf '\nherd vs tmux, %s agents x %s lines/s, %s s windows, %s (%s cores, load %s)\n' \
  "$AGENTS" "$RATE" "$WINDOW" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$work" <<'PY'
import glob, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def keys(n):  # every round's key samples together
    lines = [l.strip() for f in glob.glob(f"{sys.argv[2]}/keys_{n}_*.txt") for l in open(f) if l.strip()]
    s = sorted(float(l) for l in lines if l != "miss")
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")
    return pick(0.5), pick(0.99), len(s), len(lines) - len(s)
med = statistics.median
print(f"{'agents':>6} {'rounds':>6} {'tmux CPU%':>9} {'headless CPU%':>13} {'x tmux':>6}"
      f" {'dash CPU%':>9} {'x tmux':>6} {'tmux MB':>7} {'headless MB':>11} {'dash MB':>7}"
      f" {'key p50 ms':>10} {'key p99 ms':>10}")
for n in dict.fromkeys(r[0] for r in rows):
    rs = [[float(x) for x in r[2:]] for r in rows if r[0] == n]
    col = lambda i: med(r[i] for r in rs)
    ratio = lambda i: med(r[i] / r[0] for r in rs if r[0] > 0) if any(r[0] > 0 for r in rs) else float("nan")
    print(f"{n:>6} {len(rs):>6} {col(0):>9.1f} {col(2):>13.1f} {ratio(2):>6.1f}"
          f" {col(4):>9.1f} {ratio(4):>6.1f} {col(1):>7.1f} {col(3):>11.1f} {col(5):>7.1f}"
          f" {keys(n)[0]:>10.1f} {keys(n)[1]:>10.1f}")
    for r in rs:
        print(f"{'':>6} round: tmux {r[0]:.1f}%  headless {r[2]:.1f}%  dashboard {r[4]:.1f}%"
              f"  RSS {r[1]:.0f}/{r[3]:.0f}/{r[5]:.0f} MB  keys p50 {r[6]:.1f} p99 {r[7]:.1f} ms"
              f" ({int(r[8])} keys, {int(r[9])} missed)"
              f"  agents' own CPU {r[10]:.1f}/{r[11]:.1f}/{r[12]:.1f}%"
              f"  tick-counted CPU {r[13]:.1f}/{r[14]:.1f}/{r[15]:.1f}%")
    print(f"{'':>6} keys of all rounds: p50 %.1f ms, p99 %.1f ms, %d keys, %d missed" % keys(n))
PY
