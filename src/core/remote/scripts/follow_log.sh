l={{path}}
if [ -f "$l" ]; then
  n=$(wc -c < "$l" | tr -d ' ')
  [ "$n" -lt "$off" ] && off=0
  if [ "$n" -gt "$off" ]; then
    tail -c +$((off + 1)) "$l" | head -c {{max}} > "$t/log" && frame log "$t/log" "$off"
    off=$((off + $(wc -c < "$t/log" | tr -d ' ')))
  fi
fi
