say tick ok || exit 0
sleep {{every_sec}}
done
