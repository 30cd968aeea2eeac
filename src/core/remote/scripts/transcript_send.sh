if [ -n "$f" ]; then tail -c {{max}} "$f" > "$t/tr" && frame transcript "$t/tr" && say transcript-path "$f"; fi
