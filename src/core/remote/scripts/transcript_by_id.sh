for c in "$root/$p1/{{id}}.jsonl" "$root/$p2/{{id}}.jsonl" "$root"/*/{{id}}.jsonl; do
  [ -f "$c" ] && { f=$c; break; }
done
