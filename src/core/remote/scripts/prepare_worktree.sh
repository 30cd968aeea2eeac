top=$(git -C "$cwd" rev-parse --show-toplevel 2>/dev/null) || { say worktree-error '"worktree": true needs a git repository, and {{shown}} is not in one on host {{host}}'; say end; exit 0; }
wt="$top/.herd/worktrees/"{{id}}
if [ ! -e "$wt/.git" ]; then
  ex=$(git -C "$top" rev-parse --git-path info/exclude 2>/dev/null) && {
    case "$ex" in /*) ;; *) ex="$top/$ex" ;; esac
    mkdir -p "$(dirname "$ex")" && { grep -qx '/.herd/' "$ex" 2>/dev/null || printf '\n/.herd/\n' >> "$ex"; }
  }
  git -C "$top" worktree add -B {{branch}} "$wt" > "$t/out" 2>&1 || { say worktree-error "git worktree add -B "{{branch}}" $wt failed on host {{host}}: $(tail -n 3 "$t/out")"; say end; exit 0; }
fi
cwd=$wt
