GIT_OPTIONAL_LOCKS=0 git -C "$cwd" status --porcelain=v1 --untracked-files=all > "$t/git" 2>/dev/null && frame git-status "$t/git"
