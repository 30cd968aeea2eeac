me=$$
ticks=$(( {{grace_sec}} * 10 ))
if printf 'a\0b\0' | grep -q -z -x b 2>/dev/null; then fast=1; else fast=; fi
cookie_of() { tr '\0' '\n' < "$1" 2>/dev/null | grep {{options}} {{pattern}} | head -n 1; }
find_them() {
  if [ -n "$fast" ]; then
    files=$(grep -l -s -z {{options}} {{pattern}} /proc/[0-9]*/environ)
  else
    files=$(for f in /proc/[0-9]*/environ; do [ -n "$(cookie_of "$f")" ] && echo "$f"; done)
  fi
  for f in $files; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = "$me" ] && continue
    c=$(cookie_of "$f")
    [ -n "$c" ] && echo "$p ${c#{{cookie_var}}=}"
  done
}
seen=""
n=0
while :; do
  list=$(find_them)
  [ -n "$list" ] || break
  sig=TERM
  [ "$n" -ge "$ticks" ] && sig=KILL
  echo "$list" | while read -r p c; do
    case " $seen " in *" $p:$sig "*) continue ;; esac
    kill -s "$sig" "$p" 2>/dev/null && kill -s CONT "$p" 2>/dev/null
    echo "ended $p $sig $c $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)"
  done
  seen="$seen $(echo "$list" | while read -r p c; do printf '%s:%s ' "$p" "$sig"; done)"
  [ "$n" -gt $(( ticks + 50 )) ] && break
  n=$(( n + 1 ))
  sleep 0.1 2>/dev/null || sleep 1
done
echo "sweep done"
