if git -C "$cwd" status --porcelain=v1 --untracked-files=all > "$t/wt" 2> "$t/err"; then
  if [ -s "$t/wt" ]; then frame worktree-dirty "$t/wt"
  elif git -C "$cwd" worktree remove "$cwd" > "$t/err" 2>&1; then say worktree-removed "$cwd"
  else say worktree-error "git worktree remove $cwd failed: $(tail -n 3 "$t/err")"; fi
else say worktree-error "git status failed: $(tail -n 3 "$t/err")"; fi
