#!/usr/bin/env bash
# The `device` tool carries the working tree (tracked + untracked-not-ignored files + carried paths)
# only up to 64 MiB, and this repository's tracked files alone exceed that: the stored manufactured-
# solution VTU files (validation/mms/results/*/solution.vtu, ~78 MB) are most of it, and a GPU node
# needs none of them. Run from the repository root:
#   bash benchmarks/device/travel-light.sh hide      # before the device call: untrack them in the index only
#   bash benchmarks/device/travel-light.sh restore   # right after it: track them again
# `hide` takes them out of the index (git rm --cached) and ignores them through .git/info/exclude;
# the files stay on disk and no commit changes. Commit nothing between hide and restore: a commit
# then would delete them from the repository. `status` prints the travelling size.
set -euo pipefail
list=.git/dgrte-travel-light.list
pattern='/validation/mms/results/*/solution.vtu'
size() {
  local t u
  t=$(git ls-files -z | xargs -0 -r stat -c %s | awk '{s+=$1} END{print s+0}')
  u=$(git ls-files -z --others --exclude-standard | xargs -0 -r stat -c %s | awk '{s+=$1} END{print s+0}')
  echo "travelling tree: $(( (t + u) / 1048576 )) MiB (tracked $(( t / 1048576 )), untracked $(( u / 1048576 ))) + carried paths; limit 64 MiB"
}
case ${1:-status} in
  hide)
    [[ -s $list ]] && { echo "already hidden (see $list); run restore first" >&2; exit 1; }
    git ls-files 'validation/mms/results/*/solution.vtu' > "$list"
    [[ -s $list ]] || { echo "nothing to hide"; rm -f "$list"; exit 0; }
    mkdir -p .git/info
    grep -qxF "$pattern" .git/info/exclude 2>/dev/null || echo "$pattern" >> .git/info/exclude
    git rm -q --cached --pathspec-from-file="$list"
    echo "hid $(wc -l < "$list") files from the index; run 'restore' right after the device call"
    size ;;
  restore)
    [[ -s $list ]] || { echo "nothing hidden"; exit 0; }
    git reset -q -- $(cat "$list")
    sed -i "\\#^${pattern//\*/\\*}\$#d" .git/info/exclude
    rm -f "$list"
    echo "restored"; git status --short | head -n 5 ;;
  status) size ;;
  *) echo "usage: $0 hide|restore|status" >&2; exit 2 ;;
esac
