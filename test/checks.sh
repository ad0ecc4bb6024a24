#!/usr/bin/env bash
# npm test's checks before the tests: the type checks, ESLint, Prettier and the dependency rules. They are independent
# and each mostly single-threaded, so they run as two chains at once; every check runs even when another fails, and
# each one's output is printed whole, in order, when all are done.
set -u
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() {
  local name=$1 start=$SECONDS
  shift
  "$@" >"$out/$name.log" 2>&1
  echo "$? $((SECONDS - start))" >"$out/$name.rc"
}
# two chains of about equal CPU time (measured: tsc 32 s + Prettier 28 s beside console tsc 11 s + ESLint 22 s + depcruise 7 s)
{
  check typecheck npx tsc --noEmit
  check prettier npx prettier --check .
} &
{
  check typecheck-console npx tsc -p packages/console
  check eslint npx eslint .
  check depcruise npx depcruise src packages
} &
wait
failed=0
for name in typecheck typecheck-console eslint prettier depcruise; do
  read -r rc seconds <"$out/$name.rc"
  cat "$out/$name.log"
  echo "# check $name: exit $rc, ${seconds} s"
  [ "$rc" -eq 0 ] || failed=1
done
exit $failed
