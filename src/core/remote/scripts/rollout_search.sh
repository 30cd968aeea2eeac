say cwd-real "$(cd {{cwd}} 2>/dev/null && pwd -P)"
find {{home}}/sessions -name 'rollout-*.jsonl' -type f -newer {{stamp}} 2>/dev/null | while IFS= read -r f; do
  { printf '%s\n' "$f"; head -c {{meta_bytes}} "$f" | head -n 1; } > "$t/cand" && frame rollout "$t/cand"
done
