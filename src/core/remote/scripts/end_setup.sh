cwd={{cwd}}
run="${HOME:-/tmp}"/{{run_dir}}
stamp="$run"/{{stamp}}
