s={{path}}
if [ -f "$s" ]; then
  n=$(wc -c < "$s" | tr -d ' ')
  if [ "$n" -gt {{max}} ]; then say signal-large "$n"
  elif head -c {{max}} "$s" > "$t/sig" 2>/dev/null; then frame signal "$t/sig"; fi
fi
