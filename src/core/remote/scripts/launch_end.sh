code=$?
printf '\033]777;herd-exit;%d\007' "$code"
exit "$code"
