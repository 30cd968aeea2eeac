s={{path}}
if [ -f "$s" ]; then
  n=$(wc -c < "$s" | tr -d ' ')
  if [ "$n" -gt {{max}} ]; then printf 'large %s' "$n" > "$t/sig"; else head -c {{max}} "$s" > "$t/sig" 2>/dev/null; fi
  if ! cmp -s "$t/sig" "$t/prev"; then
    cp "$t/sig" "$t/prev"
    if [ "$n" -gt {{max}} ]; then say signal-large "$n"; else frame signal "$t/sig"; fi
  fi
fi
