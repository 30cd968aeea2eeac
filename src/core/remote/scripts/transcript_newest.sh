for d in "$root/$p1" "$root/$p2"; do
  for c in "$d"/*.jsonl; do
    [ -f "$c" ] && [ -n "$(find "$c" -prune -newer "$stamp" 2>/dev/null)" ] && echo "$c"
  done
done | sort -u > "$t/found"
[ "$(wc -l < "$t/found" | tr -d ' ')" = 1 ] && f=$(cat "$t/found")
