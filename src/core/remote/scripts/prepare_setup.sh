cwd={{cwd}}
run="${HOME:-/tmp}"/{{run_dir}}
mkdir -p "$run" || exit 125
