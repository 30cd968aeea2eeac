#!/usr/bin/env bash
# herd beside tmux, in the same run on the same machine (speed and memory targets live here,
# never in timed tests):
#   1. one pane's throughput: an agent-style stream of STREAM_MB MB through one pane until the
#      command ends — herd (headless, `generic` profile, marker at the end) vs a tmux pane;
#      wall time and the CPU of herd / of the tmux server;
#   2. memory with full scrollbacks: AGENTS agents each printing LINES lines of ~80 columns,
#      then idle; herd's RSS vs the tmux server's RSS (each with the same output held).
# Prints a table with ratios (herd / tmux). Needs tmux and python3 (to write the stream).
#   benches/vs_tmux.sh                       defaults: STREAM_MB=20 AGENTS=40 LINES=2500 RUNS=3
#   STREAM_MB=5 RUNS=1 benches/vs_tmux.sh    a quick look
set -euo pipefail
cd "$(dirname "$0")/.."

STREAM_MB=${STREAM_MB:-20}
AGENTS=${AGENTS:-40}
LINES=${LINES:-2500}
RUNS=${RUNS:-3}

command -v tmux >/dev/null || { echo "tmux is not installed (apt-get install tmux)" >&2; exit 2; }
cargo build --release --quiet
herd=$PWD/target/release/herd
work=$(mktemp -d)
sock=herd-bench-$$
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# An agent-style stream: coloured tool lines, spinner redraws in place, box drawing.
python3 - "$STREAM_MB" > "$work/stream.txt" <<'PY'
import sys
target = int(sys.argv[1]) * 1024 * 1024
out, n, size = [], 0, 0
spin = "·✢✳✶✻✽"
while size < target:
    if n % 10 == 9:
        line = f"\x1b[2K\r\x1b[38;5;174m{spin[n % 6]}\x1b[0m Working… ({n // 10}s · esc to interrupt)\r\n"
    elif n % 10 == 0:
        line = f"\x1b[1m●\x1b[0m Bash(cargo test --package herd --lib core::stream::{n})\r\n"
    else:
        line = f"  ⎿  test core::stream::tests::case_{n:07} ... \x1b[32mok\x1b[0m   │ {'x' * 24} │\r\n"
    out.append(line)
    size += len(line.encode())
    n += 1
sys.stdout.write("".join(out))
PY
stream_bytes=$(stat -c %s "$work/stream.txt")

# CPU seconds (user + system) of a process from /proc.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15 + $16 + $17) / hz}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

# --- 1. throughput -----------------------------------------------------------------------
herd_tasks() {
  cat > "$work/one.json" <<JSON
{"run_id": "bench", "tasks": [{"task_id": "stream", "agent": "generic", "timeout_sec": 600,
  "command": ["sh", "-c", "cat $work/stream.txt; echo TASK_COMPLETE:stream"],
  "prompt_template": "stream"}]}
JSON
}
herd_wall=(); herd_cpu=(); tmux_wall=(); tmux_cpu=()
for _ in $(seq "$RUNS"); do
  herd_tasks
  rm -rf "$work/runs"
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/time" "$herd" run --headless --tasks "$work/one.json" \
    --runs-dir "$work/runs" --pty-size 120x40 > /dev/null
  end=$(date +%s.%N)
  herd_wall+=("$(echo "$end - $start" | bc)")
  herd_cpu+=("$(awk '{print $1 + $2}' "$work/time")")

  tmux -L "$sock" kill-server 2>/dev/null || true
  tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 -s idle "sleep 3600"
  server=$(tmux -L "$sock" display -p '#{pid}')
  before=$(cpu_of "$server")
  start=$(date +%s.%N)
  tmux -L "$sock" new-window -d "cat $work/stream.txt; echo TASK_COMPLETE:stream; tmux -L $sock wait-for -S done"
  tmux -L "$sock" wait-for done
  end=$(date +%s.%N)
  after=$(cpu_of "$server")
  tmux_wall+=("$(echo "$end - $start" | bc)")
  tmux_cpu+=("$(echo "$after - $before" | bc)")
  tmux -L "$sock" kill-server
