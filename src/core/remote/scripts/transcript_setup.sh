root={{root}}/projects
p1={{project}}
p2=$(cd "$cwd" 2>/dev/null && pwd -P | sed 's/[^A-Za-z0-9]/-/g')
f=
