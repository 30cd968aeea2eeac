if [ -f "$run"/{{name}} ]; then tail -c {{max}} "$run"/{{name}} > "$t/file" && say fetched-name {{name}} && frame fetched "$t/file"; fi
