umask 077
t=$(mktemp -d 2>/dev/null) || { t="${TMPDIR:-/tmp}/herd.$$"; mkdir "$t" || exit 125; }
trap 'rm -rf "$t"' EXIT
frame() { _n=$(wc -c < "$2" | tr -d ' '); printf 'herd-frame %s %s%s\n' "$1" "$_n" "${3:+ $3}"; cat "$2"; printf '\n'; }
say() { _k=$1; shift; printf '%s' "$*" > "$t/say"; frame "$_k" "$t/say"; }