done
hw=$(printf '%s\n' "${herd_wall[@]}" | median); tw=$(printf '%s\n' "${tmux_wall[@]}" | median)
hc=$(printf '%s\n' "${herd_cpu[@]}" | median); tc=$(printf '%s\n' "${tmux_cpu[@]}" | median)

# --- 2. memory with full scrollbacks ----------------------------------------------------------
printer="i=0; while [ \$i -lt $LINES ]; do printf 'line %06d %s\\n' \$i 'abcdefghijklmnopqrstuvwxyz0123456789 abcdefghijklmnopqrstuvwxyz012345'; i=\$((i+1)); done; echo READY; sleep 600"
python3 - "$AGENTS" "$printer" > "$work/many.json" <<'PY'
import json, sys
n, printer = int(sys.argv[1]), sys.argv[2]
tasks = [{"task_id": f"a{i:03}", "agent": "generic", "timeout_sec": 120,
          "command": ["sh", "-c", printer], "prompt_template": "x"} for i in range(n)]
print(json.dumps({"run_id": "mem", "tasks": tasks}))
PY
rm -rf "$work/runs"
"$herd" run --headless --tasks "$work/many.json" --runs-dir "$work/runs" \
  --concurrency "$AGENTS" --pty-size 80x24 > "$work/herd.out" 2>&1 &
herd_pid=$!
# Wait until every agent has printed all its lines (the recordings end with READY).
for _ in $(seq 600); do
  ready=$(grep -l READY "$work"/runs/*/attempt_1.log 2>/dev/null | wc -l || true)
  [ "$ready" -ge "$AGENTS" ] && break
  sleep 0.2
done
sleep 1
herd_rss=$(rss_kb "$herd_pid")
kill -INT "$herd_pid"; sleep 0.5; kill -INT "$herd_pid" 2>/dev/null || true; wait "$herd_pid" 2>/dev/null || true

tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 24 -s mem "sleep 3600"
tmux -L "$sock" set -g history-limit 2000000
for i in $(seq "$AGENTS"); do
  tmux -L "$sock" new-window -d "$printer"
done
for _ in $(seq 600); do
  ready=0
  for pane in $(tmux -L "$sock" list-panes -a -F '#{pane_id}'); do
    tmux -L "$sock" capture-pane -p -t "$pane" | grep -q READY && ready=$((ready + 1))
  done
  [ "$ready" -ge "$AGENTS" ] && break
  sleep 0.2
done
tmux_rss=$(rss_kb "$(tmux -L "$sock" display -p '#{pid}')")
tmux -L "$sock" kill-server

ratio() { echo "scale=2; $1 / $2" | bc; }
printf '\nherd vs tmux on %s (%s cores), %s\n' "$(uname -m)" "$(nproc)" "$(date -u +%Y-%m-%d)"
printf '%-44s %12s %12s %8s\n' "measure (median of $RUNS)" herd tmux "ratio"
printf '%-44s %12s %12s %8s\n' "one pane, ${STREAM_MB} MB stream: wall s" "$hw" "$tw" "$(ratio "$hw" "$tw")"
printf '%-44s %12s %12s %8s\n' "one pane, ${STREAM_MB} MB stream: CPU s" "$hc" "$tc" "$(ratio "$hc" "$tc")"
printf '%-44s %12s %12s %8s\n' "$AGENTS agents x $LINES lines held: RSS MB" \
  "$(echo "scale=1; $herd_rss / 1024" | bc)" "$(echo "scale=1; $tmux_rss / 1024" | bc)" "$(ratio "$herd_rss" "$tmux_rss")"
printf '(stream: %s bytes)\n' "$stream_bytes"
